"""L4S and CAKE peers through the testbed's runner (issue 32, item 1).

DCTCP over DualPI2 (RFC 9332): one flow at 100 Mbit/s and 20 ms through
the dualpi2 queue with the kernel's defaults (1 ms step, 15 ms classic
target, coupling 2).  Linux's DCTCP sends ECT(0) (it has no
TCP_CONG_ECT_1_NEGOTIATION, AccECN or not), so the queue's classifier is
``any_ect`` (ECT(0) goes to the L queue too); the hosts negotiate AccECN
(``ecn = "accecn"``, net.ipv4.tcp_ecn = 3).  sch_dualpi2 (whose Kconfig
help points to RFC 9332) marks every L packet whose sojourn exceeds the
step, 1 ms by default, so a scalable sender (DCTCP) keeps the L queue at
or below the step at full utilization.  The bounds come from that step,
not from a run: the L queue's sampled head-packet sojourn has a mean
below 2 ms (twice the step) and a p99 below 5 ms (a slow-start
overshoot is in the warm-up, not the measured interval), at utilization
of at least 0.95, and the C queue takes almost nothing (every data
packet is ECT(0): nothing is classic).  Measured (UML 7.2, seed 1): mean
0.41 ms, p99 1.05 ms, max 1.15 ms, utilization 0.998, 3 of 164,793
packets in the C queue.

CUBIC over CAKE: the same link, one CUBIC flow without ECN through
``cake`` (COBALT's 5 ms target, 100 ms interval): the mean queue delay
stays below 10 ms, twice CoDel's target, where the 1000-packet buffer
(120 ms at 100 Mbit/s) alone would let CUBIC fill it, at utilization of
at least 0.9 (CoDel trades a little of it for the delay).  Measured: mean
2.7 ms, p95 5.6 ms, utilization 0.989.

Both are bounds from the disciplines' own targets, not fitted to a run;
the measured figures are printed and written to
results/kernel-tests/NAME.json.  Simulated time (UML) only: on real time
an emulated 100 Mbit/s link is not the bottleneck the figures describe.
"""

from __future__ import annotations

import json
import os
import socket
import struct
import threading
from pathlib import Path
from typing import Any, Dict

import pytest

from synctcp_testbed.analysis.rundir import load_run
from synctcp_testbed.platform.run import run_scenario
from synctcp_testbed.scenario import from_dict
from synctcp_testbed.scenario.model import _version

RATE_MBIT, RTT_MS = 100, 20


def _simulated_time_only() -> None:
    if os.environ.get("SYNCTCP_PLATFORM") != "uml":
        pytest.skip("100 Mbit/s delay bounds hold on simulated time only (SYNCTCP_PLATFORM=uml)")


def _has_dualpi2_and_accecn() -> bool:
    have = _version(os.uname().release)
    return have is not None and have >= (6, 18)


def _one_flow(name: str, cc: str, aqm: str, results_dir: Path, **extra: Any) -> Dict[str, Any]:
    sc = from_dict({
        "name": name, "cc": [cc], "aqm": [aqm], "duration_s": 25, "warmup_s": 5,
        "topology": {"kind": "dumbbell", "rate_mbit": RATE_MBIT, "rtts_ms": [RTT_MS],
                     "queue_pkts": 1000, "measure": ["lr"]},
        "traffic": {"bulk_fwd": True, "flows_per_pair": 1},
        **extra,
    })
    run = load_run(run_scenario(sc, out=results_dir / name, log=print))
    (case,) = run.cases
    q = case.summary.bottleneck("lr")
    assert q is not None, f"{run.path}: no lr bottleneck"
    figures = {"utilization": q.utilization, "mean_delay_ms": q.mean_delay_ms,
               "p95_delay_ms": q.p95_delay_ms, "mark_pct": q.mark_pct, "drop_pct": q.drop_pct,
               "queue_l": q.raw.get("queue_l"), "queue_c": q.raw.get("queue_c")}
    (results_dir / f"{name}.json").write_text(json.dumps(figures, indent=2))
    print(f"\nFIGURES {name}: {json.dumps(figures, sort_keys=True)}")
    return figures


TCP_ECN = Path("/proc/sys/net/ipv4/tcp_ecn")


def test_dctcp_negotiates_accecn_and_sends_ect0() -> None:
    """Why the DualPI2 case classifies ``any_ect``: with net.ipv4.tcp_ecn = 3
    Linux's DCTCP negotiates AccECN (tcp_info's tcpi_ecn_mode, the last
    32 bits of struct tcp_info: 2) and its peer sees ECT(0) bytes, not ECT(1)
    (tcpi_delivered_e0_bytes / e1_bytes, from the AccECN feedback)."""
    if not _has_dualpi2_and_accecn():
        pytest.skip(f"AccECN needs Linux 6.18+, this kernel is {os.uname().release} "
                    f"(SYNCTCP_UML_SERIES=7.2 runs it)")
    before = TCP_ECN.read_text()
    TCP_ECN.write_text("3\n")
    try:
        with socket.create_server(("127.0.0.1", 0)) as srv:
            def drain() -> None:
                conn, _ = srv.accept()
                with conn:
                    while conn.recv(65536):
                        pass
            t = threading.Thread(target=drain, daemon=True)
            t.start()
            with socket.socket() as s:
                s.setsockopt(socket.IPPROTO_TCP, getattr(socket, "TCP_CONGESTION", 13), b"dctcp")
                s.connect(srv.getsockname())
                s.sendall(b"x" * 1_000_000)
                raw = s.getsockopt(socket.IPPROTO_TCP, socket.TCP_INFO, 512)
            t.join(10)
    finally:
        TCP_ECN.write_text(before)
    assert len(raw) >= 280, f"tcp_info of {len(raw)} bytes has no AccECN fields"
    mode = struct.unpack_from("=I", raw, len(raw) - 4)[0] & 3
    e1, e0, ce = struct.unpack_from("=III", raw, len(raw) - 28)
    print(f"FIGURES dctcp over lo: ecn_mode {mode}, delivered ECT(1)/ECT(0)/CE bytes {e1}/{e0}/{ce}")
    assert mode == 2, f"tcpi_ecn_mode {mode}, not AccECN (2)"
    assert e0 > 0 and e1 == 0, (e1, e0, ce)


@pytest.mark.figures
@pytest.mark.heavy
def test_dctcp_over_dualpi2_keeps_the_l_queue_near_the_1ms_step(results_dir: Path) -> None:
    _simulated_time_only()
    if not _has_dualpi2_and_accecn():
        pytest.skip(f"dualpi2 and AccECN need Linux 6.18+, this kernel is "
                    f"{os.uname().release} (SYNCTCP_UML_SERIES=7.2 runs it)")
    f = _one_flow("dctcp-dualpi2", "dctcp", "dualpi2", results_dir, ecn="accecn",
                  aqm_params={"dualpi2_classify": "any_ect"})
    lq, cq = f["queue_l"], f["queue_c"]
    assert lq is not None and cq is not None, f"no L/C queue statistics: {f}"
    assert f["utilization"] >= 0.95, f
    assert lq["delay_mean_ms"] < 2.0, lq
    assert lq["delay_p99_ms"] < 5.0, lq
    assert lq["step_marks"] > 0 and lq["share"] > 0.99, lq
    # nearly every packet is ECT(0), so the C queue takes next to nothing
    # (a handful of Not-ECT packets: a run had 2 of 164711)
    assert cq["share"] < 0.001, cq


@pytest.mark.figures
@pytest.mark.heavy
def test_cubic_over_cake_keeps_a_low_queue(results_dir: Path) -> None:
    _simulated_time_only()
    f = _one_flow("cubic-cake", "cubic", "cake", results_dir)
    assert f["queue_l"] is None
    assert f["utilization"] >= 0.9, f
    assert f["mean_delay_ms"] < 10.0, f
    assert f["drop_pct"] > 0, f      # CAKE governs the queue (no ECN: it drops)
