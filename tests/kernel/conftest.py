"""Fixtures of the kernel tests: they need a kernel that can load modules.

``make kernel-test`` runs them in a virtme-ng VM (scripts/vmrun) or, on a
host that can load modules, natively as root.  Outside such a kernel they
are skipped with the reason, never silently passed.
"""

from __future__ import annotations

import json
import os
import socket
import subprocess
import threading
import time
from contextlib import contextmanager
from pathlib import Path
from typing import Any, Dict, Iterator, List, Sequence

from synctcp_testbed.dumbbell import Dumbbell, DumbbellConfig, RunResult

import pytest

ROOT = Path(__file__).resolve().parents[2]
KMOD = ROOT / "kmod"
RESULTS = ROOT / "results" / "kernel-tests"
TCP_CONGESTION = getattr(socket, "TCP_CONGESTION", 13)
SYSCTL_CC = Path("/proc/sys/net/ipv4/tcp_congestion_control")
AVAILABLE_CC = Path("/proc/sys/net/ipv4/tcp_available_congestion_control")


def pytest_collection_modifyitems(config: pytest.Config, items: list) -> None:
    if os.geteuid() != 0 or not Path("/proc/modules").exists():
        skip = pytest.mark.skip(reason="needs root and a kernel with module support (make kernel-test)")
        for item in items:
            item.add_marker(skip)


def sh(*cmd: str, check: bool = True) -> subprocess.CompletedProcess:
    return subprocess.run(cmd, capture_output=True, text=True, check=check)


def is_loaded(name: str) -> bool:
    return any(line.split()[0] == name for line in Path("/proc/modules").read_text().splitlines())


def load(name: str, *params: str) -> subprocess.CompletedProcess:
    """insmod kmod/NAME.ko (not raising: callers check returncode)."""
    return sh("insmod", str(KMOD / f"{name}.ko"), *params, check=False)


def unload(name: str) -> subprocess.CompletedProcess:
    return sh("rmmod", name, check=False)


@pytest.fixture
def module_loaded(request: pytest.FixtureRequest) -> Iterator[str]:
    """The module named by the test's ``module`` marker, loaded fresh."""
    marker = request.node.get_closest_marker("module")
    name = marker.args[0] if marker else "tcp_sync"
    if is_loaded(name):
        unload(name)
    res = load(name)
    assert res.returncode == 0, f"insmod {name}: {res.stderr}"
    yield name
    old = SYSCTL_CC.read_text().strip()
    if old in ("sync", "mixreact", "etcp"):
        SYSCTL_CC.write_text("cubic")
    unload(name)


@pytest.fixture(scope="session")
def results_dir() -> Path:
    RESULTS.mkdir(parents=True, exist_ok=True)
    return RESULTS


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line("markers", "module(name): kernel module the test loads")


def sock_cc(s: socket.socket) -> bytes:
    """The socket's congestion control, as getsockopt(TCP_CONGESTION) says."""
    return s.getsockopt(socket.IPPROTO_TCP, TCP_CONGESTION, 16).rstrip(b"\0")


@contextmanager
def loopback_transfer(cc: str, seconds: float = 30) -> Iterator[socket.socket]:
    """A bulk transfer over loopback from a socket using ``cc``, for at most
    ``seconds``; yields the sending socket and closes everything after."""
    stop = threading.Event()
    srv = socket.socket()
    srv.bind(("127.0.0.1", 0))
    srv.listen(1)
    cli = socket.socket()
    cli.setsockopt(socket.IPPROTO_TCP, TCP_CONGESTION, cc.encode())
    cli.connect(srv.getsockname())
    peer, _ = srv.accept()

    def sink() -> None:
        while peer.recv(65536):
            pass

    def source() -> None:
        buf = b"x" * 65536
        deadline = time.monotonic() + seconds
        try:
            while not stop.is_set() and time.monotonic() < deadline:
                cli.send(buf)
        except OSError:
            pass

    threads = [threading.Thread(target=sink, daemon=True),
               threading.Thread(target=source, daemon=True)]
    for t in threads:
        t.start()
    try:
        yield cli
    finally:
        stop.set()
        cli.close()
        for t in threads:
            t.join(timeout=5)
        peer.close()
        srv.close()


def unload_when_idle(name: str, timeout: float = 10) -> bool:
    """rmmod, retrying while closing sockets (FIN states) still hold it."""
    deadline = time.monotonic() + timeout
    while unload(name).returncode != 0:
        if time.monotonic() > deadline:
            return False
        time.sleep(0.2)
    return True


def run_comparison(ccs: Sequence[str], cfg: DumbbellConfig, flows: int, seconds: float,
                   results_dir: Path, name: str) -> Dict[str, RunResult]:
    """Each of ``ccs`` alone through one dumbbell (same boot, same links);
    the figures go to ``results_dir/NAME.json`` and to the test's output."""
    res: Dict[str, RunResult] = {}
    with Dumbbell(cfg) as db:
        for cc in ccs:
            res[cc] = db.run_bulk(cc, flows=flows, seconds=seconds, outdir=results_dir / name)
    summary = {cc: {"goodput_mbit": r.goodput_mbit, "retransmits": r.retransmits,
                    "queue": r.queue.__dict__} for cc, r in res.items()}
    (results_dir / f"{name}.json").write_text(json.dumps(summary, indent=2))
    print()
    for cc, r in res.items():
        print(f"{cc:9s} goodput {r.goodput_mbit:.2f} Mbit/s, mean queue {r.queue.mean_pkts:.1f} pkts, "
              f"drops {r.queue.drop_pct:.2f}%, {r.queue.samples} samples at {r.queue.sample_hz:.0f} Hz")
    return res


def data_flow_telemetry(result: RunResult, min_bytes: int = 1_000_000) -> List[Dict[str, Any]]:
    """synctcp records sampled from the run's data flows (iperf3's control
    connection carries almost nothing and is left out)."""
    return [s["synctcp"] for snap in result.telemetry for s in snap["sockets"]
            if s.get("synctcp") and s["tcp_info"].get("bytes_acked", 0) > min_bytes]
