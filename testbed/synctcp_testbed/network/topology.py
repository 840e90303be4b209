"""Topologies of network namespaces joined by veth pairs.

A :class:`Topology` is a graph of nodes (one network namespace each) and
links (one veth pair each).  Every link gets its own /24, every node static
routes along shortest paths, and every interface the egress stages of
:mod:`synctcp_testbed.network.qdisc` (delay, rate, queue).  Three builders give the
seeds' shapes::

    dumbbell      s1..sN -- L ==== R -- r1..rN          (per-pair base RTT)
    parking_lot   hosts -- R0 == R1 == ... == R5 -- hosts, cross traffic
                  entering and leaving at chosen hops (Weigle's "6Q")
    chain         the parking lot with cross traffic on every hop

Configuration goes through ``ip -batch`` and ``tc -batch`` (one process
per namespace, fast under emulation); the scripts are kept
(:attr:`Topology.script`) so a run directory shows exactly what was built.
Reading state back uses netlink (pyroute2).  Teardown deletes every
namespace of the topology's prefix (and with them every veth and qdisc),
also on errors, Ctrl-C and SIGTERM; a new topology first removes leftovers
of a killed run with the same prefix.
"""

from __future__ import annotations

import os
import shlex
import signal
import sys
from collections import deque
from dataclasses import dataclass, field
from typing import Any, Dict, List, Optional, Sequence, Tuple

from .netns import (NETNS_DIR, TopologyError, in_netns, pids_in_netns, set_offloads, sh,
                    write_sysctls)
from .qdisc import Egress, QueueSpec, via_netlink


@dataclass
class Node:
    name: str
    router: bool = False
    #: initial congestion window of this node's connections (route ``initcwnd``), segments
    init_cwnd_segs: Optional[int] = None
    sysctls: Dict[str, str] = field(default_factory=dict)


@dataclass
class Link:
    name: str
    a: str
    b: str
    a_egress: Egress = field(default_factory=Egress)
    b_egress: Egress = field(default_factory=Egress)
    index: int = 0

    def egress(self, node: str) -> Egress:
        return self.a_egress if node == self.a else self.b_egress

    def other(self, node: str) -> str:
        return self.b if node == self.a else self.a


class Topology:
    """Nodes and links; :meth:`build` makes them real, :meth:`teardown` removes them."""

    def __init__(self, prefix: str = "st", subnet_base: int = 201, offloads: bool = False,
                 mtu: int = 1500):
        if not prefix.isalnum() or not 1 <= len(prefix) <= 4:
            raise TopologyError("prefix must be 1-4 alphanumeric characters")
        if not 1 <= subnet_base <= 254:
            raise TopologyError("subnet_base must be 1..254")
        self.prefix = prefix
        self.subnet_base = subnet_base
        self.offloads = offloads
        self.mtu = mtu
        self.nodes: Dict[str, Node] = {}
        self.links: List[Link] = []
        #: the shell script :meth:`build` ran (ip/tc batches)
        self.script = ""
        self._old_handlers: Dict[int, Any] = {}

    # -- description ----------------------------------------------------
    def add_node(self, name: str, router: bool = False, **kw: Any) -> Node:
        if not name.isalnum() or len(name) > 8:
            raise TopologyError(f"node name {name!r}: at most 8 alphanumeric characters")
        if name in self.nodes:
            raise TopologyError(f"node {name} exists")
        self.nodes[name] = Node(name, router, **kw)
        return self.nodes[name]

    def connect(self, a: str, b: str, a_egress: Optional[Egress] = None,
                b_egress: Optional[Egress] = None, name: Optional[str] = None) -> Link:
        for n in (a, b):
            if n not in self.nodes:
                raise TopologyError(f"no node {n}")
        if len(self.links) >= 250:
            raise TopologyError("at most 250 links")
        link = Link(name or f"{a}{b}", a, b, a_egress or Egress(), b_egress or Egress(),
                    index=len(self.links) + 1)
        link.a_egress.validate()
        link.b_egress.validate()
        self.links.append(link)
        return link

    def link(self, name: str) -> Link:
        for link in self.links:
            if link.name == name:
                return link
        raise TopologyError(f"no link {name}")

    def ns(self, node: str) -> str:
        return f"{self.prefix}-{node}"

    def dev(self, node: str, link: Link) -> str:
        return f"{self.prefix}{link.index}{'a' if node == link.a else 'b'}"

    def addr(self, node: str, link: Optional[Link] = None) -> str:
        """Address of ``node`` on ``link`` (default: its only/first link)."""
        link = link or self._links_of(node)[0]
        return f"10.{self.subnet_base}.{link.index}.{1 if node == link.a else 2}"

    def _links_of(self, node: str) -> List[Link]:
        out = [lk for lk in self.links if node in (lk.a, lk.b)]
        if not out:
            raise TopologyError(f"node {node} has no link")
        return out

    def next_hops(self, node: str) -> Dict[str, Tuple[str, Link]]:
        """For every other node: (neighbor, link) of the first hop on a shortest path."""
        first: Dict[str, Tuple[str, Link]] = {}
        seen = {node}
        queue: deque = deque()
        for lk in self._links_of(node):
            nb = lk.other(node)
            if nb not in seen:
                seen.add(nb)
                first[nb] = (nb, lk)
                queue.append(nb)
        while queue:
            cur = queue.popleft()
            for lk in self._links_of(cur):
                nb = lk.other(cur)
                if nb not in seen:
                    seen.add(nb)
                    first[nb] = first[cur]
                    queue.append(nb)
        return first

    def sample_points(self) -> List[Tuple[str, str, str, str]]:
        """(link name + direction, namespace, device, tc parent) of every queue."""
        out = []
        for lk in self.links:
            for node in (lk.a, lk.b):
                parent = lk.egress(node).leaf_parent()
                if parent:
                    label = lk.name if node == lk.a else f"{lk.name}-rev"
                    out.append((label, self.ns(node), self.dev(node, lk), parent))
        return out

    # -- scripts ------------------------------------------------------------
    def _ip_root_script(self) -> str:
        lines = [f"netns add {self.ns(n)}" for n in self.nodes]
        for lk in self.links:
            lines.append(f"link add {self.dev(lk.a, lk)} netns {self.ns(lk.a)} type veth "
                         f"peer name {self.dev(lk.b, lk)} netns {self.ns(lk.b)}")
        return "\n".join(lines) + "\n"

    def _ip_node_script(self, node: str) -> str:
        lines = ["link set lo up"]
        own = self._links_of(node)
        for lk in own:
            dev = self.dev(node, lk)
            lines += [f"addr add {self.addr(node, lk)}/24 dev {dev}",
                      f"link set {dev} mtu {self.mtu} up"]
        hops = self.next_hops(node)
        n = self.nodes[node]
        # (a route window would not clamp the receivers' window on Linux >= 6.7:
        # flowgen -W does, docs/platform.md)
        window = f" initcwnd {n.init_cwnd_segs}" if n.init_cwnd_segs else ""
        if len(own) == 1 and not n.router:
            nb = own[0].other(node)
            lines.append(f"route add default via {self.addr(nb, own[0])}{window}")
        else:
            for lk in self.links:
                if node in (lk.a, lk.b):
                    continue
                # reach the link's subnet through whichever end is nearer
                target = lk.a if lk.a in hops else lk.b
                nb, via = hops[target]
                lines.append(f"route add 10.{self.subnet_base}.{lk.index}.0/24 "
                             f"via {self.addr(nb, via)}{window}")
        return "\n".join(lines) + "\n"

    def _tc_node_script(self, node: str) -> str:
        lines = []
        for lk in self._links_of(node):
            for cmd in lk.egress(node).tc_commands(self.dev(node, lk)):
                if not via_netlink(cmd):
                    lines.append(" ".join(cmd))
        return "\n".join(lines) + ("\n" if lines else "")

    def _netlink_node_lines(self, node: str) -> List[str]:
        """Shell lines adding ``node``'s qdiscs that ``tc`` cannot (:mod:`.tcnl`),
        after its ``tc -batch``, which made their parents."""
        py = shlex.quote(sys.executable)
        return [f"{py} -m synctcp_testbed.network.tcnl -n {self.ns(node)} {' '.join(cmd)}"
                for lk in self._links_of(node)
                for cmd in lk.egress(node).tc_commands(self.dev(node, lk)) if via_netlink(cmd)]

    # -- life cycle -------------------------------------------------------------
    def __enter__(self) -> "Topology":
        for sig in (signal.SIGTERM, signal.SIGHUP):
            self._old_handlers[sig] = signal.signal(sig, _raise_interrupt)
        try:
            self.teardown()
            self.build()
        except BaseException:
            self.teardown()
            self._restore_signals()
            raise
        return self

    def __exit__(self, *exc: Any) -> None:
        try:
            self.teardown()
        finally:
            self._restore_signals()

    def _restore_signals(self) -> None:
        for sig, old in self._old_handlers.items():
            signal.signal(sig, old)
        self._old_handlers.clear()

    def build(self) -> None:
        """Create namespaces, veths, addresses, routes, sysctls and qdiscs.

        One shell script does all of ``ip``/``tc`` (a process per command
        costs ~0.5 s under emulation); sysctls and offloads are set from
        this process, in each namespace.
        """
        if not self.links:
            raise TopologyError("a topology needs at least one link")
        parts = ["set -e", _heredoc("ip -batch -", self._ip_root_script())]
        for name in self.nodes:
            parts.append(_heredoc(f"ip -n {self.ns(name)} -batch -", self._ip_node_script(name)))
        for name in self.nodes:
            tcb = self._tc_node_script(name)
            if tcb:
                parts.append(_heredoc(f"tc -n {self.ns(name)} -batch -", tcb))
            parts += self._netlink_node_lines(name)
        self.script = "\n".join(parts) + "\n"
        sh(["sh", "-c", self.script], timeout=600)
        for name, node in self.nodes.items():
            sysctls = dict(node.sysctls)
            if node.router:
                sysctls["net.ipv4.ip_forward"] = "1"
            with in_netns(self.ns(name)):
                write_sysctls(self.ns(name), sysctls)
                for lk in self._links_of(name):
                    set_offloads(self.dev(name, lk), self.offloads)

    def existing_namespaces(self) -> List[str]:
        try:
            return sorted(p.name for p in NETNS_DIR.iterdir()
                          if p.name.startswith(f"{self.prefix}-"))
        except FileNotFoundError:
            return []

    def teardown(self) -> None:
        """Kill what runs in this prefix's namespaces and delete them."""
        names = self.existing_namespaces()
        if not names:
            return
        for pid in pids_in_netns(names):
            try:
                os.kill(pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
        sh(["ip", "-force", "-batch", "-"], stdin="".join(f"netns del {n}\n" for n in names),
           check=False)
        left = self.existing_namespaces()
        if left:
            raise TopologyError(f"could not delete namespaces {', '.join(left)}")

    # -- read back ------------------------------------------------------------
    def qdiscs(self, node: str) -> List[Dict[str, Any]]:
        """The qdiscs of ``node`` as netlink reports them: dev, kind, handle, parent, options."""
        from pyroute2 import IPRoute

        out = []
        with in_netns(self.ns(node)):
            ipr = IPRoute()
        try:
            names = {ln["index"]: ln.get_attr("IFLA_IFNAME") for ln in ipr.get_links()}
            for msg in ipr.get_qdiscs():
                opts = msg.get_attr("TCA_OPTIONS")
                out.append({
                    "dev": names.get(msg["index"]),
                    "kind": msg.get_attr("TCA_KIND"),
                    "handle": _fmt_handle(msg["handle"]),
                    "parent": _fmt_handle(msg["parent"]),
                    "options": _options_dict(opts),
                })
        finally:
            ipr.close()
        return out


def _fmt_handle(h: int) -> str:
    if h == 0xFFFFFFFF:
        return "root"
    return f"{h >> 16:x}:{h & 0xFFFF:x}"


def _options_dict(opts: Any) -> Dict[str, Any]:
    """Decoded TCA_OPTIONS as plain values (what pyroute2 understands of them)."""
    if opts is None:
        return {}
    out: Dict[str, Any] = {}
    try:
        items = dict(opts).items()
    except (TypeError, ValueError):
        return out
    for k, v in items:
        if k in ("attrs", "header", "value"):
            continue
        if isinstance(v, (int, float, str)):
            out[k] = v
    for name, val in getattr(opts, "get", lambda *_: None)("attrs") or []:
        if isinstance(val, (int, float, str)):
            out[name] = val
        elif isinstance(val, dict):
            out.update({f"{name}.{k}": x for k, x in val.items() if isinstance(x, (int, float))})
    return out


def _raise_interrupt(signum: int, frame: Any) -> None:
    raise KeyboardInterrupt


def _heredoc(cmd: str, body: str) -> str:
    return f"{cmd} <<'EOF'\n{body}EOF"


# ---------------------------------------------------------------------------
# builders


def access_delays(rtt_ms: float, core_one_way_ms: float) -> float:
    """One-way delay of each of the two access links that gives base RTT ``rtt_ms``.

    The path is access + core + access each way, so each access link adds
    (rtt/2 - core)/2.
    """
    each = (rtt_ms / 2 - core_one_way_ms) / 2
    if each < 0:
        raise TopologyError(f"base RTT {rtt_ms} ms is below the core's own "
                            f"{2 * core_one_way_ms:g} ms")
    return each


def dumbbell(rtts_ms: Sequence[float], rate_mbit: float, queue: QueueSpec,
             link_delay_ms: float = 0.0, access_rate_mbit: Optional[float] = None,
             prefix: str = "st", offloads: bool = False, mtu: int = 1500) -> Topology:
    """``len(rtts_ms)`` sender/receiver pairs across one bottleneck link ``lr``.

    Pair i is ``s{i}`` -> ``r{i}``; its base RTT is ``rtts_ms[i-1]``.  Both
    directions of ``lr`` are rate-limited with the same queue (the reverse
    one carries ACKs and reverse traffic).
    """
    if not 1 <= len(rtts_ms) <= 100:
        raise TopologyError("a dumbbell has 1..100 pairs")
    t = Topology(prefix=prefix, offloads=offloads, mtu=mtu)
    t.add_node("l", router=True)
    t.add_node("r", router=True)
    t.connect("l", "r", _core(rate_mbit, queue, link_delay_ms),
              _core(rate_mbit, queue, link_delay_ms), name="lr")
    for i, rtt in enumerate(rtts_ms, 1):
        a = access_delays(rtt, link_delay_ms)
        t.add_node(f"s{i}")
        t.add_node(f"r{i}")
        for host, router in ((f"s{i}", "l"), (f"r{i}", "r")):
            t.connect(host, router, _access(a, access_rate_mbit), _access(a, access_rate_mbit),
                      name=f"{host}{router}")
    return t


def parking_lot(rtts_ms: Sequence[float], rate_mbit: float, queue: QueueSpec,
                routers: int = 6, link_delay_ms: float = 1.0,
                cross_hops: Sequence[int] = (), cross_pairs: int = 0,
                cross_rtt_ms: Optional[float] = None,
                access_rate_mbit: Optional[float] = None,
                prefix: str = "st", offloads: bool = False, mtu: int = 1500) -> Topology:
    """Weigle's "6Q" parking lot: routers ``R0..R{routers-1}`` in a line.

    End-to-end pair i is ``a{i}`` (at R0) <-> ``b{i}`` (at the last router),
    with base RTT ``rtts_ms[i-1]`` including the 1 ms access links and the
    core.  For each hop h in ``cross_hops`` (hop h joins R{h} and R{h+1}),
    ``cross_pairs`` pairs ``x{h}s{j}`` (at R{h}) <-> ``x{h}r{j}`` (at R{h+1})
    load that hop only.  Every core link is rate-limited both ways.
    """
    if not 2 <= routers <= 10:
        raise TopologyError("a parking lot has 2..10 routers")
    if not 1 <= len(rtts_ms) <= 60:
        raise TopologyError("a parking lot has 1..60 end-to-end pairs")
    for h in cross_hops:
        if not 0 <= h < routers - 1:
            raise TopologyError(f"cross-traffic hop {h} is not between two routers")
    t = Topology(prefix=prefix, offloads=offloads, mtu=mtu)
    for i in range(routers):
        t.add_node(f"R{i}", router=True)
    for i in range(routers - 1):
        t.connect(f"R{i}", f"R{i + 1}", _core(rate_mbit, queue, link_delay_ms),
                  _core(rate_mbit, queue, link_delay_ms), name=f"r{i}r{i + 1}")
    core = link_delay_ms * (routers - 1)
    last = f"R{routers - 1}"
    for i, rtt in enumerate(rtts_ms, 1):
        a = access_delays(rtt, core)
        t.add_node(f"a{i}")
        t.add_node(f"b{i}")
        for host, router in ((f"a{i}", "R0"), (f"b{i}", last)):
            t.connect(host, router, _access(a, access_rate_mbit), _access(a, access_rate_mbit),
                      name=f"{host}{router}")
    for h in cross_hops:
        rtt = cross_rtt_ms if cross_rtt_ms is not None else 2 * (link_delay_ms * 3)
        a = access_delays(rtt, link_delay_ms)
        for j in range(1, cross_pairs + 1):
            s, r = f"x{h}s{j}", f"x{h}r{j}"
            t.add_node(s)
            t.add_node(r)
            t.connect(s, f"R{h}", _access(a, access_rate_mbit), _access(a, access_rate_mbit))
            t.connect(r, f"R{h + 1}", _access(a, access_rate_mbit), _access(a, access_rate_mbit))
    return t


def chain(rtts_ms: Sequence[float], rate_mbit: float, queue: QueueSpec, hops: int = 3,
          cross_pairs: int = 1, **kw: Any) -> Topology:
    """A multi-bottleneck chain: ``hops`` core links, cross traffic on each."""
    if not 1 <= hops <= 9:
        raise TopologyError("a chain has 1..9 hops")
    return parking_lot(rtts_ms, rate_mbit, queue, routers=hops + 1,
                       cross_hops=range(hops), cross_pairs=cross_pairs, **kw)


def _core(rate_mbit: float, queue: QueueSpec, delay_ms: float) -> Egress:
    return Egress(rate_mbit=rate_mbit, queue=queue, delay_ms=delay_ms)


def _access(delay_ms: float, rate_mbit: Optional[float]) -> Egress:
    """An access link: delay only (or a fast rate with a large queue)."""
    if rate_mbit is None:
        return Egress(delay_ms=delay_ms)
    return Egress(rate_mbit=rate_mbit, queue=QueueSpec("droptail", 10000), delay_ms=delay_ms)
