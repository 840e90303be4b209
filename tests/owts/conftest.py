"""Tests of the one-way-timestamp option in a kernel with the tcp_option/ patches.

``make -C tcp_option test`` (and ``make test``) boots the patched test
kernel in a virtme-ng VM and runs these; anywhere else (no
``net.ipv4.tcp_owts``) they are skipped with the reason.

The stack tests use two namespaces on one kernel, whose clocks are the same
clock: the OTT the option measures is then exact up to the time the stack
takes between writing the option and parsing it at the other end.

    netns owa: veth-owa 10.254.0.1  --netem 20 ms-->  netns owb: veth-owb 10.254.0.2
                                    <--netem  5 ms--
"""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import threading
from dataclasses import dataclass
from pathlib import Path
from typing import Dict, Iterator, Optional

import pytest

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "tests" / "kernel"))       # owtsnet (the fake peer's network)
RESULTS = ROOT / "results" / "owts-tests"
OWTS_SYSCTL = Path("/proc/sys/net/ipv4/tcp_owts")
KMOD = Path(os.environ.get("SYNCTCP_OWTS_KMOD", ROOT / "kmod"))

A_NS, B_NS = "owa", "owb"
A_DEV, B_DEV = "veth-owa", "veth-owb"
A_IP, B_IP = "10.254.0.1", "10.254.0.2"
FWD_MS, REV_MS = 20.0, 5.0


def pytest_collection_modifyitems(config: pytest.Config, items: list) -> None:
    reason = None
    if os.geteuid() != 0:
        reason = "needs root"
    elif not OWTS_SYSCTL.exists():
        reason = "needs the kernel with the tcp_option/ patches (make -C tcp_option test)"
    if reason:
        for item in items:
            item.add_marker(pytest.mark.skip(reason=reason))


def run(*cmd: str, ns: Optional[str] = None, check: bool = True,
        timeout: float = 60) -> subprocess.CompletedProcess:
    full = (["ip", "netns", "exec", ns] if ns else []) + list(cmd)
    res = subprocess.run(full, capture_output=True, text=True, timeout=timeout)
    if check and res.returncode:
        raise RuntimeError(f"{' '.join(full)}: {res.stderr.strip()}")
    return res


def netstat(ns: str) -> Dict[str, int]:
    """TcpExt counters of a namespace (/proc/net/netstat read inside it)."""
    lines = run("cat", "/proc/net/netstat", ns=ns).stdout.splitlines()
    out: Dict[str, int] = {}
    for names, values in zip(lines[::2], lines[1::2]):
        if names.startswith("TcpExt:"):
            out.update(zip(names.split()[1:], map(int, values.split()[1:])))
    return out


def owts_counters(ns: str) -> Dict[str, int]:
    c = netstat(ns)
    return {k: c[k] for k in ("TCPOWTSIn", "TCPOWTSOut", "TCPOWTSRejected")}


def set_owts(ns: str, on: bool) -> None:
    run("sysctl", "-qw", f"net.ipv4.tcp_owts={int(on)}", ns=ns)


@dataclass
class Pair:
    a: str = A_NS
    b: str = B_NS
    a_dev: str = A_DEV
    b_dev: str = B_DEV
    a_ip: str = A_IP
    b_ip: str = B_IP


def _del() -> None:
    for ns in (A_NS, B_NS):
        run("ip", "netns", "del", ns, check=False)


@pytest.fixture(scope="module")
def pair() -> Iterator[Pair]:
    """Two namespaces, offloads off, netem 20 ms a->b and 5 ms b->a, no rate limit."""
    _del()
    try:
        run("ip", "netns", "add", A_NS)
        run("ip", "netns", "add", B_NS)
        run("ip", "link", "add", A_DEV, "netns", A_NS, "type", "veth", "peer", "name", B_DEV,
            "netns", B_NS)
        for ns, dev, addr, delay in ((A_NS, A_DEV, A_IP, FWD_MS), (B_NS, B_DEV, B_IP, REV_MS)):
            run("ip", "addr", "add", f"{addr}/24", "dev", dev, ns=ns)
            run("ip", "link", "set", "lo", "up", ns=ns)
            run("ip", "link", "set", dev, "up", ns=ns)
            run("ethtool", "-K", dev, "tso", "off", "gso", "off", "gro", "off", ns=ns)
            run("tc", "qdisc", "replace", "dev", dev, "root", "netem", "delay", f"{delay}ms",
                "limit", "100000", ns=ns)
        run("ping", "-c", "1", "-W", "5", B_IP, ns=A_NS)
        yield Pair()
    finally:
        _del()


class Sink:
    """A server in B that accepts one connection on ``port`` and reads it to EOF,
    counting bytes.  ``finish()`` waits for EOF and closes the listener."""

    def __init__(self, pair: Pair, port: int) -> None:
        from synctcp_testbed.topology import in_netns
        with in_netns(pair.b):
            self.ls = socket.socket()
        self.ls.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        self.ls.bind((pair.b_ip, port))
        self.ls.listen(1)
        self.ls.settimeout(20)
        self.got = 0
        self.thread = threading.Thread(target=self._run, daemon=True)
        self.thread.start()

    def _run(self) -> None:
        conn, _ = self.ls.accept()
        conn.settimeout(20)
        with conn:
            for _ in range(10_000_000):         # bounded; ends at EOF
                b = conn.recv(1 << 16)
                if not b:
                    break
                self.got += len(b)

    def finish(self) -> int:
        self.thread.join(30)
        self.ls.close()
        return self.got


@pytest.fixture(scope="session")
def results_dir() -> Path:
    RESULTS.mkdir(parents=True, exist_ok=True)
    return RESULTS


@pytest.fixture(scope="session", autouse=True)
def no_kernel_warnings() -> Iterator[None]:
    """The whole session leaves no WARNING, BUG or Oops in the kernel log."""
    yield
    log = subprocess.run(["dmesg"], capture_output=True, text=True).stdout
    bad = [ln for ln in log.splitlines()
           if any(w in ln for w in ("WARNING:", "BUG:", "Oops", "general protection"))]
    assert not bad, "kernel log:\n" + "\n".join(bad[:20])
