"""Cases on a Dask cluster: ``--dask ADDRESS`` and ``--slurm`` (docs/scaling.md).

Each case is one ``dask.distributed`` task, :func:`synctcp_testbed.platform.uml.case_task`:
a worker runs the case in its own User-Mode Linux instance (simulated time,
so the figures do not depend on which host ran it or on what else it ran)
and returns the case directory, as a tar archive, or leaves it under
``--shared-dir`` when client and workers share a file system.  The client
(:func:`synctcp_testbed.platform.executor.execute`) puts each one in place and
assembles summary and report exactly as a local run does.

A worker that dies in the middle of a case loses the task; the scheduler
gives it to another worker, which starts from a new staging directory.

Workers must be able to import this package (the same checkout at the same
path, or ``PYTHONPATH``) and run ``scripts/umlrun`` (the UML kernel built or
cached in ``~/.cache/synctcp``).

``--slurm`` starts the workers as Slurm jobs through dask-jobqueue's
``SLURMCluster``: a partition, cores and memory per job, a wall-time limit
and a number of jobs, as options or in a TOML file (``--slurm-config``)::

    partition = "synctcp"
    cores = 2            # cases at once per job (one UML instance each)
    memory = "4GB"       # per job; each instance takes up to SYNCTCP_UML_MEM (2G)
    walltime = "01:00:00"
    jobs = 2             # Slurm jobs, one Dask worker each
    interface = "lo"     # network interface the scheduler and workers use (optional)
    start_timeout_s = 300
    job_extra_directives = ["--exclusive"]
"""

from __future__ import annotations

import os
import sys
import tempfile
import time
import tomllib
from dataclasses import dataclass, field, fields
from pathlib import Path
from typing import Any, Dict, Iterator, List, Optional, Sequence, Tuple

from .choose import PlatformError
from .prepare import pythonpath
from .uml import Outcome, case_task

#: seconds to wait for a scheduler to answer, and for its first worker
CONNECT_TIMEOUT_S = 20.0


@dataclass
class SlurmOptions:
    """What each Slurm job of the cluster asks for."""

    partition: Optional[str] = None
    cores: int = 1
    memory: str = "3GB"
    walltime: str = "01:00:00"
    jobs: int = 1
    interface: Optional[str] = None
    start_timeout_s: float = 300.0
    job_extra_directives: List[str] = field(default_factory=list)

    def check(self) -> "SlurmOptions":
        if self.cores < 1 or self.jobs < 1:
            raise PlatformError(f"--slurm: cores ({self.cores}) and jobs ({self.jobs}) must be "
                                f"at least 1")
        if self.start_timeout_s <= 0:
            raise PlatformError("--slurm: start_timeout_s must be positive")
        parts = self.walltime.split(":")
        if not (1 <= len(parts) <= 3 and all(p.isdigit() for p in parts)):
            raise PlatformError(f"--slurm-walltime {self.walltime!r}: HH:MM:SS")
        from dask.utils import parse_bytes

        try:
            parse_bytes(self.memory)
        except ValueError as exc:
            raise PlatformError(f"--slurm-memory {self.memory!r}: not a size (e.g. 4GB)") from exc
        return self


def slurm_options(config: Optional[str], **given: Any) -> SlurmOptions:
    """Options from the TOML file ``config`` (if any), overridden by those ``given`` (not None)."""
    data: Dict[str, Any] = {}
    if config:
        try:
            data = tomllib.loads(Path(config).read_text())
        except (OSError, tomllib.TOMLDecodeError) as exc:
            raise PlatformError(f"--slurm-config {config}: {exc}") from exc
        known = {f.name for f in fields(SlurmOptions)}
        unknown = sorted(set(data) - known)
        if unknown:
            raise PlatformError(f"--slurm-config {config}: unknown key {', '.join(unknown)} "
                                f"(known: {', '.join(sorted(known))})")
    data.update({k: v for k, v in given.items() if v is not None})
    try:
        return SlurmOptions(**data).check()
    except TypeError as exc:
        raise PlatformError(f"--slurm-config {config}: {exc}") from exc


class DaskPool:
    """Cases as tasks of a Dask cluster: a scheduler at ``address``, or Slurm jobs."""

    def __init__(self, address: Optional[str] = None, slurm: Optional[SlurmOptions] = None,
                 shared_dir: Optional[Path] = None, log: Any = print) -> None:
        if (address is None) == (slurm is None):
            raise PlatformError("a Dask pool needs a scheduler address or Slurm options")
        self.address, self.slurm, self.log = address, slurm, log
        self.shared_dir = shared_dir
        self.kind = "slurm" if slurm else "dask"
        self.client: Any = None
        self.cluster: Any = None

    def __enter__(self) -> "DaskPool":
        try:
            from distributed import Client
        except ImportError as exc:
            raise PlatformError(f"--{self.kind}: dask.distributed is not installed "
                                f"(make setup)") from exc
        if self.slurm:
            self._start_slurm()
            address: Any = self.cluster
        else:
            address = self.address
        try:
            self.client = Client(address, timeout=f"{CONNECT_TIMEOUT_S}s",
                                 set_as_default=False)
        except (OSError, TimeoutError, ValueError, TypeError) as exc:
            self.close()
            raise PlatformError(f"--dask {self.address}: no scheduler answers there "
                                f"({type(exc).__name__}: {exc})".replace("\n", " ")) from exc
        want = self.slurm.jobs if self.slurm else 1
        wait = self.slurm.start_timeout_s if self.slurm else CONNECT_TIMEOUT_S
        try:
            self.client.wait_for_workers(want, timeout=wait)
        except TimeoutError as exc:
            state = self._queue_state()         # before close() cancels the jobs
            self.close()
            raise PlatformError(f"--{self.kind}: fewer than {want} worker(s) joined in "
                                f"{wait:g} s{state}") from exc
        return self

    def _start_slurm(self) -> None:
        try:
            from dask_jobqueue import SLURMCluster
        except ImportError as exc:
            raise PlatformError("--slurm: dask-jobqueue is not installed (make setup)") from exc
        s = self.slurm
        assert s is not None
        import shutil

        missing = [c for c in ("sbatch", "squeue", "scancel") if shutil.which(c) is None]
        if missing:
            raise PlatformError(f"--slurm: no {', '.join(missing)} on this host (Debian's "
                                f"slurm-client; make setup installs slurm-wlm)")
        if self.shared_dir:
            logs = self.shared_dir / "slurm-logs"
            logs.mkdir(parents=True, exist_ok=True)
        else:
            logs = Path(tempfile.mkdtemp(prefix="synctcp-slurm-logs-"))
        self.log(f"Slurm: {s.jobs} job(s) of {s.cores} core(s), {s.memory}, {s.walltime}"
                 f"{f' on partition {s.partition}' if s.partition else ''}; "
                 f"their logs in {logs}")
        try:
            self.cluster = SLURMCluster(
                queue=s.partition, cores=s.cores, processes=1, memory=s.memory,
                walltime=s.walltime, python=sys.executable, interface=s.interface,
                log_directory=str(logs), job_extra_directives=list(s.job_extra_directives),
                job_script_prologue=[f"export PYTHONPATH={pythonpath()}"])
            self.cluster.scale(jobs=s.jobs)
        except Exception as exc:    # noqa: BLE001 - sbatch's own error, in one line
            self.close()
            raise PlatformError(f"--slurm: cannot start the workers: "
                                f"{str(exc).strip().splitlines()[-1:]}") from exc

    def _queue_state(self) -> str:
        if not self.slurm:
            return ""
        import subprocess

        try:
            q = subprocess.run(["squeue", "--me", "-h", "-o", "%i %T %r"], capture_output=True,
                               text=True, timeout=10).stdout.strip()
        except (OSError, subprocess.SubprocessError):
            q = ""
        return f" (squeue: {q.replace(chr(10), '; ') or 'no job'})"

    def close(self) -> None:
        for thing in (self.client, self.cluster):
            if thing is not None:
                try:
                    thing.close()
                except Exception:   # noqa: BLE001 - closing what may already be gone
                    pass
        self.client = self.cluster = None

    def __exit__(self, *exc: Any) -> None:
        self.close()

    def workers(self) -> Tuple[int, int]:
        info = self.client.scheduler_info(n_workers=-1)["workers"] if self.client else {}
        return len(info), sum(w.get("nthreads", 0) for w in info.values())

    def describe(self) -> str:
        n, threads = self.workers()
        where = "Slurm" if self.slurm else f"Dask {self.client.scheduler.address}"
        return f"{where}: {n} worker{'s' if n != 1 else ''}, {threads} thread{'s' if threads != 1 else ''}"

    def info(self) -> Dict[str, Any]:
        n, threads = self.workers()
        got: Dict[str, Any] = {"kind": self.kind, "scheduler": self.client.scheduler.address,
                               "workers": n, "threads": threads,
                               "shared_dir": str(self.shared_dir) if self.shared_dir else None}
        if self.slurm:
            got["slurm"] = {k: getattr(self.slurm, k) for k in
                            ("partition", "cores", "memory", "walltime", "jobs")}
        return got

    def stage_root(self, out: Path) -> Optional[str]:
        if self.shared_dir is None:
            return None
        return str(self.shared_dir / f"{out.name}-{os.getpid()}-{int(time.time())}")

    def run(self, calls: Sequence[Tuple[Any, ...]]) -> Iterator[Outcome]:
        from distributed import as_completed

        futures = {self.client.submit(case_task, *call, pure=False,
                                      key=f"case-{call[1]}-{os.urandom(4).hex()}"): i
                   for i, call in enumerate(calls)}
        for f in as_completed(list(futures), loop=self.client.loop):
            i = futures[f]
            try:
                yield i, f.result(), None
            except Exception as exc:    # noqa: BLE001 - the case failed; say why
                yield i, None, f"{type(exc).__name__}: {exc}".replace("\n", " ")
            finally:
                f.release()
