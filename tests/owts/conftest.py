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
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Dict, Iterator

import pytest

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "tests" / "kernel"))       # owtsnet (the fake peer's network)
from owtsnet import Server, del_netns, veth_pair  # noqa: E402
from synctcp_testbed.network.netns import sh  # noqa: E402
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


def netstat(ns: str) -> Dict[str, int]:
    """TcpExt counters of a namespace (/proc/net/netstat read inside it)."""
    lines = sh(["cat", "/proc/net/netstat"], ns=ns).stdout.splitlines()
    out: Dict[str, int] = {}
    for names, values in zip(lines[::2], lines[1::2]):
        if names.startswith("TcpExt:"):
            out.update(zip(names.split()[1:], map(int, values.split()[1:])))
    return out


def owts_counters(ns: str) -> Dict[str, int]:
    c = netstat(ns)
    return {k: c[k] for k in ("TCPOWTSIn", "TCPOWTSOut", "TCPOWTSRejected")}


def set_owts(ns: str, on: bool) -> None:
    sh(["sysctl", "-qw", f"net.ipv4.tcp_owts={int(on)}"], ns=ns)


@dataclass
class Pair:
    a: str = A_NS
    b: str = B_NS
    a_dev: str = A_DEV
    b_dev: str = B_DEV
    a_ip: str = A_IP
    b_ip: str = B_IP


@pytest.fixture(scope="module")
def pair() -> Iterator[Pair]:
    """Two namespaces, offloads off, netem 20 ms a->b and 5 ms b->a, no rate limit."""
    try:
        veth_pair(A_NS, A_DEV, B_NS, B_DEV)
        for ns, dev, addr, delay in ((A_NS, A_DEV, A_IP, FWD_MS), (B_NS, B_DEV, B_IP, REV_MS)):
            sh(["ip", "addr", "add", f"{addr}/24", "dev", dev], ns=ns)
            sh(["tc", "qdisc", "replace", "dev", dev, "root", "netem", "delay", f"{delay}ms",
                "limit", "100000"], ns=ns)
        sh(["ping", "-c", "1", "-W", "5", B_IP], ns=A_NS)
        yield Pair()
    finally:
        del_netns(A_NS, B_NS)


def sink(pair: Pair, port: int, **kw: Any) -> Server:
    """A server in B that reads one connection on ``port`` to EOF, counting bytes
    (``kw``: more fields of :class:`owtsnet.Server`)."""
    return Server(pair.b, pair.b_ip, port, keep=False, **kw).start()


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
