"""L4S and CAKE peers (issue 32, item 1), without a kernel: the dualpi2 and cake
queues' commands, the netlink request that adds a dualpi2 (the pinned tc
predates it), the scenario keys ``ecn`` and ``aqm_params.dualpi2_*``, their
one-line errors (dctcp without ECN, dualpi2 or AccECN on a kernel that
lacks them), and DualPI2's L and C queues read from queue-LINK.csv."""

from __future__ import annotations

import socket
import struct
from pathlib import Path
from typing import Any, Dict

import pytest

from synctcp_testbed.analysis.metrics import dualq_stats
from synctcp_testbed.analysis.rundir import read_dualq_csv, read_queue_csv
from synctcp_testbed.case.errors import RunError
from synctcp_testbed.case.kernel import check_kernel
from synctcp_testbed.network import tcnl
from synctcp_testbed.network.backends import build_topology
from synctcp_testbed.network.qdisc import AQMS, Egress, QueueSpec, via_netlink
from synctcp_testbed.platform import run
from synctcp_testbed.scenario import ScenarioError, from_dict


def scenario(**kw: Any) -> Dict[str, Any]:
    return {"name": "l4s", "cc": ["dctcp"], "aqm": ["dualpi2"],
            "topology": {"kind": "dumbbell", "rate_mbit": 100, "rtts_ms": [20],
                         "queue_pkts": 1000}, **kw}


# ---- the queues ----------------------------------------------------------------

def test_dualpi2_and_cake_are_queue_kinds_and_which_mark() -> None:
    assert AQMS["dualpi2"] and AQMS["cake-ecn"] and not AQMS["cake"]


def test_dualpi2_args_are_tc_dualpi2s_words() -> None:
    a = QueueSpec("dualpi2", 500, step_ms=1.0, classic_target_ms=15.0, coupling=2,
                  l4s_classify="any_ect").tc_args(100)
    assert a == ["dualpi2", "limit", "500", "target", "15000us", "step_thresh", "1000us",
                 "coupling_factor", "2", "any_ect"]
    assert tcnl.dualpi2_attrs(a[1:]) == {"limit": 500, "target": 15000, "step_us": 1000,
                                         "coupling_factor": 2, "ecn_mask": 3}


def test_cake_is_unlimited_besteffort_under_the_htb_with_the_queue_limit_in_memory() -> None:
    a = QueueSpec("cake", 100).tc_args(100)
    assert a[:3] == ["cake", "unlimited", "besteffort"]
    assert a[a.index("memlimit") + 1] == str(100 * 4096)


def test_a_dualpi2_egress_is_added_over_netlink_after_its_parents() -> None:
    cmds = Egress(rate_mbit=100, queue=QueueSpec("dualpi2", 100), delay_ms=5).tc_commands("e0")
    assert [via_netlink(c) for c in cmds] == [False] * (len(cmds) - 1) + [True]
    cakes = Egress(rate_mbit=100, queue=QueueSpec("cake", 100)).tc_commands("e0")
    assert not any(via_netlink(c) for c in cakes)


def test_the_topology_script_runs_tcnl_for_dualpi2_in_the_nodes_netns() -> None:
    topo = build_topology(from_dict(scenario()).cases()[0], "zz")
    assert all("dualpi2" not in topo._tc_node_script(n) for n in topo.nodes)
    lines = [ln for n in topo.nodes for ln in topo._netlink_node_lines(n)]
    assert lines and all(" -m synctcp_testbed.network.tcnl -n zz-" in ln for ln in lines)
    ns, dev, parent, handle, kind, opts = tcnl.parse_command(lines[0].split(" -m ")[1]
                                                             .split()[1:])
    assert (kind, parent, handle) == ("dualpi2", 0x0002_0010, 0x0010_0000)
    tcnl.dualpi2_attrs(opts)


# ---- the netlink request ---------------------------------------------------------

def test_newqdisc_request_is_one_create_exclusive_message_with_nested_options() -> None:
    msg = tcnl.newqdisc_request(7, 0x20010, 0x100000, "dualpi2",
                                {"limit": 100, "ecn_mask": 3})
    length, mtype, flags, seq, pid = struct.unpack_from("=IHHII", msg)
    assert (length, mtype, seq) == (len(msg), tcnl.RTM_NEWQDISC, 1)
    assert flags == tcnl.NLM_F_REQUEST | tcnl.NLM_F_ACK | tcnl.NLM_F_CREATE | tcnl.NLM_F_EXCL
    family, ifindex, handle, parent, info = struct.unpack_from("=BxxxiIII", msg, 16)
    assert (family, ifindex, handle, parent) == (socket.AF_UNSPEC, 7, 0x100000, 0x20010)
    attrs = msg[36:]
    alen, atype = struct.unpack_from("=HH", attrs)
    assert atype == tcnl.TCA_KIND and attrs[4:alen] == b"dualpi2\0"
    opts = attrs[(alen + 3) & ~3:]
    olen, otype = struct.unpack_from("=HH", opts)
    assert otype == tcnl.TCA_OPTIONS | tcnl.NLA_F_NESTED and olen == 4 + 8 + 8
    assert struct.unpack_from("=HHI", opts, 4) == (8, 1, 100)          # TCA_DUALPI2_LIMIT
    assert struct.unpack_from("=HHB", opts, 12) == (5, 14, 3)          # TCA_DUALPI2_ECN_MASK


@pytest.mark.parametrize("words, message", [
    (["limit"], "dualpi2 limit: a value must follow"),
    (["limit", "0"], "not a whole number from 1"),
    (["target", "soon"], "is not a time"),
    (["coupling_factor", "300"], "from 1 to 255"),
    (["alpha", "99"], "from 0 to 60"),
    (["bogus"], "unknown option 'bogus'"),
])
def test_bad_dualpi2_options_are_one_line(words: list, message: str) -> None:
    with pytest.raises(tcnl.TcnlError) as exc:
        tcnl.dualpi2_attrs(words)
    assert message in str(exc.value) and "\n" not in str(exc.value)


def test_tcnl_command_errors_exit_nonzero_with_one_line(capsys: pytest.CaptureFixture) -> None:
    assert tcnl.main(["qdisc", "add", "dev", "e0"]) == 2
    assert tcnl.main(["qdisc", "add", "dev", "e0", "parent", "2:10", "handle", "10:",
                      "pfifo"]) == 1
    err = capsys.readouterr().err.splitlines()
    assert err[0].startswith("tcnl: usage:") and "adds only dualpi2" in err[1]


# ---- the scenario keys and their errors -------------------------------------------------

@pytest.mark.parametrize("ecn, aqm, want", [
    ("auto", "dualpi2", "1"), ("auto", "cake", "0"), ("auto", "cake-ecn", "1"),
    ("accecn", "dualpi2", "3"), ("on", "droptail", "1"), ("off", "red-ecn", "0"),
])
def test_ecn_sets_the_hosts_tcp_ecn(ecn: str, aqm: str, want: str) -> None:
    sc = from_dict(scenario(cc=["cubic"], aqm=[aqm], ecn=ecn))
    topo = build_topology(sc.cases()[0], "zz")
    hosts = [n for n in topo.nodes.values() if not n.router]
    assert hosts and all(n.sysctls["net.ipv4.tcp_ecn"] == want for n in hosts)


def test_dualpi2_params_reach_the_queue() -> None:
    sc = from_dict(scenario(aqm_params={"dualpi2_step_ms": 2, "dualpi2_target_ms": 20,
                                        "dualpi2_coupling": 3, "dualpi2_classify": "any_ect"}))
    q = sc.queue_spec("dualpi2")
    assert (q.step_ms, q.classic_target_ms, q.coupling, q.l4s_classify) == (2, 20, 3, "any_ect")


@pytest.mark.parametrize("kw, message", [
    ({"aqm": ["droptail"]}, "dctcp over droptail: dctcp needs ECN, which is off there"),
    ({"aqm": ["dualpi2"], "ecn": "off"}, "dctcp over dualpi2: dctcp needs ECN"),
    ({"ecn": "l4s"}, "ecn 'l4s': one of auto, off, on, accecn"),
    ({"aqm_params": {"dualpi2_classify": "ect1"}},
     "aqm_params.dualpi2_classify 'ect1': one of l4s_ect, any_ect"),
    ({"aqm_params": {"dualpi2_coupling": 0}}, "aqm_params.dualpi2_coupling"),
])
def test_scenario_errors_are_one_line(kw: Dict[str, Any], message: str) -> None:
    with pytest.raises(ScenarioError) as exc:
        from_dict(scenario(**kw))
    assert message in str(exc.value) and "\n" not in str(exc.value), str(exc.value)


def test_dctcp_runs_wherever_ecn_is_on() -> None:
    assert [c.id for c in from_dict(scenario(aqm=["droptail"], ecn="on")).cases()] == \
        ["dctcp-droptail"]
    sc = from_dict(scenario(cc=["cubic"], aqm=["droptail"]))
    with pytest.raises(ScenarioError, match="dctcp over droptail"):
        sc.cases(ccs=["dctcp"])          # run --cc dctcp


def test_dualpi2_and_accecn_on_a_kernel_without_them_are_one_line() -> None:
    sc = from_dict(scenario(ecn="accecn"))
    assert sc.kernel_problems("7.2.0") == []
    assert sc.kernel_problems("6.17.1-amd64") == [
        'ecn = "accecn" needs Linux 6.18 or later; this kernel is 6.17.1-amd64']
    with pytest.raises(RunError) as exc:
        check_kernel(sc, "6.1.0-uml")
    text = str(exc.value)
    assert "\n" not in text and text.startswith("qdisc dualpi2 needs Linux 6.17 or later; "
                                                "this kernel is 6.1.0-uml")
    assert "SYNCTCP_UML_SERIES=7.2" in text and 'ecn = "accecn" needs Linux 6.18' in text
    check_kernel(from_dict(scenario(cc=["cubic"], aqm=["cake"])), "6.1")


def test_a_uml_run_on_61_refuses_dualpi2_before_anything_runs(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("SYNCTCP_UML_SERIES", "6.1")
    monkeypatch.setenv("SYNCTCP_PLATFORM", "uml")
    monkeypatch.delenv("SYNCTCP_IN_VM", raising=False)
    monkeypatch.setattr(run, "prepare", lambda *a, **k: pytest.fail("prepared a platform"))
    with pytest.raises(RunError, match="^qdisc dualpi2 needs Linux 6.17 or later; this "
                                       "kernel is 6.1 "):
        run.run_scenario(from_dict(scenario()), tmp_path / "out")
    assert not (tmp_path / "out").exists()


# ---- DualPI2's two queues ----------------------------------------------------------------

DUALQ_CSV = """\
t,qlen_pkts,backlog_bytes,drops,sent_pkts,sent_bytes,marks,l_delay_us,c_delay_us,l_enq_pkts,c_enq_pkts,step_marks,prob
1.00,3,4500,0,100,150000,1,800,0,100,1,1,0
1.01,0,0,0,110,165000,2,0,0,110,1,2,0
1.02,5,7500,0,120,180000,4,1200,5000,118,3,3,4294967
1.03,2,3000,0,130,195000,5,400,0,129,3,4,0
"""


def test_dualq_columns_give_the_l_and_c_queues_separately(tmp_path: Path) -> None:
    f = tmp_path / "queue-lr.csv"
    f.write_text(DUALQ_CSV)
    assert len(read_queue_csv(f)) == 4          # the common columns as before
    st = dualq_stats(read_dualq_csv(f))
    lq, cq = st["queue_l"], st["queue_c"]
    assert lq["delay_mean_ms"] == pytest.approx((0.8 + 0 + 1.2 + 0.4) / 4)
    assert lq["delay_max_ms"] == 1.2 and lq["busy"] == 0.75
    assert (lq["enq_pkts"], cq["enq_pkts"], lq["step_marks"]) == (29, 2, 3)
    assert lq["share"] == pytest.approx(29 / 31) and cq["share"] == pytest.approx(2 / 31)
    assert cq["delay_max_ms"] == 5.0 and cq["busy"] == 0.25
    assert cq["prob_mean"] == pytest.approx(4294967 / 4 / 2**32)


def test_a_queue_of_another_kind_has_no_dualq_columns(tmp_path: Path) -> None:
    f = tmp_path / "queue-lr.csv"
    f.write_text("t,qlen_pkts,backlog_bytes,drops,sent_pkts,sent_bytes,marks\n"
                 "1.0,0,0,0,0,0,0\n")
    assert read_dualq_csv(f) is None
