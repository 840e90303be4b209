"""Cases as tasks (--jobs, --dask, --slurm) and --resume, without a kernel.

The UML instance is replaced by a function that writes what a worker would
(result.json from the plan's case); what is tested is the bookkeeping
around it: a case directory put in place whole and once, the same summary
from local jobs and from a Dask cluster, resume running only what is
missing, and one line of error for what does not go together.
"""

from __future__ import annotations

import io
import json
import tarfile
from pathlib import Path
from typing import Any, Dict, List

import pytest

from synctcp_testbed import cli
from synctcp_testbed.platform import executor
from synctcp_testbed.case.errors import RunError
from synctcp_testbed.plan import planfile
from synctcp_testbed.platform import prepare, run, uml
from synctcp_testbed.platform.cluster import DaskPool, slurm_options
from synctcp_testbed.platform.choose import Platform, PlatformError
from synctcp_testbed.scenario import load


def fake_uml_case(case_id: str, rundir: Path, seed: int, capture: bool, backend: str) -> None:
    """What a worker in an instance leaves: result.json of the plan's case, a log."""
    case = next(c for c in planfile.plan_cases(planfile.load_plan(rundir)) if c.id == case_id)
    cdir = rundir / case_id
    cdir.mkdir(parents=True, exist_ok=True)
    (cdir / "case.log").write_text(f"{case_id} seed {seed}\n")
    (cdir / "result.json").write_text(json.dumps(
        {"id": case.id, "cc": case.cc, "aqm": case.aqm, "point": case.point,
         "goodput_mbit": len(case.id) + seed, "bottlenecks": []}))


@pytest.fixture
def fake_instances(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    stage = tmp_path / "stage-home"
    monkeypatch.setattr(uml, "_uml_case", fake_uml_case)
    monkeypatch.setattr(uml, "stage_home", lambda: stage)
    monkeypatch.setitem(prepare._PREPARED, "uml", True)
    return stage


def _run_uml(out: Path, pool: Any) -> List[Dict[str, Any]]:
    sc = load("gu-smallbuffer")
    cases = sc.cases(["etcp", "reno"])
    out.mkdir()
    planfile.write_plan(out, sc.as_dict(), ["etcp", "reno"], None)
    results, failed = executor.execute(Platform("uml", "t"), cases, out, 2,
                                       log=lambda m: None, pool=pool)
    assert failed == []
    return results


def test_local_jobs_and_a_dask_cluster_assemble_the_same_results(
        tmp_path: Path, fake_instances: Path) -> None:
    from distributed import LocalCluster

    local = _run_uml(tmp_path / "local", uml.LocalPool(2))
    with LocalCluster(n_workers=2, threads_per_worker=1, processes=False,
                      dashboard_address=":0") as lc:
        with DaskPool(address=lc.scheduler_address) as pool:
            assert pool.describe().endswith("2 workers, 2 threads")
            dask = _run_uml(tmp_path / "dask", pool)
    assert dask == local and len(local) == 15
    for out in ("local", "dask"):
        ids = sorted(p.name for p in (tmp_path / out).iterdir() if p.is_dir())
        assert ids == sorted(r["id"] for r in local)        # no staging left, nothing twice
    where = json.loads((tmp_path / "dask" / local[0]["id"] / "where.json").read_text())
    assert where["worker"].startswith(("tcp://", "inproc://")) and where["wall_s"] >= 0
    assert json.loads((tmp_path / "local" / local[0]["id"] / "where.json").read_text())[
        "worker"] == "local"
    assert list(fake_instances.iterdir()) == []             # every staging directory removed


def test_a_shared_dir_carries_the_cases(tmp_path: Path, fake_instances: Path) -> None:
    from distributed import LocalCluster

    shared = tmp_path / "shared"
    shared.mkdir()
    with LocalCluster(n_workers=1, threads_per_worker=2, processes=False,
                      dashboard_address=":0") as lc:
        with DaskPool(address=lc.scheduler_address, shared_dir=shared) as pool:
            got = _run_uml(tmp_path / "out", pool)
    assert len(got) == 15 and list(shared.iterdir()) == []


def _tar(files: Dict[str, str]) -> bytes:
    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode="w:gz") as tar:
        for name, text in files.items():
            data = text.encode()
            info = tarfile.TarInfo(name)
            info.size = len(data)
            tar.addfile(info, io.BytesIO(data))
    return buf.getvalue()


def test_install_replaces_a_half_written_case_whole(tmp_path: Path) -> None:
    old = tmp_path / "reno-droptail"
    old.mkdir()
    (old / "error.txt").write_text("interrupted\n")
    (old / "queue-lr.csv").write_text("half")
    uml.install_case(tmp_path, {"case": "reno-droptail", "where": {"worker": "w1"},
                                     "tar": _tar({"./result.json": "{}", "./case.log": "ok"})})
    assert sorted(p.name for p in old.iterdir()) == ["case.log", "result.json", "where.json"]
    assert json.loads((old / "where.json").read_text()) == {"worker": "w1"}
    assert list((tmp_path / uml.STAGE).iterdir()) == []


def test_a_case_whose_task_failed_is_reported_not_lost(tmp_path: Path,
                                                       fake_instances: Path) -> None:
    class Broken(uml.LocalPool):
        def run(self, calls: Any) -> Any:
            for i, call in enumerate(calls):
                yield (i, None, "KilledWorker: twice") if i == 1 else \
                    (i, uml.case_task(*call), None)

    sc = load("gu-smallbuffer")
    cases = sc.cases(["reno"])[:2]
    planfile.write_plan(tmp_path, sc.as_dict(), ["reno"], None)
    (tmp_path / cases[1].id).mkdir()
    (tmp_path / cases[1].id / "result.json").write_text("{}")      # an older attempt's
    results, failed = executor.execute(Platform("uml", "t"), cases, tmp_path, 1,
                                       log=lambda m: None, pool=Broken(1))
    assert [r["id"] for r in results] == [cases[0].id]
    assert failed == [(cases[1].id, "KilledWorker: twice")]
    assert not (tmp_path / cases[1].id / "result.json").exists()


class FakeRun:
    """CaseRun that fails for reno while ``FakeRun.fail`` says so."""

    fail = True
    ran: List[str] = []

    def __init__(self, case: Any, cdir: Path, **kw: Any) -> None:
        self.case, self.dir = case, cdir

    def run(self) -> Dict[str, Any]:
        FakeRun.ran.append(self.case.id)
        self.dir.mkdir(parents=True, exist_ok=True)
        if self.case.cc == "reno" and FakeRun.fail:
            raise RunError("interrupted")
        return {"id": self.case.id, "cc": self.case.cc, "aqm": self.case.aqm,
                "point": self.case.point, "goodput_mbit": 1.0}


def test_resume_runs_only_the_missing_cases(tmp_path: Path,
                                            monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(run, "CaseRun", FakeRun)
    monkeypatch.setenv("SYNCTCP_IN_VM", "1")
    monkeypatch.setenv("SYNCTCP_PLATFORM", "uml")
    monkeypatch.setattr(run, "prepare", lambda plat, log: {})
    monkeypatch.setattr(run, "ensure_cc", lambda cc: None)
    sc = load("gu-smallbuffer")
    FakeRun.ran = []
    with pytest.raises(RunError):
        run.run_scenario(sc, tmp_path, ["etcp", "reno"], log=lambda m: None)
    cases = [c.id for c in sc.cases(["etcp", "reno"])]
    missing = [c for c in cases if c.startswith("reno")]
    assert FakeRun.ran == cases
    FakeRun.ran, FakeRun.fail = [], False
    try:
        run.run_scenario(sc, tmp_path, ["etcp", "reno"], log=lambda m: None, resume=True)
    finally:
        FakeRun.fail = True
    assert FakeRun.ran == missing
    summary = json.loads((tmp_path / "summary.json").read_text())
    assert [c["id"] for c in summary["cases"]] == cases
    meta = json.loads((tmp_path / "meta.json").read_text())
    assert meta["resumed"][-1]["ran"] == missing


@pytest.mark.parametrize("argv, says", [
    (["run"], "a scenario (preset name or .toml path), or --resume RUNDIR"),
    (["run", "gu-smallbuffer", "--resume", "x"], "not both"),
    (["run", "--resume", "/nonexistent/run"], "no such run directory"),
    (["run", "gu-smallbuffer", "--jobs", "2", "--dask", "tcp://127.0.0.1:1"],
     "--jobs and --dask"),
    (["run", "gu-smallbuffer", "--dask", "tcp://x:1", "--slurm"], "one cluster at a time"),
    (["run", "gu-smallbuffer", "--slurm-cores", "2"], "--slurm-cores without --slurm"),
    (["run", "gu-smallbuffer", "--shared-dir", "/tmp"], "--shared-dir is for --dask"),
    (["run", "gu-smallbuffer", "--dask", "tcp://x:1", "--shared-dir", "/nonexistent"],
     "not a directory"),
    (["run", "gu-smallbuffer", "--platform", "tcg", "--dask", "tcp://127.0.0.1:1"],
     "uml platform (simulated time) only, not on tcg"),
])
def test_what_does_not_go_together_is_one_line_and_exit_2(
        argv: List[str], says: str, capsys: pytest.CaptureFixture,
        monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("SYNCTCP_IN_VM", raising=False)
    assert cli.main(argv) == 2
    err = capsys.readouterr().err.strip()
    assert says in err and len(err.splitlines()) == 1, err


def test_resume_refuses_to_change_the_plan(tmp_path: Path, capsys: pytest.CaptureFixture) -> None:
    assert cli.main(["run", "--resume", str(tmp_path), "--duration", "5"]) == 2
    assert "--duration cannot change them" in capsys.readouterr().err
    assert cli.main(["run", "--resume", str(tmp_path)]) == 2
    assert "plan.json" in capsys.readouterr().err


def test_slurm_options_come_from_a_file_and_the_command_line(tmp_path: Path) -> None:
    conf = tmp_path / "slurm.toml"
    conf.write_text('partition = "big"\ncores = 4\nmemory = "8GB"\njobs = 3\n')
    o = slurm_options(str(conf), cores=2, walltime=None)
    assert (o.partition, o.cores, o.memory, o.jobs, o.walltime) == ("big", 2, "8GB", 3,
                                                                    "01:00:00")
    conf.write_text('partiton = "big"\n')
    with pytest.raises(PlatformError, match="unknown key partiton"):
        slurm_options(str(conf))
    with pytest.raises(PlatformError, match="HH:MM:SS"):
        slurm_options(None, walltime="an hour")
    with pytest.raises(PlatformError, match="not a size"):
        slurm_options(None, memory="lots")
    with pytest.raises(PlatformError, match="at least 1"):
        slurm_options(None, jobs=0)
    with pytest.raises(PlatformError, match="nonexistent"):
        slurm_options(str(tmp_path / "nonexistent.toml"))


def test_an_unreachable_scheduler_is_one_line(monkeypatch: pytest.MonkeyPatch) -> None:
    from synctcp_testbed.platform import cluster

    monkeypatch.setattr(cluster, "CONNECT_TIMEOUT_S", 1.0)
    with pytest.raises(PlatformError, match="no scheduler answers there") as exc:
        with DaskPool(address="tcp://127.0.0.1:9"):
            pass
    assert "\n" not in str(exc.value)


def test_slurm_without_its_commands_is_one_line(monkeypatch: pytest.MonkeyPatch,
                                               tmp_path: Path) -> None:
    monkeypatch.setenv("PATH", str(tmp_path))
    with pytest.raises(PlatformError, match="no sbatch, squeue, scancel on this host"):
        with DaskPool(slurm=slurm_options(None)):
            pass


@pytest.mark.parametrize("filtered", [True, False], ids=["data-filter", "by-hand"])
def test_a_case_archive_extracts_only_under_the_case(tmp_path: Path, filtered: bool,
                                                     monkeypatch: pytest.MonkeyPatch) -> None:
    """With tarfile's "data" filter (Python 3.11.4+) and without it (Debian
    12's 3.11.2): a plain archive extracts, one that escapes is refused."""
    if not filtered:
        monkeypatch.delattr(tarfile, "data_filter", raising=False)

    def archive(name: str) -> tarfile.TarFile:
        buf = io.BytesIO()
        with tarfile.open(fileobj=buf, mode="w:gz") as tar:
            info = tarfile.TarInfo(name)
            info.size = 2
            tar.addfile(info, io.BytesIO(b"ok"))
        return tarfile.open(fileobj=io.BytesIO(buf.getvalue()), mode="r:gz")

    dest = tmp_path / "case"
    dest.mkdir()
    with archive("uml/meta.json") as tar:
        uml._extract_case(tar, dest)
    assert (dest / "uml" / "meta.json").read_text() == "ok"
    with archive("../escaped") as tar, pytest.raises(Exception) as err:
        uml._extract_case(tar, dest)
    assert not (tmp_path / "escaped").exists()
    if not filtered:
        assert isinstance(err.value, tarfile.TarError) and "../escaped" in str(err.value)
