"""Synthetic sender-side captures of one TCP flow, with known ground truth.

A small event simulation: the sender paces new segments at a fixed
interval (open loop: the capture, not congestion control, is under test),
the forward path delays each segment by ``fwd(t)`` and drops the chosen
ones, the receiver ACKs every second in-order segment (a 40 ms delayed-ACK
timer for a lone one), immediately on out-of-order and duplicate data, and
follows RFC 7323 §4.3 for TS.Recent.  Three duplicate ACKs trigger a
retransmission.  ACKs reach the sender after ``rev(t)``.  Frames are
written as dpkt builds them, header only (the IP length still counts the
payload, as with ``tcpdump -s 128``).
"""

from __future__ import annotations

import heapq
import math
import struct
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable, Dict, List, Optional, Set, Tuple

import dpkt

from synctcp.owts import Owts, diff_us, tsval_of

A_IP, B_IP = "10.0.0.1", "10.0.0.2"
A_PORT, B_PORT = 40000, 5001
MSS = 1460
SMSS = MSS - 12                       # payload per segment with timestamps on
ISN_A = (1 << 32) - 3000              # sequence numbers wrap early in the flow
ISN_B = 777
T0 = 1_700_000_000.0                  # capture epoch of t = 0 (write_capture's default)


def owts_at(t_send: float, ott_us: Optional[int]) -> Owts:
    """The OWTS option of a segment sent at sim time ``t_send`` (µs clocks, exact)."""
    return Owts(tsval_of(T0 + t_send), ott_us)


def ott_us(t_send: float, t_recv: float) -> int:
    """The OTT a receiver computes: its µs receive stamp minus the µs send stamp, mod 2^32."""
    return diff_us(tsval_of(T0 + t_recv), tsval_of(T0 + t_send))


@dataclass
class Frame:
    t: float
    from_sender: bool
    seq: int
    ack: int
    flags: int
    payload: int
    ts: Optional[Tuple[int, int]] = None
    owts: Optional[Owts] = None
    sack: Tuple[Tuple[int, int], ...] = ()
    mss: Optional[int] = None
    raw_opts: Optional[bytes] = None      #: written as the whole option list instead (malformed cases)


@dataclass
class Truth:
    """What the simulation knows and the capture should reveal."""

    sends: List[Tuple[float, int, bool]] = field(default_factory=list)   # (t, seg, retx)
    retrans: List[Tuple[float, int, float]] = field(default_factory=list)  # (t, rel seq, t_lost)
    fwd_q_ms: Dict[int, float] = field(default_factory=dict)  # seg -> forward delay of 1st tx
    acks: List[Tuple[float, int, Optional[int]]] = field(default_factory=list)  # (t, rel ack, seg)
    first_tx: Dict[int, float] = field(default_factory=dict)


@dataclass
class FlowSpec:
    """Parameters of one simulated flow (times in s, delays as functions of send time)."""

    n_segs: int = 1500
    interval: float = 0.001
    t_start: float = 0.05
    fwd: Callable[[float], float] = lambda t: 0.020
    rev: Callable[[int, float], float] = lambda k, t: 0.020
    peer_hz: int = 1000
    own_hz: int = 1000
    peer_ts_start: int = (1 << 32) - 400     # the peer's TSval wraps early too
    own_ts_start: int = 5_000_000
    lost: Set[int] = field(default_factory=set)
    spurious: Dict[int, float] = field(default_factory=dict)   # seg -> delay after its send
    timestamps: bool = True
    owts: bool = False


class _Sim:
    def __init__(self, spec: FlowSpec) -> None:
        self.s = spec
        self.frames: List[Frame] = []
        self.truth = Truth()
        self.ev: List[Tuple[float, int, str, tuple]] = []
        self.n = 0
        # receiver
        self.rcv_nxt = 0
        self.ooo: Set[int] = set()
        self.pending = 0
        self.last_ack_sent = 0
        self.ts_recent = 0
        self.delack_gen = 0
        # sender
        self.dupacks = 0
        self.snd_una = 0
        self.retx_done: Set[int] = set()
        self.last_tx: Dict[int, float] = {}

    def push(self, t: float, kind: str, *args: object) -> None:
        self.n += 1
        heapq.heappush(self.ev, (t, self.n, kind, args))

    def own_ts(self, t: float) -> int:
        return (self.s.own_ts_start + math.floor(t * self.s.own_hz)) % (1 << 32)

    def peer_ts(self, t: float) -> int:
        return (self.s.peer_ts_start + math.floor(t * self.s.peer_hz)) % (1 << 32)

    def run(self) -> Tuple[List[Frame], Truth]:
        s = self.s
        d0 = s.fwd(0.0) + s.rev(0, 0.0)
        ts = self.s.timestamps
        ow = s.owts
        self.frames.append(Frame(0.0, True, ISN_A, 0, 0x02, 0, (self.own_ts(0), 0) if ts else None,
                                 owts_at(0.0, None) if ow else None, mss=MSS))
        self.frames.append(Frame(d0, False, ISN_B, ISN_A + 1, 0x12, 0,
                                 (self.peer_ts(s.fwd(0.0)), self.own_ts(0)) if ts else None,
                                 owts_at(s.fwd(0.0), None) if ow else None, mss=MSS))
        if ow:
            self.rev_ott = ott_us(s.fwd(0.0), d0)
        self.frames.append(Frame(d0, True, ISN_A + 1, ISN_B + 1, 0x10, 0,
                                 (self.own_ts(d0), self.peer_ts(s.fwd(0.0))) if ts else None,
                                 owts_at(d0, self.rev_ott) if ow else None))
        self.last_rx = (d0, d0 + s.fwd(d0))
        self.ts_recent = self.own_ts(0)
        for i in range(s.n_segs):
            self.push(s.t_start + i * s.interval, "send", i, False)
        for i, after in s.spurious.items():
            self.push(s.t_start + i * s.interval + after, "send", i, True)
        while self.ev:
            t, _, kind, args = heapq.heappop(self.ev)
            getattr(self, "on_" + kind)(t, *args)
        self.frames.sort(key=lambda f: f.t)
        return self.frames, self.truth

    # sender
    def on_send(self, t: float, i: int, retx: bool) -> None:
        tsv = self.own_ts(t)
        seq = (ISN_A + 1 + i * SMSS) % (1 << 32)
        self.frames.append(Frame(t, True, seq, ISN_B + 1, 0x18, SMSS,
                                 (tsv, self.ts_recent_peer) if self.s.timestamps else None,
                                 owts_at(t, self.rev_ott) if self.s.owts else None))
        self.truth.sends.append((t, i, retx))
        if retx:
            self.truth.retrans.append((t, i * SMSS, self.last_tx[i]))
        else:
            self.truth.first_tx[i] = t
        self.last_tx[i] = t
        fwd = self.s.fwd(t)
        if not retx:
            self.truth.fwd_q_ms[i] = fwd * 1000
        if i in self.s.lost and not retx:
            return
        self.push(t + fwd, "arrive", i, tsv, t)

    ts_recent_peer = 0
    rev_ott: Optional[int] = None                 # sender: OTT of the last ACK (µs)
    last_rx: Tuple[float, float] = (0.0, 0.0)     # receiver: (send, receive) of the last segment

    def on_ackarrive(self, t: float, frame: Frame, rel_ack: int, seg: Optional[int]) -> None:
        if frame.owts:
            self.rev_ott = diff_us(tsval_of(T0 + t), frame.owts.tsval_us)
        frame.t = t
        self.frames.append(frame)
        self.truth.acks.append((t, rel_ack, seg))
        if frame.ts:
            self.ts_recent_peer = frame.ts[0]
        if rel_ack > self.snd_una:
            self.snd_una, self.dupacks = rel_ack, 0
            return
        if rel_ack < self.snd_una:
            return                                    # a reordered old ACK, not a duplicate
        self.dupacks += 1
        hole = rel_ack // SMSS
        if self.dupacks == 3 and hole not in self.retx_done:
            self.retx_done.add(hole)
            self.push(t + 1e-5, "send", hole, True)

    # receiver
    def on_arrive(self, t: float, i: int, tsv: int, t_tx: float) -> None:
        start = i * SMSS
        self.last_rx = (t_tx, t)
        if self.s.timestamps and start <= self.last_ack_sent:
            self.ts_recent = tsv                      # RFC 7323 §4.3
        if start < self.rcv_nxt:
            self.send_ack(t, i, t_tx)                 # duplicate: ACK at once (D-SACK)
            return
        if start > self.rcv_nxt:
            self.ooo.add(i)
            self.send_ack(t, i, t_tx)                 # out of order: duplicate ACK at once
            return
        filled = bool(self.ooo)
        self.rcv_nxt += SMSS
        while self.rcv_nxt // SMSS in self.ooo:
            self.ooo.discard(self.rcv_nxt // SMSS)
            self.rcv_nxt += SMSS
        self.pending += 1
        if filled or self.pending >= 2:
            self.send_ack(t, i, t_tx)
        else:
            self.delack_gen += 1
            self.push(t + 0.040, "delack", self.delack_gen, i, t_tx, t)

    def on_delack(self, t: float, gen: int, i: int, t_tx: float, t_rx: float) -> None:
        if gen == self.delack_gen and self.pending:
            self.send_ack(t, i, t_tx, t_rx)

    def send_ack(self, t: float, i: int, t_tx: float, t_rx: Optional[float] = None) -> None:
        self.pending = 0
        self.delack_gen += 1
        self.last_ack_sent = self.rcv_nxt
        sack = tuple(((ISN_A + 1 + a * SMSS) % (1 << 32), (ISN_A + 1 + b * SMSS) % (1 << 32))
                     for a, b in _runs(self.ooo))[:3]
        owts = owts_at(t, ott_us(*self.last_rx)) if self.s.owts else None
        if owts and self.s.timestamps and len(sack) >= 2:
            owts = None                               # the option yields to SACK (owts.py)
        frame = Frame(0.0, False, ISN_B + 1, (ISN_A + 1 + self.rcv_nxt) % (1 << 32), 0x10, 0,
                      (self.peer_ts(t), self.ts_recent) if self.s.timestamps else None, owts,
                      sack)
        seg = self.rcv_nxt // SMSS - 1 if self.rcv_nxt else None
        self.push(t + self.s.rev(len(self.truth.acks), t), "ackarrive", frame, self.rcv_nxt, seg)


def _runs(segs: Set[int]) -> List[Tuple[int, int]]:
    """Contiguous runs [a, b) of segment indices, highest first (as SACK blocks)."""
    runs: List[Tuple[int, int]] = []
    for j in sorted(segs):
        if runs and runs[-1][1] == j:
            runs[-1] = (runs[-1][0], j + 1)
        else:
            runs.append((j, j + 1))
    return runs[::-1]


def simulate(spec: FlowSpec) -> Tuple[List[Frame], Truth]:
    """Frames of the sender-side capture, in capture order, and the ground truth."""
    return _Sim(spec).run()


# --- writing ----------------------------------------------------------------------------------

def tcp_options(f: Frame) -> bytes:
    if f.raw_opts is not None:
        return f.raw_opts + b"\x00" * (-len(f.raw_opts) % 4)
    opts = b""
    if f.mss:
        opts += struct.pack("!BBH", 2, 4, f.mss)
    if f.ts:
        opts += b"\x01\x01" + struct.pack("!BBII", 8, 10, *f.ts)
    if f.owts:
        opts += f.owts.pack()
    if f.sack:
        opts += b"\x01\x01" + struct.pack("!BB", 5, 2 + 8 * len(f.sack)) + b"".join(
            struct.pack("!II", *blk) for blk in f.sack)
    return opts + b"\x00" * (-len(opts) % 4)


def ip_packet(f: Frame, v6: bool = False) -> bytes:
    """Header-only IP/TCP bytes whose IP length counts the payload."""
    src, dst = (A_IP, B_IP) if f.from_sender else (B_IP, A_IP)
    sport, dport = (A_PORT, B_PORT) if f.from_sender else (B_PORT, A_PORT)
    opts = tcp_options(f)
    tcp = dpkt.tcp.TCP(sport=sport, dport=dport, seq=f.seq, ack=f.ack, flags=f.flags, win=5000,
                       off=5 + len(opts) // 4, opts=opts, sum=1)
    if v6:
        s6 = bytes(12) + bytes(map(int, src.split(".")))
        d6 = bytes(12) + bytes(map(int, dst.split(".")))
        ip6 = dpkt.ip6.IP6(src=b"\xfd" + s6[1:], dst=b"\xfd" + d6[1:], nxt=6, hlim=64,
                           plen=len(tcp) + f.payload, data=tcp)
        return bytes(ip6)
    ip = dpkt.ip.IP(src=bytes(map(int, src.split("."))), dst=bytes(map(int, dst.split("."))), p=6, ttl=64,
                    len=20 + len(tcp) + f.payload, sum=1, data=tcp)
    return bytes(ip)


def link_frame(l3: bytes, link: str, v6: bool = False) -> bytes:
    etype = 0x86DD if v6 else 0x0800
    if link == "ethernet":
        return bytes(dpkt.ethernet.Ethernet(src=b"\x02" * 6, dst=b"\x04" * 6, type=etype)) + l3
    if link == "sll2":
        return bytes(dpkt.sll2.SLL2(ethtype=etype, intindex=1, hrd=1, type=4, hlen=6,
                                    hdr=b"\x02" * 6 + b"\0\0")) + l3
    if link == "sll":
        return bytes(dpkt.sll.SLL(type=4, hrd=1, hlen=6, hdr=b"\x02" * 6 + b"\0\0",
                                  ethtype=etype)) + l3
    if link == "raw":
        return l3
    raise ValueError(link)


LINKTYPES = {"ethernet": 1, "sll": 113, "sll2": 276, "raw": 101}


def write_capture(frames: List[Frame], path: Path, link: str = "ethernet", fmt: str = "pcap",
                  v6: bool = False, t0: float = 1_700_000_000.0) -> Path:
    """Write the frames as pcap (ns) or pcapng."""
    with open(path, "wb") as fh:
        if fmt == "pcapng":
            w = dpkt.pcapng.Writer(fh, snaplen=65535, linktype=LINKTYPES[link])
        else:
            w = dpkt.pcap.Writer(fh, snaplen=65535, linktype=LINKTYPES[link], nano=True)
        for f in frames:
            w.writepkt(link_frame(ip_packet(f, v6), link, v6), ts=t0 + f.t)
    return path
