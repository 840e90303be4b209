"""A receiver cannot steer the sender with its timestamps (issue 28, items
2 and 5b).

At b0ac820 a TSval clock within 1/4 of a known rate was snapped to it: a
receiver whose clock ran at 800 Hz was taken for 1 kHz, its OTT fell
200 ms a second, the ACK path's delay seemed to grow, and the reverse
compensation multiplied cwnd by about e^(0.2 s / RTT) a second: cwnd 100 ->
1.6 * 10^9 in 10 s of a model, with a maximum queuing delay of 0.  The
receiver only acknowledged, honestly.  Now a clock must fit a known rate
within 1/16; 800 Hz fits none, and the connection is RTT-sourced from then
on, saying so in its telemetry (``ts_unfit``).

The receiver is the fake peer of synctcp/owts_peer.py (a user-space TCP
that ACKs every segment, its TS clock at ``ts_hz``); the kernel sender is
a ``sync`` or ``mixreact`` flow through 10 Mbit/s, 10 ms one way and a
100-packet netem queue.  As controls, Reno against the same receiver, and
the module against an honest 1 kHz peer.
"""

from __future__ import annotations

import socket
import struct
import subprocess
import threading
import time
from typing import Any, Dict, Iterator, List

import pytest

pytest.importorskip("scapy", reason="the fake peer needs scapy (make setup)")

from conftest import REPORT, TCP_CONGESTION, is_loaded, load  # noqa: E402
from owtsnet import OwtsNet, owts_net, peer_for  # noqa: E402,F401
from synctcp.diag import list_sockets  # noqa: E402
from synctcp.modctl import CC_MODULES  # noqa: E402
from synctcp_testbed.network.netns import in_netns, sh  # noqa: E402

__all__ = ["owts_net"]       # the fixture, used by name

RATE_MBIT, DELAY_MS, LIMIT_PKTS = 10, 10, 100
SECONDS = 16.0
MSS = 1448
#: struct tcp_info: 8 one-byte fields, then u32s (snd_cwnd is the 19th)
TCP_INFO = struct.Struct("<8B24I3Q")
#: what the path can hold: its BDP and the queue, in segments
PATH_SEGS = RATE_MBIT * 1e6 / 8 * 2 * DELAY_MS / 1e3 / MSS + LIMIT_PKTS


@pytest.fixture(scope="module")
def path(owts_net: OwtsNet) -> Iterator[OwtsNet]:
    """The OWTS network with the server's way to the peer made a bottleneck."""
    for mod in (CC_MODULES["sync"], CC_MODULES["mixreact"]):
        if not is_loaded(mod):
            assert load(mod).returncode == 0, mod
    sh(["tc", "qdisc", "replace", "dev", "veth-os", "root", "netem", "delay", f"{DELAY_MS}ms",
        "rate", f"{RATE_MBIT}mbit", "limit", str(LIMIT_PKTS)], ns=owts_net.srv_ns)
    yield owts_net


_ports = iter(range(5500, 5600))


def run(net: OwtsNet, cc: str, ts_hz: int) -> Dict[str, Any]:
    """A kernel ``cc`` flow to a fake receiver whose TS clock runs at ``ts_hz``."""
    port = next(_ports)
    with in_netns(net.srv_ns):
        lsock = socket.socket()
    lsock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    lsock.setsockopt(socket.IPPROTO_TCP, TCP_CONGESTION, cc.encode())
    lsock.bind((net.srv_ip, port))
    lsock.listen(1)
    lsock.settimeout(60)
    accepted: List[socket.socket] = []
    threading.Thread(target=lambda: accepted.append(lsock.accept()[0]), daemon=True).start()

    class Srv:
        pass

    srv = Srv()
    srv.port = port  # type: ignore[attr-defined]
    peer = peer_for(net, srv)  # type: ignore[arg-type]
    peer.ts_hz = ts_hz
    peer.connect(owts=False)
    for _ in range(100):                                     # bounded wait for accept()
        if accepted:
            break
        peer.pump(0.05)
    assert accepted, "the server did not accept the fake peer's connection"
    snd = accepted[0]
    lsock.close()
    snd.settimeout(0.5)
    closing = threading.Event()

    def source() -> None:
        buf = b"x" * 65536
        for _ in range(1_000_000):                          # bounded: ends at close
            if closing.is_set():
                return
            try:
                snd.send(buf)
            except socket.timeout:
                pass
            except OSError:
                return

    threading.Thread(target=source, daemon=True).start()
    max_cwnd, start = 0, time.monotonic()
    acked0 = acked1 = 0
    t1 = start
    for _ in range(int(SECONDS / 0.05) + 100):             # bounded
        peer.pump(0.05)
        info = TCP_INFO.unpack_from(snd.getsockopt(socket.IPPROTO_TCP, socket.TCP_INFO,
                                                    TCP_INFO.size))
        max_cwnd = max(max_cwnd, info[8 + 18])
        t1, acked1 = time.monotonic(), info[8 + 24 + 2]
        if not acked0 and t1 - start >= 2:
            t0, acked0 = t1, acked1
        if t1 - start >= SECONDS:
            break
    with in_netns(net.srv_ns):
        tele = [s.synctcp for s in list_sockets(cc=[cc]) if s.synctcp and s.sport == port]
    closing.set()
    snd.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
    snd.close()
    peer.close(rst=True)
    goodput = (acked1 - acked0) * 8 / (t1 - t0) / 1e6
    out = {"cc": cc, "ts_hz": ts_hz, "max_cwnd": max_cwnd, "goodput_mbit": goodput,
           "telemetry": tele[0] if tele else None}
    print(f"{cc:9s} receiver TS clock {ts_hz} Hz: largest cwnd {max_cwnd}, goodput "
          f"{goodput:.2f} Mbit/s, telemetry {out['telemetry']}")
    return out


def dmesg() -> List[str]:
    return subprocess.run(["dmesg"], capture_output=True, text=True, check=True).stdout.splitlines()


@pytest.mark.parametrize("cc", ["sync", "mixreact"])
def test_an_800hz_receiver_steers_nothing(path: OwtsNet, cc: str) -> None:
    assert CC_MODULES[cc]
    mark = len(dmesg())
    reno = run(path, "reno", 800)
    honest = run(path, cc, 1000)
    slow = run(path, cc, 800)
    assert honest["telemetry"] and honest["telemetry"]["source"] == "ts"
    assert honest["telemetry"]["peer_clock_hz"] == 1000 and not honest["telemetry"].get("ts_unfit")
    assert slow["telemetry"], "no telemetry of the 800 Hz receiver's flow"
    assert slow["telemetry"]["source"] == "rtt" and slow["telemetry"].get("ts_unfit"), \
        f"an 800 Hz receiver taken for {slow['telemetry']['peer_clock_hz']} Hz"
    # no larger than Reno's own (slow start's overshoot), nor than 4 x what
    # the path holds
    for r in (honest, slow):
        assert r["max_cwnd"] <= max(1.25 * reno["max_cwnd"], 2 * PATH_SEGS), (r, reno)
        assert r["max_cwnd"] <= 4 * PATH_SEGS, r
        assert r["goodput_mbit"] <= RATE_MBIT, r
    reports = [line for line in dmesg()[mark:] if REPORT.search(line)]
    assert not reports, "\n".join(reports)
