"""The figures of a claim's cases, and how a check compares a figure with a bound.

Every figure is computed from the cases' records of ``summary.json``
(:func:`synctcp_testbed.analysis.stats.case_metrics`), by seed, so that the
file can be regenerated from the same run directories at any time.  A
selection of cases (:func:`by_seed`) remembers the runs it came from, so a
check can tell whether it compares runs of the same build (:func:`add_check`).

A check passes only when the whole 95% interval is past its bound
(:func:`below`, :func:`at_least`, :func:`above`, :func:`within`): a noisier
run cannot pass more easily.  With one seed there is no interval and the
mean decides (the section says so).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, Callable, Dict, Iterable, List, Optional, Sequence, Tuple

from synctcp.modctl import module_of

from ..rundir import Run
from ..stats import Estimate, case_metrics, mean_ci
from .builds import differences
from .model import Check, LedgerError, Section

Cases = List[Dict[str, Any]]
#: the key under which :func:`all_cases` keeps a case record's run
RUN = "_run"


class BySeed(Dict[int, Dict[str, float]]):
    """A selection's metrics by seed, and the (algorithm, run) pairs they came from."""

    def __init__(self, data: Optional[Dict[int, Dict[str, float]]] = None,
                 sources: Optional[Dict[Tuple[str, Path], Run]] = None) -> None:
        super().__init__(data or {})
        self.sources: Dict[Tuple[str, Path], Run] = dict(sources or {})


def by_seed(cases: Cases, cc: str, where: Callable[[Dict[str, Any]], bool] = lambda c: True
            ) -> BySeed:
    """The metrics of algorithm ``cc``'s cases (not the ceiling's) that ``where`` keeps, by seed.

    Two of them with the same seed are two runs (or cases) of the same case:
    LedgerError naming both, rather than one silently replacing the other.
    """
    out = BySeed()
    origin: Dict[int, Dict[str, Any]] = {}
    for c in cases:
        if c.get("cc") != cc or c.get("aqm") == "ceiling" or not where(c):
            continue
        seed = int(c.get("seed", 1))
        if seed in origin:
            a, b = origin[seed], c
            raise LedgerError(f"{_where(a)} and {_where(b)} both hold {cc} at seed {seed} of "
                              f"the same case: give the ledger one of them")
        origin[seed] = c
        out[seed] = case_metrics(c)
        run = c.get(RUN)
        if isinstance(run, Run):
            out.sources[(cc, run.path)] = run
    return out


def _where(c: Dict[str, Any]) -> str:
    run = c.get(RUN)
    return f"{run.path if isinstance(run, Run) else '?'} (case {c.get('id', '?')})"


def over_seeds(runs: Dict[int, Dict[str, float]], metric: str,
               scale: float = 1.0) -> Optional[Estimate]:
    xs = [m[metric] * scale for m in runs.values() if metric in m]
    return mean_ci(xs) if xs else None


def kept_by_seed(on: BySeed, off: BySeed) -> BySeed:
    """Per seed, goodput with the reverse path loaded over goodput without (``kept``)."""
    return BySeed({s: {"kept": on[s]["goodput_mbit"] / off[s]["goodput_mbit"]}
                   for s in set(on) & set(off)
                   if off[s].get("goodput_mbit") and "goodput_mbit" in on[s]},
                  {**on.sources, **off.sources})


#: the modules whose "variant" parameter a run sets (scenario key variant)
VARIANT_CCS = ("sync", "mixreact")


def variant(run: Run) -> str:
    """The run's ``variant`` of sync and mixreact (scenario key; "best" by default)."""
    return str((run.meta.get("scenario") or {}).get("variant", "best"))


def compete(run: Run, cc: str) -> bool:
    """Whether the run's module of ``cc`` had the parameter compete set."""
    mod = module_of(cc) or ""
    params = ((run.meta.get("modules") or {}).get(mod) or {}).get("params") or {}
    scenario = ((run.meta.get("scenario") or {}).get("module_params") or {}).get(cc) or {}
    value = str(params.get("compete", scenario.get("compete", "N"))).upper()
    return value in ("Y", "1", "TRUE")


def all_cases(runs: Sequence[Run]) -> Cases:
    """Every case of ``runs``, each record with its run under :data:`RUN`; sync
    and mixreact of a ``variant = "paper"`` run are "sync (paper)" and
    "mixreact (paper)" (the dissertation's algorithms), and of a run whose
    modules had ``compete`` set "sync (compete)" and "mixreact (compete)"
    (competing mode is off by default)."""
    out = []
    for r in runs:
        paper = variant(r) == "paper"
        for c in r.cases:
            rec = {**c.summary.raw, RUN: r}
            if rec.get("cc") in VARIANT_CCS:
                if paper:
                    rec["cc"] = f"{rec['cc']} (paper)"
                elif compete(r, rec["cc"]):
                    rec["cc"] = f"{rec['cc']} (compete)"
            out.append(rec)
    return out


def scenario_of(runs: Iterable[Run], *keys: str) -> List[Any]:
    """The distinct values of one scenario key (``"topology", "rtts_ms"``) over
    ``runs`` (meta.json's scenario), in the runs' order; None where absent."""
    out: List[Any] = []
    for r in runs:
        v: Any = r.meta.get("scenario") or {}
        for k in keys:
            v = v.get(k) if isinstance(v, dict) else None
        if v not in out:
            out.append(v)
    return out


def _lo(e: Estimate) -> float:
    return e.lo if e.lo is not None else e.mean


def _hi(e: Estimate) -> float:
    return e.hi if e.hi is not None else e.mean


def below(e: Optional[Estimate], bound: float) -> Optional[bool]:
    """Whether all of ``e``'s interval is below ``bound`` (None: no figure)."""
    return None if e is None else _hi(e) < bound


def at_least(e: Optional[Estimate], bound: float) -> Optional[bool]:
    """Whether all of ``e``'s interval is at or above ``bound``."""
    return None if e is None else _lo(e) >= bound


def above(e: Optional[Estimate], bound: float) -> Optional[bool]:
    """Whether all of ``e``'s interval is above ``bound``."""
    return None if e is None else _lo(e) > bound


def within(e: Optional[Estimate], lo: float, hi: float) -> Optional[bool]:
    """Whether all of ``e``'s interval lies in ``[lo, hi]``."""
    return None if e is None else lo <= _lo(e) and _hi(e) <= hi


def falls(es: Sequence[Estimate]) -> bool:
    """Whether each estimate's interval lies wholly below the previous one's."""
    return all(_hi(b) < _lo(a) for a, b in zip(es, es[1:]))


def gap_at_least(first: Estimate, last: Estimate, bound: float) -> bool:
    """Whether ``last - first`` is at least ``bound`` for every pair of values of
    their intervals (two estimates of different cases: not paired)."""
    return _lo(last) - _hi(first) >= bound


def add_check(sec: Section, rule: str, ok: Optional[bool], got: str, *sels: BySeed,
              counts: bool = True, algo: str = "") -> Check:
    """Append a check of ``sec`` decided from the selections ``sels``: undecided,
    with the differences named, when their runs' builds differ."""
    sources = [(cc, run) for s in sels for (cc, _), run in s.sources.items()]
    diff = differences(sources, sec.name)
    if diff and ok is not None:
        ok = None
        got += "; undecided: the runs' builds differ (" + "; ".join(diff) + ")"
    check = Check(rule, ok, got, counts, algo)
    sec.checks.append(check)
    return check
