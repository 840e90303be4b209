"""Scenarios: a topology, a workload and what to compare, as TOML files.

A scenario file is what a researcher diffs; every key is documented in
``docs/testbed.md``.  Presets for the seed papers live in
``synctcp_testbed/scenarios/*.toml`` (``synctcp-testbed list``); any other
path to a ``.toml`` file works the same.  A scenario expands into *cases*:
one per algorithm x queue discipline x sweep value, each run on a freshly
built topology with the same seed.
"""

from __future__ import annotations

import itertools
import math
import tomllib
from dataclasses import asdict, dataclass, field, fields, replace
from pathlib import Path
from typing import Any, Dict, List, Optional, Tuple, Union, get_args, get_origin, get_type_hints

from .qdisc import AQMS, QdiscError, QueueSpec

PRESET_DIR = Path(__file__).with_name("scenarios")
#: sender MSS on a 1500-byte MTU with timestamps (what "segments" means here)
MSS_BYTES = 1448
KINDS = ("dumbbell", "parking-lot", "chain")
SWEEPABLE = ("rate_mbit", "queue_pkts", "http_load_pct", "bulk_rev", "rev_load")


class ScenarioError(ValueError):
    """A scenario file that cannot be run, with the reason."""


@dataclass
class TopologySpec:
    kind: str = "dumbbell"
    rate_mbit: float = 20.0
    link_delay_ms: float = 0.0
    #: base RTT of each end-to-end pair (its length is the number of pairs)
    rtts_ms: List[float] = field(default_factory=lambda: [40.0])
    #: bottleneck queue limit in packets, or a multiple of the BDP of the median RTT
    queue_pkts: Optional[int] = None
    queue_bdp: Optional[float] = None
    routers: int = 6
    hops: int = 3
    cross_hops: List[int] = field(default_factory=list)
    cross_pairs: int = 0
    cross_rtt_ms: Optional[float] = None
    access_rate_mbit: Optional[float] = None
    #: receivers' advertised-window clamp in segments (the senders' max window)
    window_segs: Optional[int] = None
    mtu: int = 1500
    offloads: bool = False
    #: core links whose queues are sampled ("r0r1", "r4r5-rev", "lr"); empty: all
    measure: List[str] = field(default_factory=list)


@dataclass
class AqmSpec:
    """Parameters of the queue disciplines (see :class:`~.qdisc.QueueSpec`)."""

    red_min_pkts: Optional[float] = None
    red_max_pkts: Optional[float] = None
    red_max_p: float = 0.10
    target_ms: float = 5.0


@dataclass
class CbrSpec:
    """Constant-bit-rate UDP flows (voice calls), pair i -> its receiver."""

    pairs: List[int] = field(default_factory=list)
    rate_kbit: float = 64.0
    pkt_bytes: int = 200


@dataclass
class TrafficSpec:
    #: one bulk flow per end-to-end pair, forward (sender side -> receiver side)
    bulk_fwd: bool = True
    #: one bulk flow per pair in the reverse direction (two-way traffic)
    bulk_rev: bool = False
    #: bulk flows per pair and direction (many flows between the same two hosts)
    flows_per_pair: int = 1
    #: pairs (1-based) whose reverse flows run; empty: all (with bulk_rev)
    rev_pairs: List[int] = field(default_factory=list)
    #: reverse-path load: bulk flows of the case's algorithm... or this one
    rev_cc: str = ""
    #: one bulk flow per cross-traffic pair
    cross: bool = True
    #: algorithm of every forward flow but the first ("" = the case's own):
    #: one flow of the case's algorithm among flows of this one
    minority_of: str = ""
    #: HTTP/1.0 load in % of the bottleneck; responses flow forward
    http_load_pct: float = 0.0
    #: how many pairs carry the HTTP load (PackMime "clouds")
    http_pairs: int = 5
    cbr: Optional[CbrSpec] = None
    #: flows start this far apart (s); 0 = all at t=0 as in Weigle
    stagger_s: float = 0.0


@dataclass
class Scenario:
    name: str
    description: str = ""
    source: str = ""
    cc: List[str] = field(default_factory=lambda: ["reno", "cubic"])
    aqm: List[str] = field(default_factory=lambda: ["droptail"])
    duration_s: float = 60.0
    warmup_s: float = 10.0
    seed: int = 1
    topology: TopologySpec = field(default_factory=TopologySpec)
    aqm_params: AqmSpec = field(default_factory=AqmSpec)
    traffic: TrafficSpec = field(default_factory=TrafficSpec)
    #: key -> values; every case runs at each value (see SWEEPABLE)
    sweep: Dict[str, List[Any]] = field(default_factory=dict)
    #: add a large-buffer CUBIC case per sweep value: the platform's ceiling
    ceiling: bool = False
    #: highest rate the emulated (TCG) VM forwards reliably; above it cases are skipped
    tcg_max_rate_mbit: float = 50.0

    # -- derived -------------------------------------------------------------
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
                         target_ms=p.target_ms, avpkt=self.topology.mtu)

    def validate(self) -> None:
        if not self.name or not all(c.isalnum() or c in "-_." for c in self.name):
            raise ScenarioError("name must be non-empty: letters, digits, - _ .")
        t = self.topology
        if t.kind not in KINDS:
            raise ScenarioError(f"topology.kind {t.kind!r}: one of {', '.join(KINDS)}")
        if not t.rtts_ms or any(not 0 <= r <= 20000 for r in t.rtts_ms):
            raise ScenarioError("topology.rtts_ms: one RTT (0..20000 ms) per pair")
        if t.queue_pkts is not None and t.queue_bdp is not None:
            raise ScenarioError("give one of topology.queue_pkts and topology.queue_bdp, not both")
        if t.queue_pkts is None and t.queue_bdp is None:
            t.queue_pkts = 100
        if not 576 <= t.mtu <= 9000:
            raise ScenarioError("topology.mtu must be 576..9000 bytes")
        core = t.link_delay_ms * {"dumbbell": 1, "parking-lot": t.routers - 1,
                                  "chain": t.hops}[t.kind]
        if min(t.rtts_ms) < 2 * core:
            raise ScenarioError(f"topology.rtts_ms: {min(t.rtts_ms):g} ms is below the core's own "
                                f"RTT of {2 * core:g} ms")
        if not self.cc:
            raise ScenarioError("cc: at least one algorithm")
        for a in self.aqm:
            if a not in AQMS:
                raise ScenarioError(f"aqm {a!r}: one of {', '.join(AQMS)}")
        if not 1 <= self.duration_s <= 86400 or not 0 <= self.warmup_s < self.duration_s:
            raise ScenarioError("duration_s must be 1..86400 and warmup_s 0..duration_s")
        for key, values in self.sweep.items():
            if key not in SWEEPABLE:
                raise ScenarioError(f"sweep.{key}: sweepable keys are {', '.join(SWEEPABLE)}")
            if not isinstance(values, list) or not values:
                raise ScenarioError(f"sweep.{key}: a non-empty list")
        tr = self.traffic
        # the load as given and at every sweep point
        loads = [tr.http_load_pct, *self.sweep.get("http_load_pct", [])]
        if not all(0 <= x <= 200 for x in loads):
            raise ScenarioError("traffic.http_load_pct must be 0..200")
        if not 1 <= tr.flows_per_pair <= 1000:
            raise ScenarioError(f"traffic.flows_per_pair must be 1..1000, not {tr.flows_per_pair}")
        if any(loads) and not 1 <= tr.http_pairs <= len(t.rtts_ms):
            raise ScenarioError("traffic.http_pairs must be 1..number of pairs")
        self.cases()            # every case's queue can be built

    # -- cases ---------------------------------------------------------------------
    def cases(self, ccs: Optional[List[str]] = None, aqms: Optional[List[str]] = None) -> List["Case"]:
        """Every (sweep point, algorithm, queue) of the scenario, in run order."""
        keys = list(self.sweep)
        points = list(itertools.product(*(self.sweep[k] for k in keys))) or [()]
        out = []
        for point in points:
            sc = self.at(dict(zip(keys, point)))
            suffix = "".join(f"-{_short(k)}{_fmt(v)}" for k, v in zip(keys, point))
            if self.ceiling:
                big = max(sc.queue_pkts(), math.ceil(4 * sc.bdp_pkts()), 100)
                out.append(Case(f"cubic-ceiling{suffix}", "cubic", "ceiling", sc,
                                dict(zip(keys, point)), queue_limit=big))
            for aqm in aqms or self.aqm:
                for cc in ccs or self.cc:
                    out.append(Case(f"{cc}-{aqm}{suffix}", cc, aqm, sc, dict(zip(keys, point))))
        # also the queues asked for by name (run --aqm), not only the validated ones
        for case in out:
            rate = case.scenario.topology.rate_mbit
            try:
                case.scenario.queue_spec(case.aqm if case.aqm != "ceiling" else "droptail",
                                         rate, limit=case.queue_limit).tc_args(rate)
            except QdiscError as exc:
                raise ScenarioError(f"case {case.id}: {exc}") from exc
        return out

    def at(self, point: Dict[str, Any]) -> "Scenario":
        """This scenario with the sweep keys set to ``point``'s values."""
        topo, traffic = self.topology, self.traffic
        for k, v in point.items():
            if k in ("rate_mbit", "queue_pkts"):
                topo = replace(topo, **{k: v, **({"queue_bdp": None} if k == "queue_pkts" else {})})
            elif k == "http_load_pct":
                traffic = replace(traffic, http_load_pct=float(v))
            elif k in ("bulk_rev", "rev_load"):
                traffic = replace(traffic, bulk_rev=bool(v))
        return replace(self, topology=topo, traffic=traffic, sweep={})

    def as_dict(self) -> Dict[str, Any]:
        return asdict(self)


@dataclass
class Case:
    id: str
    cc: str
    aqm: str
    scenario: Scenario
    point: Dict[str, Any]
    queue_limit: Optional[int] = None


def _short(key: str) -> str:
    return {"rate_mbit": "rate", "queue_pkts": "q", "http_load_pct": "load",
            "bulk_rev": "rev", "rev_load": "rev"}.get(key, key)


def _fmt(v: Any) -> str:
    if isinstance(v, bool):
        return "on" if v else "off"
    if isinstance(v, float) and v.is_integer():
        return str(int(v))
    return str(v)


#: what the list-valued keys hold and an example of each, for the errors
LIST_KEYS: Dict[str, Tuple[str, str]] = {
    "cc": ("algorithm names", '["reno", "sync"]'),
    "aqm": ("queue disciplines", '["droptail", "red-ecn"]'),
    "rtts_ms": ("RTTs in ms, one per pair", "[40, 80]"),
    "cross_hops": ("hop numbers", "[1, 3]"),
    "measure": ("link names", '["lr"]'),
    "rev_pairs": ("pair numbers (1-based)", "[1, 2]"),
    "pairs": ("pair numbers (1-based)", "[1, 2]"),
}


def _what(value: Any) -> str:
    """``value``'s kind as TOML calls it, with its article."""
    if isinstance(value, bool):
        return "a boolean"
    if isinstance(value, (int, float)):
        return "a number"
    if isinstance(value, str):
        return "a string"
    if isinstance(value, dict):
        return "a table"
    return f"a {type(value).__name__}"


def _fits(kind: Any, item: Any) -> bool:
    """Is ``item`` a ``kind`` (str, int or float; a bool is not a number)?"""
    if kind is str:
        return isinstance(item, str)
    if kind in (int, float):
        return not isinstance(item, bool) and isinstance(item, int if kind is int else (int, float))
    return True


def _check_types(cls: Any, data: Dict[str, Any], where: str, table: str) -> None:
    """Refuse a list-valued key that is not a list (``cc = "reno"`` would run
    cases r, e, n, o), a list of the wrong items, and a table that is not one."""
    hints = get_type_hints(cls)
    for key, value in data.items():
        hint = hints[key]
        if get_origin(hint) is list:
            name = f"{table}.{key}" if table else key
            items, example = LIST_KEYS.get(key, ("values", "[...]"))
            need = f"{name} must be a list of {items}, e.g. {key} = {example}"
            if not isinstance(value, list):
                raise ScenarioError(f"{where}: {need}, not {_what(value)}")
            kind = get_args(hint)[0]
            for item in value:
                if not _fits(kind, item):
                    shown = f'"{item}"' if isinstance(item, str) else repr(item)
                    raise ScenarioError(f"{where}: {need}, not {_what(item)} like {shown}")
        elif get_origin(hint) is dict and not isinstance(value, dict):
            raise ScenarioError(f"{where}: {key} must be a table ([{key}]), not {_what(value)}")
        else:
            kind = _scalar(hint)
            if kind is not None and value is not None and not (_fits(kind, value) if kind is not bool else isinstance(value, bool)):
                name = f"{table}.{key}" if table else key
                raise ScenarioError(f"{where}: {name} must be {SCALAR_NAMES[kind]}, not {_what(value)}"
                                    + (f' like "{value}"' if isinstance(value, str) else ""))


SCALAR_NAMES = {str: "a string", int: "a whole number", float: "a number", bool: "true or false"}


def _scalar(hint: Any) -> Any:
    """str, int, float or bool for a plain (or Optional) key of that type, else None."""
    if get_origin(hint) is Union:
        args = [a for a in get_args(hint) if a is not type(None)]
        hint = args[0] if len(args) == 1 else None
    return hint if hint in SCALAR_NAMES else None


def _build(cls: Any, data: Any, where: str, table: str = "") -> Any:
    place = f"{where} [{table}]" if table else where
    if not isinstance(data, dict):
        raise ScenarioError(f"{where}: {table} must be a table ([{table}]), not {_what(data)}")
    known = {f.name for f in fields(cls)}
    unknown = set(data) - known
    if unknown:
        raise ScenarioError(f"{place}: unknown key(s) {', '.join(sorted(unknown))}; "
                            f"known: {', '.join(sorted(known))}")
    _check_types(cls, data, where, table)
    return cls(**data)


def from_dict(data: Dict[str, Any], where: str = "scenario") -> Scenario:
    data = dict(data)
    try:
        topo = _build(TopologySpec, data.pop("topology", {}), where, "topology")
        aqmp = _build(AqmSpec, data.pop("aqm_params", {}), where, "aqm_params")
        traffic = data.pop("traffic", {})
        traffic = dict(traffic) if isinstance(traffic, dict) else traffic
        cbr = traffic.pop("cbr", None) if isinstance(traffic, dict) else None
        tr = _build(TrafficSpec, traffic, where, "traffic")
        if cbr is not None:
            tr.cbr = _build(CbrSpec, cbr, where, "traffic.cbr")
        sc = _build(Scenario, data, where)
    except TypeError as exc:
        raise ScenarioError(f"{where}: {exc}") from exc
    sc.topology, sc.aqm_params, sc.traffic = topo, aqmp, tr
    sc.validate()
    return sc


def bulk_dumbbell(name: str, ccs: List[str], rate_mbit: float, rtt_ms: float, queue_pkts: int,
                  flows: int, seconds: float, warmup_s: Optional[float] = None) -> Scenario:
    """Each algorithm of ``ccs`` alone: ``flows`` bulk flows, one per pair of a dumbbell.

    Every pair has base RTT ``rtt_ms``; only the forward bottleneck ``lr``
    (a drop-tail queue of ``queue_pkts``) is sampled.  The flows run
    ``warmup_s`` (default: a fifth of ``seconds``, at most 2 s) plus
    ``seconds``, and every metric covers the last ``seconds``.  Validated.
    """
    warm = min(2.0, seconds / 5) if warmup_s is None else warmup_s
    sc = Scenario(name=name, cc=list(ccs), aqm=["droptail"], duration_s=seconds + warm,
                  warmup_s=warm,
                  topology=TopologySpec(kind="dumbbell", rate_mbit=rate_mbit,
                                        rtts_ms=[rtt_ms] * flows, queue_pkts=queue_pkts,
                                        measure=["lr"]),
                  tcg_max_rate_mbit=100)
    sc.validate()
    return sc


def presets() -> Dict[str, Path]:
    return {p.stem: p for p in sorted(PRESET_DIR.glob("*.toml"))}


def load(name_or_path: str) -> Scenario:
    """A preset by name, or a scenario file by path."""
    path = Path(name_or_path)
    if not path.suffix == ".toml" or not path.exists():
        found = presets().get(name_or_path)
        if found is None:
            raise ScenarioError(f"no scenario {name_or_path!r}: not a .toml file and not a preset "
                                f"({', '.join(presets())})")
        path = found
    try:
        data = tomllib.loads(path.read_text())
    except (OSError, tomllib.TOMLDecodeError) as exc:
        raise ScenarioError(f"{path}: {exc}") from exc
    return from_dict(data, where=str(path))
