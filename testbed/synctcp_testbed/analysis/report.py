"""Plots, ``summary.csv`` and the self-contained HTML report of a run directory.

The run directory is described in ``docs/testbed-rundir.md``.  The runner
calls :func:`write_summary_csv` and :func:`write_report` (which draws the
plots with :func:`write_plots`); the same can be regenerated later::

    python -m synctcp_testbed.analysis.report RUNDIR

Plots are drawn with matplotlib's Agg canvas (no pyplot, no display) into
``RUN/plots/``; a plot whose data is absent is skipped, never drawn empty.
``report.html`` embeds them as base64 data URIs and has no external
resources; every string read from the run directory is HTML-escaped.
"""

from __future__ import annotations

import argparse
import base64
import csv
import html
import json
import math
import re
import shlex
import sys
import time
from pathlib import Path
from typing import (TYPE_CHECKING, Any, Dict, Iterable, List, Optional, Sequence,
                    Tuple, Union)

from .http import SMALL_RESPONSE_MAX, WITHIN_MS
from .metrics import eccdf, ecdf
from .rundir import (Case, CaseSummary, PathLike, Run, RunDirError, flow_labeler,
                     load_run)
from .stats import ratio_to, reference

if TYPE_CHECKING:  # pragma: no cover
    from matplotlib.axes import Axes
    from matplotlib.figure import Figure

DPI = 100
FLOWS_PER_AXES = 20
MAX_CWND_AXES = 6
MAX_BAR_FLOWS = 60
MAX_PLOT_POINTS = 4000  # per line, before envelope thinning
DASH = "\u2014"

RunLike = Union[PathLike, Run]

# summary.csv: one row per case and bottleneck; columns in this order, then
# any further scalar fields of the records (sorted), so nothing is lost.
CASE_COLUMNS = ("case", "cc", "aqm", "t_start", "t_end", "duration_s")
BOTTLENECK_COLUMNS = ("link", "rate_mbit", "samples", "sample_hz", "mean_pkts", "p95_pkts",
                      "max_pkts", "mean_delay_ms", "p95_delay_ms", "drops", "marks", "sent_pkts",
                      "drop_pct", "mark_pct", "utilization")
CASE_TAIL_COLUMNS = ("goodput_mbit", "retransmits", "flows", "platform_ceiling_mbit")
HTTP_KEYS = ("responses", "errors", "median_ms", "p90_ms", "small_median_ms", "large_median_ms",
             "within_1500ms_pct")
SUMMARY_COLUMNS = (CASE_COLUMNS + BOTTLENECK_COLUMNS + CASE_TAIL_COLUMNS
                   + tuple(f"http_{k}" for k in HTTP_KEYS))


def _as_run(rundir: RunLike) -> Run:
    """A loaded :class:`Run` (``rundir`` may already be one)."""
    return rundir if isinstance(rundir, Run) else load_run(rundir)


# --------------------------------------------------------------------------- summary.csv


def _is_scalar(v: Any) -> bool:
    """True for values that fit in one CSV cell."""
    return v is None or isinstance(v, (str, int, float, bool))


def _csv_cell(v: Any) -> str:
    """CSV text of a summary value: empty for null, 0/1 for booleans."""
    if v is None:
        return ""
    if isinstance(v, bool):
        return str(int(v))
    return str(v)


def summary_rows(run: Run) -> Tuple[List[str], List[Dict[str, Any]]]:
    """Columns and flat rows of summary.csv: one per case and bottleneck.

    A case without bottleneck records still gets one row (empty link
    columns).  ``flows`` is the number of per-flow records.
    """
    rows: List[Dict[str, Any]] = []
    extra: Dict[str, None] = {}
    known = set(SUMMARY_COLUMNS) | {"id", "bottlenecks", "http"}
    for case in run.cases:
        raw = case.summary.raw
        base: Dict[str, Any] = {"case": case.id, "cc": case.summary.cc, "aqm": case.summary.aqm}
        for k, v in raw.items():
            if k not in ("id", "cc", "aqm", "bottlenecks", "http", "flows") and _is_scalar(v):
                base[k] = v
        base["flows"] = len(case.summary.flows)
        for k, v in (case.summary.http or {}).items():
            if _is_scalar(v):
                base[f"http_{k}"] = v
        bns = [b.raw for b in case.summary.bottlenecks] or [{}]
        for bn in bns:
            row = dict(base)
            row.update({k: v for k, v in bn.items() if _is_scalar(v) and k not in CASE_COLUMNS})
            rows.append(row)
            extra.update((k, None) for k in row if k not in known)
    return list(SUMMARY_COLUMNS) + sorted(extra), rows


def write_summary_csv(rundir: RunLike) -> Path:
    """Write ``RUN/summary.csv`` and ``RUN/groups.csv`` from ``RUN/summary.json``.

    This is the one writer of both (the runner calls it too), so that the
    files are the same whether written during or after a run.  Returns the
    path of summary.csv.
    """
    run = _as_run(rundir)
    columns, rows = summary_rows(run)
    path = run.path / "summary.csv"
    with open(path, "w", newline="") as fh:
        w = csv.writer(fh, lineterminator="\n")
        w.writerow(columns)
        for row in rows:
            w.writerow([_csv_cell(row.get(c)) for c in columns])
    with open(run.path / "groups.csv", "w", newline="") as fh:
        w = csv.writer(fh, lineterminator="\n")
        w.writerow(GROUP_COLUMNS)
        for row in group_rows(run):
            w.writerow([_csv_cell(row.get(c)) for c in GROUP_COLUMNS])
    return path


#: groups.csv: one row per case group (its repetitions), metric and reference
GROUP_COLUMNS = ("group", "cc", "aqm", "point", "n", "seeds", "metric", "ratio_to", "mean",
                 "ci95", "lo", "hi")


def run_groups(run: Run) -> List[Dict[str, Any]]:
    """The run's case groups (stats.groups of its cases)."""
    from .stats import groups

    return groups([c.summary.raw for c in run.cases])


def group_rows(run: Run) -> List[Dict[str, Any]]:
    """The rows of groups.csv: each group's metrics, then its ratios to Reno and CUBIC."""
    from .stats import estimate

    rows = []
    for g in run_groups(run):
        base = {"group": g["group"], "cc": g["cc"], "aqm": g["aqm"],
                "point": ";".join(f"{k}={v}" for k, v in g["point"].items()), "n": g["n"],
                "seeds": " ".join(str(x) for x in g["seeds"])}
        items = [(m, "", d) for m, d in g["metrics"].items()]
        items += [(m, ref, d) for ref, got in g["ratios"].items() for m, d in got.items()]
        for metric, ref, d in items:
            e = estimate(d)
            assert e is not None
            rows.append({**base, "metric": metric, "ratio_to": ref, "mean": e.mean, "ci95": e.ci,
                         "lo": e.lo, "hi": e.hi})
    return rows


# --------------------------------------------------------------------------- plotting helpers


def _new_figure(width: float, height: float) -> "Figure":
    """A matplotlib Figure on an Agg canvas (pyplot's global state untouched)."""
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure

    fig = Figure(figsize=(width, height), dpi=DPI)
    FigureCanvasAgg(fig)
    return fig


def _save(fig: "Figure", path: Path) -> Path:
    """Lay out and save ``fig`` as PNG."""
    fig.tight_layout()
    fig.savefig(path, dpi=DPI, format="png")
    return path


def _text(s: Any) -> str:
    """A string safe as matplotlib text: no mathtext, visible as a legend label."""
    out = str(s).replace("$", r"\$")
    return "\u200b" + out if out.startswith("_") else out


def _slug(s: str) -> str:
    """``s`` as a safe file name part."""
    return re.sub(r"[^A-Za-z0-9._-]+", "_", s).strip("._") or "x"


def case_colors(run: Run) -> Dict[str, Any]:
    """One colour per case, the same in every plot."""
    from matplotlib import colormaps

    cmap = colormaps["tab10" if len(run.cases) <= 10 else "tab20"]
    return {c.id: cmap(i % cmap.N) for i, c in enumerate(run.cases)}


def _thin(xs: Sequence[float], ys: Sequence[float],
          limit: int = MAX_PLOT_POINTS) -> Tuple[Sequence[float], Sequence[float]]:
    """At most about ``limit`` points of a line, keeping its envelope.

    Longer lines are cut into buckets; each keeps its lowest and highest
    point, in time order, so that peaks survive the thinning.
    """
    n = len(xs)
    if n <= limit:
        return xs, ys
    k = math.ceil(n / max(1, limit // 2))
    out_x: List[float] = []
    out_y: List[float] = []
    for lo in range(0, n, k):
        chunk = range(lo, min(lo + k, n))
        i_min = min(chunk, key=ys.__getitem__)
        i_max = max(chunk, key=ys.__getitem__)
        for i in sorted({i_min, i_max}):
            out_x.append(xs[i])
            out_y.append(ys[i])
    return out_x, out_y


def _case_t0(case: Case, fallback: float) -> float:
    """Start of the measured interval of ``case`` (``fallback`` if unknown)."""
    return case.summary.t_start if case.summary.t_start is not None else fallback


def _measured(case: Case, link: str) -> List[float]:
    """Queue lengths of ``link`` within the case's measured interval.

    All samples when the interval is unknown or holds none.
    """
    samples = case.queue(link)
    lo = case.summary.t_start if case.summary.t_start is not None else -math.inf
    hi = case.summary.t_end if case.summary.t_end is not None else math.inf
    kept = [s.qlen_pkts for s in samples if lo <= s.t <= hi]
    return kept or [s.qlen_pkts for s in samples]


def _from_traffic(case: Case, samples: List[Any]) -> List[Any]:
    """Samples from 1 s before the case's traffic started (``t_traffic``), if known."""
    t = case.summary.raw.get("t_traffic")
    if not isinstance(t, (int, float)):
        return samples
    return [s for s in samples if s.t >= t - 1.0]


def _legend(ax: "Axes", n: int) -> None:
    """A legend sized for ``n`` entries."""
    ax.legend(fontsize=7 if n > 6 else 8, ncol=1 if n <= 8 else 2, loc="best", framealpha=0.8)


# --------------------------------------------------------------------------- plots


def plot_queue_time(run: Run, link: str, out: Path, colors: Dict[str, Any]) -> Optional[Path]:
    """Queue length of ``link`` over time, one line per case (t = 0 at t_start)."""
    series = [(c, _from_traffic(c, c.queue(link))) for c in run.cases]
    series = [(c, q) for c, q in series if q]
    if not series:
        return None
    fig = _new_figure(9, 3.6)
    ax = fig.add_subplot()
    for case, q in series:
        t0 = _case_t0(case, q[0].t)
        xs, ys = _thin([s.t - t0 for s in q], [s.qlen_pkts for s in q])
        ax.plot(xs, ys, lw=0.8, color=colors[case.id], label=_text(case.id))
    durations = [c.summary.duration_s for c, _ in series if c.summary.duration_s]
    ax.axvline(0, color="grey", ls=":", lw=0.8)
    if durations:
        ax.axvline(max(durations), color="grey", ls=":", lw=0.8)
    ax.set_xlabel("time since start of measured interval (s)")
    ax.set_ylabel("queue (pkts)")
    ax.set_ylim(bottom=0)
    ax.set_title(_text(f"{run.scenario_name}: bottleneck {link} queue"), fontsize=10)
    _legend(ax, len(series))
    return _save(fig, out / f"queue-time-{_slug(link)}.png")


def plot_queue_cdf(run: Run, link: str, out: Path, colors: Dict[str, Any]) -> Optional[Path]:
    """CDF of the queue length of ``link`` over the measured interval, one line per case."""
    series = [(c, _measured(c, link)) for c in run.cases]
    series = [(c, v) for c, v in series if v]
    if not series:
        return None
    fig = _new_figure(6.4, 4)
    ax = fig.add_subplot()
    for case, vals in series:
        xs, ys = ecdf(vals)
        ax.step(xs, ys, where="post", lw=1, color=colors[case.id], label=_text(case.id))
    ax.set_xlabel("queue (pkts)")
    ax.set_ylabel("P(queue \u2264 x)")
    ax.set_ylim(0, 1.02)
    ax.set_xlim(left=0)
    ax.grid(alpha=0.3)
    ax.set_title(_text(f"{run.scenario_name}: bottleneck {link} queue CDF"), fontsize=10)
    _legend(ax, len(series))
    return _save(fig, out / f"queue-cdf-{_slug(link)}.png")


def cwnd_series(case: Case) -> Dict[str, Tuple[List[float], List[float]]]:
    """cwnd over time per flow label (flows.json id, else ``src:sport``).

    Times are relative to the case's t_start.  Flows of flows.json come
    first in its order, then the unmatched sockets sorted by label.
    """
    label = flow_labeler(case.flows())
    series: Dict[str, Tuple[List[float], List[float]]] = {}
    t0: Optional[float] = case.summary.t_start
    for sample in case.tcp_samples():
        if t0 is None:
            t0 = sample.t
        for sock in sample.sockets:
            info = sock.get("tcp_info")
            cwnd = info.get("cwnd") if isinstance(info, dict) else None
            if not isinstance(cwnd, (int, float)) or isinstance(cwnd, bool):
                continue
            xs, ys = series.setdefault(label(sock), ([], []))
            xs.append(sample.t - t0)
            ys.append(float(cwnd))
    order = {str(f.get("id")): i for i, f in enumerate(case.flows())}
    for xs, ys in series.values():  # files of several nodes: keep each line in time order
        if any(b < a for a, b in zip(xs, xs[1:])):
            pairs = sorted(zip(xs, ys))
            xs[:], ys[:] = [p[0] for p in pairs], [p[1] for p in pairs]
    ranked = sorted(series, key=lambda k: (0, order[k], "") if k in order else (1, 0, k))
    return {k: series[k] for k in ranked}


def plot_cwnd(run: Run, case: Case, out: Path) -> Optional[Path]:
    """cwnd per flow of ``case``: small multiples of at most 20 flows each."""
    series = cwnd_series(case)
    if not series:
        return None
    labels = list(series)
    shown = labels[:FLOWS_PER_AXES * MAX_CWND_AXES]
    groups = [shown[i:i + FLOWS_PER_AXES] for i in range(0, len(shown), FLOWS_PER_AXES)]
    from matplotlib import colormaps

    palette = colormaps["tab20" if len(shown) > 10 else "tab10"]
    fig = _new_figure(9, 2.8 * len(groups) + 0.4)
    axes = [fig.add_subplot(len(groups), 1, i + 1) for i in range(len(groups))]
    for ax, group in zip(axes, groups):
        for i, name in enumerate(group):
            xs, ys = _thin(*series[name], limit=max(400, 4 * MAX_PLOT_POINTS // len(group)))
            ax.plot(xs, ys, lw=0.8, color=palette(i % palette.N), label=_text(name))
        ax.set_ylabel("cwnd (pkts)")
        ax.set_ylim(bottom=0)
        ax.legend(fontsize=6, ncol=1 if len(group) <= 10 else 2, loc="upper left",
                  bbox_to_anchor=(1.01, 1.0), borderaxespad=0)
    axes[-1].set_xlabel("time since start of measured interval (s)")
    more = f" (first {len(shown)} of {len(labels)} flows)" if len(shown) < len(labels) else ""
    fig.suptitle(_text(f"{run.scenario_name}: {case.id} cwnd per flow{more}"), fontsize=10)
    return _save(fig, out / f"cwnd-{_slug(case.id)}.png")


def flow_goodputs(case: Case) -> Dict[str, float]:
    """Goodput (Mbit/s) per flow id of ``case``, from flows.json or the summary."""
    out: Dict[str, float] = {}
    for f in case.flows():
        g = f.get("goodput_mbit")
        if f.get("id") is not None and isinstance(g, (int, float)) and not isinstance(g, bool):
            out[str(f["id"])] = float(g)
    return out


def plot_goodput(run: Run, out: Path, colors: Dict[str, Any]) -> Optional[Path]:
    """Goodput per flow: flows on x, one bar per case."""
    per_case = [(c, flow_goodputs(c)) for c in run.cases]
    per_case = [(c, g) for c, g in per_case if g]
    if not per_case:
        return None
    ids: Dict[str, None] = {}
    for _, g in per_case:
        ids.update((k, None) for k in g)
    flows = list(ids)
    shown = flows[:MAX_BAR_FLOWS]
    width = 0.8 / len(per_case)
    fig = _new_figure(min(16.0, max(6.4, 0.35 * len(shown) * max(1, len(per_case) / 2) + 2)), 4)
    ax = fig.add_subplot()
    for j, (case, g) in enumerate(per_case):
        xs = [i + (j - (len(per_case) - 1) / 2) * width for i in range(len(shown))]
        ax.bar(xs, [g.get(f, math.nan) for f in shown], width=width, color=colors[case.id],
               label=_text(case.id))
    ax.set_xticks(range(len(shown)))
    ax.set_xticklabels([_text(f) for f in shown], rotation=90 if len(shown) > 12 else 0,
                       fontsize=7 if len(shown) > 12 else 9)
    ax.set_xlabel("flow")
    ax.set_ylabel("goodput (Mbit/s)")
    more = f" (first {len(shown)} of {len(flows)} flows)" if len(shown) < len(flows) else ""
    ax.set_title(_text(f"{run.scenario_name}: goodput per flow{more}"), fontsize=10)
    _legend(ax, len(per_case))
    return _save(fig, out / "goodput-flows.png")


HTTP_PARTS: Tuple[Tuple[str, str], ...] = (
    ("all", "all responses"),
    ("small", f"responses \u2264 {SMALL_RESPONSE_MAX:,} B"),
    ("large", f"responses > {SMALL_RESPONSE_MAX:,} B"),
)
"""Response classes of the HTTP plots: key and title."""


def http_parts(case: Case) -> Dict[str, List[float]]:
    """Response times (ms) of the complete responses of ``case``: all, small, large.

    Small responses have at most :data:`SMALL_RESPONSE_MAX` bytes.  Incomplete
    responses (``ok`` = 0) are left out.
    """
    parts: Dict[str, List[float]] = {key: [] for key, _ in HTTP_PARTS}
    for r in case.http():
        if r.ok:
            parts["all"].append(r.response_ms)
            parts["small" if r.resp_bytes <= SMALL_RESPONSE_MAX else "large"].append(r.response_ms)
    return parts


def _draw_rt(ax: "Axes", data: List[Tuple[Case, List[float]]], colors: Dict[str, Any],
             ccdf: bool) -> None:
    """Response-time CDF (linear, to 1500 ms) or CCDF (log-log) of each case."""
    for case, vals in data:
        # the CCDF on log axes: of the positive times only
        xs, ys = eccdf([v for v in vals if v > 0]) if ccdf else ecdf(vals)
        if xs:  # P(X <= x) holds from each x on; P(X >= x) up to each x
            ax.step(xs, ys, where="pre" if ccdf else "post", lw=1, color=colors[case.id],
                    label=_text(case.id))
    if ccdf:
        from matplotlib.ticker import NullFormatter

        ax.set_xscale("log")
        ax.set_yscale("log")
        ax.xaxis.set_minor_formatter(NullFormatter())
        ax.set_ylabel("P(response time \u2265 x)")
    else:
        ax.set_xlim(0, WITHIN_MS)
        ax.set_ylim(0, 1.02)
        ax.set_ylabel("P(response time \u2264 x)")
    ax.set_xlabel("response time (ms)")
    ax.grid(alpha=0.3)
    _legend(ax, len(data))


def plot_http(run: Run, out: Path, colors: Dict[str, Any]) -> List[Path]:
    """HTTP response-time CDF and CCDF, of all responses and split small/large."""
    per_case = [(c, http_parts(c)) for c in run.cases]
    data = {key: [(c, p[key]) for c, p in per_case if p[key]] for key, _ in HTTP_PARTS}
    titles = dict(HTTP_PARTS)
    paths: List[Path] = []
    for ccdf, kind in ((False, "cdf"), (True, "ccdf")):
        if data["all"]:
            fig = _new_figure(6.4, 4)
            ax = fig.add_subplot()
            _draw_rt(ax, data["all"], colors, ccdf)
            ax.set_title(_text(f"{run.scenario_name}: HTTP response time {kind.upper()}"),
                         fontsize=10)
            paths.append(_save(fig, out / f"http-rt-{kind}.png"))
        split = [key for key in ("small", "large") if data[key]]
        if split:
            fig = _new_figure(6.0 * len(split), 4)
            for i, key in enumerate(split):
                ax = fig.add_subplot(1, len(split), i + 1)
                _draw_rt(ax, data[key], colors, ccdf)
                ax.set_title(titles[key], fontsize=10)
            fig.suptitle(_text(f"{run.scenario_name}: HTTP response time {kind.upper()} by size"),
                         fontsize=10)
            paths.append(_save(fig, out / f"http-rt-split-{kind}.png"))
    return paths


def _bar_metric(case: CaseSummary, link: str, key: str) -> float:
    """Value of a summary-bar metric of ``case`` at ``link`` (NaN if absent)."""
    b = case.bottleneck(link)
    v = getattr(b, key, None) if b is not None else None
    if not isinstance(v, (int, float)) or isinstance(v, bool):
        return math.nan
    return float(v) * 100 if key == "utilization" else float(v)


def plot_summary_bars(run: Run, link: str, out: Path, colors: Dict[str, Any]) -> Optional[Path]:
    """Utilization %, drop % and mean queue of ``link``, one bar per case."""
    cases = [c for c in run.cases if c.summary.bottleneck(link) is not None]
    metrics = [("utilization", "utilization (%)"), ("drop_pct", "drops (%)"),
               ("mean_pkts", "mean queue (pkts)")]
    values = {k: [_bar_metric(c.summary, link, k) for c in cases] for k, _ in metrics}
    metrics = [(k, t) for k, t in metrics if any(not math.isnan(v) for v in values[k])]
    if not cases or not metrics:
        return None
    fig = _new_figure(max(6.4, 3.2 * len(metrics) + 0.25 * len(cases)), 3.6)
    for i, (key, title) in enumerate(metrics):
        ax = fig.add_subplot(1, len(metrics), i + 1)
        ax.bar(range(len(cases)), values[key], color=[colors[c.id] for c in cases])
        ax.set_xticks(range(len(cases)))
        ax.set_xticklabels([_text(c.id) for c in cases], rotation=45, ha="right", fontsize=8)
        ax.set_title(title, fontsize=10)
        ax.grid(axis="y", alpha=0.3)
    fig.suptitle(_text(f"{run.scenario_name}: bottleneck {link}"), fontsize=10)
    return _save(fig, out / f"summary-{_slug(link)}.png")


def write_plots(rundir: RunLike) -> List[Path]:
    """Draw every plot whose data exists into ``RUN/plots/`` and return the PNG paths.

    Older PNGs in ``RUN/plots/`` are removed first, so the directory holds
    exactly the report's plots.
    """
    run = _as_run(rundir)
    out = run.path / "plots"
    out.mkdir(exist_ok=True)
    for old in out.glob("*.png"):
        old.unlink()
    colors = case_colors(run)
    links = run.links()
    found: List[Optional[Path]] = []
    for link in links:
        found += [plot_summary_bars(run, link, out, colors),
                  plot_queue_time(run, link, out, colors), plot_queue_cdf(run, link, out, colors)]
    found.append(plot_goodput(run, out, colors))
    found += plot_http(run, out, colors)
    found += [plot_cwnd(run, case, out) for case in run.cases]
    return [p for p in found if p is not None]


# --------------------------------------------------------------------------- HTML

CSS = """
body{font-family:system-ui,-apple-system,"Segoe UI",sans-serif;margin:1.5em auto;max-width:1200px;
color:#222;padding:0 1em}
h1{font-size:1.5em}h2{font-size:1.2em;margin-top:1.6em;border-bottom:1px solid #ccc}
table{border-collapse:collapse;margin:.5em 0;font-size:.85em}
th,td{border:1px solid #ccc;padding:.2em .5em;text-align:right;vertical-align:top}
th{background:#f2f2f2}td.l,th.l{text-align:left}
tbody tr:nth-child(even){background:#fafafa}
table.meta th{text-align:left;width:10em}table.meta td{text-align:left}
code,pre{font-family:ui-monospace,monospace;font-size:.9em}
pre{background:#f6f6f6;padding:.5em;overflow:auto;max-height:30em}
figure{margin:1em 0}figure img{max-width:100%;border:1px solid #eee}
figcaption{font-size:.8em;color:#666}
details summary{cursor:pointer;font-weight:600;margin:.5em 0}
.note{color:#666;font-size:.85em}
.warn{color:#a00;background:#fee;padding:.4em}
"""


def esc(v: Any) -> str:
    """HTML-escaped text of ``v`` (quotes too)."""
    return html.escape(str(v), quote=True)


def fmt(v: Any, digits: int = 2, scale: float = 1.0) -> str:
    """A number with ``digits`` decimals (ints as such), or an em dash."""
    if isinstance(v, bool) or not isinstance(v, (int, float)):
        return DASH
    if isinstance(v, int) and scale == 1.0:
        return str(v)
    x = float(v) * scale
    return DASH if not math.isfinite(x) else f"{x:.{digits}f}"


def _row(cells: Sequence[str], left: int = 1, tag: str = "td") -> str:
    """A table row of already-escaped cells; the first ``left`` are left-aligned."""
    return "<tr>" + "".join(f'<{tag}{" class=l" if i < left else ""}>{c}</{tag}>'
                            for i, c in enumerate(cells)) + "</tr>"


def _table(head: Sequence[str], rows: Iterable[Sequence[str]], left: int = 1,
           attrs: str = "") -> str:
    """An HTML table (head cells escaped here, body cells already escaped)."""
    body = "\n".join(_row(r, left) for r in rows)
    return (f"<table{attrs}><thead>{_row([esc(h) for h in head], left, 'th')}</thead>"
            f"<tbody>\n{body}\n</tbody></table>")


def _modules_text(mods: Any) -> str:
    """Modules of meta.json as escaped lines: name version (param=value, ...)."""
    if not isinstance(mods, dict) or not mods:
        return DASH
    lines = []
    for name, info in mods.items():
        info = info if isinstance(info, dict) else {}
        params = info.get("params") if isinstance(info.get("params"), dict) else {}
        ps = ", ".join(f"{k}={v}" for k, v in params.items())
        version = info.get("version")
        text = f"{name}" + (f" {version}" if version else "") + (f" ({ps})" if ps else "")
        lines.append(esc(text))
    return "<br>".join(lines)


def _command_text(cmd: Any) -> str:
    """The command line of meta.json, shell-quoted when it is a list."""
    if isinstance(cmd, list):
        return shlex.join(str(c) for c in cmd)
    return str(cmd) if cmd else DASH


def meta_section(run: Run) -> str:
    """Metadata table and the resolved scenario (collapsible)."""
    m = run.meta
    cost = m.get("wall_cost") or {}
    spw = cost.get("simulated_per_wall_s")
    items = [("scenario", run.scenario_name), ("started (UTC)", m.get("started_utc")),
             ("kernel", m.get("kernel")), ("platform", m.get("platform")),
             ("time", m.get("time_mode")),
             ("wall cost", (f"{cost['wall_s']:g} s" + (f"; {cost['simulated_s']:g} simulated s "
                            f"in {cost['instance_wall_s']:g} instance wall s ({spw:g} simulated "
                            f"s per wall s), {m.get('jobs', 1)} at once" if spw else ""))
              if cost.get("wall_s") is not None else None),
             ("backend", m.get("backend") or "netns"), ("host", m.get("host")),
             ("git", m.get("git")), ("tool version", m.get("tool_version")),
             ("seed", m.get("seed"))]
    rows = [f"<tr><th>{esc(k)}</th><td>{esc(DASH if v is None else v)}</td></tr>"
            for k, v in items]
    rows.append(f"<tr><th>modules</th><td>{_modules_text(m.get('modules'))}</td></tr>")
    rows.append(f"<tr><th>command</th><td><code>{esc(_command_text(m.get('command')))}</code>"
                "</td></tr>")
    out = "<h2>Run</h2>\n<table class=meta>" + "\n".join(rows) + "</table>"
    if m.get("scenario") is not None:
        scen = json.dumps(m["scenario"], indent=2, sort_keys=True, default=str)
        out += f"\n<details><summary>scenario</summary><pre>{esc(scen)}</pre></details>"
    return out


#: below this share of the link, the platform (not the algorithm) limits the figures
CEILING_MIN = 0.95


def ceiling_section(run: Run) -> str:
    """The platform's ceiling cases (CUBIC, large buffer), with a warning below 95%."""
    rows, low = [], []
    for c in run.cases:
        s = c.summary
        if s.aqm != "ceiling" or not s.bottlenecks:
            continue
        b = s.bottlenecks[0]
        rows.append([esc(s.id), fmt(b.rate_mbit, 1), fmt(s.goodput_mbit),
                     fmt(b.utilization, 1, 100)])
        if b.utilization is not None and b.utilization < CEILING_MIN:
            low.append(f"{s.id} ({100 * b.utilization:.1f}%)")
    if not rows:
        return ""
    out = ("<h2>Platform ceiling</h2>\n<p class=note>CUBIC with a large buffer: what the "
           "platform itself carries at each sweep point.</p>\n"
           + _table(["case", "link Mbit/s", "goodput Mbit/s", "utilization %"], rows,
                    attrs=' id="ceiling"'))
    if low:
        out += (f"<p class=warn><b>Warning:</b> the platform ({esc(run.meta.get('platform'))}) "
                f"carried less than {100 * CEILING_MIN:.0f}% of the link in "
                f"{esc(', '.join(low))}: at these points the figures measure the platform, "
                f"not the algorithms (docs/platform.md).</p>")
    return out


def ratios(run: Run, case: CaseSummary, cc: str, link: str) -> List[Optional[float]]:
    """Goodput, mean-queue and drop ratios at ``link`` of ``case`` to its reference case
    of algorithm ``cc`` (:func:`.stats.ratio_to`: same queue, sweep point and seed)."""
    raws = [c.summary.raw for c in run.cases]
    return [ratio_to(raws, case.raw, cc, m)
            for m in ("goodput_mbit", f"{link}.mean_pkts", f"{link}.drop_pct")]


def summary_section(run: Run, link: str) -> str:
    """Summary table of one bottleneck, with ratio columns vs Reno/CUBIC of the same AQM."""
    cases = [c.summary for c in run.cases if c.summary.bottleneck(link) is not None]
    refs = [name for name, cc in (("Reno", "reno"), ("CUBIC", "cubic"))
            if any(reference([r.summary.raw for r in run.cases], c.raw, cc) for c in cases)]
    ceiling = any(c.platform_ceiling_mbit is not None for c in cases)
    head = ["case", "utilization %", "drop %", "mark %", "mean queue pkts", "p95 queue pkts",
            "mean queue delay ms", "goodput Mbit/s", "retransmits"]
    head += ["platform ceiling Mbit/s"] if ceiling else []
    for name in refs:
        head += [f"goodput \u00f7 {name}", f"queue \u00f7 {name}", f"drops \u00f7 {name}"]
    rows = []
    for c in cases:
        b = c.bottleneck(link)
        assert b is not None
        cells = [esc(c.id), fmt(b.utilization, 1, 100), fmt(b.drop_pct), fmt(b.mark_pct),
                 fmt(b.mean_pkts, 1), fmt(b.p95_pkts, 1), fmt(b.mean_delay_ms, 1),
                 fmt(c.goodput_mbit), fmt(c.retransmits, 0)]
        cells += [fmt(c.platform_ceiling_mbit)] if ceiling else []
        for name in refs:
            cells += [fmt(r) for r in ratios(run, c, name.lower(), link)]
        rows.append(cells)
    rate = next((b.rate_mbit for c in cases for b in c.bottlenecks
                 if b.link == link and b.rate_mbit), None)
    title = f"Bottleneck {link}" + (f" ({fmt(rate, 1)} Mbit/s)" if rate else "")
    note = ("<p class=note>Ratios are to the case of that algorithm with the same queue "
            "discipline: goodput of the case, mean queue and drop % at this bottleneck.</p>"
            if refs else "")
    return (f"<h2>{esc(title)}</h2>\n"
            + _table(head, rows, attrs=f' id="summary-{esc(_slug(link))}"') + note)


def groups_section(run: Run, link: str) -> str:
    """Mean and 95% interval over the seeds of each case group at ``link`` (repeated runs)."""
    from .stats import text

    gs = [g for g in run_groups(run) if f"{link}.utilization" in g["metrics"]]
    if not any(g["n"] > 1 for g in gs):
        return ""

    def cell(d: Optional[Dict[str, Any]], digits: int = 2, scale: float = 1.0) -> str:
        return esc(text(d, digits, scale))

    refs = [r for r in ("reno", "cubic") if any(r in g["ratios"] for g in gs)]
    head = ["case", "seeds", "utilization %", "drop %", "mean queue pkts", "mean queue delay ms",
            "goodput Mbit/s", "retransmits"]
    for r in refs:
        head += [f"goodput \u00f7 {r}", f"queue \u00f7 {r}", f"drops \u00f7 {r}"]
    rows = []
    for g in gs:
        m = g["metrics"]
        cells = [esc(g["group"]), esc(" ".join(str(x) for x in g["seeds"])),
                 cell(m.get(f"{link}.utilization"), 1, 100), cell(m.get(f"{link}.drop_pct")),
                 cell(m.get(f"{link}.mean_pkts"), 1), cell(m.get(f"{link}.mean_delay_ms"), 1),
                 cell(m.get("goodput_mbit")), cell(m.get("retransmits"), 0)]
        for r in refs:
            got = g["ratios"].get(r, {})
            cells += [cell(got.get("goodput_mbit")), cell(got.get(f"{link}.mean_pkts")),
                      cell(got.get(f"{link}.drop_pct"))]
        rows.append(cells)
    return (f"<h2>{esc(link)}: mean \u00b1 95% confidence interval over the seeds</h2>\n"
            + _table(head, rows, attrs=f' id="groups-{esc(_slug(link))}"')
            + "<p class=note>Student-t intervals over the repetitions of each case (seeds "
              "listed); ratios are paired: each seed's case over the reference algorithm's "
              "case of the same seed, queue discipline and sweep point (groups.csv has "
              "every metric).</p>")


def http_section(run: Run) -> str:
    """Table of the HTTP summary of each case that has one (empty if none has)."""
    cases = [c.summary for c in run.cases if c.summary.http]
    if not cases:
        return ""
    head = ["case", "responses", "errors", "median ms", "p90 ms",
            f"median ms \u2264 {SMALL_RESPONSE_MAX:,} B", f"median ms > {SMALL_RESPONSE_MAX:,} B"]
    rows = []
    for c in cases:
        h = c.http or {}
        rows.append([esc(c.id), fmt(h.get("responses"), 0), fmt(h.get("errors"), 0),
                     fmt(h.get("median_ms"), 1), fmt(h.get("p90_ms"), 1),
                     fmt(h.get("small_median_ms"), 1), fmt(h.get("large_median_ms"), 1)])
    return "<h2>HTTP</h2>\n" + _table(head, rows, attrs=' id="http"')


def flows_section(run: Run) -> str:
    """Per-flow table of every case, collapsed (empty if no case has flows)."""
    head = ["case", "flow", "group", "cc", "src:sport \u2192 dst:dport", "base RTT ms",
            "goodput Mbit/s", "bytes", "retransmits"]
    rows = []
    for case in run.cases:
        for f in case.flows():
            ends = (f"{f.get('src', '?')}:{f.get('sport', '?')} \u2192 "
                    f"{f.get('dst', '?')}:{f.get('dport', '?')}") if "sport" in f else DASH
            rows.append([esc(case.id), esc(f.get("id", DASH)), esc(f.get("group", DASH)),
                         esc(f.get("cc", case.summary.cc)), esc(ends),
                         fmt(f.get("base_rtt_ms"), 1), fmt(f.get("goodput_mbit"), 3),
                         fmt(f.get("bytes"), 0), fmt(f.get("retransmits"), 0)])
    if not rows:
        return ""
    return (f"<h2>Flows</h2>\n<details><summary>{len(rows)} flows</summary>\n"
            + _table(head, rows, left=5, attrs=' id="flows"') + "\n</details>")


def plots_section(plots: Sequence[Path]) -> str:
    """Every plot, embedded as a base64 PNG data URI."""
    figs = []
    for p in plots:
        data = base64.b64encode(Path(p).read_bytes()).decode("ascii")
        figs.append(f'<figure><img alt="{esc(p.name)}" src="data:image/png;base64,{data}">'
                    f"<figcaption>plots/{esc(p.name)}</figcaption></figure>")
    return "<h2>Plots</h2>\n" + "\n".join(figs) if figs else ""


def render_report(run: Run, plots: Sequence[Path]) -> str:
    """The report's HTML text."""
    title = f"synctcp testbed: {run.scenario_name}"
    links = [link for link in run.links()
             if any(c.summary.bottleneck(link) for c in run.cases)]
    parts = [
        "<!DOCTYPE html>", '<html lang="en"><head><meta charset="utf-8">',
        '<meta name="viewport" content="width=device-width, initial-scale=1">',
        f"<title>{esc(title)}</title><style>{CSS}</style></head><body>",
        f"<h1>{esc(title)}</h1>",
        f"<p class=note>{len(run.cases)} case(s): {esc(', '.join(c.id for c in run.cases))}</p>",
        meta_section(run), ceiling_section(run),
        *(groups_section(run, link) for link in links),
        *(summary_section(run, link) for link in links),
        http_section(run), flows_section(run), plots_section(plots),
        f"<p class=note>Generated by synctcp_testbed.analysis.report at "
        f"{esc(time.strftime('%Y-%m-%d %H:%M:%S UTC', time.gmtime()))}.</p>",
        "</body></html>",
    ]
    return "\n".join(p for p in parts if p) + "\n"


def write_report(rundir: RunLike, plots: Optional[Sequence[Path]] = None) -> Path:
    """Write ``RUN/report.html`` and return its path.

    ``plots`` are the PNGs to embed; by default :func:`write_plots` draws them.
    """
    run = _as_run(rundir)
    if plots is None:
        plots = write_plots(run)
    path = run.path / "report.html"
    path.write_text(render_report(run, plots), encoding="utf-8")
    return path


def main(argv: Optional[Sequence[str]] = None) -> int:
    """CLI: regenerate summary.csv, plots and report.html of a run directory."""
    ap = argparse.ArgumentParser(
        prog="python -m synctcp_testbed.analysis.report",
        description="Regenerate summary.csv, plots/ and report.html of a testbed run directory.")
    ap.add_argument("rundir", type=Path, help="run directory (with meta.json and summary.json)")
    args = ap.parse_args(argv)
    try:
        run = load_run(args.rundir)
        write_summary_csv(run)
        path = write_report(run, write_plots(run))
    except RunDirError as exc:
        print(f"report: {exc}", file=sys.stderr)
        return 2
    print(path)
    return 0


if __name__ == "__main__":
    sys.exit(main())
