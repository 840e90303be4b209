"""Fixtures of the kernel tests: they need a kernel that can load modules.

``make kernel-test`` runs them in a virtme-ng VM (scripts/vmrun) or, on a
host that can load modules, natively as root.  Outside such a kernel they
are skipped with the reason, never silently passed.
"""

from __future__ import annotations

import gzip
import json
import os
import re
import socket
import struct
import subprocess
import threading
import time
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Dict, Iterator, List, Sequence

from synctcp.modctl import CC_MODULES
from synctcp_testbed.analysis.rundir import Bottleneck, CaseSummary, load_run
from synctcp_testbed.platform.run import run_scenario
from synctcp_testbed.scenario import bulk_dumbbell, load as load_scenario

import pytest

ROOT = Path(__file__).resolve().parents[2]
KMOD = ROOT / "kmod"
#: where the tests write their figures; scripts/own-instances gives each
#: instance the same empty directory (what an earlier test left there moved
#: a later one's figures)
RESULTS = Path(os.environ.get("SYNCTCP_KERNEL_RESULTS") or ROOT / "results" / "kernel-tests")
TCP_CONGESTION = getattr(socket, "TCP_CONGESTION", 13)
#: the first line of every report the kernel's checkers print
REPORT = re.compile(
    r"WARNING: |BUG: |UBSAN: |KASAN: |kernel BUG at|Oops|general protection fault|"
    r"possible circular locking dependency|possible recursive locking|"
    r"inconsistent lock state|suspicious RCU usage|"
    r"sleeping function called from invalid context|INFO: task .* blocked|"
    r"unreferenced object|refcount_t: |list_add corruption|list_del corruption")

SYSCTL_CC = Path("/proc/sys/net/ipv4/tcp_congestion_control")
AVAILABLE_CC = Path("/proc/sys/net/ipv4/tcp_available_congestion_control")


def debug_kernel() -> bool:
    """Is this the debug kernel (KASAN etc., make kernel-test-debug)?"""
    try:
        with gzip.open("/proc/config.gz", "rt") as f:
            return "CONFIG_KASAN=y" in f.read()
    except OSError:
        return False


DEBUG_KERNEL = debug_kernel()


def pytest_collection_modifyitems(config: pytest.Config, items: list) -> None:
    if os.geteuid() != 0 or not Path("/proc/modules").exists():
        skip = pytest.mark.skip(reason="needs root and a kernel with module support (make kernel-test)")
        for item in items:
            item.add_marker(skip)
    if DEBUG_KERNEL:
        heavy = pytest.mark.skip(
            reason="the debug kernel's checkers make a packet cost 10-20x the wall time: "
                   "50-100 Mbit/s for minutes would take hours (make kernel-test runs it)")
        for item in items:
            if item.get_closest_marker("heavy"):
                item.add_marker(heavy)


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
    name = marker.args[0] if marker else CC_MODULES["sync"]
    fresh = True
    if is_loaded(name) and not unload_when_idle(name, timeout=60):
        # An earlier test's sockets still hold it.  Seen on UML 6.1 after a
        # runner comparison: orphaned sockets of its deleted namespaces,
        # retransmitting into no device until their retries run out (open,
        # docs/hardening.md).  The tests that need it gone (rmmod, insmod
        # with bad parameters) check that themselves; the others use it as
        # loaded, with the parameters the earlier tests restored.
        refs = (Path("/sys/module") / name / "refcnt").read_text().strip()
        print(f"module_loaded: {name} still held ({refs} references) after 60 s; reused")
        fresh = False
    if fresh:
        res = load(name)
        assert res.returncode == 0, f"insmod {name}: {res.stderr}"
    yield name
    old = SYSCTL_CC.read_text().strip()
    if old in CC_MODULES:
        SYSCTL_CC.write_text("cubic")
    unload(name)


@pytest.fixture(scope="session")
def results_dir() -> Path:
    RESULTS.mkdir(parents=True, exist_ok=True)
    return RESULTS


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line("markers", "module(name): kernel module the test loads")
    config.addinivalue_line("markers", "figures: compares measured figures; make kernel-test runs "
                            "it in a UML instance of its own (scripts/own-instances)")
    config.addinivalue_line("markers", "heavy: minutes of 50-100 Mbit/s traffic; skipped on "
                            "the debug kernel")


def sock_cc(s: socket.socket) -> bytes:
    """The socket's congestion control, as getsockopt(TCP_CONGESTION) says."""
    return s.getsockopt(socket.IPPROTO_TCP, TCP_CONGESTION, 16).rstrip(b"\0")


@contextmanager
def loopback_transfer(cc: str, seconds: float = 30) -> Iterator[socket.socket]:
    """A bulk transfer over loopback (at most 20 Mbit/s) from a socket using
    ``cc``, for at most ``seconds``; yields the sending socket and closes
    everything after."""
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
        # at most 20 Mbit/s: on simulated time (UML) an unpaced loopback
        # transfer moves as much as the CPU can in no simulated time, and
        # on the debug kernel a fraction of a simulated second takes hours
        buf = b"x" * 65536
        deadline = time.monotonic() + seconds
        try:
            while not stop.is_set() and time.monotonic() < deadline:
                cli.send(buf)
                time.sleep(len(buf) * 8 / 20e6)
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


@dataclass
class CcResult:
    """One algorithm's case of a comparison, read back from its run directory."""

    cc: str
    summary: CaseSummary
    #: the forward bottleneck ``lr``: samples, mean_pkts, utilization, drop_pct, ...
    queue: Bottleneck
    #: the senders' inet_diag samples: ``{"t", "sockets": [...]}`` per line of tcp-NODE.jsonl
    telemetry: List[Dict[str, Any]]

    @property
    def goodput_mbit(self) -> float:
        return self.summary.goodput_mbit or 0.0

    @property
    def retransmits(self) -> int:
        return self.summary.retransmits or 0


def run_comparison(ccs: Sequence[str], rate_mbit: float, rtt_ms: float, queue_pkts: int,
                   flows: int, seconds: float, results_dir: Path, name: str) -> Dict[str, CcResult]:
    """Each of ``ccs`` alone through a dumbbell, built afresh for each (the
    testbed's runner, same boot): ``flows`` bulk flows of base RTT ``rtt_ms``
    through ``rate_mbit`` and a ``queue_pkts`` drop-tail queue, measured over
    ``seconds`` after a warm-up.  The run directory is ``results_dir/NAME``;
    the figures also go to ``results_dir/NAME.json`` and the test's output."""
    sc = bulk_dumbbell(name.replace("_", "-"), list(ccs), rate_mbit, rtt_ms, queue_pkts, flows,
                       seconds)
    run = load_run(run_scenario(sc, out=results_dir / name, log=print))
    res: Dict[str, CcResult] = {}
    for case in run.cases:
        queue = case.summary.bottleneck("lr")
        assert queue is not None, f"{case.id}: no lr bottleneck in {run.path}/summary.json"
        res[case.summary.cc] = CcResult(case.summary.cc, case.summary, queue,
                                        [{"t": s.t, "sockets": s.sockets}
                                         for s in case.tcp_samples()])
    assert list(res) == list(ccs), f"{run.path}: cases {list(res)}, not {list(ccs)}"
    summary = {cc: {"goodput_mbit": r.goodput_mbit, "retransmits": r.retransmits,
                    "queue_pkts": queue_pkts, "queue": r.queue.raw} for cc, r in res.items()}
    (results_dir / f"{name}.json").write_text(json.dumps(summary, indent=2))
    print()
    for cc, r in res.items():
        q = r.queue
        print(f"{cc:9s} goodput {r.goodput_mbit:.2f} Mbit/s, utilization {q.utilization:.3f}, "
              f"mean queue {q.mean_pkts:.1f} pkts, drops {q.drop_pct:.2f}%, "
              f"{q.samples} samples at {q.sample_hz:.0f} Hz")
    return res


def pump(sock: socket.socket, closing: threading.Event,
         gate: "threading.Event | None" = None) -> None:
    """Send 64 KiB buffers on ``sock`` until ``closing`` is set or the
    socket fails (a thread's loop; bounded); with ``gate``, only while it
    is set.  The socket has a timeout, so that closing is seen."""
    buf = b"x" * (1 << 16)
    for _ in range(10_000_000):
        if closing.is_set():
            return
        if gate is not None and not gate.wait(0.2):
            continue
        try:
            sock.send(buf)
        except socket.timeout:
            pass
        except OSError:
            return


def drain(sock: socket.socket, closing: threading.Event) -> None:
    """Read ``sock`` until EOF, an error, or ``closing`` (a thread's loop;
    bounded).  The socket has a timeout, so that closing is seen."""
    for _ in range(10_000_000):
        try:
            if not sock.recv(1 << 16):
                return
        except socket.timeout:
            if closing.is_set():
                return
        except OSError:
            return


class SyncFlow:
    """One sync connection from ``s1`` to ``receiver`` of a topology built
    by the test, sending as fast as it may (while ``gate`` is set, if one is
    given), with the receiving socket at hand (``rcv``) and the sender's
    telemetry on demand.  ``close()`` aborts it (RST), so that a connection
    a test left stalled does not hold the module for the next test."""

    def __init__(self, topo: Any, receiver: str, port: int,
                 gate: "threading.Event | None" = None) -> None:
        from synctcp_testbed.network.netns import in_netns

        self.topo, self.closing, self.gate = topo, threading.Event(), gate
        self._in_netns = in_netns
        with in_netns(topo.ns(receiver)):
            lsock = socket.socket()
        lsock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        lsock.bind((topo.addr(receiver), port))
        lsock.listen(1)
        with in_netns(topo.ns("s1")):
            self.snd = socket.socket()
        self.snd.setsockopt(socket.IPPROTO_TCP, TCP_CONGESTION, b"sync")
        self.snd.settimeout(0.5)
        self.snd.connect((topo.addr(receiver), port))
        #: when the first data was handed to the socket (0 until then)
        self.t_first_send = 0.0
        lsock.settimeout(10)
        self.rcv, _ = lsock.accept()
        lsock.close()
        self.rcv.settimeout(1.0)
        self.sport = self.snd.getsockname()[1]
        self.threads = [threading.Thread(target=self._source, daemon=True),
                        threading.Thread(target=drain, args=(self.rcv, self.closing),
                                         daemon=True)]
        for t in self.threads:
            t.start()

    def _source(self) -> None:
        if self.gate is not None:
            for _ in range(1_000_000):              # bounded: ends at close
                if self.gate.wait(0.2) or self.closing.is_set():
                    break
        self.t_first_send = time.monotonic()
        pump(self.snd, self.closing, gate=self.gate)

    def telemetry(self) -> Dict[str, Any]:
        """The sender's tcp_info and synctcp telemetry (inet_diag)."""
        from synctcp.diag import list_sockets

        with self._in_netns(self.topo.ns("s1")):
            socks = [s for s in list_sockets(cc=["sync"]) if s.sport == self.sport]
        assert socks and socks[0].synctcp, f"no sync telemetry for port {self.sport}"
        return {"tcp_info": socks[0].tcp_info, **socks[0].synctcp}

    def close(self) -> None:
        self.closing.set()
        for s in (self.snd, self.rcv):
            s.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
            s.close()
        for t in self.threads:
            t.join(timeout=5)


def nginx_conf(tmp: Path, addr: str, connections: int) -> str:
    """An nginx configuration serving ``tmp/www`` on ``addr``:8080 with
    everything of its own under ``tmp`` (the testbed's, synctcp_testbed.traffic.nginx)."""
    from synctcp_testbed.traffic.nginx import conf

    return conf(tmp, addr, connections)


def run_reverse_path(cc: str, results_dir: Path) -> Dict[str, Any]:
    """The reverse-path-10 preset (docs/reverse-path.md) for reno and ``cc``:
    3 forward flows through 10 Mbit/s, 50 ms and 80-packet queues, without
    and with 3 CUBIC flows loading the ACK path.  Returns, per "CC-revoff"
    and "CC-revon", the forward goodput and the forward queue's mean, and
    prints them."""
    name = f"reverse_path_{cc}"
    run = load_run(run_scenario(load_scenario("reverse-path-10"), out=results_dir / name,
                                ccs=["reno", cc], log=print))
    res: Dict[str, Any] = {}
    for case in run.cases:
        lr = case.summary.bottleneck("lr")
        assert lr is not None, f"{case.id}: no lr bottleneck in {run.path}/summary.json"
        key = f"{case.summary.cc}-{case.id.rsplit('-', 1)[1]}"
        res[key] = {"goodput_mbit": case.summary.goodput_mbit or 0.0,
                    "queue_pkts": lr.mean_pkts}
    (results_dir / f"{name}.json").write_text(json.dumps(res, indent=2))
    print()
    for key, r in res.items():
        print(f"{key:16s} goodput {r['goodput_mbit']:.2f} Mbit/s, "
              f"mean forward queue {r['queue_pkts']:.1f} pkts")
    assert set(res) == {f"{c}-{r}" for c in ("reno", cc) for r in ("revoff", "revon")}, res
    return res


def data_flow_telemetry(result: CcResult, min_bytes: int = 1_000_000) -> List[Dict[str, Any]]:
    """synctcp records sampled from the run's data flows (iperf3's control
    connection carries almost nothing and is left out)."""
    return [s["synctcp"] for snap in result.telemetry for s in snap["sockets"]
            if s.get("synctcp") and s["tcp_info"].get("bytes_acked", 0) > min_bytes]
