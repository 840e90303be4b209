"""Plots, summary.csv and report.html of a synthetic run directory (synctcp_testbed.analysis.report)."""

from __future__ import annotations

import csv
import html
import json
import os
import re
import subprocess
import sys
from html.parser import HTMLParser
from pathlib import Path
from typing import Any, Dict, List, Optional

import pytest

from synctcp_testbed.analysis import plots, report, tables
from synctcp_testbed.analysis.rundir import (RunDirError, flow_labeler, load_run, read_http_csv,
                                             read_queue_csv, read_tcp_jsonl)

ROOT = Path(__file__).resolve().parents[2]
PNG_MAGIC = b"\x89PNG\r\n\x1a\n"
T_START = 100.0
DURATION = 3.0
SCENARIO = "unit-dumbbell"
GOODPUT = {"reno-droptail": 15.0, "cubic-droptail": 14.0, "sync-droptail": 12.0}
MEAN_PKTS = {"reno-droptail": 40.0, "cubic-droptail": 50.0, "sync-droptail": 10.0}
DROP_PCT = {"reno-droptail": 0.0, "cubic-droptail": 0.5, "sync-droptail": 0.1}
LINKS = {"reno-droptail": ["r0r1"], "cubic-droptail": ["r0r1"], "sync-droptail": ["r0r1", "r1r2"]}
FLOWS = [("f01", 40001), ("f02", 40002), ("f03", 40003)]
UNMATCHED_SPORT = 45000


def write_queue(path: Path, base: float, rows: int = 300, truncated: bool = False) -> int:
    """A queue CSV of ``rows`` samples at 100 Hz from T_START - 0.5 s; returns rows written."""
    with open(path, "w", newline="") as fh:
        w = csv.writer(fh)
        w.writerow(["t", "qlen_pkts", "backlog_bytes", "drops", "sent_pkts", "sent_bytes", "marks"])
        for i in range(rows):
            q = base + (i * 7) % 23
            w.writerow([T_START - 0.5 + i / 100, q, q * 1500, i // 50, i * 10, i * 15000, 0])
    if truncated:
        with open(path, "a") as fh:
            # cut off in the last field: every column is there, but there is no newline
            fh.write(f"{T_START + 9},77,115500,9,9000,13500000,")
    return rows


def write_tcp(path: Path, samples: int = 60, truncated: bool = False) -> int:
    """Sender samples: flows f01, f02 (matching flows.json) and one unmatched socket."""
    with open(path, "w") as fh:
        for i in range(samples):
            socks = []
            for k, sport in enumerate([FLOWS[0][1], FLOWS[1][1], UNMATCHED_SPORT]):
                socks.append({"src": "10.0.1.1", "sport": sport, "dst": "10.0.9.1", "dport": 5201,
                              "cc": "sync", "tcp_info": {"cwnd": 10 + k * 5 + i % 7,
                                                         "rtt_us": 41000},
                              "synctcp": None})
            fh.write(json.dumps({"t": T_START + i * 0.05, "sockets": socks}) + "\n")
        if truncated:
            fh.write('{"t": 200.0, "sockets": [{"src": "10.0')  # cut off: no newline
    return samples


def http_rows() -> List[List[Any]]:
    """HTTP responses: small and large, a few incomplete."""
    rows = []
    for i in range(120):
        resp = 1000 + (i * 997) % 60000
        rt = 0.02 + (i % 17) * 0.03 + (resp / 1e6)
        rows.append([T_START + i * 0.02, T_START + i * 0.02 + rt, 300, resp,
                     resp if i % 10 else resp // 2, 0 if i % 10 == 0 else 1, "fwd"])
    rows.append([T_START + 3, T_START + 3.25, 300, 25560, 25560, 1, "fwd"])  # largest "small"
    return rows


def bottleneck(cid: str, link: str) -> Dict[str, Any]:
    """A summary.json bottleneck record."""
    extra = 5.0 if link == "r1r2" else 0.0
    return {"link": link, "rate_mbit": 20.0, "samples": 300, "sample_hz": 100.0,
            "mean_pkts": MEAN_PKTS[cid] + extra, "p95_pkts": 80, "max_pkts": 92,
            "mean_delay_ms": 30.1, "p95_delay_ms": 90.0, "drops": 10, "marks": 0,
            "sent_pkts": 25000, "drop_pct": DROP_PCT[cid], "mark_pct": 0.0,
            "utilization": 0.9}


def make_run(root: Path, scenario: str = SCENARIO, with_samples: bool = True) -> Path:
    """A synthetic run directory with three cases under ``root``."""
    root.mkdir(parents=True, exist_ok=True)
    meta = {"schema": 1, "scenario_name": scenario, "scenario": {"name": scenario, "rate": 20},
            "seed": 7, "started_utc": "2026-11-21T10:00:00Z",
            "command": ["synctcp-testbed", "run", scenario, "--seed", "7"],
            "kernel": "6.1.0-test", "host": "h", "platform": "native", "tool_version": "0.1.0",
            "git": "abc1234", "modules": {"tcp_sync": {"version": "1.0",
                                                       "params": {"source": "auto"}}}}
    cases = []
    for cid, gp in GOODPUT.items():
        cc, aqm = cid.split("-")
        flows = [{"id": fid, "group": "fwd", "goodput_mbit": gp / 3, "retransmits": 1,
                  "base_rtt_ms": 40.0} for fid, _ in FLOWS]
        is_sync = cc == "sync"
        cases.append({"id": cid, "cc": cc, "aqm": aqm, "t_start": T_START,
                      "t_end": T_START + DURATION, "duration_s": DURATION,
                      "bottlenecks": [bottleneck(cid, link) for link in LINKS[cid]],
                      "goodput_mbit": gp, "retransmits": 3, "flows": flows,
                      "http": ({"responses": 120, "errors": 12, "median_ms": 200.0,
                                "p90_ms": 500.0, "small_median_ms": 150.0,
                                "large_median_ms": 300.0} if is_sync else None),
                      "platform_ceiling_mbit": None})
        if not with_samples:
            continue
        cdir = root / cid
        cdir.mkdir()
        for j, link in enumerate(LINKS[cid]):
            write_queue(cdir / f"queue-{link}.csv", MEAN_PKTS[cid] + j)
        if cc == "cubic":
            continue  # no tcp jsonl, flows.json or http.csv
        write_tcp(cdir / "tcp-snd.jsonl")
        (cdir / "flows.json").write_text(json.dumps([
            {"id": fid, "cc": cc, "group": "fwd", "src": "10.0.1.1", "sport": sport,
             "dst": "10.0.9.1", "dport": 5201, "base_rtt_ms": 40.0, "goodput_mbit": gp / 3,
             "bytes": 1000, "retransmits": 1} for fid, sport in FLOWS]))
        if is_sync:
            with open(cdir / "http.csv", "w", newline="") as fh:
                w = csv.writer(fh)
                w.writerow(["t_start", "t_end", "req_bytes", "resp_bytes", "rcvd_bytes", "ok",
                            "flow_group"])
                w.writerows(http_rows())
    (root / "meta.json").write_text(json.dumps(meta))
    (root / "summary.json").write_text(json.dumps({"schema": 1, "scenario": scenario,
                                                   "cases": cases}))
    return root


class Tables(HTMLParser):
    """Cell texts of every table with an id, plus all src/href attribute values."""

    def __init__(self) -> None:
        super().__init__()
        self.tables: Dict[str, List[List[str]]] = {}
        self.urls: List[str] = []
        self._table: Optional[str] = None
        self._cell: Optional[List[str]] = None

    def handle_starttag(self, tag: str, attrs: List[Any]) -> None:
        a = dict(attrs)
        self.urls += [v or "" for k, v in attrs if k in ("src", "href")]
        if tag == "table" and a.get("id"):
            self._table = a["id"]
            self.tables[self._table] = []
        elif tag == "tr" and self._table:
            self.tables[self._table].append([])
        elif tag in ("td", "th") and self._table:
            self._cell = []

    def handle_endtag(self, tag: str) -> None:
        if tag in ("td", "th") and self._table and self._cell is not None:
            self.tables[self._table][-1].append("".join(self._cell).strip())
            self._cell = None
        elif tag == "table":
            self._table = None

    def handle_data(self, data: str) -> None:
        if self._cell is not None:
            self._cell.append(data)


def parse(html_text: str) -> Tables:
    p = Tables()
    p.feed(html_text)
    return p


def cell(table: List[List[str]], case: str, column: str) -> str:
    """The cell of ``table`` in the row of ``case`` and the column headed ``column``."""
    col = table[0].index(column)
    return next(r for r in table[1:] if r[0] == case)[col]


def assert_png(path: Path) -> None:
    """A real, non-blank PNG."""
    from matplotlib.image import imread

    data = path.read_bytes()
    assert data[:8] == PNG_MAGIC, path
    assert len(data) > 5000, path
    img = imread(path)
    assert img.shape[0] > 200 and img.shape[1] > 300
    assert img[..., :3].std() > 0.01, f"{path} is blank"


@pytest.fixture(scope="module")
def built(tmp_path_factory: pytest.TempPathFactory) -> Dict[str, Any]:
    run = make_run(tmp_path_factory.mktemp("run") / "run")
    pngs = plots.write_plots(run)
    html_path = report.write_report(run, pngs)
    csv_path = tables.write_summary_csv(run)
    return {"run": run, "plots": pngs, "html": html_path.read_text(), "csv": csv_path}


def test_plots_are_valid_pngs(built: Dict[str, Any]) -> None:
    names = {p.name for p in built["plots"]}
    expected = {"queue-time-r0r1.png", "queue-time-r1r2.png", "queue-cdf-r0r1.png",
                "queue-cdf-r1r2.png", "cwnd-reno-droptail.png", "cwnd-sync-droptail.png",
                "goodput-flows.png", "http-rt-cdf.png", "http-rt-ccdf.png",
                "http-rt-split-cdf.png", "http-rt-split-ccdf.png", "summary-r0r1.png",
                "summary-r1r2.png"}
    assert names == expected
    assert not (built["run"] / "plots" / "cwnd-cubic-droptail.png").exists()
    assert sorted(p.name for p in (built["run"] / "plots").glob("*.png")) == sorted(names)
    for p in built["plots"]:
        assert p.parent == built["run"] / "plots"
        assert_png(p)


def color_pixels(path: Path, rgba: Any) -> int:
    """Number of pixels of ``path`` within a small distance of colour ``rgba``."""
    from matplotlib.image import imread

    img = imread(path)[..., :3]
    return int((abs(img - rgba[:3]).sum(axis=-1) < 0.06).sum())


def test_queue_plot_draws_every_case(built: Dict[str, Any]) -> None:
    run = load_run(built["run"])
    colors = plots.case_colors(run)
    png = built["run"] / "plots" / "queue-time-r0r1.png"
    for case in run.cases:  # far more than the legend's swatch of each case
        assert color_pixels(png, colors[case.id]) > 1000, case.id


def test_flow_labels_match_flows_json() -> None:
    flows = [{"id": "a", "src": "10.0.1.1", "sport": 1, "dst": "10.0.9.1", "dport": 80},
             {"id": "b", "src": "10.0.1.2", "sport": 2, "dst": "10.0.9.1", "dport": 80},
             {"id": "c", "src": "10.0.1.3", "sport": 3, "dst": "10.0.9.1", "dport": 80},
             {"id": "d", "src": "10.0.1.4", "sport": 3, "dst": "10.0.9.2", "dport": 80}]
    label = flow_labeler(flows)
    assert label({"src": "10.0.1.1", "sport": 1, "dst": "10.0.9.1", "dport": 80}) == "a"
    # another address but ports naming one flow: still that flow
    assert label({"src": "192.168.0.2", "sport": 2, "dst": "10.0.9.1", "dport": 80}) == "b"
    # ports shared by two flows and no full match: src:sport
    assert label({"src": "192.168.0.3", "sport": 3, "dst": "x", "dport": 80}) == "192.168.0.3:3"
    assert label({"src": "10.0.1.4", "sport": 3, "dst": "10.0.9.2", "dport": 80}) == "d"
    assert label({"src": "10.0.1.1", "sport": 9, "dst": "10.0.9.1", "dport": 80}) == "10.0.1.1:9"


def test_report_is_self_contained(built: Dict[str, Any]) -> None:
    html_text = built["html"]
    parsed = parse(html_text)
    assert parsed.urls, "plots are embedded as img src"
    assert all(u.startswith("data:image/png;base64,") for u in parsed.urls)
    assert not re.search(r"(src|href)\s*=\s*[\"']?\s*(https?:)?//", html_text, re.I)
    assert "<link" not in html_text and "<script" not in html_text
    assert html_text.count("data:image/png;base64,") == len(built["plots"])
    assert f"<title>synctcp testbed: {SCENARIO}</title>" in html_text
    assert "6.1.0-test" in html_text and "abc1234" in html_text and "source=auto" in html_text


def test_ratios_vs_reno_and_cubic(built: Dict[str, Any]) -> None:
    table = parse(built["html"]).tables["summary-r0r1"]
    sync, reno, cubic = "sync-droptail", "reno-droptail", "cubic-droptail"
    assert cell(table, sync, "goodput \u00f7 Reno") == f"{GOODPUT[sync] / GOODPUT[reno]:.2f}"
    assert cell(table, sync, "goodput \u00f7 Reno") == "0.80"
    assert cell(table, sync, "queue \u00f7 Reno") == f"{MEAN_PKTS[sync] / MEAN_PKTS[reno]:.2f}"
    assert cell(table, sync, "goodput \u00f7 CUBIC") == f"{GOODPUT[sync] / GOODPUT[cubic]:.2f}"
    assert cell(table, sync, "drops \u00f7 CUBIC") == f"{DROP_PCT[sync] / DROP_PCT[cubic]:.2f}"
    assert cell(table, sync, "drops \u00f7 Reno") == "\u2014"  # Reno dropped nothing
    assert cell(table, reno, "goodput \u00f7 Reno") == "1.00"
    assert cell(table, sync, "goodput Mbit/s") == f"{GOODPUT[sync]:.2f}"
    assert cell(table, sync, "utilization %") == "90.0"
    # only the sync case crosses r1r2; its queue there is compared with nothing
    r1r2 = parse(built["html"]).tables["summary-r1r2"]
    assert [r[0] for r in r1r2[1:]] == [sync]
    assert cell(r1r2, sync, "queue \u00f7 Reno") == "\u2014"


def test_http_and_flow_tables(built: Dict[str, Any]) -> None:
    tables = parse(built["html"]).tables
    assert [r[0] for r in tables["http"][1:]] == ["sync-droptail"]
    flows = tables["flows"]
    assert len(flows) - 1 == 3 * 2 + 3  # flows.json of reno and sync, summary flows of cubic
    assert "<details>" in built["html"]


def test_summary_csv_rows(built: Dict[str, Any]) -> None:
    with open(built["csv"], newline="") as fh:
        rows = list(csv.DictReader(fh))
    assert list(rows[0]) == list(tables.SUMMARY_COLUMNS)  # no fields beyond the schema's
    got = [(r["case"], r["link"]) for r in rows]
    want = [(cid, link) for cid in GOODPUT for link in LINKS[cid]]
    assert got == want
    for r in rows:
        assert float(r["goodput_mbit"]) == GOODPUT[r["case"]]
        assert float(r["drop_pct"]) == DROP_PCT[r["case"]]
        assert r["platform_ceiling_mbit"] == ""
        assert r["http_responses"] == ("120" if r["case"] == "sync-droptail" else "")
    first = built["csv"].read_text()
    tables.write_summary_csv(built["run"])
    assert built["csv"].read_text() == first


def test_loaders_read_every_line(built: Dict[str, Any]) -> None:
    cdir = built["run"] / "sync-droptail"
    assert len(read_queue_csv(cdir / "queue-r0r1.csv")) == 300
    assert len(list(read_tcp_jsonl(cdir / "tcp-snd.jsonl"))) == 60
    rows = read_http_csv(cdir / "http.csv")
    assert len(rows) == len(http_rows())
    run = load_run(built["run"])
    case = run.case("sync-droptail")
    assert case is not None and case.queue_links() == ["r0r1", "r1r2"]
    assert run.case("cubic-droptail").http() == []  # type: ignore[union-attr]
    assert run.links() == ["r0r1", "r1r2"]


def test_a_cut_off_last_line_is_an_error_naming_file_and_line(tmp_path: Path) -> None:
    """A sample is read or the reader fails: a writer stopped mid-line loses nothing silently."""
    queue, tcp = tmp_path / "queue-lr.csv", tmp_path / "tcp-s1.jsonl"
    write_queue(queue, 10.0, rows=5, truncated=True)
    with pytest.raises(RunDirError, match=r"queue-lr.csv:7: the last line is cut off"):
        read_queue_csv(queue)
    write_tcp(tcp, samples=3, truncated=True)
    with pytest.raises(RunDirError, match=r"tcp-s1.jsonl:4: the last line is cut off"):
        list(read_tcp_jsonl(tcp))
    tcp.write_text('{"t": 1.0, "sockets": []}\n{"t": 2.0}\n')
    with pytest.raises(RunDirError, match=r"tcp-s1.jsonl:2: not a sample"):
        list(read_tcp_jsonl(tcp))
    queue.write_text("t,qlen_pkts,backlog_bytes,drops,sent_pkts,sent_bytes\n1,2,3,4,5,inf\n")
    with pytest.raises(RunDirError, match=r"queue-lr.csv:2: sent_bytes is 'inf', not a number"):
        read_queue_csv(queue)
    queue.write_text("t,qlen_pkts,backlog_bytes,drops,sent_pkts,sent_bytes\n1,2,3,4,5,6\n")
    assert read_queue_csv(queue)[0].marks == 0.0        # a run from before the marks column


def test_report_of_a_run_with_a_bad_file_is_one_line(tmp_path: Path,
                                                      capsys: pytest.CaptureFixture) -> None:
    run = make_run(tmp_path / "run")
    with open(run / "sync-droptail" / "queue-r0r1.csv", "a") as fh:
        fh.write("12.5,x,0,0,0,0,0\n")
    assert report.main([str(run)]) == 2
    err = capsys.readouterr().err.strip()
    assert err.startswith("report: ") and err.endswith("queue-r0r1.csv:302: qlen_pkts is 'x', "
                                                       "not a number")
    assert "\n" not in err


def test_http_split_and_cwnd_labels(built: Dict[str, Any]) -> None:
    run = load_run(built["run"])
    case = run.case("sync-droptail")
    assert case is not None
    ok = [r for r in http_rows() if r[5] == 1]
    parts = plots.http_parts(case)
    assert list(parts) == ["all", "small", "large"]
    assert sorted(parts["all"]) == sorted((r[1] - r[0]) * 1e3 for r in ok)
    assert len(parts["small"]) == sum(1 for r in ok if r[3] <= 25560)
    assert len(parts["large"]) == sum(1 for r in ok if r[3] > 25560)
    assert 0 < len(parts["small"]) < len(ok)
    series = plots.cwnd_series(case)
    assert list(series) == ["f01", "f02", f"10.0.1.1:{UNMATCHED_SPORT}"]
    xs, ys = series["f02"]
    assert len(xs) == 60 and xs[0] == 0.0 and ys[0] == 15.0


def test_missing_samples_still_give_a_report(tmp_path: Path) -> None:
    run = make_run(tmp_path / "run", with_samples=False)
    pngs = plots.write_plots(run)
    assert {p.name for p in pngs} == {"summary-r0r1.png", "summary-r1r2.png", "goodput-flows.png"}
    for p in pngs:
        assert_png(p)
    html_text = report.write_report(run, pngs).read_text()
    assert "summary-r0r1" in html_text and "http-rt" not in html_text


def test_case_ids_and_links_stay_inside_the_run(tmp_path: Path) -> None:
    run = make_run(tmp_path / "run", with_samples=False)
    outside = tmp_path / "outside"
    outside.mkdir()
    write_queue(outside / "queue-r0r1.csv", 1.0)
    summary = json.loads((run / "summary.json").read_text())
    summary["cases"].append({"id": "../outside", "cc": "x", "aqm": "y",
                             "bottlenecks": [{"link": "r0r1", "mean_pkts": 1.0}]})
    (run / "summary.json").write_text(json.dumps(summary))
    loaded = load_run(run)
    case = loaded.case("../outside")
    assert case is not None and case.queue("r0r1") == [] and case.queue_links() == []
    assert loaded.case("sync-droptail").queue("../../outside/queue-r0r1") == []  # type: ignore
    assert report.write_report(loaded).is_file()


def test_strings_from_files_are_escaped(tmp_path: Path) -> None:
    evil = '<script>alert("x")</script> $a_b$'
    run = make_run(tmp_path / "run", scenario=evil, with_samples=False)
    html_text = report.write_report(run).read_text()  # also draws plots titled with it
    assert "<script" not in html_text
    assert "&lt;script&gt;alert(&quot;x&quot;)&lt;/script&gt;" in html_text


def test_cli_regenerates_and_prints_path(tmp_path: Path, capsys: pytest.CaptureFixture) -> None:
    run = make_run(tmp_path / "run", with_samples=False)
    (run / "plots").mkdir()
    (run / "plots" / "stale.png").write_bytes(PNG_MAGIC)
    assert report.main([str(run)]) == 0
    out = capsys.readouterr().out.strip()
    assert out == str(run / "report.html")
    assert Path(out).is_file() and (run / "summary.csv").is_file()
    assert not (run / "plots" / "stale.png").exists()
    assert len(list((run / "plots").glob("*.png"))) == 3


def test_cli_rejects_non_run_dirs(tmp_path: Path, capsys: pytest.CaptureFixture) -> None:
    assert report.main([str(tmp_path)]) == 2
    assert "not a run directory" in capsys.readouterr().err
    assert report.main([str(tmp_path / "missing")]) == 2
    bad = make_run(tmp_path / "v2", with_samples=False)
    meta = json.loads((bad / "meta.json").read_text())
    (bad / "meta.json").write_text(json.dumps({**meta, "schema": 2}))
    assert report.main([str(bad)]) == 2
    assert "schema 2" in capsys.readouterr().err
    with pytest.raises(RunDirError):
        load_run(bad)


def test_module_cli_exit_code(tmp_path: Path) -> None:
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(ROOT / "testbed"),
                                                       os.environ.get("PYTHONPATH", "")])}
    res = subprocess.run([sys.executable, "-m", "synctcp_testbed.analysis.report", str(tmp_path)],
                         capture_output=True, text=True, env=env, timeout=60)
    assert res.returncode == 2
    assert "not a run directory" in res.stderr and "Traceback" not in res.stderr


@pytest.mark.parametrize("util, warned", [(0.90, True), (0.97, False)])
def test_report_prints_the_ceiling_and_warns_below_95_percent(
        tmp_path: Path, util: float, warned: bool) -> None:
    from synctcp_testbed.analysis.report import render_report

    root = make_run(tmp_path / "run", with_samples=False)
    summary = json.loads((root / "summary.json").read_text())
    ceil = dict(summary["cases"][0], id="cubic-ceiling", cc="cubic", aqm="ceiling",
                goodput_mbit=20 * util)
    ceil["bottlenecks"] = [dict(ceil["bottlenecks"][0], rate_mbit=20.0, utilization=util)]
    summary["cases"].insert(0, ceil)
    (root / "summary.json").write_text(json.dumps(summary))
    meta = json.loads((root / "meta.json").read_text())
    meta.update({"platform": "uml", "time_mode": "simulated (time-travel=inf-cpu)", "jobs": 2,
                 "wall_cost": {"wall_s": 50.0, "simulated_s": 80.0, "instance_wall_s": 100.0,
                               "simulated_per_wall_s": 0.8}})
    (root / "meta.json").write_text(json.dumps(meta))
    html_text = render_report(load_run(root), [])
    t = parse(html_text).tables
    assert cell(t["ceiling"], "cubic-ceiling", "utilization %") == f"{100 * util:.1f}"
    assert ("carried less than 95% of the link in cubic-ceiling" in html_text) == warned
    assert "80 simulated s in 100 instance wall s (0.8 simulated s per wall s), 2 at once" \
        in html_text


def test_report_shows_one_way_figures_with_their_bounds_and_warns(tmp_path: Path) -> None:
    """A run on hosts (docs/real-hosts.md): each case's queuing delay, OTT and min OTT
    as value ± bound, the clocks' basis, and the warning of analysis/oneway.py."""
    from synctcp_testbed.analysis.report import render_report

    root = make_run(tmp_path / "run", with_samples=False)
    summary = json.loads((root / "summary.json").read_text())
    first = summary["cases"][0]
    first["oneway"] = {"source": "owts", "samples": 40, "ott_ms": 22.5, "min_ott_ms": 20.0,
                       "qdelay_ms": 2.5, "qdelay_bound_ms": 0.6, "ott_bound_ms": 0.3,
                       "clock_bound_ms": 0.3, "clock_basis": "dc1: chrony PPS; dc2: chrony PPS",
                       "note": "the option's OTT within the clocks' bound"}
    (root / "summary.json").write_text(json.dumps(summary))
    html_text = render_report(load_run(root), [])
    t = parse(html_text).tables
    assert cell(t["oneway"], first["id"], "queuing delay") == "2.50 \u00b1 0.60 ms"
    assert cell(t["oneway"], first["id"], "OTT") == "22.50 \u00b1 0.30 ms"
    assert cell(t["oneway"], first["id"], "min OTT") == "20.00 \u00b1 0.30 ms"
    assert f"{first['id']}: the queuing delay's bound \u00b10.600 ms exceeds a tenth" \
        in html.unescape(html_text)
