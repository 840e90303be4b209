"""Sweeps beyond one machine: the same figures from local jobs, Dask and Slurm; faults.

``make dist-test`` (part of ``make test``).  Real UML instances on
simulated time run a two-case scenario (reno, drop-tail and RED, 6
simulated seconds each):

* equality: ``--jobs 1``, ``--jobs 2`` and a Dask cluster on loopback (a
  ``dask scheduler`` and two ``dask worker`` processes started here) give
  identical summaries, every figure of every case;
* a Dask worker killed (SIGKILL) in the middle of a case: the case reruns on
  the other worker; each case is in the run once, with the figures of an
  undisturbed run, and the killed attempt's instance is stopped;
* a client killed in the middle of a run: ``run --resume RUNDIR`` runs only
  the case that has no result, and the summary is the undisturbed one;
* Slurm: a single-node Slurm (slurmctld, slurmd and munged as processes of
  this test, configured in a temporary directory; no system service is
  touched) runs the scenario through ``--slurm`` (dask-jobqueue).
"""

from __future__ import annotations

import json
import os
import pwd
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any, Dict, Iterator, List, Optional, Tuple

import pytest

REPO = Path(__file__).resolve().parents[2]
OUT = REPO / "results" / "dist-test"
ENV = dict(os.environ, PYTHONPATH=":".join(
    [str(REPO / d) for d in ("tools", "testbed", "mininet")]
    + [p for p in os.environ.get("PYTHONPATH", "").split(":") if p]))
ENV.pop("SYNCTCP_IN_VM", None)
ENV["COLUMNS"] = "300"          # rich's log lines unwrapped, for the assertions on them
CASES = ["reno-droptail", "reno-red"]
#: bound of any one command here (the cases take seconds each)
RUN_TIMEOUT_S = 600

SCENARIO = """\
name = "dist-test"
description = "two short reno cases for the distribution tests"
cc = ["reno"]
aqm = ["droptail", "red"]
duration_s = 6
warmup_s = 1
seed = 7

[topology]
kind = "dumbbell"
rate_mbit = 10
rtts_ms = [40, 80]
queue_pkts = 50

[traffic]
flows_per_pair = 2
"""


def _toml() -> Path:
    OUT.mkdir(parents=True, exist_ok=True)
    path = OUT / "dist-test.toml"
    path.write_text(SCENARIO)
    return path


def _cmd(label: str, *extra: str) -> Tuple[List[str], Path]:
    out = OUT / label
    shutil.rmtree(out, ignore_errors=True)
    return ([sys.executable, "-m", "synctcp_testbed.cli", "run", str(_toml()), "--platform",
             "uml", "--out", str(out), "--no-report", *extra], out)


def _run(cmd: List[str], env: Optional[Dict[str, str]] = None) -> str:
    res = subprocess.run(cmd, env=env or ENV, cwd=str(REPO), capture_output=True, text=True,
                         timeout=RUN_TIMEOUT_S)
    print(res.stderr[-4000:])
    assert res.returncode == 0, res.stderr[-2000:]
    return res.stderr


def _figures(out: Path) -> List[Dict[str, Any]]:
    """Everything each case measured (not what it cost)."""
    cases = json.loads((out / "summary.json").read_text())["cases"]
    return [{k: v for k, v in c.items() if k != "cost"} for c in cases]


def _meta(out: Path) -> Dict[str, Any]:
    return json.loads((out / "meta.json").read_text())


def _case_dirs(out: Path) -> List[str]:
    return sorted(p.name for p in out.iterdir() if p.is_dir())


@pytest.fixture(scope="module")
def reference() -> List[Dict[str, Any]]:
    cmd, out = _cmd("jobs1", "--jobs", "1")
    _run(cmd)
    figs = _figures(out)
    assert [c["id"] for c in figs] == CASES
    assert all(c["goodput_mbit"] > 5 for c in figs), figs
    return figs


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def stop_processes(procs: List[subprocess.Popen]) -> None:
    """Terminate, last started first; kill what does not end within 30 s."""
    for p in reversed(procs):
        p.terminate()
    for p in procs:
        try:
            p.wait(timeout=30)
        except subprocess.TimeoutExpired:
            p.kill()
            p.wait()


class DaskCluster:
    """A ``dask scheduler`` and two ``dask worker`` processes (no nanny) on loopback."""

    def __init__(self, logs: Path) -> None:
        from distributed import Client

        self.address = f"tcp://127.0.0.1:{_free_port()}"
        port = self.address.rsplit(":", 1)[1]
        logs.mkdir(parents=True, exist_ok=True)
        self.procs: List[subprocess.Popen] = []
        self._start(["scheduler", "--host", "127.0.0.1", "--port", port, "--dashboard-address",
                     ":0"], logs / "scheduler.log")
        for i in (1, 2):
            self._start(["worker", self.address, "--nthreads", "1", "--no-nanny",
                         "--host", "127.0.0.1", "--dashboard-address", ":0", "--name", f"w{i}"],
                        logs / f"worker{i}.log")
        self.client = Client(self.address, timeout="60s", set_as_default=False)
        self.client.wait_for_workers(2, timeout=60)

    def _start(self, args: List[str], log: Path) -> None:
        with open(log, "w") as f:
            self.procs.append(subprocess.Popen(
                ["nice", "-n", "10", sys.executable, "-m", "distributed.cli.dask_" + args[0],
                 *args[1:]], env=ENV, stdout=f, stderr=subprocess.STDOUT,
                stdin=subprocess.DEVNULL, cwd=str(REPO)))

    def pids(self) -> Dict[str, int]:
        return self.client.run(os.getpid)

    def close(self) -> None:
        self.client.close()
        stop_processes(self.procs)


@pytest.fixture
def dask_cluster(request: pytest.FixtureRequest) -> Iterator[DaskCluster]:
    c = DaskCluster(OUT / f"dask-logs-{request.node.name}")
    try:
        yield c
    finally:
        c.close()


def test_jobs_1_jobs_2_and_dask_give_identical_summaries(
        reference: List[Dict[str, Any]], dask_cluster: DaskCluster) -> None:
    cmd, out2 = _cmd("jobs2", "--jobs", "2")
    _run(cmd)
    cmd, outd = _cmd("dask", "--dask", dask_cluster.address)
    log = _run(cmd)
    assert "2 workers, 2 threads" in log
    assert _figures(out2) == reference
    assert _figures(outd) == reference
    meta = _meta(outd)
    assert meta["executor"]["kind"] == "dask" and meta["executor"]["workers"] == 2
    workers = set(dask_cluster.pids())
    assert {w["worker"] for w in meta["case_where"].values()} <= workers
    assert _case_dirs(outd) == CASES


def _children(pid: int) -> List[int]:
    kids = []
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            fields = stat.read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue
        if int(fields[1]) == pid:
            kids.append(int(stat.parent.name))
    return kids


def _alive(pid: int) -> bool:
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except OSError:
        return False
    return state != "Z"


def _wait(what: str, cond: Any, timeout: float) -> Any:
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        got = cond()
        if got:
            return got
        time.sleep(0.1)
    pytest.fail(f"waited {timeout:g} s for {what}")


def test_a_worker_killed_mid_case_reruns_it_elsewhere(
        reference: List[Dict[str, Any]], dask_cluster: DaskCluster) -> None:
    pids = dask_cluster.pids()
    cmd, out = _cmd("dask-kill", "--dask", dask_cluster.address)
    client = subprocess.Popen(cmd, env=ENV, cwd=str(REPO), stdout=subprocess.PIPE,
                              stderr=subprocess.STDOUT, text=True)
    try:
        def busy() -> Optional[Tuple[str, str]]:
            for worker, keys in dask_cluster.client.processing().items():
                for k in keys:
                    if str(k).startswith("case-") and _children(pids[worker]):
                        return worker, str(k)
            return None
        victim, key = _wait("a case to start on a worker", busy, 120)
        time.sleep(1.5)                 # in the middle of the case (6 simulated s, ~5 s wall)
        assert key in [str(k) for k in dask_cluster.client.processing().get(victim, [])], \
            "the case ended before the worker could be killed"
        instances = _children(pids[victim])
        os.kill(pids[victim], signal.SIGKILL)
        output, _ = client.communicate(timeout=RUN_TIMEOUT_S)
    finally:
        if client.poll() is None:
            client.kill()
    print(output[-4000:])
    assert client.returncode == 0, output[-2000:]
    case = key.split("-", 1)[1].rsplit("-", 1)[0]
    where = _meta(out)["case_where"]
    assert where[case]["worker"] != victim, where
    assert _figures(out) == reference            # nothing lost, nothing counted twice
    assert _case_dirs(out) == CASES
    # the killed attempt's umlrun got SIGTERM with its worker and stopped its instance
    _wait("the killed attempt's instance to stop", lambda: not any(map(_alive, instances)), 30)


def test_an_interrupted_run_resumes_with_only_the_missing_case(
        reference: List[Dict[str, Any]]) -> None:
    cmd, out = _cmd("resume", "--jobs", "1")
    client = subprocess.Popen(cmd, env=ENV, cwd=str(REPO), stdout=subprocess.DEVNULL,
                              stderr=subprocess.DEVNULL)
    try:
        _wait("the first case's result", lambda: (out / CASES[0] / "result.json").exists(), 300)
        os.kill(client.pid, signal.SIGKILL)     # the client dies; its instance with it
        client.wait(timeout=30)
    finally:
        if client.poll() is None:
            client.kill()
    assert not (out / CASES[1] / "result.json").exists(), "the run ended before it was killed"
    first = json.loads((out / CASES[0] / "where.json").read_text())
    assert first["pid"] == client.pid
    log = _run([sys.executable, "-m", "synctcp_testbed.cli", "run", "--resume", str(out),
                "--jobs", "2", "--no-report"])
    assert "1 done before, 1 to run" in log
    meta = _meta(out)
    assert meta["resumed"][-1]["ran"] == [CASES[1]]
    assert json.loads((out / CASES[0] / "where.json").read_text()) == first   # not rerun
    assert _figures(out) == reference
    assert _case_dirs(out) == CASES


# --- Slurm -------------------------------------------------------------------

SLURM_PROGRAMS = ("munged", "munge", "slurmctld", "slurmd", "sbatch", "squeue", "scancel",
                  "sinfo")


class Slurm:
    """munged, slurmctld and slurmd of a one-node cluster, configured in ``root``."""

    def __init__(self, root: Path) -> None:
        self.root = root
        self.procs: List[subprocess.Popen] = []
        munge = root / "munge"
        munge.mkdir(mode=0o711)
        (root / "state").mkdir()
        (root / "spool").mkdir()
        key = munge / "munge.key"
        key.write_bytes(os.urandom(1024))
        key.chmod(0o600)
        self.socket = munge / "munge.sock"
        self._start("munged", ["munged", "-F", "-f", f"--socket={self.socket}",
                               f"--key-file={key}", f"--pid-file={munge}/munged.pid",
                               f"--log-file={munge}/munged.log", f"--seed-file={munge}/seed"])
        _wait("munged's socket", self.socket.exists, 20)
        host = socket.gethostname().split(".")[0]
        user = pwd.getpwuid(os.geteuid()).pw_name     # root or not: its own jobs only
        self.conf = root / "slurm.conf"
        self.conf.write_text(f"""\
ClusterName=synctcptest
SlurmctldHost={host}(127.0.0.1)
SlurmUser={user}
SlurmdUser={user}
SlurmctldPort={_free_port()}
SlurmdPort={_free_port()}
AuthType=auth/munge
AuthInfo=socket={self.socket}
CredType=cred/munge
StateSaveLocation={root}/state
SlurmdSpoolDir={root}/spool
SlurmctldPidFile={root}/slurmctld.pid
SlurmdPidFile={root}/slurmd.pid
SlurmctldLogFile={root}/slurmctld.log
SlurmdLogFile={root}/slurmd.log
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
SelectType=select/cons_tres
SelectTypeParameters=CR_Core_Memory
JobAcctGatherType=jobacct_gather/none
AccountingStorageType=accounting_storage/none
MpiDefault=none
ReturnToService=2
NodeName={host} NodeAddr=127.0.0.1 CPUs={os.cpu_count() or 1} RealMemory=4000 State=UNKNOWN
PartitionName=synctcp Nodes=ALL Default=YES MaxTime=INFINITE State=UP
""")
        self.env = dict(ENV, SLURM_CONF=str(self.conf))
        self._start("slurmctld", ["slurmctld", "-D", "-f", str(self.conf)])
        self._start("slurmd", ["slurmd", "-D", "-f", str(self.conf)])

        def idle() -> bool:
            res = subprocess.run(["sinfo", "-h", "-o", "%T"], env=self.env, capture_output=True,
                                 text=True, timeout=10)
            return res.stdout.strip() == "idle"
        end = time.monotonic() + 60
        while not idle():
            if time.monotonic() > end:
                self.close()
                pytest.fail(f"the one-node Slurm did not come up in 60 s:\n{self.logs()}")
            time.sleep(0.5)

    def _start(self, name: str, cmd: List[str]) -> None:
        with open(self.root / f"{name}.out", "w") as f:
            self.procs.append(subprocess.Popen(cmd, stdout=f, stderr=subprocess.STDOUT,
                                               stdin=subprocess.DEVNULL, env=ENV))

    def logs(self) -> str:
        tails = []
        for f in sorted(self.root.glob("*.out")) + sorted(self.root.glob("*.log")):
            tails.append(f"--- {f.name}\n" + "\n".join(
                f.read_text(errors="replace").splitlines()[-8:]))
        return "\n".join(tails)

    def close(self) -> None:
        subprocess.run(["scancel", "--user", str(os.geteuid())], env=self.env, capture_output=True,
                       timeout=30)
        stop_processes(self.procs)


@pytest.fixture
def slurm() -> Iterator[Slurm]:
    missing = [p for p in SLURM_PROGRAMS if shutil.which(p) is None]
    if missing:
        pytest.skip(f"no {', '.join(missing)} on this host: Debian's slurm-wlm and munge "
                    f"packages (make setup installs them)")
    root = Path(tempfile.mkdtemp(prefix="synctcp-slurm-"))
    root.chmod(0o755)
    s = Slurm(root)
    try:
        yield s
    finally:
        s.close()
        shutil.rmtree(root, ignore_errors=True)


def test_a_two_case_scenario_runs_through_slurm(reference: List[Dict[str, Any]],
                                                 slurm: Slurm) -> None:
    cmd, out = _cmd("slurm", "--slurm", "--slurm-partition", "synctcp", "--slurm-cores", "1",
                    "--slurm-jobs", "2", "--slurm-memory", "1GB",
                    "--slurm-walltime", "00:15:00")
    log = _run(cmd, env=slurm.env)
    assert "Slurm: 2 workers, 2 threads" in log
    meta = _meta(out)
    assert meta["executor"]["kind"] == "slurm" and meta["executor"]["workers"] == 2
    assert meta["executor"]["slurm"]["partition"] == "synctcp"
    print(f"where the cases ran: {json.dumps(meta['case_where'])}")
    assert _figures(out) == reference
    assert _case_dirs(out) == CASES
    # the client's exit cancelled the Slurm jobs of its workers
    _wait("the worker jobs to leave the queue", lambda: subprocess.run(
        ["squeue", "-h"], env=slurm.env, capture_output=True, text=True,
        timeout=10).stdout.strip() == "", 60)
