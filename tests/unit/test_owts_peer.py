"""The fake OWTS peer without a network: option builders, frames, and its TCP state machine
against a scripted server on a fake packet socket."""

from __future__ import annotations

import socket
import struct
import time
from typing import List, Optional, Tuple

import dpkt
import pytest

pytest.importorskip("scapy", reason="the fake peer builds frames with scapy (make setup)")

from synctcp import owts  # noqa: E402
from synctcp.owts_peer import (ACK, FIN, MALFORMED, PSH, RST, SYN, FakePeer, PeerError,  # noqa: E402
                               build_frame, find_option, flags_of, opt_bad_length, opt_truncated,
                               owts_option, pad4, parse_frame, syn_options, tfo_option, ts_option)
from synctcp.pcap import LINKTYPE_ETHERNET, decode_frame, parse_tcp_options  # noqa: E402

PEER_MAC, SRV_MAC = "02:00:00:00:00:02", "02:00:00:00:00:01"
PEER_IP, SRV_IP = "10.253.0.2", "10.253.0.1"


def tcp_checksum_ok(frame: bytes) -> bool:
    ip = dpkt.ethernet.Ethernet(frame).data
    tcp = bytes(ip.data)
    pseudo = ip.src + ip.dst + struct.pack("!BBH", 0, 6, len(tcp))
    return dpkt.in_cksum(pseudo + tcp) == 0


def test_frame_carries_the_options_verbatim() -> None:
    opts = ts_option(5, 6) + owts.encode(123, 456)
    f = build_frame(PEER_MAC, SRV_MAC, PEER_IP, SRV_IP, 40000, 5201, 0xFFFFFFF0, 77, PSH | ACK,
                    1000, opts, b"hello")
    assert tcp_checksum_ok(f)
    p = decode_frame(LINKTYPE_ETHERNET, f, 0.0)
    assert (p.src, p.sport, p.dst, p.dport, p.seq, p.ack) == (PEER_IP, 40000, SRV_IP, 5201,
                                                               0xFFFFFFF0, 77)
    assert p.payload_len == 5 and p.flags == PSH | ACK
    assert p.opts.ts == (5, 6) and p.opts.owts == owts.Owts(123, 456)
    seg = parse_frame(f)
    assert seg is not None and seg.options == opts and seg.payload == b"hello"
    with pytest.raises(ValueError):
        build_frame(PEER_MAC, SRV_MAC, PEER_IP, SRV_IP, 1, 2, 0, 0, ACK, 1, b"\x01" * 3)


@pytest.mark.parametrize("name,problems,count", [
    ("bad-length-10", ("bad-length",), 1), ("bad-length-14", ("bad-length",), 1),
    ("truncated", ("truncated",), 1), ("repeated", ("repeated",), 2),
    ("absurd-tsval-plus-1h", (), 1), ("absurd-tsval-minus-1h", (), 1),
    ("absurd-ott", ("absurd-ott",), 1)])
def test_malformed_builders_are_what_they_say(name: str, problems: Tuple[str, ...],
                                              count: int) -> None:
    raw = MALFORMED[name]()
    assert len(raw) % 4 == 0
    listed = ts_option(1, 2) + raw                 # as FakePeer.send lays them out: TS first
    scan = owts.scan_options(listed)
    assert scan.problems == problems and scan.count == count
    assert parse_tcp_options(listed).ts == (1, 2)
    if name.startswith("absurd-tsval"):
        now = time.time()
        off = owts.diff_us(scan.option.tsval_us, owts.tsval_of(now))
        # 1 h = 3.6e9 µs is more than 2^31: read as signed 32-bit it is ∓11.6 minutes
        sign = 1 if name.endswith("plus-1h") else -1
        assert off == pytest.approx(sign * (3_600_000_000 - (1 << 32)), abs=5_000_000)
        assert abs(off) > owts.MAX_ABS_TSVAL_AGE_US


def test_bad_length_and_truncated_bytes() -> None:
    assert opt_bad_length(10)[:2] == b"\x01\x01" and opt_bad_length(10)[2:4] == b"\xfd\x0a"
    assert len(opt_bad_length(14)) == 16 and opt_bad_length(14)[2:6] == b"\xfd\x0e\x53\x54"
    t = opt_truncated()
    assert len(t) == 8 and t[2:4] == b"\xfd\x0c"
    with pytest.raises(ValueError):
        opt_bad_length(2)


def test_syn_options_like_linux() -> None:
    o = syn_options(1460, True, (7, 0), 7, owts_option(None, 99))
    assert len(o) == 32
    assert o[:4] == b"\x02\x04\x05\xb4" and o[4:6] == b"\x04\x02" and o[16:20] == b"\x01\x03\x03\x07"
    p = parse_tcp_options(o)
    assert p.mss == 1460 and p.sack_permitted and p.ts == (7, 0) and p.wscale == 7
    assert p.owts == owts.Owts(99, None)
    assert syn_options(None, False, None, None) == b""
    with pytest.raises(ValueError):
        pad4(bytes(41))


def test_flags_of() -> None:
    assert flags_of("PA") == PSH | ACK and flags_of("FA") == FIN | ACK and flags_of("R") == RST
    with pytest.raises(ValueError):
        flags_of("X")


# --- the state machine against a scripted server ----------------------------------------------

class ScriptedServer:
    """A fake AF_PACKET socket: a minimal kernel-like server behind it (ARPs first)."""

    def __init__(self, owts_on_synack: bool = False, ack_data: bool = True) -> None:
        self.inbox: List[Tuple[bytes, Tuple]] = []
        self.sent: List[bytes] = []
        self.owts_on_synack = owts_on_synack
        self.ack_data = ack_data
        self.isn = 1000
        self.rcv_nxt = 0
        self.data = b""
        self.closed = False
        self.timeout: Optional[float] = None
        # the server's kernel asks who has the peer's address before its SYN-ACK
        self.arp_request = bytes.fromhex("ffffffffffff" "020000000001" "0806" "0001080006040001"
                                         "020000000001") + socket.inet_aton(SRV_IP) + bytes(6) + \
            socket.inet_aton(PEER_IP)

    def settimeout(self, t: float) -> None:
        self.timeout = t

    def fileno(self) -> int:
        return -1 if self.closed else 99

    def close(self) -> None:
        self.closed = True

    def recvfrom(self, n: int) -> Tuple[bytes, Tuple]:
        if not self.inbox:
            raise socket.timeout()
        return self.inbox.pop(0)

    def _reply(self, seq: int, ack: int, flags: int, opts: bytes = b"", own: bool = False) -> None:
        f = build_frame(SRV_MAC, PEER_MAC, SRV_IP, PEER_IP, 5201, self.peer_port, seq, ack, flags,
                        500, opts)
        self.inbox.append((f, ("veth", 0x800, 0, 1, b"")))

    def send(self, frame: bytes) -> int:
        self.sent.append(frame)
        if frame[12:14] == b"\x08\x06":
            return len(frame)
        seg = parse_frame(frame)
        assert seg is not None
        self.peer_port = seg.sport
        self.inbox.append((frame, ("veth", 0x800, 4, 1, b"")))       # our own, outgoing
        ts = ts_option(555, seg.opts.ts[0]) if seg.opts.ts else b""
        if seg.flags & SYN:
            self.rcv_nxt = seg.seq + 1
            self.inbox.append((self.arp_request, ("veth", 0x806, 1, 1, b"")))
            extra = owts.encode(owts.tsval_of(time.time()), None) if self.owts_on_synack else b""
            self._reply(self.isn, self.rcv_nxt, SYN | ACK,
                        pad4(b"\x02\x04\x05\xb4" + ts + extra))
        elif seg.flags & RST:
            pass
        elif seg.payload or seg.flags & FIN:
            if seg.seq == self.rcv_nxt:
                self.data += seg.payload
                self.rcv_nxt += len(seg.payload) + bool(seg.flags & FIN)
            if seg.flags & FIN:
                self._reply(self.isn + 1, self.rcv_nxt, FIN | ACK, ts)
            elif self.ack_data:
                self._reply(self.isn + 1, self.rcv_nxt, ACK, ts)
        return len(frame)


def make_peer(srv: ScriptedServer) -> FakePeer:
    return FakePeer("veth-p", PEER_IP, PEER_MAC, SRV_IP, SRV_MAC, 5201, sock=srv)  # type: ignore


def test_handshake_data_and_fin() -> None:
    srv = ScriptedServer()
    peer = make_peer(srv)
    synack = peer.connect(owts=True)
    assert synack.flags == SYN | ACK and peer.arp_replies == 1
    arp = dpkt.ethernet.Ethernet(srv.sent[1]).data
    assert arp.op == 2 and socket.inet_ntoa(arp.spa) == PEER_IP and arp.sha == bytes.fromhex(
        "020000000002") and arp.tha == bytes.fromhex("020000000001")
    syn = parse_frame(srv.sent[0])
    assert syn.opts.owts is not None and syn.opts.owts.ott_us is None and syn.opts.wscale == 7
    assert not peer.owts_negotiated and peer.ts_ok and peer.ts_recent == 555
    hs_ack = parse_frame(srv.sent[2])
    assert hs_ack.flags == ACK and hs_ack.ack == 1001 and hs_ack.opts.owts is None
    acks = peer.send(b"abc", options=[MALFORMED["repeated"]()])
    assert acks and acks[-1].ack == peer.snd_nxt
    sent = parse_frame(srv.sent[-1])
    assert sent.options[:4] == b"\x01\x01\x08\x0a" and sent.opts.owts_count == 2
    assert peer.send(b"def", options=[])[-1].ack == peer.snd_nxt
    assert parse_frame(srv.sent[-1]).opts.owts_count == 0
    peer.close()
    assert srv.data == b"abcdef" and peer.fin_received and srv.closed
    assert parse_frame(srv.sent[-1]).flags == ACK          # our ACK of the server's FIN


def test_negotiated_option_is_sent_by_default_with_the_measured_ott() -> None:
    srv = ScriptedServer(owts_on_synack=True)
    peer = make_peer(srv)
    peer.connect(owts=True)
    assert peer.owts_negotiated and peer.last_owts_ott is not None
    assert abs(peer.last_owts_ott) < 1_000_000
    hs = parse_frame(srv.sent[2])
    assert hs.opts.owts is not None and hs.opts.owts.ott_us == peer.last_owts_ott
    peer.send(b"x")
    assert parse_frame(srv.sent[-1]).opts.owts is not None
    peer.close(rst=True)
    assert parse_frame(srv.sent[-1]).flags == RST | ACK


def test_timeouts_are_bounded() -> None:
    srv = ScriptedServer(ack_data=False)
    peer = make_peer(srv)
    peer.connect(owts=False)
    t = time.monotonic()
    assert peer.send(b"lost", timeout=0.2) == []
    assert time.monotonic() - t < 1
    peer.close()

    class Deaf(ScriptedServer):
        def send(self, frame: bytes) -> int:
            self.sent.append(frame)
            return len(frame)

    deaf = Deaf()
    with pytest.raises(PeerError, match="no SYN-ACK"):
        make_peer(deaf).connect(timeout=0.05, tries=2)
    assert len(deaf.sent) == 2
    with pytest.raises(PeerError, match="not connected"):
        make_peer(Deaf()).send(b"x")


def test_segment_too_big_is_refused() -> None:
    peer = make_peer(ScriptedServer())
    peer.connect(owts=False)
    with pytest.raises(PeerError, match="do not fit"):
        peer.send(bytes(1500))
    peer.close(rst=True)


def test_fast_open_option_builder_and_finder() -> None:
    assert tfo_option() == b"\x22\x02"
    assert tfo_option(b"12345678") == b"\x22\x0a12345678"
    opts = syn_options(1460, True, (1, 2), 7, None) + b"\x01\x01" + tfo_option(b"abcdefgh")
    assert find_option(opts, 34) == b"abcdefgh"
    assert find_option(opts, 2) == b"\x05\xb4"
    assert find_option(opts, 253) is None
    assert find_option(b"\x22\x0a\x00", 34) is None           # runs past the end
    with pytest.raises(ValueError):
        tfo_option(bytes(17))


def test_data_on_the_syn_counts_as_sent_only_when_acknowledged() -> None:
    srv = ScriptedServer()                  # acknowledges the SYN only
    peer = make_peer(srv)
    opts = syn_options(1460, True, (peer.tsval(), 0), 7, None) + b"\x01\x01" + tfo_option(b"c" * 8)
    peer.connect(owts=False, syn_options=opts, syn_data=b"early")
    syn = parse_frame(srv.sent[0])
    assert syn.payload == b"early" and find_option(syn.options, 34) == b"c" * 8
    assert peer.snd_nxt == (peer.iss + 1) % (1 << 32)
    peer.close(rst=True)


class ScriptedClient(ScriptedServer):
    """A fake AF_PACKET socket with a kernel-like client behind it: its SYN (with
    ``syn_opts``) is waiting; it answers the SYN-ACK with an ACK and data."""

    def __init__(self, syn_opts: bytes) -> None:
        super().__init__()
        self.peer_port = 5600
        self._reply(7000, 0, SYN, syn_opts)

    def send(self, frame: bytes) -> int:
        self.sent.append(frame)
        seg = parse_frame(frame)
        if seg is not None and seg.flags == SYN | ACK:
            self._reply(7001, seg.seq + 1, ACK | PSH, b"")
        return len(frame)

    def _reply(self, seq: int, ack: int, flags: int, opts: bytes = b"", own: bool = False) -> None:
        f = build_frame(SRV_MAC, PEER_MAC, SRV_IP, PEER_IP, 40000, self.peer_port, seq, ack, flags,
                        500, opts)
        self.inbox.append((f, ("veth", 0x800, 0, 1, b"")))


def test_accept_answers_a_syn_with_an_option_it_did_not_offer() -> None:
    cli = ScriptedClient(syn_options(1460, True, (42, 0), 7, None))
    peer = FakePeer("veth-p", PEER_IP, PEER_MAC, SRV_IP, SRV_MAC, 0, sport=5600,
                    sock=cli)  # type: ignore
    syn = peer.accept(owts=True)
    assert syn.seq == 7000 and peer.dport == 40000 and not peer.owts_offered
    synack = parse_frame(cli.sent[0])
    assert synack.flags == SYN | ACK and synack.ack == 7001 and synack.dport == 40000
    assert synack.opts.owts is not None and synack.opts.ts[1] == 42 and synack.opts.wscale == 7
    assert peer.owts_negotiated and peer.ts_ok and peer.rcv_nxt == 7001
    assert peer.pump(0.05)[0].flags == ACK | PSH               # the client's ACK reaches us
    with pytest.raises(PeerError, match="already connected"):
        peer.accept()
    quiet = FakePeer("veth-p", PEER_IP, PEER_MAC, SRV_IP, SRV_MAC, 0, sport=5601,
                     sock=ScriptedServer())  # type: ignore
    with pytest.raises(PeerError, match="no SYN"):
        quiet.accept(timeout=0.05)
