"""The testbed's topologies as Mininet topologies.

One source of truth: every Topo here is made from the testbed's own
:class:`synctcp_testbed.network.topology.Topology` (the builders ``dumbbell``,
``parking_lot``, ``chain`` fed by a scenario), so the Mininet network has
the same node names, interface names, addresses, routes, sysctls,
offloads and queues as the namespaces of ``synctcp-testbed run``.

Interactively (no switches, so no controller and no Open vSwitch)::

    mn --custom mininet/synctcp_mininet/topos.py --topo dumbbell --controller none --test pingall
    mn --custom mininet/synctcp_mininet/topos.py --topo dumbbell,rate=10,rtts=40+80,aqm=red-ecn \\
       --controller none
    mn --custom mininet/synctcp_mininet/topos.py --topo parkinglot --controller none
    mn --custom mininet/synctcp_mininet/topos.py --topo geo --controller none
    mn --custom mininet/synctcp_mininet/topos.py --topo smallbuffer,rate=20 --controller none
    mn --custom mininet/synctcp_mininet/topos.py --topo scenario,name=martin-minority --controller none

From a script::

    from synctcp_mininet.topos import DumbbellTopo
    net = Mininet(topo=DumbbellTopo(rate=10, rtts="40+80"), controller=None)

Links: an egress that only delays or loses packets is a ``TCLink``
(``delay``, ``loss``, ``max_queue_size`` = the testbed's netem limit).
An egress with a rate limit and a bottleneck queue is configured with the
testbed's own ``tc`` commands (:mod:`synctcp_testbed.network.qdisc`: netem delay,
then htb rate, then the queue) because TCLink cannot express it
faithfully: TCLink puts the delay *after* the rate limiter in one netem
whose ``limit`` (``max_queue_size``) also counts the packets in the delay
line, its htb has a fixed 15 kB burst, and its RED/ECN has fixed
thresholds (30000/35000 bytes, probability 1) with no ARED, fq_codel or
PIE.  ``docs/mininet.md`` has the details.
"""

from __future__ import annotations

import contextlib
import os
import shlex
import sys
import tempfile
from pathlib import Path
from typing import Any, Dict, List, Optional, Tuple

if not globals().get("__package__"):
    # loaded by ``mn --custom FILE``: Debian's mn execs the file's code in an
    # empty dict (no ``__file__``, ``__package__`` is the builtins' ""), so
    # the code object's file name is what says where our packages are
    _here = Path(globals().get("__file__") or sys._getframe(0).f_code.co_filename).resolve()
    for _p in (_here.parents[1], _here.parents[2] / "testbed", _here.parents[2] / "tools"):
        if str(_p) not in sys.path:
            sys.path.insert(0, str(_p))

from synctcp_mininet import ensure_mininet  # noqa: E402

ensure_mininet()

from mininet.link import Intf, Link, TCIntf  # noqa: E402
from mininet.node import Host  # noqa: E402
from mininet.topo import Topo  # noqa: E402

from synctcp_testbed.network.qdisc import NETEM_LIMIT, Egress, via_netlink  # noqa: E402
from synctcp_testbed.network.netns import in_netns_file, set_offloads, write_sysctls  # noqa: E402
from synctcp_testbed.network.topology import Topology  # noqa: E402

def in_pid_netns(pid: int) -> "contextlib.AbstractContextManager[None]":
    """Run the body in the network namespace of process ``pid`` (a Mininet node)."""
    return in_netns_file(f"/proc/{pid}/ns/net", f"of pid {pid}")


# ---------------------------------------------------------------------------
# links


def tclink_params(egress: Optional[Egress]) -> Optional[Dict[str, Any]]:
    """TCLink parameters that reproduce ``egress`` exactly, or None if TCLink cannot.

    TCLink fits an egress that only delays and/or drops at random: one
    netem, as the testbed's, with the testbed's netem limit.  It does not
    fit a rate limit with a queue (the module docstring says why) nor
    jitter (the testbed draws it from a normal distribution, TCLink from
    netem's default uniform one).
    """
    if egress is None:
        return {}
    if egress.rate_mbit is not None or egress.queue is not None or egress.jitter_ms > 0:
        return None
    if not egress.has_netem:
        return {}
    out: Dict[str, Any] = {"max_queue_size": NETEM_LIMIT}
    if egress.delay_ms > 0:
        out["delay"] = f"{egress.delay_ms:g}ms"
    if egress.loss_pct > 0:
        out["loss"] = egress.loss_pct
    return out


#: marks the exit status after a batch's output (run_batch)
RC_MARK = "synctcp-batch-status="


class SyncIntf(TCIntf):
    """An interface whose egress is a testbed :class:`Egress`.

    ``egress``: as TCLink parameters where they fit (:func:`tclink_params`),
    else the testbed's ``tc`` commands run in one ``tc -batch``.  What was
    done is kept in :attr:`shaping` (for the run directory's
    ``topology.sh``).
    """

    def config(self, egress: Optional[Egress] = None, **params: Any) -> Any:
        tcl = tclink_params(egress)
        if tcl is not None:
            shown = ", ".join(f"{k}={v!r}" for k, v in tcl.items())
            self.shaping = f"# {self.name}: TCLink({shown})" if tcl else ""
            return TCIntf.config(self, **tcl, **params)
        result = Intf.config(self, **params)
        assert egress is not None
        cmds = egress.tc_commands(self.name)
        lines = [" ".join(c) for c in cmds if not via_netlink(c)]
        # qdiscs the pinned tc cannot configure (dualpi2): added over netlink
        nl = [f"{shlex.quote(sys.executable)} -m synctcp_testbed.network.tcnl {' '.join(c)}"
              for c in cmds if via_netlink(c)]
        self.shaping = f"# {self.name}: tc (testbed egress)\n" + "\n".join(
            [f"tc {ln}" for ln in lines] + nl)
        rc, out = run_batch(self.node, "tc", lines)
        if rc != 0:
            raise RuntimeError(f"{self.node.name}: tc -batch for {self.name} failed ({rc}): "
                               f"{out.strip()}")
        for line in nl:
            said = self.node.cmd(f"{line} 2>&1; echo rc=$?").strip().splitlines()
            if not said or said[-1] != "rc=0":
                raise RuntimeError(f"{self.node.name}: {' '.join(said[:-1]) or line}")
        if out.strip():     # warnings, e.g. newer kernels' "sch_htb: quantum of class ... is big"
            self.shaping += "".join(f"\n# tc said: {ln}" for ln in out.strip().splitlines())
        return result


class SyncLink(Link):
    """A veth pair of :class:`SyncIntf` (``params1``/``params2`` carry ``egress``)."""

    def __init__(self, node1: Any, node2: Any, **kw: Any):
        # Mininet.addLink passes its own default intf class (Intf): ours wins
        kw["intf"] = SyncIntf
        Link.__init__(self, node1, node2, **kw)


def run_batch(node: Any, tool: str, lines: List[str]) -> Tuple[int, str]:
    """``ip -batch`` / ``tc -batch`` of ``lines`` in ``node`` (one process): its exit
    status and output (a successful batch may still print warnings)."""
    if not lines:
        return 0, ""
    fd, path = tempfile.mkstemp(prefix=f"synctcp-{node.name}-", suffix=".batch", dir="/dev/shm"
                                if os.path.isdir("/dev/shm") else None)
    try:
        with os.fdopen(fd, "w") as fh:
            fh.write("\n".join(lines) + "\n")
        out = node.cmd(f"{tool} -batch {path} 2>&1; echo {RC_MARK}$?")
        text, _, rc = out.rpartition(RC_MARK)
        try:
            return int(rc.strip()), text
        except ValueError:
            return 255, out
    finally:
        os.unlink(path)


# ---------------------------------------------------------------------------
# hosts and routers


class SyncHost(Host):
    """A testbed node as a Mininet host (routers too, with ``ip_forward``).

    After Mininet made its interfaces and addresses, :meth:`config` sets the
    node's sysctls and offloads (ioctls, read back) from this process inside
    the host's namespace and runs the testbed's ``ip`` script of the node
    without its addresses (MTU, links up, static routes, window clamps).
    """

    def config(self, router: bool = False, sysctls: Optional[Dict[str, str]] = None,
               ip_lines: Optional[List[str]] = None, offloads: bool = False,
               **params: Any) -> Any:
        result = Host.config(self, **params)
        values = dict(sysctls or {})
        if router:
            values["net.ipv4.ip_forward"] = "1"
        with in_pid_netns(self.pid):
            write_sysctls(self.name, values)
            for intf in self.intfList():
                if intf.name != "lo":
                    set_offloads(intf.name, offloads)
        rc, out = run_batch(self, "ip", list(ip_lines or []))
        if rc != 0 or out.strip():
            raise RuntimeError(f"{self.name}: ip -batch failed ({rc}): {out.strip()}")
        self.ip_lines = list(ip_lines or [])
        return result


# ---------------------------------------------------------------------------
# topologies


def ip_lines(topology: Topology, node: str) -> List[str]:
    """The testbed's ``ip -batch`` lines of ``node`` less its addresses (Mininet sets those)."""
    return [ln for ln in topology._ip_node_script(node).splitlines()
            if ln and not ln.startswith("addr add")]


class TestbedTopo(Topo):
    """A testbed :class:`Topology` as a Mininet Topo: hosts, routers and links."""

    __test__ = False    # not a pytest class, despite its name

    def build(self, topology: Topology) -> None:  # type: ignore[override]
        self.topology = topology
        ports: Dict[str, int] = {}
        for name, node in topology.nodes.items():
            # ip=None: every address is an interface's (the default one
            # would otherwise get a 10.0.0.0/8 address covering the testbed's)
            self.addHost(name, cls=SyncHost, ip=None, router=node.router,
                         sysctls=dict(node.sysctls), ip_lines=ip_lines(topology, name),
                         offloads=topology.offloads)
        for lk in topology.links:
            p1, p2 = ports.get(lk.a, 0), ports.get(lk.b, 0)
            ports[lk.a], ports[lk.b] = p1 + 1, p2 + 1
            self.addLink(lk.a, lk.b, port1=p1, port2=p2, cls=SyncLink,
                         intfName1=topology.dev(lk.a, lk), intfName2=topology.dev(lk.b, lk),
                         params1={"ip": f"{topology.addr(lk.a, lk)}/24", "egress": lk.a_egress},
                         params2={"ip": f"{topology.addr(lk.b, lk)}/24", "egress": lk.b_egress})


def _floats(text: Any) -> List[float]:
    """``40+80`` or ``40`` (mn's ``--topo`` arguments cannot hold commas) as floats."""
    if isinstance(text, (int, float)):
        return [float(text)]
    return [float(x) for x in str(text).replace(" ", "+").split("+") if x]


def scenario_topology(name: Any, cc: str = "", aqm: str = "", point: int = 0,
                      prefix: str = "mn", **topology: Any) -> Topology:
    """The testbed Topology of a scenario's case.

    ``name`` is a preset name, a .toml path or a :class:`Scenario`;
    ``topology`` overrides keys of its ``[topology]`` table (``rate_mbit``,
    ``rtts_ms``, ``queue_pkts``...; an overridden key is no longer swept);
    ``point`` picks a sweep point (0: the first).
    """
    from dataclasses import replace

    from synctcp_testbed.network.backends import build_topology
    from synctcp_testbed.scenario import Scenario, load

    sc = name if isinstance(name, Scenario) else load(str(name))
    if topology:
        if "queue_pkts" in topology:
            topology.setdefault("queue_bdp", None)
        sc = replace(sc, topology=replace(sc.topology, **topology),
                     sweep={k: v for k, v in sc.sweep.items() if k not in topology})
        sc.validate()
    cases = [c for c in sc.cases(aqms=[aqm] if aqm else None) if c.aqm != "ceiling"]
    cases = [c for c in cases if c.cc == cc] or cases
    points: List[Any] = []
    for c in cases:
        if c.point not in points:
            points.append(c.point)
    case = next(c for c in cases if c.point == points[min(int(point), len(points) - 1)])
    return build_topology(case, prefix)


class ScenarioTopo(TestbedTopo):
    """Any scenario's topology: ``--topo scenario,name=holl-geo[,aqm=red][,point=1]``."""

    def build(self, name: str = "gu-smallbuffer", aqm: str = "", cc: str = "",  # type: ignore[override]
              point: int = 0, prefix: str = "mn") -> None:
        TestbedTopo.build(self, scenario_topology(name, cc=cc, aqm=aqm, point=point, prefix=prefix))


class DumbbellTopo(TestbedTopo):
    """Dumbbell with per-flow RTTs: ``s1..sN -- l ==== r -- r1..rN``.

    ``rate`` Mbit/s on ``lr`` both ways, ``rtts`` the base RTT of each
    pair in ms (``40+80``), ``queue`` packets of ``aqm`` (droptail, red,
    red-ecn, ared, ared-ecn, fq_codel, pie, pie-ecn, dualpi2, cake, cake-ecn).
    """

    def build(self, rate: float = 10, rtts: Any = "40+80", queue: int = 100,  # type: ignore[override]
              aqm: str = "droptail", prefix: str = "mn") -> None:
        from synctcp_testbed.scenario import Scenario, TopologySpec

        sc = Scenario(name="dumbbell", aqm=[aqm], topology=TopologySpec(
            kind="dumbbell", rate_mbit=float(rate), rtts_ms=_floats(rtts), queue_pkts=int(queue)))
        sc.validate()
        TestbedTopo.build(self, scenario_topology(sc, prefix=prefix))


class ParkingLotTopo(TestbedTopo):
    """The dissertation's parking lot (Weigle's "6Q", preset weigle-ftp).

    Six routers R0..R5 joined by 10 Mbit/s, 1 ms links, 20 end-to-end pairs
    ``a1..a20`` (at R0) to ``b1..b20`` (at R5) with Table 4.2's RTTs, 92-packet
    queues.  ``pairs`` keeps the first pairs only (a smaller network for
    interactive use in an emulated VM); ``cross`` adds that many cross
    traffic pairs at hops 1 and 3 (a multi-bottleneck variant).
    """

    def build(self, aqm: str = "droptail", pairs: int = 0, cross: int = 0,  # type: ignore[override]
              prefix: str = "mn") -> None:
        over: Dict[str, Any] = {}
        if pairs:
            from synctcp_testbed.scenario import load
            over["rtts_ms"] = load("weigle-ftp").topology.rtts_ms[:int(pairs)]
        if cross:
            over.update(cross_pairs=int(cross), cross_hops=[1, 3])
        TestbedTopo.build(self, scenario_topology("weigle-ftp", aqm=aqm, prefix=prefix, **over))


class GeoTopo(TestbedTopo):
    """Holl's GEO satellite dumbbell (preset holl-geo): 1.536 Mbit/s, 450 ms one way, MTU 576."""

    def build(self, aqm: str = "droptail", prefix: str = "mn") -> None:  # type: ignore[override]
        TestbedTopo.build(self, scenario_topology("holl-geo", aqm=aqm, prefix=prefix))


class SmallBufferTopo(TestbedTopo):
    """Gu et al.'s small-buffer dumbbell (preset gu-smallbuffer): one pair, 100 ms, 20 packets."""

    def build(self, rate: float = 10, queue: int = 20, prefix: str = "mn") -> None:  # type: ignore[override]
        TestbedTopo.build(self, scenario_topology("gu-smallbuffer", prefix=prefix,
                                                  rate_mbit=float(rate), queue_pkts=int(queue)))


#: for ``mn --custom topos.py --topo NAME[,ARGS]``
topos = {
    "dumbbell": DumbbellTopo,
    "parkinglot": ParkingLotTopo,
    "geo": GeoTopo,
    "smallbuffer": SmallBufferTopo,
    "scenario": ScenarioTopo,
}
#: ``mn --custom topos.py --host synchost`` is not needed: every Topo sets its classes
hosts = {"synchost": SyncHost}
links = {"synclink": SyncLink}
