"""The web-like HTTP/1.0 workload (synctcp_testbed.traffic.http): sizes, calibration, wire, metrics, CLI."""

from __future__ import annotations

import csv
import json
import math
import os
import random
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path
from typing import Dict, Iterator, List, Sequence, Tuple

import pytest

from synctcp_testbed.analysis.http import (RT_BINS, http_metrics, is_small_response, rt_bin,
                                           rt_bin_edges_ms)
from synctcp_testbed.analysis.rundir import RunDirError, read_http_csv
from synctcp_testbed.traffic.http.model import (REQUEST_SIZES, RESPONSE_SIZES, SEGMENT_BYTES,
                                                HttpSizeModel, SizeDistribution, calibrate,
                                                offered_load_bps, packmime_arrival_shape, plan,
                                                weibull_scale)
from synctcp_testbed.traffic.http.wire import (SERVER_BODY_CAP, SERVER_REQUEST_CAP, BadRequest,
                                               parse_request, parse_response_head, request_head,
                                               response_head)

ROOT = Path(__file__).resolve().parents[2]
N_SAMPLES = 200_000


# --------------------------------------------------------------------------
# Size distributions
# --------------------------------------------------------------------------

@pytest.fixture(scope="module")
def responses() -> List[int]:
    rng = random.Random(20030801)
    model = HttpSizeModel()
    return sorted(model.sample_response(rng) for _ in range(N_SAMPLES))


@pytest.fixture(scope="module")
def requests() -> List[int]:
    rng = random.Random(20030802)
    model = HttpSizeModel()
    return sorted(model.sample_request(rng) for _ in range(N_SAMPLES))


def fraction_at_most(sorted_values: Sequence[int], limit: float) -> float:
    return sum(1 for v in sorted_values if v <= limit) / len(sorted_values)


def hill_alpha(sorted_values: Sequence[int], k: int) -> float:
    """Hill estimator of the Pareto tail index from the k largest values."""
    threshold = sorted_values[-k - 1]
    return k / sum(math.log(v / threshold) for v in sorted_values[-k:])


def test_response_median_is_near_730_bytes(responses: List[int]) -> None:
    assert 650 <= responses[len(responses) // 2] <= 820


def test_about_60pct_of_responses_fit_in_one_segment(responses: List[int]) -> None:
    assert 0.57 <= fraction_at_most(responses, SEGMENT_BYTES) <= 0.63


def test_about_90pct_of_responses_fit_in_ten_segments(responses: List[int]) -> None:
    assert 0.88 <= fraction_at_most(responses, 10 * SEGMENT_BYTES) <= 0.92


def test_one_pct_of_responses_exceed_about_65kb(responses: List[int]) -> None:
    # Fig. A.13: the 99th percentile settles near 66,560 B
    assert 55_000 <= responses[int(0.99 * len(responses))] <= 80_000


def test_response_tail_is_pareto_with_alpha_near_1_23(responses: List[int]) -> None:
    assert 1.05 <= hill_alpha(responses, 1000) <= 1.45
    assert 1.05 <= hill_alpha(responses, 200) <= 1.6


def test_response_sizes_stay_between_the_minimum_and_the_50mb_cap(responses: List[int]) -> None:
    assert responses[0] >= 64
    assert responses[-1] <= 50_000_000
    # a heavy tail: 200k samples reach beyond a megabyte
    assert responses[-1] > 1_000_000


def test_more_than_90pct_of_requests_are_under_1kb(requests: List[int]) -> None:
    assert sum(1 for r in requests if r < 1024) / len(requests) > 0.90
    assert 100 <= requests[0] and requests[-1] <= 2_000_000


def test_model_cdf_passes_through_the_papers_anchor_points() -> None:
    assert RESPONSE_SIZES.cdf(730) == pytest.approx(0.50)
    assert RESPONSE_SIZES.cdf(SEGMENT_BYTES) == pytest.approx(0.60)
    assert RESPONSE_SIZES.cdf(10 * SEGMENT_BYTES) == pytest.approx(0.90)
    assert RESPONSE_SIZES.quantile(0.99) == pytest.approx(66_560, rel=0.01)
    assert RESPONSE_SIZES.cdf(50_000_000) == 1.0


@pytest.mark.parametrize("dist", [RESPONSE_SIZES, REQUEST_SIZES])
def test_quantile_inverts_the_cdf(dist: SizeDistribution) -> None:
    for i in range(1, 1000):
        u = i / 1000
        assert dist.cdf(dist.quantile(u)) == pytest.approx(u, abs=1e-9)


def survival_integral(dist: SizeDistribution, steps: int = 20_000) -> float:
    """Mean as the integral of P(X > x) over x, by the trapezoid rule in log x."""
    lo, hi = dist.knots[0][0], dist.cap
    total = lo  # P(X > x) = 1 below the smallest size
    h = math.log(hi / lo) / steps
    prev = lo * (1 - dist.cdf(lo))
    for i in range(1, steps + 1):
        x = lo * math.exp(i * h)
        cur = x * (1 - dist.cdf(x))
        total += (prev + cur) / 2 * h
        prev = cur
    return total


@pytest.mark.parametrize("dist", [RESPONSE_SIZES, REQUEST_SIZES])
def test_exact_mean_is_the_integral_of_the_survival_function(dist: SizeDistribution) -> None:
    assert dist.mean == pytest.approx(survival_integral(dist), rel=2e-3)


def test_exact_mean_matches_the_sample_mean_of_a_light_tailed_variant() -> None:
    light = SizeDistribution(RESPONSE_SIZES.knots, tail_alpha=3.0, cap=200_000.0)
    rng = random.Random(5)
    n = 100_000
    assert sum(light.sample(rng) for _ in range(n)) / n == pytest.approx(light.mean, rel=0.02)


def test_sample_mean_of_the_workload_is_near_its_exact_mean(responses: List[int]) -> None:
    assert sum(responses) / len(responses) == pytest.approx(RESPONSE_SIZES.mean, rel=0.2)


def test_mean_response_is_just_under_the_papers_uncapped_7560_bytes() -> None:
    # the 50 MB cap removes part of the Pareto mean (about 780 B)
    assert 0.85 * 7560 <= HttpSizeModel().mean_response_bytes < 7560


def test_mean_response_head_counts_the_digits_of_content_length() -> None:
    model = HttpSizeModel()
    rng = random.Random(9)
    n = 50_000
    heads = sum(len(response_head(model.sample_response(rng))) for _ in range(n)) / n
    assert model.mean_response_head_bytes == pytest.approx(heads, rel=0.01)


@pytest.mark.parametrize("knots, alpha, cap", [
    (((100.0, 0.0),), 1.2, 1e6),                          # one knot
    (((100.0, 0.1), (200.0, 0.5)), 1.2, 1e6),              # CDF does not start at 0
    (((100.0, 0.0), (200.0, 1.0)), 1.2, 1e6),              # no tail mass
    (((200.0, 0.0), (100.0, 0.5)), 1.2, 1e6),              # sizes decrease
    (((100.0, 0.0), (200.0, 0.5), (300.0, 0.4)), 1.2, 1e6),  # CDF decreases
    (((100.0, 0.0), (200.0, 0.5)), 0.0, 1e6),              # alpha not positive
    (((100.0, 0.0), (200.0, 0.5)), 1.2, 150.0),            # cap below the tail
])
def test_inconsistent_size_distributions_are_rejected(knots: Tuple[Tuple[float, float], ...],
                                                      alpha: float, cap: float) -> None:
    with pytest.raises(ValueError):
        SizeDistribution(knots, alpha, cap)


# --------------------------------------------------------------------------
# Calibration and arrivals
# --------------------------------------------------------------------------

@pytest.mark.parametrize("load", [50, 60, 70, 80, 85, 90, 95, 100, 105])
def test_calibrated_rate_offers_load_times_capacity(load: int) -> None:
    model = HttpSizeModel()
    rate = calibrate(load, 10, model)
    assert rate * model.mean_connection_bytes * 8 == pytest.approx(load / 100 * 10e6, rel=1e-12)
    assert offered_load_bps(rate, model) == pytest.approx(load / 100 * 10e6, rel=1e-12)


def test_calibration_scales_linearly_in_load_and_capacity() -> None:
    assert calibrate(100, 10) == pytest.approx(2 * calibrate(50, 10), rel=1e-12)
    assert calibrate(85, 100) == pytest.approx(10 * calibrate(85, 10), rel=1e-12)
    # 85% of 10 Mbit/s with ~7.6 KB per connection: ~140 connections/s
    assert 100 < calibrate(85, 10) < 180


def test_calibration_counts_extra_bytes_per_connection() -> None:
    model = HttpSizeModel()
    plain = calibrate(80, 10, model)
    extra = calibrate(80, 10, model, extra_bytes_per_connection=model.mean_connection_bytes)
    assert extra == pytest.approx(plain / 2, rel=1e-12)


@pytest.mark.parametrize("load, capacity, message", [
    (0, 10, "load_pct"), (0.5, 10, "load_pct"), (201, 10, "load_pct"),
    (math.nan, 10, "load_pct"), (math.inf, 10, "load_pct"), ("85", 10, "load_pct"),
    (True, 10, "load_pct"), (85, 0, "capacity_mbit"), (85, -10, "capacity_mbit"),
    (85, math.nan, "capacity_mbit"),
])
def test_calibration_rejects_bad_input(load: object, capacity: object, message: str) -> None:
    with pytest.raises(ValueError, match=message):
        calibrate(load, capacity)  # type: ignore[arg-type]


def test_plan_is_reproducible_with_a_seed() -> None:
    a = list(plan(30, 20, seed=4))
    assert a == list(plan(30, 20, seed=4))
    b = list(plan(30, 20, seed=5))
    assert [c.offset for c in a[:50]] != [c.offset for c in b[:50]]
    assert [c.resp_bytes for c in a[:50]] != [c.resp_bytes for c in b[:50]]
    assert [c.req_bytes for c in a[:50]] != [c.req_bytes for c in b[:50]]


def test_plan_gives_the_kth_connection_the_same_sizes_at_every_load() -> None:
    low = [(c.req_bytes, c.resp_bytes) for c in plan(10, 50, seed=2)]
    high = [(c.req_bytes, c.resp_bytes) for c in plan(40, 50, seed=2)]
    assert len(high) > len(low) > 100
    assert high[:len(low)] == low


@pytest.mark.parametrize("shape", [None, 1.0, 0.6])
def test_plan_arrives_at_the_calibrated_rate(shape: object) -> None:
    rate, seconds = 50.0, 400.0
    conns = list(plan(rate, seconds, seed=11, shape=shape))  # type: ignore[arg-type]
    offsets = [c.offset for c in conns]
    assert offsets == sorted(offsets) and 0 <= offsets[0] and offsets[-1] < seconds
    assert len(conns) == pytest.approx(rate * seconds, rel=0.06)


def test_packmime_arrivals_are_burstier_at_low_rates_and_tend_to_poisson() -> None:
    assert packmime_arrival_shape(2) == pytest.approx(0.677, abs=0.001)  # logit = 0.74
    assert packmime_arrival_shape(2) < packmime_arrival_shape(30) < packmime_arrival_shape(300) < 1
    for shape in (0.5, 0.74, 1.0, 2.0):
        assert weibull_scale(20, shape) * math.gamma(1 + 1 / shape) == pytest.approx(1 / 20)
    with pytest.raises(ValueError):
        packmime_arrival_shape(0)


# --------------------------------------------------------------------------
# Wire format
# --------------------------------------------------------------------------

@pytest.mark.parametrize("req, resp", [(100, 64), (733, 50_000_000), (1024, 0), (2_000_000, 9)])
def test_request_head_and_padding_add_up_to_the_request_size(req: int, resp: int) -> None:
    head, pad = request_head(req, resp)
    assert len(head) + pad == req
    assert parse_request(head) == (resp, pad)


def test_request_shorter_than_its_head_is_sent_as_the_bare_head() -> None:
    head, pad = request_head(10, 123)
    assert pad == 0 and parse_request(head) == (123, 0)


@pytest.mark.parametrize("head", [
    b"POST /10 HTTP/1.0\r\n\r\n",
    b"GET /abc HTTP/1.0\r\n\r\n",
    b"GET /10 HTTP/2.0\r\n\r\n",
    b"GET /10 HTTP/1.0\r\n",
    b"GET /10 HTTP/1.0\r\nno colon here\r\n\r\n",
    b"GET /10 HTTP/1.0\r\nContent-Length: 1\r\nContent-Length: 1\r\n\r\n",
    b"GET /10 HTTP/1.0\r\nContent-Length: -1\r\n\r\n",
    b"GET /%d HTTP/1.0\r\n\r\n" % (SERVER_BODY_CAP + 1),
    b"GET /10 HTTP/1.0\r\nContent-Length: %d\r\n\r\n" % (SERVER_REQUEST_CAP + 1),
    b"\xff\xfe\r\n\r\n",
])
def test_malformed_or_oversized_requests_are_rejected(head: bytes) -> None:
    with pytest.raises(BadRequest):
        parse_request(head)


def test_response_head_announces_the_body_length() -> None:
    assert parse_response_head(response_head(25_560)) == (200, 25_560)
    assert parse_response_head(b"HTTP/1.0 400 Bad Request\r\n\r\n") == (400, None)
    with pytest.raises(ValueError):
        parse_response_head(b"SSH-2.0\r\n\r\n")


# --------------------------------------------------------------------------
# Response-time metrics
# --------------------------------------------------------------------------

def write_csv(path: Path, rows: Sequence[Tuple[float, float, int, int, int, int, str]]) -> Path:
    with open(path, "w", newline="") as fh:
        w = csv.writer(fh)
        w.writerow(["t_start", "t_end", "req_bytes", "resp_bytes", "rcvd_bytes", "ok",
                    "flow_group"])
        w.writerows(rows)
    return path


def test_metrics_split_small_and_large_responses_at_25560_bytes(tmp_path: Path) -> None:
    assert is_small_response(25_560) and not is_small_response(25_561)
    rows = [
        (10.0, 10.100, 300, 25_560, 25_560, 1, "fwd"),   # small: 100 ms
        (11.0, 11.300, 300, 25_561, 25_561, 1, "fwd"),   # large: 300 ms
        (12.0, 12.020, 300, 1_000, 1_000, 1, "fwd"),     # small: 20 ms
        (12.5, 12.510, 300, 500, 500, 1, "fwd"),         # small: 10 ms
        (13.0, 13.900, 300, 90_000, 90_000, 1, "fwd"),   # large: 900 ms
        (13.5, 14.500, 300, 50_000, 50_000, 1, "fwd"),   # large: 1000 ms
        (13.7, 14.800, 300, 60_000, 60_000, 1, "fwd"),   # large: 1100 ms
        (14.0, 14.500, 300, 500, 0, 0, "fwd"),           # error, not timed
    ]
    m = http_metrics(write_csv(tmp_path / "http.csv", rows))
    assert m["responses"] == 7 and m["errors"] == 1
    assert m["small_median_ms"] == pytest.approx(20.0)    # nearest rank of [10, 20, 100]
    assert m["large_median_ms"] == pytest.approx(900.0)   # of [300, 900, 1000, 1100]
    assert m["median_ms"] == pytest.approx(300.0)         # 4th of 7
    assert m["p90_ms"] == pytest.approx(1100.0)           # 7th of 7
    assert m["within_1500ms_pct"] == pytest.approx(87.5)  # 7 of 8: the error did not complete
    rows.append((15.0, 16.501, 300, 500, 500, 1, "fwd"))  # 1501 ms: not within
    assert http_metrics(write_csv(tmp_path / "h2.csv", rows))["within_1500ms_pct"] == \
        pytest.approx(700 / 9)


def test_response_time_bins_are_twenty_a_decade_from_1_ms() -> None:
    assert [rt_bin(x) for x in (0.0, 0.5, 1.0, 1.12, 10.0, 100.0, 1500.0)] == \
        [0, 0, 0, 0, 20, 40, 63]
    assert rt_bin(math.nan) == 0 and rt_bin(1e9) == RT_BINS - 1 == 119
    lo, hi = rt_bin_edges_ms(63)
    assert lo <= 1500.0 < hi and hi / lo == pytest.approx(10 ** 0.05)
    with pytest.raises(ValueError, match="outside 0-119"):
        rt_bin_edges_ms(120)


def test_metrics_histogram_splits_completed_responses_at_25560_bytes(tmp_path: Path) -> None:
    rows = [(10.0, 10.125, 300, 25_560, 25_560, 1, "fwd"),   # small, 125 ms: bin 41
            (11.0, 11.130, 300, 500, 500, 1, "fwd"),         # small, 130 ms: bin 42
            (12.0, 12.128, 300, 900, 900, 1, "fwd"),         # small, 128 ms: bin 42
            (13.0, 15.000, 300, 25_561, 25_561, 1, "fwd"),   # large, 2 s: bin 66
            (14.0, 99.000, 300, 90_000, 100, 0, "fwd")]      # error: not in it
    hist = http_metrics(write_csv(tmp_path / "http.csv", rows))["rt_hist"]
    assert hist == {"small": [[41, 1], [42, 2]], "large": [[66, 1]]}


def test_metrics_of_no_completed_response_are_nan(tmp_path: Path) -> None:
    m = http_metrics(write_csv(tmp_path / "http.csv", [(1.0, 2.0, 100, 100, 0, 0, "fwd")]))
    assert m["responses"] == 0 and m["errors"] == 1
    assert all(math.isnan(m[k]) for k in ("median_ms", "p90_ms", "small_median_ms",
                                          "large_median_ms"))
    assert m["within_1500ms_pct"] == 0.0


def test_read_http_csv_filters_groups_and_rejects_foreign_files(tmp_path: Path) -> None:
    path = write_csv(tmp_path / "http.csv", [(1.0, 1.1, 1, 2, 2, 1, "fwd"),
                                             (1.0, 1.2, 1, 2, 2, 1, "cross")])
    assert [r.flow_group for r in read_http_csv(path, group="cross")] == ["cross"]
    assert read_http_csv(path)[1].response_ms == pytest.approx(200.0)
    other = tmp_path / "queue.csv"
    other.write_text("t,qlen_pkts\n1,2\n")
    with pytest.raises(RunDirError, match="queue.csv:1: not an http.csv: no column t_start"):
        read_http_csv(other)
    bad = tmp_path / "bad.csv"
    bad.write_text(path.read_text() + "x,1,1,1,1,1,fwd\n")
    with pytest.raises(RunDirError, match="bad.csv:4: t_start is 'x', not a number"):
        read_http_csv(bad)


@pytest.mark.parametrize("last, why", [
    ("1.0,1.1,1,2,2,1,fwd", "bad.csv:3: the last line is cut off"),
    ("1.0,1.1,1,2,2,1\n", "bad.csv:3: 6 fields where the header has 7"),
    ("1.0,1.1,1,2,2,yes,fwd\n", "bad.csv:3: ok is 'yes', not 0 or 1"),
    ("1.0,1.1,1,2.5,2,1,fwd\n", "bad.csv:3: resp_bytes is '2.5', not a whole number"),
    ("1.0,nan,1,2,2,1,fwd\n", "bad.csv:3: t_end is 'nan', not a number"),
])
def test_a_bad_row_of_http_csv_is_an_error_naming_file_and_line(tmp_path: Path, last: str,
                                                                  why: str) -> None:
    """One policy for every reader of a run directory: never a row silently left out."""
    bad = write_csv(tmp_path / "bad.csv", [(1.0, 1.1, 1, 2, 2, 1, "fwd")])
    bad.write_text(bad.read_text() + last)
    with pytest.raises(RunDirError) as exc:
        read_http_csv(bad)
    assert why in str(exc.value) and "\n" not in str(exc.value)


# --------------------------------------------------------------------------
# Server and client on loopback
# --------------------------------------------------------------------------

def env() -> Dict[str, str]:
    e = dict(os.environ)
    e["PYTHONPATH"] = os.pathsep.join([str(ROOT / "testbed"), str(ROOT / "tools")])
    return e


def http_cmd(*args: str) -> List[str]:
    return [sys.executable, "-m", "synctcp_testbed.traffic.http", *args]


@pytest.fixture(scope="module")
def server() -> Iterator[int]:
    proc = subprocess.Popen(http_cmd("server", "--host", "127.0.0.1", "--port", "0", "--cc", "reno",
                                     "--max-seconds", "120"),
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env())
    try:
        assert proc.stdout is not None and proc.stderr is not None
        assert proc.stdout.readline().strip() == "ready"
        port = int(proc.stderr.readline().split("127.0.0.1:")[1].split()[0])
        yield port
    finally:
        proc.send_signal(signal.SIGTERM)
        out, _ = proc.communicate(timeout=10)
    assert proc.returncode == 0
    assert json.loads(out.strip().splitlines()[-1])["served"] > 0


def run_client(port: int, out: Path, *extra: str, seconds: str = "3",
               timeout: float = 30) -> Tuple[subprocess.CompletedProcess, Dict[str, object]]:
    done = subprocess.run(http_cmd("client", "--server", f"127.0.0.1:{port}", "--load-pct", "80",
                                   "--capacity-mbit", "2", "--seconds", seconds, "--seed", "7",
                                   "--cc", "reno", "--out", str(out), *extra),
                          capture_output=True, text=True, env=env(), timeout=timeout)
    lines = done.stdout.strip().splitlines()
    assert done.returncode == 0, done.stderr
    assert len(lines) == 1, done.stdout
    return done, json.loads(lines[0])


def test_client_and_server_carry_the_calibrated_load_on_loopback(server: int,
                                                                   tmp_path: Path) -> None:
    _, summary = run_client(server, tmp_path / "http.csv", "--group", "fwd")
    rows = read_http_csv(tmp_path / "http.csv")
    planned = list(plan(calibrate(80, 2), 3, seed=7))
    assert summary["offered"] == summary["started"] == len(rows) == len(planned) > 20
    assert summary["completed"] == len(rows) and summary["errors"] == 0
    for r in rows:
        assert r.ok and r.rcvd_bytes == r.resp_bytes and r.t_end >= r.t_start
        assert r.flow_group == "fwd"
    assert sorted(r.resp_bytes for r in rows) == sorted(c.resp_bytes for c in planned)
    # the client offers exactly the planned bytes, and those are the target in expectation
    planned_bytes = sum(sum(map(len, (request_head(c.req_bytes, c.resp_bytes)[0],
                                      response_head(c.resp_bytes))))
                        + request_head(c.req_bytes, c.resp_bytes)[1] + c.resp_bytes
                        for c in planned)
    assert summary["offered_bytes"] == planned_bytes
    assert 0.2 <= summary["offered_mbit"] / summary["target_mbit"] <= 5  # type: ignore[operator]


def test_server_answers_a_malformed_request_with_400_and_keeps_serving(server: int) -> None:
    with socket.create_connection(("127.0.0.1", server), timeout=5) as s:
        s.sendall(b"GET /lots HTTP/1.0\r\n\r\n")
        assert recv_all(s).startswith(b"HTTP/1.0 400 ")
    with socket.create_connection(("127.0.0.1", server), timeout=5) as s:
        head, pad = request_head(300, 5000)
        s.sendall(head + b"p" * pad)
        reply = recv_all(s)
        assert reply.startswith(response_head(5000))
        assert len(reply) == len(response_head(5000)) + 5000


def recv_all(s: socket.socket) -> bytes:
    chunks = []
    while True:
        data = s.recv(65536)
        if not data:
            return b"".join(chunks)
        chunks.append(data)


def test_client_stops_on_sigterm_and_still_writes_the_csv(server: int, tmp_path: Path) -> None:
    out = tmp_path / "http.csv"
    proc = subprocess.Popen(http_cmd("client", "--server", f"127.0.0.1:{server}",
                                     "--load-pct", "50", "--capacity-mbit", "2",
                                     "--seconds", "60", "--out", str(out)),
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env())
    time.sleep(1.5)
    proc.send_signal(signal.SIGTERM)
    stdout, stderr = proc.communicate(timeout=10)
    assert proc.returncode == 0, stderr
    summary = json.loads(stdout)
    assert summary["interrupted"] is True and summary["seconds"] < 5
    assert len(read_http_csv(out)) == summary["started"]


def test_client_counts_connections_over_the_cap_as_dropped(tmp_path: Path) -> None:
    # a server that never answers: every connection stays open until the run ends
    with socket.create_server(("127.0.0.1", 0), backlog=64) as silent:
        port = silent.getsockname()[1]
        _, summary = run_client(port, tmp_path / "http.csv", "--max-connections", "2",
                                "--drain-seconds", "0", seconds="1")
    rows = read_http_csv(tmp_path / "http.csv")
    assert summary["started"] == 2 == len(rows)
    assert summary["dropped"] == summary["offered"] - 2 > 0  # type: ignore[operator]
    assert summary["errors"] == 2 and not any(r.ok for r in rows)


@pytest.mark.parametrize("args, message", [
    (["--load-pct", "300"], "load_pct must be within 1..200"),
    (["--capacity-mbit", "0"], "capacity_mbit must be positive"),
    (["--server", "127.0.0.1"], "is not ADDR:PORT"),
    (["--cc", "no_such_cc"], "not available"),
    (["--seconds", "0"], "--seconds"),
    (["--group", "a,b"], "--group"),
])
def test_client_rejects_bad_arguments_with_exit_2(args: List[str], message: str,
                                                  tmp_path: Path) -> None:
    base = {"--server": "127.0.0.1:9", "--load-pct": "50", "--capacity-mbit": "2",
            "--seconds": "1", "--out": str(tmp_path / "x.csv")}
    base.update(dict(zip(args[::2], args[1::2])))
    done = subprocess.run(http_cmd("client", *[x for kv in base.items() for x in kv]),
                          capture_output=True, text=True, env=env(), timeout=30)
    assert done.returncode == 2
    assert message in done.stderr and "Traceback" not in done.stderr
    assert done.stdout == ""


def test_server_rejects_an_unavailable_congestion_control() -> None:
    done = subprocess.run(http_cmd("server", "--port", "0", "--cc", "no_such_cc"),
                          capture_output=True, text=True, env=env(), timeout=30)
    assert done.returncode == 2 and "not available" in done.stderr
    assert "Traceback" not in done.stderr
