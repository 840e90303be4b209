"""Topologies as the ip/tc batch scripts they build (synctcp_testbed.network.topology).

Nothing here touches the system: ``Topology.build`` runs with its shell,
namespace and sysctl helpers replaced by recorders, and the tests read the
script it would have run.  Routing is checked by forwarding packets hop by
hop over the generated routes, not by matching strings.
"""

from __future__ import annotations

import contextlib
import ipaddress
import re
import shlex
from collections import deque
from dataclasses import dataclass, field
from typing import Dict, List, Optional, Tuple

import pytest

from synctcp_testbed.network import topology as T
from synctcp_testbed.network.qdisc import QueueSpec
from synctcp_testbed.network.topology import Topology, TopologyError

Q = QueueSpec("droptail", 100)


# ---------------------------------------------------------------------------
# building without the system


@dataclass
class Built:
    """What ``build()`` would have done: the script and the sysctls per namespace."""

    script: str
    sysctls: Dict[str, Dict[str, str]]
    offloads: Dict[str, bool]


def build(topo: Topology, monkeypatch: pytest.MonkeyPatch) -> Built:
    ran: List[List[str]] = []
    sysctls: Dict[str, Dict[str, str]] = {}
    offloads: Dict[str, bool] = {}
    monkeypatch.setattr(T, "sh", lambda cmd, **kw: ran.append(list(cmd)))
    monkeypatch.setattr(T, "in_netns", lambda ns: contextlib.nullcontext())
    monkeypatch.setattr(T, "write_sysctls", lambda ns, values: sysctls.__setitem__(ns, dict(values)))
    monkeypatch.setattr(T, "set_offloads", lambda dev, on: offloads.__setitem__(dev, on))
    topo.build()
    assert ran == [["sh", "-c", topo.script]], "build runs exactly one shell script"
    return Built(topo.script, sysctls, offloads)


def heredocs(script: str) -> List[Tuple[str, List[str]]]:
    """(command, body lines) of every ``CMD <<'EOF' ... EOF`` of the script."""
    out = []
    for m in re.finditer(r"^([^\n]*) <<'EOF'\n(.*?)^EOF$", script, re.S | re.M):
        out.append((m.group(1), m.group(2).splitlines()))
    return out


@dataclass
class Net:
    """The network the script describes, parsed back."""

    #: namespace -> device -> interface address
    addrs: Dict[str, Dict[str, ipaddress.IPv4Interface]] = field(default_factory=dict)
    #: namespace -> [(destination network or None for default, gateway)]
    routes: Dict[str, List[Tuple[Optional[ipaddress.IPv4Network], ipaddress.IPv4Address]]] = \
        field(default_factory=dict)
    #: (namespace, device) -> (namespace, device) of the veth peer
    peer: Dict[Tuple[str, str], Tuple[str, str]] = field(default_factory=dict)
    #: namespace -> devices created in it
    devs: Dict[str, List[str]] = field(default_factory=dict)
    #: namespace -> tc batch lines
    tc: Dict[str, List[str]] = field(default_factory=dict)
    #: namespace -> raw ip batch lines
    ip: Dict[str, List[str]] = field(default_factory=dict)

    def owner(self, addr: ipaddress.IPv4Address) -> Optional[str]:
        for ns, devs in self.addrs.items():
            if any(i.ip == addr for i in devs.values()):
                return ns
        return None


def parse(script: str) -> Net:
    net = Net()
    docs = heredocs(script)
    assert docs[0][0] == "ip -batch -", "the root batch comes first"
    for ln in docs[0][1]:
        w = ln.split()
        if w[:2] == ["netns", "add"]:
            net.devs.setdefault(w[2], [])
        else:
            m = re.fullmatch(r"link add (\S+) netns (\S+) type veth peer name (\S+) netns (\S+)",
                             ln)
            assert m, ln
            d1, ns1, d2, ns2 = m.groups()
            net.peer[(ns1, d1)] = (ns2, d2)
            net.peer[(ns2, d2)] = (ns1, d1)
            net.devs[ns1].append(d1)
            net.devs[ns2].append(d2)
    for cmd, body in docs[1:]:
        m = re.fullmatch(r"(ip|tc) -n (\S+) -batch -", cmd)
        assert m, cmd
        tool, ns = m.groups()
        if tool == "tc":
            net.tc[ns] = body
            continue
        net.ip[ns] = body
        addrs = net.addrs.setdefault(ns, {})
        routes = net.routes.setdefault(ns, [])
        for ln in body:
            w = ln.split()
            if w[:2] == ["addr", "add"]:
                addrs[w[4]] = ipaddress.IPv4Interface(w[2])
            elif w[:2] == ["route", "add"]:
                dst = None if w[2] == "default" else ipaddress.IPv4Network(w[2])
                assert w[3] == "via"
                routes.append((dst, ipaddress.IPv4Address(w[4])))
    return net


def forward(net: Net, src_ns: str, dst: ipaddress.IPv4Address, routers: set,
            max_hops: int) -> List[str]:
    """The namespaces a packet from ``src_ns`` to ``dst`` visits, by the routes as built."""
    path = [src_ns]
    cur = src_ns
    for _ in range(max_hops + 1):
        own = net.addrs[cur]
        if any(i.ip == dst for i in own.values()):
            return path
        if len(path) > 1:
            assert cur in routers, f"{cur} is not a router but would have to forward to {dst}"
        # directly connected: deliver to the peer on that subnet
        direct = [d for d, i in own.items() if dst in i.network]
        if direct:
            nxt, _ = net.peer[(cur, direct[0])]
            assert any(i.ip == dst for i in net.addrs[nxt].values()), \
                f"{dst} is on {cur}'s link {direct[0]} but the peer does not own it"
            return path + [nxt]
        # longest-prefix match (here: a /24 route or the default)
        cands = [(r, gw) for r, gw in net.routes[cur] if r is None or dst in r]
        assert cands, f"{cur} has no route to {dst}"
        cands.sort(key=lambda x: -1 if x[0] is None else x[0].prefixlen, reverse=True)
        _, gw = cands[0]
        via = [d for d, i in own.items() if gw in i.network and gw != i.ip]
        assert via, f"{cur}: gateway {gw} is not a neighbour on one of its own links"
        nxt, _ = net.peer[(cur, via[0])]
        assert any(i.ip == gw for i in net.addrs[nxt].values()), f"{gw} is not {nxt}'s"
        path.append(nxt)
        cur = nxt
    raise AssertionError(f"{src_ns} -> {dst}: no delivery within {max_hops} hops: {path}")


def veth_distances(net: Net, src: str) -> Dict[str, int]:
    """Hop counts from ``src`` over the veth pairs of the root script (independent of routes)."""
    dist = {src: 0}
    q = deque([src])
    while q:
        cur = q.popleft()
        for dev in net.devs[cur]:
            nb, _ = net.peer[(cur, dev)]
            if nb not in dist:
                dist[nb] = dist[cur] + 1
                q.append(nb)
    return dist


TOPOLOGIES = {
    "dumbbell3": lambda: T.dumbbell([20, 40, 80], 10, Q),
    "dumbbell-access-rate": lambda: T.dumbbell([40, 60], 10, Q, link_delay_ms=5,
                                               access_rate_mbit=100),
    "parking-lot-cross": lambda: T.parking_lot([20, 60], 10, Q, cross_hops=[1, 3],
                                               cross_pairs=2),
    "chain": lambda: T.chain([30], 10, Q, hops=3, cross_pairs=1),
    "two-routers": lambda: T.parking_lot([10], 10, Q, routers=2),
}


# ---------------------------------------------------------------------------
# shapes


@pytest.mark.parametrize("n", [1, 3, 10])
def test_dumbbell_of_n_pairs_has_2n_plus_2_nodes_and_2n_plus_1_links(n: int) -> None:
    t = T.dumbbell([40] * n, 10, Q)
    assert len(t.nodes) == 2 * n + 2
    assert len(t.links) == 2 * n + 1
    assert {nd.name for nd in t.nodes.values() if nd.router} == {"l", "r"}


def test_access_delay_is_half_of_half_rtt_minus_core() -> None:
    for rtt, core in ((40, 0), (55, 5), (916, 450), (10, 5)):
        assert T.access_delays(rtt, core) == pytest.approx((rtt / 2 - core) / 2)
    with pytest.raises(TopologyError, match="below the core"):
        T.access_delays(8, 5)


def test_dumbbell_access_links_carry_the_access_delay_both_ways() -> None:
    t = T.dumbbell([40, 100], 10, Q, link_delay_ms=5)
    for i, rtt in ((1, 40), (2, 100)):
        for name in (f"s{i}l", f"r{i}r"):
            lk = t.link(name)
            assert lk.a_egress.delay_ms == lk.b_egress.delay_ms == T.access_delays(rtt, 5)
    with pytest.raises(TopologyError, match="below the core"):
        T.dumbbell([8], 10, Q, link_delay_ms=5)


def test_parking_lot_cross_hops_attach_senders_at_rh_and_receivers_at_rh_plus_1() -> None:
    t = T.parking_lot([20], 10, Q, cross_hops=[1, 3], cross_pairs=2)
    for h in (1, 3):
        for j in (1, 2):
            (s_link,) = t._links_of(f"x{h}s{j}")
            (r_link,) = t._links_of(f"x{h}r{j}")
            assert s_link.other(f"x{h}s{j}") == f"R{h}"
            assert r_link.other(f"x{h}r{j}") == f"R{h + 1}"
    assert not any(n.startswith(("x0", "x2", "x4")) for n in t.nodes)
    with pytest.raises(TopologyError, match="hop 5"):
        T.parking_lot([20], 10, Q, routers=6, cross_hops=[5], cross_pairs=1)


def test_end_to_end_pairs_of_a_parking_lot_hang_off_the_first_and_last_router() -> None:
    t = T.parking_lot([20, 30], 10, Q, routers=4)
    for i in (1, 2):
        assert t._links_of(f"a{i}")[0].other(f"a{i}") == "R0"
        assert t._links_of(f"b{i}")[0].other(f"b{i}") == "R3"


@pytest.mark.parametrize("name", ["abcdefghi", "a-b", "", "x y"])
def test_node_names_over_8_chars_or_not_alphanumeric_are_refused(name: str) -> None:
    with pytest.raises(TopologyError):
        Topology().add_node(name)


def test_duplicate_node_is_refused() -> None:
    t = Topology()
    t.add_node("abcdefgh")
    with pytest.raises(TopologyError, match="exists"):
        t.add_node("abcdefgh")


def test_connecting_an_unknown_node_is_refused() -> None:
    t = Topology()
    t.add_node("a")
    with pytest.raises(TopologyError, match="no node b"):
        t.connect("a", "b")


@pytest.mark.parametrize("prefix", ["", "abcde", "a-b", "a b"])
def test_bad_prefix_is_refused(prefix: str) -> None:
    with pytest.raises(TopologyError, match="prefix"):
        Topology(prefix=prefix)


@pytest.mark.parametrize("base", [0, 255])
def test_subnet_base_outside_1_254_is_refused(base: int) -> None:
    with pytest.raises(TopologyError, match="subnet_base"):
        Topology(subnet_base=base)


def test_more_than_250_links_are_refused() -> None:
    t = Topology()
    t.add_node("a")
    t.add_node("b")
    for _ in range(250):
        t.connect("a", "b")
    with pytest.raises(TopologyError, match="250"):
        t.connect("a", "b")


def test_building_without_links_is_refused(monkeypatch: pytest.MonkeyPatch) -> None:
    t = Topology()
    t.add_node("a")
    with pytest.raises(TopologyError, match="at least one link"):
        build(t, monkeypatch)


# ---------------------------------------------------------------------------
# the scripts


def test_device_names_fit_ifnamsiz_and_are_unique_per_namespace(
        monkeypatch: pytest.MonkeyPatch) -> None:
    # the longest names: the longest prefix and three-digit link indexes
    t = T.parking_lot([40] * 50, 10, Q, routers=3, cross_hops=[0, 1], cross_pairs=3,
                      prefix="abcd")
    assert len(t.links) > 100
    net = parse(build(t, monkeypatch).script)
    assert set(net.devs) == {t.ns(n) for n in t.nodes}
    for ns, devs in net.devs.items():
        assert all(1 <= len(d) <= 15 for d in devs), devs
        assert len(devs) == len(set(devs)), f"{ns}: duplicate device"
        assert set(devs) == set(net.addrs[ns]), "every device gets an address"
    # and a device is set up in the namespace that owns it
    for ns, lines in net.ip.items():
        up = {ln.split()[2] for ln in lines if ln.startswith("link set ") and ln.endswith(" up")}
        assert up == set(net.devs[ns]) | {"lo"}
    assert max(len(t.ns(n)) for n in t.nodes) <= 15


@pytest.mark.parametrize("topo", list(TOPOLOGIES))
def test_every_subnet_is_a_distinct_24_with_both_ends_addressed(
        topo: str, monkeypatch: pytest.MonkeyPatch) -> None:
    t = TOPOLOGIES[topo]()
    net = parse(build(t, monkeypatch).script)
    nets = [i.network for devs in net.addrs.values() for i in devs.values()]
    assert all(n.prefixlen == 24 for n in nets)
    # each subnet appears exactly twice: the two ends of one veth pair
    for n in set(nets):
        ends = [(ns, d) for ns, devs in net.addrs.items() for d, i in devs.items() if i.network == n]
        assert len(ends) == 2 and net.peer[ends[0]] == ends[1], n
    assert len(set(nets)) == len(t.links)


@pytest.mark.parametrize("topo", list(TOPOLOGIES))
def test_hosts_default_route_via_their_router(topo: str, monkeypatch: pytest.MonkeyPatch) -> None:
    t = TOPOLOGIES[topo]()
    net = parse(build(t, monkeypatch).script)
    for name, node in t.nodes.items():
        if node.router:
            continue
        ns = t.ns(name)
        (lk,) = t._links_of(name)
        router = lk.other(name)
        assert t.nodes[router].router
        assert net.routes[ns] == [(None, ipaddress.IPv4Address(t.addr(router, lk)))]


@pytest.mark.parametrize("topo", list(TOPOLOGIES))
def test_routers_route_every_non_adjacent_subnet_via_a_neighbour(
        topo: str, monkeypatch: pytest.MonkeyPatch) -> None:
    t = TOPOLOGIES[topo]()
    net = parse(build(t, monkeypatch).script)
    all_nets = {i.network for devs in net.addrs.values() for i in devs.values()}
    for name, node in t.nodes.items():
        if not node.router:
            continue
        ns = t.ns(name)
        own = net.addrs[ns]
        connected = {i.network for i in own.values()}
        routed = [r for r, _ in net.routes[ns]]
        assert None not in routed, f"router {name} has a default route"
        assert sorted(routed) == sorted(all_nets - connected), name
        for _, gw in net.routes[ns]:
            assert any(gw in i.network and gw != i.ip for i in own.values()), (name, gw)


@pytest.mark.parametrize("topo", list(TOPOLOGIES))
def test_packets_reach_every_host_over_a_shortest_path(
        topo: str, monkeypatch: pytest.MonkeyPatch) -> None:
    t = TOPOLOGIES[topo]()
    b = build(t, monkeypatch)
    net = parse(b.script)
    routers = {ns for ns, s in b.sysctls.items() if s.get("net.ipv4.ip_forward") == "1"}
    assert routers == {t.ns(n) for n, nd in t.nodes.items() if nd.router}
    hosts = [n for n, nd in t.nodes.items() if not nd.router]
    for src in hosts:
        dist = veth_distances(net, t.ns(src))
        for dst in hosts:
            if dst == src:
                continue
            path = forward(net, t.ns(src), ipaddress.IPv4Address(t.addr(dst)), routers,
                           max_hops=len(t.nodes))
            assert path[-1] == t.ns(dst)
            assert len(path) - 1 == dist[t.ns(dst)], f"{src}->{dst} not shortest: {path}"


def test_routers_reach_every_address_of_every_link(monkeypatch: pytest.MonkeyPatch) -> None:
    t = TOPOLOGIES["parking-lot-cross"]()
    b = build(t, monkeypatch)
    net = parse(b.script)
    routers = {t.ns(n) for n, nd in t.nodes.items() if nd.router}
    for src in routers:
        for lk in t.links:
            for node in (lk.a, lk.b):
                path = forward(net, src, ipaddress.IPv4Address(t.addr(node, lk)), routers,
                               max_hops=len(t.nodes))
                assert path[-1] == t.ns(node)


def test_initial_window_goes_on_the_hosts_routes_and_no_route_has_a_window(
        monkeypatch: pytest.MonkeyPatch) -> None:
    # the receivers' window is flowgen's -W (a route window does not hold on 7.2)
    t = T.parking_lot([20], 10, Q)
    t.nodes["a1"].init_cwnd_segs = 2
    net = parse(build(t, monkeypatch).script)
    (line,) = [ln for ln in net.ip[t.ns("a1")] if ln.startswith("route ")]
    assert line.endswith(" initcwnd 2")
    assert not any("window" in ln for ns in net.ip for ln in net.ip[ns])
    (line,) = [ln for ln in net.ip[t.ns("b1")] if ln.startswith("route ")]
    assert "initcwnd" not in line


def test_mtu_and_offloads_reach_every_device(monkeypatch: pytest.MonkeyPatch) -> None:
    t = T.dumbbell([40], 10, Q, mtu=576, offloads=False)
    b = build(t, monkeypatch)
    net = parse(b.script)
    for ns, devs in net.devs.items():
        for d in devs:
            assert f"link set {d} mtu 576 up" in net.ip[ns]
    assert set(b.offloads) == {d for devs in net.devs.values() for d in devs}
    assert not any(b.offloads.values())


def test_tc_batches_hold_each_egress_commands(monkeypatch: pytest.MonkeyPatch) -> None:
    t = T.dumbbell([40], 10, QueueSpec("droptail", 77), link_delay_ms=5)
    net = parse(build(t, monkeypatch).script)
    lr = t.link("lr")
    for node in ("l", "r"):
        want = [" ".join(c) for c in lr.egress(node).tc_commands(t.dev(node, lr))]
        got = [ln for ln in net.tc[t.ns(node)] if f" dev {t.dev(node, lr)} " in ln]
        assert got == want
        assert any("pfifo limit 77" in ln for ln in got)
    # every tc line names a device of its own namespace
    for ns, lines in net.tc.items():
        for ln in lines:
            dev = shlex.split(ln)[3]
            assert dev in net.devs[ns]


def test_sample_points_label_core_queues_by_link_and_direction() -> None:
    t = T.dumbbell([40], 10, Q)
    pts = t.sample_points()
    assert [p[0] for p in pts] == ["lr", "lr-rev"]
    lr = t.link("lr")
    assert pts[0] == ("lr", t.ns("l"), t.dev("l", lr), "2:10")
    assert pts[1] == ("lr-rev", t.ns("r"), t.dev("r", lr), "2:10")
    p = T.parking_lot([20], 10, Q, routers=6)
    labels = [x[0] for x in p.sample_points()]
    assert labels == [f"r{i}r{i + 1}{d}" for i in range(5) for d in ("", "-rev")]
    assert ("r4r5-rev", p.ns("R5")) == p.sample_points()[-1][:2]


def test_access_links_with_a_rate_get_queues_of_their_own() -> None:
    t = T.dumbbell([40], 10, Q, access_rate_mbit=100)
    labels = {p[0] for p in t.sample_points()}
    assert labels == {"lr", "lr-rev", "s1l", "s1l-rev", "r1r", "r1r-rev"}
