"""TCP segments out of a pcap or pcapng file.

Reads classic pcap (µs and ns, either byte order) and pcapng (any number
of sections and interfaces, each with its own link type and timestamp
resolution).  Link layers: Ethernet (with 802.1Q/802.1ad tags), Linux
cooked v1 and v2 (``tcpdump -i any`` writes SLL2), raw IP, BSD loopback.
IPv4 and IPv6 (extension headers skipped).  dpkt decodes the IP and TCP
headers and the pcapng blocks; the file framing is walked here so that a
corrupt record is reported instead of swallowing the rest of the file.

Robustness rules:

- A frame whose IP or TCP header (options included) was not captured is
  skipped and counted as ``truncated``.  The *payload* need not be
  captured: its length comes from the IP header, so ``tcpdump -s 128``
  captures are fine.
- A file that ends in the middle of its last record (tcpdump killed) keeps
  the records before it; the partial one counts as ``truncated`` and
  ``file_truncated`` is set.
- Anything that is not a capture file, an unknown link type, or a record
  with an impossible length raises :class:`PcapError`.
- The same segment captured on two interfaces (``-i any`` on a host that
  routes or bridges it) is kept once, from the first interface, and
  counted as ``duplicates``.
"""

from __future__ import annotations

import functools
import struct
from dataclasses import dataclass, field
from pathlib import Path
from typing import BinaryIO, Dict, Iterator, List, Optional, Tuple, Union

import dpkt

from . import owts as _owts
from .owts import Owts

TCP_FIN, TCP_SYN, TCP_RST, TCP_PSH, TCP_ACK = 0x01, 0x02, 0x04, 0x08, 0x10

LINKTYPE_NULL = 0
LINKTYPE_ETHERNET = 1
LINKTYPE_RAW = 101
LINKTYPE_LOOP = 108
LINKTYPE_LINUX_SLL = 113
LINKTYPE_IPV4 = 228
LINKTYPE_IPV6 = 229
LINKTYPE_LINUX_SLL2 = 276
#: DLT_RAW as some BSDs write it into files.
_RAW_ALIASES = (12, 14)

LINKTYPE_NAMES = {LINKTYPE_NULL: "null", LINKTYPE_ETHERNET: "ethernet", LINKTYPE_RAW: "raw",
                  LINKTYPE_LOOP: "loop", LINKTYPE_LINUX_SLL: "sll", LINKTYPE_IPV4: "ipv4",
                  LINKTYPE_IPV6: "ipv6", LINKTYPE_LINUX_SLL2: "sll2", 12: "raw", 14: "raw"}

ETH_IPV4, ETH_IPV6, ETH_VLAN, ETH_QINQ = 0x0800, 0x86DD, 0x8100, 0x88A8
#: A record longer than this is corrupt (libpcap's own limit is 256 KiB; BIG TCP GSO frames
#: captured on the sending host can reach 512 KiB).
MAX_RECORD = 1 << 20
#: Two captures of one segment on different interfaces are at most this far apart (s).
DUP_WINDOW_S = 0.01

TCP_OPT_EOL, TCP_OPT_NOP, TCP_OPT_MSS, TCP_OPT_WSCALE = 0, 1, 2, 3
TCP_OPT_SACK_PERM, TCP_OPT_SACK, TCP_OPT_TS = 4, 5, 8


class PcapError(Exception):
    """The file cannot be read as a capture."""


@dataclass(frozen=True)
class TcpOptions:
    """The TCP options the trace tools use."""

    mss: Optional[int] = None
    wscale: Optional[int] = None
    sack_permitted: bool = False
    ts: Optional[Tuple[int, int]] = None                 #: (TSval, TSecr), RFC 7323
    sack: Tuple[Tuple[int, int], ...] = ()               #: SACK blocks (left, right), RFC 2018
    owts: Optional[Owts] = None                          #: one-way timestamps (owts.py)
    owts_count: int = 0                                  #: OWTS options seen, good or bad
    owts_problems: Tuple[str, ...] = ()                  #: owts.PROBLEMS keys found
    malformed: bool = False                              #: the option list did not parse


@dataclass(frozen=True)
class TcpPacket:
    """One TCP segment: capture time (s from the first frame), addresses, header fields."""

    t: float
    src: str
    sport: int
    dst: str
    dport: int
    seq: int
    ack: int
    flags: int
    win: int
    payload_len: int
    opts: TcpOptions
    ipid: Optional[int] = None
    iface: Optional[int] = None

    @property
    def is_syn(self) -> bool:
        return bool(self.flags & TCP_SYN)

    @property
    def has_ack(self) -> bool:
        return bool(self.flags & TCP_ACK)

    @property
    def is_fin(self) -> bool:
        return bool(self.flags & TCP_FIN)

    @property
    def is_rst(self) -> bool:
        return bool(self.flags & TCP_RST)


@dataclass
class ReadStats:
    """What reading a file found besides TCP segments."""

    path: str = ""
    format: str = ""
    link_types: List[str] = field(default_factory=list)
    t0_epoch: Optional[float] = None
    frames: int = 0
    tcp: int = 0
    non_tcp: int = 0
    fragments: int = 0
    truncated: int = 0
    duplicates: int = 0
    malformed_options: int = 0
    file_truncated: bool = False


# --- TCP options ---------------------------------------------------------------------------

def parse_tcp_options(buf: bytes) -> TcpOptions:
    """Decode a TCP option list (RFC 9293 §3.1 framing).

    Known options with a wrong length (an OWTS option included), and a
    length byte that runs past the list, mark the result ``malformed``;
    what parsed before stays.  The OWTS option is read by
    :func:`owts.scan_options`, which also reports repeated options and
    absurd values in ``owts_problems``.
    """
    kw: Dict[str, object] = {}
    sack: List[Tuple[int, int]] = []
    i, n = 0, len(buf)
    malformed = False
    while i < n:
        kind = buf[i]
        if kind == TCP_OPT_EOL:
            break
        if kind == TCP_OPT_NOP:
            i += 1
            continue
        if i + 1 >= n or buf[i + 1] < 2 or i + buf[i + 1] > n:
            malformed = True
            break
        body = buf[i + 2:i + buf[i + 1]]
        i += buf[i + 1]
        if not _parse_one_option(kind, body, kw, sack):
            malformed = True
    if _owts.KIND in buf:            # cheap pre-filter: the byte may also be in a timestamp
        scan = _owts.scan_options(buf)
        if scan.count:
            kw["owts"] = scan.option
            kw["owts_count"] = scan.count
            kw["owts_problems"] = scan.problems
            malformed = malformed or "bad-length" in scan.problems
    return TcpOptions(sack=tuple(sack), malformed=malformed, **kw)  # type: ignore[arg-type]


def _parse_one_option(kind: int, body: bytes, kw: Dict[str, object],
                      sack: List[Tuple[int, int]]) -> bool:
    """Store one option into ``kw``/``sack``; False if its length is wrong for its kind."""
    if kind == TCP_OPT_MSS:
        if len(body) != 2:
            return False
        kw["mss"] = struct.unpack("!H", body)[0]
    elif kind == TCP_OPT_WSCALE:
        if len(body) != 1:
            return False
        kw["wscale"] = body[0]
    elif kind == TCP_OPT_SACK_PERM:
        kw["sack_permitted"] = True
    elif kind == TCP_OPT_SACK:
        if len(body) % 8:
            return False
        sack.extend(struct.unpack("!II", body[j:j + 8]) for j in range(0, len(body), 8))
    elif kind == TCP_OPT_TS:
        if len(body) != 8:
            return False
        kw["ts"] = struct.unpack("!II", body)
    return True


# --- link layer ----------------------------------------------------------------------------

def _l3_from_link(linktype: int, frame: bytes) -> Optional[Tuple[int, bytes, Optional[int]]]:
    """(ethertype, network-layer bytes, interface index or None) of a frame.

    None if the frame is not IP; raises ``dpkt.NeedData`` if the link
    header itself is cut short.
    """
    if linktype == LINKTYPE_ETHERNET:
        if len(frame) < 14:
            raise dpkt.NeedData("ethernet")
        off, etype = 14, struct.unpack_from("!H", frame, 12)[0]
        while etype in (ETH_VLAN, ETH_QINQ):
            if len(frame) < off + 4:
                raise dpkt.NeedData("vlan")
            etype = struct.unpack_from("!H", frame, off + 2)[0]
            off += 4
        return etype, frame[off:], None
    if linktype == LINKTYPE_LINUX_SLL:
        sll = dpkt.sll.SLL(frame)
        return sll.ethtype, frame[dpkt.sll.SLL.__hdr_len__:], None
    if linktype == LINKTYPE_LINUX_SLL2:
        sll2 = dpkt.sll2.SLL2(frame)
        return sll2.ethtype, frame[dpkt.sll2.SLL2.__hdr_len__:], sll2.intindex
    if linktype in (LINKTYPE_RAW, LINKTYPE_IPV4, LINKTYPE_IPV6) + _RAW_ALIASES:
        if not frame:
            raise dpkt.NeedData("raw")
        version = frame[0] >> 4
        return {4: ETH_IPV4, 6: ETH_IPV6}.get(version, 0), frame, None
    if linktype in (LINKTYPE_NULL, LINKTYPE_LOOP):
        if len(frame) < 4:
            raise dpkt.NeedData("loopback")
        fam_be, fam_le = struct.unpack_from("!I", frame)[0], struct.unpack_from("<I", frame)[0]
        fams = (fam_be,) if linktype == LINKTYPE_LOOP else (fam_be, fam_le)
        etype = ETH_IPV4 if 2 in fams else ETH_IPV6 if {10, 24, 28, 30} & set(fams) else 0
        return etype, frame[4:], None
    raise PcapError(f"unsupported link type {linktype}")


# --- network and transport layer ------------------------------------------------------------

class SkipFrame(Exception):
    """A frame that is not a (whole-header) TCP segment: ``kind`` is the ReadStats counter."""

    def __init__(self, kind: str) -> None:
        super().__init__(kind)
        self.kind = kind


def _ip_to_tcp(etype: int, l3: bytes) -> Tuple[str, str, bytes, int, Optional[int]]:
    """(src, dst, TCP bytes, TCP segment length on the wire, IP ID) of an IP packet."""
    if etype == ETH_IPV4:
        ip = dpkt.ip.IP(l3)
        hl = ip.hl * 4
        if ip.v != 4 or hl < 20:
            raise SkipFrame("non_tcp")
        if len(l3) < hl:
            raise SkipFrame("truncated")
        if ip.p != dpkt.ip.IP_PROTO_TCP:
            raise SkipFrame("non_tcp")
        if ip.offset or ip.mf:
            raise SkipFrame("fragments")
        wire = ip.len - hl if ip.len else len(l3) - hl     # len 0: TSO/GSO frame
        return _addr(ip.src), _addr(ip.dst), l3[hl:hl + wire], wire, ip.id
    if etype == ETH_IPV6:
        ip6 = dpkt.ip6.IP6(l3)
        if ip6.v != 6:
            raise SkipFrame("non_tcp")
        if getattr(ip6, "p", None) != dpkt.ip.IP_PROTO_TCP:
            raise SkipFrame("fragments" if dpkt.ip.IP_PROTO_FRAGMENT in ip6.extension_hdrs
                        else "non_tcp")
        ext = sum(h.length for h in ip6.all_extension_headers)
        if len(l3) < 40 + ext:
            raise SkipFrame("truncated")
        wire = ip6.plen - ext if ip6.plen else len(l3) - 40 - ext
        return _addr(ip6.src), _addr(ip6.dst), l3[40 + ext:40 + ext + wire], wire, None
    raise SkipFrame("non_tcp")


@functools.lru_cache(maxsize=4096)
def _addr(raw: bytes) -> str:
    return dpkt.utils.inet_to_str(raw)


def decode_frame(linktype: int, frame: bytes, t: float) -> TcpPacket:
    """One captured frame as a :class:`TcpPacket`; raises ``SkipFrame`` for anything else."""
    return decode_tcp_frame(linktype, frame, t)[0]


def decode_tcp_frame(linktype: int, frame: bytes, t: float) -> Tuple[TcpPacket, bytes]:
    """:func:`decode_frame`, and the TCP segment's captured bytes (header, options, payload)."""
    try:
        l3 = _l3_from_link(linktype, frame)
        if l3 is None:
            raise SkipFrame("non_tcp")
        etype, payload, iface = l3
        src, dst, seg, wire, ipid = _ip_to_tcp(etype, payload)
        if len(seg) < 20:
            raise SkipFrame("truncated")
        tcp = dpkt.tcp.TCP(seg)
    except (dpkt.Error, struct.error, IndexError, ValueError) as exc:
        raise SkipFrame("truncated") from exc
    hl = tcp.off * 4
    if hl < 20 or len(seg) < hl or wire < hl:
        raise SkipFrame("truncated")          # header not captured, or IP length too short: corrupt
    return TcpPacket(t=t, src=src, sport=tcp.sport, dst=dst, dport=tcp.dport, seq=tcp.seq,
                     ack=tcp.ack, flags=tcp.flags, win=tcp.win, payload_len=wire - hl,
                     opts=parse_tcp_options(bytes(seg[20:hl])), ipid=ipid, iface=iface), seg


# --- file framing ------------------------------------------------------------------------------

Record = Tuple[int, int, bytes, Optional[int]]   # (time ns since epoch, linktype, frame, iface)

_PCAP_MAGICS = {
    dpkt.pcap.TCPDUMP_MAGIC: (">", 1000), dpkt.pcap.TCPDUMP_MAGIC_NANO: (">", 1),
    dpkt.pcap.PMUDPCT_MAGIC: ("<", 1000), dpkt.pcap.PMUDPCT_MAGIC_NANO: ("<", 1),
}


class _Truncated(Exception):
    """The file ends inside a record."""


def _read_exact(fh: BinaryIO, n: int) -> bytes:
    buf = fh.read(n)
    if len(buf) != n:
        raise _Truncated()
    return buf


def _pcap_records(fh: BinaryIO, head: bytes) -> Iterator[Record]:
    """Records of a classic pcap file (``head`` = its first 4 bytes)."""
    order, ns_per_unit = _PCAP_MAGICS[struct.unpack(">I", head)[0]]
    rest = fh.read(20)
    if len(rest) != 20:
        raise PcapError("truncated pcap file header")
    linktype = struct.unpack(order + "IHHiIII", head + rest)[-1] & 0x0FFFFFFF
    while True:
        rec = fh.read(16)
        if not rec:
            return
        if len(rec) != 16:
            raise _Truncated()
        sec, frac, caplen, _ = struct.unpack(order + "IIII", rec)
        if caplen > MAX_RECORD:
            raise PcapError(f"corrupt record: captured length {caplen}")
        yield sec * 1_000_000_000 + frac * ns_per_unit, linktype, _read_exact(fh, caplen), None


@dataclass
class _Iface:
    linktype: int
    ticks_per_s: int
    tsoffset_s: int

    def to_ns(self, ticks: int) -> int:
        return ticks * 1_000_000_000 // self.ticks_per_s + self.tsoffset_s * 1_000_000_000


def _idb_iface(idb: dpkt.pcapng.InterfaceDescriptionBlock, order: str) -> _Iface:
    """Link type, timestamp resolution and offset of one pcapng interface."""
    ticks, offset = 1_000_000, 0
    for opt in idb.opts:
        if opt.code == dpkt.pcapng.PCAPNG_OPT_IF_TSRESOL and len(opt.data) >= 1:
            v = opt.data[0]
            ticks = 2 ** (v & 0x7F) if v & 0x80 else 10 ** (v & 0x7F)
        elif opt.code == dpkt.pcapng.PCAPNG_OPT_IF_TSOFFSET and len(opt.data) == 8:
            offset = struct.unpack(order + "q", opt.data)[0]
    return _Iface(idb.linktype, ticks, offset)


def _pcapng_records(fh: BinaryIO, head: bytes) -> Iterator[Record]:
    """Records of a pcapng file: EPBs and (obsolete) PBs, per-interface link type and clock."""
    order = "<"
    ifaces: List[_Iface] = []
    block_head: Optional[bytes] = head
    while True:
        if block_head is None:
            block_head = fh.read(4)
            if not block_head:
                return
            if len(block_head) != 4:
                raise _Truncated()
        if struct.unpack(">I", block_head)[0] == dpkt.pcapng.PCAPNG_BT_SHB:
            rest = _read_exact(fh, 8)
            bom = rest[4:8]
            if bom == b"\x1a\x2b\x3c\x4d":
                order = ">"
            elif bom == b"\x4d\x3c\x2b\x1a":
                order = "<"
            else:
                raise PcapError("pcapng: bad byte-order magic")
            blen = struct.unpack(order + "I", rest[:4])[0]
            if blen < 28 or blen % 4 or blen > MAX_RECORD:
                raise PcapError(f"pcapng: corrupt section header length {blen}")
            _read_exact(fh, blen - 12)
            ifaces = []
            block_head = None
            continue
        btype = struct.unpack(order + "I", block_head)[0]
        blen = struct.unpack(order + "I", _read_exact(fh, 4))[0]
        if blen < 12 or blen % 4 or blen > MAX_RECORD:
            raise PcapError(f"pcapng: corrupt block length {blen}")
        buf = block_head + struct.pack(order + "I", blen) + _read_exact(fh, blen - 8)
        block_head = None
        yield from _pcapng_block(btype, buf, order, ifaces)


def _pcapng_block(btype: int, buf: bytes, order: str, ifaces: List[_Iface]) -> Iterator[Record]:
    """Decode one pcapng block: an IDB adds an interface, a packet block yields a record."""
    le = order == "<"
    ng = dpkt.pcapng
    try:
        if btype == ng.PCAPNG_BT_IDB:
            idb = ng.InterfaceDescriptionBlockLE(buf) if le else ng.InterfaceDescriptionBlock(buf)
            ifaces.append(_idb_iface(idb, order))
        elif btype in (ng.PCAPNG_BT_EPB, ng.PCAPNG_BT_PB):
            cls = {(ng.PCAPNG_BT_EPB, True): ng.EnhancedPacketBlockLE,
                   (ng.PCAPNG_BT_EPB, False): ng.EnhancedPacketBlock,
                   (ng.PCAPNG_BT_PB, True): ng.PacketBlockLE,
                   (ng.PCAPNG_BT_PB, False): ng.PacketBlock}[(btype, le)]
            blk = cls(buf)
            iface_id = blk.iface_id if btype == ng.PCAPNG_BT_EPB else blk.iface_id & 0xFFFF
            if iface_id >= len(ifaces):
                raise PcapError(f"pcapng: packet on undeclared interface {iface_id}")
            iface = ifaces[iface_id]
            yield (iface.to_ns((blk.ts_high << 32) | blk.ts_low), iface.linktype,
                   bytes(blk.pkt_data), iface_id)
    except (dpkt.NeedData, dpkt.UnpackError) as exc:
        raise PcapError(f"pcapng: corrupt block: {exc}") from exc


def iter_records(fh: BinaryIO, stats: ReadStats) -> Iterator[Record]:
    """Records of a pcap or pcapng file, by its magic number."""
    head = fh.read(4)
    if len(head) < 4:
        raise PcapError("not a capture file: too short")
    magic = struct.unpack(">I", head)[0]
    if magic in _PCAP_MAGICS:
        stats.format = "pcap"
        return _pcap_records(fh, head)
    if magic == dpkt.pcapng.PCAPNG_BT_SHB:
        stats.format = "pcapng"
        return _pcapng_records(fh, head)
    raise PcapError(f"not a pcap or pcapng file (magic 0x{magic:08x})")


# --- the whole file ------------------------------------------------------------------------------

def _dup_key(p: TcpPacket) -> Tuple[object, ...]:
    return (p.src, p.sport, p.dst, p.dport, p.seq, p.ack, p.flags, p.payload_len, p.ipid,
            p.opts.ts)


def read_tcp(path: Union[str, Path]) -> Tuple[List[TcpPacket], ReadStats]:
    """All TCP segments of a capture file, in capture order, with what was skipped.

    Times are seconds since the first frame (``stats.t0_epoch``), kept
    exact to the nanosecond through integer arithmetic.
    """
    stats = ReadStats(path=str(path))
    packets: List[TcpPacket] = []
    last_seen: Dict[Tuple[object, ...], Tuple[float, Optional[int]]] = {}
    t0_ns: Optional[int] = None
    try:
        with open(path, "rb") as fh:
            records = iter_records(fh, stats)
            try:
                for ts_ns, linktype, frame, iface in records:
                    name = LINKTYPE_NAMES.get(linktype, str(linktype))
                    if name not in stats.link_types:
                        stats.link_types.append(name)
                    if t0_ns is None:
                        t0_ns = ts_ns
                        stats.t0_epoch = ts_ns / 1e9
                    stats.frames += 1
                    try:
                        pkt = decode_frame(linktype, frame, (ts_ns - t0_ns) / 1e9)
                    except SkipFrame as skip:
                        setattr(stats, skip.kind, getattr(stats, skip.kind) + 1)
                        continue
                    if iface is not None and pkt.iface is None:
                        pkt = _with_iface(pkt, iface)
                    if _is_duplicate(pkt, last_seen):
                        stats.duplicates += 1
                        continue
                    stats.malformed_options += pkt.opts.malformed
                    packets.append(pkt)
            except _Truncated:
                stats.file_truncated = True
                stats.truncated += 1
    except OSError as exc:
        raise PcapError(f"cannot read {path}: {exc.strerror or exc}") from exc
    stats.tcp = len(packets)
    packets.sort(key=lambda p: p.t)   # stable: multi-interface pcapng may interleave
    return packets, stats


def _with_iface(p: TcpPacket, iface: int) -> TcpPacket:
    return TcpPacket(**{**p.__dict__, "iface": iface})


def _is_duplicate(p: TcpPacket, last_seen: Dict[Tuple[object, ...], Tuple[float, Optional[int]]]
                  ) -> bool:
    """The same segment seen moments ago on another interface (``-i any``, routers, bridges)."""
    key = _dup_key(p)
    prev = last_seen.get(key)
    last_seen[key] = (p.t, p.iface)
    if prev is None or prev[1] is None or p.iface is None or prev[1] == p.iface:
        return False
    if p.t - prev[0] <= DUP_WINDOW_S:
        last_seen[key] = prev
        return True
    return False
