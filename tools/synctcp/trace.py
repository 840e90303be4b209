"""``synctcp trace``: per-flow RTT, OTT and losses from a sender-side capture.

For each TCP connection in a pcap this reconstructs what the sender knew,
ACK by ACK (docs/trace.md has the full derivation):

- **RTT** (Karn): capture time of an ACK that advances ``snd_una`` minus
  the first transmission time of the highest segment it acknowledges; no
  sample if that segment was ever retransmitted.
- **OTT**, from the one-way-timestamp option (owts.py) when the ACKs carry
  it, exact: the ``ott_us`` the receiver measured for the last data
  segment it got and echoed in the ACK.  Otherwise from RFC 7323
  timestamps, as the kernel's ``core/ott.c`` does: the receiver's TSval
  (converted with its estimated clock rate) minus our send time of the
  segment whose TSval the ACK echoes.  That is the forward OTT plus a
  constant clock offset, so ``qdelay = OTT - min OTT`` is the forward
  queuing delay.
- **Retransmissions and losses**: a data segment whose sequence range was
  already sent is a retransmission; the loss it repairs happened to the
  previous transmission of that data, whose time is the loss time.

Outputs per flow: ``<flow>.csv`` (one row per ACK that advanced
``snd_una``), ``<flow>-retrans.csv``, ``<flow>.png``, and a
``summary.json`` for all flows.
"""

from __future__ import annotations

import argparse
import bisect
import csv
import json
import re
import statistics
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Dict, Iterable, List, Optional, Sequence, Tuple

from .pcap import PcapError, ReadStats, TcpPacket, read_tcp

#: TSval clock rates seen in the wild (ticks/s); core/ott.c's synctcp_known_hz.
KNOWN_TS_HZ = (2, 10, 100, 250, 1000, 1000000)
#: A rate estimate snaps to a known rate when within 1/4 of it (SYNCTCP_TS_SNAP_SHIFT).
SNAP_FRACTION = 0.25
#: The peer clock must advance at least this many ticks before its rate is trusted
#: (a ±1 tick error is then at most 1/8, well inside the snapping band).
MIN_EST_TICKS = 8
#: RFC 7323 TS option bytes on every segment (10, padded to 12).
TS_OPTION_SPACE = 12

SEQ_MOD = 1 << 32


def _echoed_ott_ns(p: TcpPacket) -> Optional[int]:
    """The forward OTT an ACK echoes in its OWTS option (ns); None if none or absurd."""
    o = p.opts.owts
    if o is None or o.ott_us is None or o.absurd():
        return None
    return o.ott_us * 1000


# --- sequence-number arithmetic -----------------------------------------------------------

class Unwrapper:
    """32-bit sequence/timestamp numbers to a 64-bit line, nearest to the last value."""

    def __init__(self, first: int) -> None:
        self.last = first

    def __call__(self, v: int) -> int:
        delta = (v - self.last) % SEQ_MOD
        if delta >= SEQ_MOD // 2:
            delta -= SEQ_MOD
        self.last += delta
        return self.last


def snap_clock_hz(est_hz: float) -> float:
    """Round a rate estimate to the known TS clock within ±25%, else keep it (core/ott.c)."""
    for k in KNOWN_TS_HZ:
        if abs(est_hz - k) <= k * SNAP_FRACTION:
            return float(k)
    return est_hz


def estimate_clock_hz(points: Sequence[Tuple[float, int]]) -> Optional[float]:
    """Least-squares slope of (capture time s, unwrapped TSval) pairs, in ticks/s.

    None when the clock advanced fewer than :data:`MIN_EST_TICKS` ticks or
    the points span no time.
    """
    if len(points) < 2:
        return None
    ts = [p[0] for p in points]
    vs = [float(p[1]) for p in points]
    if max(vs) - min(vs) < MIN_EST_TICKS or max(ts) - min(ts) <= 0:
        return None
    mt, mv = statistics.fmean(ts), statistics.fmean(vs)
    sxx = sum((t - mt) ** 2 for t in ts)
    sxy = sum((t - mt) * (v - mv) for t, v in zip(ts, vs))
    return sxy / sxx if sxx > 0 else None


# --- per-flow state ---------------------------------------------------------------------------

@dataclass
class SentSegment:
    """A range of sequence space as first sent, and what happened to it since."""

    start: int
    end: int
    t_first: float
    t_last: float
    retransmitted: bool = False


@dataclass(frozen=True)
class Retransmission:
    """A data segment whose sequence range had been sent before."""

    t: float                    #: capture time of the retransmission
    seq: int                    #: relative sequence number of its first byte
    length: int                 #: bytes of already-sent data it carries
    t_lost: Optional[float]     #: time of the previous transmission of that data: the loss


@dataclass(frozen=True)
class Sample:
    """What one ACK that advanced ``snd_una`` taught the sender.

    ``t`` is when the sender learned it (the ACK's capture time): the
    paper's time_i.  ``t_tx`` is the first transmission of the segment the
    RTT times (the highest one acknowledged).
    """

    t: float
    t_tx: Optional[float]
    ack: int
    acked_bytes: int
    rtt_ms: Optional[float]
    ott_ms: Optional[float]
    qdelay_ms: Optional[float]
    source: str
    in_recovery: bool
    karn: bool                  #: the timed segment was retransmitted: no RTT
    sack: bool                  #: the ACK carried SACK blocks: the receiver holds a hole


@dataclass
class _AckTs:
    """An advancing ACK's raw timestamps, kept until the peer clock is known."""

    tsval: Optional[int]        #: unwrapped
    tsecr: Optional[int]
    owts_ott_ns: Optional[int]
    sack: bool


@dataclass
class FlowTrace:
    """One TCP connection, seen from its data sender."""

    index: int
    src: str
    sport: int
    dst: str
    dport: int
    packets: int = 0
    data_packets: int = 0
    data_bytes: int = 0
    retrans_bytes: int = 0
    first_t: float = 0.0
    last_t: float = 0.0
    smss: Optional[int] = None
    source: str = "none"
    peer_clock_hz: Optional[float] = None
    peer_clock_est_hz: Optional[float] = None
    min_ott_ms: Optional[float] = None
    samples: List[Sample] = field(default_factory=list)
    retransmissions: List[Retransmission] = field(default_factory=list)

    @property
    def id(self) -> str:
        """``src:port>dst:port`` in the data direction (IPv6 addresses bracketed)."""
        return f"{_host(self.src)}:{self.sport}>{_host(self.dst)}:{self.dport}"

    @property
    def name(self) -> str:
        """A file-name-safe flow name."""
        return re.sub(r"[^0-9A-Za-z.-]+", "_", f"flow{self.index}_{self.src}_{self.sport}-"
                                                 f"{self.dst}_{self.dport}")

    def loss_times(self) -> List[float]:
        """Transmission times of the segments that were lost (one per retransmission)."""
        return sorted(r.t_lost for r in self.retransmissions if r.t_lost is not None)


def _host(addr: str) -> str:
    return f"[{addr}]" if ":" in addr else addr


# --- connections ---------------------------------------------------------------------------------

Endpoint = Tuple[str, int]


def split_connections(packets: Iterable[TcpPacket]) -> List[List[TcpPacket]]:
    """Packets grouped by connection: the 4-tuple, and a SYN (other than a
    retransmission of the current one) starts a new connection on it."""
    conns: List[List[TcpPacket]] = []
    current: Dict[Tuple[Endpoint, Endpoint], Tuple[int, Optional[int]]] = {}
    for p in packets:
        a, b = (p.src, p.sport), (p.dst, p.dport)
        key = (a, b) if a <= b else (b, a)
        pure_syn = p.is_syn and not p.has_ack
        if key not in current or (pure_syn and current[key][1] != p.seq):
            conns.append([])
            current[key] = (len(conns) - 1, p.seq if pure_syn else None)
        conns[current[key][0]].append(p)
    return conns


def data_sender(conn: Sequence[TcpPacket]) -> Optional[Endpoint]:
    """The endpoint that sent more payload bytes; None if neither sent any."""
    sent: Dict[Endpoint, int] = {}
    for p in conn:
        sent[(p.src, p.sport)] = sent.get((p.src, p.sport), 0) + p.payload_len
    best = max(sent.items(), key=lambda kv: kv[1], default=None)
    return best[0] if best and best[1] > 0 else None


# --- the sender's view ---------------------------------------------------------------------------

class _Sender:
    """Replays one connection from the data sender's side (sequence space is relative)."""

    def __init__(self, flow: FlowTrace) -> None:
        self.flow = flow
        self.seq: Optional[Unwrapper] = None
        self.base = 0
        self.segs: List[SentSegment] = []
        self.starts: List[int] = []
        self.snd_max: Optional[int] = None
        self.snd_una = 0
        self.recovery_point: Optional[int] = None
        self.tsval_first_t: Dict[int, float] = {}
        self.peer_ts: List[Tuple[float, int]] = []
        self.peer_tsw: Optional[Unwrapper] = None
        self.raw: List[_AckTs] = []
        self.pre: List[Dict[str, Any]] = []
        self.peer_mss: Optional[int] = None
        self.ts_in_use = False
        self.payload_sizes: Dict[int, int] = {}

    # data direction
    def on_sent(self, p: TcpPacket) -> None:
        if p.opts.ts is not None:
            self.ts_in_use = True
            self.tsval_first_t.setdefault(p.opts.ts[0], p.t)
        if p.is_syn:
            self.seq = Unwrapper(p.seq)
            self.base = p.seq + 1
            return
        if p.payload_len == 0:
            return
        if self.seq is None:
            self.seq = Unwrapper(p.seq)
            self.base = p.seq
        s = self.seq(p.seq) - self.base
        e = s + p.payload_len
        self.flow.data_packets += 1
        self.payload_sizes[p.payload_len] = self.payload_sizes.get(p.payload_len, 0) + 1
        if self.snd_max is None:
            self.snd_max = self.snd_una = s
        if p.payload_len <= 1 and e <= self.snd_una:
            return                                    # keepalive probe, not data
        if s < self.snd_max:
            self._retransmitted(p.t, s, min(e, self.snd_max))
        if e > self.snd_max:
            self._new_data(p.t, max(s, self.snd_max), e, retransmitted=s < self.snd_max)

    def _new_data(self, t: float, s: int, e: int, retransmitted: bool) -> None:
        self.segs.append(SentSegment(s, e, t, t, retransmitted))
        self.starts.append(s)
        self.flow.data_bytes += e - s
        self.snd_max = e

    def _retransmitted(self, t: float, s: int, e: int) -> None:
        """Record a retransmission of [s, e): the loss is the previous transmission of byte s."""
        idx = bisect.bisect_right(self.starts, s) - 1
        t_lost = self.segs[idx].t_last if idx >= 0 else None
        self.flow.retransmissions.append(Retransmission(t, s, e - s, t_lost))
        self.flow.retrans_bytes += e - s
        for seg in self.segs[max(idx, 0):]:
            if seg.start >= e:
                break
            if seg.end > s:
                seg.retransmitted = True
                seg.t_last = t
        assert self.snd_max is not None
        self.recovery_point = max(self.recovery_point or 0, self.snd_max)

    # ACK direction
    def on_ack(self, p: TcpPacket) -> None:
        if p.is_syn and p.opts.mss:
            self.peer_mss = p.opts.mss
        tsval = self._peer_tsval(p.t, p.opts.ts[0]) if p.opts.ts is not None else None
        if not p.has_ack or self.snd_max is None:
            return
        a = self.snd_una + _signed(p.ack - (self.base + self.snd_una))
        if a <= self.snd_una or a > self.snd_max + 1:
            return
        self._advance(p, a, tsval)

    def _peer_tsval(self, t: float, tsval: int) -> int:
        """Unwrap the peer's TSval and keep it for the clock-rate estimate."""
        if self.peer_tsw is None:
            self.peer_tsw = Unwrapper(tsval)
        v = self.peer_tsw(tsval)
        self.peer_ts.append((t, v))
        return v

    def _advance(self, p: TcpPacket, a: int, tsval: Optional[int]) -> None:
        """An ACK that moves ``snd_una`` to ``a``: one sample row."""
        in_recovery = self.recovery_point is not None and self.snd_una < self.recovery_point
        if self.recovery_point is not None and a >= self.recovery_point:
            self.recovery_point = None
        idx = bisect.bisect_right(self.starts, a - 1) - 1
        seg = self.segs[idx] if idx >= 0 and self.segs[idx].end >= a else None
        rtt = None if seg is None or seg.retransmitted else (p.t - seg.t_first) * 1000.0
        self.pre.append(dict(t=p.t, t_tx=seg.t_first if seg else None, ack=a,
                             acked_bytes=a - self.snd_una, rtt_ms=rtt, in_recovery=in_recovery,
                             karn=bool(seg and seg.retransmitted), sack=bool(p.opts.sack)))
        self.raw.append(_AckTs(tsval, p.opts.ts[1] if p.opts.ts else None,
                               _echoed_ott_ns(p),
                               bool(p.opts.sack)))
        self.snd_una = a

    # after the last packet
    def finish(self) -> None:
        """Estimate the peer clock, compute the OTTs, and build the sample rows."""
        flow = self.flow
        flow.smss = self._smss()
        owts = any(r.owts_ott_ns is not None for r in self.raw)
        otts = self._owts_otts() if owts else self._ts_otts()
        flow.source = "owts" if owts else ("ts" if any(o is not None for o in otts) else "none")
        valid = [o for o in otts if o is not None]
        flow.min_ott_ms = min(valid) if valid else None
        for pre, ott in zip(self.pre, otts):
            q = None if ott is None or flow.min_ott_ms is None else ott - flow.min_ott_ms
            flow.samples.append(Sample(ott_ms=ott, qdelay_ms=q,
                                       source=flow.source if ott is not None else "", **pre))

    def _smss(self) -> Optional[int]:
        """Sender MSS: the peer's MSS option less the TS option, else the commonest payload."""
        if self.peer_mss:
            return self.peer_mss - (TS_OPTION_SPACE if self.ts_in_use else 0)
        if self.payload_sizes:
            return max(self.payload_sizes.items(), key=lambda kv: (kv[1], kv[0]))[0]
        return None

    def _owts_otts(self) -> List[Optional[float]]:
        return [None if r.owts_ott_ns is None else r.owts_ott_ns / 1e6 for r in self.raw]

    def _ts_otts(self) -> List[Optional[float]]:
        """RFC 7323 OTT + offset per advancing ACK (ms), with core/ott.c's sample rules."""
        est = estimate_clock_hz(self.peer_ts)
        self.flow.peer_clock_est_hz = est
        hz = snap_clock_hz(est) if est else None
        self.flow.peer_clock_hz = hz
        out: List[Optional[float]] = [None] * len(self.raw)
        if hz is None:
            return out
        ref = self.peer_ts[0][1]
        last: Optional[Tuple[int, int]] = None
        for i, r in enumerate(self.raw):
            if r.tsval is None or not r.tsecr:
                continue                                      # TSecr 0: no echo
            if r.sack:
                continue                                      # TS.Recent frozen by a hole
            tsval = r.tsval
            sent = self.tsval_first_t.get(r.tsecr)
            if sent is None:
                continue                                      # echo of a TSval we never saw
            if last and (tsval < last[0] or _ts_before(r.tsecr, last[1])):
                continue                                      # reordered ACK
            last = (tsval, r.tsecr)
            out[i] = ((tsval - ref) / hz - sent) * 1000.0
        return out


def _signed(delta: int) -> int:
    """A 32-bit difference as a signed number."""
    delta %= SEQ_MOD
    return delta - SEQ_MOD if delta >= SEQ_MOD // 2 else delta


def _ts_before(a: int, b: int) -> bool:
    return 0 < (b - a) % SEQ_MOD < SEQ_MOD // 2


def trace_connection(conn: Sequence[TcpPacket], index: int) -> Optional[FlowTrace]:
    """The sender's view of one connection; None if it carried no payload."""
    snd = data_sender(conn)
    if snd is None:
        return None
    rcv = next(((p.dst, p.dport) for p in conn if (p.src, p.sport) == snd))
    flow = FlowTrace(index, snd[0], snd[1], rcv[0], rcv[1], packets=len(conn),
                     first_t=conn[0].t, last_t=conn[-1].t)
    sender = _Sender(flow)
    for p in conn:
        if (p.src, p.sport) == snd:
            sender.on_sent(p)
        else:
            sender.on_ack(p)
    sender.finish()
    return flow


def trace_packets(packets: Sequence[TcpPacket]) -> List[FlowTrace]:
    """All flows with payload, numbered in order of their first packet."""
    flows: List[FlowTrace] = []
    for conn in split_connections(packets):
        flow = trace_connection(conn, len(flows))
        if flow is not None:
            flows.append(flow)
    return flows


def select_flows(flows: Sequence[FlowTrace], filt: Optional[str]) -> List[FlowTrace]:
    """Flows matching ``--flow``: ``#N`` (index), a port number, or a substring of the id."""
    if not filt:
        return list(flows)
    if filt.startswith("#") and filt[1:].isdigit():
        return [f for f in flows if f.index == int(filt[1:])]
    if filt.isdigit():
        return [f for f in flows if int(filt) in (f.sport, f.dport)]
    return [f for f in flows if filt in f.id]


def trace_file(path: str, filt: Optional[str] = None) -> Tuple[List[FlowTrace], ReadStats]:
    """Read a capture and trace its (selected) flows."""
    packets, stats = read_tcp(path)
    return select_flows(trace_packets(packets), filt), stats


# --- outputs ----------------------------------------------------------------------------------------

CSV_COLUMNS = ("t_s", "t_tx_s", "ack", "acked_bytes", "rtt_ms", "ott_ms", "qdelay_ms", "source",
               "in_recovery", "karn", "sack")


def _fmt(v: Optional[float], nd: int = 6) -> str:
    return "" if v is None else f"{v:.{nd}f}"


def write_csv(flow: FlowTrace, out: Path) -> Tuple[Path, Path]:
    """``<flow>.csv`` (samples) and ``<flow>-retrans.csv`` (retransmissions and loss times)."""
    samples, retrans = out / f"{flow.name}.csv", out / f"{flow.name}-retrans.csv"
    with open(samples, "w", newline="") as fh:
        w = csv.writer(fh)
        w.writerow(CSV_COLUMNS)
        for s in flow.samples:
            w.writerow([_fmt(s.t), _fmt(s.t_tx), s.ack, s.acked_bytes, _fmt(s.rtt_ms, 3),
                        _fmt(s.ott_ms, 3), _fmt(s.qdelay_ms, 3), s.source, int(s.in_recovery),
                        int(s.karn), int(s.sack)])
    with open(retrans, "w", newline="") as fh:
        w = csv.writer(fh)
        w.writerow(("t_s", "seq", "length", "t_lost_s"))
        for r in flow.retransmissions:
            w.writerow([_fmt(r.t), r.seq, r.length, _fmt(r.t_lost)])
    return samples, retrans


def plot_flow(flow: FlowTrace, png: Path) -> None:
    """RTT and forward queuing delay against send time, losses marked."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, (ax1, ax2) = plt.subplots(2, 1, sharex=True, figsize=(9, 5.5))
    # x: when the timed segment was sent, the same clock as the loss marks
    rtt = [(s.t_tx, s.rtt_ms) for s in flow.samples if s.rtt_ms is not None and s.t_tx]
    qd = [(s.t_tx, s.qdelay_ms) for s in flow.samples if s.qdelay_ms is not None and s.t_tx]
    if rtt:
        ax1.plot(*zip(*rtt), ".", ms=2, label="RTT (Karn)")
    if qd:
        ax2.plot(*zip(*qd), ".", ms=2, color="tab:green", label=f"OTT − min ({flow.source})")
    for ax in (ax1, ax2):
        for t in flow.loss_times():
            ax.axvline(t, color="tab:red", lw=0.6, alpha=0.6)
        ax.grid(alpha=0.3)
        if ax.get_lines():
            ax.legend(loc="upper right", fontsize=8)
    ax1.set_ylabel("RTT (ms)")
    clock = f", peer clock {flow.peer_clock_hz:g} Hz" if flow.peer_clock_hz else ""
    ax2.set_ylabel("queuing delay (ms)")
    ax2.set_xlabel("send time of the timed segment (s); red: send time of a lost segment")
    ax1.set_title(f"{flow.id}{clock}", fontsize=9)
    fig.tight_layout()
    fig.savefig(png, dpi=110)
    plt.close(fig)


def _stats(vals: Sequence[float]) -> Optional[Dict[str, float]]:
    if not vals:
        return None
    s = sorted(vals)
    return {"min": s[0], "p50": s[len(s) // 2], "p95": s[min(len(s) - 1, int(0.95 * len(s)))],
            "max": s[-1], "mean": statistics.fmean(s)}


def flow_summary(flow: FlowTrace) -> Dict[str, Any]:
    """The JSON summary of one flow."""
    return {
        "index": flow.index, "id": flow.id, "src": flow.src, "sport": flow.sport,
        "dst": flow.dst, "dport": flow.dport, "packets": flow.packets,
        "data_packets": flow.data_packets, "data_bytes": flow.data_bytes,
        "retransmitted_bytes": flow.retrans_bytes,
        "duration_s": flow.last_t - flow.first_t, "smss": flow.smss,
        "ott_source": flow.source, "peer_clock_hz": flow.peer_clock_hz,
        "peer_clock_est_hz": flow.peer_clock_est_hz,
        "samples": len(flow.samples),
        "rtt_samples": sum(s.rtt_ms is not None for s in flow.samples),
        "ott_samples": sum(s.ott_ms is not None for s in flow.samples),
        "rtt_ms": _stats([s.rtt_ms for s in flow.samples if s.rtt_ms is not None]),
        "qdelay_ms": _stats([s.qdelay_ms for s in flow.samples if s.qdelay_ms is not None]),
        "retransmissions": len(flow.retransmissions),
        "loss_times_s": flow.loss_times(),
    }


def read_summary(stats: ReadStats) -> Dict[str, Any]:
    """What reading the file found, for the JSON outputs."""
    return dict(stats.__dict__)


def write_outputs(flows: Sequence[FlowTrace], stats: ReadStats, out: Path,
                  plots: bool = True) -> Dict[str, Any]:
    """CSV, PNG per flow and ``summary.json``; returns the summary."""
    out.mkdir(parents=True, exist_ok=True)
    summary: Dict[str, Any] = {"file": stats.path, "read": read_summary(stats), "flows": []}
    for flow in flows:
        d = flow_summary(flow)
        samples, retrans = write_csv(flow, out)
        d["files"] = {"samples_csv": str(samples), "retrans_csv": str(retrans)}
        if plots:
            png = out / f"{flow.name}.png"
            plot_flow(flow, png)
            d["files"]["png"] = str(png)
        summary["flows"].append(d)
    (out / "summary.json").write_text(json.dumps(summary, indent=2) + "\n")
    return summary


def console() -> Any:
    """A rich console; wide when writing to a file or pipe (rich would assume 80 columns)."""
    from rich.console import Console

    con = Console()
    return con if con.is_terminal else Console(width=160)


def print_table(summary: Dict[str, Any]) -> None:
    """One line per flow (rich)."""
    from rich.table import Table

    tab = Table(title=f"synctcp trace {summary['file']}")
    for col in ("#", "flow", "bytes", "RTT ms p50/max", "qdelay ms p50/max", "OTT", "peer Hz",
                "retx"):
        tab.add_column(col, no_wrap=col == "flow")
    for f in summary["flows"]:
        r, q = f["rtt_ms"], f["qdelay_ms"]
        tab.add_row(str(f["index"]), f["id"], str(f["data_bytes"]),
                    f"{r['p50']:.2f}/{r['max']:.2f}" if r else "-",
                    f"{q['p50']:.2f}/{q['max']:.2f}" if q else "-",
                    f["ott_source"], f"{f['peer_clock_hz']:g}" if f["peer_clock_hz"] else "-",
                    str(f["retransmissions"]))
    console().print(tab)


def warn_read(stats: ReadStats) -> None:
    """Skipped frames on stderr, so that a silent drop never hides in a result."""
    notes = [f"{n} {k}" for k, n in (("truncated", stats.truncated),
                                      ("duplicate", stats.duplicates),
                                      ("fragment", stats.fragments)) if n]
    if stats.file_truncated:
        notes.append("file ends inside a record")
    if notes:
        print(f"synctcp: {stats.path}: skipped " + ", ".join(notes), file=sys.stderr)


# --- command line ------------------------------------------------------------------------------------

def cmd_trace(args: argparse.Namespace) -> int:
    """``synctcp trace``: exit 0, 1 if no flow matched, 2 if the file is unreadable."""
    try:
        flows, stats = trace_file(args.file, args.flow)
    except PcapError as exc:
        print(f"synctcp: {args.file}: {exc}", file=sys.stderr)
        return 2
    warn_read(stats)
    out = Path(args.out) if args.out else Path(Path(args.file).stem + "-trace")
    summary = write_outputs(flows, stats, out, plots=not args.no_plot)
    if args.json:
        print(json.dumps(summary, indent=2))
    else:
        print_table(summary)
        print(f"written to {out}/")
    return 0 if flows else 1


def add_parser(sub: Any) -> None:
    """Register ``synctcp trace`` on the CLI's subparsers."""
    s = sub.add_parser("trace", help="per-flow RTT, OTT and losses from a sender-side pcap",
                       description="Per-flow RTT, OTT and losses from a capture taken at the data "
                       "sender: a table, one CSV per flow, plots and summary.json "
                       "(docs/trace.md).",
                       epilog="Exit 0 done, 1 no flow matched, 2 unreadable file.")
    s.add_argument("file", help="pcap or pcapng, captured at the data sender")
    s.add_argument("--out", metavar="DIR", help="output directory (default: <file>-trace)")
    s.add_argument("--flow", metavar="FILTER",
                   help="#N (flow index), a port, or a substring of src:port>dst:port")
    s.add_argument("--json", action="store_true", help="print the JSON summary")
    s.add_argument("--no-plot", action="store_true", help="skip the PNG plots")
    s.set_defaults(func=cmd_trace)
