"""make bench's tables: means, intervals and paired ratios (synctcp_testbed.bench)."""

from __future__ import annotations

from typing import Any, Dict, List

import pytest
from rich.console import Console

from synctcp_testbed import bench


def _case(cc: str, seed: int, util: float, queue: float, aqm: str = "droptail",
          link: str = "r0r1", point: Any = None) -> Dict[str, Any]:
    return {"id": f"{cc}-{aqm}-s{seed}", "group": f"{cc}-{aqm}", "cc": cc, "aqm": aqm,
            "seed": seed, "point": point or {}, "goodput_mbit": util * 10,
            "bottlenecks": [{"link": link, "rate_mbit": 10, "utilization": util,
                             "drop_pct": 1.0 + seed, "mean_pkts": queue}]}


def _text(table: Any) -> str:
    c = Console(width=250, record=True)
    c.print(table)
    return c.export_text()


def test_weigle_table_gives_mean_ci_and_paired_ratios() -> None:
    cases: List[Dict[str, Any]] = [_case("cubic", 1, 0.99, 100.0, aqm="ceiling")]
    for seed, q in ((1, 40.0), (2, 60.0)):
        cases += [_case("reno", seed, 0.95, q), _case("sync", seed, 0.95, q / 2)]
    text = _text(bench.weigle_table({"cases": cases}))
    assert "over 2 seeds" in text
    assert "cubic, large buffer" in text and "99.00" in text
    row = next(line for line in text.splitlines() if "sync" in line)
    # queue 25 ± t(1) x 5 = 63.53; queue / reno paired: 0.50 both seeds
    assert "25.00 ± 63.53" in row and "0.50 ± 0.00" in row


def test_gu_table_has_the_ceiling_of_each_capacity() -> None:
    cases = [_case("cubic", 1, 1.0, 50.0, aqm="ceiling", link="lr", point={"rate_mbit": 10})]
    for seed in (1, 2, 3):
        cases += [_case("etcp", seed, 0.9 + seed / 100, 10.0, link="lr", point={"rate_mbit": 10}),
                  _case("reno", seed, 0.5, 1.0, link="lr", point={"rate_mbit": 10})]
    text = _text(bench.gu_table({"cases": cases}))
    row = next(line for line in text.splitlines() if "etcp" in line)
    assert "92.0 ± 2.5" in row and "100.0" in row
    assert row.split("│")[6].strip().startswith("1.84 ±")


def test_bench_refuses_bad_options(capsys: pytest.CaptureFixture) -> None:
    for argv, word in ((["--only", "nope"], "not in the bench set"),
                       (["--repeat", "0"], "--repeat 0: at least 1")):
        with pytest.raises(SystemExit) as exc:
            bench.main(argv)
        assert exc.value.code == 2 and word in capsys.readouterr().err
