"""The figures of a claim's cases, and how a check compares a figure with a bound.

Every figure is computed from the cases' records of ``summary.json``
(:func:`synctcp_testbed.analysis.stats.case_metrics`), by seed, so that the
file can be regenerated from the same run directories at any time.
"""

from __future__ import annotations

from typing import Any, Callable, Dict, List, Optional, Sequence

from ..rundir import Run
from ..stats import BySeed, Estimate, case_metrics, mean_ci

Cases = List[Dict[str, Any]]


def by_seed(cases: Cases, cc: str, where: Callable[[Dict[str, Any]], bool] = lambda c: True
            ) -> BySeed:
    """The metrics of algorithm ``cc``'s cases (not the ceiling's) that ``where`` keeps, by seed."""
    return {int(c.get("seed", 1)): case_metrics(c) for c in cases
            if c.get("cc") == cc and c.get("aqm") != "ceiling" and where(c)}


def over_seeds(runs: BySeed, metric: str,
               scale: float = 1.0) -> Optional[Estimate]:
    xs = [m[metric] * scale for m in runs.values() if metric in m]
    return mean_ci(xs) if xs else None


def kept_by_seed(on: BySeed, off: BySeed) -> BySeed:
    """Per seed, goodput with the reverse path loaded over goodput without (``kept``)."""
    return {s: {"kept": on[s]["goodput_mbit"] / off[s]["goodput_mbit"]}
            for s in set(on) & set(off) if off[s].get("goodput_mbit") and "goodput_mbit" in on[s]}


#: the modules whose "variant" parameter a run sets (scenario key variant)
VARIANT_CCS = ("sync", "mixreact")


def all_cases(runs: Sequence[Run]) -> Cases:
    """Every case of ``runs``; sync and mixreact of a ``variant = "paper"`` run are
    "sync (paper)" and "mixreact (paper)" (the dissertation's algorithms)."""
    out = []
    for r in runs:
        variant = (r.meta.get("scenario") or {}).get("variant", "best")
        for c in r.cases:
            rec = c.summary.raw
            if variant == "paper" and rec.get("cc") in VARIANT_CCS:
                rec = {**rec, "cc": f"{rec['cc']} (paper)"}
            out.append(rec)
    return out


def below(e: Optional[Estimate], bound: float) -> Optional[bool]:
    """Whether ``e`` is below ``bound`` beyond its interval (None: no figure)."""
    if e is None:
        return None
    return (e.hi if e.hi is not None else e.mean) < bound


def at_least(e: Optional[Estimate], bound: float) -> Optional[bool]:
    """Whether ``e`` is not below ``bound`` beyond its interval."""
    if e is None:
        return None
    return (e.hi if e.hi is not None else e.mean) >= bound


def above(e: Optional[Estimate], bound: float) -> Optional[bool]:
    """Whether ``e`` is above ``bound`` beyond its interval."""
    if e is None:
        return None
    return (e.lo if e.lo is not None else e.mean) > bound
