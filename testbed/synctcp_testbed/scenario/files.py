"""Scenario files and presets: TOML in, a validated :class:`~.model.Scenario` out.

Presets for the seed papers are package data (``presets/*.toml``, read
through :mod:`importlib.resources`, so an installed wheel has them too);
any other path to a ``.toml`` file works the same.  Every error is one
line naming the file and the key (:mod:`.keys`).
"""

from __future__ import annotations

import tomllib
from dataclasses import fields, replace
from importlib.resources import files as package_files
from importlib.resources.abc import Traversable
from pathlib import Path
from typing import Any, Dict, List, Optional, Union

from pydantic import ValidationError

from .keys import kind_of, model_error
from .model import AqmSpec, CbrSpec, Scenario, ScenarioError, TopologySpec, TrafficSpec

#: the presets' directory inside the package
PRESETS = package_files(__package__).joinpath("presets")


def _build(cls: Any, data: Any, where: str, table: str = "") -> Any:
    place = f"{where} [{table}]" if table else where
    if not isinstance(data, dict):
        raise ScenarioError(f"{where}: {table} must be a table ([{table}]), not {kind_of(data)}")
    known = {f.name for f in fields(cls)}
    unknown = set(data) - known
    if unknown:
        raise ScenarioError(f"{place}: unknown key(s) {', '.join(sorted(unknown))}; "
                            f"known: {', '.join(sorted(known))}")
    try:
        return cls(**data)
    except ValidationError as exc:
        raise ScenarioError(model_error(cls, exc, where, table)) from None


def from_dict(data: Dict[str, Any], where: str = "scenario") -> Scenario:
    """The scenario of a file's tables; ScenarioError (one line: file, key, what it must be)."""
    data = dict(data)
    topo = _build(TopologySpec, data.pop("topology", {}), where, "topology")
    aqmp = _build(AqmSpec, data.pop("aqm_params", {}), where, "aqm_params")
    traffic = data.pop("traffic", {})
    traffic = dict(traffic) if isinstance(traffic, dict) else traffic
    cbr = traffic.pop("cbr", None) if isinstance(traffic, dict) else None
    tr = _build(TrafficSpec, traffic, where, "traffic")
    if cbr is not None:
        tr.cbr = _build(CbrSpec, cbr, where, "traffic.cbr")
    sc = _build(Scenario, data, where)
    sc.topology, sc.aqm_params, sc.traffic = topo, aqmp, tr
    try:
        sc.validate()
    except ScenarioError as exc:
        msg = str(exc)
        raise ScenarioError(msg if msg.startswith(f"{where}: ") else f"{where}: {msg}") from None
    return sc


def updated(sc: Scenario, where: str, **changes: Any) -> Scenario:
    """``sc`` with top-level keys changed (command-line options), checked like a file's."""
    try:
        return replace(sc, **changes)
    except ValidationError as exc:
        raise ScenarioError(model_error(Scenario, exc, where, "")) from None


def bulk_dumbbell(name: str, ccs: List[str], rate_mbit: float, rtt_ms: float, queue_pkts: int,
                  flows: int, seconds: float, warmup_s: Optional[float] = None) -> Scenario:
    """Each algorithm of ``ccs`` alone: ``flows`` bulk flows, one per pair of a dumbbell.

    Every pair has base RTT ``rtt_ms``; only the forward bottleneck ``lr``
    (a drop-tail queue of ``queue_pkts``) is sampled.  The flows run
    ``warmup_s`` (default: a fifth of ``seconds``, at most 2 s) plus
    ``seconds``, and every metric covers the last ``seconds``.  Validated.
    """
    warm = min(2.0, seconds / 5) if warmup_s is None else warmup_s
    try:
        sc = Scenario(name=name, cc=list(ccs), aqm=["droptail"], duration_s=seconds + warm,
                      warmup_s=warm,
                      topology=TopologySpec(kind="dumbbell", rate_mbit=rate_mbit,
                                            rtts_ms=[rtt_ms] * flows, queue_pkts=queue_pkts,
                                            measure=["lr"]),
                      tcg_max_rate_mbit=100)
    except ValidationError as exc:
        cls, table = (TopologySpec, "topology") if exc.title == "TopologySpec" else (Scenario, "")
        raise ScenarioError(model_error(cls, exc, name, table)) from None
    sc.validate()
    return sc


def presets() -> Dict[str, Traversable]:
    """The preset scenarios, name -> file (package data), in the order of their names."""
    found = [p for p in PRESETS.iterdir() if p.name.endswith(".toml")]
    return {p.name[:-len(".toml")]: p for p in sorted(found, key=lambda p: p.name[:-len(".toml")])}


def load(name_or_path: Union[str, Path]) -> Scenario:
    """A preset by name, or a scenario file by path."""
    given = Path(name_or_path)
    path: Union[Path, Traversable] = given
    if not given.suffix == ".toml" or not given.exists():
        found = presets().get(str(name_or_path))
        if found is None:
            raise ScenarioError(f"no scenario {str(name_or_path)!r}: not a .toml file and not a "
                                f"preset ({', '.join(presets())})")
        path = found
    try:
        data = tomllib.loads(path.read_text())
    except (OSError, tomllib.TOMLDecodeError) as exc:
        raise ScenarioError(f"{path}: {exc}") from exc
    return from_dict(data, where=str(path))
