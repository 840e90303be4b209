"""Metrics of a run, each one function with its definition.

Queue samples are the rows of ``queue-LINK.csv`` (written by qsampler.c,
read by :func:`.rundir.read_queue_csv`): time, queue length in packets and
bytes, and the qdisc's cumulative drop, departure and mark counters; a
dualpi2 qdisc's rows also have its L and C queues (:func:`dualq_stats`).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Dict, Iterable, List, Optional, Sequence, Tuple

from .rundir import Case, QueueSample, flow_labeler


@dataclass
class QueueStats:
    """Bottleneck queue over the measured interval of a run."""

    samples: int
    sample_hz: float
    mean_pkts: float
    p95_pkts: float
    max_pkts: float
    mean_delay_ms: float
    p95_delay_ms: float
    p99_delay_ms: float
    drops: int
    sent_pkts: int
    drop_pct: float
    utilization: float


def percentile(values: Sequence[float], pct: float) -> float:
    """Nearest-rank percentile: the smallest value with >= pct% at or below it."""
    if not values:
        return math.nan
    if not 0 <= pct <= 100:
        raise ValueError("pct must be in 0..100")
    ordered = sorted(values)
    rank = max(1, math.ceil(pct / 100 * len(ordered)))
    return ordered[rank - 1]


def queuing_delay_ms(backlog_bytes: float, rate_mbit: float) -> float:
    """Time to drain ``backlog_bytes`` at the bottleneck rate (ms)."""
    return backlog_bytes * 8 / (rate_mbit * 1e6) * 1e3


def drop_pct(drops: float, sent_pkts: float) -> float:
    """Packets dropped at the bottleneck as % of packets offered to it."""
    offered = drops + sent_pkts
    return 100.0 * drops / offered if offered else 0.0


def utilization(sent_bytes: float, seconds: float, rate_mbit: float) -> float:
    """Bytes the bottleneck sent as a fraction of what it could send."""
    if seconds <= 0:
        return math.nan
    return sent_bytes * 8 / seconds / (rate_mbit * 1e6)


def queue_stats(samples: Sequence[QueueSample], rate_mbit: float, start_s: float = -math.inf,
                end_s: float = math.inf) -> QueueStats:
    """Statistics of the samples taken with ``start_s <= t <= end_s``.

    Counters (drops, departures) are differences over the kept interval.
    """
    kept = [s for s in samples if start_s <= s.t <= end_s]
    if len(kept) < 2:
        raise ValueError(f"too few queue samples ({len(kept)}) to compute statistics")
    span = kept[-1].t - kept[0].t
    qlen = [s.qlen_pkts for s in kept]
    delay = [queuing_delay_ms(s.backlog_bytes, rate_mbit) for s in kept]
    drops = int(kept[-1].drops - kept[0].drops)
    sent = int(kept[-1].sent_pkts - kept[0].sent_pkts)
    return QueueStats(
        samples=len(kept),
        sample_hz=(len(kept) - 1) / span if span > 0 else math.nan,
        mean_pkts=sum(qlen) / len(qlen),
        p95_pkts=percentile(qlen, 95),
        max_pkts=max(qlen),
        mean_delay_ms=sum(delay) / len(delay),
        p95_delay_ms=percentile(delay, 95),
        p99_delay_ms=percentile(delay, 99),
        drops=drops,
        sent_pkts=sent,
        drop_pct=drop_pct(drops, sent),
        utilization=utilization(kept[-1].sent_bytes - kept[0].sent_bytes, span, rate_mbit),
    )


def recovery(samples: Sequence[QueueSample], stop_s: float, end_s: float,
             tail_s: float = 10.0) -> Dict[str, Optional[float]]:
    """How long after ``stop_s`` the queue is down to what the remaining flow keeps.

    The level is the mean queue of the last ``tail_s`` before ``end_s``
    (times 1.25, at least 2 packets); the recovery time is from ``stop_s``
    to the first whole second from which every 1-s mean of the queue stays
    at or below it (None: it never does).
    """
    kept = [s for s in samples if stop_s <= s.t <= end_s]
    tail = [s.qlen_pkts for s in kept if s.t >= end_s - tail_s]
    if not tail or end_s - stop_s < 2 * tail_s:
        raise ValueError(f"the queue after the stop spans {end_s - stop_s:.1f} s: "
                         f"at least {2 * tail_s:g} s are needed")
    level = max(2.0, 1.25 * sum(tail) / len(tail))
    means: List[float] = []
    for k in range(int(end_s - stop_s)):
        sec = [s.qlen_pkts for s in kept if stop_s + k <= s.t < stop_s + k + 1]
        means.append(sum(sec) / len(sec) if sec else 0.0)
    after: Optional[float] = None
    for k in range(len(means) - 1, -1, -1):
        if means[k] > level:
            break
        after = float(k)
    return {"level_pkts": level, "low_after_s": after}


def queue_minutes(samples: Sequence[QueueSample], rate_mbit: float, start_s: float,
                  end_s: float) -> List[float]:
    """The mean queue (packets) of every whole minute from ``start_s`` to ``end_s``."""
    n = int((end_s - start_s) // 60)
    if n < 2:
        raise ValueError(f"the traffic spans {end_s - start_s:.1f} s: the queue by minute "
                         "needs at least 120 s")
    return [queue_stats(samples, rate_mbit, start_s + 60 * k, start_s + 60 * (k + 1)).mean_pkts
            for k in range(n)]


def dualq_stats(samples: Sequence[DualQSample], start_s: float = -math.inf,
                end_s: float = math.inf) -> Dict[str, Dict[str, Any]]:
    """DualPI2's two queues over the samples with ``start_s <= t <= end_s``
    (:class:`~.rundir.DualQSample`), as ``{"queue_l": {...}, "queue_c": {...}}``:
    each queue's head-packet sojourn in ms at the samples (mean, median,
    p99, max; 0 while that queue is empty), the share of the samples in
    which it held a packet (``busy``), the packets it took in
    (``enq_pkts``) and their share of both (``share``); the L queue's step
    marks, the C queue's mean PI2 probability p' (0..1; the L queue's
    coupled probability is k p', the C queue's p'^2)."""
    kept = [s for s in samples if start_s <= s.t <= end_s]
    if len(kept) < 2:
        raise ValueError(f"too few dualpi2 samples ({len(kept)}) to compute statistics")
    l_in = int(kept[-1].l_enq_pkts - kept[0].l_enq_pkts)
    c_in = int(kept[-1].c_enq_pkts - kept[0].c_enq_pkts)

    def one(delays_us: List[float], enq: int) -> Dict[str, Any]:
        ms = [d / 1e3 for d in delays_us]
        return {"delay_mean_ms": sum(ms) / len(ms), "delay_p50_ms": percentile(ms, 50),
                "delay_p99_ms": percentile(ms, 99), "delay_max_ms": max(ms),
                "busy": sum(1 for v in ms if v > 0) / len(ms), "enq_pkts": enq,
                "share": enq / (l_in + c_in) if l_in + c_in else 0.0}

    return {
        "queue_l": {**one([s.l_delay_us for s in kept], l_in),
                    "step_marks": int(kept[-1].step_marks - kept[0].step_marks)},
        "queue_c": {**one([s.c_delay_us for s in kept], c_in),
                    "prob_mean": sum(s.prob for s in kept) / len(kept) / 2**32},
    }


def ecdf(values: Iterable[float]) -> Tuple[List[float], List[float]]:
    """Empirical CDF: the distinct values x in order and P(X <= x) at each (the
    corners of a step line drawn ``where="post"``)."""
    xs = sorted(values)
    n = len(xs)
    keep = [i for i in range(n) if i == n - 1 or xs[i + 1] != xs[i]]     # last of each run
    return [xs[i] for i in keep], [(i + 1) / n for i in keep]


def eccdf(values: Iterable[float]) -> Tuple[List[float], List[float]]:
    """Empirical CCDF: the distinct values x in order and P(X >= x) at each, never 0
    (log-log plots: Weigle's response-time CCDFs, Figs 4.20-4.22)."""
    xs = sorted(values)
    n = len(xs)
    keep = [i for i in range(n) if i == 0 or xs[i - 1] != xs[i]]        # first of each run
    return [xs[i] for i in keep], [(n - i) / n for i in keep]


def flow_min_rtt_ms(case: Case) -> Dict[str, float]:
    """Each flow's smallest RTT as its sender measured it (tcp_info ``min_rtt``
    over the case's inet_diag samples), in ms, by flows.json id: the path's base
    RTT plus serialization, whatever the queue did.  Flows never sampled are absent."""
    label = flow_labeler(case.flows())
    out: Dict[str, float] = {}
    for sample in case.tcp_samples():
        for sock in sample.sockets:
            us = (sock.get("tcp_info") or {}).get("min_rtt_us")
            if isinstance(us, (int, float)) and us > 0:
                name = label(sock)
                out[name] = min(out.get(name, math.inf), us / 1000)
    return out
