"""Cases on User-Mode Linux: each case in its own instance, on simulated time.

A case is one task, :func:`case_task`: it runs the case (``scripts/umlrun``
running :mod:`synctcp_testbed.platform.worker`) into a fresh staging
directory of its own and hands that back whole; only the run's own process
puts it in place (:func:`install_case`, a rename), once per case.  A task
that died half-way (its worker killed) leaves only an orphaned staging
directory, never a half-written case, so a rerun elsewhere starts clean and
nothing is counted twice.  Tasks run on a :class:`CasePool`: up to ``jobs``
threads here (:class:`LocalPool`) or a Dask cluster
(:mod:`synctcp_testbed.platform.cluster`); simulated time makes a case's
figures independent of what else the host runs, and of which host runs it.

Every case leaves ``CASE/uml/`` (console, dmesg, meta.json with wall and
simulated seconds), ``CASE/case.log`` (the worker's output) and
``CASE/where.json`` (host, worker, wall seconds).
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
import time
import uuid
from concurrent.futures import ThreadPoolExecutor, as_completed
from pathlib import Path
from typing import Any, Dict, Iterator, Optional, Protocol, Sequence, Tuple

from .choose import repo
from .helpers import cache_dir
from .prepare import prepare_once, pythonpath


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
    env = dict(os.environ, PYTHONPATH=pythonpath(), SYNCTCP_UML_RUNDIR=str(cdir / "uml"),
               PYTHONDONTWRITEBYTECODE="1",
               SYNCTCP_UML_SEED=str(seed), SYNCTCP_UML_RW=":".join([str(rundir), *rw]),
               PATH=f"{Path(sys.executable).parent}:{os.environ.get('PATH', '')}")
    top = repo("the uml platform")
    cmd = [str(top / "scripts" / "umlrun"), "--", sys.executable, "-m",
           "synctcp_testbed.platform.worker", str(rundir), case_id, "--backend", backend,
           *(["--capture"] if capture else [])]
    with open(cdir / "case.log", "w") as logf:
        # umlrun stops its instance on SIGTERM: sent when the thread that
        # started it dies, e.g. a Dask worker killed in the middle of a case
        subprocess.run(cmd, stdin=subprocess.DEVNULL, stdout=logf, stderr=subprocess.STDOUT,
                       env=env, cwd=str(top), preexec_fn=_die_with_parent)


def _die_with_parent() -> None:
    import ctypes
    import signal

    PR_SET_PDEATHSIG = 1
    ctypes.CDLL(None, use_errno=True).prctl(PR_SET_PDEATHSIG, signal.SIGTERM, 0, 0, 0)


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
    prepare_once()
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


def _extract_case(tar: tarfile.TarFile, dest: Path) -> None:
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
            raise tarfile.TarError(f"its archive holds {m.name!r}, which is not a plain "
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
            _extract_case(tar, tmp)
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
