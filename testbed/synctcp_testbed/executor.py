"""Execute a run's cases on a platform (:mod:`synctcp_testbed.platforms`).

* here (``native``, or already inside an instance): one after another, in
  this process;
* ``uml``: each case in its own User-Mode Linux instance (``scripts/umlrun``
  running :mod:`synctcp_testbed.worker`), up to ``jobs`` at once in threads
  of this process, or as tasks of a Dask cluster (:mod:`synctcp_testbed.cluster`:
  ``--dask``, ``--slurm``): simulated time makes a case's figures independent
  of what else the host runs, and of which host runs it;
* ``kvm`` / ``tcg``: one VM (``scripts/vmrun``) runs them all, in order.

Every case leaves ``CASE/result.json`` or ``CASE/error.txt``; on UML also
``CASE/uml/`` (console, dmesg, meta.json with wall and simulated seconds),
``CASE/case.log`` (the worker's output) and ``CASE/where.json`` (host,
worker, wall seconds).  The results come back in the order of the cases,
whatever order they finished in.

On UML a case is one task, :func:`case_task`: it runs the case into a fresh
staging directory of its own and hands that back whole; only this process
puts it in place (:func:`install_case`, a rename), once per case.  A task
that died half-way (its worker killed) leaves only an orphaned staging
directory, never a half-written case, so a rerun elsewhere starts clean and
nothing is counted twice.
"""

from __future__ import annotations

import io
import json
import os
import shutil
import socket
import subprocess
import sys
import tarfile
import threading
import time
import uuid
from concurrent.futures import ThreadPoolExecutor, as_completed
from pathlib import Path
from typing import Any, Callable, Dict, Iterator, List, Optional, Protocol, Sequence, Tuple

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
        if _PREPARED.get("uml"):
            return {"series": uml_series()}
        series = uml_series()
        log(f"UML {series}: checking the kernel and the modules built for it "
            f"(uml/build-uml.sh; the first build takes 10-15 minutes)")
        res = subprocess.run(["nice", "-n", "10", str(REPO / "uml" / "build-uml.sh"),
                              "--series", series], stdout=subprocess.DEVNULL,
                             stderr=subprocess.PIPE, text=True)
        if res.returncode != 0:
            raise PlatformError(f"UML {series} kernel: {res.stderr.strip().splitlines()[-1:]}")
        if os.environ.get("SYNCTCP_UML_ROOT", "image") != "host":
            # the C helpers for the instances' user-space image, built by its
            # compiler in an instance of their own (native.build)
            res = subprocess.run(
                [str(REPO / "scripts" / "umlrun"), "--", "python3", "-c",
                 "from synctcp_testbed.native import flowgen_path, qsampler_path; "
                 "qsampler_path(); flowgen_path()"],
                stdin=subprocess.DEVNULL, capture_output=True, text=True, cwd=str(REPO),
                env=dict(os.environ, PYTHONPATH=_pythonpath()))
            if res.returncode != 0:
                raise PlatformError("the C helpers in the UML image: "
                                    + " | ".join(res.stderr.strip().splitlines()[-3:]))
        _PREPARED["uml"] = True
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
    rootfs = m.get("rootfs") or {"mode": "host"}
    return {"release": m.get("release"), "time_mode": m.get("time_mode"),
            "kernel_sha256": m.get("kernel_sha256"),
            "image": (f"{rootfs.get('key')} {rootfs.get('content_sha256')}"
                      if rootfs.get("mode") == "image" else rootfs.get("mode")),
            "userspace": m.get("userspace"), "random_seed": m.get("random_seed"),
            "wall_s": m.get("wall_s"), "command_wall_s": wall, "command_sim_s": sim,
            "sim_per_wall": round(sim / wall, 3) if sim and wall else None}


#: staging directories of a run directory's cases (removed when the run ends)
STAGE = ".stage"


def _uml_case(case_id: str, rundir: Path, seed: int, capture: bool, backend: str) -> None:
    """Run case ``case_id`` of ``rundir/plan.json`` in a UML instance, into ``rundir/CASE``."""
    cdir = rundir / case_id
    cdir.mkdir(parents=True, exist_ok=True)
    for name in ("result.json", "error.txt"):
        (cdir / name).unlink(missing_ok=True)
    rw = [d for d in os.environ.get("SYNCTCP_UML_RW", "").split(":") if d]
    env = dict(os.environ, PYTHONPATH=_pythonpath(), SYNCTCP_UML_RUNDIR=str(cdir / "uml"),
               PYTHONDONTWRITEBYTECODE="1",
               SYNCTCP_UML_SEED=str(seed), SYNCTCP_UML_RW=":".join([str(rundir), *rw]),
               PATH=f"{Path(sys.executable).parent}:{os.environ.get('PATH', '')}")
    cmd = [str(REPO / "scripts" / "umlrun"), "--", sys.executable, "-m",
           "synctcp_testbed.worker", str(rundir), case_id, "--backend", backend,
           *(["--capture"] if capture else [])]
    with open(cdir / "case.log", "w") as logf:
        # umlrun stops its instance on SIGTERM: sent when the thread that
        # started it dies, e.g. a Dask worker killed in the middle of a case
        subprocess.run(cmd, stdin=subprocess.DEVNULL, stdout=logf, stderr=subprocess.STDOUT,
                       env=env, cwd=str(REPO), preexec_fn=_die_with_parent)


def _die_with_parent() -> None:
    import ctypes
    import signal

    PR_SET_PDEATHSIG = 1
    ctypes.CDLL(None, use_errno=True).prctl(PR_SET_PDEATHSIG, signal.SIGTERM, 0, 0, 0)


_prepared = threading.Lock()
_PREPARED: Dict[str, bool] = {}


def _prepare_here() -> None:
    """What a case needs on this host (a Dask worker's first case): :func:`prepare`, once."""
    with _prepared:
        if not _PREPARED.get("uml"):
            prepare(Platform("uml", "a worker"), lambda m: None)


def where_am_i() -> Dict[str, Any]:
    """The host, process and (inside a Dask task) worker address running this."""
    worker = "local"
    try:
        from distributed import get_worker

        worker = get_worker().address
    except (ImportError, ValueError):
        pass
    return {"host": socket.gethostname(), "worker": worker, "pid": os.getpid()}


def stage_home() -> Path:
    """Where every case instance runs: ``~/.cache/synctcp/stage`` (writable in UML already).

    The same place for every executor: the instance sees the same file
    system, mounts and path lengths whoever started it, so its simulated run
    is the same to the last digit (an extra writable mount, e.g. the run
    directory outside the repository, changes how long the instance takes to
    boot in simulated time, and with it every figure).
    """
    from .native import cache_dir

    return cache_dir().parent / "stage"


#: a staging directory this old is what a killed task left (no case runs for days)
STALE_S = 2 * 86400


def _sweep_stale(home: Path) -> None:
    try:
        old = [d for d in home.iterdir() if time.time() - d.stat().st_mtime > STALE_S]
    except OSError:
        return
    for d in old:
        shutil.rmtree(d, ignore_errors=True)


def case_task(plan: Dict[str, Any], case_id: str, seed: int, capture: bool, backend: str,
              shared: Optional[str] = None) -> Dict[str, Any]:
    """Run one case of ``plan`` in a UML instance, wherever this is called; what it left.

    The case runs into a new directory of its own, ``stage_home()/CASE.TOKEN/CASE``.
    Returns ``{"case", "where", "dir"}`` when the caller can read that
    directory: ``shared`` given (a directory the caller sees too; the case
    directory is moved under it) or this process is the caller's (a local
    job); else ``{"case", "where", "tar"}``, the case directory as a tar
    archive, the staging directory removed.
    """
    _prepare_here()
    t0 = time.monotonic()
    home = stage_home()
    run = home / f"{case_id}.{uuid.uuid4().hex[:12]}"
    local = shared is None and where_am_i()["worker"] == "local"
    _sweep_stale(home)
    try:
        run.mkdir(parents=True)
        (run / "plan.json").write_text(json.dumps(plan, indent=1) + "\n")
        _uml_case(case_id, run, seed, capture, backend)
        where = dict(where_am_i(), wall_s=round(time.monotonic() - t0, 3))
        if local:
            return {"case": case_id, "where": where, "dir": str(run / case_id), "stage": str(run)}
        if shared:
            dest = Path(shared) / run.name
            dest.parent.mkdir(parents=True, exist_ok=True)
            shutil.move(str(run / case_id), dest)
            return {"case": case_id, "where": where, "dir": str(dest), "stage": str(dest)}
        buf = io.BytesIO()
        with tarfile.open(fileobj=buf, mode="w:gz") as tar:
            # files and directories: not the instance's fifos, nothing outside
            tar.add(run / case_id, arcname=".",
                    filter=lambda m: m if m.isfile() or m.isdir() else None)
        return {"case": case_id, "where": where, "tar": buf.getvalue()}
    finally:
        if not local:
            shutil.rmtree(run, ignore_errors=True)


def _extract_case(tar: tarfile.TarFile, dest: Path, case: str) -> None:
    """Extract a case's archive under ``dest`` only: tarfile's "data" filter
    where this Python has it (3.11.4+; Debian 12's is 3.11.2), else the same
    refusals by hand (absolute or escaping names, links, devices)."""
    if hasattr(tarfile, "data_filter"):
        tar.extractall(dest, filter="data")
        return
    root = dest.resolve()
    for m in tar.getmembers():
        target = (root / m.name).resolve()
        if not (m.isfile() or m.isdir()) or os.path.isabs(m.name) or \
                (target != root and root not in target.parents):
            raise CaseFailed(case, f"its archive holds {m.name!r}, which is not a plain "
                                   f"file or directory under the case")
    tar.extractall(dest)


def install_case(out: Path, got: Dict[str, Any]) -> None:
    """Put a case directory :func:`case_task` returned in place as ``out/CASE``, at once.

    It is assembled in ``out/.stage`` and renamed over whatever ``out/CASE``
    held (a failed or interrupted earlier attempt), so ``out/CASE`` is always
    one attempt's directory, whole.
    """
    case = got["case"]
    stage = out / STAGE
    stage.mkdir(parents=True, exist_ok=True)
    tmp = stage / f"{case}.in-{uuid.uuid4().hex[:12]}"
    if "tar" in got:
        tmp.mkdir()
        with tarfile.open(fileobj=io.BytesIO(got["tar"]), mode="r:gz") as tar:
            _extract_case(tar, tmp, case)
    else:
        shutil.move(got["dir"], tmp)        # a rename on one file system, else a copy
        shutil.rmtree(got["stage"], ignore_errors=True)
    (tmp / "where.json").write_text(json.dumps(got["where"], indent=1) + "\n")
    dest = out / case
    if dest.exists():
        old = stage / f"{case}.old-{uuid.uuid4().hex[:12]}"
        dest.rename(old)
        tmp.rename(dest)
        shutil.rmtree(old, ignore_errors=True)
    else:
        tmp.rename(dest)


Outcome = Tuple[int, Optional[Dict[str, Any]], Optional[str]]


class CasePool(Protocol):
    """Where :func:`case_task` runs: threads here (:class:`LocalPool`) or a Dask cluster."""

    kind: str

    def describe(self) -> str:
        """The pool's size, for the log: e.g. ``2 local jobs``, ``Dask tcp://...: 2 workers``."""
        ...

    def info(self) -> Dict[str, Any]:
        """What meta.json records of it."""
        ...

    def stage_root(self, out: Path) -> Optional[str]:
        """A directory the workers and this process share, for the finished case
        directories (None: the workers send them back, or they are local)."""
        ...

    def run(self, calls: Sequence[Tuple[Any, ...]]) -> Iterator[Outcome]:
        """``case_task(*call)`` for each call; (index, its return, None) or (index, None, why)
        as they finish."""
        ...


class LocalPool:
    """``--jobs N``: up to N cases at once, each in its own UML instance on this host."""

    kind = "local"

    def __init__(self, jobs: int) -> None:
        self.jobs = jobs

    def describe(self) -> str:
        return f"{self.jobs} local job{'s' if self.jobs > 1 else ''}"

    def info(self) -> Dict[str, Any]:
        return {"kind": "local", "jobs": self.jobs, "host": socket.gethostname()}

    def stage_root(self, out: Path) -> Optional[str]:
        return None

    def run(self, calls: Sequence[Tuple[Any, ...]]) -> Iterator[Outcome]:
        with ThreadPoolExecutor(max_workers=self.jobs) as pool:
            futures = {pool.submit(case_task, *call): i for i, call in enumerate(calls)}
            for f in as_completed(futures):
                try:
                    yield futures[f], f.result(), None
                except Exception as exc:    # noqa: BLE001 - the case failed, say why
                    yield futures[f], None, f"{type(exc).__name__}: {exc}"


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
