"""A fake TCP peer (scapy, AF_PACKET) that puts chosen option bytes on the wire.

The kernel's own TCP cannot send a malformed OWTS option, so the tests of
the ``tcp_option/`` patch talk to the server kernel through this peer: it
builds every frame itself (scapy: Ether/IP/TCP, checksums included) and
sends and receives on an AF_PACKET socket bound to one interface.

Network setup (what tests/kernel/test_owts_peer.py does)::

    netns SRV: veth-s 10.253.0.1/24  <---->  netns PEER: veth-p, up, NO IP address
               kernel listener                         FakePeer(src_ip=10.253.0.2)

The peer's interface has no IP address, so the peer namespace's kernel
never answers (no RST, no ICMP) for the fake address.  The peer answers
ARP for ``src_ip`` itself whenever it is receiving (every wait below), so
no static neighbour entry is needed on the server side; a test that keeps
a connection idle for long (past the neighbour's reachable time) should
still call :meth:`FakePeer.pump` now and then or install one
(``ip neigh replace 10.253.0.2 lladdr MAC dev veth-s nud permanent``).
Offloads (``ethtool -K dev tso off gso off gro off``) should be off on both
veth ends so that the server's segments reach the peer one by one.

API::

    peer = FakePeer(iface, src_ip, src_mac, dst_ip, dst_mac, dport, netns=None)
    synack = peer.connect(owts=True)            # SYN with MSS, SACK-perm, TS, WS (+ OWTS)
    acks = peer.send(b"data", options=[...])    # -> server segments until our data is ACKed
    peer.close()                                # FIN (rst=True: RST); peer.sock closed
    peer.received                               # every server segment so far (Segment)

- ``connect(owts, timestamps=True, sack=True, wscale=7, mss=1460,
  syn_options=None, ack_options=None, syn_data=b"")`` returns the SYN-ACK (:class:`Segment`)
  and sends the handshake ACK.  ``syn_options`` (raw bytes) replaces the SYN's whole
  option list; ``syn_data`` rides on the SYN (Fast Open: put a cookie,
  :func:`tfo_option`, in ``syn_options``).  ``peer.owts_negotiated`` tells whether the
  SYN-ACK carried the option too.
- ``accept(owts, extra_options=b"", on_syn=None)``: the passive side, to play a
  server towards a kernel client.  Construct the peer with ``dport=0`` (learnt from
  the SYN) and ``sport`` = the port to listen on; returns the client's SYN after
  answering it with a SYN-ACK.  With ``owts`` the SYN-ACK carries the option whether
  or not the SYN offered it (a server that answers an offer never made).
- ``send(data, options=None, flags="PA", timeout=3.0)``: one segment of
  ``data`` at ``snd_nxt``.  Its option list is RFC 7323 TS (when
  negotiated, 12 bytes, always first) followed by ``options``, each raw
  bytes, concatenated as given and zero-padded to a multiple of 4.
  ``options=None`` means: a well-formed OWTS option if it was negotiated
  (its ``ott_us`` is this peer's measurement of the server's last option),
  else nothing.  Returns every segment received from the server until one
  ACKs all our data, or until ``timeout`` (the caller checks).
- ``pump(timeout)``: receive for a while (ARP answered, data ACKed; data
  out of order is not kept and gets a duplicate ACK).
- ``ts_hz``: the rate of the peer's TS clock (default 1 kHz, Linux's), to
  play a receiver whose TSvals run at another rate.
- Option builders (bytes, no network): :func:`ts_option`,
  :func:`owts_option`, :func:`tfo_option` (RFC 7413 cookie or cookie request; read one
  with :func:`find_option`), and the malformed cases :data:`MALFORMED` (name →
  builder): ``bad-length-10``, ``bad-length-14``, ``truncated``,
  ``repeated``, ``absurd-tsval-plus-1h``, ``absurd-tsval-minus-1h``,
  ``absurd-ott``.  The two connection-level cases, "option on the SYN
  only" and "option on a connection that never negotiated it", are
  ``connect(owts=True, ack_options=[])`` then ``send(data, options=[])``, and
  ``connect(owts=False)`` then ``send(data, options=[owts_option()])``.
- :func:`build_frame` makes one Ethernet frame (bytes) from header fields
  and raw options, for tests without a network.

Every receive has a timeout and every loop is bounded (by a deadline or a
count).  Data from the server is accepted in order and ACKed; out of order
server data is not buffered (the tests' servers only read).
"""

from __future__ import annotations

import ctypes
import os
import random
import socket
import struct
import time
from dataclasses import dataclass
from typing import Callable, Dict, Iterable, List, Optional, Sequence, Tuple

from . import owts
from .pcap import LINKTYPE_ETHERNET, SkipFrame, TcpPacket, decode_tcp_frame

ETH_P_ALL, ETH_P_IP, ETH_P_ARP = 0x0003, 0x0800, 0x0806
PACKET_OUTGOING = 4
CLONE_NEWNET = 0x40000000
FIN, SYN, RST, PSH, ACK = 0x01, 0x02, 0x04, 0x08, 0x10
TCPOPT_FASTOPEN = 34
_FLAG_BITS = {"F": FIN, "S": SYN, "R": RST, "P": PSH, "A": ACK}
MOD = 1 << 32
MTU = 1500


class PeerError(RuntimeError):
    """The fake peer could not do what was asked (no SYN-ACK, bad arguments...)."""


# --- option builders (pure bytes) --------------------------------------------------------------

def ts_option(tsval: int, tsecr: int) -> bytes:
    """NOP, NOP, RFC 7323 timestamps: 12 bytes."""
    return b"\x01\x01\x08\x0a" + struct.pack("!II", tsval % MOD, tsecr % MOD)


def tfo_option(cookie: bytes = b"") -> bytes:
    """A Fast Open option (kind 34, RFC 7413): ``cookie``, or a cookie request (empty)."""
    if len(cookie) > 16:
        raise ValueError(f"a Fast Open cookie has at most 16 bytes, not {len(cookie)}")
    return bytes((TCPOPT_FASTOPEN, 2 + len(cookie))) + cookie


def find_option(options: bytes, kind: int) -> Optional[bytes]:
    """The body (after kind and length) of the first option ``kind`` in a raw
    option list; None without one, or when the list does not parse that far."""
    i = 0
    for _ in range(len(options)):             # bounded: every step moves i forward
        if i >= len(options) or options[i] == 0:
            return None
        if options[i] == 1:
            i += 1
            continue
        if i + 1 >= len(options) or options[i + 1] < 2 or i + options[i + 1] > len(options):
            return None
        if options[i] == kind:
            return options[i + 2:i + options[i + 1]]
        i += options[i + 1]
    return None


def now_tsval() -> int:
    """``tsval_us`` of this moment (CLOCK_REALTIME µs mod 2^32)."""
    return owts.tsval_of(time.time())


def owts_option(ott_us: Optional[int] = None, tsval_us: Optional[int] = None) -> bytes:
    """A well-formed 12-byte OWTS option (tsval: now)."""
    return owts.encode(now_tsval() if tsval_us is None else tsval_us, ott_us)


def opt_bad_length(length: int) -> bytes:
    """Our ExID with length byte ``length`` (and that many bytes), NOP-padded in front."""
    if not 4 <= length <= 36:
        raise ValueError("length must be 4..36")
    body = struct.pack("!HI", owts.EXID, now_tsval()) + bytes(max(0, length - 6))
    opt = bytes((owts.KIND, length)) + body[:length - 2]
    return b"\x01" * (-len(opt) % 4) + opt


def opt_truncated() -> bytes:
    """Two NOPs and the first 6 bytes of an OWTS option whose length byte says 12.

    Must be the LAST option of the segment: its length then runs 6 bytes
    past the end of the TCP header (the list is 8 bytes, a multiple of 4).
    """
    return b"\x01\x01" + owts_option()[:6]


def opt_repeated() -> bytes:
    """Two well-formed OWTS options (24 bytes)."""
    return owts_option(1000) + owts_option(2000)


def opt_absurd_tsval(offset_s: float) -> bytes:
    """A well-formed option whose tsval_us is ``offset_s`` away from now.

    The field wraps every 2^32 µs (71.6 min) and differences are read as
    signed 32-bit, so ±1 h (3.6e9 µs > 2^31) looks like ∓11.6 min to the
    receiver: absurd either way.
    """
    return owts_option(None, owts.tsval_of(time.time() + offset_s))


def opt_absurd_ott() -> bytes:
    """A well-formed option with ott_us = 0x7fffffff (35.8 minutes)."""
    return owts.encode_raw(now_tsval(), 0x7FFFFFFF)


MALFORMED: Dict[str, Callable[[], bytes]] = {
    "bad-length-10": lambda: opt_bad_length(10),
    "bad-length-14": lambda: opt_bad_length(14),
    "truncated": opt_truncated,
    "repeated": opt_repeated,
    "absurd-tsval-plus-1h": lambda: opt_absurd_tsval(3600),
    "absurd-tsval-minus-1h": lambda: opt_absurd_tsval(-3600),
    "absurd-ott": opt_absurd_ott,
}


def syn_options(mss: Optional[int] = 1460, sack: bool = True, ts: Optional[Tuple[int, int]] = None,
                wscale: Optional[int] = 7, owts_opt: Optional[bytes] = None) -> bytes:
    """Linux's SYN option order (MSS, SACK-perm, TS, NOP, WS), then OWTS; padded."""
    out = b""
    if mss is not None:
        out += struct.pack("!BBH", 2, 4, mss)
    if sack and ts is not None:
        out += b"\x04\x02\x08\x0a" + struct.pack("!II", *ts)
    elif ts is not None:
        out += ts_option(*ts)
    elif sack:
        out += b"\x01\x01\x04\x02"
    if wscale is not None:
        out += b"\x01\x03\x03" + bytes((wscale,))
    if owts_opt:
        out += owts_opt
    return pad4(out)


def pad4(opts: bytes) -> bytes:
    """Zero (EOL)-padded to a multiple of 4; at most 40 bytes."""
    out = opts + b"\x00" * (-len(opts) % 4)
    if len(out) > 40:
        raise ValueError(f"{len(out)} bytes of TCP options: more than 40")
    return out


def flags_of(spec: str) -> int:
    """"PA" → PSH|ACK (letters F S R P A)."""
    try:
        return sum(_FLAG_BITS[c] for c in set(spec))
    except KeyError as exc:
        raise ValueError(f"unknown TCP flag {exc.args[0]!r} in {spec!r}") from None


# --- frames ------------------------------------------------------------------------------------

def mac_bytes(mac: str) -> bytes:
    b = bytes(int(x, 16) for x in mac.split(":"))
    if len(b) != 6:
        raise ValueError(f"bad MAC address {mac!r}")
    return b


def build_frame(src_mac: str, dst_mac: str, src_ip: str, dst_ip: str, sport: int, dport: int,
                seq: int, ack: int, flags: int, window: int, options: bytes = b"",
                payload: bytes = b"", ip_id: int = 0) -> bytes:
    """One Ethernet/IPv4/TCP frame; ``options`` are written verbatim (length multiple of 4)."""
    from scapy.layers.inet import IP, TCP
    from scapy.layers.l2 import Ether
    from scapy.packet import Raw

    if len(options) % 4 or len(options) > 40:
        raise ValueError(f"TCP options must be a multiple of 4 up to 40 bytes, not {len(options)}")
    tcp = TCP(sport=sport, dport=dport, seq=seq % MOD, ack=ack % MOD, flags=flags,
              window=window, dataofs=5 + len(options) // 4, options=[])
    pkt = (Ether(src=src_mac, dst=dst_mac) / IP(src=src_ip, dst=dst_ip, id=ip_id, flags="DF", ttl=64)
           / tcp / Raw(options + payload))
    return bytes(pkt)


def arp_reply(my_mac: str, my_ip: str, to_mac: str, to_ip: str) -> bytes:
    from scapy.layers.l2 import ARP, Ether

    return bytes(Ether(src=my_mac, dst=to_mac) / ARP(op=2, hwsrc=my_mac, psrc=my_ip,
                                                      hwdst=to_mac, pdst=to_ip))


@dataclass(frozen=True)
class Segment(TcpPacket):
    """A TCP segment received from the server: pcap's :class:`TcpPacket` (``t`` is
    ``time.time()`` at reception) with its raw option list and payload."""

    options: bytes = b""        #: raw option list
    payload: bytes = b""

    def has(self, flag: int) -> bool:
        return bool(self.flags & flag)


def parse_frame(frame: bytes, t: float = 0.0) -> Optional[Segment]:
    """An Ethernet/IP/TCP frame as a :class:`Segment`; None for anything else."""
    try:
        pkt, tcp = decode_tcp_frame(LINKTYPE_ETHERNET, frame, t)
    except SkipFrame:
        return None
    hl = (tcp[12] >> 4) * 4
    return Segment(**vars(pkt), options=bytes(tcp[20:hl]),
                   payload=bytes(tcp[hl:hl + pkt.payload_len]))


def _seq_leq(a: int, b: int) -> bool:
    return (b - a) % MOD < 1 << 31


# --- namespaces --------------------------------------------------------------------------------

def open_packet_socket(iface: str, netns: Optional[str] = None) -> socket.socket:
    """An AF_PACKET socket on ``iface`` (in network namespace ``netns``, /run/netns/NAME)."""
    if netns is None:
        return _bind(iface)
    libc = ctypes.CDLL(None, use_errno=True)
    home = os.open("/proc/self/ns/net", os.O_RDONLY)
    try:
        try:
            target = os.open(f"/run/netns/{netns}", os.O_RDONLY)
        except FileNotFoundError:
            raise PeerError(f"no network namespace {netns}") from None
        try:
            if libc.setns(target, CLONE_NEWNET) != 0:
                raise PeerError(f"setns({netns}): {os.strerror(ctypes.get_errno())}")
            try:
                return _bind(iface)
            finally:
                if libc.setns(home, CLONE_NEWNET) != 0:
                    raise PeerError("cannot return to the original network namespace")
        finally:
            os.close(target)
    finally:
        os.close(home)


def _bind(iface: str) -> socket.socket:
    s = socket.socket(socket.AF_PACKET, socket.SOCK_RAW, socket.htons(ETH_P_ALL))
    try:
        s.bind((iface, 0))
    except OSError as exc:
        s.close()
        raise PeerError(f"cannot bind a packet socket to {iface}: {exc}") from exc
    return s


# --- the peer ----------------------------------------------------------------------------------

class FakePeer:
    """A user-space TCP client that speaks to a kernel server (module docstring)."""

    MAX_FRAMES_PER_WAIT = 10_000     #: bound on frames handled in one wait

    def __init__(self, iface: str, src_ip: str, src_mac: str, dst_ip: str, dst_mac: str,
                 dport: int, sport: Optional[int] = None, netns: Optional[str] = None,
                 sock: Optional[socket.socket] = None, ts_hz: int = 1000) -> None:
        if ts_hz <= 0:
            raise ValueError(f"ts_hz must be positive, not {ts_hz}")
        #: the rate of our RFC 7323 TS clock (ticks per second): 1 kHz as Linux's,
        #: or any other to play a peer whose clock runs at an unusual rate
        self.ts_hz = ts_hz
        self.iface, self.src_ip, self.src_mac = iface, src_ip, src_mac
        self.dst_ip, self.dst_mac, self.dport = dst_ip, dst_mac, dport
        mac_bytes(src_mac), mac_bytes(dst_mac)
        self.sport = sport or random.randint(20000, 60000)
        self.sock = sock if sock is not None else open_packet_socket(iface, netns)
        self.iss = random.getrandbits(32)
        self.snd_nxt = self.snd_una = self.iss
        self.rcv_nxt = 0
        self.irs: Optional[int] = None
        self.ts_ok = False
        self.ts_recent = 0
        self._ts_base = random.getrandbits(32)
        self._t0 = time.monotonic()
        self.owts_offered = False
        self.owts_negotiated = False
        self.last_owts_ott: Optional[int] = None   #: our OTT of the server's last OWTS option
        self.server_mss: Optional[int] = None
        self.server_wscale: Optional[int] = None
        self.received: List[Segment] = []
        self.arp_replies = 0
        # scapy's first import takes seconds (tens under TCG): paid here, not
        # while a kernel waits for our ARP reply or SYN-ACK
        import scapy.layers.inet  # noqa: F401
        import scapy.layers.l2  # noqa: F401
        self.fin_received = False
        self._ip_id = random.getrandbits(16)

    # -- low level
    def tsval(self) -> int:
        """Our RFC 7323 TSval: a clock of ``ts_hz`` (1 kHz) with a random base."""
        return (self._ts_base + int((time.monotonic() - self._t0) * self.ts_hz)) % MOD

    def _frame(self, flags: int, options: bytes, payload: bytes = b"",
               seq: Optional[int] = None) -> bytes:
        self._ip_id = (self._ip_id + 1) & 0xFFFF
        return build_frame(self.src_mac, self.dst_mac, self.src_ip, self.dst_ip, self.sport,
                           self.dport, self.snd_nxt if seq is None else seq,
                           self.rcv_nxt if flags & ACK else 0, flags, 65535, options, payload,
                           self._ip_id)

    def send_raw(self, frame: bytes) -> None:
        self.sock.send(frame)

    def _mine(self, seg: Segment) -> bool:
        return (seg.src == self.dst_ip and seg.sport == (self.dport or seg.sport)
                and seg.dst == self.src_ip
                and seg.dport == self.sport)

    def _handle(self, frame: bytes, t: float) -> Optional[Segment]:
        """Answer ARP; return a TCP segment of this connection (state updated), else None."""
        if len(frame) >= 42 and struct.unpack_from("!H", frame, 12)[0] == ETH_P_ARP:
            op = struct.unpack_from("!H", frame, 20)[0]
            if op == 1 and socket.inet_ntoa(frame[38:42]) == self.src_ip:
                req_mac = ":".join(f"{b:02x}" for b in frame[22:28])
                self.send_raw(arp_reply(self.src_mac, self.src_ip, req_mac,
                                        socket.inet_ntoa(frame[28:32])))
                self.arp_replies += 1
            return None
        seg = parse_frame(frame, t)
        if seg is None or not self._mine(seg):
            return None
        self.received.append(seg)
        if seg.opts.ts:
            self.ts_recent = seg.opts.ts[0]
        if seg.opts.owts is not None:
            self.last_owts_ott = owts.diff_us(owts.tsval_of(t), seg.opts.owts.tsval_us)
        if seg.has(ACK) and _seq_leq(self.snd_una, seg.ack) and _seq_leq(seg.ack, self.snd_nxt):
            self.snd_una = seg.ack
        if self.irs is not None and (seg.payload or seg.has(FIN)):
            if seg.seq == self.rcv_nxt:
                self.rcv_nxt = (self.rcv_nxt + len(seg.payload) + seg.has(FIN)) % MOD
                self.fin_received = self.fin_received or seg.has(FIN)
            # out of order (not kept): a duplicate ACK, for the sender's
            # fast retransmit
            self._send_ack()
        return seg

    def _recv_until(self, done: Callable[[Segment], bool], timeout: float) -> List[Segment]:
        """Handle frames until ``done(segment)`` or the timeout; the connection's segments."""
        got: List[Segment] = []
        deadline = time.monotonic() + timeout
        for _ in range(self.MAX_FRAMES_PER_WAIT):
            left = deadline - time.monotonic()
            if left <= 0:
                break
            self.sock.settimeout(left)
            try:
                frame, addr = self.sock.recvfrom(65535)
            except (socket.timeout, BlockingIOError):
                break
            if addr[2] == PACKET_OUTGOING:
                continue
            seg = self._handle(frame, time.time())
            if seg is not None:
                got.append(seg)
                if done(seg):
                    break
        return got

    def pump(self, timeout: float = 0.5) -> List[Segment]:
        """Receive for ``timeout`` s: answer ARP, ACK server data; the segments seen."""
        return self._recv_until(lambda s: False, timeout)

    def _options(self, extra: Iterable[bytes]) -> bytes:
        ts = ts_option(self.tsval(), self.ts_recent) if self.ts_ok else b""
        return pad4(ts + b"".join(extra))

    def _default_extra(self) -> List[bytes]:
        return [owts_option(self.last_owts_ott)] if self.owts_negotiated else []

    def _send_ack(self, options: Optional[Sequence[bytes]] = None) -> None:
        extra = self._default_extra() if options is None else options
        self.send_raw(self._frame(ACK, self._options(extra)))

    # -- API
    def connect(self, owts: bool = True, timestamps: bool = True, sack: bool = True,
                wscale: Optional[int] = 7, mss: Optional[int] = 1460,
                syn_options: Optional[bytes] = None, timeout: float = 3.0,
                tries: int = 3, ack_options: Optional[Sequence[bytes]] = None,
                syn_data: bytes = b"") -> Segment:
        """Handshake; returns the SYN-ACK.  Raises PeerError without one (or on a RST).

        ``ack_options`` (raw bytes after the timestamps) for the handshake's
        ACK; None: the defaults of :meth:`send` (OWTS when negotiated).
        ``syn_data`` is sent on the SYN; data the SYN-ACK does not acknowledge
        count as not sent (send them again).
        """
        if self.irs is not None:
            raise PeerError("already connected")
        self.owts_offered = owts
        opts = syn_options if syn_options is not None else _syn_opts(
            mss, sack, (self.tsval(), 0) if timestamps else None, wscale,
            owts_option(None) if owts else None)
        synack: Optional[Segment] = None
        for _ in range(max(1, tries)):
            self.send_raw(self._frame(SYN, pad4(opts), syn_data, seq=self.iss))
            got = self._recv_until(lambda s: s.has(SYN) or s.has(RST), timeout)
            ends = [s for s in got if s.has(SYN) or s.has(RST)]
            if ends:
                synack = ends[-1]
                break
        if synack is None:
            raise PeerError(f"no SYN-ACK from {self.dst_ip}:{self.dport} in {tries} tries")
        acked = (synack.ack - self.iss - 1) % MOD
        if synack.has(RST) or not synack.has(ACK) or acked not in (0, len(syn_data)):
            raise PeerError(f"handshake refused: flags 0x{synack.flags:02x} ack {synack.ack}")
        self.irs = synack.seq
        self.rcv_nxt = (synack.seq + 1) % MOD
        self.snd_nxt = self.snd_una = (self.iss + 1 + acked) % MOD
        self.ts_ok = synack.opts.ts is not None and (timestamps or syn_options is not None)
        self.owts_negotiated = owts and synack.opts.owts is not None
        self.server_mss = synack.opts.mss
        self.server_wscale = synack.opts.wscale
        self._send_ack(ack_options)
        return synack

    def accept(self, owts: bool = True, extra_options: bytes = b"", timeout: float = 5.0,
               on_syn: Optional[Callable[[Segment], None]] = None) -> Segment:
        """Passive open: wait for a SYN from ``dst_ip`` to our ``sport``, answer it.

        The SYN-ACK acknowledges the SYN and any data on it.  Its options:
        Linux's order for what the SYN offered (MSS, SACK-perm/TS, WS), then
        ``extra_options`` (raw bytes, e.g. NOP, NOP, :func:`tfo_option`) and,
        with ``owts``, an OWTS option whether or not the SYN offered one (at
        most 40 bytes in all).  ``dport`` (0 at construction) is
        the client's port from then on.  ``on_syn(syn)``, if given, runs
        before the SYN-ACK goes out (to change a setting in between).  Returns
        the SYN; raises PeerError without one within ``timeout``.
        """
        if self.irs is not None:
            raise PeerError("already connected")
        got = self._recv_until(lambda s: s.has(SYN) and not s.has(ACK), timeout)
        syns = [s for s in got if s.has(SYN) and not s.has(ACK)]
        if not syns:
            raise PeerError(f"no SYN from {self.dst_ip} to port {self.sport} in {timeout} s")
        syn = syns[-1]
        if on_syn is not None:
            on_syn(syn)
        self.dport = syn.sport
        self.irs = syn.seq
        self.rcv_nxt = (syn.seq + 1 + len(syn.payload)) % MOD
        self.owts_offered = syn.opts.owts is not None
        self.owts_negotiated = owts
        self.ts_ok = syn.opts.ts is not None
        opts = syn_options(1460, syn.opts.sack_permitted,
                           (self.tsval(), syn.opts.ts[0]) if self.ts_ok else None,
                           7 if syn.opts.wscale is not None else None, None)
        opts = pad4(opts + extra_options + (owts_option(None) if owts else b""))
        self.send_raw(self._frame(SYN | ACK, opts, seq=self.iss))
        self.snd_nxt = self.snd_una = (self.iss + 1) % MOD
        return syn

    def send(self, data: bytes, options: Optional[Sequence[bytes]] = None, flags: str = "PA",
             timeout: float = 3.0) -> List[Segment]:
        """One data segment; the server's segments until our data is ACKed (or ``timeout``)."""
        if self.irs is None:
            raise PeerError("not connected")
        extra = self._default_extra() if options is None else list(options)
        opts = self._options(extra)
        limit = MTU - 40 - len(opts)
        if len(data) > limit:
            raise PeerError(f"{len(data)} bytes do not fit one segment ({limit} with these options)")
        self.send_raw(self._frame(flags_of(flags), opts, data))
        self.snd_nxt = (self.snd_nxt + len(data)) % MOD
        want = self.snd_nxt
        return self._recv_until(lambda s: s.has(ACK) and _seq_leq(want, s.ack), timeout)

    def close(self, rst: bool = False, timeout: float = 3.0) -> List[Segment]:
        """FIN and wait for the server's FIN (ACKed), or RST; closes the packet socket.

        A FIN whose exchange does not finish within ``timeout`` is followed by a RST,
        so that no half-open connection stays on the server.
        """
        got: List[Segment] = []
        try:
            if self.irs is None:
                return got
            if rst:
                self.send_raw(self._frame(RST | ACK, self._options([])))
                return got
            self.send_raw(self._frame(FIN | ACK, self._options(self._default_extra())))
            self.snd_nxt = (self.snd_nxt + 1) % MOD
            fin_seq = self.snd_nxt
            got = self._recv_until(lambda s: self.fin_received and _seq_leq(fin_seq, self.snd_una),
                                   timeout)
            if not (self.fin_received and _seq_leq(fin_seq, self.snd_una)):
                self.send_raw(self._frame(RST | ACK, self._options([])))
            return got
        finally:
            self.irs = None
            self.sock.close()

    def __enter__(self) -> "FakePeer":
        return self

    def __exit__(self, *exc: object) -> None:
        if self.sock.fileno() >= 0:
            self.close(rst=True)


def _syn_opts(mss: Optional[int], sack: bool, ts: Optional[Tuple[int, int]],
              wscale: Optional[int], owts_opt: Optional[bytes]) -> bytes:
    return syn_options(mss, sack, ts, wscale, owts_opt)
