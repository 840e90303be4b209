"""Execute a run's cases on its platform (:mod:`synctcp_testbed.platform.choose`).

* here (``native``, or already inside an instance): one after another, in
  this process;
* ``uml``: each case in its own User-Mode Linux instance, as tasks of a
  pool (:mod:`.uml`: threads here, or a Dask cluster, :mod:`.cluster`);
* ``kvm`` / ``tcg``: one VM runs them all, in order (:mod:`.vm`).

Every case leaves ``CASE/result.json`` or ``CASE/error.txt``.  The results
come back in the order of the cases, whatever order they finished in.
"""

from __future__ import annotations

import json
import os
import shutil
import tarfile
import threading
import time
from pathlib import Path
from typing import Any, Callable, Dict, List, Optional, Tuple

from ..plan.planfile import load_plan
from ..scenario import Case
from .choose import Platform, PlatformError
from .uml import STAGE, CasePool, LocalPool, install_case, uml_cost
from .vm import run_in_vm

Log = Callable[[str], None]


class CaseFailed(RuntimeError):
    """A case did not produce a result; ``args[0]`` is the case id, ``args[1]`` why."""


def default_jobs(plat: Platform) -> int:
    return (os.cpu_count() or 1) if plat.name == "uml" and not plat.here else 1


def check_jobs(plat: Platform, jobs: Optional[int]) -> int:
    if jobs is None:
        return default_jobs(plat)
    if jobs < 1:
        raise PlatformError(f"--jobs {jobs}: at least 1")
    if jobs > 1 and (plat.here or plat.name != "uml"):
        raise PlatformError(f"--jobs {jobs}: parallel cases need the uml platform (simulated "
                            f"time); on {plat.name} they would run in real time on the same "
                            f"CPUs and measure each other")
    return jobs


def _result(cdir: Path) -> Tuple[Optional[Dict[str, Any]], Optional[str]]:
    try:
        return json.loads((cdir / "result.json").read_text()), None
    except (OSError, json.JSONDecodeError):
        pass
    try:
        return None, (cdir / "error.txt").read_text().strip()
    except OSError:
        pass
    try:
        tail = (cdir / "case.log").read_text(errors="replace").strip().splitlines()[-3:]
    except OSError:
        tail = []
    return None, " | ".join(tail) or "no result and no error"


def execute(plat: Platform, cases: List[Case], out: Path, jobs: int, log: Log,
            progress: Optional[Callable[[], None]] = None, capture: bool = False,
            backend: str = "netns",
            on_result: Optional[Callable[[List[Optional[Dict[str, Any]]]], None]] = None,
            run_here: Optional[Callable[[Case, Path], Dict[str, Any]]] = None,
            pool: Optional[CasePool] = None
            ) -> Tuple[List[Dict[str, Any]], List[Tuple[str, str]]]:
    """Run ``cases``; (results in case order, [(case id, why) of the failed]).

    ``run_here(case, case_dir)`` runs a case in this process (``native``, or
    inside an instance): the case's result, or :class:`CaseFailed`.  On UML
    the cases are tasks of ``pool`` (default: ``jobs`` threads here); the
    cases of ``out/plan.json`` are the ones that can be asked for.
    """
    if not cases:                   # e.g. all skipped on this platform: no instance to start
        return [], []
    results: List[Optional[Dict[str, Any]]] = [None] * len(cases)
    failed: List[Tuple[str, str]] = []
    lock = threading.Lock()
    n = len(cases)

    def done(i: int, wall: float) -> None:
        res, why = _result(out / cases[i].id)
        cost = uml_cost(out / cases[i].id) if plat.name == "uml" and not plat.here else None
        with lock:
            if res is None:
                failed.append((cases[i].id, why or "failed"))
                log(f"{cases[i].id}: [red]failed[/red]: {why}")
            else:
                if cost:
                    res["cost"] = cost
                results[i] = res
                extra = (f", {cost['command_sim_s']:.1f} simulated s, "
                         f"{cost['sim_per_wall']:.2f} simulated s per wall s"
                         if cost and cost.get("sim_per_wall") else "")
                log(f"{cases[i].id}: done in {wall:.0f} s{extra}")
                if on_result:
                    on_result(results)
            if progress:
                progress()

    if plat.here:
        if run_here is None:
            raise PlatformError("no way to run a case in this process")
        for i, case in enumerate(cases):
            log(f"[{i + 1}/{n}] {case.id}")
            t = time.monotonic()
            cdir = out / case.id
            try:
                res = run_here(case, cdir)
                (cdir / "result.json").write_text(json.dumps(res, indent=1) + "\n")
            except CaseFailed as exc:
                cdir.mkdir(parents=True, exist_ok=True)
                (cdir / "error.txt").write_text(f"{exc.args[1]}\n")
            done(i, time.monotonic() - t)
    elif plat.name == "uml":
        pool = pool or LocalPool(jobs)
        plan = load_plan(out)
        stage = pool.stage_root(out)
        log(f"{n} cases on {pool.describe()}")
        calls = [(plan, c.id, c.seed, capture, backend, stage) for c in cases]
        for i, got, why in pool.run(calls):
            try:
                if got is None:
                    raise CaseFailed(cases[i].id, why)
                install_case(out, got)
            except (CaseFailed, OSError, tarfile.TarError) as exc:
                cdir = out / cases[i].id
                cdir.mkdir(parents=True, exist_ok=True)
                (cdir / "result.json").unlink(missing_ok=True)
                (cdir / "error.txt").write_text(
                    f"{why if got is None else f'cannot put the case in place: {exc}'}\n")
                done(i, 0.0)
                continue
            w = got["where"]
            log(f"[{sum(r is not None for r in results) + len(failed) + 1}/{n}] "
                f"{cases[i].id} ran on {w['worker']} ({w['host']}), {pool.describe()}")
            done(i, w["wall_s"])
        shutil.rmtree(out / STAGE, ignore_errors=True)
        if stage:
            shutil.rmtree(stage, ignore_errors=True)    # --shared-dir: what dead tasks left
    else:
        log(f"{n} cases in one {plat.name} VM (scripts/vmrun)")
        t = time.monotonic()
        run_in_vm(plat, [c.id for c in cases], out, capture, backend)
        for i in range(n):
            done(i, time.monotonic() - t)
    return [r for r in results if r is not None], failed
