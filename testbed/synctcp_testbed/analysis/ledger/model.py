"""A claim's section of the ledger: its checks and the verdict they give."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable, List, Optional, Tuple

from ..rundir import Run

#: how a verdict reads, from its checks
HOLDS, PARTLY, FAILS, UNMEASURED = "holds", "holds partly", "fails", "not measured"
#: the algorithms' names in the papers
PAPER_NAME = {"reno": "TCP Reno", "sync": "Sync-TCP(Pcwnd)", "mixreact": "Sync-TCP(MixReact)",
              "etcp": "E-TCP"}


class LedgerError(Exception):
    """A run directory the ledger cannot use; the message says why."""


@dataclass
class Check:
    """One rule of a claim and what our runs gave for it (``ok`` None: not testable)."""

    rule: str
    ok: Optional[bool]
    got: str
    #: whether the verdict counts it (False: shown for information)
    counts: bool = True


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

    @property
    def verdict(self) -> str:
        counted = [c for c in self.checks if c.counts]
        known = [c.ok for c in counted if c.ok is not None]
        if not self.runs or not known:
            return UNMEASURED
        if all(known) and len(known) == len(counted):
            return HOLDS
        return FAILS if not any(known) else PARTLY


@dataclass
class Claim:
    key: str
    prefixes: Tuple[str, ...]
    title: str
    claim: str
    paper: str
    evaluate: Callable[[Section, Path], None]
