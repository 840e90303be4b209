"""Repetitions of a case: each metric's mean and 95% confidence interval.

A scenario with ``repeat = N`` runs every case N times, with seeds
``seed .. seed + N - 1`` (the UML kernel's random numbers, the flows' start
jitter, the HTTP arrivals and sizes).  A *group* is a case's repetitions:
``summary.json``'s ``groups`` gives, per group and metric, the mean over the
seeds and the half-width of its 95% confidence interval (Student's t with
n - 1 degrees of freedom: the seeds are independent draws, their number
small).

Ratios to Reno and CUBIC are *paired*: the ratio of the case's metric to
the reference case's at the same seed, sweep point and queue discipline
(both saw the same random workload; :func:`reference`, :func:`ratio_to`),
then the mean and interval of those ratios.  A ratio whose reference is 0
at some seed has no value.  Every table that shows a ratio to Reno or
CUBIC (the summary, report.html, groups.csv, ``make bench``) takes it from
here.
"""

from __future__ import annotations

import math
import statistics
from dataclasses import asdict, dataclass
from typing import Any, Dict, Iterable, List, Mapping, Optional, Sequence, Union

from scipy import stats as _st

LEVEL = 0.95
#: the algorithms the summary's ratios are to
REFERENCES = ("reno", "cubic")
#: per-bottleneck metrics of a case (``LINK.KEY`` in a group's metrics)
LINK_KEYS = ("utilization", "drop_pct", "mark_pct", "mean_pkts", "p95_pkts", "mean_delay_ms",
             "p95_delay_ms", "p99_delay_ms")
#: HTTP metrics (``http.KEY``)
HTTP_KEYS = ("responses", "errors", "median_ms", "p90_ms", "small_median_ms", "large_median_ms",
             "within_1500ms_pct")
#: the metrics ratios are given for (besides each link's utilization, queue and drops)
RATIO_KEYS = ("goodput_mbit", "goodput_util")
RATIO_LINK_KEYS = ("utilization", "mean_pkts", "drop_pct", "mean_delay_ms")


@dataclass(frozen=True)
class Estimate:
    """The mean of ``n`` values and its confidence interval ``mean +- ci``.

    ``ci`` is None for one value (no spread to estimate); 0 when all the
    values are equal.
    """

    mean: float
    ci: Optional[float]
    n: int

    @property
    def lo(self) -> Optional[float]:
        return None if self.ci is None else self.mean - self.ci

    @property
    def hi(self) -> Optional[float]:
        return None if self.ci is None else self.mean + self.ci

    def as_dict(self) -> Dict[str, Any]:
        return asdict(self)

    def text(self, digits: int = 2, scale: float = 1.0) -> str:
        """``mean ± ci`` (``mean`` alone for one value)."""
        m = f"{self.mean * scale:.{digits}f}"
        return m if self.ci is None else f"{m} \u00b1 {self.ci * scale:.{digits}f}"


def t_quantile(df: int, level: float = LEVEL) -> float:
    """The two-sided Student-t quantile for ``df`` degrees of freedom."""
    if df < 1:
        raise ValueError(f"degrees of freedom must be at least 1, not {df}")
    return float(_st.t.ppf(0.5 + level / 2, df))


def mean_ci(values: Iterable[float], level: float = LEVEL) -> Estimate:
    """Mean and half-width of the ``level`` confidence interval of ``values``.

    Values that are None or not finite are not counted; ValueError if none is left.
    """
    xs = [float(v) for v in values if v is not None and math.isfinite(float(v))]
    if not xs:
        raise ValueError("no values")
    n = len(xs)
    mean = statistics.fmean(xs)
    if n == 1:
        return Estimate(mean, None, 1)
    return Estimate(mean, t_quantile(n - 1, level) * statistics.stdev(xs) / math.sqrt(n), n)


#: a case's metrics by seed (case_metrics of each seed's case)
BySeed = Dict[int, Dict[str, float]]


def paired_values(a: BySeed, b: BySeed, metric: str, op: str = "ratio",
                  scale: float = 1.0) -> List[float]:
    """Per seed both ran, ``a / b`` (``op="ratio"``; seeds where b is 0 left out)
    or ``(a - b) x scale`` (``op="diff"``)."""
    xs = []
    for seed in sorted(set(a) & set(b)):
        x, y = a[seed].get(metric), b[seed].get(metric)
        if x is None or y is None:
            continue
        if op == "ratio":
            if y:
                xs.append(x / y)
        else:
            xs.append((x - y) * scale)
    return xs


def paired(a: BySeed, b: BySeed, metric: str, op: str = "ratio",
           scale: float = 1.0) -> Optional[Estimate]:
    """Mean and interval of :func:`paired_values`; None without a pair."""
    xs = paired_values(a, b, metric, op, scale)
    return mean_ci(xs) if xs else None


def text(e: Union[Estimate, Dict[str, Any], None], digits: int = 2, scale: float = 1.0) -> str:
    """An Estimate (or its summary.json dict) as ``mean ± ci``; "-" for none."""
    if isinstance(e, dict) or e is None:
        e = estimate(e)
    return e.text(digits, scale) if e is not None else "-"


def case_metrics(case: Mapping[str, Any]) -> Dict[str, float]:
    """The figures of one case record (summary.json) as ``name -> value``."""
    out: Dict[str, float] = {}
    for key in ("goodput_mbit", "retransmits"):
        if isinstance(case.get(key), (int, float)):
            out[key] = float(case[key])
    for b in case.get("bottlenecks") or []:
        for key in LINK_KEYS:
            if isinstance(b.get(key), (int, float)):
                out[f"{b['link']}.{key}"] = float(b[key])
    rates = [b.get("rate_mbit") for b in case.get("bottlenecks") or []]
    if "goodput_mbit" in out and rates and isinstance(rates[0], (int, float)) and rates[0] > 0:
        out["goodput_util"] = out["goodput_mbit"] / float(rates[0])
    http = case.get("http") or {}
    for key in HTTP_KEYS:
        if isinstance(http.get(key), (int, float)):
            out[f"http.{key}"] = float(http[key])
    fwd = [f["goodput_mbit"] for f in case.get("flows") or []
           if f.get("group") in ("fwd", "minority") and isinstance(f.get("goodput_mbit"), (int, float))]
    if len(fwd) > 1 and sum(fwd) > 0:
        out["jain"] = sum(fwd) ** 2 / (len(fwd) * sum(g * g for g in fwd))
    if fwd:
        out["flow_mean_kbit"] = 1000 * sum(fwd) / len(fwd)
        mean = sum(fwd) / len(fwd)
        out["flow_sd_kbit"] = 1000 * math.sqrt(sum((g - mean) ** 2 for g in fwd) / len(fwd))
    lost = [f["udp_lost_pct"] for f in case.get("flows") or []
            if f.get("group") == "cbr" and isinstance(f.get("udp_lost_pct"), (int, float))]
    if lost:
        out["cbr_loss_pct"] = sum(lost) / len(lost)
    minority = [f for f in case.get("flows") or [] if f.get("group") == "minority"]
    if minority and len(fwd) > 1 and sum(fwd) > 0:
        out["minority_share"] = minority[0]["goodput_mbit"] * len(fwd) / sum(fwd)
        others = (sum(fwd) - minority[0]["goodput_mbit"]) / (len(fwd) - 1)
        if others > 0:      # Martin et al.'s Table V: the change against the others' mean
            out["minority_change_pct"] = 100 * (minority[0]["goodput_mbit"] - others) / others
    minutes = [m for m in (case.get("minutes") or {}).get("mean_pkts") or []
               if isinstance(m, (int, float))]
    if len(minutes) >= 2:      # a long run: the second minute (warmed up) against the last
        out["queue_minute2_pkts"] = float(minutes[1])
        out["queue_last_minute_pkts"] = float(minutes[-1])
        if minutes[1] > 0:
            out["queue_drift"] = minutes[-1] / minutes[1]
    rec = case.get("recovery") or {}
    if isinstance(rec.get("low_after_s"), (int, float)):
        out["recovery_s"] = float(rec["low_after_s"])
    corr = case.get("correlation") or {}
    for which in ("rtt", "ott"):     # Martin et al.'s CIM and LCDC(-1), from the capture
        series = corr.get(which) or {}
        value = (series.get("cim") or {}).get("value")
        if isinstance(value, (int, float)):
            out[f"cim_{which}"] = float(value)
        excess = ((series.get("lcdc") or {}).get("-1") or {}).get("excess_ms")
        if isinstance(excess, (int, float)):
            out[f"lcdc1_excess_{which}_ms"] = float(excess)
    return out


def reference(cases: Sequence[Mapping[str, Any]], case: Mapping[str, Any],
              cc: str) -> Optional[Mapping[str, Any]]:
    """The case of algorithm ``cc`` that ``case`` is compared with: the same queue
    discipline, sweep point and seed (the same random workload); None if none ran."""
    return next((c for c in cases if c.get("cc") == cc and c.get("aqm") == case.get("aqm")
                 and (c.get("point") or {}) == (case.get("point") or {})
                 and c.get("seed") == case.get("seed")), None)


def ratio(num: Any, den: Any) -> Optional[float]:
    """``num / den``, or None when either is missing or not finite, or ``den`` is 0."""
    ok = all(isinstance(x, (int, float)) and not isinstance(x, bool) and math.isfinite(x)
             for x in (num, den))
    return float(num) / float(den) if ok and den != 0 else None


def ratio_to(cases: Sequence[Mapping[str, Any]], case: Mapping[str, Any], cc: str,
             metric: str) -> Optional[float]:
    """``case``'s ``metric`` (a name of :func:`case_metrics`, e.g. ``goodput_mbit`` or
    ``r0r1.mean_pkts``) over its :func:`reference`'s of algorithm ``cc``; None without
    a reference or a value."""
    ref = reference(cases, case, cc)
    if ref is None:
        return None
    return ratio(case_metrics(case).get(metric), case_metrics(ref).get(metric))


def _group_key(case: Mapping[str, Any]) -> str:
    return str(case.get("group") or case.get("id"))


def ratio_names(metrics: Iterable[str]) -> List[str]:
    """Which of ``metrics`` get ratios to the references."""
    return [m for m in metrics
            if m in RATIO_KEYS or ("." in m and not m.startswith("http.")
                                   and m.split(".", 1)[1] in RATIO_LINK_KEYS)]


def groups(cases: Sequence[Dict[str, Any]]) -> List[Dict[str, Any]]:
    """Each group of ``cases`` (its repetitions): mean and interval per metric and ratio.

    A group's record: ``group``, ``cc``, ``aqm``, ``point``, ``seeds`` (the
    seeds that ran), ``n``; ``metrics``: name -> Estimate as a dict;
    ``ratios``: reference algorithm -> name -> Estimate of the per-seed
    ratios (only the seeds both ran, only where the reference's value is
    not 0).  In the order the groups first appear in ``cases``.
    """
    by_group: Dict[str, List[Dict[str, Any]]] = {}
    for c in cases:
        by_group.setdefault(_group_key(c), []).append(c)
    out = []
    for name, reps in by_group.items():
        first = reps[0]
        mine: BySeed = {int(c.get("seed", 0)): case_metrics(c) for c in reps}
        names = list(dict.fromkeys(k for m in mine.values() for k in m))
        rec: Dict[str, Any] = {
            "group": name, "cc": first.get("cc"), "aqm": first.get("aqm"),
            "point": first.get("point") or {}, "seeds": [c.get("seed") for c in reps],
            "n": len(reps),
            "metrics": {k: mean_ci(m.get(k) for m in mine.values()).as_dict() for k in names},
            "ratios": {},
        }
        for ref in REFERENCES if first.get("aqm") != "ceiling" else ():
            # each repetition's reference case, by seed
            at: BySeed = {int(c.get("seed", 0)): case_metrics(r) for c in reps
                          if (r := reference(cases, c, ref)) is not None}
            got = {k: e.as_dict() for k in ratio_names(names)
                   if (e := paired(mine, at, k)) is not None}
            if got:
                rec["ratios"][ref] = got
        out.append(rec)
    return out


def estimate(d: Optional[Dict[str, Any]]) -> Optional[Estimate]:
    """An Estimate from its dict (summary.json), None for None."""
    if not d:
        return None
    return Estimate(float(d["mean"]), None if d.get("ci") is None else float(d["ci"]),
                    int(d.get("n", 1)))
