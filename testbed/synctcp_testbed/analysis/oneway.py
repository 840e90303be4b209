"""One-way figures of a case: OTT, min OTT and queuing delay, each with its error bound.

The senders' ``sync`` and ``mixreact`` telemetry (``tcp-NODE.jsonl``, the
module's inet_diag record) carries the OTT the module measures: its minimum
(``min_ott_us``, sync) and the queuing delay over it (``qdelay_us``, sync;
``qdelay_avg_us``, mixreact).  What an OTT figure is worth depends on its
source (docs/ott.md, docs/clock.md):

* ``option`` (the one-way-timestamp option of ``tcp_option/``): receiver's
  clock minus sender's, absolute.  OTT and min OTT are off by at most the
  clock bound of the pair (:mod:`synctcp_testbed.remote.clocks`); the
  queuing delay, a difference of two such OTTs, by at most twice that
  (the constant part of the offset cancels; what the clocks drift between
  the two does not).
* ``ts`` (RFC 7323 timestamps): the peer's TS clock is no wall clock, so
  min OTT and OTT hold an unknown offset (no bound, whatever the clocks'
  discipline); the queuing delay is a difference of one pair of clocks and
  exact up to one tick of the peer's TS clock (1 ms at 1000 Hz).
* ``rtt``: no one-way figure; the "queuing delay" holds the reverse path's.

:func:`oneway` computes a case's figures over its measured interval from
the forward flows' sockets; :func:`pm` writes ``value ± bound``.
"""

from __future__ import annotations

from collections import Counter
from typing import Any, Dict, Iterable, List, Optional, Tuple

from synctcp.clock import ott_bounds

from .rundir import TcpSample

#: the report warns when a queuing delay's bound exceeds this fraction of it
WARN_FRACTION = 0.1


def _socket_key(s: Dict[str, Any]) -> Tuple[int, int]:
    return int(s.get("sport", -1)), int(s.get("dport", -1))


def oneway(samples: Iterable[TcpSample], flows: List[Dict[str, Any]], t_start: float,
           t_end: float, clock_bound_ms: Optional[float], clock_basis: str
           ) -> Optional[Dict[str, Any]]:
    """The case's one-way figures (ms) with their bounds; None without OTT telemetry.

    ``flows``: flows.json records (the forward ones, ``fwd``/``minority``, are
    used, matched by ports); ``clock_bound_ms``: the bound on the two clocks'
    difference over the case (None: unknown, 0: one clock).
    """
    fwd = {(int(f["sport"]), int(f["dport"])) for f in flows
           if f.get("group") in ("fwd", "minority") and f.get("kind", "bulk") == "bulk"}
    qd: List[float] = []
    ott: List[float] = []
    qmax = 0.0
    last_min: Dict[Tuple[int, int], float] = {}
    sources: Counter = Counter()
    clocks: Counter = Counter()
    for smp in samples:
        if not t_start <= smp.t <= t_end:
            continue
        for s in smp.sockets:
            tel = s.get("synctcp")
            if not tel or _socket_key(s) not in fwd:
                continue
            q = tel.get("qdelay_us", tel.get("qdelay_avg_us"))
            if q is None:
                continue
            sources[tel.get("source", "?")] += 1
            if tel.get("peer_clock_hz"):
                clocks[tel["peer_clock_hz"]] += 1
            qd.append(q / 1e3)
            qmax = max(qmax, float(tel.get("max_qdelay_us", 0)) / 1e3)
            if "min_ott_us" in tel:
                m = tel["min_ott_us"] / 1e3
                last_min[_socket_key(s)] = m
                ott.append(m + q / 1e3)
    if not qd:
        return None
    source = sources.most_common(1)[0][0]
    hz = clocks.most_common(1)[0][0] if clocks else None
    out: Dict[str, Any] = {
        "source": source, "samples": len(qd),
        "ott_ms": sum(ott) / len(ott) if ott else None,
        "min_ott_ms": min(last_min.values()) if last_min else None,
        "qdelay_ms": sum(qd) / len(qd), "qdelay_max_ms": qmax,
        "clock_bound_ms": clock_bound_ms, "clock_basis": clock_basis,
    }
    out["ott_bound_ms"], out["qdelay_bound_ms"], out["note"] = ott_bounds(
        source, hz, clock_bound_ms)
    return out


def pm(value: Optional[float], bound: Optional[float], unit: str = "ms") -> str:
    """``12.30 ± 0.05 ms``; ``12.30 ms ± ?`` without a bound; ``-`` without a value."""
    if value is None:
        return "-"
    if bound is None:
        return f"{value:.2f} {unit} \u00b1 ?"
    digits = 3 if 0 < bound < 0.01 else 2
    return f"{value:.{digits}f} \u00b1 {bound:.{digits}f} {unit}"


def describe(o: Dict[str, Any]) -> List[str]:
    """The case's figures as the report and summary print them: OTT, min OTT and queuing
    delay as ``value ± bound``, then the note on what the bounds mean."""
    return [f"OTT {pm(o.get('ott_ms'), o.get('ott_bound_ms'))}",
            f"min OTT {pm(o.get('min_ott_ms'), o.get('ott_bound_ms'))}",
            f"queuing delay {pm(o.get('qdelay_ms'), o.get('qdelay_bound_ms'))}",
            str(o.get("note", ""))]


def warnings(cases: List[Dict[str, Any]]) -> List[str]:
    """Where a bound is above a tenth of the smallest queuing delay the cases report."""
    ow = [(c["id"], c["oneway"]) for c in cases if c.get("oneway")]
    qds = [o["qdelay_ms"] for _, o in ow if o.get("qdelay_ms")]
    if not qds:
        return []
    smallest = min(qds)
    out = []
    for cid, o in ow:
        for what, key in (("queuing delay", "qdelay_bound_ms"), ("OTT", "ott_bound_ms")):
            b = o.get(key)
            if b is not None and b > WARN_FRACTION * smallest:
                out.append(f"{cid}: the {what}'s bound \u00b1{b:.3f} ms exceeds a tenth of the "
                           f"smallest queuing delay reported ({smallest:.3f} ms): "
                           f"{o.get('clock_basis', '')}")
    return out


def flat(o: Optional[Dict[str, Any]]) -> Dict[str, Any]:
    """The scalar columns a case gets in summary.json (and so summary.csv)."""
    if not o:
        return {}
    return {k: o.get(k) for k in ("ott_ms", "ott_bound_ms", "min_ott_ms", "qdelay_ms",
                                  "qdelay_bound_ms")}
