"""Metric definitions on synthetic samples (synctcp_testbed.analysis.metrics)."""

import math

import pytest

from synctcp_testbed.analysis.metrics import (drop_pct, eccdf, ecdf, percentile, queue_stats,
                                              queuing_delay_ms, utilization)
from synctcp_testbed.analysis.rundir import QueueSample


def test_percentile_is_nearest_rank() -> None:
    vals = list(range(1, 101))
    assert percentile(vals, 95) == 95
    assert percentile(vals, 100) == 100
    assert percentile(vals, 0) == 1
    assert percentile([5.0], 50) == 5.0
    assert math.isnan(percentile([], 50))
    with pytest.raises(ValueError):
        percentile(vals, 101)


def test_queuing_delay_is_backlog_over_rate() -> None:
    # 100 packets of 1500 bytes at 20 Mbit/s drain in 60 ms
    assert queuing_delay_ms(150_000, 20) == pytest.approx(60.0)


def test_drop_pct_counts_against_offered_packets() -> None:
    assert drop_pct(1, 99) == pytest.approx(1.0)
    assert drop_pct(0, 0) == 0.0


def test_utilization_of_a_full_link_is_one() -> None:
    assert utilization(2_500_000, 1.0, 20) == pytest.approx(1.0)


def _samples(n: int, hz: float, qlen, rate_mbit: float, util: float, drop_every: int = 0):
    out, sent_b, sent_p, drops = [], 0.0, 0, 0
    per = rate_mbit * 1e6 / 8 * util / hz
    for i in range(n):
        out.append(QueueSample(t=100 + i / hz, qlen_pkts=float(qlen(i)),
                               backlog_bytes=qlen(i) * 1500.0, drops=float(drops),
                               sent_pkts=float(sent_p), sent_bytes=sent_b, marks=0.0))
        sent_b += per
        sent_p += int(per // 1500)
        if drop_every and i % drop_every == 0:
            drops += 1
    return out


def test_queue_stats_over_the_kept_interval() -> None:
    s = _samples(1001, 100, lambda i: i % 101, 20, 0.75)
    qs = queue_stats(s, rate_mbit=20, start_s=100, end_s=110)
    assert qs.samples == 1001
    assert qs.sample_hz == pytest.approx(100, rel=1e-6)
    assert qs.mean_pkts == pytest.approx(sum(i % 101 for i in range(1001)) / 1001)
    assert qs.max_pkts == 100
    assert qs.utilization == pytest.approx(0.75, rel=1e-3)
    assert qs.mean_delay_ms == pytest.approx(qs.mean_pkts * 1500 * 8 / 20e6 * 1e3)


def test_queue_stats_leaves_out_samples_outside_the_interval() -> None:
    s = _samples(1000, 100, lambda i: 50 if i < 500 else 10, 20, 1.0)
    qs = queue_stats(s, rate_mbit=20, start_s=105, end_s=200)
    assert qs.mean_pkts == 10


def test_queue_stats_counts_drops_as_differences() -> None:
    s = _samples(101, 10, lambda i: 5, 10, 1.0, drop_every=10)
    qs = queue_stats(s, rate_mbit=10)
    assert qs.drops == 10
    assert qs.drop_pct == pytest.approx(100 * 10 / (10 + qs.sent_pkts))


def test_queue_stats_refuses_too_few_samples() -> None:
    with pytest.raises(ValueError, match="too few"):
        queue_stats(_samples(1, 10, lambda i: 1, 10, 1.0), rate_mbit=10)


def test_ecdf_and_eccdf_are_step_functions_over_distinct_values() -> None:
    assert ecdf([3.0, 1.0, 2.0, 2.0]) == ([1.0, 2.0, 3.0], [0.25, 0.75, 1.0])
    assert eccdf([3.0, 1.0, 2.0, 2.0]) == ([1.0, 2.0, 3.0], [1.0, 0.75, 0.25])
    assert ecdf([]) == ([], []) and eccdf([]) == ([], [])


def test_recovery_is_when_the_queue_stays_at_the_remaining_flows_level() -> None:
    from synctcp_testbed.analysis.metrics import recovery
    # 10 Hz from t=100: 40 packets until 130 + 7 s, then 4 (one 1-s blip at 8 packets)
    def q(i: int) -> float:
        t = i / 10
        return 40.0 if t < 37 else (8.0 if 45 <= t < 46 else 4.0)
    samples = _samples(1000, 10, q, 10, 1.0)
    rec = recovery(samples, stop_s=130, end_s=200)
    assert rec["level_pkts"] == pytest.approx(5.0)     # 1.25 x the last 10 s' mean of 4
    assert rec["low_after_s"] == 16.0                  # the blip at 145 s is above 5
    assert recovery(_samples(1000, 10, lambda i: 40.0, 10, 1.0), 130, 200)["low_after_s"] == 0.0
    never = _samples(1000, 10, lambda i: 40.0 if (i // 10) % 2 else 0.0, 10, 1.0)
    assert recovery(never, 130, 200)["low_after_s"] is None
    with pytest.raises(ValueError, match="at least 20 s"):
        recovery(samples, stop_s=190, end_s=200)


def test_flow_min_rtt_is_the_smallest_sample_of_each_flow(tmp_path) -> None:
    import json

    from synctcp_testbed.analysis.metrics import flow_min_rtt_ms
    from synctcp_testbed.analysis.rundir import Case, CaseSummary

    cdir = tmp_path / "reno-droptail"
    cdir.mkdir()
    flows = [{"id": f"f0{i}", "src": "10.0.1.1", "sport": 40000 + i, "dst": "10.0.9.1",
              "dport": 5201, "base_rtt_ms": rtt} for i, rtt in ((1, 40.0), (2, 80.0))]
    (cdir / "flows.json").write_text(json.dumps(flows))

    def sock(i: int, us: int) -> dict:
        return {"src": "10.0.1.1", "sport": 40000 + i, "dst": "10.0.9.1", "dport": 5201,
                "tcp_info": {"min_rtt_us": us}}

    lines = [{"t": 1.0, "sockets": [sock(1, 45000), sock(2, 90000)]},
             {"t": 2.0, "sockets": [sock(1, 42400), sock(2, 0)]},          # 0: not measured yet
             {"t": 3.0, "sockets": [sock(1, 43000), sock(2, 82400)]}]
    (cdir / "tcp-s1.jsonl").write_text("".join(json.dumps(x) + "\n" for x in lines))
    case = Case(tmp_path, CaseSummary.from_dict({"id": "reno-droptail", "cc": "reno"}))
    assert flow_min_rtt_ms(case) == {"f01": 42.4, "f02": 82.4}


def test_queue_minutes_are_the_mean_of_each_whole_minute_from_the_start() -> None:
    from synctcp_testbed.analysis.metrics import queue_minutes
    # 10 Hz from t=100: 10 packets in the first minute, 20 in the second, 30 after
    samples = _samples(2000, 10, lambda i: 10.0 + 10 * min(i // 600, 2), 10, 1.0)
    got = queue_minutes(samples, 10.0, 100.0, 280.0)
    assert len(got) == 3                     # 180 s: three whole minutes, the rest dropped
    assert got[0] == pytest.approx(10.0, abs=0.2) and got[2] == pytest.approx(30.0)
    assert 19.0 < got[1] < 21.0              # the minute's end sample is the next one's
    with pytest.raises(ValueError, match="at least 120 s"):
        queue_minutes(samples, 10.0, 100.0, 210.0)
