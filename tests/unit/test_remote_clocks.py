"""The clock bound of a one-way delay between two hosts (synctcp_testbed.remote.clocks), from
``chronyc -c tracking`` lines (tests/unit/fixtures/clock/ holds recorded ones)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from synctcp_testbed.remote.clocks import (case_bound_s, discipline_summary, host_clock,
                                           pair_basis, pair_bound_s)

FIX = Path(__file__).parent / "fixtures" / "clock"


def tracking(offset: str, root_delay: str, root_dispersion: str, ref: str = "50505300,PPS",
             leap: str = "Normal") -> str:
    """A ``chronyc -c tracking`` line with these terms (the others as chronyc writes them)."""
    return (f"{ref},1,1795298900.123456789,{offset},-0.000000180,0.000000350,-12.345,"
            f"-0.001,0.012,{root_delay},{root_dispersion},16.0,{leap}\n")


def test_one_host_terms_from_a_recorded_line() -> None:
    c = host_clock("a", (FIX / "constructed_chronyc_tracking_pps.csv").read_text(), "boot-a")
    assert c.bounded and c.offset_s == pytest.approx(-0.000000120)
    assert c.residual_s == pytest.approx(0.000003250 + 0.000000001 / 2)
    assert c.basis == "chrony PPS (stratum 1)"


@pytest.mark.parametrize("ta, tb, bound_us", [
    # |offset_a - offset_b| + (disp_a + delay_a / 2) + (disp_b + delay_b / 2)
    (("0.000010", "0.000100", "0.000020"), ("-0.000005", "0.000040", "0.000030"),
     15 + (20 + 50) + (30 + 20)),
    # both clocks off the same way: the offsets cancel
    (("0.000200", "0.000000", "0.000005"), ("0.000200", "0.000000", "0.000005"), 10),
    # a millisecond-class NTP pair
    (("-0.001000", "0.020000", "0.002000"), ("0.000500", "0.010000", "0.001000"),
     1500 + (2000 + 10000) + (1000 + 5000)),
])
def test_pair_bound(ta: tuple, tb: tuple, bound_us: float) -> None:
    a, b = host_clock("a", tracking(*ta), "boot-a"), host_clock("b", tracking(*tb), "boot-b")
    assert pair_bound_s(a, b) == pytest.approx(bound_us * 1e-6)
    assert pair_bound_s(b, a) == pytest.approx(bound_us * 1e-6)


def test_never_more_than_the_two_hosts_chrony_bounds() -> None:
    a = host_clock("a", tracking("0.000010", "0.000100", "0.000020"), "boot-a")
    b = host_clock("b", tracking("-0.000005", "0.000040", "0.000030"), "boot-b")
    per_host = (10 + 20 + 50) + (5 + 30 + 20)          # chronyc(1)'s bound, each host
    assert pair_bound_s(a, b) <= per_host * 1e-6 + 1e-12


def test_same_boot_id_is_one_clock() -> None:
    unsync = (FIX / "chronyc_tracking_unsync.csv").read_text()
    a, b = host_clock("a", unsync, "same-boot"), host_clock("b", None, "same-boot")
    assert pair_bound_s(a, b) == 0.0
    assert pair_basis(a, b) == "one kernel's clock (same boot_id)"


@pytest.mark.parametrize("text, basis", [
    ((FIX / "chronyc_tracking_unsync.csv").read_text(), "none (chronyd not synchronised)"),
    ((FIX / "chronyc_tracking_local.csv").read_text(), "none (chronyd serves its own clock"),
    ("506 Cannot talk to daemon\n", "none (chronyc: 506 Cannot talk to daemon)"),
    ("", "none (no chronyc tracking)"),
    (None, "none (no chronyc tracking)"),
    ("1,2,3\n", "none (chronyc tracking: expected 14 fields, got 3"),
])
def test_unsynchronised_gives_no_bound(text: str, basis: str) -> None:
    bad = host_clock("b", text, "boot-b")
    good = host_clock("a", tracking("0", "0.000001", "0.000001"), "boot-a")
    assert not bad.bounded and bad.basis.startswith(basis)
    assert pair_bound_s(good, bad) is None and pair_bound_s(bad, good) is None


def test_case_bound_is_the_larger_of_before_and_after() -> None:
    assert case_bound_s(0.0001, 0.0003) == 0.0003
    assert case_bound_s(0.0, 0.0) == 0.0
    assert case_bound_s(None, 0.0003) is None and case_bound_s(0.0001, None) is None


def _reading(pps_seq: int, sources: str = "constructed_chronyc_sources_pps.csv",
             tracking_file: str = "constructed_chronyc_tracking_pps.csv") -> dict:
    """A ``synctcp clock --json`` reading built from the recorded lines, as
    :func:`synctcp.clock.collect` assembles it on a host with one PPS device."""
    from synctcp import clock
    adj = json.loads((FIX / "constructed_adjtimex_chrony_pps.json").read_text())
    kernel = clock.decode_adjtimex(adj["state"], adj["timex"])
    chrony = {"available": True, "error": None,
              "tracking": clock.parse_tracking_csv((FIX / tracking_file).read_text()),
              "sources": clock.parse_sources_csv((FIX / sources).read_text())}
    gpsd = {"available": False, "error": "gpsd at localhost:2947: not running"}
    pps = [{"device": "/dev/pps0", "name": "pps@4", "path": "", "mode": "0x1133",
            "assert": {"time": 1795298900.0 + pps_seq, "sequence": pps_seq}, "clear": None}]
    return {"kernel": kernel, "chrony": chrony, "gpsd": gpsd, "pps_devices": pps,
            "verdict": clock.verdict(kernel, chrony, gpsd, pps)}


def test_discipline_over_a_case_counts_the_pps_pulses_and_names_the_refclocks() -> None:
    d = discipline_summary("s1", _reading(1000), _reading(1031))
    assert d["class"] == "pps" and d["source"] == "PPS" and not d["changed"]
    assert d["pps_pulses"] == {"/dev/pps0": 31}
    assert [(r["name"], r["state"], r["reach"]) for r in d["refclocks"]] == [
        ("NMEA", "not combined", 0o377), ("PPS", "selected", 0o377)]
    assert d["text"] == ("s1: pps (PPS), refclock NMEA not combined, reach 377, refclock PPS "
                         "selected, reach 377, /dev/pps0: 31 pulses")


def test_discipline_that_changed_during_the_case_says_so() -> None:
    before = _reading(5)
    after = _reading(5, sources="chronyc_sources_ntp_loopback.csv",
                     tracking_file="chronyc_tracking_ntp_loopback.csv")
    d = discipline_summary("r1", before, after)
    assert d["changed"] and d["class"] == after["verdict"]["class"] != "pps"
    assert "was pps (PPS) before the case" in d["text"]
    assert d["pps_pulses"] == {"/dev/pps0": 0}          # the PPS stopped


def test_discipline_without_a_reading_is_unknown_not_a_guess() -> None:
    d = discipline_summary("r1", {"error": "no reading (python3 and the shipped package)"},
                           _reading(1))
    assert d["class"] is None and d["text"] == (
        "r1: clock state unknown (no reading (python3 and the shipped package))")
