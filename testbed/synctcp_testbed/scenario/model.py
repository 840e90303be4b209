"""The scenario model: a topology, a workload and what to compare, and its cases.

A scenario file is what a researcher diffs; every key is documented in
``docs/testbed.md`` and declared here with its type, range and unit
(pydantic dataclasses, checked when a scenario is built).  A scenario
expands into *cases* (:meth:`Scenario.cases`): one per algorithm x queue
discipline x sweep value x seed, each run on a freshly built topology.
Reading files and presets is :mod:`.files`.
"""

from __future__ import annotations

import dataclasses
import itertools
import math
from dataclasses import asdict, replace
from typing import Annotated, Any, Dict, List, Optional, Sequence, Tuple, Union

from pydantic import ConfigDict, Field, ValidationError
from pydantic.dataclasses import dataclass

from synctcp.modctl import CC_MODULES

from ..network.qdisc import AQMS, KERNEL_QDISCS, L4S_CLASSIFIERS, QdiscError, QueueSpec
from .keys import items, num, shown, sweep_error

#: sender MSS on a 1500-byte MTU with timestamps (what "segments" means here)
MSS_BYTES = 1448
KINDS = ("dumbbell", "parking-lot", "chain", "path")
#: kinds whose links this tool builds; "path" is the real path between the hosts of
#: ``run --hosts`` (docs/real-hosts.md): nothing emulated
BUILT_KINDS = ("dumbbell", "parking-lot", "chain")
#: what a link's rate counts, and the size-table overhead that makes it so
RATE_COUNTS = {"frame": 0, "ip": -14}
SWEEPABLE = ("rate_mbit", "queue_pkts", "http_load_pct", "bulk_rev", "rev_load", "flows_per_pair",
             "cbr_calls")


class ScenarioError(ValueError):
    """A scenario file that cannot be run, with the reason (one line per problem)."""


def joined(problems: Sequence[str]) -> str:
    """Several problems as ScenarioError's text: the first line, then one a line."""
    return "\n".join(problems)


#: pydantic dataclasses: every key is checked for its type (strictly: a
#: string is not a number, a number not a list, true not 1) and its range
#: when the scenario is built, and again by ``dataclasses.replace``
MODEL = ConfigDict(strict=True, extra="forbid")


#: list items with their ranges
RttMs = Annotated[float, Field(ge=0, le=20000)]
PairNo = Annotated[int, Field(ge=1, le=10000)]
HopNo = Annotated[int, Field(ge=0, le=100)]


@dataclass(config=MODEL)
class TopologySpec:
    kind: str = "dumbbell"
    rate_mbit: float = num(20.0, 0, 100000, above=True, unit="Mbit/s")
    link_delay_ms: float = num(0.0, 0, 10000, unit="ms")
    #: base RTT of each end-to-end pair (its length is the number of pairs)
    rtts_ms: List[RttMs] = items(lambda: [40.0], 0, 20000, unit="ms", min_length=1)
    #: bottleneck queue limit in packets, or a multiple of the BDP of the median RTT
    queue_pkts: Optional[int] = num(None, 1, 1000000, unit="packets")
    queue_bdp: Optional[float] = num(None, 0, 1000, above=True, unit="x BDP")
    routers: int = num(6, 2, 100)
    hops: int = num(3, 1, 100)
    cross_hops: List[HopNo] = items(list, 0, 100)
    cross_pairs: int = num(0, 0, 1000)
    cross_rtt_ms: Optional[float] = num(None, 0, 20000, unit="ms")
    access_rate_mbit: Optional[float] = num(None, 0, 100000, above=True, unit="Mbit/s")
    #: the senders' maximum window in segments: every TCP receiver's advertised
    #: window clamped to it (flowgen -W; a route window does not hold on Linux >= 6.7)
    window_segs: Optional[int] = num(None, 1, 1000000, unit="segments")
    #: the hosts' initial congestion window in segments (route initcwnd; Linux's
    #: default is 10, RFC 6928; ns-2's of Weigle's runs was 2)
    init_cwnd_segs: Optional[int] = num(None, 1, 1000, unit="segments")
    mtu: int = num(1500, 576, 9000, unit="bytes")
    #: what the links' rates count: "frame" (Ethernet frames, as a real
    #: link does) or "ip" (IP packets, as ns-2's links do: a size table
    #: takes the 14-byte Ethernet header off each packet; docs/testbed.md)
    rate_counts: str = "frame"
    offloads: bool = False
    #: core links whose queues are sampled ("r0r1", "r4r5-rev", "lr"); empty: all
    measure: List[str] = Field(default_factory=list)

    @property
    def window_bytes(self) -> int:
        """The receivers' window clamp in bytes (``window_segs`` full segments), 0: none."""
        return self.window_segs * MSS_BYTES if self.window_segs else 0


@dataclass(config=MODEL)
class AqmSpec:
    """Parameters of the queue disciplines (see :class:`~.qdisc.QueueSpec`)."""

    red_min_pkts: Optional[float] = num(None, 0, 1000000, above=True, unit="packets")
    red_max_pkts: Optional[float] = num(None, 0, 1000000, above=True, unit="packets")
    red_max_p: float = num(0.10, 0, 1, above=True)
    target_ms: float = num(5.0, 0, 10000, above=True, unit="ms")
    #: DualPI2 (RFC 9332): the L queue's ECN step, the classic queue's PI2
    #: target, the coupling factor k, and which packets go to the L queue:
    #: "l4s_ect" (ECT(1) and CE, as RFC 9332 says) or "any_ect" (ECT(0)
    #: too: Linux's DCTCP sends ECT(0), even over AccECN)
    dualpi2_step_ms: float = num(1.0, 0, 10000, above=True, unit="ms")
    dualpi2_target_ms: float = num(15.0, 0, 10000, above=True, unit="ms")
    dualpi2_coupling: int = num(2, 1, 255)
    dualpi2_classify: str = "l4s_ect"


@dataclass(config=MODEL)
class CbrSpec:
    """Constant-bit-rate UDP flows (voice calls), pair i -> its receiver."""

    pairs: List[PairNo] = items(list, 1, 10000)
    rate_kbit: float = num(64.0, 1, 10000000, unit="kbit/s")
    pkt_bytes: int = num(200, 24, 65000, unit="bytes")


@dataclass(config=MODEL)
class TrafficSpec:
    #: one bulk flow per end-to-end pair, forward (sender side -> receiver side)
    bulk_fwd: bool = True
    #: one bulk flow per pair in the reverse direction (two-way traffic)
    bulk_rev: bool = False
    #: bulk flows per pair and direction (many flows between the same two hosts)
    flows_per_pair: int = num(1, 1, 1000)
    #: pairs (1-based) whose reverse flows run; empty: all (with bulk_rev)
    rev_pairs: List[PairNo] = items(list, 1, 10000)
    #: reverse-path load: bulk flows of the case's algorithm... or this one
    rev_cc: str = ""
    #: one bulk flow per cross-traffic pair
    cross: bool = True
    #: algorithm of every forward flow but the first, and of the cross traffic
    #: ("" = the case's own): one flow of the case's algorithm among flows of this one
    minority_of: str = ""
    #: HTTP/1.0 load in % of the bottleneck; responses flow forward
    http_load_pct: float = num(0.0, 0, 200, unit="% of rate_mbit")
    #: how many pairs carry the HTTP load (PackMime "clouds")
    http_pairs: int = num(5, 1, 10000)
    #: who serves the responses: "nginx" (files of the sampled sizes) or
    #: "asyncio" (the server of traffic/http/server.py)
    http_server: str = "nginx"
    cbr: Optional[CbrSpec] = None
    #: flows start this far apart (s); 0 = all at t=0 as in Weigle
    stagger_s: float = num(0.0, 0, 86400, unit="s")
    #: each bulk and CBR flow starts up to this much later (s), uniformly at
    #: random from the case's seed (so the repetitions of a case differ)
    start_jitter_s: float = num(0.0, 0, 3600, unit="s")
    #: the minority_of flows stop this long after the start (s), and the case's
    #: flow goes on alone: how long it takes to bring the queue down again
    #: (summary: recovery); 0: they run to the end
    others_stop_s: float = num(0.0, 0, 86400, unit="s")


SEED_MAX = 2**31 - 1
#: seconds of warm-up before the measured interval, unless the scenario says
WARMUP_DEFAULT = 10.0
#: values of traffic.http_server
HTTP_SERVERS = ("nginx", "asyncio")

#: values of the modules' "variant" parameter (kmod/core/flow.h)
VARIANTS = ("best", "paper")
#: values of ``ecn``, the hosts' net.ipv4.tcp_ecn: "auto", RFC 3168 ECN
#: where the queue marks (AQMS) and none elsewhere; "off"; "on", RFC 3168
#: ECN everywhere; "accecn", Accurate ECN (RFC 9768) everywhere
ECN_MODES = {"auto": None, "off": "0", "on": "1", "accecn": "3"}
#: algorithms that are themselves only with ECN (a case of one where the
#: hosts do not negotiate it is refused)
ECN_CCS = ("dctcp",)
#: what a case can need of the kernel, and the first Linux that has it
KERNEL_FEATURES = {**{f"qdisc {k}": v for k, v in KERNEL_QDISCS.items()},
                   "ecn = \"accecn\"": (6, 18)}
#: the algorithms whose modules this project builds (module_params)
PROJECT_CCS = tuple(CC_MODULES)


@dataclass(config=MODEL)
class Scenario:
    name: str
    description: str = ""
    source: str = ""
    cc: List[str] = items(lambda: ["reno", "cubic"], min_length=1)
    aqm: List[str] = items(lambda: ["droptail"], min_length=1)
    #: the cases' (algorithm, queue) pairs as "cc/aqm", instead of every
    #: algorithm of ``cc`` over every queue of ``aqm`` (a comparison of
    #: systems: DCTCP over DualPI2 beside sync over drop-tail); ``cc`` and
    #: ``aqm`` are then those of the pairs, in their order
    systems: List[str] = Field(default_factory=list)
    #: the hosts' ECN negotiation (ECN_MODES)
    ecn: str = "auto"
    duration_s: float = num(60.0, 1, 86400, unit="s")
    #: default WARMUP_DEFAULT; a file that gives duration_s alone gets at most a fifth of it
    warmup_s: float = num(WARMUP_DEFAULT, 0, 86400, unit="s")
    seed: int = num(1, 0, SEED_MAX)
    #: run every case this many times, with seeds seed, seed + 1, ...: the
    #: summary gives each metric's mean and 95% confidence interval
    repeat: int = num(1, 1, 1000)
    #: the version of sync and mixreact the cases run (their "variant"
    #: module parameter): "best", or "paper" for the dissertation's algorithm
    variant: str = "best"
    #: module parameters for the cases, per algorithm of this project, e.g.
    #: {"sync": {"best_thresh_pct": 30}}: set before each case and restored after
    #: (the run's meta.json records every loaded module's parameters)
    module_params: Dict[str, Dict[str, Union[int, str]]] = Field(default_factory=dict)
    #: tcpdump the first flow's headers at its sender (CASE/f01.pcap) and put
    #: its loss-delay correlation (CIM, LCDC on RTT and OTT) in the result
    capture: bool = False
    #: the summary gives the first bottleneck's mean queue of every whole
    #: minute from the traffic start (``minutes``): whether a long run's
    #: queue creeps up (issue 29's 600 s run)
    minutes: bool = False
    topology: TopologySpec = Field(default_factory=TopologySpec)
    aqm_params: AqmSpec = Field(default_factory=AqmSpec)
    traffic: TrafficSpec = Field(default_factory=TrafficSpec)
    #: key -> values; every case runs at each value (see SWEEPABLE)
    sweep: Dict[str, List[Any]] = Field(default_factory=dict)
    #: add a large-buffer CUBIC case per sweep value: the platform's ceiling
    ceiling: bool = False
    #: highest rate the emulated (TCG) VM forwards reliably; above it cases are skipped
    tcg_max_rate_mbit: float = num(50.0, 0, 100000, above=True, unit="Mbit/s")

    def __post_init__(self) -> None:
        pairs = self.system_pairs()
        if pairs:
            self.cc = list(dict.fromkeys(cc for cc, _ in pairs))
            self.aqm = list(dict.fromkeys(aqm for _, aqm in pairs))

    # -- derived -------------------------------------------------------------
    def system_pairs(self) -> List[Tuple[str, str]]:
        """``systems`` as (cc, aqm) pairs; an entry without one "/" gives ("", "")."""
        out = []
        for s in self.systems:
            cc, slash, aqm = s.partition("/")
            out.append((cc.strip(), aqm.strip()) if slash and "/" not in aqm else ("", ""))
        return out

    def median_rtt_ms(self) -> float:
        r = sorted(self.topology.rtts_ms)
        return r[(len(r) - 1) // 2]

    def bdp_pkts(self, rate_mbit: Optional[float] = None) -> float:
        rate = rate_mbit if rate_mbit is not None else self.topology.rate_mbit
        return rate * 1e6 / 8 * self.median_rtt_ms() / 1e3 / self.topology.mtu

    def queue_pkts(self, rate_mbit: Optional[float] = None) -> int:
        t = self.topology
        if t.queue_bdp is not None:
            return max(1, round(t.queue_bdp * self.bdp_pkts(rate_mbit)))
        assert t.queue_pkts is not None
        return t.queue_pkts

    def queue_spec(self, aqm: str, rate_mbit: Optional[float] = None,
                   limit: Optional[int] = None) -> QueueSpec:
        p = self.aqm_params
        return QueueSpec(kind=aqm, limit_pkts=limit or self.queue_pkts(rate_mbit),
                         min_pkts=p.red_min_pkts, max_pkts=p.red_max_pkts, max_p=p.red_max_p,
                         target_ms=p.target_ms, avpkt=self.topology.mtu,
                         step_ms=p.dualpi2_step_ms, classic_target_ms=p.dualpi2_target_ms,
                         coupling=p.dualpi2_coupling, l4s_classify=p.dualpi2_classify)

    def tcp_ecn(self, aqm: str) -> str:
        """net.ipv4.tcp_ecn of the hosts of a case over ``aqm`` (the ``ecn`` key)."""
        mode = ECN_MODES.get(self.ecn)
        if mode is None:
            return "1" if AQMS.get(aqm, False) else "0"
        return mode

    def ecn_problem(self, cc: str, aqm: str) -> Optional[str]:
        """Why ``cc`` cannot run over ``aqm`` (an algorithm of ECN_CCS where the
        hosts do not negotiate ECN), or None."""
        if cc not in ECN_CCS or aqm == "ceiling" or self.tcp_ecn(aqm) != "0":
            return None
        marking = ", ".join(k for k, v in AQMS.items() if v)
        return (f"{cc} over {aqm}: {cc} needs ECN, which is off there (ecn = "
                f"{self.ecn!r}); use a queue that marks ({marking}) or ecn = \"on\"")

    def kernel_problems(self, release: str, aqms: Optional[List[str]] = None) -> List[str]:
        """What the cases need that a kernel of ``release`` (``6.1``,
        ``7.2.0-uml``) lacks (KERNEL_FEATURES), one line each."""
        have = _version(release)
        if have is None:
            return []
        wanted = [f"qdisc {a}" for a in dict.fromkeys(aqms or self.aqm)]
        if self.ecn == "accecn":
            wanted.append('ecn = "accecn"')
        out = []
        for w in wanted:
            need = KERNEL_FEATURES.get(w)
            if need and have < need:
                out.append(f"{w} needs Linux {need[0]}.{need[1]} or later; this kernel is "
                           f"{release}" + (" (UML series 7.2 has it: SYNCTCP_UML_SERIES=7.2)"
                                           if have[:2] == (6, 1) else ""))
        return out

    def validate(self) -> None:
        """ScenarioError listing every problem of :meth:`problems` (one line each)."""
        found = self.problems()
        if found:
            raise ScenarioError(joined(found))

    def problems(self, broken: Sequence[str] = ()) -> List[str]:
        """What the models' types and ranges cannot say (names, kinds, keys together),
        every problem found, one line each.  A check that reads a key of ``broken``
        (``"duration_s"``, ``"topology.rtts_ms"``: keys whose own value was refused,
        now their default) is left out: it would blame a value the file did not give."""
        out: List[str] = []
        bad = set(broken)

        def needs(*keys: str) -> bool:
            return not bad & set(keys)

        t = self.topology
        if needs("name") and (not self.name or not all(c.isalnum() or c in "-_."
                                                         for c in self.name)):
            out.append("name must be non-empty: letters, digits, - _ .")
        if needs("topology.kind") and t.kind not in KINDS:
            out.append(f"topology.kind {t.kind!r}: one of {', '.join(KINDS)}")
        if needs("topology.rate_counts") and t.rate_counts not in RATE_COUNTS:
            out.append(f"topology.rate_counts {t.rate_counts!r}: one of {', '.join(RATE_COUNTS)}")
        if t.queue_pkts is not None and t.queue_bdp is not None:
            out.append("give one of topology.queue_pkts and topology.queue_bdp, not both")
        if t.queue_pkts is None and t.queue_bdp is None:
            t.queue_pkts = 100
        if t.kind in KINDS and needs("topology.kind", "topology.link_delay_ms", "topology.routers",
                                     "topology.hops", "topology.rtts_ms"):
            core = t.link_delay_ms * {"dumbbell": 1, "parking-lot": t.routers - 1,
                                      "chain": t.hops, "path": 0}[t.kind]
            if min(t.rtts_ms) < 2 * core:
                out.append(f"topology.rtts_ms: {min(t.rtts_ms):g} ms is below the core's own "
                           f"RTT of {2 * core:g} ms")
        if needs("systems"):
            for entry, (cc, aqm) in zip(self.systems, self.system_pairs()):
                if not cc or not aqm:
                    out.append(f"systems {entry!r}: an algorithm and a queue as \"cc/aqm\", "
                               f"e.g. \"dctcp/dualpi2\"")
            twice = sorted({e for e in self.systems if self.systems.count(e) > 1})
            if twice:
                out.append(f"systems: {', '.join(twice)} given twice")
        if needs("aqm", "systems"):
            where = {aqm: f"systems {e!r}: queue" for e, (_, aqm) in
                     zip(self.systems, self.system_pairs())}
            out += [f"{where.get(a, 'aqm')} {a!r}: one of {', '.join(AQMS)}" for a in self.aqm
                    if a and a not in AQMS]
        if needs("ecn") and self.ecn not in ECN_MODES:
            out.append(f"ecn {self.ecn!r}: one of {', '.join(ECN_MODES)}")
        if needs("aqm_params.dualpi2_classify") and \
                self.aqm_params.dualpi2_classify not in L4S_CLASSIFIERS:
            out.append(f"aqm_params.dualpi2_classify {self.aqm_params.dualpi2_classify!r}: "
                       f"one of {', '.join(L4S_CLASSIFIERS)}")
        if needs("traffic.http_server") and self.traffic.http_server not in HTTP_SERVERS:
            out.append(f"traffic.http_server {self.traffic.http_server!r}: one of "
                       f"{', '.join(HTTP_SERVERS)}")
        if self.minutes and needs("duration_s") and self.duration_s < 120:
            out.append(f"minutes: the queue by minute needs duration_s of at least 120 s, "
                       f"not {self.duration_s:g}")
        if needs("variant") and self.variant not in VARIANTS:
            out.append(f"variant {self.variant!r}: one of {', '.join(VARIANTS)}")
        if needs("module_params"):
            for cc, params in self.module_params.items():
                if cc not in PROJECT_CCS:
                    out.append(f"module_params.{cc}: parameters are for this project's "
                               f"modules: {', '.join(PROJECT_CCS)}")
                    continue
                for name, value in params.items():
                    if name == "variant":
                        out.append(f"module_params.{cc}.variant: set it with the scenario's "
                                   f"variant key")
                    elif (not name.isidentifier() or not str(value).strip()
                          or "\n" in str(value)):
                        out.append(f"module_params.{cc}.{name}: a parameter name and a "
                                   f"one-line value")
        if needs("seed", "repeat") and self.seed + self.repeat - 1 > SEED_MAX:
            out.append(f"seed + repeat - 1 must be at most {SEED_MAX}, not "
                       f"{self.seed + self.repeat - 1}")
        if needs("warmup_s", "duration_s") and not self.warmup_s < self.duration_s:
            out.append(f"warmup_s must be below duration_s ({self.duration_s:g} s), "
                       f"not {self.warmup_s:g}")
        sweep_ok = needs("sweep", "topology.rtts_ms")
        for key, values in self.sweep.items() if sweep_ok else ():
            if key not in SWEEPABLE:
                out.append(f"sweep.{key}: sweepable keys are {', '.join(SWEEPABLE)}")
                sweep_ok = False
                continue
            if not isinstance(values, list) or not values:
                out.append(f"sweep.{key}: a non-empty list")
                sweep_ok = False
                continue
            for v in values:
                try:
                    self.at({key: v})
                except ValidationError as exc:
                    field = "bulk_rev" if key == "rev_load" else key
                    cls = TopologySpec if field in ("rate_mbit", "queue_pkts") else TrafficSpec
                    out.append(sweep_error(cls, field, key, exc))
                    sweep_ok = False
                    break
                except ScenarioError as exc:
                    out.append(str(exc))
                    sweep_ok = False
                    break
        tr = self.traffic
        if needs("traffic.others_stop_s", "traffic.minority_of") and tr.others_stop_s \
                and not tr.minority_of:
            out.append("traffic.others_stop_s: the flows that stop are those of "
                       "traffic.minority_of, which is not set")
        if needs("traffic.others_stop_s", "warmup_s", "duration_s") and tr.others_stop_s \
                and not self.warmup_s < tr.others_stop_s < self.duration_s:
            out.append(f"traffic.others_stop_s must be between warmup_s "
                       f"({self.warmup_s:g} s) and duration_s ({self.duration_s:g} s), "
                       f"not {tr.others_stop_s:g}")
        if sweep_ok and needs("traffic.http_load_pct", "traffic.http_pairs"):
            loads = [tr.http_load_pct, *self.sweep.get("http_load_pct", [])]
            if any(loads) and not 1 <= tr.http_pairs <= len(t.rtts_ms):
                out.append(f"traffic.http_pairs must be from 1 to {len(t.rtts_ms)} "
                           f"(the number of pairs), not {tr.http_pairs}")
        if not out and not bad:
            try:
                self.cases()            # every case's queue can be built
            except ScenarioError as exc:
                out.append(str(exc))
        return out

    # -- cases ---------------------------------------------------------------------
    def cases(self, ccs: Optional[List[str]] = None, aqms: Optional[List[str]] = None) -> List["Case"]:
        """Every (sweep point, algorithm, queue) of the scenario, in run order."""
        keys = list(self.sweep)
        points = list(itertools.product(*(self.sweep[k] for k in keys))) or [()]
        out = []
        # seeds outermost: a run stopped early has whole repetitions
        for seed, point in itertools.product(self.seeds(), points):
            sc = replace(self.at(dict(zip(keys, point))), seed=seed)
            suffix = "".join(f"-{_short(k)}{_fmt(v)}" for k, v in zip(keys, point))
            rep = f"-s{seed}" if self.repeat > 1 else ""
            if self.ceiling and seed == self.seed:      # the platform's, once per point
                big = max(sc.queue_pkts(), math.ceil(4 * sc.bdp_pkts()), 100)
                out.append(Case(f"cubic-ceiling{suffix}", "cubic", "ceiling", sc,
                                dict(zip(keys, point)), queue_limit=big))
            for cc, aqm in self._pairs(ccs, aqms):
                why = self.ecn_problem(cc, aqm)
                if why:
                    raise ScenarioError(why)
                out.append(Case(f"{cc}-{aqm}{suffix}{rep}", cc, aqm, sc,
                                dict(zip(keys, point)), group=f"{cc}-{aqm}{suffix}"))
        # also the queues asked for by name (run --aqm), not only the validated ones
        for case in out:
            rate = case.scenario.topology.rate_mbit
            try:
                case.scenario.queue_spec(case.aqm if case.aqm != "ceiling" else "droptail",
                                         rate, limit=case.queue_limit).tc_args(rate)
            except QdiscError as exc:
                raise ScenarioError(f"case {case.id}: {exc}") from exc
        return out

    def _pairs(self, ccs: Optional[List[str]], aqms: Optional[List[str]]) -> List[Tuple[str, str]]:
        """The (cc, aqm) of a sweep point's cases: the ``systems`` (those of ``ccs`` and
        ``aqms`` if given), else every algorithm over every queue, queue outermost."""
        if self.systems:
            pairs = [(cc, aqm) for cc, aqm in self.system_pairs()
                     if (not ccs or cc in ccs) and (not aqms or aqm in aqms)]
            if not pairs:
                raise ScenarioError(f"no system of {', '.join(self.systems)} is "
                                    f"{'/'.join(ccs or ['*'])} over {'/'.join(aqms or ['*'])}")
            return pairs
        return [(cc, aqm) for aqm in aqms or self.aqm for cc in ccs or self.cc]

    def seeds(self) -> List[int]:
        """The seeds of a case's repetitions: ``seed`` .. ``seed + repeat - 1``."""
        return list(range(self.seed, self.seed + self.repeat))

    def at(self, point: Dict[str, Any]) -> "Scenario":
        """This scenario with the sweep keys set to ``point``'s values."""
        topo, traffic = self.topology, self.traffic
        for k, v in point.items():
            if k in ("rate_mbit", "queue_pkts"):
                topo = replace(topo, **{k: v, **({"queue_bdp": None} if k == "queue_pkts" else {})})
            elif k == "http_load_pct":
                traffic = replace(traffic, http_load_pct=v)
            elif k in ("bulk_rev", "rev_load"):     # rev_load: another name of bulk_rev
                traffic = replace(traffic, bulk_rev=v)
            elif k == "flows_per_pair":
                traffic = replace(traffic, flows_per_pair=v)
            elif k == "cbr_calls":      # CBR flows on pairs 1..v ([traffic.cbr]'s rate and size)
                if not isinstance(v, int) or isinstance(v, bool) or not 0 <= v <= len(topo.rtts_ms):
                    raise ScenarioError(f"sweep.cbr_calls values must each be a whole number "
                                        f"from 0 to {len(topo.rtts_ms)} (the number of pairs), "
                                        f"not {shown(v)}")
                cbr = replace(traffic.cbr or CbrSpec(), pairs=list(range(1, v + 1)))
                traffic = replace(traffic, cbr=cbr if v else None)
        return replace(self, topology=topo, traffic=traffic, sweep={})

    def as_dict(self) -> Dict[str, Any]:
        """The scenario as a file gives it (``cc`` and ``aqm`` follow ``systems``)."""
        d = asdict(self)
        if self.systems:
            del d["cc"], d["aqm"]
        return d


@dataclasses.dataclass
class Case:
    id: str
    cc: str
    aqm: str
    scenario: Scenario
    point: Dict[str, Any]
    queue_limit: Optional[int] = None
    #: the case's id without its seed: what its repetitions share ("" = id)
    group: str = ""

    def __post_init__(self) -> None:
        self.group = self.group or self.id

    @property
    def seed(self) -> int:
        return self.scenario.seed


def _short(key: str) -> str:
    return {"rate_mbit": "rate", "queue_pkts": "q", "http_load_pct": "load",
            "bulk_rev": "rev", "rev_load": "rev", "flows_per_pair": "flows",
            "cbr_calls": "calls"}.get(key, key)


def _fmt(v: Any) -> str:
    if isinstance(v, bool):
        return "on" if v else "off"
    if isinstance(v, float) and v.is_integer():
        return str(int(v))
    return str(v)


def _version(release: str) -> Optional[tuple]:
    """(major, minor) of a kernel release or series (``7.2.0-uml``, ``6.1``), else None."""
    parts = release.split("-")[0].split(".")
    try:
        return int(parts[0]), int(parts[1])
    except (IndexError, ValueError):
        return None
