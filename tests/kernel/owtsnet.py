"""Network of the OWTS tests: a kernel server and a fake peer (synctcp/owts_peer.py).

    netns owtsp-srv: veth-os 10.253.0.1/24   <->   netns owtsp-peer: veth-op (no address)

Used by tests/kernel/test_owts_peer.py (unpatched kernel) and tests/owts/
(the kernel with the tcp_option/ patches).  Test modules import the
``owts_net`` fixture from here.
"""

from __future__ import annotations

import socket
import subprocess
import threading
from dataclasses import dataclass, field
from typing import Iterator, List, Optional

import pytest

from synctcp.owts_peer import ACK, FakePeer, Segment
from synctcp_testbed.topology import in_netns

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
