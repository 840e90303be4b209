"""tcp_sync inside a real kernel: registration, selection, telemetry, and
the dissertation's claim on an emulated bottleneck (Weigle 2003, ch. 4):
Sync-TCP(Pcwnd) keeps a shorter queue than Reno without giving up goodput.
"""

from __future__ import annotations

import os
import socket
import time
from pathlib import Path
from typing import Any, Dict

import pytest

from conftest import (AVAILABLE_CC, SYSCTL_CC, TCP_CONGESTION, data_flow_telemetry, is_loaded, load,
                      loopback_transfer, run_comparison, run_reverse_path, sh, sock_cc, unload,
                      unload_when_idle)
from synctcp.diag import list_sockets

pytestmark = pytest.mark.module("tcp_sync")
PARAMS = Path("/sys/module/tcp_sync/parameters")


def test_module_registers_as_sync(module_loaded: str) -> None:
    assert "sync" in AVAILABLE_CC.read_text().split()
    info = sh("modinfo", "kmod/tcp_sync.ko").stdout
    assert "thresh_pct" in info and "source" in info and "license:        GPL" in info


def test_sysctl_selects_sync_for_new_sockets(module_loaded: str) -> None:
    SYSCTL_CC.write_text("sync")
    assert SYSCTL_CC.read_text().strip() == "sync"
    with socket.socket() as s:
        assert sock_cc(s) == b"sync"


def test_setsockopt_selects_sync_per_socket(module_loaded: str) -> None:
    SYSCTL_CC.write_text("cubic")
    with socket.socket() as s:
        s.setsockopt(socket.IPPROTO_TCP, TCP_CONGESTION, b"sync")
        assert sock_cc(s) == b"sync"
    with socket.socket() as s, pytest.raises(OSError):
        s.setsockopt(socket.IPPROTO_TCP, TCP_CONGESTION, b"no-such-cc")


def test_parameters_are_validated(module_loaded: str) -> None:
    assert (PARAMS / "thresh_pct").read_text().strip() == "50"
    assert (PARAMS / "best_thresh_pct").read_text().strip() == "25"
    assert (PARAMS / "source").read_text().strip() == "auto"
    for bad in ("0", "101", "-5", "abc"):
        for name in ("thresh_pct", "best_thresh_pct"):
            with pytest.raises(OSError):
                (PARAMS / name).write_text(bad)
    with pytest.raises(OSError):
        (PARAMS / "source").write_text("gps")
    assert (PARAMS / "variant").read_text().strip() == "best"
    assert (PARAMS / "compete").read_text().strip() == "N"     # off by default
    with pytest.raises(OSError):
        (PARAMS / "compete").write_text("maybe")
    with pytest.raises(OSError):
        (PARAMS / "variant").write_text("fast")
    (PARAMS / "variant").write_text("paper")
    assert (PARAMS / "variant").read_text().strip() == "paper"
    (PARAMS / "variant").write_text("best")
    (PARAMS / "thresh_pct").write_text("60")
    assert (PARAMS / "thresh_pct").read_text().strip() == "60"
    (PARAMS / "thresh_pct").write_text("50")


def test_insmod_rejects_bad_parameters() -> None:
    if is_loaded("tcp_sync"):
        unload("tcp_sync")
    assert load("tcp_sync", "thresh_pct=0").returncode != 0
    assert load("tcp_sync", "source=bogus").returncode != 0
    assert load("tcp_sync", "variant=bogus").returncode != 0
    assert not is_loaded("tcp_sync")
    assert load("tcp_sync", "thresh_pct=75").returncode == 0
    assert PARAMS.joinpath("thresh_pct").read_text().strip() == "75"
    assert unload("tcp_sync").returncode == 0


def test_rmmod_refused_while_a_socket_uses_it(module_loaded: str) -> None:
    with loopback_transfer("sync"):
        time.sleep(0.5)
        assert unload("tcp_sync").returncode != 0
        assert is_loaded("tcp_sync")
        tele = [s.synctcp for s in list_sockets(cc=["sync"]) if s.synctcp]
        assert tele, "inet_diag shows no sync telemetry"
        assert tele[0]["module"] == "sync" and tele[0]["source"] == "ts"
        out = sh("python3", "-m", "synctcp", "ss", "--cc", "sync").stdout
        assert "src:ts" in out and "qdelay:" in out
    assert unload_when_idle("tcp_sync")
    assert not is_loaded("tcp_sync")
    load("tcp_sync")      # for the fixture's teardown


def test_without_timestamps_falls_back_to_rtt_and_says_so(module_loaded: str) -> None:
    ts = Path("/proc/sys/net/ipv4/tcp_timestamps")
    old = ts.read_text()
    ts.write_text("0")
    try:
        with loopback_transfer("sync"):
            time.sleep(1.0)
            tele = [s.synctcp for s in list_sockets(cc=["sync"]) if s.synctcp]
    finally:
        ts.write_text(old)
    assert tele, "inet_diag shows no sync telemetry"
    assert all(t["source"] == "rtt" and t["peer_clock_hz"] is None for t in tele)
    assert any(t["min_ott_us"] > 0 for t in tele)   # the min RTT, in us


def test_source_parameter_forces_rtt(module_loaded: str) -> None:
    (PARAMS / "source").write_text("rtt")
    try:
        with loopback_transfer("sync"):
            time.sleep(1.0)
            tele = [s.synctcp for s in list_sockets(cc=["sync"]) if s.synctcp]
    finally:
        (PARAMS / "source").write_text("auto")
    assert tele and all(t["source"] == "rtt" for t in tele)


#: sync against Reno, 3 flows each (the test below): its mean queue at most
#: QUEUE_RATIO_MAX of Reno's, its goodput at least GOODPUT_RATIO_MIN of Reno's.
#: Measured on UML (this code, and versions that differed in the test code only):
#: queue 0.302, 0.314 and 0.331 of Reno's on 6.1 (alone, with other tests of this
#: directory, after the rest of this file and test_mixreact.py), 0.325 on 7.2;
#: goodput 0.956-0.967 on both.  The bounds leave 0.12 above the largest queue
#: ratio and 0.05 below the smallest goodput ratio.
QUEUE_RATIO_MAX = 0.45
GOODPUT_RATIO_MIN = 0.90


@pytest.mark.figures
def test_sync_queue_well_below_renos_near_renos_goodput(module_loaded: str,
                                                        results_dir: Path) -> None:
    """20 Mbit/s, 40 ms RTT, 100-packet drop-tail, 3 flows of each, same boot."""
    res = run_comparison(("reno", "sync"), rate_mbit=20, rtt_ms=40, queue_pkts=100, flows=3,
                         seconds=20, results_dir=results_dir, name="sync_vs_reno")
    reno, sync = res["reno"], res["sync"]
    assert reno.queue.samples > 50 and sync.queue.samples > 50
    queue, goodput = sync.queue.mean_pkts / reno.queue.mean_pkts, sync.goodput_mbit / reno.goodput_mbit
    print(f"FIGURES sync / reno: mean queue {sync.queue.mean_pkts} / {reno.queue.mean_pkts} = "
          f"{queue:.3f} (at most {QUEUE_RATIO_MAX}), goodput {sync.goodput_mbit} / "
          f"{reno.goodput_mbit} = {goodput:.3f} (at least {GOODPUT_RATIO_MIN})")
    assert queue <= QUEUE_RATIO_MAX
    assert goodput >= GOODPUT_RATIO_MIN
    # the module really ran its algorithm: telemetry from live sockets
    last = data_flow_telemetry(sync)
    assert last, "no sync telemetry was sampled"
    assert any(t["loss_seen"] and t["reductions"] > 0 and t["max_qdelay_us"] > 0 for t in last)
    assert all(t["source"] == "ts" and t["rate_known"] and t["peer_clock_hz"] == 1000 for t in last)


@pytest.mark.figures
def test_reverse_path_load_costs_sync_under_a_tenth(module_loaded: str, results_dir: Path) -> None:
    """Issue 17: 3 forward flows, then the same with 3 CUBIC flows loading
    the ACK path (reverse-path-10).  sync kept 0.69 of its goodput; with
    pacing and cwnd following the ACK path's delay it must keep 0.9, and
    its forward queue without reverse load must stay at most 0.7 of Reno's
    (docs/reverse-path.md)."""
    res = run_reverse_path("sync", results_dir)
    assert res["sync-revon"]["goodput_mbit"] >= 0.9 * res["sync-revoff"]["goodput_mbit"]
    assert res["sync-revoff"]["queue_pkts"] <= 0.7 * res["reno-revoff"]["queue_pkts"]


@pytest.mark.figures
def test_max_qdelay_is_the_full_queue_delay_on_the_demo_dumbbell(module_loaded: str,
                                                                  results_dir: Path) -> None:
    """Issue 17, item 4: the demo's dumbbell (20 Mbit/s, 40 ms, 100-packet
    drop-tail, 3 flows), delayed ACKs on.  The full queue is 100 packets of
    0.6 ms, plus the one being sent: 60.6 ms.  The OTT was the oldest
    segment's (the TSecr's) and every ACK's: flows learnt 93-120 ms.  The
    learnt maximum must now be within 10% of the true one: a timing bound, so
    on simulated time only (a real-time emulator adds its own delay to every
    OTT: TCG learnt 86-93 ms beside a busy host)."""
    if os.environ.get("SYNCTCP_PLATFORM") != "uml":
        pytest.skip("a 10% timing bound holds on simulated time only (SYNCTCP_PLATFORM=uml)")
    full_us = 101 * 1500 * 8 / 20
    res = run_comparison(("sync",), rate_mbit=20, rtt_ms=40, queue_pkts=100, flows=3,
                         seconds=20, results_dir=results_dir, name="sync_demo_max_qdelay")
    snaps = data_flow_telemetry(res["sync"])
    last: Dict[Any, Dict[str, Any]] = {}
    for snap in res["sync"].telemetry:
        for s in snap["sockets"]:
            if s.get("synctcp") and s["tcp_info"].get("bytes_acked", 0) > 1_000_000:
                last[(s["src"], s["sport"])] = s["synctcp"]
    assert snaps and len(last) == 3, f"telemetry of {len(last)} data flows"
    learnt = sorted(t["max_qdelay_us"] for t in last.values())
    print(f"learnt max queuing delay {learnt} us, full queue {full_us:.0f} us")
    assert all(t["loss_seen"] for t in last.values())
    assert all(abs(m - full_us) <= 0.1 * full_us for m in learnt), learnt
