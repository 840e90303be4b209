"""``plan.json``: what a run asked for, so that any process can list its cases.

``run_scenario`` writes it into the run directory before the first case
runs: the resolved scenario and the algorithms and queues asked for.  A
worker inside a UML instance or a VM, a Dask task on another host and
``run --resume`` read it back and get the same cases, in the same order.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any, Dict, List, Optional

from ..scenario import Case, ScenarioError, from_dict


def load_plan(rundir: Path) -> Dict[str, Any]:
    """``rundir/plan.json``; ScenarioError when it is missing or not JSON."""
    try:
        return json.loads((rundir / "plan.json").read_text())
    except (OSError, json.JSONDecodeError) as exc:
        raise ScenarioError(f"{rundir}/plan.json: {exc}") from exc


def plan_cases(plan: Dict[str, Any]) -> List[Case]:
    """The cases of a plan, as run_scenario listed them."""
    sc = from_dict(plan["scenario"], where="plan.json")
    return sc.cases(plan.get("ccs"), plan.get("aqms"))


def write_plan(rundir: Path, scenario: Dict[str, Any], ccs: Optional[List[str]],
               aqms: Optional[List[str]]) -> None:
    """Write ``rundir/plan.json``: the resolved scenario, the algorithms and queues asked for."""
    (rundir / "plan.json").write_text(json.dumps(
        {"scenario": scenario, "ccs": ccs, "aqms": aqms}, indent=1) + "\n")
