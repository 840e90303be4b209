"""No stale OTT on the header-prediction fast path (issue 15, item 8).

With RFC 7323 timestamps off, a pure ACK without options (doff 5) that
matches the header prediction is handled by tcp_rcv_established()'s fast
path, which parses no option.  Before the fix, rx_opt.saw_owts stayed set
from the previous segment, so tcp_owts_fwd_ott() handed the congestion
control module the previous ACK's OTT again, as if this ACK carried it.

Observable: tcp_sync (source auto: the option) on the kernel server, the
data sender; the fake peer is the receiver and chooses the OTT its ACKs
echo.  tcp_sync's estimator drops an OTT farther than 2 srtt + 100 ms from
its minimum, and only SYNCTCP_QDELAY_MAX_REJECTS (64) such samples in a row
move its minimum there (a clock step).  The peer sends one ACK echoing
BASE_OTT_US (the minimum), one echoing an outlier (rejected: 1 in a row),
then many ACKs without any option.  If those count as samples (stale
saw_owts), the 64th moves the minimum to the outlier; if not, the minimum
stays.  Then exactly 62 more option ACKs with the outlier leave it (63 in a
row) and one more moves it: every option ACK counted once, the optionless
ones not at all.  TCPHPAcks shows that the optionless ACKs did take the
fast path (else the test would prove nothing).
"""

from __future__ import annotations

import errno
import socket
import time
from typing import Dict, Iterator, List

import pytest

pytest.importorskip("scapy", reason="the fake peer needs scapy (make setup)")

from conftest import KMOD, netstat, set_owts  # noqa: E402
from owtsnet import SRV_DEV, SRV_NS, OwtsNet, owts_net  # noqa: E402
from synctcp.diag import list_sockets, open_diag_socket  # noqa: E402
from synctcp.modctl import module_of  # noqa: E402
from synctcp.owts_peer import (ACK, PACKET_OUTGOING, FakePeer, Segment, owts_option,  # noqa: E402
                                pad4, parse_frame)
from synctcp_testbed.network.netns import in_netns, sh  # noqa: E402

__all__ = ["owts_net"]       # the fixture, used by name

TCP_CONGESTION = getattr(socket, "TCP_CONGESTION", 13)
MODULE = str(module_of("sync"))
#: The OTT (us) the peer's first ACK echoes: the estimator's minimum.
BASE_OTT_US = 5000
#: An OTT 2 s above it: beyond 2 srtt + 100 ms, so rejected (but < 120 s: a valid option).
OUTLIER_OTT_US = BASE_OTT_US + 2_000_000
#: SYNCTCP_QDELAY_MAX_REJECTS (kmod/core/ott.h): rejected samples in a row that rebase.
MAX_REJECTS = 64
#: Optionless ACKs: more than enough to reach MAX_REJECTS if each counted.
PLAIN_ACKS = MAX_REJECTS + 8
SRV_PORT = 5481


def loaded(name: str) -> bool:
    with open("/proc/modules") as f:
        return any(ln.split()[0] == name for ln in f)


@pytest.fixture(scope="module")
def sync_module() -> Iterator[None]:
    if loaded(MODULE):
        sh(["rmmod", MODULE])
    ko = KMOD / f"{MODULE}.ko"
    assert ko.exists(), f"{ko} missing: make -C tcp_option modules"
    sh(["insmod", str(ko)])
    try:
        with open(f"/sys/module/{MODULE}/parameters/source", "w") as f:
            f.write("auto")
        yield
    finally:
        sh(["rmmod", MODULE], check=False)


def drain(peer: FakePeer, timeout: float) -> List[Segment]:
    """The server's segments for ``timeout`` s, NOT acknowledged (the test ACKs them)."""
    got: List[Segment] = []
    deadline = time.monotonic() + timeout
    for _ in range(FakePeer.MAX_FRAMES_PER_WAIT):
        left = deadline - time.monotonic()
        if left <= 0:
            break
        peer.sock.settimeout(left)
        try:
            frame, addr = peer.sock.recvfrom(65535)
        except (socket.timeout, BlockingIOError):
            break
        if addr[2] == PACKET_OUTGOING:
            continue
        seg = parse_frame(frame, time.time())
        if seg is not None and peer._mine(seg):
            got.append(seg)
    return got


def ack_frames(peer: FakePeer, first: int, count: int, options: bytes) -> List[bytes]:
    """``count`` pure ACKs acknowledging 1 more byte each, from byte ``first`` of the
    server's data on; each carries ``options`` (b"": none, doff 5)."""
    assert peer.irs is not None
    frames = []
    for k in range(first, first + count):
        peer.rcv_nxt = (peer.irs + 1 + k) % (1 << 32)
        frames.append(peer._frame(ACK, options))
    return frames


def telemetry(port: int, sport: int) -> Dict[str, object]:
    """tcp_sync's record of the server's connection with the peer's port ``sport``."""
    with in_netns(SRV_NS):
        ds = open_diag_socket()
    try:
        recs = [s.synctcp for s in list_sockets(cc=["sync"], ds=ds, families=(socket.AF_INET,))
                if s.sport == port and s.dport == sport and s.synctcp]
    finally:
        ds.close()
    assert len(recs) == 1, recs
    return recs[0]


def blast(peer: FakePeer, frames: List[bytes], settle: float = 0.3) -> None:
    for fr in frames:
        peer.send_raw(fr)
    drain(peer, settle)          # the server's answers, if any; lets the ACKs be processed


def test_fast_path_ack_without_option_is_no_ott_sample(owts_net: OwtsNet, sync_module: None) -> None:
    set_owts(SRV_NS, True)
    srv_port = SRV_PORT
    # No ARP in the middle of the test: the peer answers it only while receiving.
    sh(["ip", "neigh", "replace", owts_net.peer_ip, "lladdr", owts_net.peer_mac, "dev", SRV_DEV,
        "nud", "permanent"], ns=SRV_NS)
    with in_netns(SRV_NS):
        lsock = socket.socket()
    with lsock:
        lsock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        lsock.setsockopt(socket.IPPROTO_TCP, TCP_CONGESTION, b"sync")
        lsock.bind((owts_net.srv_ip, srv_port))
        lsock.listen(1)
        lsock.settimeout(10)
        peer = FakePeer(owts_net.peer_dev, owts_net.peer_ip, owts_net.peer_mac, owts_net.srv_ip,
                        owts_net.srv_mac, srv_port, netns=owts_net.peer_ns)
        with peer:
            # Timestamps off: the server's header prediction then matches doff 5.
            peer.connect(owts=True, timestamps=False, ack_options=[owts_option(BASE_OTT_US)])
            assert peer.owts_negotiated and not peer.ts_ok
            conn, _ = lsock.accept()
            with conn:
                assert conn.getsockopt(socket.IPPROTO_TCP, TCP_CONGESTION, 16).rstrip(b"\0") == b"sync"
                conn.setblocking(False)
                try:
                    conn.send(b"d" * 65536)        # the initial window goes out at once
                except OSError as exc:
                    assert exc.errno == errno.EAGAIN, exc
                data = [s for s in drain(peer, 1.0) if s.payload]
                assert data, "the server sent no data"
                sent = max((s.seq - peer.irs - 1) % (1 << 32) + len(s.payload) for s in data)
                assert sent > 2 + PLAIN_ACKS + MAX_REJECTS, sent

                opt_base = pad4(owts_option(BASE_OTT_US))
                # Built before sending: scapy is slow, and each frame's send time
                # (the option's TSval, unused here) need not be fresh.
                first = ack_frames(peer, 1, 1, opt_base)
                outlier = ack_frames(peer, 2, 1, pad4(owts_option(OUTLIER_OTT_US)))
                plain = ack_frames(peer, 3, PLAIN_ACKS, b"")
                k = 3 + PLAIN_ACKS
                more = ack_frames(peer, k, MAX_REJECTS - 2, pad4(owts_option(OUTLIER_OTT_US)))
                last = ack_frames(peer, k + MAX_REJECTS - 2, 1, pad4(owts_option(OUTLIER_OTT_US)))

                blast(peer, first)
                t = telemetry(srv_port, peer.sport)
                assert t["source"] == "option" and t["min_ott_us"] == BASE_OTT_US, t
                blast(peer, outlier)
                t = telemetry(srv_port, peer.sport)
                assert t["min_ott_us"] == BASE_OTT_US, f"one outlier moved the minimum: {t}"

                hp = netstat(SRV_NS)["TCPHPAcks"]
                blast(peer, plain)
                fast = netstat(SRV_NS)["TCPHPAcks"] - hp
                assert fast >= PLAIN_ACKS - 2, \
                    f"only {fast} of {PLAIN_ACKS} optionless ACKs took the fast path"
                t_plain = telemetry(srv_port, peer.sport)

                blast(peer, more)
                t_more = telemetry(srv_port, peer.sport)
                blast(peer, last)
                t_last = telemetry(srv_port, peer.sport)
            peer.close(rst=True)
    # The optionless ACKs are no samples: the minimum did not move to the outlier.
    assert t_plain["min_ott_us"] == BASE_OTT_US, \
        f"{PLAIN_ACKS} ACKs without an option counted as OTT samples (stale saw_owts): {t_plain}"
    # Each option ACK is one sample: 1 + 62 rejections keep the minimum, the 64th moves it.
    assert t_more["min_ott_us"] == BASE_OTT_US, t_more
    assert t_last["min_ott_us"] == OUTLIER_OTT_US, t_last
