"""The case executor and the worker's plan, without a kernel (CaseRun replaced)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any, Dict, List

import pytest

from synctcp_testbed.platform import executor
from synctcp_testbed.case.errors import RunError
from synctcp_testbed.plan import planfile
from synctcp_testbed.platform import run, vm
from synctcp_testbed.platform import worker
from synctcp_testbed.platform.choose import Platform
from synctcp_testbed.scenario import ScenarioError, load


def test_the_plan_gives_the_worker_the_same_cases(tmp_path: Path) -> None:
    sc = load("gu-smallbuffer")
    planfile.write_plan(tmp_path, sc.as_dict(), ["etcp", "reno"], None)
    got = planfile.plan_cases(planfile.load_plan(tmp_path))
    want = sc.cases(["etcp", "reno"], None)
    assert [c.id for c in got] == [c.id for c in want]
    assert [c.queue_limit for c in got] == [c.queue_limit for c in want]
    assert got[3].scenario == want[3].scenario


def test_worker_refuses_an_unknown_case_and_a_missing_plan(tmp_path: Path,
                                                          capsys: pytest.CaptureFixture) -> None:
    assert worker.main([str(tmp_path), "reno-droptail"]) == 2
    assert "plan.json" in capsys.readouterr().err
    planfile.write_plan(tmp_path, load("gu-smallbuffer").as_dict(), None, None)
    assert worker.main([str(tmp_path), "nope"]) == 2
    assert "no case nope" in capsys.readouterr().err


class FakeRun:
    """CaseRun that fails for reno and returns the case id otherwise."""

    def __init__(self, case: Any, cdir: Path, **kw: Any) -> None:
        self.case, self.dir = case, cdir

    def run(self) -> Dict[str, Any]:
        self.dir.mkdir(parents=True, exist_ok=True)
        if self.case.cc == "reno":
            raise RunError("no reno today")
        return {"id": self.case.id, "cc": self.case.cc, "aqm": self.case.aqm,
                "point": self.case.point, "goodput_mbit": 1.0}


def test_here_runs_every_case_in_order_and_reports_each_failure(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(run, "CaseRun", FakeRun)
    cases = load("gu-smallbuffer").cases(["etcp", "reno"])
    seen: List[int] = []

    def here(case: Any, cdir: Path) -> Dict[str, Any]:
        # the wrapper run_scenario hands the executor, around the fake CaseRun
        return run.run_here(case, cdir, log=lambda m: None)

    results, failed = executor.execute(Platform("native", "t", here=True), cases, tmp_path, 1,
                                       log=lambda m: None, progress=lambda: seen.append(1),
                                       run_here=here)
    assert [r["id"] for r in results] == [c.id for c in cases if c.cc != "reno"]
    assert [f[0] for f in failed] == [c.id for c in cases if c.cc == "reno"]
    assert all(why == "no reno today" for _, why in failed)
    assert len(seen) == len(cases)
    ok = next(c for c in cases if c.cc == "etcp")
    assert json.loads((tmp_path / ok.id / "result.json").read_text())["id"] == ok.id


def test_run_scenario_writes_what_ran_and_raises_naming_the_failures(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(run, "CaseRun", FakeRun)
    monkeypatch.setenv("SYNCTCP_IN_VM", "1")
    monkeypatch.setenv("SYNCTCP_PLATFORM", "uml")
    monkeypatch.setattr(run, "prepare", lambda plat, log: {})
    loaded: List[str] = []
    monkeypatch.setattr(run, "ensure_cc", loaded.append)
    sc = load("gu-smallbuffer")
    with pytest.raises(RunError, match="reno-droptail-rate10: no reno today"):
        run.run_scenario(sc, tmp_path, ["etcp", "reno"], log=lambda m: None)
    meta = json.loads((tmp_path / "meta.json").read_text())
    assert meta["platform"] == "uml" and meta["platform_choice"] == "inside an instance"
    assert meta["time_mode"].startswith("simulated") and meta["wall_cost"]["wall_s"] >= 0
    cases = json.loads((tmp_path / "summary.json").read_text())["cases"]
    assert {c["cc"] for c in cases} == {"etcp", "cubic"}
    assert loaded == ["cubic", "etcp", "reno"]     # every algorithm, before any case ran


def test_run_scenario_refuses_parallel_real_time_cases(tmp_path: Path,
                                                       monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("SYNCTCP_IN_VM", raising=False)
    with pytest.raises(RunError, match="parallel cases need the uml platform"):
        run.run_scenario(load("gu-smallbuffer"), tmp_path, platform="tcg", jobs=2)
    with pytest.raises(ScenarioError):
        planfile.plan_cases({"scenario": {"name": "x", "duration_s": -1}})


def test_no_case_starts_no_instance(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(vm.subprocess, "run",
                        lambda *a, **kw: pytest.fail("an instance was started"))
    assert executor.execute(Platform("tcg", "t"), [], tmp_path, 1, log=lambda m: None) == ([], [])
