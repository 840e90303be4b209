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
from typing import Any, Dict, List, Optional, Tuple, Union

from pydantic import ValidationError

from .keys import kind_of, model_error, model_errors
from .model import (WARMUP_DEFAULT, AqmSpec, CbrSpec, Scenario, ScenarioError, TopologySpec,
                    TrafficSpec, joined)

#: the presets' directory inside the package
PRESETS = package_files(__package__).joinpath("presets")


#: warmup_s when a file gives duration_s and no warmup_s: the model's default (10 s), at
#: most a fifth of the duration (the same rule as ``run --duration``)
WARMUP_SHARE = 5


def _build(cls: Any, data: Any, where: str, table: str = "") -> Tuple[Any, List[str], List[str]]:
    """``cls`` built from a file's table: (the object, its problems, the keys refused).

    Every problem of the table is one line; a refused key (unknown, or a value
    out of its range) is left at its default so the rest can be checked too.
    The object is None only when even that fails (a missing required key).
    """
    place = f"{where} [{table}]" if table else where
    prefix = f"{table}." if table else ""
    if not isinstance(data, dict):
        return cls(), [f"{where}: {table} must be a table ([{table}]), not {kind_of(data)}"], \
            [table]
    errors: List[str] = []
    known = {f.name for f in fields(cls)}
    unknown = set(data) - known
    if unknown:
        errors.append(f"{place}: unknown key(s) {', '.join(sorted(unknown))}; "
                      f"known: {', '.join(sorted(known))}")
    data = {k: v for k, v in data.items() if k in known}
    broken: List[str] = []
    try:
        return cls(**data), errors, broken
    except ValidationError as exc:
        errors += model_errors(cls, exc, where, table)
        refused = {str(e["loc"][0]) for e in exc.errors(include_url=False) if e["loc"]}
        broken = [prefix + k for k in sorted(refused)]
        try:
            return cls(**{k: v for k, v in data.items() if k not in refused}), errors, broken
        except ValidationError:
            return None, errors, broken


def from_dict(data: Dict[str, Any], where: str = "scenario") -> Scenario:
    """The scenario of a file's tables; ScenarioError listing every problem, one line
    each (file, key, what it must be)."""
    data = dict(data)
    if "warmup_s" not in data and isinstance(data.get("duration_s"), (int, float)) \
            and not isinstance(data.get("duration_s"), bool) and data["duration_s"] > 0:
        data["warmup_s"] = min(float(WARMUP_DEFAULT), data["duration_s"] / WARMUP_SHARE)
    errors: List[str] = []
    broken: List[str] = []

    def build(cls: Any, value: Any, table: str = "") -> Any:
        obj, errs, bad = _build(cls, value, where, table)
        errors.extend(errs)
        broken.extend(bad)
        return obj

    topo = build(TopologySpec, data.pop("topology", {}), "topology")
    aqmp = build(AqmSpec, data.pop("aqm_params", {}), "aqm_params")
    traffic = data.pop("traffic", {})
    traffic = dict(traffic) if isinstance(traffic, dict) else traffic
    cbr = traffic.pop("cbr", None) if isinstance(traffic, dict) else None
    tr = build(TrafficSpec, traffic, "traffic")
    if cbr is not None:
        tr.cbr = build(CbrSpec, cbr, "traffic.cbr")
    if data.get("systems") and ("cc" in data or "aqm" in data):
        errors.append(f"{where}: give systems, or cc and aqm, not both (systems are the "
                      f"cases' \"cc/aqm\" pairs)")
        data = {k: v for k, v in data.items() if k not in ("cc", "aqm")}
    sc = build(Scenario, data)
    if sc is None:
        raise ScenarioError(joined(errors))
    sc.topology, sc.aqm_params, sc.traffic = topo, aqmp, tr
    errors += [p if p.startswith(f"{where}: ") else f"{where}: {p}"
               for p in sc.problems(broken)]
    if errors:
        raise ScenarioError(joined(errors))
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
    found = presets().get(str(name_or_path))
    if given.suffix == ".toml" and not given.exists() and found is None:
        raise ScenarioError(f"{given}: no such file")
    if not (given.suffix == ".toml" and given.exists()):
        if found is None:
            hint = (f"{given}: not a scenario file (they end in .toml)" if given.exists()
                    else f"no scenario {str(name_or_path)!r}: no file of that name and not a "
                         f"preset")
            raise ScenarioError(f"{hint}; presets: {', '.join(presets())}")
        path = found
    try:
        data = tomllib.loads(path.read_text())
    except (OSError, tomllib.TOMLDecodeError) as exc:
        raise ScenarioError(f"{path}: {exc}") from exc
    return from_dict(data, where=str(path))
