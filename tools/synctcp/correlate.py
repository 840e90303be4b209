"""``synctcp correlate``: loss–delay correlation on RTT and on OTT (Martin, Nilsson, Rhee 2003).

Martin, Nilsson and Rhee, "Delay-Based Congestion Avoidance for TCP"
(IEEE/ACM ToN 11(3), 2003), §III-A/B, define three metrics on the tcpRTT
series of a connection.  Here each is computed twice on the same capture:
once on tcpRTT and once on the forward OTT of the same ACKs, to test
Sync-TCP's premise that the one-way delay carries more of the loss signal.

The series (§III-A): tuples ``(time_i, d_i, l_i)``; time_i is when the
sender obtains the sample (the ACK's capture time); ``l_i = 1`` when a
segment sent after time_i (and before time_{i+1}) is lost.  Several losses
on the same sample are one loss event.

- **CIM** (§III-B.1): with ``sampledRTT_k(x) = (1/x) Σ_{j=i-x+1..i} d_j``
  at each loss event i, and ``windowAVG(w)``/``std`` the mean and
  standard deviation of the w samples ending at i,
  ``CIM = P[sampledRTT(x) > windowAVG(w) + σ·std]`` = (events where it
  holds) / (loss events).  The paper's choice: x = 2, w = 20, σ = 1.
- **LCDC** (§III-B.2): the mean delay at lag j from a loss, normalized by
  the mean of all samples.  Lag −1 is the last sample obtained before the
  lost segment was sent; lag +1 is the first sample that times a segment
  sent after it.
- **Loss-conditioned delay CDF** (§III-B.3): the CDF of sampledRTT(x) at
  loss events against the CDF of all samples.

docs/correlate.md writes out every interpretation made here.
"""

from __future__ import annotations

import argparse
import bisect
import json
import math
import statistics
import sys
from dataclasses import asdict, dataclass, field
from typing import Any, Dict, List, Optional, Sequence

from .pcap import PcapError, read_tcp
from .trace import FlowTrace, Sample, console, select_flows, trace_packets, warn_read

#: The paper's CIM parameters (§III-B.1): "(2, 20) along with a threshold of a standard deviation".
DEFAULT_X, DEFAULT_W, DEFAULT_SIGMA = 2, 20, 1.0
#: tcpRTT samples come only from ACKs that acknowledge more than one segment (§III-A).
DEFAULT_MIN_SEGS = 2
#: Lags reported by the LCDC.
DEFAULT_MAX_LAG = 20
#: thresholdRTT: the loss-conditioned delay below which only this fraction of losses fall.
THRESHOLD_QUANTILE = 0.05
CDF_QUANTILES = (0.05, 0.25, 0.5, 0.75, 0.95)


@dataclass(frozen=True)
class Series:
    """A delay series with its loss indication.

    ``t``: when each sample was obtained (s); ``t_tx``: when the segment
    it times was first sent; ``d``: the delay (ms).  ``events`` are the
    indices i with ``l_i = 1`` and ``event_tx`` the transmission time of
    the first segment lost in each event.
    """

    name: str
    t: List[float]
    t_tx: List[float]
    d: List[float]
    events: List[int]
    event_tx: List[float]
    losses: int                 #: losses mapped onto the series (before burst merging)
    losses_unplaced: int        #: losses before the first sample: no lag −1, not counted


def loss_events(t: Sequence[float], loss_tx: Sequence[float]) -> tuple:
    """Map lost-segment transmission times onto sample indices.

    A loss at τ belongs to the last sample obtained strictly before τ
    (l_i = 1: "the next segment sent after time_i is dropped").  Losses
    on the same sample form one event (the paper's loss bursts).
    Returns (event indices, first loss time of each, placed, unplaced).
    """
    first: Dict[int, float] = {}
    unplaced = 0
    for tau in sorted(loss_tx):
        i = bisect.bisect_left(t, tau) - 1
        if i < 0:
            unplaced += 1
            continue
        first.setdefault(i, tau)
    idx = sorted(first)
    return idx, [first[i] for i in idx], len(loss_tx) - unplaced, unplaced


def make_series(name: str, t: Sequence[float], t_tx: Sequence[float], d: Sequence[float],
                loss_tx: Sequence[float]) -> Series:
    """A :class:`Series` from samples (sorted by ``t``) and lost-segment send times."""
    events, event_tx, placed, unplaced = loss_events(t, loss_tx)
    return Series(name, list(t), list(t_tx), list(d), events, event_tx, placed, unplaced)


# --- metric 1: CIM ------------------------------------------------------------------------------

def sampled_delay(d: Sequence[float], i: int, x: int) -> Optional[float]:
    """sampledRTT(x) at i: mean of the x samples ending at i (the loss-conditioned delay)."""
    if i - x + 1 < 0:
        return None
    return statistics.fmean(d[i - x + 1:i + 1])


def window_avg_std(d: Sequence[float], i: int, w: int) -> Optional[tuple]:
    """windowAVG(w) and its std at i: mean and population std of the w samples ending at i."""
    if i - w + 1 < 0:
        return None
    win = d[i - w + 1:i + 1]
    return statistics.fmean(win), statistics.pstdev(win)


def delay_event(d: Sequence[float], i: int, x: int, w: int, sigma: float) -> Optional[bool]:
    """The paper's delay event sampledRTT(x) > windowAVG(w) + σ·std; None without w samples."""
    s, ws = sampled_delay(d, i, x), window_avg_std(d, i, w)
    if s is None or ws is None:
        return None
    return s > ws[0] + sigma * ws[1]


@dataclass
class CimResult:
    """CIM = true / events; ``short_history``: events with fewer than w prior samples."""

    value: Optional[float]
    true: int
    events: int
    short_history: int


def cim(series: Series, x: int = DEFAULT_X, w: int = DEFAULT_W,
        sigma: float = DEFAULT_SIGMA) -> CimResult:
    """Correlation Indication Metric, P[sampledRTT(x) > windowAVG(w) + σ·std] over loss events."""
    hits = [delay_event(series.d, i, x, w, sigma) for i in series.events]
    judged = [h for h in hits if h is not None]
    true = sum(judged)
    return CimResult(true / len(judged) if judged else None, true, len(judged),
                     len(hits) - len(judged))


# --- metric 2: LCDC ------------------------------------------------------------------------------

@dataclass
class LagValue:
    """Loss-conditioned mean delay at one lag."""

    n: int
    mean_ms: Optional[float]
    ratio: Optional[float]         #: the paper's value: mean at the lag / mean of all samples
    excess_ms: Optional[float]     #: mean at the lag − mean of all samples (offset-free)


def lag_index(series: Series, event: int, lag: int) -> Optional[int]:
    """The sample index at ``lag`` (≠ 0) of loss event number ``event``.

    Negative lags count back from the last sample obtained before the
    loss (lag −1); positive lags count forward from the first sample whose
    timed segment was sent after the lost one (lag +1).
    """
    if lag < 0:
        i = series.events[event] + lag + 1
        return i if i >= 0 else None
    first = series.events[event] + 1   # a segment sent after the loss is timed after it
    while first < len(series.d) and series.t_tx[first] <= series.event_tx[event]:
        first += 1
    i = first + lag - 1
    return i if i < len(series.d) else None


def lcdc(series: Series, max_lag: int = DEFAULT_MAX_LAG) -> Dict[int, LagValue]:
    """Loss Conditioned Delay Correlation for lags −max_lag..−1 and 1..max_lag."""
    out: Dict[int, LagValue] = {}
    mean_all = statistics.fmean(series.d) if series.d else None
    for lag in [*range(-max_lag, 0), *range(1, max_lag + 1)]:
        vals = [series.d[i] for e in range(len(series.events))
                if (i := lag_index(series, e, lag)) is not None]
        m = statistics.fmean(vals) if vals else None
        ratio = m / mean_all if m is not None and mean_all else None
        excess = m - mean_all if m is not None and mean_all is not None else None
        out[lag] = LagValue(len(vals), m, ratio, excess)
    return out


# --- metric 3: loss-conditioned delay CDF ---------------------------------------------------------

@dataclass
class CdfResult:
    """sampledRTT(x) at losses against all samples."""

    n_all: int
    n_loss: int
    quantiles_all: Dict[str, float] = field(default_factory=dict)
    quantiles_loss: Dict[str, float] = field(default_factory=dict)
    ks: Optional[float] = None                  #: max |F_loss − F_all|
    threshold_ms: Optional[float] = None        #: thresholdRTT: 5% of losses fall below it
    threshold_frac_all: Optional[float] = None  #: F_all(thresholdRTT)
    loss_values_ms: List[float] = field(default_factory=list)


def quantile(sorted_vals: Sequence[float], q: float) -> float:
    """Linear-interpolation quantile of sorted values (numpy's default)."""
    pos = q * (len(sorted_vals) - 1)
    lo = math.floor(pos)
    hi = min(lo + 1, len(sorted_vals) - 1)
    return sorted_vals[lo] + (sorted_vals[hi] - sorted_vals[lo]) * (pos - lo)


def ecdf(sorted_vals: Sequence[float], v: float) -> float:
    """Fraction of values ≤ v."""
    return bisect.bisect_right(sorted_vals, v) / len(sorted_vals)


def ks_distance(a: Sequence[float], b: Sequence[float]) -> float:
    """Two-sample Kolmogorov–Smirnov statistic sup_v |F_a(v) − F_b(v)| (inputs sorted)."""
    return max(abs(ecdf(a, v) - ecdf(b, v)) for v in (*a, *b))


def delay_cdf(series: Series, x: int = DEFAULT_X) -> CdfResult:
    """The CDF metric: distribution of sampledRTT(x) at loss events vs of all samples."""
    all_s = sorted(series.d)
    loss = sorted(v for i in series.events if (v := sampled_delay(series.d, i, x)) is not None)
    res = CdfResult(len(all_s), len(loss), loss_values_ms=loss)
    if all_s:
        res.quantiles_all = {f"p{round(q * 100)}": quantile(all_s, q) for q in CDF_QUANTILES}
    if all_s and loss:
        res.quantiles_loss = {f"p{round(q * 100)}": quantile(loss, q) for q in CDF_QUANTILES}
        res.ks = ks_distance(all_s, loss)
        res.threshold_ms = quantile(loss, THRESHOLD_QUANTILE)
        res.threshold_frac_all = ecdf(all_s, res.threshold_ms)
    return res


# --- series from a traced flow --------------------------------------------------------------------

def eligible(flow: FlowTrace, s: Sample, min_segs: int) -> bool:
    """The paper's tcpRTT sampling rules (§III-A), shared by both series.

    An ACK that advanced snd_una (every trace sample does), not during
    loss recovery (nor carrying SACK blocks: the receiver already holds a
    hole, and its TSecr is frozen), and acknowledging more than
    ``min_segs − 1`` segments (more than one by default: a lone segment's
    ACK may be delayed).
    """
    if s.in_recovery or s.sack or s.t_tx is None:
        return False
    return s.acked_bytes > (min_segs - 1) * (flow.smss or 1)


def flow_series(flow: FlowTrace, which: str, min_segs: int = DEFAULT_MIN_SEGS) -> Series:
    """The RTT or OTT series of a flow, on the same eligible ACKs, with its losses.

    The OTT series is the exact OTT for the option, and for RFC 7323
    timestamps (which carry an unknown clock offset) the queuing delay
    anchored at half the minimum RTT: ``qdelay + min RTT / 2``.  CIM,
    excess LCDC and the CDF's KS distance do not depend on the anchor.
    """
    rows = [s for s in flow.samples if eligible(flow, s, min_segs) and s.t_tx is not None]
    pts: List[tuple] = []
    if which == "rtt":
        pts = [(s.t, s.t_tx, s.rtt_ms) for s in rows if s.rtt_ms is not None]
    elif flow.source == "owts":
        pts = [(s.t, s.t_tx, s.ott_ms) for s in rows if s.ott_ms is not None]
    else:
        rtts = [s.rtt_ms for s in flow.samples if s.rtt_ms is not None]
        base = min(rtts) / 2 if rtts else 0.0
        pts = [(s.t, s.t_tx, s.qdelay_ms + base) for s in rows if s.qdelay_ms is not None]
    return make_series(which, [p[0] for p in pts], [p[1] for p in pts], [p[2] for p in pts],
                       flow.loss_times())


@dataclass
class SeriesMetrics:
    """All three metrics of one series."""

    samples: int
    losses: int
    loss_events: int
    losses_unplaced: int
    cim: CimResult
    lcdc: Dict[int, LagValue]
    cdf: CdfResult


def series_metrics(series: Series, x: int, w: int, sigma: float,
                   max_lag: int) -> SeriesMetrics:
    """CIM, LCDC and CDF of one series."""
    return SeriesMetrics(len(series.d), series.losses, len(series.events),
                         series.losses_unplaced, cim(series, x, w, sigma),
                         lcdc(series, max_lag), delay_cdf(series, x))


def correlate_flow(flow: FlowTrace, x: int = DEFAULT_X, w: int = DEFAULT_W,
                   sigma: float = DEFAULT_SIGMA, min_segs: int = DEFAULT_MIN_SEGS,
                   max_lag: int = DEFAULT_MAX_LAG) -> Dict[str, Any]:
    """The metrics on RTT and on OTT of one flow, as a JSON-able dict."""
    out: Dict[str, Any] = {"flow": flow.id, "index": flow.index, "ott_source": flow.source,
                           "peer_clock_hz": flow.peer_clock_hz,
                           "params": {"x": x, "w": w, "sigma": sigma, "min_segs": min_segs,
                                      "smss": flow.smss}}
    for which in ("rtt", "ott"):
        m = series_metrics(flow_series(flow, which, min_segs), x, w, sigma, max_lag)
        d = asdict(m)
        d["cdf"].pop("loss_values_ms")
        d["lcdc"] = {str(k): v for k, v in d["lcdc"].items()}
        out[which] = d
    return out


# --- output ---------------------------------------------------------------------------------------

def _f(v: Optional[float], fmt: str = ".3f") -> str:
    return "-" if v is None else format(v, fmt)


def _cim_cell(c: Dict[str, Any]) -> str:
    return "-" if c["value"] is None else f"{c['value']:.3f} ({c['true']}/{c['events']})"


def table_rows(res: Dict[str, Any], lags: Sequence[int] = (-3, -2, -1, 1, 2, 3)) -> List[tuple]:
    """(metric, RTT, OTT) rows of the side-by-side table."""
    r, o = res["rtt"], res["ott"]
    rows = [("samples", str(r["samples"]), str(o["samples"])),
            ("loss events (losses)", f"{r['loss_events']} ({r['losses']})",
             f"{o['loss_events']} ({o['losses']})"),
            (f"CIM x={res['params']['x']} w={res['params']['w']} "
             f"{res['params']['sigma']:g}σ", _cim_cell(r["cim"]), _cim_cell(o["cim"]))]
    for lag in (lg for lg in lags if str(lg) in r["lcdc"]):
        lr, lo = r["lcdc"][str(lag)], o["lcdc"][str(lag)]
        rows.append((f"LCDC lag {lag:+d}: ratio / excess ms",
                     f"{_f(lr['ratio'])} / {_f(lr['excess_ms'], '+.2f')}",
                     f"{_f(lo['ratio'])} / {_f(lo['excess_ms'], '+.2f')}"))
    for label, key in (("median delay, all (ms)", "quantiles_all"),
                       ("median sampled(x) at loss (ms)", "quantiles_loss")):
        rows.append((label, _f(r["cdf"][key].get("p50"), ".2f"),
                     _f(o["cdf"][key].get("p50"), ".2f")))
    rows.append(("CDF KS distance loss vs all", _f(r["cdf"]["ks"]), _f(o["cdf"]["ks"])))
    rows.append(("thresholdRTT ms (F_all there)",
                 f"{_f(r['cdf']['threshold_ms'], '.2f')} ({_f(r['cdf']['threshold_frac_all'], '.2f')})",
                 f"{_f(o['cdf']['threshold_ms'], '.2f')} ({_f(o['cdf']['threshold_frac_all'], '.2f')})"))
    return rows


def print_tables(results: Sequence[Dict[str, Any]]) -> None:
    """RTT and OTT side by side, one table per flow (rich)."""
    from rich.table import Table

    con = console()
    for res in results:
        src = res["ott_source"]
        clock = f", peer clock {res['peer_clock_hz']:g} Hz" if res["peer_clock_hz"] else ""
        tab = Table(title=f"{res['flow']}  (OTT from {src}{clock})")
        tab.add_column("metric")
        tab.add_column("RTT", justify="right")
        tab.add_column("OTT", justify="right")
        for row in table_rows(res):
            tab.add_row(*row)
        con.print(tab)


def cmd_correlate(args: argparse.Namespace) -> int:
    """``synctcp correlate``: exit 0, 1 if no flow matched, 2 if the file or options are bad."""
    if args.x < 1 or args.w < args.x or args.sigma < 0 or args.min_segs < 1 or args.lags < 1:
        print("synctcp: correlate needs 1 <= x <= w, sigma >= 0, min-segs >= 1, lags >= 1",
              file=sys.stderr)
        return 2
    try:
        packets, stats = read_tcp(args.file)
    except PcapError as exc:
        print(f"synctcp: {args.file}: {exc}", file=sys.stderr)
        return 2
    warn_read(stats)
    flows = select_flows(trace_packets(packets), args.flow)
    results = [correlate_flow(f, args.x, args.w, args.sigma, args.min_segs, args.lags)
               for f in flows]
    if args.json:
        print(json.dumps({"file": args.file, "flows": results}, indent=2))
    elif results:
        print_tables(results)
    else:
        print("synctcp: no TCP flow with payload matches", file=sys.stderr)
    return 0 if results else 1


def add_parser(sub: Any) -> None:
    """Register ``synctcp correlate`` on the CLI's subparsers."""
    s = sub.add_parser("correlate", help="loss-delay correlation (CIM, LCDC, CDF) on RTT vs OTT",
                       description="Loss-delay correlation of each flow of a sender-side capture "
                       "(CIM, LCDC and the loss-conditioned delay CDF of Martin, Nilsson and "
                       "Rhee 2003), computed on the RTT and on the forward OTT "
                       "(docs/correlate.md).",
                       epilog="Exit 0 done, 1 no flow matched, 2 bad file or options.")
    s.add_argument("file", help="pcap or pcapng, captured at the data sender")
    s.add_argument("--flow", metavar="FILTER",
                   help="#N (flow index), a port, or a substring of src:port>dst:port")
    s.add_argument("--json", action="store_true", help="JSON output")
    s.add_argument("--x", type=int, default=DEFAULT_X, help="samples in sampledRTT (default 2)")
    s.add_argument("--w", type=int, default=DEFAULT_W, help="samples in windowAVG (default 20)")
    s.add_argument("--sigma", type=float, default=DEFAULT_SIGMA,
                   help="threshold in standard deviations (default 1)")
    s.add_argument("--min-segs", type=int, default=DEFAULT_MIN_SEGS,
                   help="sample only ACKs covering at least this many segments (default 2)")
    s.add_argument("--lags", type=int, default=DEFAULT_MAX_LAG,
                   help="LCDC lags in the JSON output, each side (default 20)")
    s.set_defaults(func=cmd_correlate)
