"""The ledger's "Ours: next to AQM-assisted peers" (issue 32, item 3) from
synthetic peers-* runs: a row per system in the presets' order, the checks
against CUBIC over drop-tail and within reach of CUBIC over fq_codel, paired
by seed, and a failing sync when its delay is not within reach."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Dict, List, Tuple

from synctcp_testbed.analysis.ledger.claims import build

SYSTEMS: Dict[str, Tuple[float, float]] = {      # system -> (mean delay ms, utilization)
    "sync/droptail": (8.0, 0.995), "mixreact/droptail": (9.0, 0.996),
    "dctcp/dualpi2": (0.4, 0.96), "cubic/cake": (2.0, 0.954), "cubic/fq_codel": (5.0, 0.99),
    "bbr/droptail": (40.0, 0.99), "cubic/droptail": (40.0, 1.0), "reno/droptail": (30.0, 1.0)}


def write_run(path: Path, name: str, sync_delay: float) -> Path:
    cases: List[dict] = []
    for seed in range(1, 6):
        for system, (delay, util) in SYSTEMS.items():
            cc, aqm = system.split("/")
            d = sync_delay if system == "sync/droptail" else delay
            d *= 1 + 0.01 * seed
            cases.append({"id": f"{cc}-{aqm}-s{seed}", "cc": cc, "aqm": aqm, "seed": seed,
                          "group": f"{cc}-{aqm}", "point": {}, "duration_s": 60.0,
                          "goodput_mbit": 19.0 * util,
                          "flows": [{"id": f"f0{i}", "group": "fwd", "goodput_mbit": 6.3 * util}
                                    for i in (1, 2, 3)],
                          "bottlenecks": [{"link": "lr", "rate_mbit": 20.0,
                                           "mean_delay_ms": d, "p99_delay_ms": 3 * d,
                                           "mean_pkts": d * 20 / 12, "utilization": util,
                                           "drop_pct": 0.0, "mark_pct": 0.0}]})
    path.mkdir(parents=True)
    meta = {"schema": 1, "scenario_name": name, "platform": "uml", "time": "simulated",
            "scenario": {"name": name, "topology": {"measure": ["lr"]}}, "seed": 1}
    (path / "meta.json").write_text(json.dumps(meta))
    (path / "plan.json").write_text(json.dumps({"scenario": {"name": name}}))
    (path / "summary.json").write_text(json.dumps({"schema": 1, "scenario": name,
                                                   "cases": cases}))
    return path


def section(tmp_path: Path, sync_delay: float):
    run = write_run(tmp_path / "peers-dumbbell", "peers-dumbbell", sync_delay)
    return next(s for s in build([run], tmp_path / "figs") if s.key == "peers")


def test_every_system_has_a_row_and_sync_meets_its_bounds(tmp_path: Path) -> None:
    sec = section(tmp_path, 8.0)
    rows = [line for line in sec.ours.splitlines() if line.startswith("| dumbbell")]
    assert [r.split(" | ")[1] for r in rows[:8]] == list(SYSTEMS)
    sync = [c for c in sec.checks if c.algo == "Sync-TCP(Pcwnd)"]
    assert len(sync) == 3 and all(c.ok for c in sync), [(c.rule, c.got) for c in sync]
    assert "within reach of CUBIC over fq_codel" in sync[2].rule


def test_a_delay_beyond_twice_fq_codels_is_not_within_reach(tmp_path: Path) -> None:
    sec = section(tmp_path, 12.0)       # 2.4 x fq_codel's 5 ms
    reach = [c for c in sec.checks if c.algo == "Sync-TCP(Pcwnd)" and "reach" in c.rule]
    assert reach and reach[0].ok is False and "delay ÷ CUBIC/fq_codel 2.40" in reach[0].got
