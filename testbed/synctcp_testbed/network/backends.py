"""Topology backends: who builds a case's network (``--backend``).

A backend is a function ``(case, prefix) -> Topology`` that returns the
case's topology, unbuilt; the runner enters it (``with topo:``) and from
then on addresses its namespaces by name, whatever built them.

* ``netns`` (here): :func:`build_topology`, ``ip netns``, veths and tc.
* ``mininet``: :mod:`synctcp_mininet.backend` registers itself when it is
  imported; :func:`get` imports it by name on first use, and says so in one
  line when the package or Mininet itself is missing.

This module imports neither the runner nor any backend package, so there
is no import circle between the runner and Mininet.
"""

from __future__ import annotations

import importlib
from typing import Any, Callable, Dict, List, Optional, Tuple

from ..scenario import RATE_COUNTS, Case
from .netns import TopologyError
from .topology import Topology, chain, dumbbell, parking_lot

Builder = Callable[[Case, str], Topology]

#: backends that other packages provide: name -> the module that registers it
PROVIDERS: Dict[str, str] = {"mininet": "synctcp_mininet.backend"}

_builders: Dict[str, Builder] = {}
_checks: Dict[str, Callable[[], None]] = {}


class BackendError(RuntimeError):
    """An unknown or unusable backend; the message says why."""


def register(name: str, builder: Builder, check: Optional[Callable[[], None]] = None) -> None:
    """Make ``builder`` the backend ``name``.

    ``check`` (optional) raises when the backend cannot work on this host
    (e.g. Mininet is not installed); :func:`get` calls it.
    """
    if not name or not name.replace("-", "").isalnum():
        raise BackendError(f"backend name {name!r}: letters, digits and -")
    _builders[name] = builder
    if check is not None:
        _checks[name] = check
    else:
        _checks.pop(name, None)


def names() -> List[str]:
    """Every backend that can be asked for, ``netns`` first."""
    return ["netns", *sorted((set(_builders) | set(PROVIDERS)) - {"netns"})]


def get(name: str = "netns") -> Builder:
    """The builder of backend ``name``, importing its provider if needed."""
    if name not in _builders and name in PROVIDERS:
        try:
            importlib.import_module(PROVIDERS[name])
        except ImportError as exc:
            raise BackendError(f"backend {name}: {exc}") from exc
        if name not in _builders:
            raise BackendError(f"backend {name}: {PROVIDERS[name]} did not register it")
    if name not in _builders:
        raise BackendError(f"unknown backend {name!r}: one of {', '.join(names())}")
    check = _checks.get(name)
    if check is not None:
        try:
            check()
        except ImportError as exc:
            raise BackendError(f"backend {name}: {exc}") from exc
    return _builders[name]


def build_topology(case: Case, prefix: str = "st") -> Topology:
    """The ``netns`` backend: the case's topology with its queue discipline.

    Hosts get the scenario's ECN (``Scenario.tcp_ecn``: by default on when
    the queue marks) and ``tcp_no_metrics_save``; the
    algorithm is set by the runner (per namespace, once built).
    """
    sc = case.scenario
    t = sc.topology
    aqm = "droptail" if case.aqm == "ceiling" else case.aqm
    queue = sc.queue_spec(aqm, t.rate_mbit, limit=case.queue_limit)
    common: Dict[str, Any] = dict(access_rate_mbit=t.access_rate_mbit, prefix=prefix,
                                  offloads=t.offloads, mtu=t.mtu)
    if t.kind == "path":
        raise TopologyError("topology.kind path is the real path between hosts: run it with "
                            "--hosts HOSTS.toml (docs/real-hosts.md)")
    if t.kind == "dumbbell":
        topo = dumbbell(t.rtts_ms, t.rate_mbit, queue, link_delay_ms=t.link_delay_ms, **common)
    elif t.kind == "parking-lot":
        topo = parking_lot(t.rtts_ms, t.rate_mbit, queue, routers=t.routers,
                           link_delay_ms=t.link_delay_ms, cross_hops=t.cross_hops,
                           cross_pairs=t.cross_pairs, cross_rtt_ms=t.cross_rtt_ms, **common)
    else:
        topo = chain(t.rtts_ms, t.rate_mbit, queue, hops=t.hops, cross_pairs=t.cross_pairs,
                     link_delay_ms=t.link_delay_ms, cross_rtt_ms=t.cross_rtt_ms, **common)
    overhead = RATE_COUNTS[t.rate_counts]
    for link in topo.links:
        for egress in (link.a_egress, link.b_egress):
            if egress.rate_mbit is not None:
                egress.size_overhead = overhead
    ecn = sc.tcp_ecn(aqm)
    rmem, wmem = socket_buffers(t.rate_mbit, max(t.rtts_ms), t.access_rate_mbit)
    for node in topo.nodes.values():
        if not node.router:
            node.init_cwnd_segs = t.init_cwnd_segs
            node.sysctls.update({"net.ipv4.tcp_ecn": ecn, "net.ipv4.tcp_no_metrics_save": "1",
                                 "net.ipv4.tcp_rmem": f"4096 131072 {rmem}",
                                 "net.ipv4.tcp_wmem": f"4096 16384 {wmem}"})
    return topo


#: Linux's default maxima of tcp_rmem and tcp_wmem (bytes)
RMEM_MAX, WMEM_MAX = 6291456, 4194304


def socket_buffers(rate_mbit: float, rtt_ms: float,
                   access_rate_mbit: Optional[float] = None) -> Tuple[int, int]:
    """tcp_rmem and tcp_wmem maxima for a path: at least 4 BDPs of its longest RTT
    at its fastest link, so that the receive window (half the receive buffer
    goes to overhead) never sets the rate; never below Linux's defaults."""
    bdp = max(rate_mbit, access_rate_mbit or 0) * 1e6 / 8 * rtt_ms / 1e3
    need = int(4 * bdp)
    return max(RMEM_MAX, need), max(WMEM_MAX, need)


register("netns", build_topology)
