"""The bound on the clock error of a one-way delay between two hosts.

An OTT measured between two hosts is the receiver's clock at arrival minus
the sender's clock at departure, so it is off by ``e_r - e_s``, the
difference of the two clocks' errors (docs/clock.md).  Each host's clock
is read with ``chronyc -c tracking`` (parsed by
:func:`synctcp.clock.parse_tracking_csv`).

chrony's documentation (chronyc(1), the ``tracking`` command, under "Root
dispersion") gives one host's bound, assuming the stratum-1 computer is
correct::

    clock_error <= |system_time_offset| + root_dispersion + (0.5 * root_delay)

where the system time offset is chronyd's estimate of how far the system
clock is from NTP time, the root dispersion the dispersion accumulated
through all the computers back to the stratum-1 one (chronyc(1)), and half
the root delay the largest error asymmetric network delays can cause
(chrony's FAQ, "How accurate is my system clock?").  chrony documents only
this per-host bound.  The pair
bound below is ours: it reads chrony's bound as the estimate plus the
estimate's uncertainty, i.e. a host's error is ``offset + r`` (or ``-offset
+ r``: the sign convention does not matter as long as both hosts report
alike, which two chronyc do) with ``|r| <= root_dispersion + root_delay /
2``, so that for two hosts a and b::

    |e_a - e_b| <= |offset_a - offset_b| + (root_dispersion_a + root_delay_a / 2)
                                         + (root_dispersion_b + root_delay_b / 2)

which is what :func:`pair_bound_s` computes.  It is never more than the sum
of the two hosts' documented bounds (:func:`synctcp.clock.chrony_bound_us`,
the conservative figure ``synctcp clock`` prints), and less when both
clocks are off the same way.  Like chrony's own bound it assumes both
hosts' primary sources are correct (two hosts synchronised to different
primaries add the primaries' disagreement, which no tracking report
knows).

Two hosts that share one kernel (the same ``boot_id``: network namespaces
of one machine, or ``address = "local"``) read one clock: the bound is 0.
A host whose chronyd is not synchronised ("Not synchronised", or reference
ID 00000000), serves its own clock (the local reference 7F7F0101, whose
zero root delay and dispersion bound nothing) or that has no chronyd gives
no bound, and then neither does the pair: the absolute OTT has an unknown
error, while a queuing delay (a difference of two OTTs over the same pair
of clocks) does not depend on their offset.  Over a case the bound is the larger of the one before and
the one after (:func:`case_bound_s`).
"""

from __future__ import annotations

import shlex
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Dict, List, Optional, Tuple

from synctcp.clock import LOCAL_REFID, ParseError, parse_tracking_csv

if TYPE_CHECKING:
    from .inventory import Host


@dataclass(frozen=True)
class HostClock:
    """One host's clock at one moment: the terms of the bound."""

    host: str
    #: chronyd's system time offset (s); None without a synchronised chronyd
    offset_s: Optional[float]
    #: root dispersion + root delay / 2 (s): how wrong the offset can be
    residual_s: Optional[float]
    #: where the terms come from, for reports: "chrony GPS (stratum 1)", "none (...)"
    basis: str
    boot_id: Optional[str] = None

    @property
    def bounded(self) -> bool:
        return self.offset_s is not None and self.residual_s is not None


def host_clock(host: str, tracking_csv: Optional[str], boot_id: Optional[str] = None
               ) -> HostClock:
    """A host's clock from its ``chronyc -c tracking`` output (None or "": no chronyc)."""
    if not tracking_csv or not tracking_csv.strip():
        return HostClock(host, None, None, "none (no chronyc tracking)", boot_id)
    if "," not in tracking_csv:        # chronyc's own message: "506 Cannot talk to daemon"
        said = tracking_csv.strip().splitlines()[0]
        return HostClock(host, None, None, f"none (chronyc: {said})", boot_id)
    try:
        tr = parse_tracking_csv(tracking_csv)
    except ParseError as exc:
        return HostClock(host, None, None, f"none ({exc})", boot_id)
    if not tr["synchronized"]:
        return HostClock(host, None, None, "none (chronyd not synchronised)", boot_id)
    if tr["ref_id"] == LOCAL_REFID:
        return HostClock(host, None, None, "none (chronyd serves its own clock: local "
                         "reference, no external source)", boot_id)
    residual = tr["root_dispersion_s"] + tr["root_delay_s"] / 2
    ref = tr["ref_name"] or tr["ref_id"]
    return HostClock(host, tr["system_time_offset_s"], residual,
                     f"chrony {ref} (stratum {tr['stratum']})", boot_id)


def same_clock(a: HostClock, b: HostClock) -> bool:
    return bool(a.boot_id) and a.boot_id == b.boot_id


def pair_bound_s(a: HostClock, b: HostClock) -> Optional[float]:
    """Bound on |e_a - e_b| (s): 0 for one kernel's clock, None without a bound for both."""
    if same_clock(a, b):
        return 0.0
    if a.offset_s is None or a.residual_s is None or b.offset_s is None or b.residual_s is None:
        return None
    return abs(a.offset_s - b.offset_s) + a.residual_s + b.residual_s


def pair_basis(a: HostClock, b: HostClock) -> str:
    """Where a pair's bound comes from, in words."""
    if same_clock(a, b):
        return "one kernel's clock (same boot_id)"
    return f"{a.host}: {a.basis}; {b.host}: {b.basis}"


def case_bound_s(before: Optional[float], after: Optional[float]) -> Optional[float]:
    """A pair's bound over a case: the larger of the readings before and after, None if
    either has none."""
    if before is None or after is None:
        return None
    return max(before, after)


def discipline_summary(host: str, before: Dict[str, Any], after: Dict[str, Any]) -> Dict[str, Any]:
    """One host's clock discipline over a case from two ``synctcp clock --json`` readings
    (:func:`synctcp.clock.collect`; ``{"error": ...}`` when it could not run): its class
    (pps, phc, gps-nmea, ntp, kernel, local, unsynchronized, undisciplined), the source,
    the selected refclock's reach, gpsd's fix, and the pulses each PPS device counted
    during the case (its ``assert`` sequence after minus before: a PPS that stopped
    counts 0), with one line for reports (``text``)."""
    if before.get("error") or after.get("error"):
        why = before.get("error") or after.get("error")
        return {"host": host, "class": None, "text": f"{host}: clock state unknown ({why})"}
    v0, v1 = before.get("verdict", {}), after.get("verdict", {})
    cls = v1.get("class")
    changed = v0.get("class") != cls or v0.get("source") != v1.get("source")
    refs = [{"name": s["name"], "kind": s["kind"], "state": s["state"], "reach": s["reach"]}
            for s in after.get("chrony", {}).get("sources", []) if s.get("mode") == "refclock"]
    seq0 = {p["device"]: (p.get("assert") or {}).get("sequence")
            for p in before.get("pps_devices", [])}
    pulses: Dict[str, Optional[int]] = {}
    for p in after.get("pps_devices", []):
        a, b = seq0.get(p["device"]), (p.get("assert") or {}).get("sequence")
        pulses[p["device"]] = None if a is None or b is None else b - a
    gpsd = after.get("gpsd", {})
    fix = (gpsd.get("fix") or {}).get("mode") if gpsd.get("available") else None
    parts = [f"{cls}" + (f" ({v1['source']})" if v1.get("source") else "")]
    if changed:
        parts.append(f"was {v0.get('class')} ({v0.get('source')}) before the case")
    parts += [f"refclock {r['name']} {r['state']}, reach {r['reach']:o}" for r in refs]
    parts += [f"{dev}: {'no' if n is None else n} pulses" for dev, n in pulses.items()]
    if gpsd.get("available"):
        parts.append(f"gpsd fix {fix or 'none'}")
    return {"host": host, "class": cls, "source": v1.get("source"), "changed": changed,
            "refclocks": refs, "pps_pulses": pulses, "gpsd_fix": fix,
            "host_error_us": v1.get("host_error_us"), "text": f"{host}: " + ", ".join(parts)}


#: the clock terms of :mod:`.preflight`'s probe, alone (CHRONYC_SOCKET: ``-h PATH`` or
#: nothing), and the whole discipline as ``synctcp clock --json`` reads it, from the
#: shipped package (BINDIR/py.zip), on one line
CLOCK_PROBE = r"""echo "boot_id=$(cat /proc/sys/kernel/random/boot_id 2>/dev/null)"
command -v chronyc >/dev/null 2>&1 && echo "have_chronyc=1" && echo "tracking=$(timeout 5 chronyc -c CHRONYC_SOCKET tracking 2>/dev/null | head -n 1)"
PYTHONPATH=BINDIR/py.zip timeout 20 python3 -c 'import argparse, json, sys
from synctcp import clock
p = argparse.ArgumentParser()
clock.add_parser(p.add_subparsers())
a = p.parse_args(["clock", "--gpsd-timeout", "1"] + sys.argv[1:])
try:
    r = clock.collect(a)
except (clock.ClockError, OSError) as exc:
    r = {"error": str(exc)}
print("discipline=" + json.dumps(r, separators=(",", ":")))' CHRONYC_ARGS 2>/dev/null
echo probe=done
"""


def clock_probe(host: "Host", bindir: str) -> str:
    """:data:`CLOCK_PROBE` for ``host`` (its chronyd socket) with the package in ``bindir``."""
    sock = f"-h {shlex.quote(host.chronyc_socket)}" if host.chronyc_socket else ""
    args = (f"--chronyc-socket {shlex.quote(host.chronyc_socket)}"
            if host.chronyc_socket else "")
    return (CLOCK_PROBE.replace("CHRONYC_SOCKET", sock).replace("BINDIR", shlex.quote(bindir))
            .replace("CHRONYC_ARGS", args))


#: CLOCK_REALTIME and CLOCK_MONOTONIC read back to back (the smallest span of 5)
TIMEPAIR = ("python3 -c 'import json, time\n"
            "best = None\n"
            "for _ in range(5):\n"
            "    m0 = time.clock_gettime(time.CLOCK_MONOTONIC); r = time.time(); "
            "m1 = time.clock_gettime(time.CLOCK_MONOTONIC)\n"
            "    c = {\"realtime\": r, \"monotonic\": (m0 + m1) / 2, \"span_s\": m1 - m0}\n"
            "    best = c if best is None or c[\"span_s\"] < best[\"span_s\"] else best\n"
            "print(json.dumps(best))'")


def pair_bound(s: "Host", r: "Host", before: Dict[str, HostClock],
               after: Dict[str, HostClock]) -> Dict[str, Any]:
    """The clock bound of one sender/receiver pair over a case (the larger of before
    and after; None without one) and its basis."""
    b0 = pair_bound_s(before[s.name], before[r.name])
    b1 = pair_bound_s(after[s.name], after[r.name])
    bound = case_bound_s(b0, b1)
    return {"sender": s.name, "receiver": r.name,
            "bound_ms": None if bound is None else bound * 1e3,
            "basis": pair_basis(before[s.name], before[r.name])}


def worst(bounds: List[Dict[str, Any]]) -> Tuple[Optional[float], str]:
    """The largest bound of a case's pairs (None if a pair has none), and its basis."""
    if not bounds:
        return None, "no pairs"
    none = [b for b in bounds if b["bound_ms"] is None]
    if none:
        return None, none[0]["basis"]
    top = max(bounds, key=lambda b: b["bound_ms"])
    return float(top["bound_ms"]), top["basis"]
