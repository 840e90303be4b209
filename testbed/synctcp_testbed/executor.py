"""Execute a run's cases on a platform (:mod:`synctcp_testbed.platforms`).

* here (``native``, or already inside an instance): one after another, in
  this process;
* ``uml``: each case in its own User-Mode Linux instance (``scripts/umlrun``
  running :mod:`synctcp_testbed.worker`), up to ``jobs`` at once: simulated
  time makes a case's figures independent of what else the host runs;
* ``kvm`` / ``tcg``: one VM (``scripts/vmrun``) runs them all, in order.

Every case leaves ``CASE/result.json`` or ``CASE/error.txt``; on UML also
``CASE/uml/`` (console, dmesg, meta.json with wall and simulated seconds)
and ``CASE/case.log`` (the worker's output).  The results come back in the
order of the cases, whatever order they finished in.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any, Callable, Dict, List, Optional, Tuple

from .platforms import REPO, Platform, PlatformError, uml_series
from .scenario import Case, ScenarioError, from_dict

Log = Callable[[str], None]


class CaseFailed(RuntimeError):
    """A case did not produce a result; ``args[0]`` is the case id, ``args[1]`` why."""


def load_plan(rundir: Path) -> Dict[str, Any]:
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
    (rundir / "plan.json").write_text(json.dumps(
        {"scenario": scenario, "ccs": ccs, "aqms": aqms}, indent=1) + "\n")


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


def _pythonpath() -> str:
    own = [str(REPO / d) for d in ("tools", "testbed", "mininet")]
    old = [p for p in os.environ.get("PYTHONPATH", "").split(":") if p and p not in own]
    return ":".join(own + old)


def prepare(plat: Platform, log: Log) -> Dict[str, Any]:
    """Build what the platform's instances need; what they will run on."""
    from .native import flowgen_path, qsampler_path

    qsampler_path()                 # compiled here: fast, and the instances share them
    flowgen_path()
    # Byte-compile the packages here, so that every instance loads the same
    # .pyc files and none writes them (PYTHONDONTWRITEBYTECODE inside): a
    # process's own work moves simulated time by microseconds (each clock read
    # costs 256 ns), so an instance that compiled while another loaded would
    # not repeat it (docs/platform.md, "Determinism").
    compileall = subprocess.run([sys.executable, "-m", "compileall", "-q",
                                 *(str(REPO / d) for d in ("tools", "testbed", "mininet"))],
                                capture_output=True, text=True)
    if compileall.returncode != 0:
        raise PlatformError(f"python -m compileall: {compileall.stdout.strip()[-300:]}")
    if plat.here:
        return {}
    if plat.name == "uml":
        series = uml_series()
        log(f"UML {series}: checking the kernel and the modules built for it "
            f"(uml/build-uml.sh; the first build takes 10-15 minutes)")
        res = subprocess.run(["nice", "-n", "10", str(REPO / "uml" / "build-uml.sh"),
                              "--series", series], stdout=subprocess.DEVNULL,
                             stderr=subprocess.PIPE, text=True)
        if res.returncode != 0:
            raise PlatformError(f"UML {series} kernel: {res.stderr.strip().splitlines()[-1:]}")
        return {"series": series}
    res = subprocess.run(["make", "-s", "-C", str(REPO), "modules"], capture_output=True,
                         text=True)
    if res.returncode != 0:
        raise PlatformError(f"make modules: {res.stderr.strip()[-300:]}")
    return {}


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


def uml_cost(cdir: Path) -> Optional[Dict[str, Any]]:
    """Wall and simulated seconds of a case's UML instance (umlrun's meta.json)."""
    try:
        m = json.loads((cdir / "uml" / "meta.json").read_text())
    except (OSError, json.JSONDecodeError):
        return None
    sim, wall = m.get("command_sim_s"), m.get("command_wall_s")
    return {"release": m.get("release"), "time_mode": m.get("time_mode"),
            "userspace": m.get("userspace"), "random_seed": m.get("random_seed"),
            "wall_s": m.get("wall_s"), "command_wall_s": wall, "command_sim_s": sim,
            "sim_per_wall": round(sim / wall, 3) if sim and wall else None}


def _uml_case(case: Case, out: Path, seed: int, capture: bool, backend: str) -> None:
    cdir = out / case.id
    cdir.mkdir(parents=True, exist_ok=True)
    for name in ("result.json", "error.txt"):
        (cdir / name).unlink(missing_ok=True)
    env = dict(os.environ, PYTHONPATH=_pythonpath(), SYNCTCP_UML_RUNDIR=str(cdir / "uml"),
               PYTHONDONTWRITEBYTECODE="1",
               SYNCTCP_UML_SEED=str(seed),
               PATH=f"{Path(sys.executable).parent}:{os.environ.get('PATH', '')}")
    cmd = [str(REPO / "scripts" / "umlrun"), "--", sys.executable, "-m",
           "synctcp_testbed.worker", str(out), case.id, "--backend", backend,
           *(["--capture"] if capture else [])]
    with open(cdir / "case.log", "w") as logf:
        subprocess.run(cmd, stdin=subprocess.DEVNULL, stdout=logf, stderr=subprocess.STDOUT,
                       env=env, cwd=str(REPO))


def execute(plat: Platform, cases: List[Case], out: Path, jobs: int, seed: int, log: Log,
            progress: Optional[Callable[[], None]] = None, capture: bool = False,
            backend: str = "netns",
            on_result: Optional[Callable[[List[Optional[Dict[str, Any]]]], None]] = None,
            run_here: Optional[Callable[[Case, Path], Dict[str, Any]]] = None
            ) -> Tuple[List[Dict[str, Any]], List[Tuple[str, str]]]:
    """Run ``cases``; (results in case order, [(case id, why) of the failed]).

    ``run_here(case, case_dir)`` runs a case in this process (``native``, or
    inside an instance): the case's result, or :class:`CaseFailed`.
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
        def one(i: int) -> None:
            t = time.monotonic()
            log(f"[{i + 1}/{n}] {cases[i].id}: started (UML)")
            _uml_case(cases[i], out, seed, capture, backend)
            done(i, time.monotonic() - t)

        with ThreadPoolExecutor(max_workers=jobs) as pool:
            for f in [pool.submit(one, i) for i in range(n)]:
                f.result()
    else:
        env = dict(os.environ, PYTHONPATH=_pythonpath(), SYNCTCP_PLATFORM=plat.name)
        cmd = [str(REPO / "scripts" / "vmrun"), "--platform", plat.name, "--", sys.executable,
               "-m", "synctcp_testbed.worker", str(out), *(c.id for c in cases),
               "--backend", backend, *(["--capture"] if capture else [])]
        log(f"{n} cases in one {plat.name} VM (scripts/vmrun)")
        t = time.monotonic()
        subprocess.run(cmd, stdin=subprocess.DEVNULL, env=env, cwd=str(REPO))
        for i in range(n):
            done(i, time.monotonic() - t)
    return [r for r in results if r is not None], failed
