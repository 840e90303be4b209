"""tcp_mixreact inside a real kernel: registration, selection, parameters,
telemetry, and the dissertation's claim on an emulated bottleneck (Weigle
2003, ch. 4): Sync-TCP(MixReact) keeps a shorter queue than Reno without
giving up much goodput.
"""

from __future__ import annotations

import socket
import time
from pathlib import Path

import pytest

from conftest import (AVAILABLE_CC, SYSCTL_CC, TCP_CONGESTION, data_flow_telemetry, is_loaded, load,
                      loopback_transfer, run_comparison, run_reverse_path, sh, sock_cc, unload,
                      unload_when_idle)
from synctcp.diag import list_sockets

pytestmark = pytest.mark.module("tcp_mixreact")
PARAMS = Path("/sys/module/tcp_mixreact/parameters")


def test_module_registers_as_mixreact(module_loaded: str) -> None:
    assert "mixreact" in AVAILABLE_CC.read_text().split()
    info = sh("modinfo", "kmod/tcp_mixreact.ko").stdout
    for parm in ("preloss_max_ms", "source", "alloc_failures"):
        assert f"parm:           {parm}:" in info, parm
    assert "license:        GPL" in info


def test_sysctl_and_setsockopt_select_mixreact(module_loaded: str) -> None:
    SYSCTL_CC.write_text("cubic")
    with socket.socket() as s:
        s.setsockopt(socket.IPPROTO_TCP, TCP_CONGESTION, b"mixreact")
        assert sock_cc(s) == b"mixreact"
    SYSCTL_CC.write_text("mixreact")
    with socket.socket() as s:
        assert sock_cc(s) == b"mixreact"
    SYSCTL_CC.write_text("cubic")


def test_parameters_are_validated(module_loaded: str) -> None:
    assert (PARAMS / "preloss_max_ms").read_text().strip() == "10"
    assert (PARAMS / "source").read_text().strip() == "auto"
    assert (PARAMS / "alloc_failures").read_text().strip() == "0"
    for bad in ("1001", "-1", "abc", "2.5"):
        with pytest.raises(OSError):
            (PARAMS / "preloss_max_ms").write_text(bad)
    with pytest.raises(OSError):
        (PARAMS / "source").write_text("gps")
    with pytest.raises(OSError):
        (PARAMS / "alloc_failures").write_text("5")
    assert (PARAMS / "variant").read_text().strip() == "best"
    assert (PARAMS / "compete").read_text().strip() == "N"     # off by default
    with pytest.raises(OSError):
        (PARAMS / "compete").write_text("maybe")
    with pytest.raises(OSError):
        (PARAMS / "variant").write_text("fast")
    (PARAMS / "preloss_max_ms").write_text("0")
    assert (PARAMS / "preloss_max_ms").read_text().strip() == "0"
    (PARAMS / "source").write_text("rtt")
    assert (PARAMS / "source").read_text().strip() == "rtt"
    (PARAMS / "preloss_max_ms").write_text("10")
    (PARAMS / "source").write_text("auto")


def test_insmod_rejects_bad_parameters() -> None:
    if is_loaded("tcp_mixreact"):
        unload("tcp_mixreact")
    for bad in ("preloss_max_ms=1001", "source=bogus", "alloc_failures=1", "variant=bogus"):
        assert load("tcp_mixreact", bad).returncode != 0, bad
        assert not is_loaded("tcp_mixreact")
    assert load("tcp_mixreact", "preloss_max_ms=20").returncode == 0
    assert PARAMS.joinpath("preloss_max_ms").read_text().strip() == "20"
    assert unload("tcp_mixreact").returncode == 0


def test_rmmod_refused_while_a_socket_uses_it(module_loaded: str) -> None:
    """The allocated per-socket state lives until the socket is gone."""
    with loopback_transfer("mixreact") as cli:
        time.sleep(0.5)
        assert unload("tcp_mixreact").returncode != 0
        assert is_loaded("tcp_mixreact")
        tele = [s.synctcp for s in list_sockets(cc=["mixreact"]) if s.synctcp]
        assert tele, "inet_diag shows no mixreact telemetry"
        assert tele[0]["module"] == "mixreact" and tele[0]["source"] == "ts"
        # switching a live socket away and back: release, then a new init
        cli.setsockopt(socket.IPPROTO_TCP, TCP_CONGESTION, b"reno")
        cli.setsockopt(socket.IPPROTO_TCP, TCP_CONGESTION, b"mixreact")
        assert sock_cc(cli) == b"mixreact"
        time.sleep(0.2)
    assert unload_when_idle("tcp_mixreact")
    assert not is_loaded("tcp_mixreact")
    load("tcp_mixreact")  # for the fixture's teardown
    assert (PARAMS / "alloc_failures").read_text().strip() == "0"


#: MixReact against Reno, 10 flows each (the test below): its mean queue at most
#: QUEUE_RATIO_MAX of Reno's, its goodput at least GOODPUT_RATIO_MIN of Reno's.
#: Measured on UML (this code, and versions that differed in the test code only):
#: queue 0.387, 0.389 and 0.400 of Reno's on 6.1 (alone, with other tests of this
#: directory, after test_etcp.py), 0.533 on 7.2; goodput 1.000-1.001 of Reno's on
#: both.  The bounds leave 0.12 above the largest queue ratio and 0.05 below the
#: goodput ratio.
QUEUE_RATIO_MAX = 0.65
GOODPUT_RATIO_MIN = 0.95


@pytest.mark.figures
def test_mixreact_queue_well_below_renos_at_renos_goodput(module_loaded: str,
                                                          results_dir: Path) -> None:
    """20 Mbit/s, 40 ms RTT, 100-packet drop-tail, 10 flows of each, same boot.

    Ten flows, as the dissertation's runs had many small windows: with
    variant=paper MixReact cuts cwnd on every third ACK while the trend
    rises, so the cut per RTT compounds with the per-flow window, and three
    flows lost about half of Reno's goodput (docs/mixreact.md).  Variant
    best (the default) cuts at most once per RTT: it keeps Reno's goodput
    with a far smaller queue (QUEUE_RATIO_MAX, GOODPUT_RATIO_MIN).
    """
    res = run_comparison(("reno", "mixreact"), rate_mbit=20, rtt_ms=40, queue_pkts=100, flows=10,
                         seconds=20, results_dir=results_dir, name="mixreact_vs_reno")
    reno, mix = res["reno"], res["mixreact"]
    assert reno.queue.samples > 50 and mix.queue.samples > 50
    queue, goodput = mix.queue.mean_pkts / reno.queue.mean_pkts, mix.goodput_mbit / reno.goodput_mbit
    print(f"mixreact / reno: mean queue {queue:.3f} (at most {QUEUE_RATIO_MAX}), goodput "
          f"{goodput:.3f} (at least {GOODPUT_RATIO_MIN})")
    assert queue <= QUEUE_RATIO_MAX
    assert goodput >= GOODPUT_RATIO_MIN
    # the module really ran its algorithm: telemetry from the data flows
    tele = data_flow_telemetry(mix)
    assert tele, "no mixreact telemetry was sampled"
    assert all(t["module"] == "mixreact" and t["source"] == "ts" and t["rate_known"]
               and t["peer_clock_hz"] == 1000 for t in tele)
    # SYNCTCP_F_CONGESTED: a MixReact decrease was in force when sampled
    assert any(t["congested"] for t in tele)
    assert any(t["increases"] > 0 and t["decreases"] > 0 and t["max_qdelay_us"] > 0
               for t in tele)


def test_get_info_races_a_cc_switch_safely(module_loaded: str, tmp_path: Path) -> None:
    """Issue 15, item 1: getsockopt(TCP_CC_INFO) runs get_info() without the
    socket lock while another thread switches the socket between mixreact
    and etcp (release() frees mixreact's state; etcp's init() writes its
    window where mixreact kept the pointer).  The kernel must stay clean
    (the conftest's dmesg check) and every switch must succeed."""
    if not is_loaded("tcp_etcp"):
        assert load("tcp_etcp").returncode == 0
    exe = tmp_path / "cc_info_race"
    sh("gcc", "-O2", "-pthread", "-o", str(exe), str(Path(__file__).with_name("cc_info_race.c")))
    log_before = len(sh("dmesg").stdout.splitlines())
    try:
        out = sh(str(exe), "200000", "mixreact", "etcp").stdout
    finally:
        unload_when_idle("tcp_etcp")
    new = "\n".join(sh("dmesg").stdout.splitlines()[log_before:])
    switches, reads = int(out.split()[1]), int(out.split()[3])
    assert switches == 200000 and reads == 200000, out
    for bad in ("BUG", "Oops", "general protection", "KASAN", "WARNING"):
        assert bad not in new, new


@pytest.mark.figures
@pytest.mark.parametrize("flows", [1, 3])
def test_mixreact_keeps_reno_goodput_with_half_its_queue(module_loaded: str, results_dir: Path,
                                                          flows: int) -> None:
    """Issue 17, item 6: alone on 10 Mbit/s, 40 ms and 60 packets, one flow
    and three, MixReact (variant best) keeps 0.95 of Reno's goodput with at
    most half its mean queue.  The dissertation's rules got 7.91 Mbit/s
    against CUBIC's 9.53 with one flow (docs/mixreact.md)."""
    res = run_comparison(("reno", "mixreact"), rate_mbit=10, rtt_ms=40, queue_pkts=60,
                         flows=flows, seconds=30, results_dir=results_dir,
                         name=f"mixreact_alone_{flows}")
    reno, mix = res["reno"], res["mixreact"]
    assert mix.goodput_mbit >= 0.95 * reno.goodput_mbit
    assert mix.queue.mean_pkts <= 0.5 * reno.queue.mean_pkts


@pytest.mark.figures
def test_reverse_path_load_costs_mixreact_under_a_tenth(module_loaded: str,
                                                        results_dir: Path) -> None:
    """Issue 17: as tcp_sync's test (reverse-path-10): 0.9 of the forward
    goodput kept under reverse load, forward queue at most 0.7 of Reno's."""
    res = run_reverse_path("mixreact", results_dir)
    assert res["mixreact-revon"]["goodput_mbit"] >= 0.9 * res["mixreact-revoff"]["goodput_mbit"]
    assert res["mixreact-revoff"]["queue_pkts"] <= 0.7 * res["reno-revoff"]["queue_pkts"]
