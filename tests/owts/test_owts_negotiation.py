"""Who may carry the option (issue 28, item 9).

- A client takes the option from a SYN-ACK only when a SYN of its own
  offered it: the sysctl may have changed in between, and a SYN with a Fast
  Open cookie (or MD5) may have had no room for it.  A fake server
  (tools/synctcp/owts_peer.py, ``FakePeer.accept``) answers with the option
  whatever the SYN offered, which a kernel server never does.
- A Fast Open child is created before its SYN-ACK is built; when that
  SYN-ACK has no room for the option, the child must not send it either.
  The kernel's own Fast Open fills the SYN-ACK: the fake client holds a
  cookie of the key the server has since rotated to its backup, so the
  server creates the child and sends a fresh cookie (12 bytes) on the
  SYN-ACK.
- ``net.ipv4.tcp_owts = 2``: only sockets that set TCP_OWTS offer it
  (connecting) or answer it (listening); kernel to kernel.
"""

from __future__ import annotations

import errno
import select
import socket
import threading
import time
from typing import Dict, Iterator

import pytest

pytest.importorskip("scapy", reason="the fake peer needs scapy (make setup)")

from conftest import Pair, netstat, owts_counters, set_owts, sink  # noqa: E402
from owtsnet import SRV_DEV, SRV_NS, OwtsNet, owts_net  # noqa: E402
from synctcp.owts_peer import (SYN, FakePeer, find_option, owts_option,  # noqa: E402
                                syn_options, tfo_option)
from synctcp_testbed.network.netns import in_netns, sh  # noqa: E402

__all__ = ["owts_net"]       # the fixture, used by name

#: include/uapi/linux/tcp.h: TCP_FASTOPEN_CONNECT (Linux), TCP_OWTS (the series)
TCP_FASTOPEN_CONNECT = 30
TCP_OWTS = 253
TCPOPT_FASTOPEN = 34
#: net.ipv4.tcp_fastopen: client (1), server (2), on listeners without TCP_FASTOPEN (0x400)
TFO_ANY_LISTENER = 0x403
TFO_KEY_1 = "00000001-00000002-00000003-00000004"
TFO_KEY_2 = "0000000a-0000000b-0000000c-0000000d"
#: the cookie the fake server hands the kernel client
COOKIE = bytes.fromhex("5354c00c1e000028")
PORT = 5700


@pytest.fixture(scope="module", autouse=True)
def peer_neighbour(owts_net: OwtsNet) -> None:
    """A permanent ARP entry for the fake peer in SRV_NS: the peer answers ARP
    only while it receives, and a kernel client's SYN must not wait for it."""
    sh(["ip", "neigh", "replace", owts_net.peer_ip, "lladdr", owts_net.peer_mac, "dev",
        SRV_DEV, "nud", "permanent"], ns=SRV_NS)


def write_sysctl(ns: str, name: str, value: int) -> None:
    """net.ipv4.NAME in ``ns``, written at once (no process: the client's SYN
    must not be retransmitted while a test changes a setting between SYN and
    SYN-ACK)."""
    with in_netns(ns):
        with open(f"/proc/sys/net/ipv4/{name}", "w") as f:
            f.write(f"{value}\n")


def fake_server(net: OwtsNet, port: int) -> FakePeer:
    """The fake peer as a server on ``port``, for a kernel client in SRV_NS."""
    return FakePeer(net.peer_dev, net.peer_ip, net.peer_mac, net.srv_ip, net.srv_mac, 0,
                    sport=port, netns=net.peer_ns)


def fake_client(net: OwtsNet, port: int) -> FakePeer:
    return FakePeer(net.peer_dev, net.peer_ip, net.peer_mac, net.srv_ip, net.srv_mac, port,
                    netns=net.peer_ns)


def client_socket(fastopen: bool = False) -> socket.socket:
    """A kernel TCP socket in SRV_NS, non-blocking (its SYN leaves at once)."""
    with in_netns(SRV_NS):
        s = socket.socket()
    if fastopen:
        s.setsockopt(socket.IPPROTO_TCP, TCP_FASTOPEN_CONNECT, 1)
    s.setblocking(False)
    return s


def wait_established(s: socket.socket, timeout: float = 5.0) -> None:
    _, w, _ = select.select([], [s], [], timeout)
    assert w and s.getsockopt(socket.SOL_SOCKET, socket.SO_ERROR) == 0, "not connected"
    s.setblocking(True)
    s.settimeout(timeout)


def deltas(ns: str, before: Dict[str, int]) -> Dict[str, int]:
    return {k: v - before[k] for k, v in owts_counters(ns).items()}


def tcpext(ns: str, *names: str) -> Dict[str, int]:
    c = netstat(ns)
    return {n: c.get(n, 0) for n in names}


def assert_client_did_not_take_it(peer: FakePeer, cs: socket.socket,
                                   before: Dict[str, int]) -> None:
    """The kernel client, answered with the option, sends data: none of its
    segments after its (one) SYN carries the option, and the SYN-ACK's option
    was rejected."""
    wait_established(cs)
    cs.sendall(b"after the handshake")
    peer.pump(1.0)
    syns = [s for s in peer.received if s.has(SYN)]
    assert len(syns) == 1, f"the client sent {len(syns)} SYNs: the case needs one"
    sent = [s for s in peer.received if not s.has(SYN)]
    assert any(s.payload == b"after the handshake" for s in sent)
    carried = [s for s in sent if s.opts.owts_count]
    assert not carried, f"{len(carried)} of {len(sent)} client segments carry the option"
    d = deltas(SRV_NS, before)
    assert d["TCPOWTSOut"] == 0 and d["TCPOWTSRejected"] >= 1, d


def test_client_takes_the_option_only_when_its_syn_offered_it(owts_net: OwtsNet) -> None:
    """The client's SYN goes out with the sysctl off; it is on before the SYN-ACK,
    which carries the option: the client must not take it.  It used to (the
    parser takes the option once the sysctl is on), and then sent it."""
    write_sysctl(SRV_NS, "tcp_owts", 0)
    peer = fake_server(owts_net, PORT)
    cs = client_socket()
    try:
        before = owts_counters(SRV_NS)
        assert cs.connect_ex((owts_net.peer_ip, PORT)) == errno.EINPROGRESS
        syn = peer.accept(owts=True, on_syn=lambda _: write_sysctl(SRV_NS, "tcp_owts", 1))
        assert syn.opts.owts_count == 0
        assert_client_did_not_take_it(peer, cs, before)
    finally:
        cs.close()
        peer.close(rst=True)
        set_owts(SRV_NS, False)


def test_client_whose_syn_had_no_room_does_not_take_it(owts_net: OwtsNet) -> None:
    """Fast Open: with an 8-byte cookie the client's SYN (MSS 4, SACK-perm and
    TS 12, WS 4, cookie 12) has 8 bytes left: no room for the option.  A
    SYN-ACK that carries it anyway must not make the client send it."""
    set_owts(SRV_NS, True)
    try:
        # 1. the client asks for a cookie; the fake server gives COOKIE
        peer = fake_server(owts_net, PORT + 1)
        cs = client_socket(fastopen=True)
        try:
            assert cs.connect_ex((owts_net.peer_ip, PORT + 1)) == errno.EINPROGRESS
            syn = peer.accept(owts=False, extra_options=b"\x01\x01" + tfo_option(COOKIE))
            assert find_option(syn.options, TCPOPT_FASTOPEN) == b""        # a request
            wait_established(cs)
        finally:
            cs.close()
            peer.close(rst=True)
        # 2. a SYN with data and COOKIE, answered with the option
        peer = fake_server(owts_net, PORT + 2)
        cs = client_socket(fastopen=True)
        try:
            before = owts_counters(SRV_NS)
            # deferred until the first data: the client has a cookie
            assert cs.connect_ex((owts_net.peer_ip, PORT + 2)) == 0
            try:
                cs.send(b"in the SYN")
            except BlockingIOError:
                pass
            syn = peer.accept(owts=True)
            assert find_option(syn.options, TCPOPT_FASTOPEN) == COOKIE, syn.options.hex()
            assert syn.payload == b"in the SYN"
            assert syn.opts.owts_count == 0, "the SYN had room for the option after all"
            assert_client_did_not_take_it(peer, cs, before)
        finally:
            cs.close()
            peer.close(rst=True)
    finally:
        set_owts(SRV_NS, False)


class ReplyServer:
    """A kernel listener in SRV_NS: reads one connection's first bytes (``got``),
    answers ``reply``, reads to EOF (bounded) and closes."""

    def __init__(self, net: OwtsNet, port: int, reply: bytes) -> None:
        with in_netns(SRV_NS):
            self.lsock = socket.socket()
        self.lsock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        self.lsock.bind((net.srv_ip, port))
        self.lsock.listen(8)
        self.lsock.settimeout(30)
        self.reply, self.got = reply, b""
        self.done = threading.Event()
        threading.Thread(target=self._run, daemon=True).start()

    def _run(self) -> None:
        try:
            conn, _ = self.lsock.accept()
            with conn:
                conn.settimeout(10)
                self.got = conn.recv(4096)
                conn.sendall(self.reply)
                for _ in range(1000):
                    if not conn.recv(4096):
                        break
        except OSError:
            pass                    # the cookie round ends in a RST
        finally:
            self.lsock.close()
            self.done.set()


def test_fast_open_child_without_room_on_its_syn_ack_does_not_send_it(
        owts_net: OwtsNet) -> None:
    """The fake client's SYN carries data, a cookie of the server's previous Fast
    Open key and the option (no MSS: 40 bytes).  The server creates the child
    (owts_ok copied from the request), then builds a SYN-ACK with a fresh
    cookie: MSS 4 + SACK-perm/TS 12 + WS 4 + cookie 12 leave 8 bytes, no room
    for the option.  The child must then not send it; its reply used to."""
    port = PORT + 3
    set_owts(SRV_NS, True)
    write_sysctl(SRV_NS, "tcp_fastopen", TFO_ANY_LISTENER)
    sh(["sysctl", "-qw", f"net.ipv4.tcp_fastopen_key={TFO_KEY_1}"], ns=SRV_NS)
    try:
        # 1. a cookie of key 1
        first = ReplyServer(owts_net, port, b"first")
        with fake_client(owts_net, port) as peer:
            opts = syn_options(1460, True, (peer.tsval(), 0), 7, None) + b"\x01\x01" + tfo_option()
            synack = peer.connect(owts=False, syn_options=opts)
            cookie = find_option(synack.options, TCPOPT_FASTOPEN)
            assert cookie is not None and len(cookie) == 8, synack.options.hex()
            peer.close(rst=True)
        first.done.wait(10)
        # 2. key 1 is now the backup: the cookie is good, the SYN-ACK carries a new one
        sh(["sysctl", "-qw", f"net.ipv4.tcp_fastopen_key={TFO_KEY_2},{TFO_KEY_1}"], ns=SRV_NS)
        srv = ReplyServer(owts_net, port + 1, b"reply from the child")
        before = owts_counters(SRV_NS)
        tfo_names = ("TCPFastOpenPassive", "TCPFastOpenPassiveAltKey")
        tfo_before = tcpext(SRV_NS, *tfo_names)
        with fake_client(owts_net, port + 1) as peer:
            opts = (syn_options(None, True, (peer.tsval(), 0), 7, None) + b"\x01\x01"
                    + tfo_option(cookie) + owts_option(None))
            assert len(opts) == 40
            synack = peer.connect(owts=True, syn_options=opts, syn_data=b"request")
            fresh = find_option(synack.options, TCPOPT_FASTOPEN)
            assert fresh is not None and fresh != cookie, synack.options.hex()
            assert synack.opts.owts_count == 0 and not peer.owts_negotiated
            assert peer.snd_nxt == (peer.iss + 1 + len(b"request")) % (1 << 32)   # a child
            peer.pump(2.0)
            reply = b"".join(s.payload for s in peer.received if s.payload)
            assert reply == b"reply from the child", reply
            carried = [s for s in peer.received if s.opts.owts_count]
            peer.close(timeout=5)
        assert srv.done.wait(15) and srv.got == b"request", srv.got
        tfo = {k: v - tfo_before[k] for k, v in tcpext(SRV_NS, *tfo_names).items()}
        assert tfo == {"TCPFastOpenPassive": 1, "TCPFastOpenPassiveAltKey": 1}, tfo
        assert not carried, \
            f"{len(carried)} server segments carry an option the SYN-ACK did not negotiate"
        assert deltas(SRV_NS, before)["TCPOWTSOut"] == 0
    finally:
        write_sysctl(SRV_NS, "tcp_fastopen", 1)
        set_owts(SRV_NS, False)


# --- net.ipv4.tcp_owts = 2: only the sockets that asked ----------------------------------------

@pytest.fixture
def mode_2(pair: Pair) -> Iterator[Pair]:
    for ns in (pair.a, pair.b):
        sh(["sysctl", "-qw", "net.ipv4.tcp_owts=2"], ns=ns)
    try:
        yield pair
    finally:
        for ns in (pair.a, pair.b):
            set_owts(ns, False)


def test_tcp_owts_socket_option_is_0_or_1() -> None:
    with socket.socket() as s:
        assert s.getsockopt(socket.IPPROTO_TCP, TCP_OWTS) == 0
        s.setsockopt(socket.IPPROTO_TCP, TCP_OWTS, 1)
        assert s.getsockopt(socket.IPPROTO_TCP, TCP_OWTS) == 1
        for bad in (2, -1):
            with pytest.raises(OSError) as exc:
                s.setsockopt(socket.IPPROTO_TCP, TCP_OWTS, bad)
            assert exc.value.errno == errno.EINVAL
        s.setsockopt(socket.IPPROTO_TCP, TCP_OWTS, 0)
        assert s.getsockopt(socket.IPPROTO_TCP, TCP_OWTS) == 0


@pytest.mark.parametrize("client_asks,server_asks", [(False, False), (True, False),
                                                     (False, True), (True, True)])
def test_mode_2_carries_it_only_between_sockets_that_asked(mode_2: Pair, client_asks: bool,
                                                           server_asks: bool) -> None:
    """The client's SYN offers it only if the client asked; the listener answers
    only if it asked; the connection carries it only if both did."""
    pair = mode_2
    port = PORT + 10 + 2 * client_asks + server_asks
    before = {ns: owts_counters(ns) for ns in (pair.a, pair.b)}
    asked = ((socket.IPPROTO_TCP, TCP_OWTS, 1),)
    srv = sink(pair, port, sockopts=asked if server_asks else ())
    with in_netns(pair.a):
        cs = socket.socket()
    with cs:
        if client_asks:
            cs.setsockopt(socket.IPPROTO_TCP, TCP_OWTS, 1)
        cs.settimeout(20)
        cs.connect((pair.b_ip, port))
        for _ in range(20):
            cs.sendall(b"x" * 1000)
            time.sleep(0.01)
    assert srv.finish() == 20_000
    a, b = deltas(pair.a, before[pair.a]), deltas(pair.b, before[pair.b])
    if client_asks and server_asks:
        assert a["TCPOWTSOut"] > 1 and b["TCPOWTSOut"] > 1 and b["TCPOWTSIn"] > 1, (a, b)
    else:
        assert a["TCPOWTSOut"] == int(client_asks), (a, b)      # its SYN, if it asked
        assert b["TCPOWTSOut"] == 0 and a["TCPOWTSIn"] == 0, (a, b)
    assert a["TCPOWTSRejected"] == b["TCPOWTSRejected"] == 0, (a, b)
