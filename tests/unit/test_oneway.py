"""One-way figures with their clock bound (synctcp_testbed.analysis.oneway): OTT, min OTT and
queuing delay as ``value ± bound``, the warning above a tenth of the smallest queuing delay,
and what the figures are worth without synchronized clocks."""

from __future__ import annotations

from typing import Any, Dict, List, Optional

import pytest

from synctcp_testbed.analysis.oneway import describe, flat, oneway, pm, warnings
from synctcp_testbed.analysis.rundir import TcpSample

FLOWS = [{"id": "f01", "group": "fwd", "kind": "bulk", "sport": 40001, "dport": 5201},
         {"id": "f02", "group": "rev", "kind": "bulk", "sport": 40002, "dport": 5202}]


def samples(source: str, hz: Any = 1000) -> List[TcpSample]:
    def sock(sport: int, dport: int, min_ott: int, q: int) -> Dict[str, Any]:
        return {"sport": sport, "dport": dport,
                "synctcp": {"module": "sync", "source": source, "peer_clock_hz": hz,
                            "min_ott_us": min_ott, "qdelay_us": q, "max_qdelay_us": 9000}}
    return [TcpSample("s1", 1.0, [sock(40001, 5201, 20000, 2000), sock(40002, 5202, 1, 99999)]),
            TcpSample("s1", 2.0, [sock(40001, 5201, 20000, 4000)]),
            TcpSample("s1", 9.0, [sock(40001, 5201, 20000, 50000)])]     # after the interval


def figures(source: str, bound: Optional[float], hz: Any = 1000) -> Dict[str, Any]:
    o = oneway(samples(source, hz), FLOWS, 0.0, 5.0, bound, "dc1: chrony PPS; dc2: chrony PPS")
    assert o is not None
    return o


def test_option_with_a_bound() -> None:
    o = figures("option", 0.05)
    assert o["samples"] == 2                       # the forward flow, inside the interval
    assert o["min_ott_ms"] == 20.0 and o["qdelay_ms"] == 3.0 and o["ott_ms"] == 23.0
    assert o["ott_bound_ms"] == 0.05 and o["qdelay_bound_ms"] == 0.1
    assert describe(o)[:3] == ["OTT 23.00 ± 0.05 ms", "min OTT 20.00 ± 0.05 ms",
                               "queuing delay 3.00 ± 0.10 ms"]
    assert flat(o) == {"ott_ms": 23.0, "ott_bound_ms": 0.05, "min_ott_ms": 20.0,
                       "qdelay_ms": 3.0, "qdelay_bound_ms": 0.1}


def test_one_clock_is_exact() -> None:
    assert describe(figures("option", 0.0))[0] == "OTT 23.00 ± 0.00 ms"


def test_option_without_synchronized_clocks() -> None:
    o = figures("option", None)
    assert describe(o)[0] == "OTT 23.00 ms ± ?"
    assert "its error is unknown" in o["note"] and "does not depend" in o["note"]


@pytest.mark.parametrize("hz, tick", [(1000, "1.00"), (250, "4.00"), (None, "1.00")])
def test_timestamps_queuing_delay_exact_absolute_ott_not(hz: Any, tick: str) -> None:
    o = figures("ts", 0.05, hz)
    lines = describe(o)
    assert lines[0] == "OTT 23.00 ms ± ?" and lines[1] == "min OTT 20.00 ms ± ?"
    assert lines[2] == f"queuing delay 3.00 ± {tick} ms"
    assert o["note"] == ("RFC 7323 timestamps, no synchronized clock: the queuing delay is exact "
                         "(a difference of one clock, to its tick); the absolute OTT and min OTT "
                         "are not (they hold the two clocks' unknown offset)")


def test_no_telemetry_no_figures() -> None:
    assert oneway([TcpSample("s1", 1.0, [{"sport": 40001, "dport": 5201}])], FLOWS, 0, 5,
                  0.05, "") is None


@pytest.mark.parametrize("value, bound, text", [
    (12.3, 0.05, "12.30 ± 0.05 ms"), (12.3, 0.004, "12.300 ± 0.004 ms"),
    (12.3, None, "12.30 ms ± ?"), (None, 0.05, "-")])
def test_pm(value: Optional[float], bound: Optional[float], text: str) -> None:
    assert pm(value, bound) == text


def test_warning_above_a_tenth_of_the_smallest_queuing_delay() -> None:
    small = {"id": "c1", "oneway": {"qdelay_ms": 2.0, "qdelay_bound_ms": 0.1,
                                    "ott_bound_ms": 0.05, "clock_basis": "b"}}
    big = {"id": "c2", "oneway": {"qdelay_ms": 8.0, "qdelay_bound_ms": 0.5, "ott_bound_ms": 0.25,
                                  "clock_basis": "dc1: chrony NTP"}}
    assert warnings([small]) == []                # 0.1 is a twentieth of 2.0
    assert warnings([small, big]) == [
        "c2: the queuing delay's bound ±0.500 ms exceeds a tenth of the smallest queuing delay "
        "reported (2.000 ms): dc1: chrony NTP",
        "c2: the OTT's bound ±0.250 ms exceeds a tenth of the smallest queuing delay reported "
        "(2.000 ms): dc1: chrony NTP"]
    assert warnings([{"id": "c3", "oneway": None}]) == []
