"""What a case asks of the path between real hosts: the emulator host's stages and the
end hosts' routes.

The emulator (a Linux box with one interface toward the senders and one toward the
receivers, ``roles = ["emulator"]``) holds the scenario's bottleneck, one each way: the
dumbbell's core link ``lr`` / ``lr-rev``, or the parking lot's first hop each way,
``r0r1`` forward and ``rN-2rN-1-rev`` reverse (the only congested hops of Weigle's
"6Q" lot: every core link has the same rate).  Each is an egress of the emulator as the
namespace runner builds a core link: netem with the core's one-way delay, HTB at the
rate, the queue.  A scenario whose pairs share one base RTT gets all of it there.

Pairs of different base RTTs (Weigle's Table 4.2, the Holl GEO spread, many-flows)
get the rest of theirs per flow, as the namespace runner's access links give it::

    sender side  --ingress--> [flower: the flow's port] --mirred--> IFB (netem: its delay)
                 --> forwarded --> egress toward the receivers: delay, rate, queue

Each interface's ingress redirects a flow's packets, matched by the flow's server port
in either direction (its data one way, its ACKs the other), to the IFB device of the
flow's remaining one-way delay, ``rtt / 2 - core``, whose root netem holds them; the
IFB hands them back to the interface's ingress, and they are forwarded to the
bottleneck.  One IFB per distinct delay and side.  The delay comes before the queue
each way instead of half before and half after: a fixed delay after a FIFO does not
change what the queue sees, and the round trip is the same.

The end hosts take the scenario's TCP settings of the namespace runner's routes
(``init_cwnd_segs``, ``mtu``) as a /32 (or /128) route to each peer with those
attributes, each one's earlier route saved in the case's ``restore.sh``;
``window_segs`` is flowgen's ``-W`` on both runners.

On hosts each HTTP pair's server listens on a port of its own (:func:`http_port`: two
pairs may share a server host), so that its delay stage can tell it apart too.

What cannot run: cross traffic on the hops (kind ``chain``, ``cross_hops``) is more
than one bottleneck each way and needs routers between hosts; ``access_rate_mbit`` is
the hosts' own links.
"""

from __future__ import annotations

import shlex
from dataclasses import dataclass, field
from typing import Any, Dict, List, Optional, Tuple

from ..case.errors import RunError
from ..network.qdisc import NETEM_LIMIT, Egress
from ..plan.flows import HTTP_PORT, Flow, HttpPair, Plan, pair_nodes
from ..scenario import RATE_COUNTS, Case, Scenario
from .inventory import Host, Inventory

#: the IFB devices of a case's per-flow delays: PREFIX + side (s, r) + index
IFB_PREFIX = "stdl"
#: a delay below this (ms) is no stage of its own
DELAY_EPS_MS = 1e-6


class HostTopology:
    """What the planner and the collector need of a topology, for hosts:
    addresses, and the emulator's measured queues."""

    def __init__(self, node_host: Dict[str, Host], emulator: Optional[Host],
                 egress: Dict[str, Tuple[str, Egress]]):
        self.node_host = node_host
        self.emulator = emulator
        #: link label -> (emulator device, its egress)
        self.egress = egress
        self.links: List[Any] = []
        self.nodes: Dict[str, Any] = {}

    def addr(self, node: str, link: Any = None) -> str:
        return self.node_host[node].data_address

    def ns(self, node: str) -> str:
        return "-"

    def sample_points(self) -> List[Tuple[str, str, str, str]]:
        out = []
        for label, (dev, eg) in self.egress.items():
            parent = eg.leaf_parent()
            if parent:
                out.append((label, "-", dev, parent))
        return out


def map_nodes(case: Case, inv: Inventory) -> Dict[str, Host]:
    """Each end node of the scenario on its host; RunError when the scenario cannot run
    on these hosts."""
    sc = case.scenario
    t = sc.topology
    if t.kind == "chain" or (t.kind == "parking-lot" and t.cross_hops and t.cross_pairs):
        raise RunError(f"topology.kind {t.kind} with cross traffic on its hops is one "
                       f"bottleneck per hop: its cross pairs enter and leave between routers, "
                       f"and one emulator host is one bottleneck each way; on hosts run "
                       f"kind = \"dumbbell\", \"parking-lot\" without cross_hops, or \"path\"")
    if t.kind not in ("dumbbell", "parking-lot", "path"):
        raise RunError(f"topology.kind {t.kind}: real hosts run kind = \"path\" (the real "
                       f"path), \"dumbbell\" or \"parking-lot\" (an emulator host's bottleneck)")
    if t.kind != "path" and inv.emulator is None:
        raise RunError(f"topology.kind {t.kind} emulates a bottleneck: the hosts file needs an "
                       f"emulator host (roles = [\"emulator\"]), or use kind = \"path\"")
    if t.access_rate_mbit:
        raise RunError("topology.access_rate_mbit: on real hosts the access links are the "
                       "hosts' own; remove it")
    senders, receivers = inv.with_role("sender"), inv.with_role("receiver")
    out: Dict[str, Host] = {}
    for i, (s, r) in enumerate(pair_nodes(sc)):
        out[s], out[r] = senders[i % len(senders)], receivers[i % len(receivers)]
        if out[s].name == out[r].name:
            raise RunError(f"pair {i + 1}: host {out[s].name} would be both its sender and its "
                           f"receiver (give each pair two hosts)")
    return out


def core_one_way_ms(sc: Scenario) -> float:
    """The one-way delay of the core every pair crosses: the dumbbell's link, the
    parking lot's routers - 1 links."""
    t = sc.topology
    if t.kind == "parking-lot":
        return t.link_delay_ms * (t.routers - 1)
    return t.link_delay_ms


def bottleneck_labels(sc: Scenario) -> Tuple[str, str]:
    """The labels of the forward and reverse bottleneck, as the namespace runner
    names the links it samples."""
    t = sc.topology
    if t.kind == "parking-lot":
        return "r0r1", f"r{t.routers - 2}r{t.routers - 1}-rev"
    return "lr", "lr-rev"


def flow_delay_ms(sc: Scenario, rtt_ms: float) -> float:
    """What a pair of base RTT ``rtt_ms`` adds to the core each way (its access links)."""
    core = core_one_way_ms(sc)
    each = rtt_ms / 2 - core
    if each < -DELAY_EPS_MS:
        raise RunError(f"base RTT {rtt_ms:g} ms is below the core's own {2 * core:g} ms")
    return max(each, 0.0)


def emulator_stages(case: Case, inv: Inventory) -> Dict[str, Tuple[str, Egress]]:
    """The bottleneck on the emulator, each way: delay + rate + queue.  Pairs of one
    base RTT get all of its one-way delay here; pairs of several get the core's
    (:func:`flow_delays` adds the rest per flow).  Empty for kind ``path``."""
    sc = case.scenario
    t = sc.topology
    em = inv.emulator
    if t.kind == "path" or em is None:
        return {}
    aqm = "droptail" if case.aqm == "ceiling" else case.aqm
    queue = sc.queue_spec(aqm, t.rate_mbit, limit=case.queue_limit)
    rest = {round(flow_delay_ms(sc, r), 6) for r in t.rtts_ms}
    one_way = core_one_way_ms(sc) + (rest.pop() if len(rest) == 1 else 0.0)
    overhead = RATE_COUNTS[t.rate_counts]
    fwd, rev = bottleneck_labels(sc)
    out = {}
    for label, side in ((fwd, "receiver"), (rev, "sender")):
        eg = Egress(rate_mbit=t.rate_mbit, queue=queue, delay_ms=one_way,
                    size_overhead=overhead)
        eg.validate()
        out[label] = (em.interfaces[side], eg)
    return out


def http_port(plan: Plan, pair: HttpPair) -> int:
    """The port of HTTP pair ``pair``'s server on hosts: one per pair."""
    return HTTP_PORT + plan.http.index(pair)


@dataclass
class DelayStage:
    """One IFB device per side: the flows and HTTP pairs (their server ports) whose
    packets it delays."""

    delay_ms: float
    flows: List[Flow] = field(default_factory=list)
    http: List[HttpPair] = field(default_factory=list)


def flow_delays(case: Case, plan: Plan) -> List[DelayStage]:
    """The per-flow delay stages of a case on an emulator, one per distinct delay, in
    the order of their delays; none when its pairs share one base RTT (the bottleneck
    stage has it all) or it runs on the real path."""
    sc = case.scenario
    if sc.topology.kind == "path":
        return []
    if len({round(flow_delay_ms(sc, r), 6) for r in sc.topology.rtts_ms}) <= 1:
        return []
    by: Dict[float, DelayStage] = {}
    for f in plan.flows:
        d = round(flow_delay_ms(sc, f.base_rtt_ms), 6)
        by.setdefault(d, DelayStage(d)).flows.append(f)
    pairs = pair_nodes(sc)
    for hp in plan.http:
        rtt = sc.topology.rtts_ms[pairs.index((hp.server, hp.client))]
        d = round(flow_delay_ms(sc, rtt), 6)
        by.setdefault(d, DelayStage(d)).http.append(hp)
    return [by[d] for d in sorted(by) if d > DELAY_EPS_MS]


def delay_script(stages: List[DelayStage], devs: Dict[str, str],
                 plan: Optional[Plan] = None) -> Tuple[List[str], str]:
    """Shell lines that build the per-flow delay stages on the emulator's interfaces
    ``devs`` (side -> device), and the lines that undo them (for its restore.sh);
    ``plan`` gives the HTTP pairs' ports."""
    if not stages:
        return [], ""
    lines: List[str] = []
    undo: List[str] = []
    if len(stages) * len(devs) > 900:
        raise RunError(f"{len(stages)} distinct per-flow delays: more IFB devices than one "
                       f"emulator should carry; give the pairs fewer distinct base RTTs")
    for side, dev in sorted(devs.items()):
        d = shlex.quote(dev)
        undo.append(f"tc qdisc del dev {d} ingress 2>/dev/null || true")
        lines.append(f"tc qdisc del dev {d} ingress 2>/dev/null || true")
        lines.append(f"tc qdisc add dev {d} handle ffff: ingress")
        for i, st in enumerate(stages):
            ifb = f"{IFB_PREFIX}{side[0]}{i}"
            undo.append(f"ip link del {ifb} 2>/dev/null || true")
            lines += [f"ip link del {ifb} 2>/dev/null || true",
                      f"ip link add {ifb} type ifb || {{ echo 'no IFB device for the per-flow "
                      f"delays: modprobe ifb (a kernel with CONFIG_IFB)' >&2; exit 1; }}",
                      f"ip link set {ifb} up",
                      f"tc qdisc add dev {ifb} root netem limit {NETEM_LIMIT} "
                      f"delay {st.delay_ms:g}ms"]
            ports = [("ipv6" if ":" in (f.src_addr or f.dst_addr) else "ip",
                      "udp" if f.kind == "cbr" else "tcp", f.port) for f in st.flows]
            if st.http and plan is None:
                raise RunError("HTTP pairs' delay stages need their plan (their ports)")
            ports += [("ipv6" if ":" in hp.server_addr else "ip", "tcp",
                       http_port(plan, hp)) for hp in st.http]  # type: ignore[arg-type]
            for proto, l4, port in ports:
                for key in ("dst_port", "src_port"):
                    lines.append(f"tc filter add dev {d} parent ffff: protocol {proto} prio 1 "
                                 f"flower ip_proto {l4} {key} {port} action mirred egress "
                                 f"redirect dev {ifb}")
    return lines, "".join(ln + "\n" for ln in undo)


def route_attrs(sc: Scenario) -> List[str]:
    """The route attributes of the scenario's TCP settings, as the namespace runner sets
    them on every end node's routes."""
    t = sc.topology
    out = []
    if t.init_cwnd_segs:
        out += ["initcwnd", str(t.init_cwnd_segs)]
    if t.mtu != 1500:
        out += ["mtu", "lock", str(t.mtu)]
    return out


def route_script(peers: List[str], attrs: List[str]) -> List[str]:
    """Shell lines (run in the case's directory, after ``restore.sh`` was started) that
    route each peer address through a host route with ``attrs``, its earlier host route
    (if any) saved to be put back, else the new one deleted, by ``restore.sh``."""
    if not attrs or not peers:
        return []
    a = " ".join(shlex.quote(x) for x in attrs)
    out = []
    for p in sorted(set(peers)):
        fam, plen = ("-6", "128") if ":" in p else ("-4", "32")
        dst = shlex.quote(f"{p}/{plen}")
        out.append(
            f"old=$(ip {fam} route show table main exact {dst} | head -n 1); "
            f"if [ -n \"$old\" ]; then printf 'ip {fam} route replace %s\\n' \"$old\" "
            f">> restore.sh; else echo 'ip {fam} route del {dst} 2>/dev/null || true' "
            f">> restore.sh; fi; "
            f"got=$(ip {fam} route get {shlex.quote(p)} | head -n 1); "
            f"via=$(echo \"$got\" | sed -n 's/.* via \\([^ ]*\\).*/\\1/p'); "
            f"dev=$(echo \"$got\" | sed -n 's/.* dev \\([^ ]*\\).*/\\1/p'); "
            f"src=$(echo \"$got\" | sed -n 's/.* src \\([^ ]*\\).*/\\1/p'); "
            f"[ -n \"$dev\" ] || {{ echo \"no route to {p}\" >&2; exit 1; }}; "
            f"ip {fam} route replace {dst} ${{via:+via $via}} dev \"$dev\" "
            f"${{src:+src $src}} {a}")
    return out
