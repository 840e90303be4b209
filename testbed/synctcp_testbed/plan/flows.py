"""The flows of a case: who sends to whom, with which algorithm, on which ports.

:func:`plan_case` turns a case (one algorithm x queue x sweep point x seed
of a scenario) and its built topology into a :class:`Plan`: every bulk,
reverse, cross and CBR flow with its ends, ports, base RTT and start
offset (the start jitter is drawn from the case's seed, flow by flow), and
the HTTP server/client pairs with their share of the load.  Nothing here
runs anything; :mod:`synctcp_testbed.case` runs the plan.
"""

from __future__ import annotations

import random
from dataclasses import dataclass, field
from typing import List, Tuple

from ..network.topology import Topology
from ..scenario import Case, Scenario

#: first port of the bulk flows, of the CBR flows, the HTTP servers' port, first client port
BULK_PORT, CBR_PORT, HTTP_PORT, CPORT = 5201, 6201, 8080, 40001


class PlanError(ValueError):
    """A case whose flows cannot be planned; the message says why."""


@dataclass
class Flow:
    """One bulk or CBR flow: its ends (nodes and addresses), ports and start offset."""

    id: str
    group: str
    cc: str
    src: str
    dst: str
    port: int
    cport: int
    base_rtt_ms: float
    start_s: float = 0.0
    kind: str = "bulk"          # bulk | cbr
    src_addr: str = ""
    dst_addr: str = ""
    #: the sender stops this long after the start (s); 0: at the case's end
    stop_s: float = 0.0


@dataclass
class HttpPair:
    """An HTTP server and its client, with the client's share of the offered load."""

    server: str
    client: str
    server_addr: str
    load_pct: float


@dataclass
class Plan:
    """Everything a case runs: its flows, its HTTP pairs and their settings."""

    flows: List[Flow] = field(default_factory=list)
    http: List[HttpPair] = field(default_factory=list)
    #: algorithm of the HTTP servers and clients
    http_cc: str = "reno"
    cbr_kbit: float = 64.0
    cbr_bytes: int = 200


def case_ccs(case: Case) -> List[str]:
    """Every algorithm a case's flows use, in a fixed order."""
    tr = case.scenario.traffic
    return sorted({case.cc, tr.minority_of, tr.rev_cc} - {"", "udp"})


def http_seed(seed: int, client: int) -> int:
    """The seed of HTTP client number ``client`` (0-based) of a case with ``seed``."""
    return seed * 1000 + client


def pair_nodes(sc: Scenario) -> List[Tuple[str, str]]:
    """(sender-side node, receiver-side node) of each end-to-end pair."""
    n = len(sc.topology.rtts_ms)
    if sc.topology.kind in ("dumbbell", "path"):
        return [(f"s{i}", f"r{i}") for i in range(1, n + 1)]
    return [(f"a{i}", f"b{i}") for i in range(1, n + 1)]


def plan_case(case: Case, topo: Topology) -> Plan:
    """The flows of a case: who sends to whom, with which algorithm, on which ports."""
    sc, tr = case.scenario, case.scenario.traffic
    plan = Plan(http_cc=case.cc)
    if tr.cbr:
        plan.cbr_kbit, plan.cbr_bytes = tr.cbr.rate_kbit, tr.cbr.pkt_bytes
    pairs = pair_nodes(sc)
    k = 0
    # each flow's jitter: the k-th draw of the case's seed, whatever else the case runs
    jitter = random.Random(f"start:{sc.seed}")

    def add(group: str, cc: str, src: str, dst: str, rtt: float, kind: str = "bulk",
            stop_s: float = 0.0) -> None:
        nonlocal k
        port = (CBR_PORT if kind == "cbr" else BULK_PORT) + k
        plan.flows.append(Flow(f"f{k + 1:02d}", group, cc, src, dst, port, CPORT + k, rtt,
                               start_s=k * tr.stagger_s + round(jitter.uniform(
                                   0, tr.start_jitter_s), 3), kind=kind, src_addr=topo.addr(src),
                               dst_addr=topo.addr(dst), stop_s=stop_s))
        k += 1

    if tr.bulk_fwd:
        for i, ((s, r), rtt) in enumerate(zip(pairs, sc.topology.rtts_ms)):
            cc = tr.minority_of if (tr.minority_of and i > 0) else case.cc
            for _ in range(tr.flows_per_pair):
                add("fwd" if not tr.minority_of or i > 0 else "minority", cc, s, r, rtt,
                    stop_s=tr.others_stop_s if tr.minority_of and i > 0 else 0.0)
    if tr.bulk_rev:
        for i, ((s, r), rtt) in enumerate(zip(pairs, sc.topology.rtts_ms), 1):
            if not tr.rev_pairs or i in tr.rev_pairs:
                for _ in range(tr.flows_per_pair):
                    add("rev", tr.rev_cc or case.cc, r, s, rtt)
    if tr.cross and sc.topology.kind != "dumbbell":
        cross_hops = (sc.topology.cross_hops if sc.topology.kind == "parking-lot"
                      else range(sc.topology.hops))
        for h in cross_hops:
            for j in range(1, sc.topology.cross_pairs + 1):
                rtt = sc.topology.cross_rtt_ms or 6 * sc.topology.link_delay_ms
                add("cross", tr.minority_of or case.cc, f"x{h}s{j}", f"x{h}r{j}", rtt)
    if tr.cbr:
        for i in tr.cbr.pairs:
            if not 1 <= i <= len(pairs):
                raise PlanError(f"traffic.cbr.pairs: no pair {i}")
            s, r = pairs[i - 1]
            add("cbr", "udp", s, r, sc.topology.rtts_ms[i - 1], kind="cbr")
    if tr.http_load_pct:
        n = tr.http_pairs
        for s, r in pairs[:n]:
            plan.http.append(HttpPair(s, r, topo.addr(s), tr.http_load_pct / n))
    return plan
