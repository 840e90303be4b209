"""tcp_etcp inside a real kernel: registration, selection, parameters,
telemetry, and the paper's claim on an emulated small-buffer bottleneck
(Gu, Towsley, Hollot, Zhang, section VI): with a 20-packet drop-tail
buffer E-TCP keeps the link busier than Reno.
"""

from __future__ import annotations

import json
import math
import os
import socket
import time
from pathlib import Path

import pytest

from conftest import (AVAILABLE_CC, SYSCTL_CC, TCP_CONGESTION, is_loaded, load, loopback_transfer,
                      run_comparison, sh, sock_cc, unload, unload_when_idle)
from synctcp.diag import list_sockets
from synctcp_testbed.platform.choose import inside_instance

pytestmark = pytest.mark.module("tcp_etcp")
PARAMS = Path("/sys/module/tcp_etcp/parameters")


def test_module_registers_as_etcp(module_loaded: str) -> None:
    assert "etcp" in AVAILABLE_CC.read_text().split()
    info = sh("modinfo", "kmod/tcp_etcp.ko").stdout
    assert "parm:           b:" in info and "parm:           p0_ppm:" in info
    assert "parm:           burst_segs:" in info
    assert "license:        GPL" in info


def test_setsockopt_selects_etcp_per_socket(module_loaded: str) -> None:
    SYSCTL_CC.write_text("cubic")
    with socket.socket() as s:
        s.setsockopt(socket.IPPROTO_TCP, TCP_CONGESTION, b"etcp")
        assert sock_cc(s) == b"etcp"
    SYSCTL_CC.write_text("etcp")
    with socket.socket() as s:
        assert sock_cc(s) == b"etcp"
    SYSCTL_CC.write_text("cubic")


def test_parameters_need_b_positive_and_p0_between_0_and_1(module_loaded: str) -> None:
    assert (PARAMS / "b").read_text().strip() == "25"
    assert (PARAMS / "p0_ppm").read_text().strip() == "10000"
    for bad in ("0", "-1", "1000001", "abc"):
        with pytest.raises(OSError):
            (PARAMS / "b").write_text(bad)
    for bad in ("0", "1000000", "-5", "0.01"):
        with pytest.raises(OSError):
            (PARAMS / "p0_ppm").write_text(bad)
    (PARAMS / "b").write_text("30")
    (PARAMS / "p0_ppm").write_text("1000")
    assert (PARAMS / "b").read_text().strip() == "30"
    assert (PARAMS / "p0_ppm").read_text().strip() == "1000"
    (PARAMS / "b").write_text("25")
    (PARAMS / "p0_ppm").write_text("10000")


def test_burst_segs_is_0_to_64_default_1(module_loaded: str) -> None:
    assert (PARAMS / "burst_segs").read_text().strip() == "1"
    for bad in ("65", "-1", "abc", "1.5"):
        with pytest.raises(OSError):
            (PARAMS / "burst_segs").write_text(bad)
    for good in ("0", "64", "1"):
        (PARAMS / "burst_segs").write_text(good)
        assert (PARAMS / "burst_segs").read_text().strip() == good


def test_insmod_rejects_bad_parameters() -> None:
    if is_loaded("tcp_etcp"):
        unload("tcp_etcp")
    for bad in ("b=0", "p0_ppm=0", "p0_ppm=1000000", "burst_segs=65"):
        assert load("tcp_etcp", bad).returncode != 0, bad
        assert not is_loaded("tcp_etcp")
    assert load("tcp_etcp", "b=31", "p0_ppm=5000").returncode == 0
    assert PARAMS.joinpath("b").read_text().strip() == "31"
    assert PARAMS.joinpath("p0_ppm").read_text().strip() == "5000"
    assert unload("tcp_etcp").returncode == 0


def test_rmmod_refused_while_a_socket_uses_it(module_loaded: str) -> None:
    with loopback_transfer("etcp"):
        time.sleep(0.5)
        assert unload("tcp_etcp").returncode != 0
        assert is_loaded("tcp_etcp")
        tele = [s.synctcp for s in list_sockets(cc=["etcp"]) if s.synctcp]
        assert tele, "inet_diag shows no etcp telemetry"
        assert tele[0]["module"] == "etcp" and tele[0]["source"] == "none"
        assert tele[0]["w_x256"] >= 2 * 256
        # the module paces: internal TCP pacing, no fq needed
        out = sh("ss", "-tin", "state", "established").stdout
        assert "etcp" in out and "pacing_rate" in out
        out = sh("python3", "-m", "synctcp", "ss", "--cc", "etcp").stdout
        assert "W:" in out and "phase:" in out
    assert unload_when_idle("tcp_etcp")
    assert not is_loaded("tcp_etcp")
    load("tcp_etcp")      # for the fixture's teardown


#: E-TCP's utilization with a 20-packet buffer at least this share of the ceiling
#: (CUBIC with a one-BDP buffer), 50 Mbit/s, 100 ms.  Measured on UML (this code):
#: 0.990 of a ceiling of 1.000 on 6.1 and on 7.2 (the paper's model: 0.9 at these
#: capacities, docs/spec/etcp.md); Reno 0.363 and 0.410, CUBIC 0.557-0.573.  The
#: bound leaves 0.09 below the measured share.
ETCP_OF_CEILING = 0.90


@pytest.mark.figures
@pytest.mark.heavy
def test_etcp_utilization_above_reno_with_20_packet_buffer(module_loaded: str,
                                                          results_dir: Path) -> None:
    """50 Mbit/s, 100 ms RTT, 20-packet drop-tail, offloads off, one flow each.

    The paper's model (M/M/1/20) has Reno's utilization fall with capacity
    while E-TCP's stays near 88% and more; cubic with a one-BDP buffer is
    the ceiling a loss-based flow reaches when the buffer is not small, and
    under TCG also the rate the emulated machine can forward at all (well
    below 50 Mbit/s there: compare against it, not against the link rate).
    E-TCP keeps ETCP_OF_CEILING of that ceiling, and more than Reno.
    """
    seconds = 20
    small = 20
    big = int(math.ceil(50e6 * 0.100 / 8 / 1500))      # one BDP of 1500-byte packets: 417
    res = run_comparison(("etcp", "reno", "cubic"), rate_mbit=50, rtt_ms=100, queue_pkts=small,
                         flows=1, seconds=seconds, results_dir=results_dir, name="etcp-small")
    res["cubic-bdp"] = run_comparison(("cubic",), rate_mbit=50, rtt_ms=100, queue_pkts=big,
                                      flows=1, seconds=seconds, results_dir=results_dir,
                                      name="etcp-bdp")["cubic"]
    summary = {name: {"queue_pkts": big if name == "cubic-bdp" else small,
                      "utilization": r.queue.utilization, "goodput_mbit": r.goodput_mbit,
                      "retransmits": r.retransmits, "drop_pct": r.queue.drop_pct,
                      "mean_queue_pkts": r.queue.mean_pkts}
               for name, r in res.items()}
    (results_dir / "etcp_small_buffer.json").write_text(json.dumps(summary, indent=2))
    print()
    for name, s in summary.items():
        print(f"{name:10s} buffer {s['queue_pkts']:4d}: utilization {s['utilization']:.3f}, "
              f"goodput {s['goodput_mbit']:.2f} Mbit/s, drops {s['drop_pct']:.2f}%, "
              f"mean queue {s['mean_queue_pkts']:.1f} pkts")
    for r in res.values():
        assert r.queue.samples > 50
    ceiling = res["cubic-bdp"].queue.utilization
    if os.environ.get("SYNCTCP_ACCEL") != "tcg":
        # the platform forwards 50 Mbit/s: a one-BDP buffer lets CUBIC fill the link
        assert ceiling >= 0.95, summary
    assert res["etcp"].queue.utilization >= ETCP_OF_CEILING * ceiling, summary
    assert res["etcp"].queue.utilization > res["reno"].queue.utilization
    # the module really ran: it left slow start on a loss, and lost packets
    tele = [s["synctcp"] for snap in res["etcp"].telemetry for s in snap["sockets"]
            if s.get("synctcp")]
    assert tele, "no etcp telemetry was sampled"
    assert all(t["module"] == "etcp" for t in tele)
    assert any(t["loss_seen"] for t in tele)
    assert res["etcp"].retransmits > 0


# scripts/vmrun exports SYNCTCP_ACCEL (native, kvm or tcg); unset means a native run
@pytest.mark.figures
@pytest.mark.skipif(os.environ.get("SYNCTCP_ACCEL", "native") == "tcg",
                    reason="under TCG the VM forwards at most ~70 Mbit/s: 100 Mbit/s would "
                           "measure the emulator (runs with KVM or natively)")
@pytest.mark.heavy
def test_etcp_utilization_above_reno_at_100mbit(module_loaded: str, results_dir: Path) -> None:
    """The same comparison at 100 Mbit/s, 100 ms, 20 packets (KVM or native hosts)."""
    res = run_comparison(("etcp", "reno"), rate_mbit=100, rtt_ms=100, queue_pkts=20, flows=1,
                         seconds=20, results_dir=results_dir, name="etcp-100")
    (results_dir / "etcp_100mbit.json").write_text(json.dumps(
        {cc: {"utilization": r.queue.utilization, "drop_pct": r.queue.drop_pct,
              "mean_queue_pkts": r.queue.mean_pkts} for cc, r in res.items()}, indent=2))
    assert res["etcp"].queue.utilization > res["reno"].queue.utilization


@pytest.mark.figures
@pytest.mark.heavy
def test_etcp_paced_packet_by_packet_fills_a_fast_link_with_a_small_buffer(
        module_loaded: str, results_dir: Path) -> None:
    """500 Mbit/s, 100 ms, 20-packet drop-tail, one flow (simulated time only:
    the bounds are ratios of the link, which a real-time emulator cannot reach).

    Linux paces GSO packets of about 1 ms of the pacing rate: 40 segments back
    to back at 500 Mbit/s, twice the buffer, so bursts are lost at a fraction of
    the link's rate and E-TCP's loss floor holds it there (burst_segs=0).  Paced
    one packet at a time (burst_segs=1, the default) E-TCP loses p0 near the
    link's rate, as the paper's model has it (88% for an M/M/1/20 queue).
    """
    if inside_instance() != "uml":
        pytest.skip("500 Mbit/s on simulated time only (UML: make kernel-test)")
    res = {}
    try:
        for segs in (0, 1):
            (PARAMS / "burst_segs").write_text(str(segs))
            res[segs] = run_comparison(("etcp",), rate_mbit=500, rtt_ms=100, queue_pkts=20,
                                       flows=1, seconds=10, results_dir=results_dir,
                                       name=f"etcp-burst{segs}")["etcp"].queue
    finally:
        (PARAMS / "burst_segs").write_text("1")
    # measured (10 s after 2 s): burst_segs=0 at 0.541 of the link, 1.06% lost,
    # burst_segs=1 at 0.936, 1.03% (UML 7.2); 0.552, 1.07% and 0.898, 0.93% (UML 6.1)
    assert res[1].utilization > 0.8
    assert res[0].utilization < 0.7
    # either way E-TCP settles where the buffer loses about p0 = 1%
    for q in res.values():
        assert 0.8 <= q.drop_pct <= 1.5


@pytest.mark.figures
@pytest.mark.heavy
def test_burst_segs_changed_at_run_time_reaches_a_running_connection(
        module_loaded: str) -> None:
    """Issue 28, 8: b0ac820 only ever lowered a connection's GSO limit, so a
    burst_segs raised at run time never reached a running connection.  One
    E-TCP flow at 500 Mbit/s, 100 ms, 20 packets: paced packet by packet
    (burst_segs=1) for 6 s, then burst_segs=0 (Linux's ~1 ms GSO packets,
    which this buffer cannot take): the same connection must lose its
    packet-by-packet pacing, and get it back when burst_segs is 1 again."""
    if inside_instance() != "uml":
        pytest.skip("500 Mbit/s on simulated time only (UML: make kernel-test)")
    import struct
    import threading

    from conftest import drain, pump
    from synctcp_testbed.network.qdisc import QueueSpec
    from synctcp_testbed.network.netns import in_netns
    from synctcp_testbed.network.topology import dumbbell

    topo = dumbbell([100.0], rate_mbit=500, queue=QueueSpec("droptail", 20), prefix="eb")
    info_fmt = struct.Struct("<8B24I3Q")
    try:
        topo.build()
        for node in ("s1", "r1"):
            sh("ip", "netns", "exec", topo.ns(node), "sysctl", "-qw",
               "net.ipv4.tcp_rmem=4096 131072 33554432", "net.ipv4.tcp_wmem=4096 16384 33554432")
        (PARAMS / "burst_segs").write_text("1")
        with in_netns(topo.ns("r1")):
            lsock = socket.socket()
        lsock.bind((topo.addr("r1"), 5650))
        lsock.listen(1)
        with in_netns(topo.ns("s1")):
            snd = socket.socket()
        snd.setsockopt(socket.IPPROTO_TCP, TCP_CONGESTION, b"etcp")
        snd.settimeout(0.5)
        snd.connect((topo.addr("r1"), 5650))
        rcv, _ = lsock.accept()
        rcv.settimeout(1.0)
        closing = threading.Event()
        threads = [threading.Thread(target=pump, args=(snd, closing), daemon=True),
                   threading.Thread(target=drain, args=(rcv, closing), daemon=True)]
        for t in threads:
            t.start()

        def acked() -> int:
            raw = snd.getsockopt(socket.IPPROTO_TCP, socket.TCP_INFO, info_fmt.size)
            return info_fmt.unpack_from(raw)[8 + 24 + 2]

        phases = []
        for segs, secs in (("1", 6.0), ("0", 6.0), ("1", 6.0)):
            (PARAMS / "burst_segs").write_text(segs)
            time.sleep(2.0)                      # the flow settles on its new pacing
            a0, t0 = acked(), time.monotonic()
            time.sleep(secs - 2.0)
            phases.append((acked() - a0) * 8 / (time.monotonic() - t0) / 500e6)
        closing.set()
        for s in (snd, rcv):
            s.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
            s.close()
        lsock.close()
    finally:
        (PARAMS / "burst_segs").write_text("1")
        topo.teardown()
    print(f"goodput / link: burst_segs 1 {phases[0]:.3f}, then 0 {phases[1]:.3f}, "
          f"then 1 {phases[2]:.3f}")
    assert phases[0] > 0.8 and phases[2] > 0.8
    assert phases[1] < 0.75, "burst_segs=0 did not reach the running connection"
