"""Host-side tests of synctcp_mininet: the Mininet Topos mirror the testbed's topologies.

Pure Python (Mininet's Topo is a graph); the networks themselves are built
in tests/kernel/test_mininet.py.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from synctcp_testbed.case.errors import RunError
from synctcp_testbed.case.lifecycle import topology_builder
from synctcp_testbed.network.backends import build_topology as netns_topology
from synctcp_testbed.network.qdisc import Egress, QueueSpec
from synctcp_testbed.scenario import load

synctcp_mininet = pytest.importorskip("synctcp_mininet")
try:
    synctcp_mininet.ensure_mininet()
except ImportError as exc:
    pytest.skip(str(exc), allow_module_level=True)

from synctcp_mininet import cli as mn_cli  # noqa: E402
from synctcp_mininet import demo as mn_demo  # noqa: E402
from synctcp_mininet.topos import (DumbbellTopo, GeoTopo, ParkingLotTopo,  # noqa: E402
                                   SmallBufferTopo, TestbedTopo, ip_lines, scenario_topology,
                                   tclink_params, topos)


def test_mininet_is_the_real_one_not_this_repositorys_directory() -> None:
    import mininet.topo

    assert mininet.topo.__file__.endswith("mininet/topo.py")
    real = os.path.realpath(mininet.topo.__file__)
    assert "dist-packages" in real or "site-packages" in real, real
    repo = Path(__file__).resolve().parents[2]
    assert not real.startswith(str(repo)), real


def test_topo_has_the_testbeds_nodes_interfaces_and_addresses() -> None:
    t = scenario_topology("martin-minority", prefix="mn")
    topo = TestbedTopo(t)
    assert sorted(topo.hosts()) == sorted(t.nodes)
    assert not topo.switches()
    links = {frozenset((a, b)): info for a, b, info in topo.links(withInfo=True)}
    assert len(links) == len(t.links)
    for lk in t.links:
        info = links[frozenset((lk.a, lk.b))]
        assert (info["node1"], info["intfName1"]) == (lk.a, t.dev(lk.a, lk))
        assert info["params1"]["ip"] == f"{t.addr(lk.a, lk)}/24"
        assert info["params2"]["ip"] == f"{t.addr(lk.b, lk)}/24"
        assert info["params1"]["egress"] is lk.a_egress


def test_no_host_gets_mininets_default_10_0_0_0_8_address() -> None:
    topo = DumbbellTopo()
    for h in topo.hosts():
        assert topo.nodeInfo(h)["ip"] is None


def test_routers_forward_and_hosts_keep_the_testbeds_sysctls() -> None:
    topo = DumbbellTopo(aqm="red-ecn")
    assert topo.nodeInfo("l")["router"] and topo.nodeInfo("r")["router"]
    assert topo.nodeInfo("s1")["sysctls"]["net.ipv4.tcp_ecn"] == "1"
    assert not topo.nodeInfo("s1")["router"]


def test_ip_lines_keep_routes_and_mtu_but_not_addresses() -> None:
    t = scenario_topology("holl-geo", prefix="mn")
    lines = ip_lines(t, "l")
    assert lines and not any(ln.startswith("addr add") for ln in lines)
    assert any(ln.startswith("route add") for ln in lines)
    assert any("mtu 576" in ln for ln in lines)
    assert t._ip_node_script("l").count("route add") == sum("route add" in x for x in lines)


def test_delay_only_egress_is_a_tclink_with_the_testbeds_netem_limit() -> None:
    assert tclink_params(Egress(delay_ms=12.5)) == {"max_queue_size": 100000, "delay": "12.5ms"}
    assert tclink_params(Egress(delay_ms=5, loss_pct=1)) == {"max_queue_size": 100000,
                                                            "delay": "5ms", "loss": 1}
    assert tclink_params(Egress()) == {}


def test_rate_limited_queue_and_jitter_are_not_tclinks() -> None:
    """TCLink's queue is netem's limit behind its rate limiter: not the testbed's bottleneck."""
    assert tclink_params(Egress(rate_mbit=10, queue=QueueSpec("droptail", 50))) is None
    assert tclink_params(Egress(rate_mbit=10, queue=QueueSpec("red-ecn", 50), delay_ms=1)) is None
    assert tclink_params(Egress(delay_ms=10, jitter_ms=2)) is None


def test_bottleneck_egress_is_the_testbeds_tc_stack() -> None:
    t = scenario_topology("gu-smallbuffer", rate_mbit=20, prefix="mn")
    lk = t.link("lr")
    cmds = [" ".join(c) for c in lk.a_egress.tc_commands(t.dev("l", lk))]
    assert cmds[-2].endswith("htb rate 20mbit ceil 20mbit")
    assert cmds[-1].endswith("pfifo limit 20")


def test_presets_as_topos() -> None:
    assert len(ParkingLotTopo().hosts()) == 46
    assert len(ParkingLotTopo(pairs=2).hosts()) == 6 + 2 * 2
    assert len(ParkingLotTopo(pairs=2, cross=1).hosts()) == 6 + 2 * 2 + 2 * 2
    geo = GeoTopo()
    assert geo.nodeInfo("l")["ip_lines"][1].endswith("mtu 576 up")
    sb = SmallBufferTopo(rate=20)
    assert sorted(sb.hosts()) == ["l", "r", "r1", "s1"]
    assert set(topos) == {"dumbbell", "parkinglot", "geo", "smallbuffer", "scenario"}


def test_dumbbell_arguments_as_mn_passes_them() -> None:
    topo = DumbbellTopo(rate=5, rtts="30+60+90", queue=25)
    assert len(topo.hosts()) == 8
    eg = next(i for a, b, i in topo.links(withInfo=True) if {a, b} == {"l", "r"})["params1"]["egress"]
    assert eg.rate_mbit == 5 and eg.queue.limit_pkts == 25


def test_swept_key_given_explicitly_is_not_swept() -> None:
    t = scenario_topology("gu-smallbuffer", rate_mbit=7, prefix="mn")
    assert t.link("lr").a_egress.rate_mbit == 7


def test_runner_backends() -> None:
    assert topology_builder("netns") is netns_topology
    from synctcp_mininet.backend import build_topology

    assert topology_builder("mininet") is build_topology
    with pytest.raises(RunError, match="unknown backend 'ovs': one of netns, mininet"):
        topology_builder("ovs")


def test_mininet_backend_mirrors_the_netns_topology() -> None:
    from synctcp_mininet.backend import build_topology

    case = load("martin-minority").cases()[0]
    mn, ns = build_topology(case, "zz"), netns_topology(case, "zz")
    assert list(mn.nodes) == list(ns.nodes)
    assert mn.sample_points() == ns.sample_points()
    assert [mn.addr(n) for n in mn.nodes] == [ns.addr(n) for n in ns.nodes]


def test_synctcp_mininet_run_is_the_testbeds_run_on_mininet(monkeypatch) -> None:
    seen = []
    monkeypatch.setattr(mn_cli.testbed_cli, "main", lambda argv, prog="": seen.append(argv) or 0)
    assert mn_cli.main(["run", "gu-smallbuffer", "--cc", "etcp"]) == 0
    assert mn_cli.main(["list"]) == 0
    assert seen == [["run", "gu-smallbuffer", "--cc", "etcp", "--backend", "mininet"], ["list"]]


def test_mininet_demo_is_the_demo_on_the_mininet_backend(monkeypatch, tmp_path: Path) -> None:
    seen = []
    monkeypatch.setattr(mn_demo.demo, "main", lambda argv, **kw: seen.append((argv, kw)) or 0)
    assert mn_demo.main(["--cc", "reno"]) == 0
    assert seen[0][0] == ["--cc", "reno"] and seen[0][1]["backend"] == "mininet"
    assert seen[0][1]["prog"] == "synctcp_mininet.demo"


# ---------------------------------------------------------------------------
# ``mn --custom topos.py``: Debian's mn execs the file in an empty dict

TOPOS_PY = Path(__file__).resolve().parents[2] / "mininet" / "synctcp_mininet" / "topos.py"
DOCS_TOPO = "dumbbell,rate=20,rtts=40+80,aqm=red-ecn"     # docs/mininet.md's example

#: what /usr/bin/mn (MininetRunner.custom) does with ``--custom FILE``, then ``--topo``
MN_CUSTOM = """\
import sys
from mininet.util import buildTopo
fileName = sys.argv[1]
customs = {}
exec(compile(open(fileName).read(), fileName, 'exec'), customs, customs)
topo = buildTopo(customs['topos'], sys.argv[2])
print(sorted(customs['topos']), sorted(topo.hosts()))
"""


def test_mn_custom_execs_topos_py_without_file_or_package(monkeypatch) -> None:
    from mininet.util import buildTopo

    monkeypatch.setattr("sys.path", list(__import__("sys").path))
    customs: dict = {}
    exec(compile(TOPOS_PY.read_text(), str(TOPOS_PY), "exec"), customs, customs)
    assert "__file__" not in customs
    assert {"dumbbell", "parkinglot", "geo", "smallbuffer", "scenario"} <= set(customs["topos"])
    topo = buildTopo(customs["topos"], DOCS_TOPO)
    assert sorted(topo.hosts()) == ["l", "r", "r1", "r2", "s1", "s2"]
    assert topo.nodeInfo("s1")["sysctls"]["net.ipv4.tcp_ecn"] == "1"
    eg = next(i for a, b, i in topo.links(withInfo=True) if {a, b} == {"l", "r"})["params1"]["egress"]
    assert eg.rate_mbit == 20 and eg.queue.kind == "red-ecn"


def test_mn_custom_with_debians_python_and_a_relative_file_name(tmp_path) -> None:
    """As ``mn`` runs it: /usr/bin/python3, the file name as typed, from the repository root."""
    import subprocess

    system = Path("/usr/bin/python3")
    if not system.exists() or subprocess.run([str(system), "-c", "import mininet.util"],
                                             cwd=tmp_path, capture_output=True).returncode:
        pytest.skip("no system python3 with Debian's mininet")
    script = tmp_path / "mn_custom.py"
    script.write_text(MN_CUSTOM)
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "PYTHONHOME")}
    repo = TOPOS_PY.parents[2]
    out = subprocess.run([str(system), str(script), str(TOPOS_PY.relative_to(repo)), DOCS_TOPO],
                         cwd=repo, env=env, capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    assert "'dumbbell'" in out.stdout and "'s2'" in out.stdout, out.stdout
