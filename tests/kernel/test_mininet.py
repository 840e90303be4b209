"""The testbed's experiments on Mininet (``synctcp_mininet``), on a real kernel.

Mininet builds the testbed's topologies with direct links (no switches);
the runner measures them with its own code.  The last test runs one short
scenario on both backends in the same boot and compares them.
"""

from __future__ import annotations

import json
import re
import time
from pathlib import Path

import pytest

from synctcp_testbed.platform import run
from synctcp_testbed.analysis.report import write_report
from synctcp_testbed.analysis.tables import write_summary_csv
from synctcp_testbed.scenario import load as load_scenario
from synctcp_testbed.network.netns import NETNS_DIR, in_netns, offloads, sh

synctcp_mininet = pytest.importorskip("synctcp_mininet")
try:
    synctcp_mininet.ensure_mininet()
except ImportError as exc:     # pragma: no cover - reported as a skip with the reason
    pytest.skip(f"{exc}", allow_module_level=True)

from synctcp_mininet.backend import MininetTopology  # noqa: E402
from synctcp_mininet.topos import DumbbellTopo, scenario_topology  # noqa: E402

ROOT = Path(__file__).resolve().parents[2]
FIGURES = ROOT / "results" / "kernel-tests" / "mininet-crosscheck.json"


def _namespaces(prefix: str) -> list:
    return sorted(p.name for p in NETNS_DIR.glob(f"{prefix}-*")) if NETNS_DIR.exists() else []


def test_dumbbell_builds_pings_all_and_reads_back_its_links() -> None:
    """Topology build, pingAll with zero loss, link parameters read back, teardown."""
    from mininet.net import Mininet

    Mininet.inited = True
    t0 = time.monotonic()
    net = Mininet(topo=DumbbellTopo(rate=10, rtts="30+50", queue=40, aqm="red-ecn", prefix="mt"),
                  controller=None)
    built = time.monotonic() - t0
    try:
        net.start()
        assert len(net.hosts) == 6 and not net.switches and not net.controllers
        loss = net.pingAll(timeout=5)
        assert loss == 0, f"pingAll lost {loss}%"
        l, s1 = net["l"], net["s1"]
        # the access link is a TCLink: one netem with the delay and the testbed's limit
        qd = json.loads(s1.cmd("tc -j qdisc show dev mt2a"))
        netem = next(q for q in qd if q["kind"] == "netem")
        assert netem["options"]["limit"] == 100000
        # tc reports the delay in its clock ticks: 7.499 ms for 7.5 ms
        assert abs(netem["options"]["delay"]["delay"] - 0.0075) < 1e-5, netem
        # the bottleneck is the testbed's stack: netem? no delay -> htb 10 Mbit/s -> red ecn
        qd = {q["kind"]: q for q in json.loads(l.cmd("tc -j qdisc show dev mt1a"))}
        assert {"htb", "red"} <= set(qd), qd
        red = qd["red"]["options"]
        assert (red["min"], red["max"], red["limit"]) == (7500, 22500, 40 * 1500)
        assert "ecn" in red.get("flags", red) or red.get("ecn") is True
        assert re.search(r"class htb 2:10 .*rate 10Mbit ceil 10Mbit", l.cmd("tc class show dev mt1a"))
        # routes, forwarding, ECN and offloads as the testbed sets them
        assert "via 10.201.1.2" in l.cmd("ip route show 10.201.3.0/24")
        assert l.cmd("sysctl -n net.ipv4.ip_forward").strip() == "1"
        assert s1.cmd("sysctl -n net.ipv4.tcp_ecn").strip() == "1"
        assert "tcp-segmentation-offload: off" in s1.cmd("ethtool -k mt2a")
        print(f"\nmininet dumbbell (6 nodes) built in {built:.1f} s")
    finally:
        for h in net.hosts:
            h.terminate()


def test_backend_names_the_namespaces_and_removes_them() -> None:
    topo = MininetTopology(scenario_topology("gu-smallbuffer", rate_mbit=10, prefix="mb"))
    with topo:
        assert _namespaces("mb") == ["mb-l", "mb-r", "mb-r1", "mb-s1"]
        # the runner's way in: by name
        sh(["ping", "-c", "1", "-W", "5", topo.addr("r1")], ns=topo.ns("s1"))
        with in_netns(topo.ns("l")):
            assert offloads(topo.dev("l", topo.link("lr"))) == {"tso": False, "gso": False,
                                                                "gro": False}
        assert "netns attach mb-s1" in topo.script
    assert _namespaces("mb") == []


def _tiny(tmp_path: Path, name: str, ccs: list, duration: float, warmup: float,
          rtts: str = "[40]", rate: float = 10) -> Path:
    path = tmp_path / f"{name}.toml"
    path.write_text(f"""
name = "{name}"
cc = {json.dumps(ccs)}
aqm = ["droptail"]
duration_s = {duration}
warmup_s = {warmup}
[topology]
kind = "dumbbell"
rate_mbit = {rate}
rtts_ms = {rtts}
queue_pkts = 50
""")
    return path


def test_every_module_runs_on_mininet_to_a_complete_report(tmp_path: Path) -> None:
    sc = load_scenario(str(_tiny(tmp_path, "mn-modules", ["sync", "mixreact", "etcp"], 5, 1)))
    out = run.run_scenario(sc, tmp_path / "run", backend="mininet", log=print)
    write_summary_csv(out)
    write_report(out)
    meta = json.loads((out / "meta.json").read_text())
    assert meta["backend"] == "mininet"
    summary = json.loads((out / "summary.json").read_text())
    assert [c["cc"] for c in summary["cases"]] == ["sync", "mixreact", "etcp"]
    for case in summary["cases"]:
        assert [b["link"] for b in case["bottlenecks"]] == ["lr", "lr-rev"]
        # complete, not fast: one 5 s flow of a delay-based module may use little of the link
        assert case["bottlenecks"][0]["samples"] > 0 and case["bottlenecks"][0]["utilization"] > 0
        assert case["goodput_mbit"] > 0
        cdir = out / case["id"]
        for name in ("queue-lr.csv", "flows.json", "topology.sh", "traffic.sh", "tcp-s1.jsonl"):
            assert (cdir / name).stat().st_size > 0, name
        assert "Mininet" in (cdir / "topology.sh").read_text()
        assert json.loads((cdir / "flows.json").read_text())[0]["cc"] == case["cc"]
    html = (out / "report.html").read_text()
    assert "data:image/png;base64," in html and "mininet" in html and "etcp-droptail" in html


def test_netns_and_mininet_agree_on_rtts_and_queue(tmp_path: Path) -> None:
    """The same scenario on both backends: each flow's path and the queue agree.

    Two Reno flows (40 and 80 ms) on a 5 Mbit/s, 50-packet drop-tail
    dumbbell (the buffer is over 2 BDP: the link stays busy, far below
    what the TCG VM forwards), 20 s with 4 s of warm-up.  Both backends fill
    the link, so their goodput would agree whatever they built: it is the
    premise here, not a comparison.  Compared: the mean queue (within 15%),
    and no flow's round trip (its smallest RTT as its sender measured it) is
    shorter than its base RTT on either backend.  Neither the split of the
    link nor the smallest RTTs are compared between the backends: with two
    drop-tail Reno flows over a standing queue both follow the phase of the
    flows' starts and losses (measured on UML 6.1: the 40 ms flow's share
    0.505 on one backend and 0.322 on the other; the 80 ms flow's smallest
    RTT 103 ms, the queue it started into).  The figures are printed and
    kept in results/kernel-tests/mininet-crosscheck.json.
    """
    from synctcp_testbed.analysis.metrics import flow_min_rtt_ms
    from synctcp_testbed.analysis.rundir import load_run

    sc = load_scenario(str(_tiny(tmp_path, "crosscheck", ["reno"], 20, 4, "[40, 80]", rate=5)))
    got = {}
    for backend in ("netns", "mininet"):
        t0 = time.monotonic()
        out = run.run_scenario(sc, tmp_path / backend, backend=backend, log=print)
        (case,) = load_run(out).cases
        b = case.summary.raw["bottlenecks"][0]
        base = {f["id"]: f["base_rtt_ms"] for f in case.flows() if f.get("group") == "fwd"}
        rtts = flow_min_rtt_ms(case)
        got[backend] = {"goodput_mbit": round(case.summary.raw["goodput_mbit"], 3),
                        "min_rtt_ms": {f"{base[f]:g}": round(rtts.get(f, 0.0), 2) for f in base},
                        "mean_queue_pkts": round(b["mean_pkts"], 2),
                        "utilization": round(b["utilization"], 3),
                        "drop_pct": round(b["drop_pct"], 2), "seconds": round(time.monotonic() - t0)}
    FIGURES.parent.mkdir(parents=True, exist_ok=True)
    FIGURES.write_text(json.dumps(got, indent=1) + "\n")
    print(f"\ncross-check netns vs mininet: {json.dumps(got)}")
    a, m = got["netns"], got["mininet"]
    assert a["utilization"] >= 0.95 and m["utilization"] >= 0.95, got     # the premise
    for fig in (a, m):
        assert sorted(fig["min_rtt_ms"]) == ["40", "80"], got
        # a delay built short shows here; a base RTT is the floor of every sample
        assert all(rtt >= float(base_ms) for base_ms, rtt in fig["min_rtt_ms"].items()), got
    assert a["mean_queue_pkts"] > 0 and \
        abs(m["mean_queue_pkts"] - a["mean_queue_pkts"]) <= 0.15 * a["mean_queue_pkts"], got
