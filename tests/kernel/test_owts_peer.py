"""The fake OWTS peer (synctcp/owts_peer.py) against an UNPATCHED kernel server.

This validates the peer itself: it completes a handshake with a kernel
listener in another network namespace, its data segments carrying every
malformed OWTS option are ACKed and delivered intact to the server
application, the connection keeps going, and the server (which does not
know the option) never sends it.  Tests of the patched kernel build on the
``owts_net`` fixture and :class:`FakePeer`.

    netns owtsp-srv: veth-os 10.253.0.1/24   <->   netns owtsp-peer: veth-op (no address)
"""

from __future__ import annotations

import os
import subprocess
import time

import pytest

pytest.importorskip("scapy", reason="the fake peer needs scapy (make setup)")

from synctcp.owts_peer import MALFORMED, FakePeer, open_packet_socket, owts_option  # noqa: E402,F401

from owtsnet import (PEER_IP, PEER_MAC, SRV_DEV, SRV_IP, SRV_NS, OwtsNet,  # noqa: E402
                     acked, owts_net, peer_for, server)
from synctcp_testbed.network.netns import sh  # noqa: E402

__all__ = ["owts_net"]       # the fixture, used by name


def no_option_from_server(peer: FakePeer) -> None:
    assert peer.received, "nothing received from the server"
    bad = [s for s in peer.received if s.opts.owts_count]
    assert not bad, f"the unpatched server sent an OWTS option: {bad[0]}"


def test_handshake_and_arp(owts_net: OwtsNet) -> None:
    srv = server()
    with peer_for(owts_net, srv) as peer:
        synack = peer.connect(owts=True)
        assert peer.arp_replies >= 1                # the server asked for our MAC, we answered
        assert synack.opts.ts is not None and synack.opts.sack_permitted
        assert synack.opts.wscale is not None and synack.opts.mss == 1460
        assert not peer.owts_negotiated and synack.opts.owts_count == 0
        assert acked(peer.send(b"hello", options=[]), peer)
        peer.close()
    assert srv.done.wait(10) and srv.error is None
    assert bytes(srv.data) == b"hello"
    assert peer.fin_received
    no_option_from_server(peer)
    neigh = sh(["ip", "neigh", "show", PEER_IP, "dev", SRV_DEV], ns=SRV_NS).stdout
    assert PEER_MAC in neigh.lower()


CASES = sorted(MALFORMED) + ["syn-only", "never-negotiated"]


@pytest.mark.parametrize("case", CASES)
def test_malformed_option_is_ignored_by_an_unpatched_server(owts_net: OwtsNet, case: str) -> None:
    srv = server()
    sent = b""
    with peer_for(owts_net, srv) as peer:
        peer.connect(owts=case != "never-negotiated")
        good = [] if case in ("syn-only",) else [owts_option(1000)]
        bad = ([] if case == "syn-only" else [owts_option(2000)] if case == "never-negotiated"
               else [MALFORMED[case]()])
        for k, opts in enumerate([good, bad, good, bad, good]):
            data = f"{case}:{k}:".encode() + bytes([65 + k]) * 700
            segs = peer.send(data, options=opts, timeout=5)
            assert acked(segs, peer), f"segment {k} ({'bad' if k % 2 else 'good'}) not ACKed"
            sent += data
        peer.close(timeout=5)
    assert srv.done.wait(15), "the server did not see EOF"
    assert srv.error is None, srv.error
    assert bytes(srv.data) == sent                  # delivered intact, in order
    assert peer.fin_received
    no_option_from_server(peer)


def test_packet_socket_needs_an_existing_namespace() -> None:
    from synctcp.owts_peer import PeerError
    with pytest.raises(PeerError, match="no network namespace"):
        open_packet_socket("lo", netns="owtsp-does-not-exist")


def test_decoder_reads_the_capture_of_every_malformed_case(owts_net: OwtsNet) -> None:
    """tcpdump on the server's veth: ``synctcp owts`` marks each case, the server has no option."""
    if os.environ.get("SYNCTCP_PLATFORM") == "uml":
        # seen on UML 6.1: the pcap held its header and no frame (not understood yet)
        pytest.skip("tcpdump's capture of the peer's frames is empty under UML (open); "
                    "make kernel-smoke runs this test on the Debian kernel")
    from conftest import RESULTS
    from synctcp.owtsdump import decode_file, summarize

    RESULTS.mkdir(parents=True, exist_ok=True)
    cap = RESULTS / "owts-peer-malformed.pcap"
    cap.unlink(missing_ok=True)
    dump = subprocess.Popen(["ip", "netns", "exec", SRV_NS, "tcpdump", "-Z", "root", "-U", "-n",
                             "-i", SRV_DEV, "-w", str(cap), "tcp"],
                            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    try:
        deadline = time.monotonic() + 20
        while time.monotonic() < deadline and not (cap.exists() and cap.stat().st_size >= 24):
            time.sleep(0.2)
        time.sleep(1.0)                          # tcpdump is listening once its header is out
        srv = server()
        with peer_for(owts_net, srv) as peer:
            peer.connect(owts=True)
            for name in sorted(MALFORMED):
                assert acked(peer.send(name.encode(), options=[MALFORMED[name]()]), peer), name
            peer.close()
        assert srv.done.wait(15) and bytes(srv.data) == "".join(sorted(MALFORMED)).encode()
        time.sleep(1.0)
    finally:
        dump.terminate()
        try:
            dump.wait(10)
        except subprocess.TimeoutExpired:
            dump.kill()
            dump.wait(5)
    rows, stats = decode_file(str(cap))
    from_peer = [r for r in rows if r.src[0] == PEER_IP and r.length]
    assert len(from_peer) == len(MALFORMED)
    marks = [set(r.problems) for r in from_peer]
    want = [{"absurd-ott"}, {"absurd-tsval"}, {"absurd-tsval"}, {"bad-length"}, {"bad-length"},
            {"repeated"}, {"truncated"}]
    assert [n for n in sorted(MALFORMED)] == ["absurd-ott", "absurd-tsval-minus-1h",
                                              "absurd-tsval-plus-1h", "bad-length-10",
                                              "bad-length-14", "repeated", "truncated"]
    assert marks == want
    syn = next(r for r in rows if r.flags == 0x02)
    assert syn.option is not None and syn.option.ott_us is None and abs(syn.age_us) < 5_000_000
    assert all(r.count == 0 for r in rows if r.src[0] == SRV_IP)
    s = summarize(rows, stats)
    assert s["link_types"] == ["ethernet"] and s["malformed"] == len(MALFORMED)
