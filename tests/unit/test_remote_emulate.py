"""remote/emulate.py (issue 30): the presets whose pairs have their own base RTTs run on an
emulator host (per-flow delays by IFB, the parking lot's bottleneck each way), their TCP
settings as host routes; what still cannot run is one line."""

from __future__ import annotations

import dataclasses
import os
import stat
import subprocess
from pathlib import Path
from typing import Dict, List

import pytest

from synctcp_testbed.case.errors import RunError
from synctcp_testbed.network.topology import access_delays
from synctcp_testbed.plan.flows import HTTP_PORT, plan_case
from synctcp_testbed.remote import emulate
from synctcp_testbed.remote.emulate import (HostTopology, delay_script, emulator_stages,
                                            flow_delays, http_port, map_nodes, route_attrs,
                                            route_script)
from synctcp_testbed.remote.inventory import Inventory, from_dict
from synctcp_testbed.scenario import Case, load
from synctcp_testbed.scenario.files import updated


def _inv(senders: int = 2) -> Inventory:
    hosts = []
    for i in range(1, senders + 1):
        hosts += [{"name": f"s{i}", "address": f"192.0.2.{i}", "data_address": f"10.1.0.{i}",
                   "roles": ["sender"]},
                  {"name": f"r{i}", "address": f"192.0.2.{50 + i}",
                   "data_address": f"10.2.0.{i}", "roles": ["receiver"]}]
    hosts.append({"name": "em", "address": "192.0.2.100", "roles": ["emulator"],
                  "interfaces": {"sender": "eth1", "receiver": "eth2"}})
    return from_dict({"host": hosts})


def _case(name: str, **topology: object) -> Case:
    sc = load(name)
    if topology:
        sc = updated(sc, name, topology=dataclasses.replace(sc.topology, **topology))
    return sc.cases(ccs=["reno"])[0]


def _planned(case: Case, inv: Inventory):  # type: ignore[no-untyped-def]
    nodes = map_nodes(case, inv)
    topo = HostTopology(nodes, inv.emulator, emulator_stages(case, inv))
    return topo, plan_case(case, topo)  # type: ignore[arg-type]


def test_weigle_ftp_each_flow_gets_its_pairs_delay_around_one_bottleneck_each_way() -> None:
    inv = _inv()
    case = _case("weigle-ftp")
    topo, plan = _planned(case, inv)
    # the lot's first hop each way, named as the namespace runner names them
    assert sorted(topo.egress) == ["r0r1", "r4r5-rev"]
    assert topo.egress["r0r1"][0] == "eth2" and topo.egress["r4r5-rev"][0] == "eth1"
    # the core's 5 links of 1 ms; the rest per flow
    assert {eg.delay_ms for _, eg in topo.egress.values()} == {5.0}
    stages = flow_delays(case, plan)
    rtts = case.scenario.topology.rtts_ms
    assert [s.delay_ms for s in stages] == sorted({r / 2 - 5 for r in rtts})
    seen = {}
    for st in stages:
        for f in st.flows:
            seen[f.id] = st.delay_ms
            # what the namespace runner's two access links add each way
            assert st.delay_ms == pytest.approx(2 * access_delays(f.base_rtt_ms, 5.0))
    assert sorted(seen) == sorted(f.id for f in plan.flows) and len(plan.flows) == 40
    lines, undo = delay_script(stages, {"sender": "eth1", "receiver": "eth2"})
    ifbs = {ln.split()[3] for ln in lines if ln.startswith("ip link add")}
    assert len(ifbs) == 2 * len(stages)
    for f in plan.flows:
        for dev in ("eth1", "eth2"):
            for key in ("dst_port", "src_port"):
                hits = [ln for ln in lines if f"dev {dev} " in ln and f"{key} {f.port} " in ln]
                assert len(hits) == 1, (f.id, dev, key)
    for ifb in ifbs:
        assert f"ip link del {ifb} 2>/dev/null || true\n" in undo
    assert undo.count("ingress") == 2


def test_one_base_rtt_keeps_all_its_delay_in_the_bottleneck_and_no_ifb() -> None:
    inv = _inv()
    case = _case("reverse-path")
    topo, plan = _planned(case, inv)
    assert sorted(topo.egress) == ["lr", "lr-rev"]
    rtt = case.scenario.topology.rtts_ms[0]
    assert {eg.delay_ms for _, eg in topo.egress.values()} == {rtt / 2}
    assert flow_delays(case, plan) == []
    assert delay_script([], {"sender": "eth1"}) == ([], "")


def test_holl_geo_the_spread_of_rtts_over_a_450_ms_core_and_its_mtu_as_a_route() -> None:
    case = _case("holl-geo")
    topo, plan = _planned(case, _inv())
    assert {eg.delay_ms for _, eg in topo.egress.values()} == {450.0}
    stages = flow_delays(case, plan)
    assert len(stages) == len(set(case.scenario.topology.rtts_ms))
    cbr = [f for st in stages for f in st.flows if f.kind == "cbr"]
    assert cbr, "the call is delayed with its pair"
    lines, _ = delay_script(stages, {"sender": "eth1", "receiver": "eth2"})
    assert any(f"ip_proto udp dst_port {cbr[0].port} " in ln for ln in lines)
    assert route_attrs(case.scenario) == ["mtu", "lock", "576"]


def test_weigle_http_full_route_attributes_are_the_namespace_runners() -> None:
    # (window_segs is flowgen's -W, not a route)
    assert route_attrs(load("weigle-http-full")) == ["initcwnd", "2"]
    assert route_attrs(load("weigle-ftp")) == []
    assert route_attrs(load("reverse-path")) == []


@pytest.mark.parametrize("name", ["martin-full"])
def test_cross_traffic_on_the_hops_is_one_line(name: str) -> None:
    with pytest.raises(RunError) as e:
        map_nodes(_case(name), _inv())
    assert "one bottleneck per hop" in str(e.value) and "\n" not in str(e.value)


def test_a_parking_lot_with_cross_hops_and_an_access_rate_are_one_line() -> None:
    with pytest.raises(RunError, match="one bottleneck per hop"):
        map_nodes(_case("weigle-ftp", cross_hops=[1], cross_pairs=2), _inv())
    with pytest.raises(RunError, match="access links are the hosts' own"):
        map_nodes(_case("reverse-path", access_rate_mbit=100.0), _inv())


def test_a_base_rtt_below_the_core_is_one_line() -> None:
    with pytest.raises(RunError, match=r"base RTT 4 ms is below the core's own 10 ms"):
        emulator_stages(_case("weigle-ftp", rtts_ms=[40.0, 4.0]), _inv())


def test_weigle_http_each_pair_its_own_server_port_and_delay() -> None:
    case = _case("weigle-http")
    _, plan = _planned(case, _inv())
    assert len(plan.http) == 5 and not plan.flows
    assert [http_port(plan, hp) for hp in plan.http] == [HTTP_PORT + i for i in range(5)]
    stages = flow_delays(case, plan)
    assert [s.delay_ms for s in stages] == [r / 2 - 5 for r in (20, 45, 78, 115, 250)]
    assert [[hp.client for hp in s.http] for s in stages] == [["b1"], ["b2"], ["b3"], ["b4"],
                                                              ["b5"]]
    lines, _ = delay_script(stages, {"sender": "eth1", "receiver": "eth2"}, plan)
    for i in range(5):
        assert sum(f"tcp dst_port {HTTP_PORT + i} " in ln for ln in lines) == 2
        assert sum(f"tcp src_port {HTTP_PORT + i} " in ln for ln in lines) == 2
    with pytest.raises(RunError, match="need their plan"):
        delay_script(stages, {"sender": "eth1"})


FAKE_IP = """#!/bin/sh
echo "$*" >> "$LOG"
case "$*" in
  *"route show"*"10.2.0.9/32"*) echo "10.2.0.9 via 10.1.0.254 dev eth1 proto static" ;;
  *"route show"*) ;;
  *"route get 10.2.0.1"*) echo "10.2.0.1 via 10.1.0.254 dev eth1 src 10.1.0.1 uid 0"; echo "    cache" ;;
  *"route get 10.2.0.9"*) echo "10.2.0.9 dev eth3 src 10.1.0.1 uid 0" ;;
  *"route get fd00::2"*) echo "fd00::2 from :: dev eth1 proto kernel src fd00::1 metric 256" ;;
  *"route get"*) echo "RTNETLINK answers: Network is unreachable" >&2; exit 2 ;;
esac
"""


def _run_routes(tmp_path: Path, peers: List[str]) -> Dict[str, object]:
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    ip = bin_dir / "ip"
    ip.write_text(FAKE_IP)
    ip.chmod(ip.stat().st_mode | stat.S_IEXEC)
    script = "set -e\n: > restore.sh\n" + "\n".join(
        route_script(peers, ["window", "66608", "initcwnd", "2"])) + "\n"
    env = {**os.environ, "PATH": f"{bin_dir}:{os.environ['PATH']}", "LOG": str(tmp_path / "log")}
    r = subprocess.run(["sh", "-c", script], cwd=tmp_path, env=env, capture_output=True,
                       text=True, timeout=30)
    log = (tmp_path / "log").read_text().splitlines() if (tmp_path / "log").exists() else []
    restore = (tmp_path / "restore.sh").read_text()
    return {"rc": r.returncode, "err": r.stderr, "log": log, "restore": restore}


def test_routes_to_each_peer_carry_the_attributes_and_restore_puts_back_what_was(
        tmp_path: Path) -> None:
    got = _run_routes(tmp_path, ["10.2.0.9", "10.2.0.1", "fd00::2", "10.2.0.1"])
    assert got["rc"] == 0, got["err"]
    sets = [ln for ln in got["log"] if "replace" in ln]  # type: ignore[union-attr]
    assert sets == [
        "-4 route replace 10.2.0.1/32 via 10.1.0.254 dev eth1 src 10.1.0.1 window 66608 initcwnd 2",
        "-4 route replace 10.2.0.9/32 dev eth3 src 10.1.0.1 window 66608 initcwnd 2",
        "-6 route replace fd00::2/128 dev eth1 src fd00::1 window 66608 initcwnd 2"]
    # a peer without a host route gets its new one deleted; one with gets it back
    assert got["restore"] == ("ip -4 route del 10.2.0.1/32 2>/dev/null || true\n"
                              "ip -4 route replace 10.2.0.9 via 10.1.0.254 dev eth1 proto static\n"
                              "ip -6 route del fd00::2/128 2>/dev/null || true\n")


def test_an_unreachable_peer_stops_the_setup_with_its_address(tmp_path: Path) -> None:
    got = _run_routes(tmp_path, ["10.9.9.9"])
    assert got["rc"] != 0 and "no route to 10.9.9.9" in str(got["err"])


def test_no_attributes_no_routes() -> None:
    assert route_script(["10.2.0.1"], []) == []
    assert emulate.IFB_PREFIX and len(f"{emulate.IFB_PREFIX}s899") <= 15
