"""One experiment stack: the backend registry, no import circles, the demo on the runner.

Host-side: the demo runs here against a stand-in ``run_scenario`` that
writes a run directory as the runner does; tests/kernel runs the real one.
"""

from __future__ import annotations

import ast
import csv
import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any, Dict, List, Set

import pytest

from synctcp import modctl
from synctcp_testbed.network import backends
from synctcp_testbed import demo
from synctcp_testbed.case import lifecycle
from synctcp_testbed.case.errors import RunError
from synctcp_testbed.plan.flows import case_ccs
from synctcp_testbed.platform import run
from synctcp_testbed.scenario import Scenario, bulk_dumbbell

REPO = Path(__file__).resolve().parents[2]
PACKAGES = {"synctcp": REPO / "tools" / "synctcp",
            "synctcp_testbed": REPO / "testbed" / "synctcp_testbed",
            "synctcp_mininet": REPO / "mininet" / "synctcp_mininet"}


def modules() -> Dict[str, Path]:
    """Every module of the three packages and their subpackages, by dotted name."""
    out = {}
    for pkg, d in PACKAGES.items():
        for f in sorted(d.rglob("*.py")):
            parts = [pkg, *f.relative_to(d).with_suffix("").parts]
            out[".".join(parts[:-1] if parts[-1] == "__init__" else parts)] = f
    return out


def imports(name: str, path: Path, known: Dict[str, Path]) -> Set[str]:
    """Modules of the three packages that ``name`` imports anywhere (also inside functions)."""
    pkg = name if path.stem == "__init__" else name.rsplit(".", 1)[0]
    deps: Set[str] = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.Import):
            deps.update(a.name for a in node.names)
        elif isinstance(node, ast.ImportFrom):
            base = pkg
            for _ in range(max(0, node.level - 1)):
                base = base.rsplit(".", 1)[0]
            mod = (f"{base}.{node.module}" if node.module else base) if node.level else node.module
            deps.add(mod or "")
            deps.update(f"{mod}.{a.name}" for a in node.names)
    return {d for d in deps if d in known and d != name}


def test_no_import_circle_among_the_packages() -> None:
    known = modules()
    graph = {n: imports(n, p, known) for n, p in known.items()}
    # the parser sees imports, also those inside functions
    assert "synctcp_testbed.network.backends" in graph["synctcp_mininet.backend"]
    assert "synctcp_testbed.platform.run" in graph["synctcp_testbed.demo"]
    found: List[List[str]] = []
    state: Dict[str, int] = {}
    stack: List[str] = []

    def visit(u: str) -> None:
        state[u] = 1
        stack.append(u)
        for v in sorted(graph[u]):
            if state.get(v) == 1:
                found.append(stack[stack.index(v):] + [v])
            elif v not in state:
                visit(v)
        stack.pop()
        state[u] = 2

    for u in sorted(graph):
        if u not in state:
            visit(u)
    assert found == [], "import circles: " + "; ".join(" -> ".join(c) for c in found)
    # the testbed names the Mininet backend only as a string (backends.PROVIDERS)
    assert not any(d.startswith("synctcp_mininet") for n, ds in graph.items()
                   if n.startswith("synctcp_testbed") for d in ds)
    assert not [d for d in graph["synctcp_mininet.backend"]
                if d.startswith(("synctcp_testbed.case", "synctcp_testbed.platform"))]


def test_every_module_imports_alone_in_a_fresh_interpreter() -> None:
    names = [n for n in modules() if not n.endswith("__main__")]
    # one interpreter per module: a circle shows only in some import orders
    failed = {}
    # this repository's packages, whatever an installed copy says
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(str(d.parent) for d in PACKAGES.values())}
    for name in names:
        r = subprocess.run([sys.executable, "-c", f"import {name}"], capture_output=True,
                           text=True, timeout=60, cwd=REPO, env=env)
        if r.returncode != 0 and not (name.startswith("synctcp_mininet.")
                                      and "Mininet is not installed" in r.stderr):
            failed[name] = r.stderr.strip().splitlines()[-1:]
    assert failed == {}


def test_registry_netns_and_providers(monkeypatch: pytest.MonkeyPatch) -> None:
    assert backends.get("netns") is backends.build_topology
    assert backends.names()[0] == "netns" and "mininet" in backends.names()
    with pytest.raises(backends.BackendError, match="unknown backend 'ovs': one of netns"):
        backends.get("ovs")
    monkeypatch.setattr(backends, "PROVIDERS", {**backends.PROVIDERS, "gone": "no_such_pkg.backend"})
    with pytest.raises(backends.BackendError, match="backend gone: No module named 'no_such_pkg'"):
        backends.get("gone")
    with pytest.raises(RunError, match="backend gone: No module named"):
        lifecycle.topology_builder("gone")


def test_register_and_check(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(backends, "_builders", dict(backends._builders))
    monkeypatch.setattr(backends, "_checks", dict(backends._checks))

    def missing() -> None:
        raise ImportError("Thing is not installed: apt-get install thing")

    backends.register("thing", backends.build_topology, check=missing)
    assert "thing" in backends.names()
    with pytest.raises(backends.BackendError, match="backend thing: Thing is not installed"):
        backends.get("thing")
    backends.register("thing", backends.build_topology)
    assert backends.get("thing") is backends.build_topology
    with pytest.raises(backends.BackendError):
        backends.register("a b", backends.build_topology)


# ---------------------------------------------------------------------------
# the runner: an unavailable algorithm is an error before anything runs


def test_run_scenario_refuses_an_unavailable_algorithm_first(
        monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    asked = []

    def ensure(cc: str, host: Any = None) -> Dict[str, Any]:
        asked.append(cc)
        if cc == "sync":
            raise modctl.ModError("congestion control 'sync' is not available: tcp_sync is "
                                  "neither installed nor built", "not-built")
        return {"cc": cc, "action": "available", "allowed": []}

    monkeypatch.setattr(modctl, "ensure_cc", ensure)
    monkeypatch.setattr(run, "CaseRun", lambda *a, **kw: pytest.fail("a case ran"))
    # the cases would run here (as inside an instance), where algorithms are loaded
    monkeypatch.setenv("SYNCTCP_IN_VM", "1")
    monkeypatch.setenv("SYNCTCP_PLATFORM", "uml")
    sc = bulk_dumbbell("t", ["reno", "sync"], 10, 40, 50, 2, 5)
    with pytest.raises(RunError, match="'sync' is not available"):
        run.run_scenario(sc, out=tmp_path / "run")
    assert asked == ["reno", "sync"] and not (tmp_path / "run").exists()


def test_case_ccs_are_every_algorithm_a_case_uses() -> None:
    sc = bulk_dumbbell("t", ["sync"], 10, 40, 50, 2, 5)
    assert case_ccs(sc.cases()[0]) == ["sync"]
    sc.traffic.minority_of, sc.traffic.rev_cc = "reno", "cubic"
    assert case_ccs(sc.cases()[0]) == ["cubic", "reno", "sync"]


def test_bulk_dumbbell_measures_the_last_seconds() -> None:
    sc = bulk_dumbbell("demo-delay", ["reno", "sync"], 20, 40, 100, 3, 10)
    assert [c.id for c in sc.cases()] == ["reno-droptail", "sync-droptail"]
    assert sc.topology.rtts_ms == [40, 40, 40] and sc.topology.measure == ["lr"]
    assert sc.duration_s - sc.warmup_s == 10 and sc.warmup_s == 2
    assert bulk_dumbbell("x", ["reno"], 50, 100, 20, 1, 5).warmup_s == 1


# ---------------------------------------------------------------------------
# the demo


def fake_run_scenario(calls: List[Dict[str, Any]]) -> Any:
    """A stand-in for runner.run_scenario: a run directory as the runner writes it."""

    def run(sc: Scenario, out: Path, **kw: Any) -> Path:
        calls.append({"scenario": sc, "out": out, **kw})
        out.mkdir(parents=True, exist_ok=True)
        (out / "meta.json").write_text(json.dumps({
            "schema": 1, "scenario_name": sc.name, "kernel": "6.1.192-uml", "platform": "vm-uml",
            "backend": kw.get("backend"), "command": kw.get("command"), "modules": {}}))
        cases = []
        for i, case in enumerate(sc.cases()):
            cdir = out / case.id
            cdir.mkdir(exist_ok=True)
            with open(cdir / "queue-lr.csv", "w") as fh:
                fh.write("t,qlen_pkts,backlog_bytes,drops,sent_pkts,sent_bytes,marks\n")
                for k in range(200):
                    fh.write(f"{100 + k / 100:.2f},{10 + i * 5 + k % 7},{(10 + k % 7) * 1500},"
                             f"{k // 50},{k * 10},{k * 15000},0\n")
            n = len(sc.topology.rtts_ms)
            cases.append({
                "id": case.id, "cc": case.cc, "aqm": case.aqm, "point": {}, "t_traffic": 100.0,
                "t_start": 100.5, "t_end": 101.9, "duration_s": 1.4,
                "bottlenecks": [{"link": "lr", "rate_mbit": sc.topology.rate_mbit, "samples": 140,
                                 "sample_hz": 100.0, "mean_pkts": 12.34 + i, "p95_pkts": 16,
                                 "max_pkts": 16, "mean_delay_ms": 7.41, "p95_delay_ms": 9.6,
                                 "drops": 2, "sent_pkts": 1400, "drop_pct": 0.1427,
                                 "utilization": 0.9512, "marks": 0, "mark_pct": 0.0}],
                "goodput_mbit": 18.765 - i, "retransmits": 3 + i,
                "flows": [{"id": f"f{k + 1:02d}", "group": "fwd", "cc": case.cc,
                           "goodput_mbit": 1.0, "retransmits": 1, "base_rtt_ms": 40}
                          for k in range(n)],
                "http": None, "platform_ceiling_mbit": None})
        (out / "summary.json").write_text(json.dumps({"schema": 1, "scenario": sc.name,
                                                      "cases": cases}))
        return out

    return run


def test_demo_runs_each_part_with_one_run_scenario_call(
        monkeypatch: pytest.MonkeyPatch, tmp_path: Path, capsys: pytest.CaptureFixture) -> None:
    calls: List[Dict[str, Any]] = []
    monkeypatch.setattr(run, "run_scenario", fake_run_scenario(calls))
    out = tmp_path / "demo"
    assert demo.main(["--out", str(out), "--cc", "reno,sync", "--seconds", "5",
                      "--no-report"]) == 0
    assert [c["out"] for c in calls] == [out / "delay", out / "small-buffer"]
    first, second = calls[0]["scenario"], calls[1]["scenario"]
    assert first.cc == ["reno", "sync"] and first.topology.rate_mbit == 20
    assert first.topology.rtts_ms == [40, 40, 40] and first.topology.queue_pkts == 100
    assert second.cc == ["etcp", "reno", "cubic"] and second.topology.rate_mbit == 50
    assert second.topology.rtts_ms == [100] and second.topology.queue_pkts == 20
    assert all(c["backend"] == "netns" and c["command"][0] == "python3 -m synctcp_testbed.demo"
               for c in calls)
    printed = capsys.readouterr().out
    assert "20 Mbit/s, 40 ms, 100-packet drop-tail, 3 flows each, 5 s" in printed
    assert "small buffer: 50 Mbit/s, 100 ms, 20-packet drop-tail" in printed
    assert "18.77" in printed and "0.951" in printed
    for name in ("queue.png", "queue-smallbuffer.png"):
        assert (out / name).read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    summary = json.loads((out / "summary.json").read_text())
    assert summary["kernel"] == "6.1.192-uml" and summary["platform"] == "vm-uml"
    assert summary["config"] == {"rate_mbit": 20, "rtt_ms": 40, "queue_pkts": 100, "flows": 3}
    assert [r["cc"] for r in summary["results"]] == ["reno", "sync"]
    assert summary["results"][1] == {
        "cc": "sync", "flows": 3, "goodput_mbit": 17.77, "utilization": 0.951,
        "queue_mean_pkts": 13.3, "qdelay_mean_ms": 7.4, "qdelay_p95_ms": 9.6, "drop_pct": 0.14,
        "retransmits": 4, "samples_hz": 100.0}
    assert [r["cc"] for r in summary["small_buffer"]["results"]] == ["etcp", "reno", "cubic"]
    assert (summary["rundir"], summary["small_buffer"]["rundir"]) == ("delay", "small-buffer")
    with open(out / "summary.csv") as fh:
        rows = list(csv.DictReader(fh))
    assert [(r["part"], r["cc"]) for r in rows] == [
        ("delay", "reno"), ("delay", "sync"),
        ("small-buffer", "etcp"), ("small-buffer", "reno"), ("small-buffer", "cubic")]
    assert (out / "delay" / "summary.csv").exists() and not (out / "delay" / "report.html").exists()


def test_demo_passes_runner_options_through(monkeypatch: pytest.MonkeyPatch,
                                            tmp_path: Path) -> None:
    calls: List[Dict[str, Any]] = []
    monkeypatch.setattr(run, "run_scenario", fake_run_scenario(calls))
    real = demo.parser

    def with_opts(*a: Any, **kw: Any) -> Any:
        ap = real(*a, **kw)
        ap.set_defaults(run_opts={"jobs": 2})
        return ap

    monkeypatch.setattr(demo, "parser", with_opts)
    assert demo.main(["--out", str(tmp_path), "--cc", "reno", "--no-small-buffer"],
                     backend="mininet", prog="synctcp_mininet.demo") == 0
    assert len(calls) == 1 and calls[0]["jobs"] == 2 and calls[0]["backend"] == "mininet"
    assert (tmp_path / "delay" / "report.html").exists()
    assert not (tmp_path / "queue-smallbuffer.png").exists()


@pytest.mark.parametrize("argv,line", [
    (["--rate-mbit", "0"], "--rate-mbit 0: must be 0.01..100000"),
    (["--rtt-ms", "-1"], "--rtt-ms -1: must be 0..20000"),
    (["--queue-pkts", "0"], "--queue-pkts 0: must be 1..100000"),
    (["--seconds", "0.5"], "--seconds 0.5: must be 1..3600"),
    (["--flows", "0"], "--flows 0: must be 1..100"),
    (["--cc", ","], "--cc: give at least one algorithm"),
    (["--small-buffer-cc", ""], "--small-buffer-cc: give at least one algorithm"),
])
def test_demo_refuses_bad_options_in_one_line(monkeypatch: pytest.MonkeyPatch, tmp_path: Path,
                                              capsys: pytest.CaptureFixture, argv: List[str],
                                              line: str) -> None:
    monkeypatch.setattr(run, "run_scenario", lambda *a, **kw: pytest.fail("ran"))
    assert demo.main(["--out", str(tmp_path), *argv]) == 2
    err = capsys.readouterr().err
    assert err.startswith(f"synctcp-testbed demo: {line}") and err.count("\n") == 1


def test_demo_failed_case_is_one_line_and_exit_1(monkeypatch: pytest.MonkeyPatch, tmp_path: Path,
                                                 capsys: pytest.CaptureFixture) -> None:
    def fail(*a: Any, **kw: Any) -> Path:
        raise RunError("congestion control 'bogus' is not available in kernel x: "
                              "modprobe tcp_bogus: not found")

    monkeypatch.setattr(run, "run_scenario", fail)
    assert demo.main(["--out", str(tmp_path), "--cc", "bogus", "--no-small-buffer"]) == 1
    err = capsys.readouterr().err
    assert err == ("synctcp-testbed demo: delay: congestion control 'bogus' is not available "
                   "in kernel x: modprobe tcp_bogus: not found\n")


def test_demo_keeps_what_ran_when_a_later_part_fails(monkeypatch: pytest.MonkeyPatch,
                                                     tmp_path: Path,
                                                     capsys: pytest.CaptureFixture) -> None:
    calls: List[Dict[str, Any]] = []
    good = fake_run_scenario(calls)

    def second_fails(sc: Scenario, out: Path, **kw: Any) -> Path:
        if calls:
            raise RunError("congestion control 'etcp' is not available: not built")
        return good(sc, out, **kw)

    monkeypatch.setattr(run, "run_scenario", second_fails)
    assert demo.main(["--out", str(tmp_path), "--cc", "reno", "--no-report"]) == 1
    assert capsys.readouterr().err.endswith(
        "synctcp-testbed demo: small-buffer: congestion control 'etcp' is not available: "
        "not built\n")
    assert (tmp_path / "queue.png").exists() and not (tmp_path / "queue-smallbuffer.png").exists()
    summary = json.loads((tmp_path / "summary.json").read_text())
    assert [r["cc"] for r in summary["results"]] == ["reno"]
    assert summary["small_buffer"]["results"] == []
