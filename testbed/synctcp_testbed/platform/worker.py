"""Run cases of a run directory here: the part of a run inside a platform instance.

    python3 -m synctcp_testbed.platform.worker RUNDIR CASE_ID [CASE_ID ...] [--capture]
                                               [--backend B]

``RUNDIR/plan.json`` (written by :func:`synctcp_testbed.platform.run.run_scenario`)
holds the resolved scenario and the algorithms and queues asked for; each
case id names one of its cases.  For each case this runs
:class:`~synctcp_testbed.case.lifecycle.CaseRun` into ``RUNDIR/CASE_ID/`` and
writes ``result.json`` there (the case's figures), or ``error.txt`` (one
line) when it failed, and ``host.json`` (kernel, platform, modules).
Exit status: 0 when every case ran, 1 when one failed, 2 for bad input.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import sys
import time
from pathlib import Path
from typing import Optional, Sequence

from ..plan.planfile import load_plan, plan_cases
from ..scenario import ScenarioError


def run_cases(rundir: Path, ids: Sequence[str], capture: bool = False,
              backend: str = "netns") -> int:
    from ..case.errors import RunError
    from ..case.kernel import module_info
    from ..case.lifecycle import CaseRun
    from ..network.topology import TopologyError

    cases = {c.id: c for c in plan_cases(load_plan(rundir))}
    unknown = [i for i in ids if i not in cases]
    if unknown:
        raise ScenarioError(f"no case {', '.join(unknown)} in {rundir}/plan.json")
    rc = 0
    for cid in ids:
        cdir = rundir / cid
        cdir.mkdir(parents=True, exist_ok=True)
        for name in ("result.json", "error.txt"):
            (cdir / name).unlink(missing_ok=True)
        started = time.monotonic()

        def log(msg: str) -> None:
            print(f"{time.monotonic() - started:7.1f} {msg}", file=sys.stderr, flush=True)
        run = CaseRun(cases[cid], cdir, log=log, capture=capture, backend=backend)
        try:
            res = run.run()
        except (RunError, TopologyError, OSError) as exc:
            (cdir / "error.txt").write_text(f"{exc}\n")
            print(f"{cid}: {exc}", file=sys.stderr, flush=True)
            rc = 1
            continue
        (cdir / "host.json").write_text(json.dumps(
            {"kernel": platform.release(), "platform": os.environ.get("SYNCTCP_PLATFORM")
             or os.environ.get("SYNCTCP_ACCEL") or "native",
             "modules": getattr(run, "modules", None) or module_info(),
             "case_s": round(time.monotonic() - started, 3)}, indent=1) + "\n")
        tmp = cdir / "result.json.tmp"
        tmp.write_text(json.dumps(res, indent=1) + "\n")
        tmp.replace(cdir / "result.json")
    return rc


def main(argv: Optional[Sequence[str]] = None) -> int:
    ap = argparse.ArgumentParser(prog="python3 -m synctcp_testbed.platform.worker",
                                 description="Run cases of a run directory (plan.json) here.")
    ap.add_argument("rundir", type=Path)
    ap.add_argument("case", nargs="+", help="case ids of the plan")
    ap.add_argument("--capture", action="store_true")
    ap.add_argument("--backend", default="netns")
    args = ap.parse_args(argv)
    try:
        return run_cases(args.rundir.absolute(), args.case, args.capture, args.backend)
    except ScenarioError as exc:
        print(f"worker: {exc}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        return 130


if __name__ == "__main__":
    sys.exit(main())
