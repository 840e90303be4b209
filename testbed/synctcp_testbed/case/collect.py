"""A case's figures, collected from what its processes left in the case directory.

The measured interval starts from when the flows really started
(:func:`measured_window`); every figure covers it: the queues of the
measured links (``queue-LINK.csv``), each flow's goodput and
retransmissions (flowgen's ``flowgen.json``, :func:`flow_result`), the
HTTP responses (``http-CLIENT.csv``, merged into ``http.csv``) and, with a
capture, the first flow's loss-delay correlation.  A missing or empty
measurement is a :class:`~.errors.RunError`, never an empty figure.
"""

from __future__ import annotations

import json
import math
import subprocess
from dataclasses import asdict
from pathlib import Path
from typing import Any, Callable, Dict, List, Optional, Tuple

from ..analysis.http import http_metrics
from ..analysis.metrics import dualq_stats, queue_minutes, queue_stats, recovery
from ..analysis.rundir import (QueueSample, RunDirError, read_dualq_csv, read_http_csv,
                               read_queue_csv)
from ..network.topology import Topology
from ..plan.flows import Flow, Plan
from ..scenario import Case
from ..traffic.flowgen import (FlowgenError, FlowgenResult, FlowResult, load_result,
                               window_bytes, window_retrans)
from ..traffic.http.records import CSV_FIELDS
from .errors import RunError
from .scripts import CAPTURE_MAX_PACKETS, FLOWGEN_LOG, FLOWGEN_OUT

Log = Callable[[str], None]


def read_text(path: Path) -> Optional[str]:
    """A small file's text, stripped (a status, a log); None when it cannot be read."""
    try:
        return path.read_text().strip()
    except OSError:
        return None


def is_core(label: str) -> bool:
    """A core link's label: ``lr``, ``rIrJ``, each maybe with ``-rev``."""
    base = label[:-4] if label.endswith("-rev") else label
    return base == "lr" or (base[:1] == "r" and [p.isdigit() for p in base[1:].split("r")] == [True, True])


def measured_links(case: Case, topo: Topology) -> List[Tuple[str, str, str, str]]:
    """The core links whose queues a case samples: ``topology.measure``, else all of them."""
    core = [p for p in topo.sample_points() if is_core(p[0])]
    want = case.scenario.topology.measure
    if want:
        unknown = set(want) - {p[0] for p in core}
        if unknown:
            raise RunError(f"topology.measure: no core link {', '.join(sorted(unknown))}; "
                           f"links: {', '.join(p[0] for p in core)}")
        core = [p for p in core if p[0] in want]
    return core


def save_qdiscs(topo: Topology, case_dir: Path) -> None:
    """Every router's qdiscs with their final counters (``tc -s -j``) to qdiscs.json."""
    routers = [n for n in topo.nodes if topo.nodes[n].router]
    script = "".join(f"echo '#{n}'; tc -n {topo.ns(n)} -s -j qdisc show; echo\n"
                     for n in routers)
    out = subprocess.run(["sh", "-c", script], capture_output=True, text=True).stdout
    result: Dict[str, Any] = {}
    node = None
    for line in out.splitlines():
        if line.startswith("#"):
            node = line[1:]
        elif line.strip() and node:
            try:
                result[node] = json.loads(line)
            except json.JSONDecodeError:
                result[node] = line
    (case_dir / "qdiscs.json").write_text(json.dumps(result, indent=1))

# -- processes -------------------------------------------------------------


def flowgen_result(case: Case, case_dir: Path, plan: Plan) -> Optional[FlowgenResult]:
    """flowgen's result (None for a case without bulk or CBR flows)."""
    if not plan.flows:
        return None
    try:
        return load_result(case_dir / FLOWGEN_OUT)
    except FlowgenError as exc:
        log = (read_text(case_dir / FLOWGEN_LOG) or "").splitlines()
        raise RunError(f"{case.id}: {exc}"
                       f"{f' ({log[-1]})' if log else ''}") from None


def measured_window(case: Case, t0: float, fg: Optional[FlowgenResult] = None,
                    log: Log = lambda s: None) -> Tuple[float, float, float]:
    """The measured interval, from when the flows really started.

    The interval begins ``warmup`` after the last flow started (rounded
    up to flowgen's interval grid, so that whole receiver intervals
    fill it) and lasts ``duration - warmup``, cut short at the grid
    point before the first flow stopped sending.  Returns (t_start,
    t_end, go), CLOCK_MONOTONIC; go is flowgen's time 0 (the release
    time ``t0`` without flowgen).
    """
    sc = case.scenario
    if fg is None:
        t_start = t0 + sc.warmup_s
        return t_start, t_start + (sc.duration_s - sc.warmup_s), t0
    go, step = fg.go_monotonic, fg.interval_s
    started = [f.started for f in fg.flows.values() if f.started is not None]
    stopped = [f.stopped for f in fg.flows.values() if f.stopped is not None]
    if not started:
        raise RunError(f"{case.id}: flowgen started no flow"
                       f"{f' ({fg.stopped})' if fg.stopped else ''}")
    rel_start = math.ceil((max(started) + sc.warmup_s) / step - 1e-9) * step
    rel_end = rel_start + math.floor((sc.duration_s - sc.warmup_s) / step + 1e-9) * step
    if stopped:
        rel_end = min(rel_end, math.floor(min(stopped) / step + 1e-9) * step)
    t_start, t_end = go + rel_start, go + rel_end
    if t_end - t_start < 0.5 * (sc.duration_s - sc.warmup_s):
        log(f"{case.id}: [yellow]flows started {max(started):.0f} s after their "
            f"release: measured only {t_end - t_start:.1f} s[/yellow]")
    if t_end <= t_start:
        raise RunError(f"{case.id}: no measured interval left (flows started "
                       f"{max(started):.0f} s late; raise duration_s)")
    return t_start, t_end, go


def flow_result(case_id: str, f: Flow, res: FlowResult, start: float,
                end: float) -> Dict[str, Any]:
    """Flow ``f``'s record of flows.json from flowgen's ``res``.

    Goodput: the receiver's bytes of the intervals wholly inside [start,
    end] (seconds from flowgen's go) over their length.  Retransmissions:
    the sender's over the same interval (``retransmits``; over the whole
    flow: ``retransmits_total``).  A flow that failed, that ran another
    algorithm than ``f.cc``, or whose sender was not sampled at ``end``
    is a RunError.
    """
    if res.error:
        raise RunError(f"{case_id}: flow {f.id} ({f.src}->{f.dst}): {res.error}")
    if f.kind == "bulk" and res.cc != f.cc:
        raise RunError(f"{case_id}: flow {f.id} ran {res.cc or 'an unknown algorithm'}, "
                       f"not {f.cc}")
    nbytes, secs = window_bytes(res.intervals, start, end)
    retrans = 0
    if f.kind == "bulk":
        got = window_retrans(res.retrans, start, end)
        if got is None:
            raise RunError(f"{case_id}: flowgen recorded no retransmission count of flow "
                           f"{f.id} at the end of the measured interval ({end:g} s)")
        retrans = got
    return {**asdict(f), "sport": f.cport, "dport": f.port, "bytes": nbytes,
            "goodput_mbit": nbytes * 8 / secs / 1e6 if secs > 0 else 0.0,
            "retransmits": retrans, "retransmits_total": int(res.retransmits or 0),
            "udp_lost_pct": res.lost_pct if f.kind == "cbr" else None}


def collect(case: Case, case_dir: Path, topo: Topology, plan: Plan, t0: float,
            capture: bool = False, log: Log = lambda s: None) -> Dict[str, Any]:
    """The case's record of summary.json (``result.json``), and ``flows.json``.

    Every figure covers the measured interval (:func:`measured_window`):
    each measured link's queue statistics, each flow's goodput and
    retransmissions, the HTTP responses, and with ``capture`` the first
    flow's loss-delay correlation.
    """
    sc = case.scenario
    fg = flowgen_result(case, case_dir, plan)
    t_start, t_end, go = measured_window(case, t0, fg, log)
    bottlenecks = []
    first: List[QueueSample] = []      # the first bottleneck's samples: recovery, minutes
    rate = sc.topology.rate_mbit
    for label, _, _, _ in measured_links(case, topo):
        try:
            samples = read_queue_csv(case_dir / f"queue-{label}.csv")
            first = first or samples
            q = queue_stats(samples, rate_mbit=rate, start_s=t_start, end_s=t_end)
        except (RunDirError, ValueError) as exc:
            raise RunError(f"{case.id}: queue of {label}: {exc}") from exc
        kept = [s for s in samples if t_start <= s.t <= t_end]
        marks = int(kept[-1].marks - kept[0].marks)
        offered = q.sent_pkts + q.drops
        rec = {"link": label, "rate_mbit": rate, **asdict(q), "marks": marks,
               "mark_pct": 100.0 * marks / offered if offered else 0.0}
        try:
            dualq = read_dualq_csv(case_dir / f"queue-{label}.csv")
            if dualq is not None:       # a dualpi2: its L and C queues too
                rec.update(dualq_stats(dualq, start_s=t_start, end_s=t_end))
        except (RunDirError, ValueError) as exc:
            raise RunError(f"{case.id}: queue of {label}: {exc}") from exc
        bottlenecks.append(rec)
    flows = []
    if fg is not None:
        for f in plan.flows:
            res = fg.flows.get(f.id)
            if res is None:
                raise RunError(f"{case.id}: flowgen reported nothing of flow {f.id}")
            flows.append(flow_result(case.id, f, res, t_start - go, t_end - go))
    (case_dir / "flows.json").write_text(json.dumps(flows, indent=1))
    rec = None
    if sc.traffic.others_stop_s and bottlenecks:
        label = bottlenecks[0]["link"]
        try:
            rec = {"link": label, "stop_s": sc.traffic.others_stop_s,
                   **recovery(first, go + sc.traffic.others_stop_s, go + sc.duration_s)}
        except ValueError as exc:
            raise RunError(f"{case.id}: recovery on {label}: {exc}") from exc
    minutes = None
    if sc.minutes and bottlenecks:
        label = bottlenecks[0]["link"]
        try:
            minutes = {"link": label,
                       "mean_pkts": queue_minutes(first, rate, go, go + sc.duration_s)}
        except ValueError as exc:
            raise RunError(f"{case.id}: queue by minute on {label}: {exc}") from exc
    http = http_result(case, case_dir, plan, t_start, t_end)
    fwd = [f for f in flows if f["group"] in ("fwd", "minority")]
    return {
        "id": case.id, "cc": case.cc, "aqm": case.aqm, "point": case.point,
        "group": case.group, "seed": case.seed,
        "t_traffic": t0, "t_start": t_start, "t_end": t_end, "duration_s": t_end - t_start,
        "bottlenecks": bottlenecks,
        "goodput_mbit": sum(f["goodput_mbit"] for f in fwd),
        "retransmits": sum(f["retransmits"] for f in fwd),
        "flows": [{k: f[k] for k in ("id", "group", "cc", "goodput_mbit", "retransmits",
                                     "base_rtt_ms", "udp_lost_pct")} for f in flows],
        "http": http,
        "recovery": rec,
        **({"minutes": minutes} if sc.minutes else {}),
        "correlation": (correlation(case, case_dir, plan.flows[0], log)
                        if capture and plan.flows else None),
        "platform_ceiling_mbit": None,
    }


def http_result(case: Case, case_dir: Path, plan: Plan, t_start: float,
                t_end: float) -> Optional[Dict[str, Any]]:
    """HTTP metrics of the responses that started in the measured interval."""
    if not plan.http:
        return None
    rows = []
    for h in plan.http:
        path = case_dir / f"http-{h.client}.csv"
        if path.exists():
            try:
                rows += [r for r in read_http_csv(path) if t_start <= r.t_start <= t_end]
            except RunDirError as exc:
                raise RunError(f"{case.id}: {exc}") from None
    with open(case_dir / "http.csv", "w") as out:
        out.write(",".join(CSV_FIELDS) + "\n")
        for h in plan.http:
            path = case_dir / f"http-{h.client}.csv"
            if path.exists():
                out.writelines(path.read_text().splitlines(keepends=True)[1:])
    if not rows:
        raise RunError(f"{case.id}: the HTTP clients recorded no response")
    return http_metrics(rows)


def correlation(case: Case, case_dir: Path, flow: Flow,
                log: Log = lambda s: None) -> Dict[str, Any]:
    """Martin et al.'s loss-delay correlation (CIM, LCDC, delay CDF) on the
    RTT and on the OTT of ``flow``, from its capture (``synctcp correlate``,
    docs/correlate.md), over the whole flow, or over its first
    CAPTURE_MAX_PACKETS packets, which ``capture`` then says (and the log).
    A capture without the flow's data is a RunError with tcpdump's last
    line: never an empty figure."""
    from synctcp.correlate import correlate_flow
    from synctcp.pcap import PcapError, read_tcp
    from synctcp.trace import select_flows, trace_packets

    path = case_dir / f"{flow.id}.pcap"
    said = (read_text(case_dir / "tcpdump.log") or "").strip().splitlines()
    why = f"tcpdump: {said[-1]}" if said else "tcpdump said nothing"
    try:
        packets, _ = read_tcp(path)
    except (OSError, PcapError) as exc:
        raise RunError(f"{case.id}: capture {path.name}: {exc} ({why})") from exc
    traces = select_flows(trace_packets(packets), str(flow.port))
    if not traces:
        raise RunError(f"{case.id}: capture {path.name} holds no data of flow "
                       f"{flow.id} ({len(packets)} TCP packets; {why})")
    out = correlate_flow(max(traces, key=lambda t: len(t.samples)))
    out["capture"] = {"packets": len(packets), "limit": CAPTURE_MAX_PACKETS,
                      "truncated": len(packets) >= CAPTURE_MAX_PACKETS,
                      "span_s": round(packets[-1].t - packets[0].t, 6)}   # capture order
    if out["capture"]["truncated"]:
        log(f"{case.id}: the capture stopped at {CAPTURE_MAX_PACKETS:,} packets, "
            f"the first {out['capture']['span_s']:.1f} s of {flow.id}: its correlation "
            f"covers only those")
    return out
