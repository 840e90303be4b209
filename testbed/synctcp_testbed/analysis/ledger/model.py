"""A claim's section of the ledger: its checks and the verdicts they give.

A check is one rule of a claim about one algorithm (``Check.algo``: the
paper's name, or a description such as "Reno with RED" for a rule about the
setup).  The verdicts are per algorithm and for the claim:

- **holds**: every counted check passes;
- **fails**: at least one counted check fails;
- **undecided**: none fails but at least one could not be decided (no
  figure, or figures from runs of different builds: :mod:`.builds`);
- **not measured**: no run of the claim, or no counted check.

There is no "holds partly": a claim holds for an algorithm only when all of
its checks pass, and the verdict table says which algorithm fails which check.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable, Dict, List, Optional, Sequence, Tuple

from ..rundir import Run

#: how a verdict reads, from its checks
HOLDS, FAILS, UNDECIDED, UNMEASURED = "holds", "fails", "undecided", "not measured"
#: the algorithms' names in the papers
PAPER_NAME = {"reno": "TCP Reno", "sync": "Sync-TCP(Pcwnd)", "mixreact": "Sync-TCP(MixReact)",
              "etcp": "E-TCP", "cubic": "CUBIC", "vegas": "Vegas", "bbr": "BBR"}


class LedgerError(Exception):
    """A run directory the ledger cannot use; the message says why."""


@dataclass
class Check:
    """One rule of a claim and what our runs gave for it (``ok`` None: not decided)."""

    rule: str
    ok: Optional[bool]
    got: str
    #: whether the verdict counts it (False: shown for information)
    counts: bool = True
    #: the algorithm the rule is about (its paper name; "" for the claim as a whole)
    algo: str = ""


def verdict_of(checks: Sequence[Check]) -> str:
    """The verdict of ``checks`` (see the module's docstring)."""
    oks = [c.ok for c in checks]
    if not oks:
        return UNMEASURED
    if any(ok is False for ok in oks):
        return FAILS
    return HOLDS if all(oks) else UNDECIDED


def tally(checks: Sequence[Check]) -> str:
    """"2 of 3 checks fail", "all 3 pass", "1 of 2 undecided" for ``checks``."""
    n = len(checks)
    failed = sum(c.ok is False for c in checks)
    open_ = sum(c.ok is None for c in checks)
    parts = [f"{failed} of {n} fail"] if failed else []
    if open_:
        parts.append(f"{open_} of {n} undecided")
    return "; ".join(parts) if parts else ("the check passes" if n == 1 else f"all {n} pass")


@dataclass
class Section:
    key: str
    title: str
    claim: str
    paper: str
    runs: List[Run] = field(default_factory=list)
    ours: str = ""
    checks: List[Check] = field(default_factory=list)
    notes: List[str] = field(default_factory=list)
    figures: List[Path] = field(default_factory=list)
    #: each run's name in the ledger (its directory's name): :meth:`name`
    names: Dict[Path, str] = field(default_factory=dict)

    def name(self, run: Run) -> str:
        """The run's name in the ledger: its directory's (``run.path.name``)."""
        return self.names.get(run.path, run.path.name)

    @property
    def verdict(self) -> str:
        if not self.runs:
            return UNMEASURED
        return verdict_of([c for c in self.checks if c.counts])

    def verdicts(self, counted: bool = True) -> List[Tuple[str, str, str]]:
        """Per algorithm, in the order of its first check: (algorithm, verdict,
        tally) of its counted checks (``counted`` False: of those shown only)."""
        algos: Dict[str, List[Check]] = {}
        for c in self.checks:
            if c.counts == counted:
                algos.setdefault(c.algo, []).append(c)
        return [(a, verdict_of(cs), tally(cs)) for a, cs in algos.items()]


@dataclass
class Claim:
    key: str
    prefixes: Tuple[str, ...]
    title: str
    claim: str
    paper: str
    evaluate: Callable[[Section, Path], None]
