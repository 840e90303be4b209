"""Network of the OWTS tests: a kernel server and a fake peer (synctcp/owts_peer.py).

    netns owtsp-srv: veth-os 10.253.0.1/24   <->   netns owtsp-peer: veth-op (no address)

Used by tests/kernel/test_owts_peer.py (unpatched kernel) and tests/owts/
(the kernel with the tcp_option/ patches).  Test modules import the
``owts_net`` fixture from here.
"""

from __future__ import annotations

import socket
import threading
from dataclasses import dataclass, field
from typing import Iterator, List, Optional, Tuple

import pytest

from synctcp.owts_peer import ACK, FakePeer, Segment
from synctcp_testbed.network.netns import in_netns, sh

SRV_NS, PEER_NS = "owtsp-srv", "owtsp-peer"
SRV_DEV, PEER_DEV = "veth-os", "veth-op"
SRV_IP, PEER_IP = "10.253.0.1", "10.253.0.2"
SRV_MAC, PEER_MAC = "02:53:00:00:00:01", "02:53:00:00:00:02"
PORT = 5400


def del_netns(*names: str) -> None:
    for ns in names:
        sh(["ip", "netns", "del", ns], check=False)


def veth_pair(ns_a: str, dev_a: str, ns_b: str, dev_b: str,
              mac_a: Optional[str] = None, mac_b: Optional[str] = None,
              ipv6: bool = True) -> None:
    """Fresh namespaces ``ns_a`` and ``ns_b`` joined by a veth pair: both ends and lo up,
    TSO/GSO/GRO off (so that segments cross one by one), no IPv4 addresses."""
    del_netns(ns_a, ns_b)
    for ns in (ns_a, ns_b):
        sh(["ip", "netns", "add", ns])
    sh(["ip", "link", "add", dev_a, "netns", ns_a, *(["address", mac_a] if mac_a else []),
        "type", "veth", "peer", "name", dev_b, "netns", ns_b,
        *(["address", mac_b] if mac_b else [])])
    for ns, dev in ((ns_a, dev_a), (ns_b, dev_b)):
        if not ipv6:
            sh(["sysctl", "-qw", f"net.ipv6.conf.{dev}.disable_ipv6=1"], ns=ns)
        sh(["ip", "link", "set", "lo", "up"], ns=ns)
        sh(["ip", "link", "set", dev, "up"], ns=ns)
        sh(["ethtool", "-K", dev, "tso", "off", "gso", "off", "gro", "off"], ns=ns)


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
    try:
        veth_pair(SRV_NS, SRV_DEV, PEER_NS, PEER_DEV, SRV_MAC, PEER_MAC, ipv6=False)
        sh(["ip", "addr", "add", f"{SRV_IP}/24", "dev", SRV_DEV], ns=SRV_NS)
        assert "inet " not in sh(["ip", "-4", "addr", "show", "dev", PEER_DEV],
                                 ns=PEER_NS).stdout
        yield OwtsNet()
    finally:
        del_netns(SRV_NS, PEER_NS)


@dataclass
class Server:
    """A kernel listener at ``addr:port`` in namespace ``ns`` that reads one connection
    to EOF, counting the bytes (``got``) and, with ``keep``, keeping them (``data``).
    ``sockopts`` (level, name, value) are set on the listener before it listens."""

    ns: str
    addr: str
    port: int
    keep: bool = True
    sockopts: Tuple[Tuple[int, int, int], ...] = ()
    got: int = 0
    data: bytearray = field(default_factory=bytearray)
    error: Optional[str] = None
    done: threading.Event = field(default_factory=threading.Event)

    def start(self) -> "Server":
        with in_netns(self.ns):
            self.lsock = socket.socket()
        self.lsock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        for level, name, value in self.sockopts:
            self.lsock.setsockopt(level, name, value)
        self.lsock.bind((self.addr, self.port))
        self.lsock.listen(1)
        # generous: on a real-time VM (TCG) of a busy host the peer can take
        # many seconds to reach its SYN, and a closed listener answers RST
        self.lsock.settimeout(120)
        threading.Thread(target=self._run, daemon=True).start()
        return self

    def _run(self) -> None:
        try:
            conn, _ = self.lsock.accept()
            conn.settimeout(30)
            with conn:
                for _ in range(10_000_000):        # bounded: ends at EOF or timeout
                    chunk = conn.recv(65536)
                    if not chunk:
                        break
                    self.got += len(chunk)
                    if self.keep:
                        self.data += chunk
        except OSError as exc:
            self.error = str(exc)
        finally:
            self.lsock.close()
            self.done.set()

    def finish(self, timeout: float = 30) -> int:
        """Wait for EOF (or the server's error, or ``timeout``); the bytes received."""
        self.done.wait(timeout)
        return self.got


_port = [PORT]


def server() -> Server:
    _port[0] += 1
    return Server(SRV_NS, SRV_IP, _port[0]).start()


def peer_for(net: OwtsNet, srv: Server) -> FakePeer:
    return FakePeer(net.peer_dev, net.peer_ip, net.peer_mac, net.srv_ip, net.srv_mac, srv.port,
                    netns=net.peer_ns)


def acked(segs: List[Segment], peer: FakePeer) -> bool:
    return any(s.has(ACK) and s.ack == peer.snd_nxt for s in segs)
