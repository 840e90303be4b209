"""The ledger: claims, checks and verdicts from run directories (synctcp_testbed.analysis.ledger)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any, Dict, List

import pytest

from synctcp_testbed.analysis import ledger
from synctcp_testbed.analysis.ledger.markdown import provenance
from synctcp_testbed.analysis.ledger.plots import pooled_rt_hist, rt_curve
from synctcp_testbed.cli import main as cli_main


def _rundir(path: Path, scenario: str, cases: List[Dict[str, Any]]) -> Path:
    path.mkdir(parents=True)
    (path / "meta.json").write_text(json.dumps({
        "schema": 1, "scenario_name": scenario, "platform": "uml", "kernel": "7.2.13-uml",
        "git": "abc1234", "started_utc": "2026-11-25T00:00:00Z",
        "wall_cost": {"wall_s": 10.0, "instance_wall_s": 18.0, "simulated_s": 90.0}}))
    (path / "summary.json").write_text(json.dumps({"schema": 1, "scenario": scenario,
                                                   "cases": cases}))
    return path


def _ftp_case(cc: str, seed: int, util: float, drop: float, queue: float) -> Dict[str, Any]:
    return {"id": f"{cc}-droptail-s{seed}", "group": f"{cc}-droptail", "cc": cc,
            "aqm": "droptail", "seed": seed, "point": {}, "goodput_mbit": 9.0 * util,
            "bottlenecks": [{"link": "r0r1", "rate_mbit": 10, "utilization": util,
                             "drop_pct": drop, "mean_pkts": queue}]}


def _ftp(tmp_path: Path, sync_queue: float, sync_util: float) -> Path:
    cases = []
    for seed, jitter in ((1, 0.0), (2, 0.5), (3, -0.5)):
        cases += [_ftp_case("reno", seed, 0.95, 5.0 + jitter, 50.0 + jitter),
                  _ftp_case("sync", seed, sync_util, 0.5 + jitter / 10, sync_queue + jitter),
                  _ftp_case("mixreact", seed, 0.93, 1.0, 35.0)]
    return _rundir(tmp_path / "ftp", "weigle-ftp-full", cases)


def _section(sections: List[ledger.Section], key: str) -> ledger.Section:
    return next(s for s in sections if s.key == key)


def test_ftp_holds_when_every_check_passes(tmp_path: Path) -> None:
    run = _ftp(tmp_path, sync_queue=30.0, sync_util=0.95)
    s = _section(ledger.build([run], tmp_path / "figs"), "weigle-ftp")
    assert [c.ok for c in s.checks] == [True] * 6
    assert s.verdict == ledger.HOLDS
    assert "queue ÷ Reno 0.60 ± " in s.checks[0].got
    assert all(p.exists() for p in s.figures) and len(s.figures) == 3


def test_ftp_fails_when_one_check_fails_and_says_which(tmp_path: Path) -> None:
    # sync's queue above Reno's: its queue check fails, the rest still pass
    run = _ftp(tmp_path, sync_queue=60.0, sync_util=0.95)
    s = _section(ledger.build([run], tmp_path / "f"), "weigle-ftp")
    assert s.checks[0].ok is False and s.verdict == ledger.FAILS
    assert s.verdicts() == [("Sync-TCP(Pcwnd) [best]", ledger.FAILS, "1 of 3 fail"),
                            ("Sync-TCP(MixReact) [best]", ledger.HOLDS, "all 3 pass")]
    # utilization 3 points below Reno's: beyond the 1-point allowance
    s.checks = [c for c in s.checks if c.rule.startswith("Sync-TCP(Pcwnd)")]
    assert s.checks[2].ok is True
    run2 = _ftp(tmp_path / "b", sync_queue=60.0, sync_util=0.92)
    s2 = _section(ledger.build([run2], tmp_path / "f"), "weigle-ftp")
    pc = [c for c in s2.checks if c.rule.startswith("Sync-TCP(Pcwnd)")]
    assert [c.ok for c in pc] == [False, True, False]


def test_a_check_passes_only_when_the_whole_interval_is_past_its_bound(tmp_path: Path) -> None:
    """"At most 1 point below Reno's": a mean 0.5 point below with a spread of a few
    points is not shown (before, the interval's upper end decided, and a noisier run
    passed more easily); the same mean without the spread passes."""
    def util(noisy: bool) -> ledger.Check:
        cases = []
        for seed, dev in ((1, 3.0), (2, -3.0), (3, 1.5), (4, -1.5)):
            jitter = dev / 100 if noisy else 0.0
            cases += [_ftp_case("reno", seed, 0.95, 5.0, 50.0),
                      _ftp_case("sync", seed, 0.945 + jitter, 1.0, 30.0)]
        run = _rundir(tmp_path / f"n{noisy}", "weigle-ftp-full", cases)
        s = _section(ledger.build([run], tmp_path / "f"), "weigle-ftp")
        return next(c for c in s.checks if "utilization at most" in c.rule)

    noisy, steady = util(True), util(False)
    assert noisy.ok is False and noisy.got.startswith("util − Reno -0.50 ± ")
    assert steady.ok is True and steady.got.startswith("util − Reno -0.50 ± 0.00")


def test_two_runs_of_the_same_case_and_seed_are_refused_naming_both(
        tmp_path: Path, capsys: pytest.CaptureFixture) -> None:
    one = _ftp(tmp_path / "a", 30.0, 0.95)
    two = _ftp(tmp_path / "b", 30.0, 0.95)
    with pytest.raises(ledger.LedgerError) as err:
        ledger.build([one, two], tmp_path / "f")
    assert str(one) in str(err.value) and str(two) in str(err.value)
    assert "both hold reno at seed 1 of the same case" in str(err.value)
    out = tmp_path / "results.md"
    assert cli_main(["ledger", str(one), str(two), "--out", str(out)]) == 2
    msg = capsys.readouterr().err
    assert len(msg.strip().splitlines()) == 1 and str(one) in msg and str(two) in msg
    assert not out.exists()
    # the same directory twice is refused too; other seeds of the same case are welcome
    assert cli_main(["ledger", str(one), str(one), "--out", str(out)]) == 2
    assert "give it once" in capsys.readouterr().err
    cases = [_ftp_case(cc, seed, 0.95, 1.0 + seed / 10, 40.0 + seed) for seed in (4, 5)
             for cc in ("reno", "sync")]
    more = _rundir(tmp_path / "c" / "ftp", "weigle-ftp-full", cases)
    sections = ledger.build([one, more], tmp_path / "f")
    s = _section(sections, "weigle-ftp")
    assert "| sync | 5 |" in s.ours
    assert [s.name(r) for r in s.runs] == [str(one), str(more)]     # both are called "ftp"


def test_runs_are_named_by_their_directories(tmp_path: Path) -> None:
    a = _rundir(tmp_path / "ftp-s1-3", "weigle-ftp-full",
                [_ftp_case(cc, s, 0.95, 1.0, 40.0) for s in (1, 2, 3) for cc in ("reno", "sync")])
    b = _rundir(tmp_path / "ftp-s4-5", "weigle-ftp-full",
                [_ftp_case(cc, s, 0.95, 1.0, 40.0) for s in (4, 5) for cc in ("reno", "sync")])
    out = tmp_path / "docs" / "results.md"
    assert cli_main(["ledger", str(a), str(b), "--out", str(out)]) == 0
    text = out.read_text()
    assert "| `ftp-s1-3`, `ftp-s4-5` |" in text
    assert "- `ftp-s1-3`: scenario `weigle-ftp-full`, variant best of sync and mixreact; 6 " \
        "cases, seeds 1,2,3;" in text
    assert "- `ftp-s4-5`: scenario `weigle-ftp-full`" in text


def _with_meta(run: Path, **fields: Any) -> Path:
    meta = json.loads((run / "meta.json").read_text())
    (run / "meta.json").write_text(json.dumps({**meta, **fields}))
    return run


def test_checks_across_runs_of_different_module_builds_are_undecided(tmp_path: Path) -> None:
    """E-TCP at 10 Mbit/s from one build, at 1 Gbit/s from another: its checks
    across capacities are undecided and say how the builds differ; Reno's are
    decided (its figures do not depend on the module)."""
    def cases(rate: int) -> List[Dict[str, Any]]:
        out = []
        for seed in (1, 2):
            for cc, g in (("etcp", 0.95), ("reno", 0.9 if rate == 10 else 0.3)):
                out.append({"id": f"{cc}-droptail-flows1-s{seed}", "cc": cc, "aqm": "droptail",
                            "seed": seed, "point": {"flows_per_pair": 1},
                            "goodput_mbit": g * rate + seed * 0.01,
                            "bottlenecks": [{"link": "lr", "rate_mbit": rate, "utilization": g,
                                             "drop_pct": 1.0}]})
        return out

    old = _with_meta(_rundir(tmp_path / "gu-10", "gu-etcp-full", cases(10)),
                     kmod_tree="aaaaaaaaaaaa",
                     modules={"tcp_etcp": {"version": "0.1.0", "params": {"b": "25"}}})
    new = _with_meta(_rundir(tmp_path / "gu-1g", "gu-etcp-1g", cases(1000)),
                     kmod_tree="bbbbbbbbbbbb",
                     modules={"tcp_etcp": {"version": "0.2.0",
                                           "params": {"b": "25", "burst_segs": "1"}}})
    s = _section(ledger.build([old, new], tmp_path / "f"), "gu")
    etcp = [c for c in s.checks if c.algo == "E-TCP"]
    across = [c for c in etcp if "at every capacity (" in c.rule or "flat" in c.rule]
    assert len(across) == 2 and all(c.ok is None for c in across)
    assert [c.ok for c in etcp if c not in across] == [True]     # 1 Gbit/s alone: one build
    assert ("undecided: the runs' builds differ (modules' source: kmod/ tree aaaaaaaaaaaa (etcp "
            "in `gu-10`); kmod/ tree bbbbbbbbbbbb (etcp in `gu-1g`); tcp_etcp version: 0.1.0 "
            "(etcp in `gu-10`); 0.2.0 (etcp in `gu-1g`))") in across[0].got
    reno = next(c for c in s.checks if c.algo == "TCP Reno")
    assert reno.ok is True
    assert s.verdict == ledger.UNDECIDED
    assert ("E-TCP", ledger.UNDECIDED, "2 of 3 undecided") in s.verdicts()
    # the same source: decided
    _with_meta(new, kmod_tree="aaaaaaaaaaaa",
               modules={"tcp_etcp": {"version": "0.1.0", "params": {"b": "25"}}})
    s = _section(ledger.build([old, new], tmp_path / "f"), "gu")
    assert all(c.ok is not None for c in s.checks)
    # another kernel: every check across the runs is undecided, Reno's too
    _with_meta(new, kernel="6.1.0-uml")
    s = _section(ledger.build([old, new], tmp_path / "f"), "gu")
    reno = next(c for c in s.checks if c.algo == "TCP Reno")
    assert reno.ok is None and "kernel: 7.2.13-uml (reno in `gu-10`); 6.1.0-uml (reno in " \
        "`gu-1g`)" in reno.got


def test_a_reno_run_has_no_burst_segs(tmp_path: Path) -> None:
    def case(cc: str, g: float) -> Dict[str, Any]:
        return {"id": f"{cc}-droptail", "cc": cc, "aqm": "droptail", "seed": 1, "point": {},
                "goodput_mbit": g * 10000,
                "bottlenecks": [{"link": "lr", "rate_mbit": 10000, "utilization": g}]}

    etcp = _with_meta(_rundir(tmp_path / "gu-10g", "gu-etcp-10g", [case("etcp", 0.8)]),
                      modules={"tcp_etcp": {"version": "0.2.0", "params": {"burst_segs": "1"}}})
    reno = _with_meta(_rundir(tmp_path / "gu-10g-reno", "gu-etcp-10g", [case("reno", 0.003)]),
                      modules={})
    s = _section(ledger.build([etcp, reno], tmp_path / "f"), "gu")
    assert any(n.startswith("E-TCP paces packet by packet") for n in s.notes)
    assert not any("burst_segs differs" in n or "unset" in n for n in s.notes)
    runs = {r.path.name: r for r in s.runs}
    assert "tcp_etcp" not in provenance(runs["gu-10g-reno"])
    assert "modules tcp_etcp 0.2.0 from " in provenance(runs["gu-10g"])


def test_reverse_path_kept_is_paired_by_seed(tmp_path: Path) -> None:
    cases = []
    for seed in (1, 2, 3):
        for cc, off, on in (("reno", 9.0, 8.5), ("vegas", 9.0, 3.0), ("sync", 9.0, 8.9 - seed / 10),
                            ("mixreact", 9.0, 6.0)):
            for rev, g in ((False, off), (True, on)):
                cases.append({"id": f"{cc}-droptail-rev{'on' if rev else 'off'}-s{seed}",
                              "group": f"{cc}-droptail-rev{'on' if rev else 'off'}", "cc": cc,
                              "aqm": "droptail", "seed": seed, "point": {"bulk_rev": rev},
                              "goodput_mbit": g,
                              "bottlenecks": [{"link": "lr", "rate_mbit": 10, "utilization": 0.9,
                                               "mean_delay_ms": 5.0}]})
    run = _rundir(tmp_path / "rev", "reverse-path-full", cases)
    s = _section(ledger.build([run], tmp_path / "f"), "reverse-path")
    got = {c.rule.replace(" (all of the paired interval)", ""): c.ok for c in s.checks}
    assert got["sync: keeps at least 0.9 of its goodput when the ACK path is loaded"] is True
    assert got["mixreact: keeps at least 0.9 of its goodput when the ACK path is loaded"] is False
    assert got["sync: keeps more than Vegas (RTT-based) beyond the CI"] is True
    assert s.verdict == ledger.FAILS
    assert s.verdicts() == [("Sync-TCP(Pcwnd)", ledger.HOLDS, "all 2 pass"),
                            ("Sync-TCP(MixReact)", ledger.FAILS, "1 of 2 fail")]
    assert "| sync | 3 | 9.00 ± 0.00 | 8.70 ± 0.25 | **0.97 ± 0.03** |" in s.ours


def test_gu_checks_by_capacity_and_flows(tmp_path: Path) -> None:
    cases = []
    for seed in (1, 2):
        for rate, e, r in ((10, 0.95, 0.90), (100, 0.91, 0.30)):
            for cc, g in (("etcp", e), ("reno", r), ("cubic", r)):
                cases.append({"id": f"{cc}-droptail-rate{rate}-flows1-s{seed}", "cc": cc,
                              "group": f"{cc}-droptail-rate{rate}-flows1", "aqm": "droptail",
                              "seed": seed, "point": {"rate_mbit": rate, "flows_per_pair": 1},
                              "goodput_mbit": g * rate + seed * 0.01,
                              "bottlenecks": [{"link": "lr", "rate_mbit": rate,
                                               "utilization": g, "drop_pct": 1.0}]})
    run = _rundir(tmp_path / "gu", "gu-etcp-full", cases)
    s = _section(ledger.build([run], tmp_path / "f"), "gu")
    assert [c.ok for c in s.checks] == [True, True, True, True]
    assert s.verdict == ledger.HOLDS
    assert any("burst_segs differs between the runs of it or was not recorded (not recorded: "
               "`gu`)" in n for n in s.notes)
    meta = json.loads((run / "meta.json").read_text())
    meta["modules"] = {"tcp_etcp": {"params": {"b": "25", "p0_ppm": "10000", "burst_segs": "1"}}}
    (run / "meta.json").write_text(json.dumps(meta))
    s = _section(ledger.build([run], tmp_path / "f"), "gu")
    assert any(n.startswith("E-TCP paces packet by packet") for n in s.notes)
    assert not any("differs between the runs" in n for n in s.notes)
    assert not any("own model falls" in n for n in s.notes)


def test_gu_flatness_failure_is_set_beside_the_model(tmp_path: Path) -> None:
    cases = []
    for seed in (1, 2):
        for rate, e in ((10, 0.956), (1000, 0.866)):
            cases.append({"id": f"etcp-droptail-rate{rate}-flows1-s{seed}", "cc": "etcp",
                          "group": f"etcp-droptail-rate{rate}-flows1", "aqm": "droptail",
                          "seed": seed, "point": {"rate_mbit": rate, "flows_per_pair": 1},
                          "goodput_mbit": e * rate,
                          "bottlenecks": [{"link": "lr", "rate_mbit": rate,
                                           "utilization": e, "drop_pct": 1.0}]})
    run = _rundir(tmp_path / "gu", "gu-etcp-full", cases)
    s = _section(ledger.build([run], tmp_path / "f"), "gu")
    flat = next(c for c in s.checks if "flat with capacity" in c.rule)
    assert flat.ok is False
    assert ("1 flow(s): E-TCP falls 9.0 points from 10 to 1000 Mbit/s; the paper's own model "
            "falls 6.8 (0.949 to 0.881)") in " ".join(s.notes)
    assert "ours is +0.7 and -1.5 points from the model" in " ".join(s.notes)
    # a capacity beyond the paper's (10 Gbit/s, one seed) is shown, not checked
    for cc, e in (("etcp", 0.644), ("reno", 0.003)):
        cases.append({"id": f"{cc}-droptail-rate10000-flows1-s1", "cc": cc,
                      "group": f"{cc}-droptail-rate10000-flows1", "aqm": "droptail", "seed": 1,
                      "point": {"rate_mbit": 10000, "flows_per_pair": 1},
                      "goodput_mbit": e * 10000,
                      "bottlenecks": [{"link": "lr", "rate_mbit": 10000, "utilization": e,
                                       "drop_pct": 0.6}]})
    run = _rundir(tmp_path / "gu10g", "gu-etcp-full", cases)
    s2 = _section(ledger.build([run], tmp_path / "f"), "gu")
    assert [c.ok for c in s2.checks] == [c.ok for c in s.checks]
    assert [c.got for c in s2.checks] == [c.got for c in s.checks]
    assert "| 10000 | 1 | 1 | 0.644 |" in s2.ours
    assert ("1 flow(s) at 10000 Mbit/s (1 seed(s)): beyond the paper's capacities "
            "(10-1000 Mbit/s), shown and not checked.") in s2.notes


def test_claims_without_runs_are_not_measured_and_bad_input_is_one_line(
        tmp_path: Path, capsys: pytest.CaptureFixture) -> None:
    run = _ftp(tmp_path, 30.0, 0.95)
    out = tmp_path / "docs" / "results.md"
    assert cli_main(["ledger", str(run), "--out", str(out)]) == 0
    text = out.read_text()
    assert "| [Weigle: FTP over one bottleneck (Table 4.3)](#weigle-ftp) | **holds** |" in text
    assert "**Verdict: not measured.**" in text          # HTTP, Holl, Martin, reverse path
    assert "![weigle-ftp-queue](results/weigle-ftp-queue.png)" in text
    assert (tmp_path / "docs" / "results" / "weigle-ftp-queue.png").exists()
    assert "commit abc1234" in text and "kernel 7.2.13-uml" in text
    other = _rundir(tmp_path / "other", "my-own", [_ftp_case("reno", 1, 0.9, 1, 1)])
    for bad, word in ((tmp_path / "nope", "not a directory"), (other, "belongs to no claim")):
        assert cli_main(["ledger", str(bad), "--out", str(out)]) == 2
        err = capsys.readouterr().err
        assert word in err and "Traceback" not in err and len(err.strip().splitlines()) == 1


def test_http_checks_each_load(tmp_path: Path) -> None:
    cases = []
    for seed in (1, 2):
        for load in (50, 85):
            for cc, drop, queue, within in (("reno", 2.0, 40.0, 89.0), ("sync", 1.0, 30.0, 92.0),
                                            ("mixreact", 0.5 if load == 85 else 2.5, 20.0, 94.0)):
                cases.append({"id": f"{cc}-droptail-load{load}-s{seed}", "cc": cc,
                              "group": f"{cc}-droptail-load{load}", "aqm": "droptail",
                              "seed": seed, "point": {"http_load_pct": load}, "goodput_mbit": 0,
                              "bottlenecks": [{"link": "r0r1", "rate_mbit": 10, "utilization": 0.5,
                                               "drop_pct": drop + seed / 100,
                                               "mean_pkts": queue + seed}],
                              "http": {"responses": 25000 + seed, "median_ms": 300.0,
                                       "within_1500ms_pct": within + seed / 10,
                                       "rt_hist": {"small": [[40, 3], [50 + seed, 1]],
                                                   "large": [[60, seed]]}}})
    run = _with_meta(_rundir(tmp_path / "http", "weigle-http-full", cases), scenario={
        "topology": {"rtts_ms": [20.0, 45.0, 250.0], "window_segs": 68, "init_cwnd_segs": 2},
        "traffic": {"http_pairs": 3}})
    s = _section(ledger.build([run], tmp_path / "f"), "weigle-http")
    got = {c.rule: c for c in s.checks}
    assert got["Sync-TCP(Pcwnd): fewer drops than Reno at every load"].ok is True
    mix = got["Sync-TCP(MixReact): fewer drops than Reno at every load"]
    assert mix.ok is False and "not at 50%" in mix.got
    assert got["Sync-TCP(MixReact): more responses within 1500 ms than Reno at every load ≥ 60% "
               "(all of the paired interval above 0)"].ok
    assert got["Sync-TCP(MixReact): smaller mean queue than Reno at every load"].ok is True
    assert s.verdict == ledger.FAILS
    assert s.verdicts() == [("Sync-TCP(Pcwnd)", ledger.HOLDS, "all 2 pass"),
                            ("Sync-TCP(MixReact)", ledger.FAILS, "1 of 3 fail")]
    assert "| 85% | sync | 2 | 25002 ± 6 |" in s.ours
    assert [p.name for p in s.figures] == ["weigle-http-cdf.png", "weigle-http-ccdf.png"]
    assert "Responses per case (one seed, measured interval): 25,001 to 25,002, 10% of " \
        "the dissertation's 250,000" in s.notes[0]
    assert not any("One seed per case" in n for n in s.notes)
    # from the run's scenario, not written into the code
    assert any(n.startswith("Differences of the setup: each of the 3 client/server pairs has one "
                            "base RTT (20, 45 and 250 ms) and Weigle's TCP settings (window 68 "
                            "segments and initial window 2)") for n in s.notes)
    assert all(p.stat().st_size > 10_000 for p in s.figures)


def _http_case(cc: str, seed: int, load: int, drop: float, queue: float,
               within: float) -> Dict[str, Any]:
    return {"id": f"{cc}-droptail-load{load}-s{seed}", "cc": cc, "aqm": "droptail",
            "group": f"{cc}-droptail-load{load}", "seed": seed,
            "point": {"http_load_pct": load},
            "bottlenecks": [{"link": "r0r1", "rate_mbit": 10, "drop_pct": drop + seed / 100,
                             "mean_pkts": queue + seed}],
            "http": {"responses": 25000, "within_1500ms_pct": within + seed / 10}}


def test_http_verdict_is_the_paper_variants_when_it_ran(tmp_path: Path) -> None:
    # a variant-paper run (reno, the dissertation's sync and mixreact) and a variant-best
    # run of sync and mixreact: the best rows are shown, their checks not counted
    paper, best = [], []
    for seed in (1, 2, 3):
        for load in (70, 90):
            paper += [_http_case("reno", seed, load, 2.0, 40.0, 89.0),
                      _http_case("sync", seed, load, 1.0, 30.0, 92.0),
                      _http_case("mixreact", seed, load, 0.5, 20.0, 94.0)]
            best += [_http_case("sync", seed, load, 3.0, 50.0, 80.0),
                     _http_case("mixreact", seed, load, 3.0, 50.0, 80.0)]
    runs = [_rundir(tmp_path / "p", "weigle-http-full", paper),
            _rundir(tmp_path / "b", "weigle-http-full", best)]
    meta = json.loads((runs[0] / "meta.json").read_text())
    (runs[0] / "meta.json").write_text(json.dumps({**meta, "scenario": {"variant": "paper"}}))
    s = _section(ledger.build(runs, tmp_path / "f"), "weigle-http")
    got = {c.rule: c for c in s.checks}
    for name in ("Sync-TCP(Pcwnd) [paper]", "Sync-TCP(MixReact) [paper]"):
        assert got[f"{name}: fewer drops than Reno at every load"].ok is True
        assert got[f"{name}: fewer drops than Reno at every load"].counts is True
    assert got["Sync-TCP(MixReact) [paper]: smaller mean queue than Reno at every load"].ok
    for name in ("Sync-TCP(Pcwnd) [best]", "Sync-TCP(MixReact) [best]"):
        c = got[f"{name}: fewer drops than Reno at every load"]
        assert c.ok is False and c.counts is False
    assert s.verdict == ledger.HOLDS
    assert "| 90% | sync (paper) | 3 |" in s.ours and "| 90% | sync | 3 |" in s.ours
    assert any("The verdict is the dissertation's algorithms'" in n for n in s.notes)


def test_http_of_one_seed_says_its_checks_compare_means(tmp_path: Path) -> None:
    cases = [{"id": f"{cc}-droptail-load85", "cc": cc, "aqm": "droptail", "seed": 1,
              "group": f"{cc}-droptail-load85", "point": {"http_load_pct": 85},
              "bottlenecks": [{"link": "r0r1", "rate_mbit": 10, "drop_pct": drop, "mean_pkts": 9}],
              "http": {"responses": 30000, "within_1500ms_pct": 90.0}}
             for cc, drop in (("reno", 2.0), ("sync", 1.0))]
    s = _section(ledger.build([_rundir(tmp_path / "h", "weigle-http-full", cases)],
                              tmp_path / "f"), "weigle-http")
    assert "Responses per case (one seed, measured interval): 30,000, 12% of" in s.notes[0]
    assert "One seed per case: the figures have no interval, and the checks compare the " \
        "means." in s.notes
    assert s.figures == []          # no histogram: no response-time figure


def test_http_response_times_pool_the_seeds_bin_by_bin() -> None:
    cases = [{"http": {"rt_hist": {"small": [[40, 3], [51, 1]], "large": [[60, 1]]}}},
             {"http": {"rt_hist": {"small": [[40, 1], [52, 4]], "large": []}}},
             {"http": {"responses": 0}}, {}]
    pooled = pooled_rt_hist(cases)
    assert pooled == {"small": {40: 4, 51: 1, 52: 4}, "large": {60: 1}}
    xs, ys = rt_curve(pooled["small"], ccdf=False)
    assert xs == pytest.approx([10 ** 2.05, 10 ** 2.6, 10 ** 2.65])   # the bins' upper edges
    assert ys == pytest.approx([4 / 9, 5 / 9, 1.0])
    xs, ys = rt_curve(pooled["small"], ccdf=True)
    assert xs == pytest.approx([100.0, 10 ** 2.55, 10 ** 2.6])        # their lower edges
    assert ys == pytest.approx([1.0, 5 / 9, 4 / 9])
    for bad in ([120, 1], [3, -1], ["x", 1], [1]):
        with pytest.raises(ledger.LedgerError, match=r"case c1: http.rt_hist.large has"):
            pooled_rt_hist([{"id": "c1", "http": {"rt_hist": {"large": [bad]}}}])


def test_holl_checks_the_baseline_and_red(tmp_path: Path) -> None:
    def case(cc: str, aqm: str, calls: int, seed: int, per_flow: float, loss: float) -> Dict[str, Any]:
        flows = [{"group": "fwd", "goodput_mbit": (per_flow + (i % 2) * (2 if aqm == "droptail" else 1)
                                                    + seed / 100) / 1000} for i in range(64)]
        flows += [{"group": "cbr", "goodput_mbit": 0.08, "udp_lost_pct": loss + seed / 10}] * calls
        return {"id": f"{cc}-{aqm}-calls{calls}-s{seed}", "cc": cc, "aqm": aqm, "seed": seed,
                "group": f"{cc}-{aqm}-calls{calls}", "point": {"cbr_calls": calls},
                "goodput_mbit": 1.2, "flows": flows,
                "bottlenecks": [{"link": "lr", "rate_mbit": 1.536, "utilization": 1.0,
                                 "mean_pkts": 30.0 + seed}]}

    cases = []
    for seed in (1, 2, 3):
        cases += [case("reno", "droptail", 0, seed, 19.0, 0), case("reno", "red", 0, seed, 19.0, 0),
                  case("reno", "droptail", 17, seed, 5.0, 27.0),
                  case("reno", "red", 17, seed, 4.0, 17.0),
                  case("sync", "droptail", 0, seed, 25.0, 0)]
    run = _rundir(tmp_path / "holl", "holl-geo-full", cases)
    s = _section(ledger.build([run], tmp_path / "f"), "holl")
    got = {c.rule.split(" (")[0]: c.ok for c in s.checks}
    assert got["Reno, no calls, drop-tail: 18-20 kbit/s per bulk flow"] is True
    assert got["Reno, 17 calls, drop-tail: 5.357 kbit/s per bulk flow"] is True
    assert got["Reno, 17 calls, drop-tail: CBR loss 27%"] is True
    assert got["Reno, 17 calls: RED gives the bulk flows less than drop-tail"] is True
    assert got["Reno, 17 calls: RED loses fewer CBR packets than drop-tail"] is True
    assert got["Reno, no calls: RED spreads the bulk flows' goodput less"] is True
    assert got["sync, no calls, drop-tail: per-flow goodput like Reno's"] is False   # 25/20
    assert s.verdict == ledger.FAILS
    assert dict((a, v) for a, v, _ in s.verdicts()) == {
        "TCP Reno": ledger.HOLDS, "RED (Reno)": ledger.HOLDS, "Sync-TCP(Pcwnd)": ledger.FAILS}
    notes = " ".join(s.notes)
    # from the run's scenario: no call size, queue limit or MTU written into the code
    assert "a call here is one forward CBR flow on bulk pair" in notes
    meta = json.loads((run / "meta.json").read_text())
    meta["scenario"] = {"topology": {"queue_pkts": 50, "mtu": 1000, "rate_counts": "ip"},
                        "traffic": {"cbr": {"pkt_bytes": 172, "rate_kbit": 80.0}}}
    (run / "meta.json").write_text(json.dumps(meta))
    notes = " ".join(_section(ledger.build([run], tmp_path / "f"), "holl").notes)
    assert "(200-byte IP packets every 17.2 ms)" in notes and "packets x 1000 B" in notes
    assert "weighs 0.20 of a bulk packet" in notes and "(its limit is 50)" in notes


def test_martin_change_against_reno(tmp_path: Path) -> None:
    cases = []
    for seed in range(1, 6):
        for cc, f01 in (("reno", 5.0 + (seed % 2) * 0.2 - 0.1), ("vegas", 3.0 + seed / 10),
                        ("sync", 5.2)):
            cases.append({"id": f"{cc}-droptail-s{seed}", "group": f"{cc}-droptail", "cc": cc,
                          "aqm": "droptail", "seed": seed, "point": {}, "goodput_mbit": f01 + 5,
                          "flows": [{"group": "minority", "goodput_mbit": f01},
                                    {"group": "fwd", "goodput_mbit": 5.0}]})
    run = _rundir(tmp_path / "m", "martin-full", cases)
    s = _section(ledger.build([run], tmp_path / "f"), "martin")
    got = {c.rule.split(":")[0]: c for c in s.checks}
    assert got["vegas"].ok is True and got["vegas"].got.startswith("-34.0 ± ")
    assert got["sync"].ok is False and got["sync"].got == "4.0 ± 0.0%"
    assert s.verdict == ledger.FAILS
    assert any(n.startswith("Reno against Reno") for n in s.notes)
    assert got["Reno (the control's f01)"].ok is None      # no capture: not testable
    assert "CIM" not in s.ours


def test_martin_cim_from_the_captures(tmp_path: Path) -> None:
    cases = []
    for seed in range(1, 4):
        for cc, cim_rtt, cim_ott in (("reno", 0.2 + seed / 100, 0.3), ("sync", 0.5, 0.5)):
            cases.append({"id": f"{cc}-droptail-s{seed}", "group": f"{cc}-droptail", "cc": cc,
                          "aqm": "droptail", "seed": seed, "point": {}, "goodput_mbit": 9.0,
                          "flows": [{"group": "minority", "goodput_mbit": 4.0},
                                    {"group": "fwd", "goodput_mbit": 5.0}],
                          "correlation": {
                              "rtt": {"cim": {"value": cim_rtt}, "lcdc": {"-1": {"excess_ms": 3.0}}},
                              "ott": {"cim": {"value": cim_ott}, "lcdc": {"-1": {"excess_ms": 5.0}}}}})
    s = _section(ledger.build([_rundir(tmp_path / "m", "martin-full", cases)], tmp_path / "f"),
                 "martin")
    got = {c.rule.split(":")[0]: c for c in s.checks}
    assert got["Reno (the control's f01)"].ok is True
    assert got["Reno (the control's f01)"].got.startswith("0.220 ± ")
    assert "f01's CIM on RTT" in s.ours and "| 0.50 ± 0.00 | 0.50 ± 0.00 | 3.0 ± 0.0 | 5.0 ± 0.0 |" in s.ours
    note = next(n for n in s.notes if n.startswith("CIM and LCDC"))
    assert "reno 0.08 ± " in note and "sync 0.00 ± 0.00" in note


def test_ftp_verdict_is_the_paper_variants_when_they_ran(tmp_path: Path) -> None:
    best = _ftp(tmp_path, sync_queue=60.0, sync_util=0.95)        # best: queue above Reno's
    cases = [_ftp_case(cc, seed, 0.95, 0.5, 30.0) for seed in (1, 2, 3) for cc in ("sync", "mixreact")]
    paper = _rundir(tmp_path / "paper", "weigle-ftp-full", cases)
    meta = json.loads((paper / "meta.json").read_text())
    (paper / "meta.json").write_text(json.dumps({**meta, "scenario": {"variant": "paper"}}))
    s = _section(ledger.build([best, paper], tmp_path / "f"), "weigle-ftp")
    counted = [c for c in s.checks if c.counts]
    assert counted and all(c.rule.startswith(("Sync-TCP(Pcwnd) [paper]", "Sync-TCP(MixReact) [paper]"))
                           for c in counted)
    assert all(c.ok for c in counted) and s.verdict == ledger.HOLDS
    assert any(not c.ok for c in s.checks if not c.counts)          # best's queue check
    assert "| sync (paper) | 3 |" in s.ours and "| sync | 3 |" in s.ours


def test_provenance_names_the_planned_cases_without_a_result(tmp_path: Path) -> None:
    cases = [_ftp_case("reno", seed, 0.9, 1.0, 40.0) for seed in (1, 2)]
    run = _rundir(tmp_path / "r", "weigle-ftp-full", cases)
    scenario = {"name": "w", "cc": ["reno", "sync"], "aqm": ["droptail"], "seed": 1, "repeat": 2,
                "topology": {"rtts_ms": [40], "rate_mbit": 10, "queue_pkts": 50}}
    (run / "plan.json").write_text(json.dumps({"scenario": scenario, "ccs": None, "aqms": None}))
    (s,) = [x for x in ledger.build([run], tmp_path / "f") if x.runs]
    line = provenance(s.runs[0])
    assert "2 of 4 planned cases (no result: sync-droptail-s1, sync-droptail-s2), seeds 1,2" in line
    # the platform's skips are not missing results; without a plan, only the count
    meta = json.loads((run / "meta.json").read_text())
    meta["skipped_cases"] = ["sync-droptail-s1", "sync-droptail-s2"]
    (run / "meta.json").write_text(json.dumps(meta))
    (s,) = [x for x in ledger.build([run], tmp_path / "f") if x.runs]
    assert "`r`: scenario `weigle-ftp-full`; 2 cases, seeds" in provenance(s.runs[0])
    (run / "plan.json").unlink()
    (s,) = [x for x in ledger.build([run], tmp_path / "f") if x.runs]
    assert "; 2 cases, seeds 1,2;" in provenance(s.runs[0])


def test_provenance_of_a_resumed_run_says_whose_wall_it_is(tmp_path: Path) -> None:
    run = _rundir(tmp_path / "r", "weigle-ftp-full", [_ftp_case("reno", 1, 0.9, 1.0, 40.0)])
    (s,) = [x for x in ledger.build([run], tmp_path / "f") if x.runs]
    assert "wall 10.0 s (instances 18.0 s for 90.0 simulated s)" in provenance(s.runs[0])
    meta = json.loads((run / "meta.json").read_text())
    meta["resumed"] = [{"utc": "2026-11-26T10:27:11Z", "ran": []},
                       {"utc": "2026-11-26T10:28:50Z", "ran": []}]
    (run / "meta.json").write_text(json.dumps(meta))
    (s,) = [x for x in ledger.build([run], tmp_path / "f") if x.runs]
    assert ("wall 10.0 s in the last of 3 sessions (resumed 2026-11-26T10:28:50Z) (instances "
            "18.0 s for 90.0 simulated s)") in provenance(s.runs[0])


def test_runs_of_other_images_or_kernels_are_named(tmp_path: Path) -> None:
    """Each run says the image and kernel its instances had; a claim whose runs
    had different ones says so (issue 34)."""
    seeds = iter(range(0, 100, 10))

    def run(name: str, image: Any, kernel: Any) -> Path:
        d = _ftp(tmp_path / name, sync_queue=30.0, sync_util=0.95)
        shift = next(seeds)         # each run its own seeds: the ledger refuses a case twice
        summary = json.loads((d / "summary.json").read_text())
        for c in summary["cases"]:
            c["seed"] += shift
            c["id"] = c["id"].rsplit("-s", 1)[0] + f"-s{c['seed']}"
        (d / "summary.json").write_text(json.dumps(summary))
        meta = json.loads((d / "meta.json").read_text())
        meta.update({"uml_image": image, "uml_kernel_sha256": kernel})
        (d / "meta.json").write_text(json.dumps(meta))
        return d

    img, k1, k2 = "0123456789ab " + "c" * 64, "d" * 64, "e" * 64
    same = ledger.build([run("a", img, k1), run("b", img, k1)], tmp_path / "f")
    s = _section(same, "weigle-ftp")
    assert not any("not all made with the same" in n for n in s.notes), s.notes
    assert "image 0123456789ab cccccccccccc, kernel dddddddddddd" in provenance(s.runs[0])
    mixed = _section(ledger.build([run("c", img, k1), run("d", img, k2)], tmp_path / "f"),
                     "weigle-ftp")
    note = next(n for n in mixed.notes if "not all made with the same" in n)
    assert "kernel dddddddddddd" in note and "kernel eeeeeeeeeeee" in note
    # one run whose cases differed, alone; and an old run beside a new one
    one = _section(ledger.build([run("e", img, [k1, k2])], tmp_path / "f"), "weigle-ftp")
    assert any("not all made with the same" in n for n in one.notes)
    old = run("old", None, None)
    both = _section(ledger.build([old, run("f", img, k1)], tmp_path / "f"), "weigle-ftp")
    note = next(n for n in both.notes if "not all made with the same" in n)
    assert "not recorded" in note


def test_gu_reno_equilibrium_is_computed_from_the_scenario(tmp_path: Path) -> None:
    cases = [{"id": f"{cc}-droptail-flows1-s{seed}", "cc": cc, "aqm": "droptail", "seed": seed,
              "point": {"flows_per_pair": 1}, "goodput_mbit": g * 1000,
              "bottlenecks": [{"link": "lr", "rate_mbit": 1000, "utilization": g}]}
             for seed in (1, 2) for cc, g in (("etcp", 0.9), ("reno", 0.1))]
    run = _with_meta(_rundir(tmp_path / "gu", "gu-etcp-1g", cases), scenario={
        "duration_s": 60.0, "warmup_s": 10.0, "topology": {"rtts_ms": [100.0], "mtu": 1500}})
    s = _section(ledger.build([run], tmp_path / "f"), "gu")
    assert ("at 1000 Mbit/s about 417 s (BDP 8,333 packets of 1500 bytes at 100 ms) where the "
            "case runs 60 s (10 s of them warm-up)") in " ".join(s.notes)
    _with_meta(run, scenario={"duration_s": 600.0, "topology": {"rtts_ms": [100.0]}})
    s = _section(ledger.build([run], tmp_path / "f"), "gu")
    assert not any("equilibrium" in n for n in s.notes)        # 600 s covers a sawtooth


def _coex_case(cc: str, seed: int, q: int, share: float, n_cubic: int = 1) -> Dict[str, Any]:
    """One case of cubic-coexistence: f01 of ``cc`` gets ``share`` of its fair share."""
    total = 20.0
    mine = share * total / (n_cubic + 1)
    flows = [{"id": "f01", "group": "minority", "cc": cc, "goodput_mbit": mine}]
    flows += [{"id": f"f{i + 2:02d}", "group": "fwd", "cc": "cubic",
               "goodput_mbit": (total - mine) / n_cubic} for i in range(n_cubic)]
    return {"id": f"{cc}-droptail-q{q}-s{seed}", "cc": cc, "aqm": "droptail", "seed": seed,
            "point": {"queue_pkts": q}, "goodput_mbit": mine, "flows": flows,
            "bottlenecks": [{"link": "lr", "rate_mbit": 20, "utilization": 1.0,
                             "mean_pkts": 50.0}]}


def test_coexistence_checks_the_competing_mode_only(tmp_path: Path) -> None:
    """The project's own claim: sync with compete set must get half its fair share
    next to CUBIC (all of the interval); the default mode is shown, not checked."""
    cases = [_coex_case(cc, seed, q, share + 0.01 * seed)
             for seed in (1, 2, 3) for q in (67, 133)
             for cc, share in (("reno", 0.8), ("sync", 0.6))]
    on = _with_meta(_rundir(tmp_path / "on", "cubic-coexistence", cases),
                    scenario={"topology": {"rtts_ms": [40, 40]},
                              "module_params": {"sync": {"compete": 1}}})
    low = _with_meta(_rundir(tmp_path / "off", "cubic-coexistence",
                             [_coex_case("sync", 7, 67, 0.03)]),
                     scenario={"topology": {"rtts_ms": [40, 40]}})
    s = _section(ledger.build([on, low], tmp_path / "f"), "coexistence")
    rules = [c.rule for c in s.checks]
    assert rules == [f"Sync-TCP(Pcwnd) (compete): at least 0.5 of its fair share next to 1 CUBIC "
                     f"flow on {q} packets (all of the interval)" for q in (67, 133)]
    assert all(c.ok for c in s.checks) and s.verdict == "holds"
    assert "| 1 CUBIC, 67 packets | sync | 1 | **0.03** |" in s.ours      # shown
    weak = [_coex_case("sync", seed, 67, share) for seed, share in ((1, 0.45), (2, 0.7), (3, 0.6))]
    run = _with_meta(_rundir(tmp_path / "weak", "cubic-coexistence", weak),
                     scenario={"topology": {"rtts_ms": [40, 40]},
                               "module_params": {"sync": {"compete": 1}}})
    s = _section(ledger.build([run], tmp_path / "f"), "coexistence")
    assert [c.ok for c in s.checks] == [False] and s.verdict == "fails"   # the interval reaches below


def test_latecomer_checks_jain_and_the_queue_against_reno(tmp_path: Path) -> None:
    def case(cc: str, seed: int, a: float, b: float, queue: float) -> Dict[str, Any]:
        return {"id": f"{cc}-droptail-s{seed}", "cc": cc, "aqm": "droptail", "seed": seed,
                "point": {}, "goodput_mbit": a + b,
                "flows": [{"id": "f01", "group": "fwd", "goodput_mbit": a},
                          {"id": "f02", "group": "fwd", "goodput_mbit": b}],
                "bottlenecks": [{"link": "lr", "rate_mbit": 10, "utilization": 0.95,
                                 "mean_pkts": queue}]}
    cases = [case("reno", s, 4.7, 4.8, 60 + s) for s in (1, 2, 3)]
    cases += [case("sync", s, 4.6 + 0.01 * s, 4.7, 20 + s) for s in (1, 2, 3)]
    cases += [case("mixreact", s, 2.0, 7.0, 35 + s) for s in (1, 2, 3)]
    s = _section(ledger.build([_rundir(tmp_path / "l", "latecomer", cases)], tmp_path / "f"),
                 "latecomer")
    got = {(c.algo, c.rule.split(": ")[1].split(" ")[0]): c.ok for c in s.checks}
    assert got == {("Sync-TCP(Pcwnd)", "Jain's"): True, ("Sync-TCP(Pcwnd)", "mean"): True,
                   ("Sync-TCP(MixReact)", "Jain's"): False, ("Sync-TCP(MixReact)", "mean"): False}


def test_many_flows_checks_queue_drops_and_utilization_against_reno(tmp_path: Path) -> None:
    def case(cc: str, seed: int, util: float, drop: float, queue: float) -> Dict[str, Any]:
        return {"id": f"{cc}-droptail-s{seed}", "cc": cc, "aqm": "droptail", "seed": seed,
                "point": {}, "goodput_mbit": 45 * util,
                "bottlenecks": [{"link": "r0r1", "rate_mbit": 50, "utilization": util,
                                 "drop_pct": drop, "mean_pkts": queue}]}
    cases = [case("reno", s, 0.97, 5.0 + 0.1 * s, 250 + s) for s in (1, 2, 3)]
    cases += [case("sync", s, 0.968 + 0.001 * s, 0.1, 100 + s) for s in (1, 2, 3)]
    cases += [case("mixreact", s, 0.90, 0.1, 140 + s) for s in (1, 2, 3)]
    s = _section(ledger.build([_rundir(tmp_path / "m", "many-flows", cases)], tmp_path / "f"),
                 "many-flows")
    assert [(c.algo, c.ok) for c in s.checks] == [
        ("Sync-TCP(Pcwnd)", True), ("Sync-TCP(Pcwnd)", True), ("Sync-TCP(Pcwnd)", True),
        ("Sync-TCP(MixReact)", False), ("Sync-TCP(MixReact)", True),
        ("Sync-TCP(MixReact)", False)]


def test_long_run_checks_the_last_minute_against_the_second(tmp_path: Path) -> None:
    def case(cc: str, seed: int, minutes: List[float]) -> Dict[str, Any]:
        return {"id": f"{cc}-droptail-s{seed}", "cc": cc, "aqm": "droptail", "seed": seed,
                "point": {}, "goodput_mbit": 9.5, "minutes": {"link": "lr", "mean_pkts": minutes},
                "bottlenecks": [{"link": "lr", "rate_mbit": 10, "utilization": 0.95,
                                 "mean_pkts": sum(minutes) / len(minutes)}]}
    cases = [case("reno", s, [70.0, 68.0 + s, 90.0]) for s in (1, 2, 3)]        # shown only
    cases += [case("sync", s, [30.0, 20.0, 20.0 + 0.2 * s]) for s in (1, 2, 3)]
    cases += [case("mixreact", s, [30.0, 20.0, 22.0 + s]) for s in (1, 2, 3)]  # creeps 15%
    s = _section(ledger.build([_rundir(tmp_path / "l", "long-run", cases)], tmp_path / "f"),
                 "long-run")
    assert [(c.algo, c.ok) for c in s.checks] == [("Sync-TCP(Pcwnd)", True),
                                                  ("Sync-TCP(MixReact)", False)]
    assert "| sync | 3 | 20.0 ± 0.0 |" in s.ours
