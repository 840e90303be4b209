"""Malformed one-way-timestamp options against a patched kernel server.

A fake peer (tools/synctcp/owts_peer.py, scapy on a packet socket) puts
the option bytes on the wire that the kernel itself never would.  Each
case sends good, bad, good, bad, good segments: the server must ACK every
one, deliver the data intact, count each bad option in TCPOWTSRejected
(never in TCPOWTSIn), echo after a bad one the OTT of the last good one
(a rejected option changes nothing) and a new measured OTT after the next
good one; and the kernel log stays clean (conftest).

An off-path forger, who knows the 4-tuple but not the sequence numbers,
cannot choose the OTT the server echoes: a segment that fails the sequence
check changes nothing, as it changes nothing of ts_recent.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Dict, List, Optional

import pytest

pytest.importorskip("scapy", reason="the fake peer needs scapy (make setup)")

from conftest import owts_counters, set_owts  # noqa: E402
from owtsnet import SRV_NS, OwtsNet, acked, owts_net, peer_for, server  # noqa: E402
from synctcp.owts_peer import (MALFORMED, MOD, FakePeer, Segment, flags_of,  # noqa: E402
                                now_tsval, owts_option, syn_options)
from synctcp_testbed.network.netns import sh  # noqa: E402

__all__ = ["owts_net"]       # the fixture, used by name
#: A send time this far in the past: the server must echo about this OTT.
CLAIMED_OTT_US = 7000
#: The OTT a forged segment claims: far from CLAIMED_OTT_US.
FORGED_OTT_US = 90_000
#: Rejected options per bad segment (a repeated option: its second copy).
REJECTS = {name: 1 for name in MALFORMED}


@pytest.fixture(autouse=True)
def server_owts_on(owts_net: OwtsNet) -> None:
    set_owts(SRV_NS, True)


def good() -> bytes:
    return owts_option(tsval_us=(now_tsval() - CLAIMED_OTT_US) % (1 << 32))


def echoed(segs: List[Segment], peer: FakePeer) -> List[Optional[int]]:
    """ott_us of the server's segments that ACK all our data (None: 'none')."""
    out = []
    for s in segs:
        if s.ack == peer.snd_nxt and s.opts.owts is not None:
            out.append(s.opts.owts.ott_us)
    return out


def test_good_option_is_measured_and_echoed(owts_net: OwtsNet, results_dir: Path) -> None:
    srv = server()
    before = owts_counters(SRV_NS)
    echoes: List[tuple] = []
    with peer_for(owts_net, srv) as peer:
        synack = peer.connect(owts=True)
        assert peer.owts_negotiated
        assert synack.opts.owts is not None and synack.opts.owts.ott_us is None
        for k in range(10):
            t0 = now_tsval()
            segs = peer.send(b"g%d" % k, options=[good()])
            spent = (now_tsval() - t0) % (1 << 32)      # building, sending, the ACK back
            assert acked(segs, peer)
            e = [x for x in echoed(segs, peer) if x is not None]
            assert e, f"no OTT echoed for segment {k}"
            # The server saw the segment after it was stamped and before we had its ACK.
            assert all(CLAIMED_OTT_US <= x <= CLAIMED_OTT_US + spent for x in e), (e, spent)
            echoes += [(x, spent) for x in e]
        peer.close()
    assert srv.done.wait(15) and srv.error is None
    d = {k: v - before[k] for k, v in owts_counters(SRV_NS).items()}
    (results_dir / "owts-peer-echo.json").write_text(json.dumps(
        {"claimed_ott_us": CLAIMED_OTT_US, "echoed_and_peer_time_us": echoes,
         "counters": d}) + "\n")
    assert d["TCPOWTSRejected"] == 0
    assert d["TCPOWTSIn"] >= 11                     # the SYN, ten data segments, the FIN...


@pytest.mark.parametrize("case", sorted(MALFORMED))
def test_malformed_option_is_ignored_and_counted(owts_net: OwtsNet, case: str) -> None:
    srv = server()
    before = owts_counters(SRV_NS)
    sent = b""
    last_good: Optional[int] = None
    with peer_for(owts_net, srv) as peer:
        peer.connect(owts=True)
        assert peer.owts_negotiated
        for k in range(5):
            bad = k % 2 == 1
            data = f"{case}:{k}:".encode() + bytes([65 + k]) * 700
            segs = peer.send(data, options=[MALFORMED[case]() if bad else good()], timeout=5)
            assert acked(segs, peer), f"segment {k} not ACKed"
            e = echoed(segs, peer)
            assert e, f"the server's ACK of segment {k} has no option"
            if bad:
                assert e[-1] == last_good, f"OTT {e[-1]} echoed after a rejected option, not {last_good}"
            else:
                assert e[-1] is not None and e[-1] >= CLAIMED_OTT_US, e
                last_good = e[-1]
            sent += data
        peer.close(timeout=5)
    assert srv.done.wait(15) and srv.error is None, srv.error
    assert bytes(srv.data) == sent
    d = {k: v - before[k] for k, v in owts_counters(SRV_NS).items()}
    assert d["TCPOWTSRejected"] == 2 * REJECTS[case], d


def test_option_on_the_syn_only(owts_net: OwtsNet) -> None:
    """Negotiated, then never sent again: no rejections, data intact, and the
    server goes on carrying the option with no OTT to echo."""
    srv = server()
    before = owts_counters(SRV_NS)
    with peer_for(owts_net, srv) as peer:
        peer.connect(owts=True, ack_options=[])
        for k in range(3):
            segs = peer.send(b"plain%d" % k, options=[])
            assert acked(segs, peer)
            assert echoed(segs, peer) and all(x is None for x in echoed(segs, peer))
        peer.close()
    assert srv.done.wait(15) and bytes(srv.data) == b"plain0plain1plain2"
    d = {k: v - before[k] for k, v in owts_counters(SRV_NS).items()}
    # The SYN, the peer's FIN and its ACK of the server's FIN carry it (the
    # peer's default when closing); none of the data segments does.
    assert d["TCPOWTSRejected"] == 0 and d["TCPOWTSIn"] <= 3, d


def test_option_without_negotiation_is_rejected(owts_net: OwtsNet) -> None:
    """A peer that did not offer it on its SYN gets no option on the SYN-ACK,
    and every option it sends afterwards is rejected and counted."""
    srv = server()
    before = owts_counters(SRV_NS)
    with peer_for(owts_net, srv) as peer:
        synack = peer.connect(owts=False)
        assert synack.opts.owts_count == 0 and not peer.owts_negotiated
        for k in range(3):
            segs = peer.send(b"x%d" % k, options=[good()])
            assert acked(segs, peer)
        peer.close()
    assert srv.done.wait(15) and bytes(srv.data) == b"x0x1x2"
    assert not any(s.opts.owts_count for s in peer.received)
    d = {k: v - before[k] for k, v in owts_counters(SRV_NS).items()}
    assert d["TCPOWTSRejected"] == 3 and d["TCPOWTSIn"] == 0, d


def test_server_off_ignores_the_offer(owts_net: OwtsNet) -> None:
    set_owts(SRV_NS, False)
    srv = server()
    before = owts_counters(SRV_NS)
    with peer_for(owts_net, srv) as peer:
        synack = peer.connect(owts=True)
        assert synack.opts.owts_count == 0
        assert acked(peer.send(b"off", options=[]), peer)
        peer.close()
    assert srv.done.wait(15) and bytes(srv.data) == b"off"
    d: Dict[str, int] = {k: v - before[k] for k, v in owts_counters(SRV_NS).items()}
    assert d == {"TCPOWTSIn": 0, "TCPOWTSOut": 0, "TCPOWTSRejected": 0}


def test_out_of_window_option_does_not_change_the_echo(owts_net: OwtsNet) -> None:
    """Segments outside the receive window, with a valid option claiming a
    far larger OTT, are dropped by the sequence check: the duplicate ACKs the
    server answers them with, and its ACK of the next valid segment (which
    has no option), echo the OTT of the last valid segment."""
    srv = server()
    forged = []
    with peer_for(owts_net, srv) as peer:
        peer.connect(owts=True)
        e = [x for x in echoed(peer.send(b"valid", options=[good()]), peer) if x is not None]
        assert e and CLAIMED_OTT_US <= e[-1] < FORGED_OTT_US, e
        first = e[-1]
        for off in (1 << 30, -(1 << 30), 1 << 20):
            opt = owts_option(tsval_us=(now_tsval() - FORGED_OTT_US) % MOD)
            peer.send_raw(peer._frame(flags_of("PA"), peer._options([opt]), b"forged",
                                      seq=(peer.snd_nxt + off) % MOD))
            forged += [s.opts.owts.ott_us for s in peer.pump(0.5)
                       if s.opts.owts is not None and s.opts.owts.ott_us is not None]
        after = echoed(peer.send(b"after", options=[]), peer)
        peer.close()
    assert srv.done.wait(15) and bytes(srv.data) == b"validafter", srv.data
    assert all(x == first for x in forged), (first, forged)
    assert after and all(x == first for x in after), (first, after)


def test_no_room_on_the_syn_ack_means_not_negotiated(owts_net: OwtsNet) -> None:
    """A SYN asking for a Fast Open cookie: the SYN-ACK's cookie leaves no
    room for the option (MSS 4 + SACK-perm/TS 12 + WS 4 + cookie 12 = 32 of
    40 bytes), so the listener must not mark it negotiated; it used to, and
    then sent the option on every segment of a connection whose client saw
    none on the SYN-ACK (issue 15, item 6)."""
    sh(["sysctl", "-qw", "net.ipv4.tcp_fastopen=1027"], ns=SRV_NS)   # server, no sockopt needed
    try:
        srv = server()
        before = owts_counters(SRV_NS)
        with peer_for(owts_net, srv) as peer:
            opts = syn_options(1460, True, (peer.tsval(), 0), 7, owts_option(None)) + b"\x22\x02"
            synack = peer.connect(owts=True, syn_options=opts)
            assert synack.opts.owts_count == 0 and not peer.owts_negotiated
            for k in range(3):
                assert acked(peer.send(b"t%d" % k, options=[]), peer)
            peer.close()
        assert srv.done.wait(15) and bytes(srv.data) == b"t0t1t2"
        assert not any(s.opts.owts_count for s in peer.received), \
            "the server sends the option on a connection it did not negotiate"
        d = {k: v - before[k] for k, v in owts_counters(SRV_NS).items()}
        assert d["TCPOWTSOut"] == 0, d
    finally:
        sh(["sysctl", "-qw", "net.ipv4.tcp_fastopen=1"], ns=SRV_NS)
