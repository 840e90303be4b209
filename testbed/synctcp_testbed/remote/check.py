"""``synctcp-testbed hosts check HOSTS.toml``: every host reached and probed before anything runs.

:func:`check` connects to every host of the inventory (a host that cannot
be reached is one line and nothing more is asked of any host), runs the
preflight probe on each and returns one line per problem, naming the host
and the fix, and the lines worth knowing that are no failure: each
sender/receiver pair's clock bound now (:mod:`.clocks`) and the notes of
:func:`.preflight.notes`.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Dict, List, Set

from . import clocks, preflight
from .inventory import Inventory
from .ssh import Connections, HostError


@dataclass
class CheckResult:
    #: one line per failure: "host NAME: what; fix: how" (or what could not be reached)
    problems: List[str] = field(default_factory=list)
    #: one line per fact worth knowing: clock bounds, notes
    info: List[str] = field(default_factory=list)
    #: each host's probe facts (host name -> key -> value)
    facts: Dict[str, Dict[str, str]] = field(default_factory=dict)


def check(inv: Inventory, ccs: Set[str], flows: int = 1, capture: bool = False,
          timeout_s: float = 60.0) -> CheckResult:
    """Reach and probe every host of ``inv`` for a run with ``ccs`` and ``flows`` flows per
    pair (its ports), with captures if ``capture``."""
    out = CheckResult()
    needs = preflight.needs_of(inv, ccs, flows, capture)
    with Connections(inv.hosts, inv.ssh) as conns:
        out.problems += [str(e) for e in conns.connect_all()]
        if out.problems:
            return out
        for h in inv.hosts:
            try:
                res = conns[h.name].run(preflight.probe_script(h), timeout=timeout_s,
                                        check=False)
            except HostError as exc:
                out.problems.append(str(exc))
                continue
            facts, used = preflight.parse_probe(res.out)
            out.facts[h.name] = facts
            out.problems += preflight.problems(h, facts, used, needs[h.name])
            out.info += preflight.notes(h, facts)
    pairs = [(s, r) for s in inv.with_role("sender") for r in inv.with_role("receiver")
             if s.name != r.name and s.name in out.facts and r.name in out.facts]
    out.problems += preflight.option_problems(pairs, out.facts)
    for s, r in pairs:
        a, b = preflight.clock_of(s, out.facts[s.name]), preflight.clock_of(r, out.facts[r.name])
        bound = clocks.pair_bound_s(a, b)
        shown = "none" if bound is None else f"\u00b1{bound * 1e3:.3f} ms"
        out.info.append(f"clock bound {s.name} -> {r.name}: {shown} ({clocks.pair_basis(a, b)})")
    return out
