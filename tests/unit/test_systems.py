"""The scenario key ``systems`` (issue 32, item 3): cases of chosen (algorithm,
queue) pairs instead of every algorithm over every queue, their one-line
errors, a round trip through plan.json, and the peers presets."""

from __future__ import annotations

from typing import Any, Dict

import pytest

from synctcp_testbed.scenario import ScenarioError, from_dict, load

PAIRS = ["sync/droptail", "dctcp/dualpi2", "cubic/cake", "cubic/fq_codel"]


def scenario(**kw: Any) -> Dict[str, Any]:
    return {"name": "peers", "systems": PAIRS, "topology": {"kind": "dumbbell"}, **kw}


def test_the_cases_are_the_pairs_in_their_order_per_seed() -> None:
    sc = from_dict(scenario(repeat=2))
    assert [c.id for c in sc.cases()] == [
        "sync-droptail-s1", "dctcp-dualpi2-s1", "cubic-cake-s1", "cubic-fq_codel-s1",
        "sync-droptail-s2", "dctcp-dualpi2-s2", "cubic-cake-s2", "cubic-fq_codel-s2"]
    assert [(c.cc, c.aqm) for c in sc.cases()][:4] == [tuple(p.split("/")) for p in PAIRS]
    # cc and aqm are the pairs' (module loading, kernel checks read them)
    assert sc.cc == ["sync", "dctcp", "cubic"]
    assert sc.aqm == ["droptail", "dualpi2", "cake", "fq_codel"]


def test_run_cc_and_aqm_choose_among_the_pairs() -> None:
    sc = from_dict(scenario())
    assert [c.id for c in sc.cases(ccs=["cubic"])] == ["cubic-cake", "cubic-fq_codel"]
    assert [c.id for c in sc.cases(aqms=["dualpi2"])] == ["dctcp-dualpi2"]
    with pytest.raises(ScenarioError, match="no system of .* is bbr over \\*"):
        sc.cases(ccs=["bbr"])


@pytest.mark.parametrize("systems, error", [
    (["sync"], "systems 'sync': an algorithm and a queue as \"cc/aqm\""),
    (["sync/droptail/x"], "systems 'sync/droptail/x': an algorithm and a queue"),
    (["/droptail"], "systems '/droptail': an algorithm and a queue"),
    (["sync/droptail", "sync/droptail"], "systems: sync/droptail given twice"),
    (["sync/nope"], "systems 'sync/nope': queue 'nope': one of droptail"),
    (["dctcp/droptail"], "dctcp over droptail: dctcp needs ECN"),
    ("sync/droptail", "systems must be a list of \"cc/aqm\" pairs"),
])
def test_a_bad_system_is_one_line(systems: Any, error: str) -> None:
    with pytest.raises(ScenarioError) as exc:
        from_dict(scenario(systems=systems))
    assert error in str(exc.value)
    assert len(str(exc.value).splitlines()) == 1


def test_systems_with_cc_or_aqm_is_refused() -> None:
    for key, value in (("cc", ["reno"]), ("aqm", ["droptail"])):
        with pytest.raises(ScenarioError, match="give systems, or cc and aqm, not both"):
            from_dict(scenario(**{key: value}))


def test_the_plan_round_trip_keeps_the_pairs() -> None:
    sc = from_dict(scenario())
    again = from_dict(sc.as_dict(), where="plan.json")
    assert [c.id for c in again.cases()] == [c.id for c in sc.cases()]
    assert "cc" not in sc.as_dict() and "aqm" not in sc.as_dict()
    plain = from_dict({"name": "plain", "cc": ["reno", "sync"], "aqm": ["droptail", "red"]})
    assert from_dict(plain.as_dict()).as_dict() == plain.as_dict()
    assert [c.id for c in plain.cases()] == ["reno-droptail", "sync-droptail", "reno-red",
                                             "sync-red"]


@pytest.mark.parametrize("name", ["peers-dumbbell", "peers-reverse-path", "peers-weigle-ftp"])
def test_the_peers_presets_pair_each_system_with_its_queue(name: str) -> None:
    sc = load(name)
    pairs = {(c.cc, c.aqm) for c in sc.cases()}
    assert {("sync", "droptail"), ("mixreact", "droptail"), ("dctcp", "dualpi2"),
            ("cubic", "cake"), ("cubic", "fq_codel"), ("bbr", "droptail"),
            ("reno", "droptail"), ("cubic", "droptail")} == pairs
    assert sc.repeat == 5 and len(sc.cases()) == 5 * len(pairs)
    # DCTCP sends ECT(0): DualPI2 must take it into its L queue
    assert sc.aqm_params.dualpi2_classify == "any_ect"
    assert sc.tcp_ecn("dualpi2") == "1" and sc.tcp_ecn("droptail") == "0"
