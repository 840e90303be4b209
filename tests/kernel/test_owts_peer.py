"""The fake OWTS peer (synctcp/owts_peer.py) against an UNPATCHED kernel server.

This validates the peer itself: it completes a handshake with a kernel
listener in another network namespace, its data segments carrying every
malformed OWTS option are ACKed and delivered intact to the server
application, the connection keeps going, and the server (which does not
know the option) never sends it.  Tests of the patched kernel build on the
``owts_net`` fixture and :class:`FakePeer`.

    netns owtsp-srv: veth-os 10.253.0.1/24   <->   netns owtsp-peer: veth-op (no address)
"""

from __future__ import annotations

import socket
import subprocess
import threading
import time
from dataclasses import dataclass, field
from typing import Iterator, List, Optional

import pytest

pytest.importorskip("scapy", reason="the fake peer needs scapy (make setup)")

from synctcp.owts_peer import ACK, MALFORMED, FakePeer, Segment, open_packet_socket, owts_option  # noqa: E402
from synctcp_testbed.topology import in_netns  # noqa: E402

SRV_NS, PEER_NS = "owtsp-srv", "owtsp-peer"
SRV_DEV, PEER_DEV = "veth-os", "veth-op"
SRV_IP, PEER_IP = "10.253.0.1", "10.253.0.2"
SRV_MAC, PEER_MAC = "02:53:00:00:00:01", "02:53:00:00:00:02"
PORT = 5400


def ip(*args: str, ns: Optional[str] = None, check: bool = True) -> subprocess.CompletedProcess:
    cmd = (["ip", "netns", "exec", ns] if ns else []) + list(args)
    res = subprocess.run(cmd, capture_output=True, text=True, timeout=30)
    if check and res.returncode:
        raise RuntimeError(f"{' '.join(cmd)}: {res.stderr.strip()}")
    return res


def _teardown() -> None:
    for ns in (SRV_NS, PEER_NS):
        ip("ip", "netns", "del", ns, check=False)


@dataclass
class OwtsNet:
    srv_ns: str = SRV_NS
    peer_ns: str = PEER_NS
    peer_dev: str = PEER_DEV
    srv_ip: str = SRV_IP
    peer_ip: str = PEER_IP
    srv_mac: str = SRV_MAC
    peer_mac: str = PEER_MAC


@pytest.fixture(scope="module")
def owts_net() -> Iterator[OwtsNet]:
    """Two namespaces and a veth pair; offloads off; the peer side has no address."""
    _teardown()
    try:
        ip("ip", "netns", "add", SRV_NS)
        ip("ip", "netns", "add", PEER_NS)
        ip("ip", "link", "add", SRV_DEV, "netns", SRV_NS, "address", SRV_MAC, "type", "veth",
           "peer", "name", PEER_DEV, "netns", PEER_NS, "address", PEER_MAC)
        ip("sysctl", "-qw", f"net.ipv6.conf.{PEER_DEV}.disable_ipv6=1", ns=PEER_NS)
        ip("sysctl", "-qw", f"net.ipv6.conf.{SRV_DEV}.disable_ipv6=1", ns=SRV_NS)
        ip("ip", "addr", "add", f"{SRV_IP}/24", "dev", SRV_DEV, ns=SRV_NS)
        for ns, dev in ((SRV_NS, SRV_DEV), (PEER_NS, PEER_DEV)):
            ip("ip", "link", "set", "lo", "up", ns=ns)
            ip("ip", "link", "set", dev, "up", ns=ns)
            ip("ethtool", "-K", dev, "tso", "off", "gso", "off", "gro", "off", ns=ns)
        assert "inet " not in ip("ip", "-4", "addr", "show", "dev", PEER_DEV, ns=PEER_NS).stdout
        yield OwtsNet()
    finally:
        _teardown()


@dataclass
class Server:
    """A kernel listener in the server namespace that reads one connection to EOF."""

    port: int
    data: bytearray = field(default_factory=bytearray)
    error: Optional[str] = None
    done: threading.Event = field(default_factory=threading.Event)

    def start(self) -> "Server":
        with in_netns(SRV_NS):
            self.lsock = socket.socket()
        self.lsock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        self.lsock.bind((SRV_IP, self.port))
        self.lsock.listen(1)
        self.lsock.settimeout(30)
        threading.Thread(target=self._run, daemon=True).start()
        return self

    def _run(self) -> None:
        try:
            conn, _ = self.lsock.accept()
            conn.settimeout(30)
            with conn:
                for _ in range(100_000):           # bounded: ends at EOF or timeout
                    chunk = conn.recv(65536)
                    if not chunk:
                        break
                    self.data += chunk
        except OSError as exc:
            self.error = str(exc)
        finally:
            self.lsock.close()
            self.done.set()


_port = [PORT]


def server() -> Server:
    _port[0] += 1
    return Server(_port[0]).start()


def peer_for(net: OwtsNet, srv: Server) -> FakePeer:
    return FakePeer(net.peer_dev, net.peer_ip, net.peer_mac, net.srv_ip, net.srv_mac, srv.port,
                    netns=net.peer_ns)


def acked(segs: List[Segment], peer: FakePeer) -> bool:
    return any(s.has(ACK) and s.ack == peer.snd_nxt for s in segs)


def no_option_from_server(peer: FakePeer) -> None:
    assert peer.received, "nothing received from the server"
    bad = [s for s in peer.received if s.opts.owts_count]
    assert not bad, f"the unpatched server sent an OWTS option: {bad[0]}"


def test_handshake_and_arp(owts_net: OwtsNet) -> None:
    srv = server()
    with peer_for(owts_net, srv) as peer:
        synack = peer.connect(owts=True)
        assert peer.arp_replies >= 1                # the server asked for our MAC, we answered
        assert synack.opts.ts is not None and synack.opts.sack_permitted
        assert synack.opts.wscale is not None and synack.opts.mss == 1460
        assert not peer.owts_negotiated and synack.opts.owts_count == 0
        assert acked(peer.send(b"hello", options=[]), peer)
        peer.close()
    assert srv.done.wait(10) and srv.error is None
    assert bytes(srv.data) == b"hello"
    assert peer.fin_received
    no_option_from_server(peer)
    neigh = ip("ip", "neigh", "show", PEER_IP, "dev", SRV_DEV, ns=SRV_NS).stdout
    assert PEER_MAC in neigh.lower()


CASES = sorted(MALFORMED) + ["syn-only", "never-negotiated"]


@pytest.mark.parametrize("case", CASES)
def test_malformed_option_is_ignored_by_an_unpatched_server(owts_net: OwtsNet, case: str) -> None:
    srv = server()
    sent = b""
    with peer_for(owts_net, srv) as peer:
        peer.connect(owts=case != "never-negotiated")
        good = [] if case in ("syn-only",) else [owts_option(1000)]
        bad = ([] if case == "syn-only" else [owts_option(2000)] if case == "never-negotiated"
               else [MALFORMED[case]()])
        for k, opts in enumerate([good, bad, good, bad, good]):
            data = f"{case}:{k}:".encode() + bytes([65 + k]) * 700
            segs = peer.send(data, options=opts, timeout=5)
            assert acked(segs, peer), f"segment {k} ({'bad' if k % 2 else 'good'}) not ACKed"
            sent += data
        peer.close(timeout=5)
    assert srv.done.wait(15), "the server did not see EOF"
    assert srv.error is None, srv.error
    assert bytes(srv.data) == sent                  # delivered intact, in order
    assert peer.fin_received
    no_option_from_server(peer)


def test_packet_socket_needs_an_existing_namespace() -> None:
    from synctcp.owts_peer import PeerError
    with pytest.raises(PeerError, match="no network namespace"):
        open_packet_socket("lo", netns="owtsp-does-not-exist")


def test_decoder_reads_the_capture_of_every_malformed_case(owts_net: OwtsNet) -> None:
    """tcpdump on the server's veth: ``synctcp owts`` marks each case, the server has no option."""
    from conftest import RESULTS
    from synctcp.owtsdump import decode_file, summarize

    RESULTS.mkdir(parents=True, exist_ok=True)
    cap = RESULTS / "owts-peer-malformed.pcap"
    cap.unlink(missing_ok=True)
    dump = subprocess.Popen(["ip", "netns", "exec", SRV_NS, "tcpdump", "-Z", "root", "-U", "-n",
                             "-i", SRV_DEV, "-w", str(cap), "tcp"],
                            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    try:
        deadline = time.monotonic() + 20
        while time.monotonic() < deadline and not (cap.exists() and cap.stat().st_size >= 24):
            time.sleep(0.2)
        time.sleep(1.0)                          # tcpdump is listening once its header is out
        srv = server()
        with peer_for(owts_net, srv) as peer:
            peer.connect(owts=True)
            for name in sorted(MALFORMED):
                assert acked(peer.send(name.encode(), options=[MALFORMED[name]()]), peer), name
            peer.close()
        assert srv.done.wait(15) and bytes(srv.data) == "".join(sorted(MALFORMED)).encode()
        time.sleep(1.0)
    finally:
        dump.terminate()
        try:
            dump.wait(10)
        except subprocess.TimeoutExpired:
            dump.kill()
            dump.wait(5)
    rows, stats = decode_file(str(cap))
    from_peer = [r for r in rows if r.src[0] == PEER_IP and r.length]
    assert len(from_peer) == len(MALFORMED)
    marks = [set(r.problems) for r in from_peer]
    want = [{"absurd-ott"}, {"absurd-tsval"}, {"absurd-tsval"}, {"bad-length"}, {"bad-length"},
            {"repeated"}, {"truncated"}]
    assert [n for n in sorted(MALFORMED)] == ["absurd-ott", "absurd-tsval-minus-1h",
                                              "absurd-tsval-plus-1h", "bad-length-10",
                                              "bad-length-14", "repeated", "truncated"]
    assert marks == want
    syn = next(r for r in rows if r.flags == 0x02)
    assert syn.option is not None and syn.option.ott_us is None and abs(syn.age_us) < 5_000_000
    assert all(r.count == 0 for r in rows if r.src[0] == SRV_IP)
    s = summarize(rows, stats)
    assert s["link_types"] == ["ethernet"] and s["malformed"] == len(MALFORMED)
