"""Repetitions: means, Student-t intervals, paired ratios (synctcp_testbed.analysis.stats)."""

from __future__ import annotations

import math
from typing import Any, Dict, List

import pytest

from synctcp_testbed.analysis import stats
from synctcp_testbed.scenario import ScenarioError, from_dict, load, updated


def test_t_quantiles_are_students() -> None:
    # the textbook table: t(0.975) for 1, 4, 9, 29 degrees of freedom
    for df, t in ((1, 12.706), (4, 2.776), (9, 2.262), (29, 2.045)):
        assert stats.t_quantile(df) == pytest.approx(t, abs=1e-3)
    with pytest.raises(ValueError):
        stats.t_quantile(0)


def test_mean_ci_of_five_values() -> None:
    e = stats.mean_ci([1.0, 2.0, 3.0, 4.0, 5.0])
    # s = sqrt(2.5); half-width t(4) * s / sqrt(5)
    assert e.mean == 3.0 and e.n == 5
    assert e.ci == pytest.approx(2.7764451 * math.sqrt(2.5) / math.sqrt(5), rel=1e-6)
    assert e.lo == pytest.approx(3.0 - e.ci) and e.hi == pytest.approx(3.0 + e.ci)
    assert e.text(1) == f"3.0 \u00b1 {e.ci:.1f}"


def test_mean_ci_edges() -> None:
    one = stats.mean_ci([7.5])
    assert (one.mean, one.ci, one.n, one.lo) == (7.5, None, 1, None)
    assert one.text() == "7.50"
    assert stats.mean_ci([2.0, 2.0, 2.0]).ci == 0.0
    assert stats.mean_ci([1.0, None, float("nan"), 3.0]).n == 2     # type: ignore[list-item]
    with pytest.raises(ValueError):
        stats.mean_ci([])


def _case(cc: str, seed: int, goodput: float, queue: float, aqm: str = "droptail",
          point: Any = None) -> Dict[str, Any]:
    return {"id": f"{cc}-{aqm}-s{seed}", "group": f"{cc}-{aqm}", "cc": cc, "aqm": aqm,
            "seed": seed, "point": point or {}, "goodput_mbit": goodput, "retransmits": 3,
            "bottlenecks": [{"link": "lr", "utilization": goodput / 10, "drop_pct": 1.0,
                             "mean_pkts": queue, "mean_delay_ms": queue}],
            "flows": [{"group": "fwd", "goodput_mbit": goodput / 2},
                      {"group": "fwd", "goodput_mbit": goodput / 2}]}


def test_groups_pair_ratios_by_seed() -> None:
    cases = [_case("reno", 1, 8.0, 40.0), _case("sync", 1, 8.0, 20.0),
             _case("reno", 2, 10.0, 80.0), _case("sync", 2, 5.0, 20.0)]
    gs = {g["group"]: g for g in stats.groups(cases)}
    sync = gs["sync-droptail"]
    assert sync["n"] == 2 and sync["seeds"] == [1, 2]
    assert sync["metrics"]["goodput_mbit"]["mean"] == 6.5
    assert sync["metrics"]["jain"]["mean"] == pytest.approx(1.0)
    r = sync["ratios"]["reno"]
    # per seed: 8/8 = 1 and 5/10 = 0.5 (not 6.5/9, the ratio of the means)
    assert r["goodput_mbit"]["mean"] == pytest.approx(0.75)
    assert r["goodput_mbit"]["ci"] == pytest.approx(12.7062 * 0.25 / 1, rel=1e-4)
    assert r["lr.mean_pkts"]["mean"] == pytest.approx((0.5 + 0.25) / 2)
    assert "cubic" not in sync["ratios"]
    assert gs["reno-droptail"]["ratios"]["reno"]["goodput_mbit"] == {"mean": 1.0, "ci": 0.0, "n": 2}


def test_ratios_only_at_the_same_queue_point_and_seed() -> None:
    cases = [_case("reno", 1, 8.0, 40.0, aqm="red"), _case("sync", 1, 8.0, 20.0),
             _case("reno", 1, 4.0, 40.0, point={"rate_mbit": 5}),
             _case("reno", 3, 4.0, 40.0), _case("sync", 2, 6.0, 10.0)]
    sync = next(g for g in stats.groups(cases) if g["group"] == "sync-droptail")
    assert sync["ratios"] == {}         # reno droptail at {} ran only seed 3


def test_zero_reference_gives_no_ratio() -> None:
    cases = [_case("reno", 1, 8.0, 0.0), _case("sync", 1, 8.0, 20.0)]
    sync = next(g for g in stats.groups(cases) if g["group"] == "sync-droptail")
    assert "lr.mean_pkts" not in sync["ratios"]["reno"]
    assert sync["ratios"]["reno"]["goodput_mbit"]["mean"] == 1.0


def test_the_reference_case_is_the_same_queue_point_and_seed() -> None:
    cases = [_case("reno", 1, 8.0, 40.0, aqm="red"), _case("reno", 2, 6.0, 30.0),
             _case("reno", 1, 4.0, 40.0, point={"rate_mbit": 5}), _case("reno", 1, 5.0, 50.0),
             _case("sync", 1, 4.0, 10.0)]
    sync = cases[-1]
    assert stats.reference(cases, sync, "reno") is cases[3]
    assert stats.reference(cases, sync, "cubic") is None
    assert stats.ratio_to(cases, sync, "reno", "goodput_mbit") == pytest.approx(0.8)
    assert stats.ratio_to(cases, sync, "reno", "lr.mean_pkts") == pytest.approx(0.2)
    assert stats.ratio_to(cases, sync, "reno", "lr.nope") is None
    assert stats.ratio_to(cases, sync, "cubic", "goodput_mbit") is None
    assert stats.ratio(1.0, 0.0) is None and stats.ratio(None, 1.0) is None
    assert stats.ratio(float("nan"), 1.0) is None and stats.ratio(3, 2) == 1.5


def test_summary_table_report_and_groups_give_one_ratio(tmp_path: Any,
                                                        capsys: pytest.CaptureFixture) -> None:
    """The one paired-ratio helper: every table of a run shows the same ratio to Reno."""
    import json

    from synctcp_testbed import cli
    from synctcp_testbed.analysis import report
    from synctcp_testbed.analysis.rundir import load_run

    cases = [_case("reno", 1, 8.0, 40.0), _case("sync", 1, 6.0, 10.0),
             _case("cubic", 1, 9.0, 60.0)]
    for c in cases:
        c["bottlenecks"][0]["mark_pct"] = 0.0
    (tmp_path / "meta.json").write_text(json.dumps({"schema": 1, "scenario_name": "t"}))
    (tmp_path / "summary.json").write_text(json.dumps(
        {"schema": 1, "scenario": "t", "repeat": 1, "cases": cases,
         "groups": stats.groups(cases)}))
    run = load_run(tmp_path)
    sync = run.case("sync-droptail-s1")
    assert sync is not None
    want = [6.0 / 8.0, 10.0 / 40.0, 1.0]
    assert report.ratios(run, sync.summary, "reno", "lr") == pytest.approx(want)
    g = next(g for g in stats.groups(cases) if g["cc"] == "sync")["ratios"]["reno"]
    assert [g["goodput_mbit"]["mean"], g["lr.mean_pkts"]["mean"], g["lr.drop_pct"]["mean"]] \
        == pytest.approx(want)
    cli.print_summary(tmp_path)
    row = next(ln for ln in capsys.readouterr().out.splitlines() if "sync-" in ln)
    assert "0.75" in row and "0.25" in row


def test_minority_share() -> None:
    c = _case("vegas", 1, 10.0, 5.0)
    c["flows"] = [{"group": "minority", "goodput_mbit": 1.0}] + [
        {"group": "fwd", "goodput_mbit": 3.0}] * 3
    assert stats.case_metrics(c)["minority_share"] == pytest.approx(0.4)


def test_repeat_expands_cases_with_their_seeds() -> None:
    sc = updated(load("reverse-path-10"), "t", repeat=3, seed=7)
    sc.validate()
    cases = sc.cases(["reno", "sync"])
    assert len(cases) == 2 * 2 * 3
    assert [c.seed for c in cases[:4]] == [7, 7, 7, 7]
    assert cases[0].id == "reno-droptail-revoff-s7" and cases[0].group == "reno-droptail-revoff"
    assert {c.seed for c in cases} == {7, 8, 9}
    assert len({c.id for c in cases}) == len(cases)
    one = load("reverse-path-10").cases(["reno"])
    assert one[0].id == one[0].group == "reno-droptail-revoff" and one[0].seed == 1


def test_repeat_key_is_validated() -> None:
    base = {"name": "x", "topology": {"rtts_ms": [40]}}
    for bad, word in ((0, "from 1 to 1000"), (1.5, "whole number"), ("5", "whole number")):
        with pytest.raises(ScenarioError, match=f"repeat must be .*{word}"):
            from_dict({**base, "repeat": bad}, where="x.toml")
    with pytest.raises(ScenarioError, match="seed \\+ repeat - 1 must be at most"):
        from_dict({**base, "repeat": 3, "seed": 2**31 - 2}, where="x.toml")
    with pytest.raises(ScenarioError, match="start_jitter_s must be a number"):
        from_dict({**base, "traffic": {"start_jitter_s": "1s"}}, where="x.toml")


def test_start_jitter_comes_from_the_seed() -> None:
    from synctcp_testbed.plan.flows import plan_case

    class Topo:
        def addr(self, node: str) -> str:
            return "10.0.0.1"

    def starts(seed: int, jitter: float) -> List[float]:
        sc = from_dict({"name": "j", "cc": ["reno"], "seed": seed,
                        "topology": {"rtts_ms": [40, 40, 40]},
                        "traffic": {"start_jitter_s": jitter, "stagger_s": 2}})
        return [f.start_s for f in plan_case(sc.cases()[0], Topo()).flows]  # type: ignore[arg-type]

    a, b = starts(1, 1.0), starts(2, 1.0)
    assert a == starts(1, 1.0) and a != b
    for k, s in enumerate(a):
        assert 2 * k <= s < 2 * k + 1.0
    assert starts(1, 0.0) == [0.0, 2.0, 4.0]
