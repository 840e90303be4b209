"""synctcp correlate: the loss-delay metrics of Martin, Nilsson & Rhee (2003) on RTT and OTT."""

from __future__ import annotations

import json
import random
import statistics
from pathlib import Path
from typing import Dict, List

import pytest

from pcapgen import FlowSpec, simulate, write_capture
from synctcp.cli import main
from synctcp.correlate import (cim, correlate_flow, delay_cdf, delay_event, lcdc, loss_events,
                               make_series, sampled_delay, window_avg_std)
from synctcp.trace import trace_file


def series(d: List[float], losses: List[float], lag_tx: float = 0.5):
    """Samples obtained at t = 0, 1, 2, ...; each times a segment sent ``lag_tx`` earlier."""
    t = [float(i) for i in range(len(d))]
    return make_series("d", t, [x - lag_tx for x in t], d, losses)


# --- loss events -----------------------------------------------------------------------------------

def test_a_loss_belongs_to_the_last_sample_before_its_transmission() -> None:
    idx, first, placed, unplaced = loss_events([0.0, 1.0, 2.0, 3.0], [1.5, 1.7, 3.0, -1.0])
    assert idx == [1, 2]                 # 1.5 and 1.7 share sample 1: one event (a burst)
    assert first == [1.5, 3.0]           # a loss at exactly t_i was sent after sample i−1 only
    assert placed == 3 and unplaced == 1


# --- CIM -------------------------------------------------------------------------------------------

def test_sampled_delay_and_window_are_the_papers_means() -> None:
    d = [1.0, 2.0, 3.0, 4.0, 6.0]
    assert sampled_delay(d, 4, 2) == 5.0
    assert sampled_delay(d, 0, 2) is None
    avg, std = window_avg_std(d, 4, 4)
    assert avg == 3.75 and std == pytest.approx(statistics.pstdev([2, 3, 4, 6]))
    assert window_avg_std(d, 2, 4) is None


def test_delay_event_is_strict_with_population_std() -> None:
    d = [0.0, 0.0, 4.0, 4.0]              # w=4: mean 2, population std 2 → threshold 4
    assert delay_event(d, 3, x=2, w=4, sigma=1.0) is False      # 4 > 4 is false
    assert delay_event(d, 3, x=2, w=4, sigma=0.5) is True       # 4 > 3
    assert delay_event(d, 3, x=2, w=4, sigma=0.9) is True       # 4 > 3.8 (sample std: 4.08)


def test_window_avg_includes_the_sampled_delays() -> None:
    # If windowAVG(w) excluded the last x samples, [2,2,2,2] would give mean 2, std 0 and the
    # event would hold; the paper's "w → x makes the metric approach 0" needs both windows to
    # end at the same sample: [2,2,3,3] has mean 2.5, std 0.5, and 3 > 3 is false.
    d = [2.0, 2.0, 2.0, 2.0, 3.0, 3.0]
    assert delay_event(d, 5, x=2, w=4, sigma=1.0) is False


def test_cim_is_zero_when_w_equals_x() -> None:
    rng = random.Random(1)
    d = [rng.uniform(10, 50) for _ in range(500)]
    s = series(d, [i + 0.7 for i in range(10, 500, 7)])
    assert cim(s, x=2, w=2, sigma=0.0).value == 0.0


def test_cim_is_one_when_losses_follow_delay_peaks() -> None:
    rng = random.Random(2)
    d = [10 + rng.random() for _ in range(2000)]
    peaks = list(range(40, 2000, 50))
    for p in peaks:
        d[p - 1] = d[p] = 30.0            # the two samples before each loss are high
    s = series(d, [p + 0.5 for p in peaks])
    res = cim(s)
    assert res.events == len(peaks) and res.true == len(peaks) and res.value == 1.0


def test_cim_of_unrelated_losses_is_the_base_rate_of_the_delay_event() -> None:
    rng = random.Random(3)
    d = [rng.gauss(50, 5) for _ in range(3000)]
    s = series(d, [i + 0.5 for i in rng.sample(range(30, 3000), 300)])
    res = cim(s)
    base = statistics.fmean(delay_event(d, i, 2, 20, 1.0) for i in range(19, len(d)))
    assert res.value is not None and res.value < 0.15
    assert res.value == pytest.approx(base, abs=0.05)


def test_cim_does_not_judge_losses_without_w_prior_samples() -> None:
    d = [float(i % 5) for i in range(100)]
    res = cim(series(d, [5.5, 60.5]))
    assert res.short_history == 1 and res.events == 1


# --- LCDC ------------------------------------------------------------------------------------------

def test_lcdc_lags_by_hand() -> None:
    d = [1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 7.0, 8.0]
    s = series(d, [3.5])                  # sent at 3.5, after sample 3 (obtained at t=3)
    out = lcdc(s, max_lag=3)
    mean = statistics.fmean(d)
    assert out[-1].mean_ms == 4.0 and out[-2].mean_ms == 3.0 and out[-3].mean_ms == 2.0
    # sample 4 times a segment sent at 3.5 (not after the loss): lag +1 is sample 5
    assert out[1].mean_ms == 6.0 and out[3].mean_ms == 8.0
    assert out[-1].ratio == pytest.approx(4.0 / mean)
    assert out[1].excess_ms == pytest.approx(6.0 - mean)
    assert out[1].n == 1


def test_lcdc_averages_over_events_and_skips_missing_lags() -> None:
    d = [10.0, 20.0, 30.0, 40.0, 50.0, 60.0]
    s = series(d, [0.5, 3.5])
    out = lcdc(s, max_lag=2)
    assert out[-1].n == 2 and out[-1].mean_ms == (10.0 + 40.0) / 2
    assert out[-2].n == 1 and out[-2].mean_ms == 30.0            # event 0 has no lag −2
    assert out[2].n == 1 and out[2].mean_ms == 40.0              # event 1 has no lag +2


# --- CDF -------------------------------------------------------------------------------------------

def test_delay_cdf_by_hand() -> None:
    d = [float(i) for i in range(1, 11)]  # 1..10
    s = series(d, [4.5, 9.5])             # events at samples 4 (d=5) and 9 (d=10)
    res = delay_cdf(s, x=2)
    assert res.loss_values_ms == [4.5, 9.5]
    assert res.quantiles_loss["p50"] == 7.0 and res.quantiles_all["p50"] == 5.5
    assert res.threshold_ms == pytest.approx(4.5 + 0.05 * 5.0)
    assert res.threshold_frac_all == 0.4
    # F_all(4.5) = 0.4 vs F_loss(4.5) = 0.5; F_all(9.5) = 0.9 vs 1.0; sup at v = 4: 0.4 vs 0
    assert res.ks == pytest.approx(0.4)


# --- on a capture ------------------------------------------------------------------------------------

LOSS_AT = [0.5 + 0.6 * k for k in range(8)]


def spiky_fwd(t: float) -> float:
    """20 ms + a forward queue that builds to 40 ms over 200 ms before each loss, then drains."""
    q = 0.0
    for tl in LOSS_AT:
        if tl - 0.2 <= t <= tl:
            q = max(q, 0.04 * (t - (tl - 0.2)) / 0.2)
        elif tl < t <= tl + 0.2:
            q = max(q, 0.04 * (1 - (t - tl) / 0.2))
    return 0.020 + q


@pytest.fixture(scope="module")
def correlated_capture(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Losses at the top of forward-queue build-ups; the reverse path adds 0–30 ms of noise."""
    tmp_path = tmp_path_factory.mktemp("corr")
    rng = random.Random(7)
    noise: Dict[int, float] = {}
    spec = FlowSpec(n_segs=5200, fwd=spiky_fwd,
                    rev=lambda k, t: 0.020 + noise.setdefault(k, rng.uniform(0, 0.030)),
                    lost={round((tl - 0.05) / 0.001) for tl in LOSS_AT})
    frames, _ = simulate(spec)
    return write_capture(frames, tmp_path / "corr.pcap")


def test_ott_predicts_forward_losses_better_than_rtt(correlated_capture: Path) -> None:
    flows, _ = trace_file(str(correlated_capture))
    res = correlate_flow(flows[0])
    rtt, ott = res["rtt"], res["ott"]
    assert rtt["loss_events"] == ott["loss_events"] == len(LOSS_AT)
    assert rtt["samples"] == ott["samples"] > 500
    assert ott["cim"]["value"] >= 0.85
    assert rtt["cim"]["value"] < ott["cim"]["value"]
    assert ott["lcdc"]["-1"]["ratio"] > rtt["lcdc"]["-1"]["ratio"] > 1.0
    assert ott["cdf"]["ks"] > 0.5


def test_cli_correlate_table_and_json(correlated_capture: Path,
                                     capsys: pytest.CaptureFixture) -> None:
    path = correlated_capture
    assert main(["correlate", str(path)]) == 0
    out = capsys.readouterr().out
    assert "CIM x=2 w=20 1σ" in out and "RTT" in out and "OTT" in out
    assert main(["correlate", str(path), "--json", "--x", "1", "--w", "5", "--lags", "4"]) == 0
    doc = json.loads(capsys.readouterr().out)
    (f,) = doc["flows"]
    assert f["params"]["x"] == 1 and f["params"]["w"] == 5
    assert sorted(int(k) for k in f["ott"]["lcdc"]) == [-4, -3, -2, -1, 1, 2, 3, 4]


@pytest.mark.parametrize("args", [["--x", "0"], ["--w", "1", "--x", "2"], ["--sigma", "-1"],
                                  ["--min-segs", "0"]])
def test_cli_correlate_rejects_bad_parameters(tmp_path: Path, args: List[str]) -> None:
    frames, _ = simulate(FlowSpec(n_segs=20))
    path = write_capture(frames, tmp_path / "c.pcap")
    assert main(["correlate", str(path), *args]) == 2
