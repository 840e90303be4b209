"""The testbed on a real kernel: topologies, queues read back, a whole run.

These build network namespaces, so they run where the kernel tests run
(the VM of ``make test``, or natively as root).
"""

from __future__ import annotations

import json
import os
import re
import struct
from pathlib import Path

import pytest

from synctcp_testbed import cli as testbed_cli
from synctcp_testbed.network.qdisc import QueueSpec
from synctcp_testbed.scenario import load as load_scenario
from synctcp_testbed.network.netns import NETNS_DIR, in_netns, offloads, sh
from synctcp_testbed.network.topology import Topology, TopologyError, dumbbell, parking_lot

ROOT = Path(__file__).resolve().parents[2]


def _namespaces(prefix: str) -> list:
    return sorted(p.name for p in NETNS_DIR.glob(f"{prefix}-*")) if NETNS_DIR.exists() else []


def test_dumbbell_builds_routes_and_tears_down() -> None:
    topo = dumbbell([20, 60], rate_mbit=10, queue=QueueSpec("droptail", 30), prefix="tt")
    with topo:
        assert len(_namespaces("tt")) == 6
        for s, r, rtt in (("s1", "r1", 20), ("s2", "r2", 60)):
            # the first ping waits for ARP on every hop
            sh(["ping", "-c", "1", "-W", "5", topo.addr(r)], ns=topo.ns(s))
            out = sh(["ping", "-c", "5", "-i", "0.2", "-q", topo.addr(r)], ns=topo.ns(s)).stdout
            least = float(out.rsplit("=", 1)[1].split("/")[0])
            # base RTT from the netem stages, plus emulation overhead
            assert rtt * 0.95 <= least <= rtt + 25, out
        with in_netns(topo.ns("l")):
            assert offloads(topo.dev("l", topo.link("lr"))) == {"tso": False, "gso": False,
                                                                "gro": False}
    assert _namespaces("tt") == []


def test_ping_through_the_dumbbell_is_the_configured_rtt_on_simulated_time() -> None:
    """Fidelity of the simulated-time platform: the netem stages and the
    queues add exactly the base RTT, within 1% (a timing bound: simulated
    time only; real time adds the emulator's own delay)."""
    if os.environ.get("SYNCTCP_PLATFORM") != "uml":
        pytest.skip("a 1% timing bound holds on simulated time only (SYNCTCP_PLATFORM=uml)")
    topo = dumbbell([20, 100], rate_mbit=10, queue=QueueSpec("droptail", 30), prefix="tf")
    with topo:
        for s, r, rtt in (("s1", "r1", 20), ("s2", "r2", 100)):
            sh(["ping", "-c", "1", "-W", "5", topo.addr(r)], ns=topo.ns(s))     # ARP
            out = sh(["ping", "-c", "5", "-i", "0.2", "-q", topo.addr(r)], ns=topo.ns(s)).stdout
            lo, avg, hi = (float(x) for x in out.rsplit("=", 1)[1].split("/")[:3])
            print(f"ping {s}->{r}: configured {rtt} ms, min/avg/max {lo}/{avg}/{hi} ms")
            assert abs(avg - rtt) <= 0.01 * rtt and abs(hi - rtt) <= 0.01 * rtt, out


def test_teardown_also_after_an_error() -> None:
    topo = dumbbell([20], rate_mbit=10, queue=QueueSpec("droptail", 30), prefix="te")
    with pytest.raises(RuntimeError):
        with topo:
            assert _namespaces("te")
            raise RuntimeError("boom")
    assert _namespaces("te") == []


def test_leftovers_of_a_killed_run_are_removed_first() -> None:
    sh(["ip", "netns", "add", "tl-stale"])
    topo = dumbbell([20], rate_mbit=10, queue=QueueSpec("droptail", 30), prefix="tl")
    with topo:
        assert "tl-stale" not in _namespaces("tl")
    assert _namespaces("tl") == []


def test_bottleneck_stages_read_back_through_netlink() -> None:
    q = QueueSpec("red-ecn", 92, min_pkts=10, max_pkts=30)
    topo = parking_lot([16, 53], rate_mbit=10, queue=q, routers=3, prefix="tq")
    with topo:
        dev = topo.dev("R0", topo.link("r0r1"))
        got = {x["kind"]: x for x in topo.qdiscs("R0") if x["dev"] == dev}
        assert set(got) == {"netem", "htb", "red"}
        assert got["netem"]["parent"] == "root" and got["netem"]["options"]["limit"] >= 10000
        assert got["htb"]["parent"] == "1:1"
        assert got["red"]["parent"] == "2:10" and got["red"]["handle"] == "10:0"
        # the RED parameters as the kernel holds them (struct tc_red_qopt)
        out = sh(["tc", "-j", "qdisc", "show", "dev", dev], ns=topo.ns("R0")).stdout
        red = next(x for x in json.loads(out) if x["kind"] == "red")["options"]
        assert (red["min"], red["max"], red["limit"]) == (15000, 45000, 92 * 1500)
        assert "ecn" in red.get("flags", red) or red.get("ecn") is True
        classes = sh(["tc", "class", "show", "dev", dev], ns=topo.ns("R0")).stdout
        assert re.search(r"class htb 2:10 .*rate 10Mbit ceil 10Mbit", classes), classes


def test_a_bad_queue_is_refused_before_anything_is_built() -> None:
    with pytest.raises(ValueError):
        dumbbell([20], rate_mbit=10, queue=QueueSpec("red", 10, min_pkts=5, max_pkts=30),
                 prefix="tb")
    assert _namespaces("tb") == []


def test_short_run_produces_a_complete_report(tmp_path: Path) -> None:
    """Two algorithms through the whole runner: every file of the run directory."""
    sc_file = tmp_path / "tiny.toml"
    sc_file.write_text("""
name = "tiny"
cc = ["reno", "sync"]
aqm = ["droptail"]
duration_s = 8
warmup_s = 2
[topology]
kind = "dumbbell"
rate_mbit = 10
rtts_ms = [30, 50]
queue_pkts = 40
[traffic]
bulk_fwd = true
""")
    out = tmp_path / "run"
    assert testbed_cli.main(["run", str(sc_file), "--out", str(out), "--capture"]) == 0
    summary = json.loads((out / "summary.json").read_text())
    assert [c["id"] for c in summary["cases"]] == ["reno-droptail", "sync-droptail"]
    for case in summary["cases"]:
        assert [b["link"] for b in case["bottlenecks"]] == ["lr", "lr-rev"]
        b = case["bottlenecks"][0]
        assert b["sample_hz"] >= 50, "the C queue sampler keeps >= 50 Hz even under TCG"
        assert 0.2 <= b["utilization"] <= 1.05
        assert len(case["flows"]) == 2 and all(f["goodput_mbit"] > 0 for f in case["flows"])
        cdir = out / case["id"]
        for name in ("queue-lr.csv", "flows.json", "topology.sh", "traffic.sh", "tcp-s1.jsonl",
                     "f01.pcap"):
            assert (cdir / name).stat().st_size > 0, name
        flows = json.loads((cdir / "flows.json").read_text())
        assert {f["cc"] for f in flows} == {case["cc"]}
        # the capture holds the first flow (not a bare header: UML's hostfs)
        # and its loss-delay correlation is in the record
        corr = case["correlation"]
        assert corr["flow"].endswith(f":{flows[0]['port']}"), corr["flow"]
        assert corr["rtt"]["samples"] > 100 and corr["ott"]["samples"] > 100, corr
    html = (out / "report.html").read_text()
    assert "tiny" in html and "data:image/png;base64," in html and "reno-droptail" in html
    # a header and one row per case and bottleneck
    assert (out / "summary.csv").read_text().count("\n") == 1 + 2 * 2
    pcap = (out / "sync-droptail" / "f01.pcap").read_bytes()
    assert struct.unpack("<I", pcap[:4])[0] in (0xA1B2C3D4, 0xA1B23C4D)


HTTP_TINY = """
name = "tiny-http"
cc = ["reno"]
aqm = ["droptail"]
duration_s = 6
warmup_s = 1
seed = 1
[topology]
kind = "dumbbell"
rate_mbit = 10
rtts_ms = [30, 50]
queue_pkts = 60
measure = ["lr"]
[traffic]
bulk_fwd = false
http_pairs = 2
http_load_pct = 60
http_server = "{server}"
"""


def test_http_workload_from_nginx_and_asyncio_with_seeds(tmp_path: Path) -> None:
    """The HTTP workload end to end: nginx (the default) serves every response the
    PackMime client asks for, as the asyncio server does for the same seed; two
    seeds are two different workloads, and the summary groups them."""
    got = {}
    for server, repeat in (("nginx", 2), ("asyncio", 1)):
        sc_file = tmp_path / f"{server}.toml"
        sc_file.write_text(HTTP_TINY.format(server=server))
        out = tmp_path / server
        assert testbed_cli.main(["run", str(sc_file), "--out", str(out), "--no-report",
                                 "--repeat", str(repeat)]) == 0
        summary = json.loads((out / "summary.json").read_text())
        for case in summary["cases"]:
            http = case["http"]
            assert http["errors"] == 0 and http["responses"] > 100, (server, case["id"], http)
            # every planned request of the whole run (http.csv: one row each, unwindowed)
            rows = (out / case["id"] / "http.csv").read_text().splitlines()[1:]
            sizes = sorted(int(r.split(",")[3]) for r in rows)
            assert all(r.split(",")[5] == "1" for r in rows), f"{server}: a response failed"
            got[(server, case["seed"])] = sizes
        if repeat > 1:
            assert [c["id"] for c in summary["cases"]] == ["reno-droptail-s1", "reno-droptail-s2"]
            (group,) = summary["groups"]
            assert group["n"] == 2 and group["metrics"]["http.responses"]["ci"] is not None
    print({k: len(v) for k, v in got.items()})
    assert got[("nginx", 1)] == got[("asyncio", 1)]     # the same planned responses, all served
    assert got[("nginx", 1)] != got[("nginx", 2)]
