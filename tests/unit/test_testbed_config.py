"""Testbed configuration: queues, scenarios, case plans, the CLI and queue metrics.

Everything here runs on the host without namespaces: topologies are only
described (``build_topology`` does not touch the system until
``build()``), scripts are parsed, never run.
"""

from __future__ import annotations

import contextlib
import os
import copy
import math
import shlex
import socket
from pathlib import Path
from typing import Any, Dict, List, Optional

import pytest

from synctcp_testbed import cli
from synctcp_testbed.case import kernel, lifecycle, scripts
from synctcp_testbed.case.errors import RunError
from synctcp_testbed.platform import run
from synctcp_testbed.analysis.metrics import queue_stats
from synctcp_testbed.analysis.rundir import QueueSample
from synctcp_testbed.network.qdisc import AQMS, NETEM_LIMIT, Egress, QdiscError, QueueSpec
from synctcp_testbed.case.collect import is_core
from synctcp_testbed.case.scripts import clients_script, servers_script
from synctcp_testbed.network.backends import build_topology
from synctcp_testbed.plan.flows import BULK_PORT, CBR_PORT, CPORT, HTTP_PORT, PlanError, plan_case
from synctcp_testbed.scenario import (MSS_BYTES, ScenarioError, from_dict, load,
                                      presets)

PRESETS = sorted(presets())


def arg(args: List[str], flag: str) -> str:
    """The value after ``flag`` in an argument list."""
    assert args.count(flag) == 1, (flag, args)
    return args[args.index(flag) + 1]


# ---------------------------------------------------------------------------
# qdisc


def test_droptail_is_pfifo_limited_in_packets() -> None:
    assert QueueSpec("droptail", 92).tc_args(10) == ["pfifo", "limit", "92"]


@pytest.mark.parametrize("avpkt", [1500, 576])
def test_red_thresholds_are_bytes_of_packets_times_avpkt(avpkt: int) -> None:
    q = QueueSpec("red", limit_pkts=64, min_pkts=5, max_pkts=32, max_p=0.1, avpkt=avpkt)
    a = q.tc_args(1.536)
    assert a[0] == "red"
    assert arg(a, "limit") == str(64 * avpkt)
    assert arg(a, "min") == str(5 * avpkt)
    assert arg(a, "max") == str(32 * avpkt)
    assert arg(a, "avpkt") == str(avpkt)
    assert arg(a, "probability") == "0.1"
    assert arg(a, "bandwidth") == "1.536mbit"
    # tc-red(8)'s recommended burst, from which tc derives w_q
    assert arg(a, "burst") == str(math.ceil((2 * 5 + 32) / 3))
    assert "ecn" not in a and "adaptive" not in a


def test_red_defaults_are_5_and_15_packets() -> None:
    a = QueueSpec("red", limit_pkts=100).tc_args(10)
    assert (arg(a, "min"), arg(a, "max")) == ("7500", "22500")


@pytest.mark.parametrize("rate", [10, 100])
@pytest.mark.parametrize("target_ms", [5.0, 20.0])
def test_ared_min_th_is_max_5_or_target_times_c_over_2_and_max_th_3_min(
        rate: float, target_ms: float) -> None:
    c_pkts = rate * 1e6 / 8 / 1500                  # capacity in packets/s
    lo = max(5.0, target_ms / 1000 * c_pkts / 2)
    hi = 3 * lo
    q = QueueSpec("ared", limit_pkts=1000, target_ms=target_ms)
    assert q.red_thresholds(rate) == pytest.approx((lo, hi))
    a = q.tc_args(rate)
    assert arg(a, "min") == str(int(lo * 1500)) and arg(a, "max") == str(int(hi * 1500))
    assert "adaptive" in a
    assert arg(a, "bandwidth") == f"{rate}mbit"


def test_ared_at_10_mbit_keeps_the_floor_of_5_packets() -> None:
    # 5 ms of 10 Mbit/s is 4.2 packets: half of it is below 5
    assert QueueSpec("ared", 100).red_thresholds(10) == (5.0, 15.0)
    lo, hi = QueueSpec("ared", 100).red_thresholds(100)
    assert lo == pytest.approx(0.005 * 100e6 / 8 / 1500 / 2) and hi == pytest.approx(3 * lo)


@pytest.mark.parametrize("kind", sorted(AQMS))
def test_ecn_kinds_mark_and_senders_need_ecn(kind: str) -> None:
    q = QueueSpec(kind, limit_pkts=1000)
    a = q.tc_args(10)
    assert q.ecn == (kind.endswith("-ecn") or kind == "dualpi2")
    if kind.startswith(("red", "ared", "pie")):     # dualpi2 and cake mark ECT packets always
        assert ("ecn" in a) == q.ecn
    if kind.startswith(("red", "ared")) and q.ecn:
        assert "harddrop" in a
    if kind in ("fq_codel", "pie"):
        assert "noecn" in a


def test_red_max_above_the_limit_is_refused() -> None:
    with pytest.raises(QdiscError, match="exceeds the queue limit 10"):
        QueueSpec("red", limit_pkts=10).tc_args(10)           # default max 15
    with pytest.raises(QdiscError, match="exceeds"):
        QueueSpec("red", limit_pkts=30, min_pkts=5, max_pkts=31).tc_args(10)
    with pytest.raises(QdiscError, match="exceeds"):
        QueueSpec("ared", limit_pkts=20).tc_args(1000)        # min_th 208 at 1 Gbit/s
    QueueSpec("red", limit_pkts=31, min_pkts=5, max_pkts=31).tc_args(10)


def test_red_min_not_below_max_is_refused() -> None:
    with pytest.raises(QdiscError, match="0 < min"):
        QueueSpec("red", limit_pkts=100, min_pkts=20, max_pkts=20).tc_args(10)


def test_unknown_kind_is_refused_listing_the_kinds() -> None:
    with pytest.raises(QdiscError) as exc:
        QueueSpec("codel").tc_args(10)
    assert "'codel'" in str(exc.value)
    for kind in AQMS:
        assert kind in str(exc.value)


@pytest.mark.parametrize("kw", [{"limit_pkts": 0}, {"limit_pkts": 1_000_001}, {"max_p": 0},
                                {"max_p": 1.5}, {"target_ms": 0}])
def test_out_of_range_queue_parameters_are_refused(kw: Dict[str, Any]) -> None:
    with pytest.raises(QdiscError):
        QueueSpec("red", **kw).validate()


def test_egress_with_delay_and_rate_is_netem_then_htb_then_the_queue() -> None:
    e = Egress(rate_mbit=10, queue=QueueSpec("droptail", 50), delay_ms=5)
    cmds = e.tc_commands("st1a")
    assert cmds == [
        ["qdisc", "add", "dev", "st1a", "root", "handle", "1:", "netem", "limit", str(NETEM_LIMIT),
         "delay", "5ms"],
        ["qdisc", "add", "dev", "st1a", "parent", "1:1", "handle", "2:", "htb", "default", "10"],
        ["class", "add", "dev", "st1a", "parent", "2:", "classid", "2:10", "htb", "rate", "10mbit",
         "ceil", "10mbit"],
        ["qdisc", "add", "dev", "st1a", "parent", "2:10", "handle", "10:", "pfifo", "limit", "50"],
    ]
    # netem's own queue is never the bottleneck
    assert NETEM_LIMIT >= 100 * 50
    assert e.leaf_parent() == "2:10"
    assert e.has_netem


def test_egress_with_rate_only_has_htb_at_the_root_and_no_netem() -> None:
    e = Egress(rate_mbit=20, queue=QueueSpec("pie", 100))
    cmds = e.tc_commands("d")
    assert cmds[0][4:] == ["root", "handle", "2:", "htb", "default", "10"]
    assert cmds[-1][4:8] == ["parent", "2:10", "handle", "10:"]
    assert e.leaf_parent() == "2:10"


def test_egress_queue_without_rate_hangs_off_netem_or_the_root() -> None:
    q = QueueSpec("droptail", 10)
    with_netem = Egress(queue=q, delay_ms=1)
    assert with_netem.leaf_parent() == "1:1"
    assert with_netem.tc_commands("d")[-1][4:6] == ["parent", "1:1"]
    bare = Egress(queue=q)
    assert bare.leaf_parent() == "root"
    assert bare.tc_commands("d") == [["qdisc", "add", "dev", "d", "root", "handle", "10:",
                                      "pfifo", "limit", "10"]]


def test_size_overhead_is_a_size_table_on_the_root_qdisc_only() -> None:
    with_netem = Egress(rate_mbit=1.536, queue=QueueSpec("droptail", 64), delay_ms=450,
                        size_overhead=-14).tc_commands("d")
    assert with_netem[0][4:10] == ["root", "handle", "1:", "stab", "overhead", "-14"]
    assert with_netem[0][10] == "netem"
    assert all("stab" not in c for c in with_netem[1:])
    rate_only = Egress(rate_mbit=10, size_overhead=-14).tc_commands("d")
    assert rate_only[0][4:] == ["root", "handle", "2:", "stab", "overhead", "-14", "htb",
                                "default", "10"]
    assert all("stab" not in c for c in Egress(rate_mbit=10).tc_commands("d"))
    for bad in (Egress(rate_mbit=10, size_overhead=-65), Egress(size_overhead=-14, delay_ms=1)):
        with pytest.raises(QdiscError):
            bad.tc_commands("d")


def test_rate_counts_ip_takes_the_ethernet_header_off_every_rate_limited_link() -> None:
    base = {"name": "t", "topology": {"kind": "dumbbell", "rate_mbit": 1.536, "rtts_ms": [908],
                                      "link_delay_ms": 450, "queue_pkts": 64,
                                      "access_rate_mbit": 10}}
    frame = build_topology(from_dict(base).cases()[0], "zz")
    ip = build_topology(from_dict({**base, "topology": {
        **base["topology"], "rate_counts": "ip"}}).cases()[0], "zz")
    limited = [e for lk in ip.links for e in (lk.a_egress, lk.b_egress) if e.rate_mbit]
    assert len(limited) == 2 * len(ip.links)     # the core and the access links both ways
    assert {e.size_overhead for e in limited} == {-14}
    assert {e.size_overhead for lk in frame.links for e in (lk.a_egress, lk.b_egress)} == {0}
    with pytest.raises(ScenarioError, match="topology.rate_counts 'bits': one of frame, ip"):
        from_dict({**base, "topology": {**base["topology"], "rate_counts": "bits"}})


def test_egress_with_delay_only_has_no_queue_to_sample() -> None:
    e = Egress(delay_ms=7.5, jitter_ms=1, loss_pct=0.5)
    (cmd,) = e.tc_commands("d")
    assert cmd[cmd.index("delay"):] == ["delay", "7.5ms", "1ms", "distribution", "normal",
                                       "loss", "0.5%"]
    assert e.leaf_parent() is None


def test_jitter_above_the_delay_is_refused() -> None:
    with pytest.raises(QdiscError, match="jitter"):
        Egress(delay_ms=5, jitter_ms=6).validate()
    with pytest.raises(QdiscError, match="jitter"):
        Egress(jitter_ms=1).tc_commands("d")
    Egress(delay_ms=5, jitter_ms=5).validate()


@pytest.mark.parametrize("kw", [{"rate_mbit": 0}, {"rate_mbit": 200000}, {"delay_ms": -1},
                                {"loss_pct": 101}, {"queue": QueueSpec("nope")}])
def test_out_of_range_egress_is_refused(kw: Dict[str, Any]) -> None:
    with pytest.raises(QdiscError):
        Egress(**kw).validate()


@pytest.mark.parametrize("kw", [{}, {"rate_mbit": 10}, {"rate_mbit": 10, "queue": QueueSpec()},
                                {"queue": QueueSpec()}])
def test_netem_is_never_present_without_delay_or_loss(kw: Dict[str, Any]) -> None:
    e = Egress(**kw)
    assert not e.has_netem
    assert not any("netem" in c for c in e.tc_commands("d"))
    assert not any("1:1" in c for c in e.tc_commands("d"))


def test_netem_is_present_with_loss_alone() -> None:
    (cmd,) = Egress(loss_pct=1).tc_commands("d")
    assert "netem" in cmd and "delay" not in cmd and cmd[-2:] == ["loss", "1%"]


# ---------------------------------------------------------------------------
# scenarios


def base(**over: Any) -> Dict[str, Any]:
    """A small valid scenario as the dict a TOML file parses into."""
    d: Dict[str, Any] = {"name": "t", "cc": ["reno"], "aqm": ["droptail"],
                         "topology": {"kind": "dumbbell", "rate_mbit": 10, "rtts_ms": [40]}}
    for k, v in over.items():
        if isinstance(v, dict) and isinstance(d.get(k), dict):
            d[k] = {**d[k], **v}
        else:
            d[k] = v
    return d


@pytest.mark.parametrize("name", PRESETS)
def test_every_preset_loads_and_validates(name: str) -> None:
    sc = load(name)
    assert sc.name == name
    sc.validate()
    assert load(str(presets()[name])).as_dict() == sc.as_dict()


def test_the_presets_are_the_seed_scenarios() -> None:
    assert set(PRESETS) >= {"weigle-ftp", "weigle-http", "martin-minority", "reverse-path",
                            "holl-geo", "gu-smallbuffer"}


@pytest.mark.parametrize("name", PRESETS)
def test_case_ids_are_unique_and_sweeps_multiply_cases(name: str) -> None:
    sc = load(name)
    cases = sc.cases()
    ids = [c.id for c in cases]
    assert len(ids) == len(set(ids))
    assert all("/" not in i and i not in (".", "..") for i in ids)
    points = math.prod(len(v) for v in sc.sweep.values())
    # every algorithm and queue (or every system) at every point and seed; the
    # ceiling once per point
    pairs = len(sc.systems) or len(sc.cc) * len(sc.aqm)
    assert len(cases) == points * (pairs * sc.repeat + int(sc.ceiling))
    assert len({c.group for c in cases}) == points * (pairs + int(sc.ceiling))


def test_gu_smallbuffer_is_5_rates_times_3_ccs_plus_a_ceiling() -> None:
    sc = load("gu-smallbuffer")
    cases = sc.cases()
    assert len(cases) == 5 * (3 + 1)
    rates = [10, 25, 50, 100, 1000]
    for r in rates:
        at = [c for c in cases if c.point == {"rate_mbit": r}]
        assert sorted(c.cc for c in at) == sorted(["etcp", "reno", "cubic", "cubic"])
        assert all(c.scenario.topology.rate_mbit == r for c in at)
        assert [c.aqm for c in at].count("ceiling") == 1
    assert sc.topology.rate_mbit == 50, "expanding cases does not change the scenario"


@pytest.mark.parametrize("name", PRESETS)
def test_a_ceiling_case_has_a_queue_of_at_least_4_bdp(name: str) -> None:
    sc = load(name)
    for c in sc.cases():
        if c.aqm == "ceiling":
            bdp = c.scenario.bdp_pkts()
            assert c.cc == "cubic"
            assert c.queue_limit is not None and c.queue_limit >= 4 * bdp
            assert c.queue_limit >= c.scenario.queue_pkts()
            topo = build_topology(c)
            assert topo.links[0].a_egress.queue.limit_pkts == c.queue_limit  # lr or r0r1
            assert topo.links[0].a_egress.queue.kind == "droptail"


def test_queue_bdp_is_k_times_the_bdp_of_the_median_rtt() -> None:
    # median of [10, 40, 100, 300] is the lower middle one, 40 ms
    sc = from_dict(base(topology={"rtts_ms": [300, 10, 100, 40], "queue_bdp": 2.5}))
    bdp = 10e6 / 8 * 0.040 / 1500
    assert sc.median_rtt_ms() == 40
    assert sc.bdp_pkts() == pytest.approx(bdp)
    assert sc.queue_pkts() == round(2.5 * bdp)
    assert sc.queue_pkts(rate_mbit=20) == round(2.5 * 2 * bdp)
    # per sweep point: the BDP follows the rate
    sw = from_dict(base(topology={"queue_bdp": 1.0}, sweep={"rate_mbit": [10, 20]}))
    limits = {c.point["rate_mbit"]: build_topology(c).link("lr").a_egress.queue.limit_pkts
              for c in sw.cases()}
    assert limits == {10: round(10e6 / 8 * 0.04 / 1500), 20: round(20e6 / 8 * 0.04 / 1500)}


def test_martin_minority_queue_is_one_bdp_of_40ms_at_20mbit() -> None:
    sc = load("martin-minority")
    assert sc.queue_pkts() == round(20e6 / 8 * 0.040 / 1500) == 67


def test_bdp_counts_packets_of_the_mtu() -> None:
    sc = from_dict(base(topology={"mtu": 576, "queue_bdp": 1.0}))
    assert sc.queue_pkts() == round(10e6 / 8 * 0.04 / 576)


@pytest.mark.parametrize("table,where", [
    (None, "t.toml"), ("topology", "[topology]"), ("aqm_params", "[aqm_params]"),
    ("traffic", "[traffic]"), ("cbr", "[traffic.cbr]"),
])
def test_unknown_keys_name_the_table_and_the_key(table: Optional[str], where: str) -> None:
    d = base(traffic={"cbr": {"pairs": [1]}})
    if table is None:
        d["bogus_key"] = 1
    elif table == "cbr":
        d["traffic"]["cbr"]["bogus_key"] = 1
    else:
        d.setdefault(table, {})["bogus_key"] = 1
    with pytest.raises(ScenarioError) as exc:
        from_dict(d, where="t.toml")
    msg = str(exc.value)
    assert where in msg and "bogus_key" in msg


def test_unknown_sweep_key_is_refused_naming_it() -> None:
    with pytest.raises(ScenarioError, match="sweep.mtu"):
        from_dict(base(sweep={"mtu": [576, 1500]}))
    with pytest.raises(ScenarioError, match="sweep.rate_mbit: a non-empty list"):
        from_dict(base(sweep={"rate_mbit": []}))


def test_unknown_key_in_a_toml_file_names_the_file(tmp_path: Path) -> None:
    p = tmp_path / "mine.toml"
    p.write_text('name = "mine"\n[topology]\nrtt_ms = [40]\n')
    with pytest.raises(ScenarioError) as exc:
        load(str(p))
    assert str(p) in str(exc.value) and "[topology]" in str(exc.value)
    assert "rtt_ms" in str(exc.value) and "rtts_ms" in str(exc.value), "lists the known keys"


RTTS = ("t.toml: topology.rtts_ms must be a list of RTTs in ms, one per pair "
        "(each from 0 to 20000 ms), e.g. rtts_ms = [40, 80], ")
PAIRS = "must be a list of pair numbers, 1-based (each from 1 to 10000), e.g. "


@pytest.mark.parametrize("over,message", [
    ({"cc": "reno"}, 't.toml: cc must be a list of algorithm names, e.g. cc = ["reno", "sync"], '
                     'not a string like "reno"'),
    ({"aqm": "red"}, "t.toml: aqm must be a list of queue disciplines, "
                     'e.g. aqm = ["droptail", "red-ecn"], not a string like "red"'),
    ({"cc": ["reno", 1]}, "t.toml: cc must be a list of algorithm names, "
                          'e.g. cc = ["reno", "sync"], not a number like 1'),
    ({"cc": []}, "t.toml: cc must be a list of algorithm names, "
                 'e.g. cc = ["reno", "sync"], not an empty list'),
    ({"topology": {"rtts_ms": 40}}, RTTS + "not a number like 40"),
    ({"topology": {"rtts_ms": ["40"]}}, RTTS + 'not a string like "40"'),
    ({"topology": {"rtts_ms": [40, -1]}}, RTTS + "not a number like -1"),
    ({"topology": {"rtts_ms": [40, 20001]}}, RTTS + "not a number like 20001"),
    ({"topology": {"rtts_ms": []}}, RTTS + "not an empty list"),
    ({"topology": {"measure": "lr"}}, "t.toml: topology.measure must be a list of link names, "
                                      'e.g. measure = ["lr"], not a string like "lr"'),
    ({"topology": {"cross_hops": [1.5]}}, "t.toml: topology.cross_hops must be a list of hop "
                                          "numbers (each from 0 to 100), e.g. cross_hops = [1, 3], "
                                          "not a number like 1.5"),
    ({"traffic": {"rev_pairs": True}}, f"t.toml: traffic.rev_pairs {PAIRS}rev_pairs = [1, 2], "
                                       "not a boolean like true"),
    ({"traffic": {"rev_pairs": [0]}}, f"t.toml: traffic.rev_pairs {PAIRS}rev_pairs = [1, 2], "
                                      "not a number like 0"),
    ({"traffic": {"cbr": {"pairs": 1}}}, f"t.toml: traffic.cbr.pairs {PAIRS}pairs = [1, 2], "
                                         "not a number like 1"),
    ({"sweep": 3}, "t.toml: sweep must be a table ([sweep]), not a number"),
    ({"topology": "dumbbell"}, "t.toml: topology must be a table ([topology]), not a string"),
])
def test_a_list_key_that_is_not_a_list_is_refused_naming_key_and_file(
        over: Dict[str, Any], message: str) -> None:
    """``cc = "reno"`` once ran four cases: r, e, n and o."""
    with pytest.raises(ScenarioError) as exc:
        from_dict(base(**over), where="t.toml")
    assert str(exc.value) == message


@pytest.mark.parametrize("command", ["run", "show"])
def test_cli_refuses_a_string_cc_in_one_line_with_exit_2(
        command: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
        capsys: pytest.CaptureFixture, no_vm: None) -> None:
    monkeypatch.chdir(tmp_path)
    Path("my.toml").write_text('name = "my"\ncc = "reno"\n[topology]\nrtts_ms = [40]\n')
    assert cli.main([command, "my.toml"]) == 2
    cap = capsys.readouterr()
    assert cap.out == ""
    assert cap.err == ('synctcp-testbed: my.toml: cc must be a list of algorithm names, '
                       'e.g. cc = ["reno", "sync"], not a string like "reno"\n')


def test_both_queue_pkts_and_queue_bdp_are_refused() -> None:
    with pytest.raises(ScenarioError, match="not both"):
        from_dict(base(topology={"queue_pkts": 50, "queue_bdp": 1.0}))


def test_neither_queue_size_means_100_packets() -> None:
    assert from_dict(base()).queue_pkts() == 100


@pytest.mark.parametrize("over,match", [
    ({"aqm": ["codel"]}, "aqm 'codel'"),
    ({"topology": {"kind": "ring"}}, "topology.kind 'ring'"),
    ({"topology": {"mtu": 575}}, "mtu"),
    ({"topology": {"mtu": 9001}}, "mtu"),
    ({"topology": {"rtts_ms": []}}, "rtts_ms"),
    ({"topology": {"rtts_ms": [-1]}}, "rtts_ms"),
    ({"cc": []}, "cc"),
    ({"name": "a/b"}, "name"),
    ({"duration_s": 10, "warmup_s": 10}, "warmup"),
    ({"traffic": {"http_load_pct": 300}}, "http_load_pct"),
    ({"traffic": {"http_load_pct": 50, "http_pairs": 2}}, "http_pairs"),
    ({"aqm": ["red"], "topology": {"queue_pkts": 10}}, "case reno-red: RED max"),
])
def test_bad_values_are_refused(over: Dict[str, Any], match: str) -> None:
    with pytest.raises(ScenarioError, match=match):
        from_dict(base(**over))


def test_http_pairs_beyond_the_pairs_are_refused_when_the_load_is_swept() -> None:
    with pytest.raises(ScenarioError, match="http_pairs"):
        from_dict(base(topology={"rtts_ms": [40, 50]}, traffic={"http_pairs": 5},
                       sweep={"http_load_pct": [50, 100]}))
    with pytest.raises(ScenarioError, match="http_load_pct"):
        from_dict(base(sweep={"http_load_pct": [50, 300]}))


def test_a_missing_preset_is_refused_listing_the_presets() -> None:
    with pytest.raises(ScenarioError) as exc:
        load("nope")
    assert "'nope'" in str(exc.value) and "weigle-ftp" in str(exc.value)


def test_at_applies_sweep_values_without_mutating_the_original() -> None:
    sc = from_dict(base(topology={"queue_bdp": 2.0}, traffic={"bulk_rev": False},
                        sweep={"rate_mbit": [5, 50], "queue_pkts": [10]}))
    before = copy.deepcopy(sc.as_dict())
    at = sc.at({"rate_mbit": 50, "queue_pkts": 10, "http_load_pct": 70, "bulk_rev": True})
    assert at.topology.rate_mbit == 50
    assert at.topology.queue_pkts == 10 and at.topology.queue_bdp is None
    assert at.queue_pkts() == 10
    assert at.traffic.http_load_pct == 70.0 and at.traffic.bulk_rev is True
    assert at.sweep == {}
    assert sc.as_dict() == before
    assert sc.at({"rev_load": True}).traffic.bulk_rev is True


def test_case_ids_carry_the_sweep_point() -> None:
    ids = [c.id for c in load("reverse-path").cases()]
    assert "sync-droptail-revoff" in ids and "sync-droptail-revon" in ids
    ids = [c.id for c in load("weigle-http").cases()]
    assert "mixreact-droptail-load105" in ids


def test_cases_run_only_the_requested_algorithms_and_queues() -> None:
    sc = load("holl-geo")
    cases = sc.cases(["sync"], ["red"])
    assert [(c.cc, c.aqm) for c in cases] == [("sync", "red")]
    with pytest.raises(ScenarioError, match="unknown queue kind 'codel'"):
        sc.cases(aqms=["codel"])


# ---------------------------------------------------------------------------
# runner planning


def planned(name: str, pick: Any = 0):
    sc = load(name)
    cases = sc.cases()
    case = cases[pick] if isinstance(pick, int) else next(c for c in cases if pick(c))
    topo = build_topology(case)
    return case, topo, plan_case(case, topo)


def path_rtt(topo, src: str, dst: str) -> float:
    """Round-trip propagation delay of the built topology between two nodes."""
    total, cur = 0.0, src
    for _ in range(len(topo.nodes)):
        if cur == dst:
            return total
        nb, lk = topo.next_hops(cur)[dst]
        total += lk.egress(cur).delay_ms + lk.egress(nb).delay_ms
        cur = nb
    raise AssertionError(f"no path {src} -> {dst}")


def test_weigle_ftp_plans_20_flows_each_way_with_unique_ports() -> None:
    case, topo, plan = planned("weigle-ftp")
    rtts = case.scenario.topology.rtts_ms
    fwd = [f for f in plan.flows if f.group == "fwd"]
    rev = [f for f in plan.flows if f.group == "rev"]
    assert len(plan.flows) == 40 and len(fwd) == 20 and len(rev) == 20
    assert len({f.port for f in plan.flows}) == 40
    assert len({f.cport for f in plan.flows}) == 40
    assert len({f.id for f in plan.flows}) == 40
    for i, f in enumerate(fwd, 1):
        assert (f.src, f.dst) == (f"a{i}", f"b{i}")
        assert f.base_rtt_ms == rtts[i - 1]
        assert f.cc == case.cc and f.kind == "bulk" and f.start_s == 0
        assert f.src_addr == topo.addr(f"a{i}") and f.dst_addr == topo.addr(f"b{i}")
    for i, f in enumerate(rev, 1):
        assert (f.src, f.dst) == (f"b{i}", f"a{i}") and f.base_rtt_ms == rtts[i - 1]
    assert {f.port for f in plan.flows} == set(range(BULK_PORT, BULK_PORT + 40))
    assert {f.cport for f in plan.flows} == set(range(CPORT, CPORT + 40))
    assert plan.http == []


@pytest.mark.parametrize("name", PRESETS)
def test_each_flows_base_rtt_is_the_rtt_of_the_built_path(name: str) -> None:
    sc = load(name)
    for case in sc.cases():
        topo = build_topology(case)
        for f in plan_case(case, topo).flows:
            assert path_rtt(topo, f.src, f.dst) == pytest.approx(f.base_rtt_ms), (case.id, f.id)


def test_weigle_ftp_clamps_the_window_to_46_segments_and_measures_the_bottleneck(
        tmp_path: Path) -> None:
    case, topo, plan = planned("weigle-ftp")
    assert case.scenario.topology.window_bytes == 46 * MSS_BYTES
    script = clients_script(plan, topo, tmp_path, 300, 7, 10,
                            window_bytes=case.scenario.topology.window_bytes)
    assert f" -W {46 * MSS_BYTES} " in script
    assert " -W " not in clients_script(plan, topo, tmp_path, 300, 7, 10)
    assert load("reverse-path").topology.window_bytes == 0
    core = [p[0] for p in topo.sample_points() if is_core(p[0])]
    assert set(case.scenario.topology.measure) <= set(core)


def test_weigle_http_full_has_weigles_window_and_initial_window() -> None:
    _, topo, plan = planned("weigle-http-full")
    assert plan.http
    for h in plan.http:
        for node in (h.server, h.client):
            assert topo.nodes[node].init_cwnd_segs == 2
    assert topo.nodes["R0"].init_cwnd_segs is None
    _, topo, _ = planned("weigle-ftp-full")
    assert topo.nodes["a1"].init_cwnd_segs is None       # Linux's own unless a scenario says


def test_init_cwnd_out_of_range_is_one_line_naming_the_key(tmp_path: Path) -> None:
    path = tmp_path / "bad.toml"
    path.write_text('name = "bad"\ncc = ["reno"]\n[topology]\ninit_cwnd_segs = 0\n')
    with pytest.raises(ScenarioError) as err:
        load(str(path))
    msg = str(err.value)
    assert "init_cwnd_segs" in msg and "1" in msg and "\n" not in msg


def test_hosts_get_ecn_only_behind_a_marking_queue() -> None:
    sc = from_dict(base(aqm=["droptail", "red-ecn"]))
    for case in sc.cases():
        topo = build_topology(case)
        want = "1" if case.aqm == "red-ecn" else "0"
        for node in topo.nodes.values():
            if node.router:
                assert "net.ipv4.tcp_ecn" not in node.sysctls
            else:
                assert node.sysctls["net.ipv4.tcp_ecn"] == want


def test_martin_minority_runs_one_flow_of_the_case_among_reno() -> None:
    for case in load("martin-minority").cases():
        topo = build_topology(case)
        flows = plan_case(case, topo).flows
        assert len(flows) == 5
        assert (flows[0].id, flows[0].group, flows[0].cc) == ("f01", "minority", case.cc)
        assert all(f.group == "fwd" and f.cc == "reno" for f in flows[1:])


@pytest.mark.parametrize("rev", [False, True])
def test_reverse_path_adds_cubic_reverse_flows_only_when_on(rev: bool) -> None:
    case, topo, plan = planned("reverse-path", lambda c: c.point == {"bulk_rev": rev}
                               and c.cc == "sync")
    fwd = [f for f in plan.flows if f.group == "fwd"]
    revs = [f for f in plan.flows if f.group == "rev"]
    assert len(fwd) == 3 and all(f.cc == "sync" for f in fwd)
    assert len(revs) == (3 if rev else 0)
    assert all(f.cc == "cubic" and f.src.startswith("r") and f.dst.startswith("s") for f in revs)


def test_rev_pairs_select_the_reverse_flows() -> None:
    sc = from_dict(base(topology={"rtts_ms": [40, 50, 60]},
                        traffic={"bulk_rev": True, "rev_pairs": [2]}))
    case = sc.cases()[0]
    revs = [f for f in plan_case(case, build_topology(case)).flows if f.group == "rev"]
    assert [(f.src, f.dst, f.cc) for f in revs] == [("r2", "s2", "reno")]


@pytest.mark.parametrize("load_pct", [50, 70, 85, 105])
def test_weigle_http_spreads_the_load_over_5_pairs(load_pct: int) -> None:
    case, topo, plan = planned("weigle-http", lambda c: c.point["http_load_pct"] == load_pct)
    assert plan.flows == []
    assert len(plan.http) == 5
    assert sum(h.load_pct for h in plan.http) == pytest.approx(load_pct)
    assert [(h.server, h.client) for h in plan.http] == [(f"a{i}", f"b{i}") for i in range(1, 6)]
    assert all(h.server_addr == topo.addr(h.server) for h in plan.http)


def test_holl_geo_has_a_cbr_flow_on_its_own_port() -> None:
    case, topo, plan = planned("holl-geo")
    cbr = [f for f in plan.flows if f.kind == "cbr"]
    assert len(cbr) == 1
    (f,) = cbr
    assert (f.group, f.cc, f.src, f.dst) == ("cbr", "udp", "s1", "r1")
    assert f.port == CBR_PORT + len(plan.flows) - 1
    assert f.base_rtt_ms == case.scenario.topology.rtts_ms[0]
    # staggered starts: flow k starts k * stagger_s after the first
    assert [g.start_s for g in plan.flows] == [2.0 * k for k in range(len(plan.flows))]
    assert topo.mtu == 576


def test_chain_plans_a_cross_flow_per_hop_and_pair() -> None:
    sc = from_dict(base(topology={"kind": "chain", "hops": 3, "cross_pairs": 2,
                                  "link_delay_ms": 2, "rtts_ms": [40]}))
    case = sc.cases()[0]
    topo = build_topology(case)
    cross = [f for f in plan_case(case, topo).flows if f.group == "cross"]
    assert [(f.src, f.dst) for f in cross] == [(f"x{h}s{j}", f"x{h}r{j}")
                                              for h in range(3) for j in (1, 2)]
    for f in cross:
        assert f.base_rtt_ms == 12 == path_rtt(topo, f.src, f.dst)


def test_cbr_on_a_missing_pair_is_refused() -> None:
    sc = from_dict(base(traffic={"cbr": {"pairs": [2]}}))
    case = sc.cases()[0]
    with pytest.raises(PlanError, match="no pair 2"):
        plan_case(case, build_topology(case))


# ---------------------------------------------------------------------------
# the traffic scripts


def parse_script(script: str) -> List[Dict[str, Any]]:
    """One record per background command of a servers/clients script."""
    lines = script.rstrip("\n").split("\n")
    assert lines[0] == "trap : INT TERM", "a stop signal does not end the shell"
    assert lines[-2:] == ["wait", "wait"], "the script waits for its commands"
    out = []
    for ln in lines[1:-2]:
        if ln.startswith("#"):
            continue
        assert ln.endswith(" &"), ln
        w = shlex.split(ln)
        rec: Dict[str, Any] = {"sleep": 0.0}
        w = w[:-1]
        if w[:3] == ["ip", "netns", "exec"] and w[4:6] == ["sh", "-c"]:
            # a client held at the start barrier: in the namespace, announce,
            # block on the FIFO, then exec the client
            ns, inner = w[3], shlex.split(w[6])
            assert inner[:3] == ["echo", ">>", inner[2]] and inner[2].endswith(".launched;"), ln
            assert inner[3:6] == ["read", "_", "<"] and inner[6].endswith(".go;"), ln
            rec["barrier"] = True
            inner = inner[7:]
            if inner[0] == "sleep":
                rec["sleep"] = float(inner[1].rstrip(";"))
                inner = inner[2:]
            assert inner[0] == "exec", ln
            w = ["ip", "netns", "exec", ns] + inner[1:]
        assert w[:3] == ["ip", "netns", "exec"], ln
        rec["ns"] = w[3]
        cut = w.index(">")
        rec["argv"] = w[4:cut]
        rec["stdout"] = w[cut + 1]
        rec["stderr"] = w[w.index("2>") + 1] if "2>" in w else ("stdout" if "2>&1" in w else None)
        out.append(rec)
    return out


def flowgen_line(script: str) -> Dict[str, Any]:
    """The flowgen command of a clients script: ``{ ARGV > /dev/null 2> LOG; echo $? > STATUS; } &``."""
    lines = [ln for ln in script.splitlines() if ln.startswith("{ ")]
    assert len(lines) == 1, script
    w = shlex.split(lines[0])
    assert w[0] == "{" and w[-2:] == ["}", "&"], lines[0]
    cut = w.index(">")
    assert w[cut + 1] == "/dev/null" and w[cut + 2] == "2>", lines[0]
    assert w[cut + 4:cut + 7] == ["echo", "$?", ">"], lines[0]
    return {"argv": w[1:cut], "stderr": w[cut + 3].rstrip(";"),
            "status": w[cut + 7].rstrip(";")}


@pytest.mark.parametrize("name", ["weigle-ftp", "holl-geo", "reverse-path"])
def test_servers_script_leaves_the_flows_receivers_to_flowgen(name: str, tmp_path: Path) -> None:
    case, topo, plan = planned(name, lambda c: c.point.get("bulk_rev", True))
    assert plan.flows and not plan.http
    assert parse_script(servers_script(plan, topo, tmp_path, case.scenario.duration_s)) == []


def config_lines(text: str) -> List[List[str]]:
    return [ln.split() for ln in text.splitlines() if ln.strip() and not ln.startswith("#")]


@pytest.mark.parametrize("name", ["weigle-ftp", "holl-geo", "martin-minority", "reverse-path"])
def test_flowgen_config_has_one_line_per_flow(name: str) -> None:
    case, topo, plan = planned(name)
    dur = case.scenario.duration_s
    lines = config_lines(scripts.flowgen_config(plan, topo, dur))
    assert len(lines) == len(plan.flows) > 0
    for f, w in zip(plan.flows, lines):
        assert w[:2] == ["flow", f.id] and w[2] == f.kind
        assert w[3:7] == [topo.ns(f.src), topo.ns(f.dst), topo.addr(f.src), topo.addr(f.dst)]
        assert (int(w[7]), int(w[8])) == (f.port, f.cport)
        assert float(w[10]) == f.start_s
        # every flow outlasts the measured interval by TAIL_S
        assert float(w[11]) == max(1, round(dur - f.start_s + scripts.TAIL_S))
        if f.kind == "cbr":
            assert w[9] == "-" and len(w) == 14
            assert float(w[12]) == plan.cbr_kbit * 1000 and int(w[13]) == plan.cbr_bytes
        else:
            assert w[9] == f.cc and len(w) == 12
    # a receiver's namespace never has two flows on one port
    seen = [(w[4], w[7], w[2]) for w in lines]
    assert len(seen) == len(set(seen))


@pytest.mark.parametrize("name", ["weigle-ftp", "holl-geo"])
def test_clients_script_runs_every_flow_in_one_flowgen_at_the_barrier(name: str,
                                                                      tmp_path: Path) -> None:
    case, topo, plan = planned(name)
    dur = case.scenario.duration_s
    bdir = tmp_path / "barrier"
    script = scripts.clients_script(plan, topo, tmp_path, dur, 1, 10, bdir, "/x/flowgen-1")
    fg = flowgen_line(script)
    a = fg["argv"]
    assert a[0] == "/x/flowgen-1"
    assert arg(a, "-c") == str(tmp_path / scripts.FLOWGEN_CONF)
    assert arg(a, "-o") == str(tmp_path / scripts.FLOWGEN_OUT)
    assert arg(a, "--ready-file") == str(bdir / ".launched")
    assert arg(a, "--go-file") == str(bdir / ".go")
    last_end = max(f.start_s + max(1, round(dur - f.start_s + scripts.TAIL_S)) for f in plan.flows)
    # bounded: a hard limit past the last flow's end, within the runner's wait
    assert last_end < float(arg(a, "-l")) < dur + 180
    assert fg["stderr"] == str(tmp_path / scripts.FLOWGEN_LOG)
    assert fg["status"] == str(tmp_path / scripts.FLOWGEN_STATUS)
    assert "iperf3" not in script
    # the replayable command, without the barrier
    (hand,) = [ln for ln in script.splitlines() if ln.startswith("#")]
    words = shlex.split(hand.split("echo go | ", 1)[1])
    assert words == a[:a.index("--ready-file")]
    assert scripts.client_count(plan) == 1


def test_http_scripts_start_a_server_and_a_client_per_pair(tmp_path: Path) -> None:
    case, topo, plan = planned("weigle-http", lambda c: c.point["http_load_pct"] == 85)
    srv = parse_script(servers_script(plan, topo, tmp_path, 300))
    cli_ = parse_script(clients_script(plan, topo, tmp_path, 300, 7, 10))
    assert len(srv) == len(cli_) == 5
    for i, (h, s, c) in enumerate(zip(plan.http, srv, cli_)):
        assert s["ns"] == topo.ns(h.server)
        assert s["argv"][1:4] == ["-m", "synctcp_testbed.traffic.http", "server"]
        assert arg(s["argv"], "--port") == str(HTTP_PORT)
        assert int(arg(s["argv"], "--max-seconds")) > 300
        assert c["ns"] == topo.ns(h.client)
        assert c["argv"][1:4] == ["-m", "synctcp_testbed.traffic.http", "client"]
        assert arg(c["argv"], "--server") == f"{h.server_addr}:{HTTP_PORT}"
        assert float(arg(c["argv"], "--load-pct")) == pytest.approx(85 / 5)
        assert arg(c["argv"], "--seed") == str(7000 + i)
        assert arg(c["argv"], "--out") == str(tmp_path / f"http-{h.client}.csv")
        assert c["stderr"] == str(tmp_path / f"httpc-{h.client}.log")
    assert len({arg(c["argv"], "--seed") for c in cli_}) == 5


@pytest.mark.parametrize("label", ["lr", "lr-rev", "r0r1", "r4r5-rev", "r8r9"])
def test_is_core_accepts_core_links(label: str) -> None:
    assert is_core(label)


@pytest.mark.parametrize("label", ["s1l", "s1l-rev", "a1R0", "b3R5-rev", "x1s1R1", "x3r2R4",
                                   "r1r", "r12r-rev", "r", "rr", "r0r", "lr2"])
def test_is_core_rejects_access_links(label: str) -> None:
    assert not is_core(label)


def test_only_core_links_are_measured_even_with_rated_access_links() -> None:
    sc = from_dict(base(topology={"rtts_ms": [40, 60], "access_rate_mbit": 100}))
    topo = build_topology(sc.cases()[0])
    labels = {p[0] for p in topo.sample_points()}
    assert {"r1r", "s1l"} <= labels
    assert {x for x in labels if is_core(x)} == {"lr", "lr-rev"}


def test_listening_reads_tcp_listeners_and_udp_sockets_of_the_namespace(
        monkeypatch: pytest.MonkeyPatch) -> None:
    # the host's own /proc/self/net in place of a namespace's
    monkeypatch.setattr(lifecycle, "in_netns", lambda ns: contextlib.nullcontext())
    with socket.socket() as lst, socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as udp:
        lst.bind(("127.0.0.1", 0))
        lst.listen()
        udp.bind(("127.0.0.1", 0))
        tcp_port, udp_port = lst.getsockname()[1], udp.getsockname()[1]
        # an established connection's ports are not listeners
        with socket.create_connection(("127.0.0.1", tcp_port)) as conn:
            acc, _ = lst.accept()
            with acc:
                got = lifecycle._listening("x")
                assert (conn.getsockname()[1], "bulk") not in got
        assert (tcp_port, "bulk") in got
        assert (udp_port, "cbr") in got
        # a TCP listener is no UDP socket (nothing runs iperf3, whose -s listened on TCP
        # for UDP tests too)
        assert (tcp_port, "cbr") not in got and (udp_port, "bulk") not in got


# ---------------------------------------------------------------------------
# cli


def test_show_prints_the_scenario_and_its_cases(capsys: pytest.CaptureFixture) -> None:
    assert cli.main(["show", "weigle-ftp"]) == 0
    out = capsys.readouterr().out
    assert "weigle-ftp" in out and "parking-lot" in out and "92 pkts" in out
    for c in load("weigle-ftp").cases():
        assert f"  {c.id}\n" in out


def test_show_json_is_the_resolved_scenario(capsys: pytest.CaptureFixture) -> None:
    import json

    assert cli.main(["show", "martin-minority", "--json"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert data["name"] == "martin-minority" and data["topology"]["queue_bdp"] == 1.0


def test_list_lists_every_preset(capsys: pytest.CaptureFixture) -> None:
    assert cli.main(["list"]) == 0
    out = capsys.readouterr().out.splitlines()
    assert [ln.split()[0] for ln in out] == PRESETS
    for ln in out:
        name, n = ln.split()[:2]
        assert int(n) == len(load(name).cases())


@pytest.fixture
def no_vm(monkeypatch: pytest.MonkeyPatch) -> None:
    """A run that gets past its checks fails the test instead of starting a VM or traffic."""
    def refuse(*a: Any, **kw: Any) -> int:
        raise AssertionError("would have run")
    monkeypatch.setattr(run, "run_scenario", refuse)


def test_run_of_a_missing_scenario_exits_2_with_a_message(
        capsys: pytest.CaptureFixture, no_vm: None) -> None:
    assert cli.main(["run", "nope"]) == 2
    cap = capsys.readouterr()
    assert "synctcp-testbed: no scenario 'nope'" in cap.err
    assert "Traceback" not in cap.err and cap.out == ""


def test_run_with_a_too_short_duration_exits_2(capsys: pytest.CaptureFixture, no_vm: None) -> None:
    assert cli.main(["run", "weigle-ftp", "--duration", "0.5"]) == 2
    assert capsys.readouterr().err == ("synctcp-testbed: command line: duration_s must be a number "
                                       "from 1 to 86400 (s), not 0.5\n")


def test_run_of_an_unknown_queue_exits_2(capsys: pytest.CaptureFixture, no_vm: None) -> None:
    assert cli.main(["run", "weigle-ftp", "--aqm", "codel"]) == 2
    assert "'codel'" in capsys.readouterr().err


def test_run_of_a_queue_the_scenario_cannot_build_exits_2(
        capsys: pytest.CaptureFixture, no_vm: None) -> None:
    # Adaptive RED's max_th at 50 Mbit/s is 31 packets: beyond a 20-packet queue
    assert cli.main(["run", "gu-smallbuffer", "--aqm", "ared"]) == 2
    assert "case etcp-ared-rate50: RED max threshold 31.25 exceeds" in capsys.readouterr().err


def test_show_of_a_bad_file_exits_2(tmp_path: Path, capsys: pytest.CaptureFixture) -> None:
    p = tmp_path / "bad.toml"
    p.write_text("name = \n")
    assert cli.main(["show", str(p)]) == 2
    assert str(p) in capsys.readouterr().err


# ---------------------------------------------------------------------------
# metrics


def ramp(n: int, hz: float, t0: float, rate_mbit: float) -> List[QueueSample]:
    """Queue rising 0, 1, 2, ... packets; link sending at 80 %, a drop every 7th sample."""
    out, sent_b, sent_p, drops = [], 0.0, 0.0, 0.0
    per_b = rate_mbit * 1e6 / 8 * 0.8 / hz
    for i in range(n):
        out.append(QueueSample(t=t0 + i / hz, qlen_pkts=float(i), backlog_bytes=1500.0 * i,
                               drops=drops, sent_pkts=sent_p, sent_bytes=sent_b, marks=0.0))
        sent_b += per_b
        sent_p += per_b / 1500
        drops += 1 if i % 7 == 0 else 0
    return out


def test_queue_stats_of_a_ramp() -> None:
    s = ramp(200, 50, 10.0, 20)
    q = queue_stats(s, rate_mbit=20)
    qlen = [x.qlen_pkts for x in s]
    mean = sum(qlen) / len(qlen)
    p95 = sorted(qlen)[math.ceil(0.95 * len(qlen)) - 1]
    drops = s[-1].drops - s[0].drops
    sent = int(s[-1].sent_pkts - s[0].sent_pkts)
    span = s[-1].t - s[0].t
    util = (s[-1].sent_bytes - s[0].sent_bytes) * 8 / span / 20e6
    assert q.samples == 200
    assert q.mean_pkts == pytest.approx(mean) == pytest.approx(99.5)
    assert q.p95_pkts == p95 == 189
    assert q.max_pkts == 199
    assert q.drops == drops and q.sent_pkts == sent
    assert q.drop_pct == pytest.approx(100 * drops / (drops + sent))
    assert q.utilization == pytest.approx(util) == pytest.approx(0.8)
    assert q.sample_hz == pytest.approx(50)
    assert q.mean_delay_ms == pytest.approx(mean * 1500 * 8 / 20e6 * 1e3)


def test_queue_stats_excludes_samples_outside_start_and_end() -> None:
    s = ramp(300, 100, 0.0, 10)
    # spikes outside the interval that must not count
    s[0], s[-1] = s[0]._replace(qlen_pkts=1e6), s[-1]._replace(qlen_pkts=1e6)
    start, end = 1.0, 2.0
    kept = [x for x in s if start <= x.t <= end]
    q = queue_stats(s, rate_mbit=10, start_s=start, end_s=end)
    assert q.samples == len(kept) == 101
    assert q.mean_pkts == pytest.approx(sum(x.qlen_pkts for x in kept) / len(kept))
    assert q.max_pkts == kept[-1].qlen_pkts == 200
    assert q.drops == kept[-1].drops - kept[0].drops
    assert q.drops < s[-1].drops
    # the interval is closed at both ends
    assert queue_stats(s, 10, start_s=kept[0].t, end_s=kept[-1].t).samples == 101


@pytest.mark.parametrize("toml,msg", [
    ('[topology]\nrate_mbit = "10"\n',
     'topology.rate_mbit must be a number above 0, at most 100000 (Mbit/s), not a string like "10"'),
    ('[topology]\nrate_mbit = "fast"\n',
     'topology.rate_mbit must be a number above 0, at most 100000 (Mbit/s), not a string like "fast"'),
    ('[topology]\nrate_mbit = 0\n',
     'topology.rate_mbit must be a number above 0, at most 100000 (Mbit/s), not 0'),
    ('[topology]\nrtts_ms = 40\n',
     'topology.rtts_ms must be a list of RTTs in ms, one per pair (each from 0 to 20000 ms), '
     'e.g. rtts_ms = [40, 80], not a number like 40'),
    ('cc = "reno"\n', 'cc must be a list of algorithm names, e.g. cc = ["reno", "sync"], '
                      'not a string like "reno"'),
    ('duration_s = "60"\n', 'duration_s must be a number from 1 to 86400 (s), not a string like "60"'),
    ('duration_s = 0\n', 'duration_s must be a number from 1 to 86400 (s), not 0'),
    ('seed = 1.5\n', "seed must be a whole number from 0 to 2147483647, not 1.5"),
    ('[topology]\noffloads = "no"\n', 'topology.offloads must be true or false, not a string like "no"'),
    ('[topology]\nqueue_pkts = "20"\n',
     'topology.queue_pkts must be a whole number from 1 to 1000000 (packets), not a string like "20"'),
    ('[topology]\nmtu = 100\n', "topology.mtu must be a whole number from 576 to 9000 (bytes), not 100"),
    ('[traffic]\nrev_cc = 3\n', "traffic.rev_cc must be a string, not 3"),
    ('[traffic]\nhttp_load_pct = 300\n',
     "traffic.http_load_pct must be a number from 0 to 200 (% of rate_mbit), not 300"),
    ('[traffic]\nbulk_rev = 1\n', "traffic.bulk_rev must be true or false, not 1"),
    ('[traffic.cbr]\npkt_bytes = 10\n',
     "traffic.cbr.pkt_bytes must be a whole number from 24 to 65000 (bytes), not 10"),
    ('[aqm_params]\nred_max_p = 0\n', "aqm_params.red_max_p must be a number above 0, at most 1, not 0"),
    ('[sweep]\nrate_mbit = [10, 0]\n',
     "sweep.rate_mbit values must each be a number above 0, at most 100000 (Mbit/s), not 0"),
    ('[sweep]\nrate_mbit = ["fast"]\n',
     'sweep.rate_mbit values must each be a number above 0, at most 100000 (Mbit/s), '
     'not a string like "fast"'),
    ('[sweep]\nqueue_pkts = [0.5]\n',
     "sweep.queue_pkts values must each be a whole number from 1 to 1000000 (packets), not 0.5"),
    ('[sweep]\nrev_load = [0, 1]\n', "sweep.rev_load values must each be true or false, not 0"),
    ('[sweep]\nbulk_rev = ["on"]\n', 'sweep.bulk_rev values must each be true or false, '
                                      'not a string like "on"'),
    ('[sweep]\nhttp_load_pct = [50, 300]\n',
     "sweep.http_load_pct values must each be a number from 0 to 200 (% of rate_mbit), not 300"),
])
def test_a_key_of_the_wrong_type_or_out_of_range_is_one_line_and_exit_2(
        tmp_path: Path, capsys: pytest.CaptureFixture,
        toml: str, msg: str) -> None:
    f = tmp_path / "my.toml"
    f.write_text('name = "x"\n' + ('' if toml.startswith("cc") else 'cc = ["reno"]\n') + toml)
    from synctcp_testbed.cli import main as testbed_main
    assert testbed_main(["show", str(f)]) == 2
    err = capsys.readouterr().err.strip()
    assert err == f"synctcp-testbed: {f}: {msg}", err


def test_whole_numbers_are_numbers_too() -> None:
    from synctcp_testbed.scenario import from_dict
    sc = from_dict({"name": "x", "cc": ["reno"], "duration_s": 60, "topology": {"rate_mbit": 10}})
    assert sc.duration_s == 60 and sc.topology.rate_mbit == 10


def test_every_number_key_of_a_scenario_has_its_allowed_range() -> None:
    """So that every out-of-range error can say what is allowed."""
    from typing import get_type_hints

    from synctcp_testbed import scenario as S
    from synctcp_testbed.scenario import keys
    for cls in (S.Scenario, S.TopologySpec, S.AqmSpec, S.TrafficSpec, S.CbrSpec):
        for name, hint in get_type_hints(cls).items():
            kind = keys.scalar_type(hint)
            if kind in (int, float) or (getattr(hint, "__origin__", None) is list
                                        and hint.__args__[0] in (int, float)):
                assert keys.range_words(cls, name)[0], f"{cls.__name__}.{name} has no range"


def test_every_preset_is_valid_under_the_typed_models() -> None:
    for name in presets():
        assert load(name).cases(), name


def test_a_bulk_dumbbell_out_of_range_is_a_scenario_error() -> None:
    from synctcp_testbed.scenario import bulk_dumbbell
    with pytest.raises(ScenarioError) as exc:
        bulk_dumbbell("d", ["reno"], 0, 40, 20, 1, 5)
    assert str(exc.value) == ("d: topology.rate_mbit must be a number above 0, at most 100000 "
                              "(Mbit/s), not 0")
    with pytest.raises(ScenarioError, match="^d: queue_pkts|^d: topology.queue_pkts must be a whole"):
        bulk_dumbbell("d", ["reno"], 10, 40, 0, 1, 5)


def test_a_stopped_script_ends_only_after_its_jobs_have_finished(tmp_path: Path) -> None:
    """The runner reads a sampler's CSV once the sampler script has ended:
    a job that catches SIGINT and still writes must have written by then."""
    import signal
    import subprocess
    import sys
    import time

    out = tmp_path / "out.csv"
    job = (f"{sys.executable} -c 'import signal, sys, time\n"
           f"signal.signal(signal.SIGINT, lambda *_: None)\n"
           f"print(\"ready\", flush=True)\n"
           f"signal.pause()\ntime.sleep(0.5)\n"
           f"open(sys.argv[1], \"w\").write(\"t,q\\n1,2\\n\")' {out} &")
    script = scripts.background_script([job])
    proc = subprocess.Popen(["sh", "-c", script], start_new_session=True,
                            stdout=subprocess.PIPE, text=True)
    assert proc.stdout is not None and proc.stdout.readline() == "ready\n"
    time.sleep(0.1)
    os.killpg(proc.pid, signal.SIGINT)
    assert proc.wait(timeout=10) == 0
    assert out.read_text() == "t,q\n1,2\n", "the shell ended before its job had written"


def test_variant_is_set_for_the_projects_algorithms_and_refused_when_missing(tmp_path: Path) -> None:
    params = tmp_path / "module" / "tcp_sync" / "parameters"
    params.mkdir(parents=True)
    (params / "variant").write_text("best\n")
    assert kernel.set_variant("sync", "paper", sys_root=tmp_path) == "best"
    assert (params / "variant").read_text() == "paper"
    assert kernel.set_variant("reno", "paper", sys_root=tmp_path) is None
    assert kernel.set_variant("etcp", "paper", sys_root=tmp_path) is None
    with pytest.raises(RunError, match="tcp_mixreact has no variant parameter"):
        kernel.set_variant("mixreact", "paper", sys_root=tmp_path)


def test_module_params_are_set_for_the_case_and_restored(tmp_path: Path) -> None:
    params = tmp_path / "module" / "tcp_sync" / "parameters"
    params.mkdir(parents=True)
    (params / "thresh_pct").write_text("50\n")
    (params / "source").write_text("auto\n")
    before = kernel.set_module_params("sync", {"thresh_pct": 25, "source": "rtt"},
                                      sys_root=tmp_path)
    assert before == {"thresh_pct": "50", "source": "auto"}
    assert (params / "thresh_pct").read_text() == "25"
    kernel.restore_module_params("sync", before, sys_root=tmp_path)
    assert (params / "thresh_pct").read_text() == "50" and (params / "source").read_text() == "auto"
    # an unknown parameter: a one-line error naming it, and nothing left changed
    with pytest.raises(RunError, match=r"module_params.sync.nosuch: the loaded tcp_sync has no"):
        kernel.set_module_params("sync", {"thresh_pct": 30, "nosuch": 1}, sys_root=tmp_path)
    assert (params / "thresh_pct").read_text() == "50"
    with pytest.raises(RunError, match="not one of this project's modules"):
        kernel.set_module_params("cubic", {"beta": 1}, sys_root=tmp_path)


def test_scenario_module_params_name_this_projects_modules() -> None:
    sc = from_dict({"name": "v", "module_params": {"sync": {"thresh_pct": 25}}})
    assert sc.module_params == {"sync": {"thresh_pct": 25}}
    with pytest.raises(ScenarioError, match="module_params.cubic: parameters are for this"):
        from_dict({"name": "v", "module_params": {"cubic": {"beta": 1}}})
    with pytest.raises(ScenarioError, match="module_params.sync.variant: set it with"):
        from_dict({"name": "v", "module_params": {"sync": {"variant": "paper"}}})
    with pytest.raises(ScenarioError, match="module_params.sync.a b"):
        from_dict({"name": "v", "module_params": {"sync": {"a b": 1}}})


def test_scenario_minutes_need_two_whole_minutes() -> None:
    assert from_dict({"name": "m", "duration_s": 600, "minutes": True}).minutes
    with pytest.raises(ScenarioError, match="minutes: the queue by minute needs duration_s of "
                                            "at least 120 s, not 60"):
        from_dict({"name": "m", "duration_s": 60, "minutes": True})


def test_scenario_variant_is_best_or_paper() -> None:
    assert from_dict({"name": "v"}).variant == "best"
    assert from_dict({"name": "v", "variant": "paper"}).variant == "paper"
    with pytest.raises(ScenarioError, match="variant 'pape': one of best, paper"):
        from_dict({"name": "v", "variant": "pape"})


@pytest.mark.parametrize("argv, want", [([], True), (["--capture"], True)])
def test_capture_key_of_a_scenario_captures_like_the_option(
        monkeypatch: pytest.MonkeyPatch, tmp_path: Path, argv: List[str], want: bool) -> None:
    from synctcp_testbed.platform import choose as platforms

    seen: List[bool] = []

    def record(*a: Any, capture: bool = False, **kw: Any) -> None:
        seen.append(capture)

    monkeypatch.setattr(run, "run_scenario", record)
    monkeypatch.setattr(platforms, "choose",
                        lambda requested=None: platforms.Platform("native", "test", here=True))
    sc = load("martin-full")
    assert sc.capture is True and load("martin-minority").capture is False
    assert cli.main(["run", "martin-full", "--out", str(tmp_path / "r"), *argv]) == 0
    assert cli.main(["run", "martin-minority", "--out", str(tmp_path / "s"), *argv]) == 0
    assert seen == [want, bool(argv)]


def test_others_stop_s_stops_the_minority_of_flows_only() -> None:
    sc = from_dict(base(cc=["sync"], duration_s=60, warmup_s=10,
                        topology={"rtts_ms": [40, 40, 40]},
                        traffic={"minority_of": "cubic", "others_stop_s": 30}))
    case = sc.cases()[0]
    flows = plan_case(case, build_topology(case)).flows
    assert [(f.group, f.cc, f.stop_s) for f in flows] == [
        ("minority", "sync", 0.0), ("fwd", "cubic", 30.0), ("fwd", "cubic", 30.0)]
    # the CUBIC flows send until their stop; the case's flow to the end and past it
    assert [scripts.flow_seconds(f, sc.duration_s) for f in flows] == [
        60 + scripts.TAIL_S, 30, 30]


@pytest.mark.parametrize("traffic, msg", [
    ({"others_stop_s": 30}, "traffic.minority_of, which is not set"),
    ({"minority_of": "cubic", "others_stop_s": 5}, "between warmup_s (10 s) and duration_s"),
    ({"minority_of": "cubic", "others_stop_s": 60}, "between warmup_s (10 s) and duration_s"),
])
def test_others_stop_s_is_refused_where_it_cannot_mean_anything(traffic: Dict[str, Any],
                                                                 msg: str) -> None:
    with pytest.raises(ScenarioError, match=msg.replace("(", r"\(").replace(")", r"\)")):
        from_dict(base(duration_s=60, warmup_s=10, topology={"rtts_ms": [40, 40]},
                       traffic=traffic))
