"""Run a scenario: every case on its platform, into a run directory.

:func:`run_scenario` chooses the platform (:mod:`.choose`), writes
``plan.json`` and ``meta.json``, prepares the platform (:mod:`.prepare`),
has the executor run the cases (:mod:`.executor`: here, in UML instances,
on a cluster or in a VM) and writes ``summary.json`` as results come in,
with each metric's mean and interval over the seeds at the end.  The
layout of the run directory is ``docs/testbed-rundir.md``.
"""

from __future__ import annotations

import json
import platform as platform_mod
import subprocess
import sys
import time
from datetime import datetime, timezone
from pathlib import Path
from typing import Any, Callable, Dict, List, Optional

from synctcp.checkout import package_checkout

from .. import __version__
from ..analysis.stats import groups
from ..case.errors import RunError
from ..case.kernel import check_ccs, check_kernel, ensure_cc, module_info
from ..case.lifecycle import CaseRun, topology_builder
from ..network.topology import TopologyError
from ..plan.flows import case_ccs
from ..plan.planfile import write_plan
from ..scenario import Case, Scenario
from .choose import PlatformError, choose, uml_series
from .executor import CaseFailed, check_jobs, execute
from .prepare import prepare
from .uml import uml_cost


def _load_json(path: Path) -> Optional[Dict[str, Any]]:
    """A JSON file's object, or None when it is missing or not JSON."""
    try:
        data = json.loads(path.read_text())
    except (OSError, json.JSONDecodeError):
        return None
    return data if isinstance(data, dict) else None


def git_describe() -> Optional[str]:
    """``git describe`` of the checkout the package runs from (None outside one)."""
    repo = package_checkout()
    if repo is None:
        return None
    try:
        res = subprocess.run(["git", "-C", str(repo), "describe", "--always", "--dirty"],
                             capture_output=True, text=True, timeout=10)
        return res.stdout.strip() or None
    except (OSError, subprocess.SubprocessError):
        return None


def kmod_tree() -> Optional[str]:
    """The git tree of the checkout's ``kmod/`` (the modules' source), with
    ``-dirty`` when it has uncommitted changes; None outside a checkout.  The
    ledger compares only figures of the same modules' source (meta.json ``kmod_tree``)."""
    repo = package_checkout()
    if repo is None:
        return None
    try:
        tree = subprocess.run(["git", "-C", str(repo), "rev-parse", "--verify", "-q", "HEAD:kmod"],
                              capture_output=True, text=True, timeout=10)
        status = subprocess.run(["git", "-C", str(repo), "status", "--porcelain", "--", "kmod"],
                                capture_output=True, text=True, timeout=30)
    except (OSError, subprocess.SubprocessError):
        return None
    out = tree.stdout.strip()[:12]
    if tree.returncode != 0 or not out or status.returncode != 0:
        return None
    return out + ("-dirty" if status.stdout.strip() else "")


def run_here(case: Case, cdir: Path, *, log: Callable[[str], None] = print,
             capture: bool = False, backend: str = "netns") -> Dict[str, Any]:
    """Run one case in this process (the executor's ``run_here``): its result, or
    CaseFailed naming the case with the one-line reason."""
    try:
        return CaseRun(case, cdir, log=log, capture=capture, backend=backend).run()
    except (RunError, TopologyError) as exc:
        raise CaseFailed(case.id, str(exc)) from exc


def run_scenario(sc: Scenario, out: Path, ccs: Optional[List[str]] = None,
                 aqms: Optional[List[str]] = None, command: Optional[List[str]] = None,
                 log: Callable[[str], None] = print, progress: Any = None,
                 capture: bool = False, backend: str = "netns",
                 platform: Optional[str] = None, jobs: Optional[int] = None,
                 pool: Any = None, resume: bool = False) -> Path:
    """Run every case of ``sc`` into directory ``out`` on ``backend``; returns it.

    ``platform`` (native, kvm, uml, tcg; default: ``SYNCTCP_PLATFORM``, else
    native where this host loads modules, else uml) says where the cases
    run, ``jobs`` how many at once (uml only; default: the host's cores), or
    ``pool`` (an :class:`~synctcp_testbed.platform.executor.CasePool`, e.g. a Dask
    cluster; uml only) runs them.  ``resume``: ``out`` holds an earlier run
    of the same cases; only those without a ``result.json`` run.
    Raises :class:`RunError` naming the cases that failed, after the others ran.
    """
    topology_builder(backend)       # refuse an unusable backend before anything runs
    if sc.topology.kind == "path":
        raise RunError("topology.kind path is the real path between hosts: run it with "
                       "--hosts HOSTS.toml (docs/real-hosts.md)")
    try:
        plat = choose(platform)
        njobs = check_jobs(plat, jobs)
        if pool is not None and (plat.here or plat.name != "uml"):
            raise PlatformError(f"a {pool.kind} cluster runs cases on the uml platform only "
                                f"(simulated time), not on {plat.name}")
    except PlatformError as exc:
        raise RunError(str(exc)) from exc
    cases = sc.cases(ccs, aqms)
    # an unknown name fails here, before a kernel is built or an instance started
    check_ccs(sorted({cc for c in cases for cc in case_ccs(c)}), plat.here)
    # a kernel that lacks a case's qdisc or AccECN: here, or the UML series
    # (a VM's kernel is checked by each case, CaseRun)
    release = platform_mod.release() if plat.here else uml_series() if plat.name == "uml" \
        else None
    if release:
        check_kernel(sc, release, sorted({c.aqm for c in cases if c.aqm != "ceiling"}))
    if plat.here:       # elsewhere each instance's worker does it (CaseRun)
        for cc in sorted({cc for c in cases for cc in case_ccs(c)}):
            ensure_cc(cc)
    out.mkdir(parents=True, exist_ok=True)
    skipped = []
    if plat.name == "tcg":
        keep = [c for c in cases if c.scenario.topology.rate_mbit <= sc.tcg_max_rate_mbit]
        skipped = [c.id for c in cases if c not in keep]
        cases = keep
    for c in skipped:
        log(f"skipped {c}: above {sc.tcg_max_rate_mbit:g} Mbit/s, more than this emulated "
            f"VM forwards (--platform uml runs it on simulated time)")
    earlier = {c.id: r for c in cases if (r := _load_json(out / c.id / "result.json"))} \
        if resume else {}
    todo = [c for c in cases if c.id not in earlier]
    for cid, r in earlier.items():      # as execute gives it: with the instance's cost
        if plat.name == "uml" and not plat.here and (cost := uml_cost(out / cid)):
            r["cost"] = cost
    where = pool.describe() if pool is not None else (f"{njobs} at once" if njobs > 1 else "")
    log(f"platform {plat.name} ({plat.why}), {len(cases)} cases"
        + (f", {len(earlier)} done before, {len(todo)} to run" if resume else "")
        + (f", {where}" if where else ""))
    old_meta = _load_json(out / "meta.json") if resume else None
    if not resume:
        write_plan(out, sc.as_dict(), ccs, aqms)
    now = datetime.now(timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")
    meta: Dict[str, Any] = {
        "schema": 1, "scenario_name": sc.name, "scenario": sc.as_dict(), "seed": sc.seed,
        "started_utc": now,
        "command": command or sys.argv, "kernel": platform_mod.release(), "host": platform_mod.node(),
        "platform": plat.name, "platform_choice": plat.why,
        "time_mode": "simulated (time-travel=inf-cpu)" if plat.name == "uml" else "real",
        "jobs": njobs, "backend": backend, "capture": capture, "tool_version": __version__,
        "git": git_describe(), "kmod_tree": kmod_tree(), "modules": {}, "skipped_cases": skipped,
        "executor": pool.info() if pool is not None else {"kind": "local", "jobs": njobs},
    }
    if old_meta:
        meta["started_utc"] = old_meta.get("started_utc", now)
        meta["resumed"] = [*old_meta.get("resumed", []),
                           {"utc": now, "command": meta["command"], "ran": [c.id for c in todo],
                            "executor": meta["executor"]}]
    (out / "meta.json").write_text(json.dumps(meta, indent=1))
    try:
        meta.update(prepare(plat, log))
    except PlatformError as exc:
        raise RunError(str(exc)) from exc
    wall0 = time.monotonic()
    order = {c.id: i for i, c in enumerate(cases)}

    def merged(res: List[Dict[str, Any]]) -> List[Dict[str, Any]]:
        """This session's results and the earlier ones, in the order of the cases."""
        return sorted([*earlier.values(), *res], key=lambda r: order.get(r.get("id", ""), 0))

    def partial(res: List[Optional[Dict[str, Any]]]) -> None:
        _write_summary(out, sc, merged([r for r in res if r is not None]))

    def here(case: Case, cdir: Path) -> Dict[str, Any]:
        return run_here(case, cdir, log=log, capture=capture, backend=backend)

    if progress:
        for _ in earlier:
            progress()
    results, failed = execute(plat, todo, out, njobs, log, progress=progress,
                              capture=capture, backend=backend, on_result=partial,
                              run_here=here, pool=pool)
    results = merged(results)
    _platform_meta(meta, out, plat.here, [c.id for c in cases], time.monotonic() - wall0)
    (out / "meta.json").write_text(json.dumps(meta, indent=1))
    _fill_ceilings(results)
    _write_summary(out, sc, results)
    if failed:
        raise RunError("; ".join(f"{cid}: {why}" for cid, why in failed[:5])
                       + (f" (and {len(failed) - 5} more)" if len(failed) > 5 else ""))
    return out


def _platform_meta(meta: Dict[str, Any], out: Path, here: bool, ids: List[str],
                   wall: float) -> None:
    """Kernel, modules and wall cost of the run, from its cases' records."""
    hosts = [_load_json(out / i / "host.json") or {} for i in ids]
    if here:
        meta["modules"] = module_info()
    else:
        kernels = sorted({h["kernel"] for h in hosts if h.get("kernel")})
        if kernels:
            meta["kernel"] = kernels[0] if len(kernels) == 1 else kernels
        meta["modules"] = next((h["modules"] for h in hosts if h.get("modules")), {})
    cost: Dict[str, Any] = {"wall_s": round(wall, 1)}
    sims = [uml_cost(out / i) or {} for i in ids]
    sim = sum(m.get("command_sim_s") or 0 for m in sims)
    inst = sum(m.get("command_wall_s") or 0 for m in sims)
    if sim and inst:
        cost.update({"simulated_s": round(sim, 1), "instance_wall_s": round(inst, 1),
                     "simulated_per_wall_s": round(sim / inst, 3),
                     "userspace": sorted({m.get("userspace") for m in sims if m.get("userspace")}),
                     "uml_release": sorted({m.get("release") for m in sims if m.get("release")})})
    meta["wall_cost"] = cost
    # what the instances ran: the user-space image ("KEY CONTENT_SHA256", or
    # host) and the kernel binary's SHA256; a list when cases differ
    for key, field in (("uml_image", "image"), ("uml_kernel_sha256", "kernel_sha256")):
        got = sorted({m[field] for m in sims if m.get(field)})
        if got:
            meta[key] = got[0] if len(got) == 1 else got
    where = {i: w for i in ids if (w := _load_json(out / i / "where.json"))}
    if where:
        meta["case_where"] = where


def _fill_ceilings(results: List[Dict[str, Any]]) -> None:
    """Each case's platform ceiling: the goodput of the ceiling case at its sweep point."""
    ceil = {json.dumps(r["point"], sort_keys=True): r["goodput_mbit"]
            for r in results if r["aqm"] == "ceiling"}
    for r in results:
        r["platform_ceiling_mbit"] = ceil.get(json.dumps(r["point"], sort_keys=True))


def _write_summary(out: Path, sc: Scenario, results: List[Dict[str, Any]]) -> None:
    summary = {"schema": 1, "scenario": sc.name, "repeat": sc.repeat, "seeds": sc.seeds(),
               "cases": results, "groups": groups(results)}
    tmp = out / "summary.json.tmp"
    tmp.write_text(json.dumps(summary, indent=1))
    tmp.replace(out / "summary.json")
