"""The runner's side of ``flowgen.c``: its config file, its command, its result.

``flowgen`` runs every bulk TCP and CBR UDP flow of a case, both ends, in
one process (one epoll loop): under User-Mode Linux the wall cost is per
process and per system call, so one process beats two iperf3 per flow.

Times in a result are seconds from the go time (``go_monotonic``,
CLOCK_MONOTONIC); each flow's intervals ``(start, end, bytes)`` lie on one
grid of ``interval_s`` from go, shared by all flows, except that a flow's
first interval begins when its receiver accepted the connection (UDP: at
the flow's start) and its last one ends when the receiver saw the end.
A bulk flow's ``retrans`` are ``(t, total)``: the sender's
``tcpi_total_retrans`` at each grid point while it sent, so that
retransmissions are counted over the same interval as the bytes
(:func:`window_retrans`).
"""

from __future__ import annotations

import json
import math
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Dict, List, Optional, Sequence, Tuple

Interval = Tuple[float, float, int]
#: (grid point, the sender's total retransmissions then)
RetransSample = Tuple[float, int]


class FlowgenError(RuntimeError):
    """A flowgen config or result that cannot be used; the message says why."""


@dataclass
class FlowSpec:
    """One line of a flowgen config."""

    id: str
    kind: str                   # bulk | cbr
    src_ns: str
    dst_ns: str
    src_addr: str
    dst_addr: str
    port: int
    cport: int
    cc: str                     # bulk: the sender's algorithm; cbr: ignored
    start_s: float
    seconds: float
    rate_bps: float = 0.0       # cbr
    pkt_bytes: int = 0          # cbr

    def line(self) -> str:
        for name in ("id", "src_ns", "dst_ns", "src_addr", "dst_addr", "cc"):
            value = getattr(self, name)
            if not value or any(c.isspace() or c == "#" for c in value):
                raise FlowgenError(f"flow {self.id!r}: {name} {value!r} is empty or has "
                                   f"a blank or '#'")
        if self.kind not in ("bulk", "cbr"):
            raise FlowgenError(f"flow {self.id}: kind {self.kind!r} is neither bulk nor cbr")
        for name in ("port", "cport"):
            if not 1 <= getattr(self, name) <= 65535:
                raise FlowgenError(f"flow {self.id}: {name} {getattr(self, name)} not in 1..65535")
        if not (0 <= self.start_s <= 86400 and 0 < self.seconds <= 86400):
            raise FlowgenError(f"flow {self.id}: start {self.start_s:g} s or length "
                               f"{self.seconds:g} s out of range")
        words = [self.id, self.kind, self.src_ns, self.dst_ns, self.src_addr, self.dst_addr,
                 str(self.port), str(self.cport), self.cc if self.kind == "bulk" else "-",
                 f"{self.start_s:.6f}", f"{self.seconds:.6f}"]
        if self.kind == "cbr":
            if not (1000 <= self.rate_bps <= 1e10 and 24 <= self.pkt_bytes <= 65000):
                raise FlowgenError(f"flow {self.id}: cbr rate {self.rate_bps:g} bit/s or "
                                   f"packet {self.pkt_bytes} bytes out of range")
            words += [f"{self.rate_bps:.0f}", str(self.pkt_bytes)]
        return "flow " + " ".join(words)


def config_text(specs: Sequence[FlowSpec]) -> str:
    """The config file flowgen reads (``flowgen -c``)."""
    if not specs:
        raise FlowgenError("no flows")
    ids = [s.id for s in specs]
    if len(set(ids)) != len(ids):
        raise FlowgenError("flow ids are not unique")
    head = ("# flowgen: one line per flow\n"
            "# flow ID bulk SRC_NS DST_NS SRC_ADDR DST_ADDR PORT CPORT CC START_S SECONDS\n"
            "# flow ID cbr  SRC_NS DST_NS SRC_ADDR DST_ADDR PORT CPORT - START_S SECONDS "
            "RATE_BPS PKT_BYTES\n")
    return head + "".join(s.line() + "\n" for s in specs)


def limit_for(specs: Sequence[FlowSpec], slack_s: float = 120.0) -> float:
    """flowgen's hard limit (``-l``): the last flow's end plus ``slack_s`` to drain."""
    return math.ceil(max(s.start_s + s.seconds for s in specs) + slack_s)


def command(binary: str, config: Path, out: Path, interval_s: float = 1.0,
            limit_s: float = 3600.0, ready_file: Optional[Path] = None,
            go_file: Optional[Path] = None, window_bytes: int = 0) -> List[str]:
    """flowgen's argv; ``window_bytes``: every TCP receiver's window clamp (``-W``,
    the scenario's ``window_segs``), 0 for none."""
    argv = [binary, "-c", str(config), "-o", str(out), "-i", f"{interval_s:g}",
            "-l", f"{limit_s:g}"]
    if window_bytes:
        argv += ["-W", str(window_bytes)]
    if ready_file:
        argv += ["--ready-file", str(ready_file)]
    if go_file:
        argv += ["--go-file", str(go_file)]
    return argv


@dataclass
class FlowResult:
    id: str
    kind: str
    port: int
    cport: int
    start_s: float
    seconds: float
    started: Optional[float]
    stopped: Optional[float]
    recv_end: Optional[float]
    bytes_received: int
    intervals: List[Interval]
    error: Optional[str]
    cc: Optional[str] = None
    cc_requested: Optional[str] = None
    retransmits: Optional[int] = None
    tcp_info: Optional[Dict[str, Any]] = None
    lost_pct: Optional[float] = None
    packets_sent: Optional[int] = None
    packets_received: Optional[int] = None
    retrans: List[RetransSample] = field(default_factory=list)


@dataclass
class FlowgenResult:
    go_monotonic: float
    interval_s: float
    stopped: Optional[str]
    flows: Dict[str, FlowResult] = field(default_factory=dict)


def _num(d: Dict[str, Any], key: str, kind: type = float, optional: bool = False) -> Any:
    v = d.get(key)
    if v is None and optional:
        return None
    if isinstance(v, bool) or not isinstance(v, (int, float)) or (kind is int and v != int(v)):
        raise FlowgenError(f"flowgen result: {key} of {d.get('id', '?')} is {v!r}")
    return kind(v)


def parse_result(text: str) -> FlowgenResult:
    """A flowgen result document; FlowgenError (one line) if it is not one."""
    try:
        doc = json.loads(text)
    except json.JSONDecodeError as exc:
        raise FlowgenError(f"flowgen result is not JSON: {exc}") from None
    if not isinstance(doc, dict) or doc.get("flowgen") != 1 or not isinstance(doc.get("flows"), list):
        raise FlowgenError("flowgen result: not a flowgen version 1 document")
    res = FlowgenResult(_num(doc, "go_monotonic"), _num(doc, "interval_s"), doc.get("stopped"))
    for d in doc["flows"]:
        if not isinstance(d, dict) or not isinstance(d.get("id"), str):
            raise FlowgenError("flowgen result: a flow without an id")
        ivals = d.get("intervals")
        if not isinstance(ivals, list) or not all(
                isinstance(iv, list) and len(iv) == 3 for iv in ivals):
            raise FlowgenError(f"flowgen result: intervals of {d['id']} are not [start, end, bytes]")
        try:
            intervals = [(float(a), float(b), int(n)) for a, b, n in ivals]
        except (TypeError, ValueError):
            raise FlowgenError(f"flowgen result: intervals of {d['id']} are not numbers") from None
        rs = d.get("retrans", [])
        if not isinstance(rs, list) or not all(
                isinstance(r, list) and len(r) == 2 and not isinstance(r[1], bool)
                and isinstance(r[0], (int, float)) and isinstance(r[1], int) for r in rs):
            raise FlowgenError(f"flowgen result: retrans of {d['id']} are not [time, count]")
        f = FlowResult(
            id=d["id"], kind=str(d.get("kind")), port=_num(d, "port", int),
            cport=_num(d, "cport", int), start_s=_num(d, "start_s"), seconds=_num(d, "seconds"),
            started=_num(d, "started", optional=True), stopped=_num(d, "stopped", optional=True),
            recv_end=_num(d, "recv_end", optional=True),
            bytes_received=_num(d, "bytes_received", int), intervals=intervals,
            error=d.get("error"), cc=d.get("cc"), cc_requested=d.get("cc_requested"),
            retransmits=_num(d, "retransmits", int, optional=True),
            tcp_info=d.get("tcp_info"), lost_pct=_num(d, "lost_pct", optional=True),
            packets_sent=_num(d, "packets_sent", int, optional=True),
            packets_received=_num(d, "packets_received", int, optional=True),
            retrans=[(float(t), int(n)) for t, n in rs])
        if f.kind not in ("bulk", "cbr"):
            raise FlowgenError(f"flowgen result: kind of {f.id} is {f.kind!r}")
        res.flows[f.id] = f
    return res


def load_result(path: Path) -> FlowgenResult:
    try:
        text = path.read_text()
    except OSError as exc:
        raise FlowgenError(f"no flowgen result {path}: {exc.strerror}") from None
    return parse_result(text)


def window_bytes(intervals: Sequence[Interval], start: float, end: float,
                 eps: float = 1e-6) -> Tuple[int, float]:
    """(bytes, seconds) of the intervals that lie wholly inside [start, end]."""
    kept = [iv for iv in intervals if iv[0] >= start - eps and iv[1] <= end + eps]
    return sum(iv[2] for iv in kept), sum(iv[1] - iv[0] for iv in kept)


def total_at(samples: Sequence[RetransSample], t: float, eps: float = 1e-6) -> Optional[int]:
    """The count of the last sample at or before ``t`` (None: none is)."""
    before = [n for at, n in samples if at <= t + eps]
    return before[-1] if before else None


def window_retrans(samples: Sequence[RetransSample], start: float, end: float,
                   eps: float = 1e-6) -> Optional[int]:
    """Retransmissions in (start, end]: the sender's total at ``end`` less that at ``start``.

    None when no sample is at or before ``end`` (unknown); a sender first
    sampled after ``start`` had retransmitted nothing before it started.
    """
    last = total_at(samples, end, eps)
    if last is None:
        return None
    return last - (total_at(samples, start, eps) or 0)


def gaps(intervals: Sequence[Interval], eps: float = 1e-6) -> List[Tuple[float, float]]:
    """Where one interval does not begin at the end of the one before."""
    return [(a[1], b[0]) for a, b in zip(intervals, intervals[1:]) if abs(b[0] - a[1]) > eps]
