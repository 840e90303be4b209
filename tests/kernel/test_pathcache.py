"""The destinations' learnt full-queue delays cannot be poisoned across
addresses or namespaces (issue 28, items 5 and 5c).

Variant "best" starts a new connection with the maximum queuing delay an
earlier connection to the same destination learnt up to its loss
(glue/pathcache.c).  At b0ac820 entries matched a 31-bit hash only, and for
IPv6 the hash folded the address with an unkeyed XOR first:
2001:db8:1::10 and 2001:db8:bad:1::bac:11 fold to the same 0x20000da8.  A
connection to the second stored its maximum, and every later connection to
the first inherited it, with ``loss_seen``: it cut on the noise of the
timestamps once a round trip.  Now an entry matches the full address, in a
table of the connection's own network namespace.

    pc-snd 2001:db8:1::1 -- pc-rtr (10 Mbit/s, 20 packets; 10 ms back) -- pc-rcv 2001:db8:1::10 (victim)
                                                                      2001:db8:bad:1::bac:11

A sync flow to the attacker's address overflows the netem queue and stores
the maximum it learnt; then a new connection to the victim
must start with nothing learnt, and one to the attacker's address (the
control) with the stored maximum.
"""

from __future__ import annotations

import ipaddress
import socket
import struct
import threading
import time
from typing import Any, Dict, Iterator, Optional

import pytest

from conftest import TCP_CONGESTION, drain, is_loaded, load, pump
from synctcp.diag import list_sockets
from synctcp_testbed.network.netns import in_netns, sh

SND, RTR, RCV = "pc-snd", "pc-rtr", "pc-rcv"
SND_IP, VICTIM, ATTACKER = "2001:db8:1::1", "2001:db8:1::10", "2001:db8:bad:1::bac:11"


def ipv6_addr_hash(addr: str) -> int:
    """Linux's ipv6_addr_hash() (include/net/ipv6.h): the XOR of the four words."""
    words = struct.unpack("!4I", ipaddress.IPv6Address(addr).packed)
    return words[0] ^ words[1] ^ words[2] ^ words[3]


@pytest.fixture(scope="module")
def net() -> Iterator[None]:
    if not is_loaded("tcp_sync"):
        assert load("tcp_sync").returncode == 0
    for ns in (SND, RTR, RCV):
        sh(["ip", "netns", "del", ns], check=False)
        sh(["ip", "netns", "add", ns])
    try:
        for ns_a, dev_a, ns_b, dev_b in ((SND, "pc-s", RTR, "pc-rs"), (RTR, "pc-rr", RCV, "pc-r")):
            sh(["ip", "link", "add", dev_a, "netns", ns_a, "type", "veth", "peer", "name",
                dev_b, "netns", ns_b])
            for ns, dev in ((ns_a, dev_a), (ns_b, dev_b)):
                sh(["ip", "link", "set", dev, "up"], ns=ns)
                sh(["ethtool", "-K", dev, "tso", "off", "gso", "off", "gro", "off"], ns=ns)
        for ns in (SND, RTR, RCV):
            sh(["ip", "link", "set", "lo", "up"], ns=ns)
            sh(["sysctl", "-qw", "net.ipv4.tcp_no_metrics_save=1"], ns=ns)
        sh(["sysctl", "-qw", "net.ipv6.conf.all.forwarding=1"], ns=RTR)
        for ns, dev, addr in ((SND, "pc-s", "2001:db8:f1::1/64"), (RTR, "pc-rs", "2001:db8:f1::2/64"),
                              (RTR, "pc-rr", "2001:db8:f2::1/64"), (RCV, "pc-r", "2001:db8:f2::2/64"),
                              (SND, "pc-s", f"{SND_IP}/128"), (RCV, "pc-r", f"{VICTIM}/128"),
                              (RCV, "pc-r", f"{ATTACKER}/128")):
            sh(["ip", "-6", "addr", "add", addr, "dev", dev, "nodad"], ns=ns)
        sh(["ip", "-6", "route", "add", "2001:db8::/32", "via", "2001:db8:f1::2"], ns=SND)
        sh(["ip", "-6", "route", "add", f"{SND_IP}/128", "via", "2001:db8:f1::1"], ns=RTR)
        for a in (VICTIM, ATTACKER):
            sh(["ip", "-6", "route", "add", f"{a}/128", "via", "2001:db8:f2::2"], ns=RTR)
        sh(["ip", "-6", "route", "add", "2001:db8::/32", "via", "2001:db8:f2::1"], ns=RCV)
        # the bottleneck on the router (a sender's own qdisc is held back by
        # TCP Small Queues): 10 Mbit/s in a 20-packet queue towards the
        # receiver; 10 ms on the way back
        sh(["tc", "qdisc", "replace", "dev", "pc-rr", "root", "tbf", "rate", "10mbit",
            "burst", "3028", "limit", str(20 * 1514)], ns=RTR)
        sh(["tc", "qdisc", "replace", "dev", "pc-rs", "root", "netem", "delay", "10ms",
            "limit", "10000"], ns=RTR)
        yield
    finally:
        for ns in (SND, RTR, RCV):
            sh(["ip", "netns", "del", ns], check=False)


_ports = iter(range(5800, 5900))


def connection(dst: str, seconds: float) -> Optional[Dict[str, Any]]:
    """A sync connection to ``dst`` sending for ``seconds`` (0: its first
    8 kB only); its telemetry at the end."""
    port = next(_ports)
    with in_netns(RCV):
        lsock = socket.socket(socket.AF_INET6)
    lsock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    # a window the queue, not the receiver, limits: the flow must overflow it
    lsock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4 << 20)
    lsock.bind((dst, port))
    lsock.listen(1)
    with in_netns(SND):
        snd = socket.socket(socket.AF_INET6)
    snd.setsockopt(socket.IPPROTO_TCP, TCP_CONGESTION, b"sync")
    snd.settimeout(10)          # the first connection waits for neighbour discovery
    snd.connect((dst, port))
    snd.settimeout(0.5)
    lsock.settimeout(10)
    rcv, _ = lsock.accept()
    lsock.close()
    rcv.settimeout(1.0)
    closing = threading.Event()
    sink = threading.Thread(target=drain, args=(rcv, closing), daemon=True)
    sink.start()
    if seconds:
        src = threading.Thread(target=pump, args=(snd, closing), daemon=True)
        src.start()
        time.sleep(seconds)
    else:
        snd.sendall(b"x" * 8192)
        time.sleep(0.05)
    with in_netns(SND):
        tele = [s.synctcp for s in list_sockets(cc=["sync"]) if s.dport == port and s.synctcp]
    closing.set()
    for s in (snd, rcv):
        s.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
        s.close()
    sink.join(timeout=5)
    print(f"to {dst} for {seconds} s: {tele[0] if tele else None}")
    return tele[0] if tele else None


def test_the_pair_collides_in_the_old_hash() -> None:
    """The pair of the review: the same fold, so the old cache's key."""
    assert ipv6_addr_hash(VICTIM) == ipv6_addr_hash(ATTACKER) == 0x20000da8


def test_victim_does_not_inherit_the_attackers_maximum(net: None) -> None:
    learnt = connection(ATTACKER, 5.0)
    assert learnt and learnt["loss_seen"], f"the attacker's flow saw no loss: {learnt}"
    stored = learnt["max_qdelay_us"]
    assert stored >= 4000, f"a maximum too small to keep (4 ticks of 1 ms): {learnt}"
    victim = connection(VICTIM, 0)
    assert victim is not None
    assert not victim["loss_seen"] and victim["max_qdelay_us"] == 0, \
        f"the victim inherited another address's maximum: {victim}"
    control = connection(ATTACKER, 0)
    assert control is not None
    # the maximum stored at the flow's last loss (it may have learnt more after)
    assert control["loss_seen"] and 0.9 * stored <= control["max_qdelay_us"] <= stored, \
        f"a new connection to the same address did not start from its maximum: {control}"
