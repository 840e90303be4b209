"""flowgen without root: its config, its result, the runner's use of both, its C build.

The real traffic test (namespaces, a 10 Mbit/s bottleneck) is
tests/kernel/test_flowgen.py.
"""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path
from typing import Any, Dict, List

import pytest

from synctcp_testbed.platform import helpers as native
from synctcp_testbed.case import collect
from synctcp_testbed.case.errors import RunError
from synctcp_testbed.plan.flows import Flow
from synctcp_testbed.traffic.flowgen import (FlowgenError, FlowSpec, config_text, gaps, limit_for,
                                     parse_result, window_bytes)
from synctcp_testbed.scenario import Case, from_dict

CC = shutil.which("cc") or shutil.which("gcc")


def spec(**kw: Any) -> FlowSpec:
    d: Dict[str, Any] = dict(id="f01", kind="bulk", src_ns="ns-a", dst_ns="ns-b",
                             src_addr="10.0.0.1", dst_addr="10.0.0.2", port=5201, cport=40001,
                             cc="reno", start_s=0.0, seconds=10.0)
    d.update(kw)
    return FlowSpec(**d)


def flow_doc(**kw: Any) -> Dict[str, Any]:
    d: Dict[str, Any] = {
        "id": "f01", "kind": "bulk", "port": 5201, "cport": 40001, "cc_requested": "reno",
        "cc": "reno", "start_s": 0.0, "seconds": 10.0, "started": 0.0, "connected": 0.01,
        "stopped": 10.0, "recv_end": 10.2, "bytes_sent": 3000, "bytes_received": 3000,
        "retransmits": 4, "tcp_info": {"total_retrans": 4}, "error": None,
        "intervals": [[0.01, 1.0, 100], [1.0, 2.0, 1000], [2.0, 3.0, 1000], [3.0, 3.5, 900]],
        "retrans": [[1.0, 1], [2.0, 1], [3.0, 3]]}
    d.update(kw)
    return d


def result_text(*flows: Dict[str, Any], go: float = 100.0) -> str:
    return json.dumps({"flowgen": 1, "interval_s": 1.0, "go_monotonic": go,
                       "times": "seconds from go", "stopped": None, "flows": list(flows)})


# ---------------------------------------------------------------------------
# config


def test_config_has_a_line_per_flow_in_flowgens_field_order() -> None:
    text = config_text([spec(), spec(id="f02", kind="cbr", port=6202, cport=40002, cc="-",
                                     start_s=2.5, seconds=7, rate_bps=64000, pkt_bytes=200)])
    lines = [ln for ln in text.splitlines() if not ln.startswith("#")]
    assert lines == [
        "flow f01 bulk ns-a ns-b 10.0.0.1 10.0.0.2 5201 40001 reno 0.000000 10.000000",
        "flow f02 cbr ns-a ns-b 10.0.0.1 10.0.0.2 6202 40002 - 2.500000 7.000000 64000 200"]


@pytest.mark.parametrize("kw, msg", [
    (dict(cc="my cc"), "blank"), (dict(src_ns=""), "empty"), (dict(kind="http"), "neither"),
    (dict(port=0), "port"), (dict(cport=70000), "cport"), (dict(seconds=0), "length"),
    (dict(kind="cbr", rate_bps=10), "cbr rate"),
    (dict(kind="cbr", rate_bps=64000, pkt_bytes=20), "cbr rate"), (dict(id="f#1"), "'#'")])
def test_config_refuses_bad_flows_with_one_line(kw: Dict[str, Any], msg: str) -> None:
    with pytest.raises(FlowgenError, match=msg) as exc:
        config_text([spec(**kw)])
    assert "\n" not in str(exc.value)


def test_config_refuses_no_flows_and_duplicate_ids() -> None:
    with pytest.raises(FlowgenError, match="no flows"):
        config_text([])
    with pytest.raises(FlowgenError, match="unique"):
        config_text([spec(), spec(port=5202, cport=40002)])


def test_limit_is_the_last_end_plus_slack() -> None:
    assert limit_for([spec(start_s=5, seconds=30), spec(id="f02", seconds=20)], 100) == 135


# ---------------------------------------------------------------------------
# result


def test_result_parses_flows_and_intervals() -> None:
    cbr = flow_doc(id="f02", kind="cbr", cc=None, cc_requested=None, retransmits=None,
                   tcp_info=None, lost_pct=2.5, packets_sent=200, packets_received=195)
    res = parse_result(result_text(flow_doc(), cbr))
    assert res.go_monotonic == 100.0 and res.interval_s == 1.0 and res.stopped is None
    f = res.flows["f01"]
    assert (f.cc, f.retransmits, f.error) == ("reno", 4, None)
    assert f.intervals[1] == (1.0, 2.0, 1000)
    c = res.flows["f02"]
    assert (c.kind, c.lost_pct, c.packets_sent, c.retransmits) == ("cbr", 2.5, 200, None)


@pytest.mark.parametrize("text, msg", [
    ("not json", "not JSON"), ("[]", "version 1"), ('{"flowgen": 2, "flows": []}', "version 1"),
    (result_text(flow_doc(intervals=[[0, 1]])), "intervals of f01"),
    (result_text(flow_doc(intervals=[[0, 1, "x"]])), "not numbers"),
    (result_text(flow_doc(port="5201")), "port of f01"),
    (result_text(flow_doc(kind="tcp")), "kind of f01"),
    (result_text({"kind": "bulk"}), "without an id")])
def test_bad_results_are_one_line_errors(text: str, msg: str) -> None:
    with pytest.raises(FlowgenError, match=msg) as exc:
        parse_result(text)
    assert "\n" not in str(exc.value)


def test_window_keeps_whole_intervals_inside() -> None:
    ivals = [(0.2, 1.0, 10), (1.0, 2.0, 100), (2.0, 3.0, 200), (3.0, 3.4, 7)]
    assert window_bytes(ivals, 1.0, 3.0) == (300, 2.0)
    assert window_bytes(ivals, 0.0, 10.0) == (317, pytest.approx(3.2))
    assert window_bytes(ivals, 1.5, 2.5) == (0, 0)


def test_gaps_finds_non_contiguous_intervals() -> None:
    assert gaps([(0, 1, 1), (1, 2, 1)]) == []
    assert gaps([(0, 1, 1), (1.5, 2, 1)]) == [(1, 1.5)]


# ---------------------------------------------------------------------------
# the runner's use of a result


def flow(**kw: Any) -> Flow:
    d: Dict[str, Any] = dict(id="f01", group="fwd", cc="reno", src="a1", dst="b1", port=5201,
                             cport=40001, base_rtt_ms=50.0)
    d.update(kw)
    return Flow(**d)


def test_flow_record_has_goodput_over_the_window_and_keeps_its_keys() -> None:
    res = parse_result(result_text(flow_doc())).flows["f01"]
    rec = collect.flow_result("c", flow(), res, 1.0, 3.0)
    assert rec["bytes"] == 2000
    assert rec["goodput_mbit"] == pytest.approx(2000 * 8 / 2.0 / 1e6)
    assert rec["retransmits"] == 3 - 1 and rec["retransmits_total"] == 4
    assert rec["udp_lost_pct"] is None
    assert (rec["sport"], rec["dport"]) == (40001, 5201)
    for key in ("id", "group", "cc", "src", "dst", "base_rtt_ms", "kind", "start_s"):
        assert key in rec


def test_cbr_record_reports_lost_percent() -> None:
    res = parse_result(result_text(flow_doc(kind="cbr", cc=None, retransmits=None,
                                            lost_pct=1.5))).flows["f01"]
    rec = collect.flow_result("c", flow(kind="cbr", cc="udp"), res, 1.0, 3.0)
    assert rec["udp_lost_pct"] == 1.5 and rec["retransmits"] == 0


def test_a_flow_that_ran_another_cc_or_failed_is_an_error() -> None:
    res = parse_result(result_text(flow_doc(cc="cubic"))).flows["f01"]
    with pytest.raises(RunError, match="ran cubic, not reno"):
        collect.flow_result("c", flow(), res, 1.0, 3.0)
    res = parse_result(result_text(flow_doc(error="connect: Connection refused"))).flows["f01"]
    with pytest.raises(RunError, match="f01 .a1->b1.: connect: Connection refused"):
        collect.flow_result("c", flow(), res, 1.0, 3.0)


def window_case(duration: float = 30, warmup: float = 5) -> Case:
    sc = from_dict({"name": "t", "cc": ["reno"], "aqm": ["droptail"], "duration_s": duration,
                    "warmup_s": warmup, "topology": {"rtts_ms": [40], "rate_mbit": 10,
                                                     "queue_pkts": 50},
                    "traffic": {"bulk_fwd": True}})
    return sc.cases()[0]


def test_window_starts_warmup_after_the_last_start_on_the_interval_grid(tmp_path: Path) -> None:
    docs = [flow_doc(started=0.0, stopped=40.0),
            flow_doc(id="f02", started=2.3, stopped=38.3)]
    fg = parse_result(result_text(*docs, go=1000.0))
    t_start, t_end, go = collect.measured_window(window_case(), 999.0, fg)
    assert go == 1000.0
    assert t_start == 1000.0 + 8.0          # ceil(2.3 + 5)
    assert t_end == 1000.0 + 8.0 + 25.0     # duration - warmup, before the first stop


def test_window_ends_at_the_grid_point_before_the_first_stop(tmp_path: Path) -> None:
    fg = parse_result(result_text(flow_doc(started=0.0, stopped=20.6), go=10.0))
    t_start, t_end, _ = collect.measured_window(window_case(), 0.0, fg)
    assert (t_start, t_end) == (15.0, 30.0)


def test_no_window_left_is_an_error(tmp_path: Path) -> None:
    fg = parse_result(result_text(flow_doc(started=0.0, stopped=4.0)))
    with pytest.raises(RunError, match="no measured interval"):
        collect.measured_window(window_case(), 0.0, fg)


# ---------------------------------------------------------------------------
# the C program, without root: its build and its refusals


@pytest.fixture(scope="module")
def flowgen_bin(tmp_path_factory: pytest.TempPathFactory) -> str:
    if CC is None:
        pytest.skip("no C compiler")
    out = tmp_path_factory.mktemp("fg") / "flowgen"
    res = subprocess.run([CC, *native.CFLAGS, "-Werror", "-o", str(out),
                          str(native.FLOWGEN_SOURCE)], capture_output=True, text=True)
    assert res.returncode == 0, res.stderr
    return str(out)


def test_qsampler_builds_without_warnings(tmp_path: Path) -> None:
    if CC is None:
        pytest.skip("no C compiler")
    res = subprocess.run([CC, *native.CFLAGS, "-Werror", "-o", str(tmp_path / "q"),
                          str(native.QSAMPLER_SOURCE)], capture_output=True, text=True)
    assert res.returncode == 0, res.stderr


def run_fg(binary: str, tmp_path: Path, conf: str, *extra: str) -> subprocess.CompletedProcess:
    (tmp_path / "c.conf").write_text(conf)
    return subprocess.run([binary, "-c", str(tmp_path / "c.conf"), "-o", str(tmp_path / "r.json"),
                           *extra], capture_output=True, text=True, timeout=30,
                          stdin=subprocess.DEVNULL)


GOOD = "flow f01 bulk nsa nsb 10.0.0.1 10.0.0.2 5201 40001 reno 0 10\n"


@pytest.mark.parametrize("conf, msg", [
    ("", "no flows"),
    ("hello\n", "unknown directive hello"),
    ("flow f01 bulk nsa nsb 10.0.0.1 10.0.0.2 5201 40001 reno 0\n", "11 fields"),
    ("flow f01 bulk nsa nsb 10.0.0.1 10.0.0.2 0 40001 reno 0 10\n", "ports"),
    ("flow f01 tcp nsa nsb 10.0.0.1 10.0.0.2 5201 40001 reno 0 10\n", "neither bulk nor cbr"),
    ("flow f01 bulk nsa nsb 10.0.0.1 fe80::1 5201 40001 reno 0 10\n", "IPv4"),
    ("flow f01 cbr nsa nsb 10.0.0.1 10.0.0.2 5201 40001 - 0 10 64000\n", "13 fields"),
    ("flow f01 bulk nsa nsb 10.0.0.1 10.0.0.2 5201 40001 reno 0 x\n", "SECONDS"),
    ("flow f01 cbr nsa nsb 10.0.0.1 10.0.0.2 5201 40001 - 0 10 64000 20\n", "PKT_BYTES 24"),
    (GOOD + GOOD.replace("40001", "40002"), "f01 twice"),
    (GOOD + GOOD.replace("f01", "f02"), "share port 5201"),
    (GOOD.replace(" 10\n", " 5000\n"), "after the limit"),
    (GOOD.replace("nsa", "no-such-ns-flowgen-test"), "cannot open namespace")])
def test_flowgen_refuses_bad_configs_with_one_line_and_status_2(
        flowgen_bin: str, tmp_path: Path, conf: str, msg: str) -> None:
    res = run_fg(flowgen_bin, tmp_path, conf, "-l", "600")
    assert res.returncode == 2, res
    lines: List[str] = res.stderr.splitlines()
    assert len(lines) == 1 and lines[0].startswith("flowgen: ") and msg in lines[0], res.stderr
    assert not (tmp_path / "r.json").exists()


@pytest.mark.parametrize("args", [[], ["-c"], ["-c", "x", "-o", "y", "-i", "0"],
                                  ["-c", "x", "-o", "y", "-l", "-1"], ["-c", "x", "-o", "y", "-w", "-5"],
                                  ["-c", "x", "-o", "y", "-W", "-1"],
                                  ["-c", "x", "-o", "y", "-W", "2000000000"], ["--what", "x"]])
def test_flowgen_usage_errors_exit_2(flowgen_bin: str, args: List[str]) -> None:
    res = subprocess.run([flowgen_bin, *args], capture_output=True, text=True, timeout=10)
    assert res.returncode == 2 and len(res.stderr.splitlines()) == 1, res


def test_side_must_be_both_send_or_recv(flowgen_bin: str, tmp_path: Path) -> None:
    res = run_fg(flowgen_bin, tmp_path, GOOD, "--side", "sender")
    assert res.returncode == 2 and res.stderr.strip() == "flowgen: --side must be both, send or recv"


def test_sides_on_two_processes_over_loopback(flowgen_bin: str, tmp_path: Path) -> None:
    """--side (real hosts, issue 30): one process receives, another sends, each in its own
    namespace ("-"); the receiver's bytes are the sender's, and a receive-only CBR end
    takes the count sent from the end marker.  Loopback only, under a second of traffic."""
    conf = tmp_path / "c.conf"
    conf.write_text("flow f01 bulk - - 127.0.0.1 127.0.0.1 25201 45001 reno 0 0.5\n"
                    "flow f02 cbr - - 127.0.0.1 127.0.0.1 26201 45002 - 0 0.5 800000 1000\n")
    procs = {}
    for side in ("recv", "send"):               # the receivers listen before the senders connect
        p = subprocess.Popen([flowgen_bin, "-c", str(conf), "-o", str(tmp_path / f"{side}.json"),
                              "-l", "30", "--side", side], stdin=subprocess.PIPE,
                             stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        assert p.stdout is not None and p.stdout.readline().strip() == "ready", p.stderr
        procs[side] = p
    for p in procs.values():
        assert p.stdin is not None
        p.stdin.write("go\n")
        p.stdin.close()
    for side, p in procs.items():
        assert p.wait(timeout=30) == 0, (side, p.stderr.read() if p.stderr else "")
    send = json.loads((tmp_path / "send.json").read_text())
    recv = json.loads((tmp_path / "recv.json").read_text())
    assert (send["side"], recv["side"]) == ("send", "recv")
    assert abs(send["go_realtime"] - recv["go_realtime"]) < 5      # one clock, seconds apart
    s1, r1 = send["flows"][0], recv["flows"][0]
    assert s1["cc"] == "reno" and s1["bytes_sent"] > 0 and s1["error"] is None
    assert r1["bytes_received"] == s1["bytes_sent"] and r1["intervals"]
    s2, r2 = send["flows"][1], recv["flows"][1]
    assert r2["error"] is None and r2["packets_sent"] == s2["packets_sent"] > 0
    assert r2["packets_received"] == r2["packets_sent"] and r2["lost_pct"] == 0.0


def test_a_window_clamp_runs_a_bulk_flow_to_its_end(flowgen_bin: str, tmp_path: Path) -> None:
    """-W (window_segs): the receiver's buffer and clamp are set (a refused one is an
    exit 2 naming the flow), the flow runs; its clamp is measured on a delayed path by
    tests/kernel/test_remote_run.py (loopback's 64 KB segments say nothing of it)."""
    conf = tmp_path / "c.conf"
    conf.write_text("flow f01 bulk - - 127.0.0.1 127.0.0.1 25211 45011 reno 0 0.3\n")
    res = subprocess.run([flowgen_bin, "-c", str(conf), "-o", str(tmp_path / "r.json"), "-l", "30",
                          "-W", str(46 * 1448)], input="go\n", capture_output=True, text=True,
                         timeout=60)
    assert res.returncode == 0, res.stderr
    flow = json.loads((tmp_path / "r.json").read_text())["flows"][0]
    assert flow["error"] is None and flow["bytes_received"] > 0, flow
