"""The runner's metrics, each against small hand-built inputs with exact values.

Every metric function of a case is here: flowgen's result parsed
(``parse_result``), goodput and retransmissions over the measured interval
(``window_bytes``, ``window_retrans``), the measured interval itself
(``measured_window``), one flow's record (``flow_result``), a whole case
(``collect``), its HTTP responses (``http_result``) and
the inet_diag attribute walk (``synctcp.diag``).  The values are chosen so
that a bound moved by one, a window end swapped, a term dropped or a
whole-flow count in place of a windowed one changes an expected number
(the mutations tried, and the test that failed on each, are listed at
the end of this file).
"""

from __future__ import annotations

import json
import struct
from pathlib import Path
from typing import Any, Dict, List, Optional, Tuple

import pytest

from synctcp import diag
from synctcp.pcap import read_tcp
from synctcp_testbed.case import collect, scripts
from synctcp_testbed.case.errors import RunError
from synctcp_testbed.plan.flows import Flow, HttpPair, Plan
from synctcp_testbed.analysis import stats
from synctcp_testbed.traffic.flowgen import (FlowgenError, parse_result, total_at, window_bytes,
                                     window_retrans)
from synctcp_testbed.traffic.http.records import CSV_FIELDS
from synctcp_testbed.scenario import Case, from_dict

GO = 100.0


def flow_doc(fid: str = "f01", started: Optional[float] = 0.0,
             stopped: Optional[float] = 8.0,
             intervals: Optional[List[List[float]]] = None,
             retrans: Optional[List[List[float]]] = None, total: int = 20,
             **kw: Any) -> Dict[str, Any]:
    """A bulk flow of flowgen's result: 1 s grid from go, 8 s of sending."""
    d: Dict[str, Any] = {
        "id": fid, "kind": "bulk", "port": 5201, "cport": 40001, "cc_requested": "reno",
        "cc": "reno", "start_s": 0.0, "seconds": 8.0, "started": started, "connected": started,
        "stopped": stopped, "recv_end": None if stopped is None else stopped + 0.2,
        "bytes_sent": 0, "bytes_received": 0,
        "retransmits": total, "tcp_info": {"total_retrans": total}, "error": None,
        "intervals": intervals if intervals is not None else [
            [0.01, 1.0, 1], [1.0, 2.0, 10], [2.0, 3.0, 100], [3.0, 4.0, 1000],
            [4.0, 5.0, 2000], [5.0, 6.0, 4000], [6.0, 7.0, 8000], [7.0, 8.0, 30000],
            [8.0, 8.2, 50000]],
        "retrans": retrans if retrans is not None else [
            [1.0, 0], [2.0, 5], [3.0, 7], [4.0, 7], [5.0, 9], [6.0, 9], [7.0, 12], [8.0, 20]],
    }
    d.update(kw)
    return d


def result_text(*flows: Dict[str, Any], go: float = GO, step: float = 1.0) -> str:
    return json.dumps({"flowgen": 1, "interval_s": step, "go_monotonic": go,
                       "times": "seconds from go", "stopped": None, "flows": list(flows)})


def flow(**kw: Any) -> Flow:
    d: Dict[str, Any] = dict(id="f01", group="fwd", cc="reno", src="s1", dst="r1", port=5201,
                             cport=40001, base_rtt_ms=40.0)
    d.update(kw)
    return Flow(**d)


# ---------------------------------------------------------------------------
# flowgen's result


def test_result_keeps_interval_order_and_retransmission_samples() -> None:
    f = parse_result(result_text(flow_doc())).flows["f01"]
    assert f.intervals[0] == (0.01, 1.0, 1)
    assert f.intervals[-1] == (8.0, 8.2, 50000)
    assert f.retrans[1] == (2.0, 5) and f.retrans[-1] == (8.0, 20)
    assert (f.retransmits, f.started, f.stopped, f.recv_end) == (20, 0.0, 8.0, 8.2)


def test_result_without_retransmission_samples_has_none() -> None:
    doc = flow_doc()
    del doc["retrans"]
    assert parse_result(result_text(doc)).flows["f01"].retrans == []


@pytest.mark.parametrize("retrans", [[[1.0]], [[1.0, "3"]], [[1.0, True]], [[1.0, 2.5]], 3])
def test_bad_retransmission_samples_are_one_line_errors(retrans: Any) -> None:
    with pytest.raises(FlowgenError, match="retrans of f01 are not") as exc:
        parse_result(result_text(flow_doc(retrans=retrans)))
    assert "\n" not in str(exc.value)


# ---------------------------------------------------------------------------
# windows of bytes and of retransmissions


IVALS: List[Tuple[float, float, int]] = [(0.2, 1.0, 1), (1.0, 2.0, 10), (2.0, 3.0, 100),
                                         (3.0, 4.0, 1000), (4.0, 4.5, 10000)]


@pytest.mark.parametrize("start, end, want", [
    (1.0, 3.0, (110, 2.0)),             # both ends on a boundary: those intervals count
    (0.999999, 3.000001, (110, 2.0)),   # within eps of a boundary
    (1.1, 3.0, (100, 1.0)),             # an interval cut at the start is left out
    (1.0, 2.9, (10, 1.0)),              # and one cut at the end
    (0.0, 9.0, (11111, 4.3)),
    (2.0, 2.0, (0, 0.0)),
])
def test_window_bytes_counts_the_intervals_wholly_inside(start: float, end: float,
                                                         want: Tuple[int, float]) -> None:
    nbytes, secs = window_bytes(IVALS, start, end)
    assert nbytes == want[0] and secs == pytest.approx(want[1])


RS = [(1.0, 0), (2.0, 5), (3.0, 7), (4.0, 7), (5.0, 9)]


def test_total_at_is_the_last_sample_at_or_before() -> None:
    assert total_at(RS, 2.0) == 5
    assert total_at(RS, 2.5) == 5
    assert total_at(RS, 1.9999995) == 5       # within eps
    assert total_at(RS, 0.5) is None
    assert total_at(RS, 99.0) == 9


@pytest.mark.parametrize("start, end, want", [
    (2.0, 5.0, 4),          # 9 at 5 s less 5 at 2 s
    (1.0, 2.0, 5),
    (3.0, 4.0, 0),
    (2.5, 4.5, 2),          # between samples: the last one before each end
    (0.0, 3.0, 7),          # nothing sampled before the start: 0 then
    (0.0, 0.5, None),       # nothing sampled by the end: unknown
])
def test_window_retrans_is_the_increase_over_the_window(start: float, end: float,
                                                        want: Optional[int]) -> None:
    assert window_retrans(RS, start, end) == want


# ---------------------------------------------------------------------------
# one flow's record


def test_flow_record_counts_goodput_and_retransmissions_over_the_same_window() -> None:
    res = parse_result(result_text(flow_doc())).flows["f01"]
    rec = collect.flow_result("c", flow(), res, 3.0, 7.0)
    assert rec["bytes"] == 1000 + 2000 + 4000 + 8000
    assert rec["goodput_mbit"] == pytest.approx(15000 * 8 / 4.0 / 1e6)
    assert rec["retransmits"] == 12 - 7
    assert rec["retransmits_total"] == 20
    assert rec["udp_lost_pct"] is None
    assert (rec["sport"], rec["dport"]) == (40001, 5201)


def test_flow_record_of_an_empty_window_has_zero_goodput() -> None:
    res = parse_result(result_text(flow_doc())).flows["f01"]
    rec = collect.flow_result("c", flow(), res, 3.5, 3.9)
    assert (rec["bytes"], rec["goodput_mbit"], rec["retransmits"]) == (0, 0.0, 0)


def test_flow_record_without_a_retransmission_count_at_the_end_is_an_error() -> None:
    res = parse_result(result_text(flow_doc(retrans=[]))).flows["f01"]
    with pytest.raises(RunError, match="no retransmission count of flow f01"):
        collect.flow_result("c", flow(), res, 3.0, 7.0)


def test_cbr_record_has_no_retransmissions_and_its_loss() -> None:
    doc = flow_doc(kind="cbr", cc=None, cc_requested=None, retransmits=None, tcp_info=None,
                   lost_pct=1.25, retrans=[])
    res = parse_result(result_text(doc)).flows["f01"]
    rec = collect.flow_result("c", flow(kind="cbr", cc="udp"), res, 3.0, 7.0)
    assert (rec["retransmits"], rec["retransmits_total"], rec["udp_lost_pct"]) == (0, 0, 1.25)
    assert rec["goodput_mbit"] == pytest.approx(15000 * 8 / 4.0 / 1e6)


# ---------------------------------------------------------------------------
# the measured interval


def case_of(duration: float = 6, warmup: float = 2, **traffic: Any) -> Case:
    sc = from_dict({"name": "t", "cc": ["reno"], "aqm": ["droptail"], "duration_s": duration,
                    "warmup_s": warmup, "topology": {"rtts_ms": [40, 80], "rate_mbit": 10,
                                                     "queue_pkts": 50},
                    "traffic": {"bulk_fwd": True, **traffic}})
    return sc.cases()[0]


def window(tmp_path: Path, docs: List[Dict[str, Any]], step: float = 1.0,
           **kw: Any) -> Tuple[float, float, float]:
    fg = parse_result(result_text(*docs, step=step))
    return collect.measured_window(case_of(**kw), 99.0, fg)


def test_window_begins_warmup_after_the_last_start_rounded_up_to_the_grid(tmp_path: Path) -> None:
    docs = [flow_doc(started=0.0, stopped=30.0), flow_doc("f02", started=0.4, stopped=30.0)]
    assert window(tmp_path, docs) == (GO + 3.0, GO + 7.0, GO)


def test_window_start_already_on_the_grid_is_not_rounded_further(tmp_path: Path) -> None:
    docs = [flow_doc(started=1.0, stopped=30.0)]
    assert window(tmp_path, docs) == (GO + 3.0, GO + 7.0, GO)


def test_window_on_a_half_second_grid(tmp_path: Path) -> None:
    docs = [flow_doc(started=0.7, stopped=30.0)]
    assert window(tmp_path, docs, step=0.5) == (GO + 3.0, GO + 7.0, GO)


def test_window_ends_at_the_grid_point_at_or_before_the_first_stop(tmp_path: Path) -> None:
    docs = [flow_doc(started=0.0, stopped=30.0), flow_doc("f02", started=0.0, stopped=5.6),
            flow_doc("f03", started=0.0, stopped=6.2)]
    assert window(tmp_path, docs) == (GO + 2.0, GO + 5.0, GO)


def test_window_without_flowgen_is_warmup_to_duration_from_the_release(tmp_path: Path) -> None:
    assert collect.measured_window(case_of(), 50.0, None) == (52.0, 56.0, 50.0)


def test_window_of_flows_that_never_started_is_an_error(tmp_path: Path) -> None:
    with pytest.raises(RunError, match="started no flow"):
        window(tmp_path, [flow_doc(started=None, stopped=None)])


def test_window_with_no_time_left_is_an_error(tmp_path: Path) -> None:
    with pytest.raises(RunError, match="no measured interval"):
        window(tmp_path, [flow_doc(started=0.0, stopped=2.9)])


# ---------------------------------------------------------------------------
# a whole case


class FakeTopo:
    """What _collect asks of a topology: its sampled queues."""

    def sample_points(self) -> List[Tuple[str, str, str, str]]:
        return [("lr", "st-r0", "eth1", "1:"), ("lr-rev", "st-r1", "eth1", "1:"),
                ("s1lr", "st-s1", "eth0", "1:")]       # an access link: not measured


def queue_csv(path: Path, rows: List[Tuple[float, ...]]) -> None:
    path.write_text("t,qlen_pkts,backlog_bytes,drops,sent_pkts,sent_bytes,marks\n" + "".join(
        ",".join(f"{v:g}" for v in r) + "\n" for r in rows))


def http_csv(path: Path, rows: List[Tuple[Any, ...]]) -> None:
    path.write_text(",".join(CSV_FIELDS) + "\n" + "".join(
        ",".join(str(v) for v in r) + "\n" for r in rows))


def plan_of(*flows: Flow, http: Optional[List[HttpPair]] = None) -> Plan:
    return Plan(flows=list(flows), http=http or [])


def collect_case(tmp_path: Path) -> Tuple[Case, Plan]:
    """Two forward flows (one the minority), one reverse flow, one HTTP pair.

    The window is [103, 107]: f02 started last, at 0.4 s, warmup 2 s.
    """
    case = case_of()
    plan = plan_of(flow(), flow(id="f02", group="minority", port=5202, cport=40002),
                   flow(id="f03", group="rev", src="r1", dst="s1", port=5203, cport=40003),
                   http=[HttpPair("s2", "r2", "10.0.0.2", 10.0)])
    docs = [flow_doc(port=5201, cport=40001),
            flow_doc("f02", started=0.4, port=5202, cport=40002,
                     retrans=[[1.0, 0], [2.0, 1], [3.0, 2], [7.0, 3], [8.0, 40]], total=40),
            flow_doc("f03", port=5203, cport=40003,
                     retrans=[[3.0, 100], [7.0, 200]], total=300)]
    (tmp_path / scripts.FLOWGEN_OUT).write_text(result_text(*docs))
    # forward queue: 0.5 s samples from 102.5 to 107.5; only [103, 107] counts
    rows = []
    for k in range(11):
        t = 102.5 + 0.5 * k
        rows.append((t, k, 1500 * k, 2 * k + (50 if t > 107 else 0), 10 * k, 15000 * k,
                     3 * k + (60 if t < 103 else 0)))
    queue_csv(tmp_path / "queue-lr.csv", rows)
    queue_csv(tmp_path / "queue-lr-rev.csv", [(103.0, 0, 0, 0, 0, 0, 0),
                                              (107.0, 0, 0, 0, 8, 12000, 0)])
    http_csv(tmp_path / "http-r2.csv", [
        (102.999, 103.2, 300, 1000, 1000, 1, "r2"),      # before the window
        (103.0, 103.1, 300, 1000, 1000, 1, "r2"),        # at its start: counts
        (105.0, 105.3, 300, 30000, 30000, 1, "r2"),
        (106.0, 106.9, 300, 30000, 200, 0, "r2"),        # cut short: an error
        (107.0, 107.5, 300, 2000, 2000, 1, "r2"),        # at its end: counts
        (107.001, 107.1, 300, 1000, 1000, 1, "r2"),      # after it
    ])
    return case, plan


def test_collect_measures_every_metric_over_the_window(tmp_path: Path) -> None:
    case, plan = collect_case(tmp_path)
    res = collect.collect(case, tmp_path, FakeTopo(), plan, 99.0)    # type: ignore[arg-type]
    assert (res["t_start"], res["t_end"], res["duration_s"]) == (103.0, 107.0, 4.0)
    assert res["t_traffic"] == 99.0
    good = 15000 * 8 / 4.0 / 1e6
    # forward and minority flows; not the reverse one
    assert res["goodput_mbit"] == pytest.approx(2 * good)
    assert res["retransmits"] == (12 - 7) + (3 - 2)
    assert [(f["id"], f["group"], f["retransmits"]) for f in res["flows"]] == [
        ("f01", "fwd", 5), ("f02", "minority", 1), ("f03", "rev", 100)]
    assert res["flows"][2]["goodput_mbit"] == pytest.approx(good)
    lr, rev = res["bottlenecks"]
    assert (lr["link"], rev["link"]) == ("lr", "lr-rev")
    # samples k = 1..9 (t 103..107): counters are differences over them
    assert lr["samples"] == 9
    assert lr["drops"] == 2 * 9 - 2 * 1
    assert lr["sent_pkts"] == 10 * 9 - 10 * 1
    assert lr["marks"] == 3 * 9 - 3 * 1
    assert lr["mark_pct"] == pytest.approx(100.0 * 24 / (80 + 16))
    assert lr["mean_pkts"] == pytest.approx(5.0) and lr["max_pkts"] == 9
    assert lr["utilization"] == pytest.approx(15000 * 8 * 8 / 4.0 / 10e6)
    assert (rev["marks"], rev["mark_pct"], rev["sent_pkts"]) == (0, 0.0, 8)
    http = res["http"]
    assert (http["responses"], http["errors"]) == (3, 1)
    assert http["median_ms"] == pytest.approx(300.0)
    assert http["small_median_ms"] == pytest.approx(100.0)
    assert http["large_median_ms"] == pytest.approx(300.0)
    flows = json.loads((tmp_path / "flows.json").read_text())
    assert [f["retransmits_total"] for f in flows] == [20, 40, 300]


def test_collect_refuses_a_flow_flowgen_did_not_report(tmp_path: Path) -> None:
    case, plan = collect_case(tmp_path)
    plan.flows.append(flow(id="f09", port=5209, cport=40009))
    with pytest.raises(RunError, match="flowgen reported nothing of flow f09"):
        collect.collect(case, tmp_path, FakeTopo(), plan, 99.0)  # type: ignore[arg-type]


def test_collect_refuses_a_queue_with_too_few_samples_in_the_window(tmp_path: Path) -> None:
    case, plan = collect_case(tmp_path)
    queue_csv(tmp_path / "queue-lr-rev.csv", [(103.0, 0, 0, 0, 0, 0, 0)])
    with pytest.raises(RunError, match="queue of lr-rev: too few queue samples"):
        collect.collect(case, tmp_path, FakeTopo(), plan, 99.0)  # type: ignore[arg-type]


# ---------------------------------------------------------------------------
# HTTP responses


def test_http_result_counts_the_responses_started_in_the_window(tmp_path: Path) -> None:
    case, plan = collect_case(tmp_path)
    plan.http.append(HttpPair("s1", "r1", "10.0.0.1", 10.0))
    http_csv(tmp_path / "http-r1.csv", [(104.0, 104.05, 300, 500, 500, 1, "r1"),
                                        (110.0, 110.05, 300, 500, 500, 1, "r1")])
    got = collect.http_result(case, tmp_path, plan, 103.0, 107.0)
    assert got == {"responses": 4, "errors": 1, "median_ms": pytest.approx(100.0),
                   "p90_ms": pytest.approx(500.0), "small_median_ms": pytest.approx(100.0),
                   "large_median_ms": pytest.approx(300.0),
                   "within_1500ms_pct": pytest.approx(80.0),     # 4 of 5: one error
                   # 50, 100 and 500 ms (a hair under each: float seconds), and 300 ms
                   "rt_hist": {"small": [[33, 1], [39, 1], [53, 1]], "large": [[49, 1]]}}
    # http.csv: every response of every client, the window applied later
    lines = (tmp_path / "http.csv").read_text().splitlines()
    assert lines[0] == ",".join(CSV_FIELDS) and len(lines) == 1 + 6 + 2


def test_http_result_of_a_case_without_http_is_none(tmp_path: Path) -> None:
    assert collect.http_result(case_of(), tmp_path, plan_of(), 0.0, 1.0) is None


def test_http_result_without_a_response_in_the_window_is_an_error(tmp_path: Path) -> None:
    case, plan = collect_case(tmp_path)
    with pytest.raises(RunError, match="recorded no response"):
        collect.http_result(case, tmp_path, plan, 200.0, 300.0)


# ---------------------------------------------------------------------------
# the captured flow's loss-delay correlation (--capture)

SAWTOOTH = Path(__file__).resolve().parents[2] / "docs" / "samples" / "ts-sawtooth.pcap"


def test_correlation_of_the_captured_flow_on_rtt_and_ott(tmp_path: Path) -> None:
    # the shipped sample: every one of its 5 losses follows a delay peak
    (tmp_path / "f01.pcap").write_bytes(SAWTOOTH.read_bytes())
    got = collect.correlation(case_of(), tmp_path, flow(port=5001, cport=40000))
    assert got["flow"] == "10.0.0.1:40000>10.0.0.2:5001"
    assert got["capture"]["truncated"] is False and got["capture"]["packets"] > 100
    assert got["capture"]["limit"] == collect.CAPTURE_MAX_PACKETS
    for which in ("rtt", "ott"):
        assert got[which]["cim"]["true"] == 5 and got[which]["cim"]["events"] == 5
    case = {"correlation": got, "flows": [], "bottlenecks": []}
    m = stats.case_metrics(case)
    assert m["cim_rtt"] == 1.0 and m["cim_ott"] == 1.0
    assert m["lcdc1_excess_rtt_ms"] == pytest.approx(got["rtt"]["lcdc"]["-1"]["excess_ms"])
    assert m["lcdc1_excess_rtt_ms"] > 0


def test_a_capture_that_reached_its_limit_says_so(tmp_path: Path,
                                                 monkeypatch: pytest.MonkeyPatch) -> None:
    (tmp_path / "f01.pcap").write_bytes(SAWTOOTH.read_bytes())
    packets, _ = read_tcp(SAWTOOTH)
    n = len(packets)
    span = round(packets[-1].t - packets[0].t, 6)
    assert span > 0
    logged: List[str] = []
    monkeypatch.setattr(collect, "CAPTURE_MAX_PACKETS", n)
    got = collect.correlation(case_of(), tmp_path, flow(port=5001, cport=40000), logged.append)
    assert got["capture"] == {"packets": n, "limit": n, "truncated": True, "span_s": span}
    assert len(logged) == 1 and f"the capture stopped at {n:,} packets" in logged[0]


def test_correlation_of_a_header_only_capture_is_an_error_with_tcpdumps_reason(
        tmp_path: Path) -> None:
    # what tcpdump left on UML's hostfs when it opened the file itself
    (tmp_path / "f01.pcap").write_bytes(SAWTOOTH.read_bytes()[:24])
    (tmp_path / "tcpdump.log").write_text("tcpdump: Couldn't change ownership of savefile\n")
    with pytest.raises(RunError, match="holds no data of flow f01 .0 TCP packets; "
                       "tcpdump: tcpdump: Couldn't change ownership"):
        collect.correlation(case_of(), tmp_path, flow(port=5001, cport=40000))


def test_correlation_of_another_flows_capture_is_an_error(tmp_path: Path) -> None:
    (tmp_path / "f01.pcap").write_bytes(SAWTOOTH.read_bytes())
    with pytest.raises(RunError, match="holds no data of flow f01"):
        collect.correlation(case_of(), tmp_path, flow(port=5201, cport=40001))


def test_correlation_of_a_missing_capture_is_an_error(tmp_path: Path) -> None:
    with pytest.raises(RunError, match="capture f01.pcap: .*tcpdump said nothing"):
        collect.correlation(case_of(), tmp_path, flow())


def test_capture_writes_through_the_shell_not_tcpdumps_own_open(tmp_path: Path) -> None:
    topo = type("T", (), {"links": [type("L", (), {"a": "s1", "b": "l"})(),
                                    type("L", (), {"a": "r1", "b": "l"})()],
                          "dev": lambda self, n, lk: "eth0", "ns": lambda self, n: f"x-{n}"})()
    sender, receiver = scripts.capture_line(topo, flow(), tmp_path).splitlines()  # type: ignore[arg-type]
    for cmd in (sender, receiver):
        assert f" -c {scripts.CAPTURE_MAX_PACKETS} -w - 'tcp port 5201' > " in cmd
    assert sender.startswith("ip netns exec x-s1 ") and sender.endswith("tcpdump.log &")
    assert f"> {tmp_path / 'f01.pcap'} " in sender
    assert receiver.startswith("ip netns exec x-r1 ")
    assert f"> {tmp_path / 'f01-receiver.pcap'} " in receiver
    assert receiver.endswith("tcpdump-receiver.log &")


# ---------------------------------------------------------------------------
# the inet_diag attribute walk


def nla(kind: int, payload: bytes) -> bytes:
    """One netlink attribute, padded to 4 bytes."""
    raw = struct.pack("<HH", 4 + len(payload), kind) + payload
    return raw + b"\0" * (-len(raw) % 4)


def test_attribute_walk_starts_at_offset_and_stops_at_end() -> None:
    buf = b"\xff" * 8 + nla(4, b"reno\0") + nla(7, b"") + nla(9, b"tail")
    end = 8 + 12 + 4                    # the third attribute lies past end
    assert list(diag.iter_attrs(buf, 8, end)) == [(4, b"reno\0"), (7, b"")]


def test_attribute_walk_masks_both_flag_bits() -> None:
    buf = nla(0x8000 | 3, b"ab") + nla(0x4000 | 5, b"cd")
    assert list(diag.iter_attrs(buf, 0, len(buf))) == [(3, b"ab"), (5, b"cd")]


def test_attribute_walk_ignores_a_tail_shorter_than_a_header() -> None:
    buf = nla(2, b"abcd") + b"\0\0\0"
    assert list(diag.iter_attrs(buf, 0, len(buf))) == [(2, b"abcd")]


@pytest.mark.parametrize("buf", [struct.pack("<HH", 2, 1),      # shorter than its header
                                 nla(1, b"abcd")[:7]])         # past end
def test_attribute_walk_refuses_a_bad_length(buf: bytes) -> None:
    with pytest.raises(diag.DiagError, match="malformed netlink attribute at 0"):
        list(diag.iter_attrs(buf, 0, len(buf)))


class FakeMsg(dict):
    """What _parse_message reads of a pyroute2 inet_diag message."""

    def __init__(self, data: bytes, offset: int, attrs: Dict[str, Any]) -> None:
        super().__init__(idiag_family=2, idiag_src="10.0.0.1", idiag_sport=40001,
                         idiag_dst="10.0.0.2", idiag_dport=5201, idiag_state=1,
                         header={"length": len(data) - offset})
        self.data, self.offset, self.attrs = data, offset, attrs

    def get_attr(self, name: str) -> Any:
        return self.attrs.get(name)


def test_socket_record_comes_from_the_attributes_after_the_diag_message() -> None:
    rec = struct.pack("<BBBB", 1, 2, 0x02, 5) + struct.pack("<iIIHH", 100, 2000, 3000, 4, 5)
    # a decoy attribute inside the 72-byte inet_diag_msg, which must not be walked
    decoy = nla(diag.SYNCTCP_DIAG_ATTR, b"\x02" + b"\0" * 19)
    body = b"\0" * 16 + decoy + b"\0" * (72 - len(decoy))
    msg_bytes = body + nla(diag.INET_DIAG_CONG, b"sync\0") + nla(diag.SYNCTCP_DIAG_ATTR, rec)
    data = b"\x99" * 24 + msg_bytes + nla(diag.SYNCTCP_DIAG_ATTR, b"\x03" + b"\0" * 19)
    msg = FakeMsg(data[:24 + len(msg_bytes)] + data[24 + len(msg_bytes):], 24,
                  {"INET_DIAG_CONG": "sync",
                   "INET_DIAG_INFO": {"tcpi_snd_cwnd": 10, "tcpi_total_retrans": 3}})
    msg["header"] = {"length": len(msg_bytes)}
    st = diag._parse_message(msg)
    assert (st.cc, st.sport, st.dport) == ("sync", 40001, 5201)
    assert st.tcp_info == {"cwnd": 10, "retrans": 3}
    assert st.synctcp is not None
    assert (st.synctcp["module"], st.synctcp["qdelay_us"], st.synctcp["congested"]) == \
        ("sync", 2000, True)

# ---------------------------------------------------------------------------
# Mutations tried by hand (one line each, in flowgen.py, the runner (now case/collect.py) or
# synctcp/diag.py),
# each with the first test that failed on it; none survived:
#
#   retrans: whole-flow total instead of windowed
#       -> test_flow_record_counts_goodput_and_retransmissions_over_the_same_window
#   window_retrans: baseline at end instead of start
#       -> test_window_retrans_is_the_increase_over_the_window[2.0-5.0-4]
#   window_retrans: baseline dropped
#       -> test_window_retrans_is_the_increase_over_the_window[2.0-5.0-4]
#   total_at: <= to <
#       -> test_total_at_is_the_last_sample_at_or_before
#   total_at: first sample instead of last
#       -> test_total_at_is_the_last_sample_at_or_before
#   window_bytes: start bound >= to >
#       -> test_window_bytes_counts_the_intervals_wholly_inside[1.0-3.0-want0]
#   window_bytes: end bound <= to <
#       -> test_window_bytes_counts_the_intervals_wholly_inside[1.0-3.0-want0]
#   window_bytes: bounds swapped
#       -> test_window_bytes_counts_the_intervals_wholly_inside[1.0-3.0-want0]
#   window_bytes: seconds as count
#       -> test_window_bytes_counts_the_intervals_wholly_inside[0.0-9.0-want4]
#   parse_result: interval start/end swapped
#       -> test_result_keeps_interval_order_and_retransmission_samples
#   parse_result: retrans samples dropped
#       -> test_result_keeps_interval_order_and_retransmission_samples
#   parse_result: stopped read from started
#       -> test_result_keeps_interval_order_and_retransmission_samples
#   flow_result: goodput over 1 s not secs
#       -> test_flow_record_counts_goodput_and_retransmissions_over_the_same_window
#   flow_result: window from go not shifted
#       -> test_collect_measures_every_metric_over_the_window
#   _window: ceil -> floor for the start
#       -> test_window_begins_warmup_after_the_last_start_rounded_up_to_the_grid
#   _window: last start -> first start
#       -> test_window_begins_warmup_after_the_last_start_rounded_up_to_the_grid
#   _window: first stop -> last stop
#       -> test_window_ends_at_the_grid_point_at_or_before_the_first_stop
#   _window: floor -> ceil for the stop
#       -> test_window_ends_at_the_grid_point_at_or_before_the_first_stop
#   _window: length off by one step
#       -> test_window_begins_warmup_after_the_last_start_rounded_up_to_the_grid
#   _window: warmup dropped (no fg)
#       -> test_window_without_flowgen_is_warmup_to_duration_from_the_release
#   _window: t_end <= t_start to <
#       -> test_window_with_no_time_left_is_an_error
#   _collect: marks off by one index
#       -> test_collect_measures_every_metric_over_the_window
#   _collect: marks window < instead of <=
#       -> test_collect_measures_every_metric_over_the_window
#   _collect: offered drops term dropped
#       -> test_collect_measures_every_metric_over_the_window
#   _collect: minority left out of the totals
#       -> test_collect_measures_every_metric_over_the_window
#   _collect: retrans over all flows
#       -> test_collect_measures_every_metric_over_the_window
#   _collect: queue window bounds swapped
#       -> test_collect_measures_every_metric_over_the_window
#   _http_result: start bound <= to <
#       -> test_collect_measures_every_metric_over_the_window
#   _http_result: end bound <= to <
#       -> test_collect_measures_every_metric_over_the_window
#   _http_result: window on t_end
#       -> test_collect_measures_every_metric_over_the_window
#   _http_result: only the first client
#       -> test_http_result_counts_the_responses_started_in_the_window
#   iter_attrs: no padding
#       -> test_attribute_walk_starts_at_offset_and_stops_at_end
#   iter_attrs: flags not masked
#       -> test_attribute_walk_masks_both_flag_bits
#   iter_attrs: mask of one flag
#       -> test_attribute_walk_masks_both_flag_bits
#   iter_attrs: loop bound <= to <
#       -> test_attribute_walk_starts_at_offset_and_stops_at_end
#   iter_attrs: length < 4 check dropped
#       -> test_attribute_walk_refuses_a_bad_length[\x02\x00\x01\x00]
#   iter_attrs: overrun > to >=
#       -> test_attribute_walk_starts_at_offset_and_stops_at_end
#   iter_attrs: payload includes header
#       -> test_attribute_walk_starts_at_offset_and_stops_at_end
#   _parse_message: attrs walked from the nlmsghdr end
#       -> test_socket_record_comes_from_the_attributes_after_the_diag_message
#   _parse_message: end ignores header length
#       -> test_socket_record_comes_from_the_attributes_after_the_diag_message
