"""``synctcp owts``: the one-way-timestamp option of every packet in a capture.

    synctcp owts FILE [--flow FILTER] [--all] [--quiet] [--json] [--csv OUT.csv]
                 [--plot OUT.png] [--expect-fwd-ms X] [--expect-rev-ms Y]

Prints, per TCP segment that carries the OWTS option (or a malformed one;
``--all``: every segment): capture time, addresses, flags, seq/ack, payload
length, ``tsval_us``, ``ott_us`` (or ``none``) and marks for what is wrong
(owts.PROBLEMS).  Then statistics of ``ott_us`` per connection and
direction: n, min, median, p90, p99, max (ms), and with ``--expect-fwd-ms`` /
``--expect-rev-ms`` the error against the expected one-way delays (mean,
median, max |error|).  The *forward* path runs from the connection's data
sender (the endpoint that sent more payload; on a tie, the one that sent the
SYN) to the data receiver; its OTT is carried by the receiver's segments
(ACKs), since ``ott_us`` is always the OTT of the peer's last segment.

Exit codes: 0 option found, 1 TCP but no OWTS option (or nothing matches
``--flow``), 2 unreadable input (missing file, not a capture, no TCP
segment, an output that cannot be written).  docs/owts-decoder.md has the
details.
"""

from __future__ import annotations

import argparse
import csv
import json
import statistics
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Dict, List, Optional, Sequence, Tuple

from . import owts
from .pcap import PcapError, ReadStats, TcpPacket, read_tcp

Endpoint = Tuple[str, int]

_FLAG_CHARS = ((0x02, "S"), (0x01, "F"), (0x04, "R"), (0x08, "P"), (0x20, "U"), (0x40, "E"),
               (0x80, "W"), (0x10, "."))


def flag_str(flags: int) -> str:
    """tcpdump's flag letters: S F R P U E W, and '.' for ACK."""
    return "".join(c for bit, c in _FLAG_CHARS if flags & bit) or "none"


def ep_str(ep: Endpoint) -> str:
    addr, port = ep
    return f"[{addr}]:{port}" if ":" in addr else f"{addr}:{port}"


@dataclass
class Row:
    """One segment as the decoder reports it."""

    t: float                    #: s since the first frame
    epoch: Optional[float]      #: capture time, s since 1970 (None if the file has none)
    src: Endpoint
    dst: Endpoint
    flags: int
    seq: int
    ack: int
    length: int
    option: Optional[owts.Owts]
    count: int                  #: OWTS options in the segment
    problems: Tuple[str, ...]
    age_us: Optional[int]       #: capture time - tsval_us (mod 2^32, signed)

    @property
    def ott_usable(self) -> Optional[int]:
        """``ott_us`` if present and believable (not none, not absurd)."""
        o = self.option
        if o is None or o.ott_us is None or o.absurd():
            return None
        return o.ott_us

    def line(self) -> str:
        o = self.option
        if o is None:
            opt = "tsval_us=- ott_us=-" if not self.count else "tsval_us=? ott_us=?"
        else:
            opt = f"tsval_us={o.tsval_us} ott_us={'none' if o.ott_us is None else o.ott_us}"
        marks = ("  !" + ",".join(self.problems)) if self.problems else ""
        return (f"{self.t:12.6f} {ep_str(self.src)} > {ep_str(self.dst)} {flag_str(self.flags):<4} "
                f"seq={self.seq} ack={self.ack} len={self.length} {opt}{marks}")

    def csv_row(self) -> List[Any]:
        o = self.option
        return [f"{self.t:.9f}", "" if self.epoch is None else f"{self.epoch:.6f}",
                self.src[0], self.src[1], self.dst[0], self.dst[1], flag_str(self.flags),
                self.seq, self.ack, self.length,
                "" if o is None else o.tsval_us,
                "" if o is None else ("none" if o.ott_us is None else o.ott_us),
                "" if self.age_us is None else self.age_us, self.count, " ".join(self.problems)]


CSV_HEADER = ["t_s", "epoch_s", "src", "sport", "dst", "dport", "flags", "seq", "ack", "len",
              "tsval_us", "ott_us", "capture_minus_tsval_us", "owts_count", "problems"]


def to_row(p: TcpPacket, t0_epoch: Optional[float]) -> Row:
    epoch = None if t0_epoch is None else t0_epoch + p.t
    o = p.opts.owts
    problems = list(p.opts.owts_problems)
    age = None
    if o is not None and epoch is not None:
        age = owts.diff_us(owts.tsval_of(epoch), o.tsval_us)
        if abs(age) > owts.MAX_ABS_TSVAL_AGE_US:
            problems.append("absurd-tsval")
    return Row(p.t, epoch, (p.src, p.sport), (p.dst, p.dport), p.flags, p.seq, p.ack,
               p.payload_len, o, p.opts.owts_count, tuple(problems), age)


@dataclass
class Direction:
    """Segments from ``carrier`` to its peer, whose ``ott_us`` measure the path peer → carrier."""

    carrier: Endpoint
    peer: Endpoint
    segments: int = 0
    with_option: int = 0
    none: int = 0
    problems: Dict[str, int] = field(default_factory=dict)
    samples: List[Tuple[float, int]] = field(default_factory=list)   # (t, ott_us)

    def add(self, r: Row) -> None:
        self.segments += 1
        if r.option is not None or r.count:
            self.with_option += 1
        if r.option is not None and r.option.ott_us is None:
            self.none += 1
        for pr in r.problems:
            self.problems[pr] = self.problems.get(pr, 0) + 1
        v = r.ott_usable
        if v is not None:
            self.samples.append((r.t, v))


@dataclass
class Connection:
    a: Endpoint                 #: first endpoint seen
    b: Endpoint
    client: Optional[Endpoint] = None
    payload: Dict[Endpoint, int] = field(default_factory=dict)
    dirs: Dict[Endpoint, Direction] = field(default_factory=dict)   # by carrier

    @property
    def id(self) -> str:
        return f"{ep_str(self.a)}<>{ep_str(self.b)}"

    def data_sender(self) -> Endpoint:
        pa, pb = self.payload.get(self.a, 0), self.payload.get(self.b, 0)
        if pa != pb:
            return self.a if pa > pb else self.b
        return self.client or self.a


def connection_key(r: Row) -> Tuple[Endpoint, Endpoint]:
    return (r.src, r.dst) if r.src <= r.dst else (r.dst, r.src)


def group(rows: Sequence[Row]) -> List[Connection]:
    """Connections by 4-tuple, in order of first appearance."""
    conns: Dict[Tuple[Endpoint, Endpoint], Connection] = {}
    for r in rows:
        c = conns.setdefault(connection_key(r), Connection(r.src, r.dst))
        if r.flags & 0x12 == 0x02 and c.client is None:
            c.client = r.src
        c.payload[r.src] = c.payload.get(r.src, 0) + r.length
        d = c.dirs.setdefault(r.src, Direction(r.src, r.dst))
        d.add(r)
    return list(conns.values())


def error_stats(values_us: Sequence[int], expect_ms: float) -> Dict[str, float]:
    errs = [v / 1000.0 - expect_ms for v in values_us]
    absd = [abs(e) for e in errs]
    return {"expect_ms": expect_ms, "mean": statistics.fmean(errs),
            "mean_abs": statistics.fmean(absd), "median_abs": statistics.median(absd),
            "max_abs": max(absd)}


def summarize(rows: Sequence[Row], stats: ReadStats, expect_fwd_ms: Optional[float] = None,
              expect_rev_ms: Optional[float] = None) -> Dict[str, Any]:
    """The JSON summary: the file, counts, and per connection and direction the OTT statistics."""
    conns = group(rows)
    out: Dict[str, Any] = {
        "file": stats.path, "format": stats.format, "link_types": stats.link_types,
        "frames": stats.frames, "tcp": len(rows),
        "with_option": sum(1 for r in rows if r.option is not None or r.count),
        "malformed": sum(1 for r in rows if r.problems),
        "problems": _count_problems(rows), "connections": []}
    for c in conns:
        sender = c.data_sender()
        cd: Dict[str, Any] = {"id": c.id, "client": ep_str(c.client) if c.client else None,
                              "data_sender": ep_str(sender), "directions": []}
        for d in c.dirs.values():
            role = "fwd" if d.peer == sender else "rev"     # measured path: peer -> carrier
            vals = [v for _, v in d.samples]
            dd: Dict[str, Any] = {
                "carried_by": f"{ep_str(d.carrier)}>{ep_str(d.peer)}",
                "path": f"{ep_str(d.peer)}>{ep_str(d.carrier)}", "role": role,
                "segments": d.segments, "with_option": d.with_option, "none": d.none,
                "problems": dict(sorted(d.problems.items())), "ott_ms": owts.stats_ms(vals),
                "error_ms": None}
            expect = expect_fwd_ms if role == "fwd" else expect_rev_ms
            if expect is not None and vals:
                dd["error_ms"] = error_stats(vals, expect)
            cd["directions"].append(dd)
        out["connections"].append(cd)
    return out


def _count_problems(rows: Sequence[Row]) -> Dict[str, int]:
    n: Dict[str, int] = {}
    for r in rows:
        for p in r.problems:
            n[p] = n.get(p, 0) + 1
    return dict(sorted(n.items()))


def matches(r: Row, flt: Optional[str]) -> bool:
    """``--flow``: a port number, or a substring of ``src:port>dst:port`` in either direction."""
    if not flt:
        return True
    if flt.isdigit():
        return int(flt) in (r.src[1], r.dst[1])
    return flt in f"{ep_str(r.src)}>{ep_str(r.dst)}" or flt in f"{ep_str(r.dst)}>{ep_str(r.src)}"


def decode_file(path: str, flow: Optional[str] = None) -> Tuple[List[Row], ReadStats]:
    """All TCP segments of a capture as rows; raises PcapError, also for a capture without TCP."""
    packets, stats = read_tcp(path)
    if not packets:
        raise PcapError(f"no TCP segment in {stats.frames} frames")
    rows = [to_row(p, stats.t0_epoch) for p in packets]
    return [r for r in rows if matches(r, flow)], stats


def print_stats(summary: Dict[str, Any]) -> None:
    for c in summary["connections"]:
        print(f"connection {c['id']}  data sender {c['data_sender']}")
        for d in c["directions"]:
            s = d["ott_ms"]
            head = (f"  {d['role']} path {d['path']} (carried by {d['carried_by']}): "
                    f"{d['segments']} segments, {d['with_option']} with option, {d['none']} none")
            if d["problems"]:
                head += ", " + ", ".join(f"{n} {k}" for k, n in d["problems"].items())
            print(head)
            if s:
                print(f"    ott ms: n={s['n']} min={s['min']:.3f} median={s['median']:.3f} "
                      f"p90={s['p90']:.3f} p99={s['p99']:.3f} max={s['max']:.3f}")
            e = d["error_ms"]
            if e:
                print(f"    error vs {e['expect_ms']:g} ms: mean={e['mean']:+.3f} "
                      f"mean|e|={e['mean_abs']:.3f} median|e|={e['median_abs']:.3f} "
                      f"max|e|={e['max_abs']:.3f}")


def write_csv(rows: Sequence[Row], path: Path) -> None:
    with open(path, "w", newline="") as fh:
        w = csv.writer(fh)
        w.writerow(CSV_HEADER)
        for r in rows:
            w.writerow(r.csv_row())


def plot(rows: Sequence[Row], summary: Dict[str, Any], path: Path,
         expect: Dict[str, Optional[float]]) -> None:
    """ott_us over capture time, one series per connection and measured path (PNG, Agg)."""
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(10, 4.5))
    conns = group(rows)
    drawn = 0
    for c, cs in zip(conns, summary["connections"]):
        roles = {d["carried_by"]: d["role"] for d in cs["directions"]}
        for d in c.dirs.values():
            if not d.samples:
                continue
            role = roles[f"{ep_str(d.carrier)}>{ep_str(d.peer)}"]
            ts, vs = zip(*d.samples)
            ax.plot(ts, [v / 1000.0 for v in vs], ".", ms=3,
                    label=f"{role} {ep_str(d.peer)}>{ep_str(d.carrier)}")
            drawn += 1
    for role, v in expect.items():
        if v is not None:
            ax.axhline(v, ls="--", lw=0.8, color="k" if role == "fwd" else "gray",
                       label=f"expected {role} {v:g} ms")
    ax.set_xlabel("capture time (s)")
    ax.set_ylabel("OTT from the OWTS option (ms)")
    ax.set_title(f"synctcp owts {Path(summary['file']).name}")
    if drawn:
        ax.legend(loc="best", fontsize="small")
    ax.grid(alpha=0.3)
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)


def cmd_owts(args: argparse.Namespace) -> int:
    """``synctcp owts``: exit 0, 1 if no option (or no match), 2 on unreadable input."""
    try:
        rows, stats = decode_file(args.file, args.flow)
    except PcapError as exc:
        print(f"synctcp: {args.file}: {exc}", file=sys.stderr)
        return 2
    summary = summarize(rows, stats, args.expect_fwd_ms, args.expect_rev_ms)
    shown = rows if args.all else [r for r in rows if r.option is not None or r.count or r.problems]
    try:
        if args.csv:
            write_csv(shown, Path(args.csv))
        if args.plot:
            plot(rows, summary, Path(args.plot),
                 {"fwd": args.expect_fwd_ms, "rev": args.expect_rev_ms})
    except OSError as exc:
        print(f"synctcp: cannot write {exc.filename or ''}: {exc.strerror or exc}", file=sys.stderr)
        return 2
    if args.json:
        print(json.dumps(summary, indent=2))
    else:
        if not args.quiet:
            for r in shown:
                print(r.line())
        print_stats(summary)
    if not rows:
        print(f"synctcp: {args.file}: no TCP segment matches --flow {args.flow}", file=sys.stderr)
        return 1
    if not summary["with_option"]:
        print(f"synctcp: {args.file}: no OWTS option in {len(rows)} TCP segments", file=sys.stderr)
        return 1
    return 0


def add_parser(sub: Any) -> None:
    """Register ``synctcp owts`` on the CLI's subparsers."""
    s = sub.add_parser("owts", help="decode the one-way-timestamp option in a pcap",
                       description="The one-way-timestamp option of every TCP segment in a "
                       "capture, then ott_us statistics per connection and direction "
                       "(docs/owts-decoder.md).",
                       epilog="Exit 0 option found, 1 TCP but no OWTS option (or nothing matches "
                       "--flow), 2 unreadable input or unwritable output.")
    s.add_argument("file", help="pcap or pcapng (Ethernet, SLL, SLL2, raw IP; IPv4/IPv6)")
    s.add_argument("--flow", metavar="FILTER",
                   help="a port, or a substring of src:port>dst:port")
    s.add_argument("--all", action="store_true", help="list segments without the option too")
    s.add_argument("--quiet", "-q", action="store_true", help="statistics only, no packet list")
    s.add_argument("--json", action="store_true", help="print the JSON summary only")
    s.add_argument("--csv", metavar="OUT.csv", help="write the listed segments as CSV")
    s.add_argument("--plot", metavar="OUT.png", help="plot ott_us over time per direction")
    s.add_argument("--expect-fwd-ms", type=float, metavar="X",
                   help="expected forward one-way delay: error statistics")
    s.add_argument("--expect-rev-ms", type=float, metavar="Y",
                   help="expected reverse one-way delay: error statistics")
    s.set_defaults(func=cmd_owts)
