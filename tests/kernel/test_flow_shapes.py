"""Every module in the flow shapes a host sees besides long cwnd-limited
bulk transfers (issue 28, item 5a; issue 31): a flow limited by the
receiver's window and one limited by the application, on 1 ms and 10 ms
paths, each with the kernel-reports check after it.

At b0ac820 a sync or mixreact flow held to 20 segments by the receiver's
window on 100 Mbit/s and 10 ms raised its cwnd to 2,146,106,154 from the
reverse-path compensation's rounding and the kernel warned in
``tcp_snd_cwnd_set``: nothing here ran such a flow.  A flow that cwnd
does not limit has no evidence of more capacity, so its cwnd may not
grow past twice what it carried (Linux's own slow start stops there): at
most twice the largest window the receiver offered, and no more than
Reno's in the same flow; at most twice Reno's cwnd in the same
application-limited flow.

One sender s1 -> r1 across a dumbbell: 100 Mbit/s, a 200-packet drop-tail
queue, RFC 7323 timestamps on (a 1 kHz peer clock), the receiver's window
clamped (TCP_WINDOW_CLAMP, with a fixed receive buffer) or the sender writing 2,500 bytes every
millisecond (20 Mbit/s).  Reno runs first in the same test, on the same
topology, as the control.  Needs simulated time for its timing (UML).
"""

from __future__ import annotations

import socket
import struct
import subprocess
import threading
import time
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Iterator, List

import pytest

from conftest import REPORT, TCP_CONGESTION, drain, is_loaded, load, pump
from synctcp.modctl import CC_MODULES
from synctcp_testbed.network.qdisc import QueueSpec
from synctcp_testbed.network.netns import in_netns
from synctcp_testbed.network.topology import Topology, dumbbell

MSS = 1448
WINDOW_SEGS = 20
RATE_MBIT = 100
APP_BYTES_PER_MS = 2500          #: 20 Mbit/s
TCP_WINDOW_CLAMP = 10
#: the largest window the receiver can offer: with the clamp set at the
#: handshake it does not scale its window, 65535 bytes (the clamp is
#: reset from the receive buffer when Linux >= 6.7 learns the segments'
#: truesize, until clamp() sets it again)
MAX_WINDOW_SEGS = 65535 // MSS + 1
#: cwnd may pass 2 x the largest flight by the ACKs between two samples
#: (Linux grows while cwnd < 2 x max_packets_out): Reno 93-96 at 46
SLACK_SEGS = 6
#: struct tcp_info: 8 one-byte fields, 24 u32 (unacked is the 5th, snd_cwnd the 19th),
#: then u64 pacing_rate, max_pacing_rate, bytes_acked
TCP_INFO = struct.Struct("<8B24I3Q")


def dmesg_lines() -> List[str]:
    return subprocess.run(["dmesg"], capture_output=True, text=True, check=True).stdout.splitlines()


def new_kernel_reports(before: int) -> List[str]:
    """Reports the kernel logged after line ``before`` of its log, each with 20 lines."""
    lines = dmesg_lines()[before:]
    return ["\n".join(lines[i:i + 20]) for i, line in enumerate(lines) if REPORT.search(line)]


@dataclass
class Shape:
    cc: str
    max_cwnd: int
    goodput_mbit: float
    max_unacked: int


def run_flow(topo: Topology, cc: str, shape: str, seconds: float, port: int) -> Shape:
    """One flow of ``cc`` in ``shape`` ("rwnd" or "app") for ``seconds``: the
    largest cwnd and flight its tcp_info showed (sampled every 10 ms) and
    its goodput."""
    with in_netns(topo.ns("r1")):
        lsock = socket.socket()
    lsock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    if shape == "rwnd":
        # the window clamp: on the listener for the handshake (no window
        # scaling, a first window of WINDOW_SEGS), and again on the
        # connection once data flows (clamp()), because Linux >= 6.7 sets
        # the clamp from the receive buffer when it learns the segments'
        # truesize ratio
        lsock.setsockopt(socket.IPPROTO_TCP, TCP_WINDOW_CLAMP, WINDOW_SEGS * MSS)
    lsock.bind((topo.addr("r1"), port))
    lsock.listen(1)
    with in_netns(topo.ns("s1")):
        snd = socket.socket()
    snd.setsockopt(socket.IPPROTO_TCP, TCP_CONGESTION, cc.encode())
    snd.settimeout(0.5)
    snd.connect((topo.addr("r1"), port))
    lsock.settimeout(10)
    rcv, _ = lsock.accept()
    lsock.close()
    rcv.settimeout(1.0)
    closing = threading.Event()

    def app() -> None:
        buf = b"x" * APP_BYTES_PER_MS
        for _ in range(int(seconds * 1000) + 1000):       # bounded
            if closing.is_set():
                return
            try:
                snd.send(buf)
            except OSError:
                return
            time.sleep(0.001)

    source = threading.Thread(target=pump if shape == "rwnd" else app,
                              args=(snd, closing) if shape == "rwnd" else (), daemon=True)
    sink = threading.Thread(target=drain, args=(rcv, closing), daemon=True)
    sink.start()
    source.start()
    max_cwnd = max_unacked = 0
    first = last = None
    deadline = time.monotonic() + seconds
    for _ in range(int(seconds * 100) + 100):              # bounded: 10 ms apart
        if time.monotonic() >= deadline:
            break
        if shape == "rwnd":
            rcv.setsockopt(socket.IPPROTO_TCP, TCP_WINDOW_CLAMP, WINDOW_SEGS * MSS)
        info = TCP_INFO.unpack_from(snd.getsockopt(socket.IPPROTO_TCP, socket.TCP_INFO,
                                                    TCP_INFO.size))
        unacked, cwnd, acked = info[8 + 4], info[8 + 18], info[8 + 24 + 2]
        max_cwnd, max_unacked = max(max_cwnd, cwnd), max(max_unacked, unacked)
        now = time.monotonic()
        if first is None:
            first = (now, acked)
        last = (now, acked)
        time.sleep(0.01)
    closing.set()
    for s in (snd, rcv):
        s.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
        s.close()
    source.join(timeout=5)
    sink.join(timeout=5)
    assert first and last and last[0] > first[0], "no tcp_info samples"
    goodput = (last[1] - first[1]) * 8 / (last[0] - first[0]) / 1e6
    print(f"{cc:9s} {shape}: largest cwnd {max_cwnd}, largest flight {max_unacked}, "
          f"goodput {goodput:.2f} Mbit/s")
    return Shape(cc, max_cwnd, goodput, max_unacked)


@pytest.fixture(scope="module")
def loaded() -> Iterator[None]:
    for mod in CC_MODULES.values():
        if not is_loaded(mod):
            res = load(mod)
            assert res.returncode == 0, f"insmod {mod}: {res.stderr}"
    yield


_ports = iter(range(5700, 5800))


@dataclass
class Path:
    topo: Topology
    rtt_ms: int


@contextmanager
def built(rtt_ms: int, window: bool) -> Iterator[Path]:
    """The dumbbell (with ``window`` the receiver will clamp its window)."""
    topo = dumbbell([float(rtt_ms)], rate_mbit=RATE_MBIT, queue=QueueSpec("droptail", 200),
                    prefix="fs")
    try:
        topo.build()
        for node in ("s1", "r1"):
            subprocess.run(["ip", "netns", "exec", topo.ns(node), "sysctl", "-qw",
                            "net.ipv4.tcp_no_metrics_save=1"], check=True)
        yield Path(topo, rtt_ms)
    finally:
        topo.teardown()


def seconds_for(cc: str, shape: str, path: Path) -> float:
    """60 s for the case issue 28 names (sync, mixreact, 20 segments, 10 ms); 30 s else."""
    return 60.0 if cc in ("sync", "mixreact") and shape == "rwnd" and path.rtt_ms == 10 else 30.0


@pytest.mark.figures
@pytest.mark.parametrize("rtt_ms", [1, 10], ids=["1ms", "10ms"])
@pytest.mark.parametrize("cc", sorted(CC_MODULES))
def test_receive_window_limited_flow_keeps_cwnd_near_the_window(
        loaded: None, rtt_ms: int, cc: str) -> None:
    mark = len(dmesg_lines())
    with built(rtt_ms, window=True) as path:
        secs = seconds_for(cc, "rwnd", path)
        reno = run_flow(path.topo, "reno", "rwnd", secs, next(_ports))
        mod = run_flow(path.topo, cc, "rwnd", secs, next(_ports))
    # the window limited both: at 10 ms, 20 segments a round trip
    if rtt_ms == 10:
        for r in (reno, mod):
            assert r.goodput_mbit <= 1.05 * WINDOW_SEGS * MSS * 8 / (rtt_ms * 1e3), r
    # no more than twice the flight the receiver ever allowed, as Linux's own
    # slow start (Reno reaches 2 x its flight plus the ACKs of a sample), and
    # no more than Reno in the same flow
    for r in (reno, mod):
        assert r.max_cwnd <= 2 * MAX_WINDOW_SEGS + SLACK_SEGS, \
            f"{r.cc} raised cwnd past twice the largest window: {r}"
    assert mod.max_cwnd <= reno.max_cwnd + SLACK_SEGS, f"{mod} against {reno}"
    reports = new_kernel_reports(mark)
    assert not reports, "\n\n".join(reports)


@pytest.mark.figures
@pytest.mark.parametrize("rtt_ms", [1, 10], ids=["1ms", "10ms"])
@pytest.mark.parametrize("cc", sorted(CC_MODULES))
def test_application_limited_flow_keeps_cwnd_near_renos(
        loaded: None, rtt_ms: int, cc: str) -> None:
    mark = len(dmesg_lines())
    with built(rtt_ms, window=False) as path:
        secs = seconds_for(cc, "app", path)
        reno = run_flow(path.topo, "reno", "app", secs, next(_ports))
        mod = run_flow(path.topo, cc, "app", secs, next(_ports))
    bound = max(2 * reno.max_cwnd, 20)
    assert mod.max_cwnd <= bound, f"{cc}: largest cwnd {mod.max_cwnd} > {bound} (reno {reno})"
    # the application set the rate: both carried what it wrote (20 Mbit/s)
    for r in (reno, mod):
        assert 18 <= r.goodput_mbit <= 21, r
    reports = new_kernel_reports(mark)
    assert not reports, "\n\n".join(reports)
