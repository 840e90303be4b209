"""Mininet as a topology backend of the testbed's runner.

:class:`MininetTopology` is a testbed :class:`Topology` (same graph, same
addresses, same egress stages) that Mininet builds instead of ``ip netns
add``: Mininet hosts (routers are hosts with ``ip_forward``), joined by
direct veth links (no switches: no controller, no Open vSwitch daemons).
Each Mininet host's namespace is then given the name the testbed would
have given it (``ip netns attach NAME PID``), so the runner's samplers,
servers, clients and collection, which address namespaces by name
(``ip netns exec``, ``tc -n``, ``setns``), run unchanged on it: one
implementation of every measurement and metric for both testbeds.

    synctcp-testbed run SCENARIO --backend mininet      (or synctcp-mininet run SCENARIO)

Importing this module registers the backend ``mininet`` with
:mod:`synctcp_testbed.network.backends` (which imports it by that name on first
use); it imports nothing of the runner.
"""

from __future__ import annotations

import time
from typing import Any

from synctcp_testbed.network.backends import build_topology as netns_topology
from synctcp_testbed.network.backends import register
from synctcp_testbed.scenario import Case
from synctcp_testbed.network.netns import sh
from synctcp_testbed.network.topology import Topology, TopologyError

from . import ensure_mininet


class MininetTopology(Topology):
    """A testbed topology built by Mininet; its namespaces carry the testbed's names."""

    def __init__(self, base: Topology):
        super().__init__(prefix=base.prefix, subnet_base=base.subnet_base,
                         offloads=base.offloads, mtu=base.mtu)
        self.nodes, self.links = base.nodes, base.links
        self.net: Any = None
        #: seconds Mininet took to build the network, and to name the namespaces
        self.build_s = 0.0

    def build(self) -> None:
        ensure_mininet()
        from mininet.net import Mininet

        from .topos import TestbedTopo

        if not self.links:
            raise TopologyError("a topology needs at least one link")
        # Mininet.init() raises root-namespace limits and TCP buffer sysctls
        # (tcp_rmem/tcp_wmem) that new namespaces inherit: skipped, so that
        # both backends run with the kernel's defaults
        Mininet.inited = True
        t0 = time.monotonic()
        try:
            self.net = Mininet(topo=TestbedTopo(self), controller=None, build=False)
            self.net.build()
        except Exception as exc:
            raise TopologyError(f"Mininet could not build the topology: {exc}") from exc
        self.build_s = time.monotonic() - t0
        attach = "".join(f"netns attach {self.ns(n)} {self.net[n].pid}\n" for n in self.nodes)
        sh(["ip", "-batch", "-"], stdin=attach)
        self.script = self._describe(attach)

    def _describe(self, attach: str) -> str:
        """What was built, as a commented script (the run directory's topology.sh)."""
        out = ["# built by Mininet (synctcp_mininet.backend): one Mininet host per node,",
               "# direct veth links (no switches), then the namespaces named for the testbed:",
               "ip -batch - <<'EOF'", attach.rstrip("\n"), "EOF"]
        for name in self.nodes:
            host = self.net[name]
            out.append(f"# {name}: {'router' if self.nodes[name].router else 'host'}, pid {host.pid}")
            for intf in host.intfList():
                shaping = getattr(intf, "shaping", "")
                if intf.name != "lo":
                    out.append(f"#   {intf.name} {intf.IP()}/24")
                if shaping:
                    out.append(shaping)
            lines = getattr(host, "ip_lines", [])
            if lines:
                out += [f"ip -n {self.ns(name)} -batch - <<'EOF'", *lines, "EOF"]
        return "\n".join(out) + "\n"

    def teardown(self) -> None:
        """Stop Mininet's host shells, then what is left in the namespaces, and unname them.

        Deleting the namespaces removes their veths with them: faster than
        Mininet's ``stop()``, which deletes every link with its own ``ip``.
        """
        if self.net is not None:
            for host in self.net.hosts:
                try:
                    host.terminate()
                except Exception:       # a shell already gone
                    pass
            self.net = None
        super().teardown()


def build_topology(case: Case, prefix: str = "st") -> MininetTopology:
    """The runner's backend: the case's testbed topology, built by Mininet."""
    return MininetTopology(netns_topology(case, prefix))


register("mininet", build_topology, check=ensure_mininet)
