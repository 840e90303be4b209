"""The option's send time includes the EDT hold (issue 15, item 7, the send side).

A sender paced well below the link rate (SO_MAX_PACING_RATE) behind fq:
TCP stamps each segment with its earliest departure time (EDT) and fq holds
it until then, one or more segment times after TCP wrote its header.  The
send time in the option must be the departure, not the header write: else
the receiver measures the pacing hold as forward OTT (a queue that is not
on the path).  Before the fix the send time was the header write.

    netns owa: veth-owa  --fq, no delay-->  netns owb: veth-owb
                         <--netem 5 ms--

The receiver (B's kernel) measures each data segment's OTT and echoes it
on its ACKs; a packet socket on B's interface reads those echoes.  The
forward path has no delay (a veth), so the OTT must stay near zero: well
below one segment time at the pacing rate, which is the least hold a
paced segment sees.
"""

from __future__ import annotations

import json
import socket
import statistics
import threading
import time
from pathlib import Path
from typing import Iterator, List

import pytest

from conftest import FWD_MS, Pair, set_owts, sink
from synctcp.owts_peer import PACKET_OUTGOING, open_packet_socket, parse_frame
from synctcp_testbed.network.netns import in_netns, sh

SO_MAX_PACING_RATE = getattr(socket, "SO_MAX_PACING_RATE", 47)
#: Pacing rate (bytes/s): a 1.5 kB segment every 75 ms, far above the
#: stack's own delays (median about 5 ms in a TCG VM).
PACING_BPS = 20_000
SEGMENT_US = 1500 * 1_000_000 // PACING_BPS
SECONDS = 6.0
PORT = 5391


@pytest.fixture
def fq_sender(pair: Pair) -> Iterator[Pair]:
    """fq (EDT) as A's root qdisc for one test, instead of the 20 ms netem."""
    sh(["tc", "qdisc", "replace", "dev", pair.a_dev, "root", "fq"], ns=pair.a)
    set_owts(pair.a, True)
    set_owts(pair.b, True)
    try:
        yield pair
    finally:
        set_owts(pair.a, False)
        set_owts(pair.b, False)
        sh(["tc", "qdisc", "replace", "dev", pair.a_dev, "root", "netem", "delay", f"{FWD_MS}ms",
            "limit", "100000"], ns=pair.a)


def paced_send(pair: Pair, port: int, seconds: float, errors: List[str]) -> None:
    with in_netns(pair.a):
        cs = socket.socket()
    try:
        with cs:
            cs.setsockopt(socket.SOL_SOCKET, SO_MAX_PACING_RATE, PACING_BPS)
            cs.settimeout(10)
            cs.connect((pair.b_ip, port))
            end = time.monotonic() + seconds
            for _ in range(100_000):
                if time.monotonic() >= end:
                    break
                cs.sendall(b"p" * 1448)
            cs.shutdown(socket.SHUT_WR)
    except OSError as exc:
        errors.append(str(exc))


def test_send_time_includes_the_pacing_hold(fq_sender: Pair, results_dir: Path) -> None:
    pair = fq_sender
    srv = sink(pair, PORT)
    sniff = open_packet_socket(pair.b_dev, netns=pair.b)
    errors: List[str] = []
    sender = threading.Thread(target=paced_send, args=(pair, PORT, SECONDS, errors), daemon=True)
    echoes: List[int] = []
    with sniff:
        sender.start()
        deadline = time.monotonic() + SECONDS + 5
        for _ in range(200_000):
            left = deadline - time.monotonic()
            if left <= 0 or (not sender.is_alive() and srv.done.is_set()):
                break
            sniff.settimeout(min(left, 0.5))
            try:
                frame, addr = sniff.recvfrom(65535)
            except (socket.timeout, BlockingIOError):
                continue
            if addr[2] != PACKET_OUTGOING:
                continue
            seg = parse_frame(frame, time.time())
            if (seg is not None and seg.src == pair.b_ip and seg.sport == PORT
                    and seg.opts.owts is not None and seg.opts.owts.ott_us is not None):
                echoes.append(seg.opts.owts.ott_us)
    sender.join(15)
    srv.finish(15)
    assert not errors, errors
    assert srv.got > 0 and srv.error is None, srv.error
    # The first 10 segments are not paced (tcp_update_skb_after_send): skip
    # the ACKs that echo them.
    paced = echoes[8:]
    (results_dir / "owts-edt-echoes.json").write_text(json.dumps(
        {"pacing_Bps": PACING_BPS, "segment_us": SEGMENT_US, "echoed_ott_us": echoes}) + "\n")
    assert len(paced) >= 20, f"only {len(echoes)} echoed OTTs"
    med = statistics.median(paced)
    # The hold at this rate is one segment time (75 ms) or more for most
    # segments (TSQ lets several wait in fq): with it in the OTT the median
    # is that large (287 ms on the pre-fix kernel, 4 ms after, in a TCG VM).
    assert med < SEGMENT_US / 4, \
        f"median echoed OTT {med} us on a path without delay: the pacing hold " \
        f"({SEGMENT_US} us a segment) counts as forward OTT; {paced[:20]}"
    # Nor is the send time set after the departure, which would shift every
    # OTT below zero.  The 5th percentile, not the minimum: a TCG VM on a
    # busy host shows single outliers (one of -2759 us, and the next run
    # none) that say nothing about where the stamp is taken.
    low = sorted(paced)[len(paced) // 20]
    assert low > -2000, sorted(paced)[:10]
