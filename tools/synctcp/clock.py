"""``synctcp clock``: is this host's clock fit for exact one-way transit times?

Exact OTTs (the ``tcp_option`` patch) subtract the sender's clock from the
receiver's, so each host's clock error adds to every OTT.  This command
reads what the host knows about its clock and turns it into a bound:

* the kernel's NTP state (``adjtimex``: STA_UNSYNC, PPS bits, estimated and
  maximum error),
* chronyd's ``tracking`` and ``sources`` (``chronyc -c``: CSV),
* gpsd (its JSON protocol: devices, fix, PPS),
* PPS devices in ``/sys/class/pps``,

and prints a verdict with the OTT error bound it implies.  The formula and
the classes are in docs/clock.md.  The parsers are pure functions of the
tools' output (tests/unit/fixtures/clock/ holds recorded outputs).

Exit codes: 0 fit, 1 unfit, 2 error (the kernel clock state cannot be read).
"""

from __future__ import annotations

import argparse
import ctypes
import ctypes.util
import json
import math
import os
import socket
import subprocess
import sys
import time
from pathlib import Path
from typing import Any, Dict, Iterable, List, Optional, Sequence, Tuple

# --------------------------------------------------------------------------
# kernel: adjtimex(2)

STA_BITS: Dict[int, str] = {
    0x0001: "STA_PLL", 0x0002: "STA_PPSFREQ", 0x0004: "STA_PPSTIME", 0x0008: "STA_FLL",
    0x0010: "STA_INS", 0x0020: "STA_DEL", 0x0040: "STA_UNSYNC", 0x0080: "STA_FREQHOLD",
    0x0100: "STA_PPSSIGNAL", 0x0200: "STA_PPSJITTER", 0x0400: "STA_PPSWANDER",
    0x0800: "STA_PPSERROR", 0x1000: "STA_CLOCKERR", 0x2000: "STA_NANO", 0x4000: "STA_MODE",
    0x8000: "STA_CLK",
}
STA_PPSTIME, STA_UNSYNC, STA_PPSSIGNAL, STA_NANO = 0x0004, 0x0040, 0x0100, 0x2000
STA_PPS_ERRORS = 0x0200 | 0x0400 | 0x0800
TIME_STATES = {0: "TIME_OK", 1: "TIME_INS", 2: "TIME_DEL", 3: "TIME_OOP", 4: "TIME_WAIT",
               5: "TIME_ERROR"}
TIME_ERROR = 5


class _Timeval(ctypes.Structure):
    _fields_ = [("tv_sec", ctypes.c_long), ("tv_usec", ctypes.c_long)]


class Timex(ctypes.Structure):
    """struct timex of <sys/timex.h> (glibc, LP64)."""

    _fields_ = [("modes", ctypes.c_uint), ("offset", ctypes.c_long), ("freq", ctypes.c_long),
                ("maxerror", ctypes.c_long), ("esterror", ctypes.c_long), ("status", ctypes.c_int),
                ("constant", ctypes.c_long), ("precision", ctypes.c_long),
                ("tolerance", ctypes.c_long), ("time", _Timeval), ("tick", ctypes.c_long),
                ("ppsfreq", ctypes.c_long), ("jitter", ctypes.c_long), ("shift", ctypes.c_int),
                ("stabil", ctypes.c_long), ("jitcnt", ctypes.c_long), ("calcnt", ctypes.c_long),
                ("errcnt", ctypes.c_long), ("stbcnt", ctypes.c_long), ("tai", ctypes.c_int),
                ("_reserved", ctypes.c_int * 11)]


TIMEX_FIELDS = ("modes", "offset", "freq", "maxerror", "esterror", "status", "constant",
                "precision", "tolerance", "tick", "ppsfreq", "jitter", "shift", "stabil",
                "jitcnt", "calcnt", "errcnt", "stbcnt", "tai")


class ClockError(RuntimeError):
    """The clock state could not be read at all."""


def read_adjtimex() -> Tuple[int, Dict[str, int]]:
    """adjtimex() with modes=0 (read only): (return value, raw struct fields)."""
    libc = ctypes.CDLL(ctypes.util.find_library("c") or None, use_errno=True)
    tx = Timex()
    state = libc.adjtimex(ctypes.byref(tx))
    if state < 0:
        err = ctypes.get_errno()
        raise ClockError(f"adjtimex: {os.strerror(err)}")
    return state, {f: int(getattr(tx, f)) for f in TIMEX_FIELDS}


def decode_adjtimex(state: int, tx: Dict[str, int]) -> Dict[str, Any]:
    """The kernel's clock state in units: status flags, errors in µs, offset
    in µs, frequencies in ppm (the kernel scales them by 2^16)."""
    status = tx["status"]
    nano = bool(status & STA_NANO)
    scale = 1000.0 if nano else 1.0          # offset and jitter are ns with STA_NANO
    return {
        "state": TIME_STATES.get(state, str(state)),
        "status": status,
        "flags": [n for bit, n in sorted(STA_BITS.items()) if status & bit],
        "synchronized": not (status & STA_UNSYNC) and state != TIME_ERROR,
        "maxerror_us": tx["maxerror"],
        "esterror_us": tx["esterror"],
        "offset_us": tx["offset"] / scale,
        "freq_ppm": tx["freq"] / 65536.0,
        "pps": {
            "signal": bool(status & STA_PPSSIGNAL),
            "time_discipline": bool(status & STA_PPSTIME),
            "errors": [n for bit, n in sorted(STA_BITS.items()) if status & bit & STA_PPS_ERRORS],
            "jitter_us": tx["jitter"] / scale,
            "freq_ppm": tx["ppsfreq"] / 65536.0,
            "calibrations": tx["calcnt"], "jitter_exceeded": tx["jitcnt"],
            "errors_count": tx["errcnt"], "stability_exceeded": tx["stbcnt"],
        },
        "tai_offset_s": tx["tai"],
    }


# --------------------------------------------------------------------------
# chrony: chronyc -c tracking / sources

TRACKING_FIELDS = ("ref_id", "ref_name", "stratum", "ref_time", "system_time_offset_s",
                   "last_offset_s", "rms_offset_s", "frequency_ppm", "residual_freq_ppm",
                   "skew_ppm", "root_delay_s", "root_dispersion_s", "update_interval_s",
                   "leap_status")
SOURCE_MODES = {"^": "server", "=": "peer", "#": "refclock"}
SOURCE_STATES = {"*": "selected", "+": "combined", "-": "not combined", "?": "unusable",
                 "x": "falseticker", "~": "too variable"}
LASTRX_NEVER = 4294967295
LOCAL_REFID = "7F7F0101"          # chrony's "local" reference (LOCL)


class ParseError(ValueError):
    """Output of a tool that does not look like what it should."""


def parse_tracking_csv(text: str) -> Dict[str, Any]:
    """``chronyc -c tracking``: one CSV line of 14 fields."""
    lines = [ln for ln in text.splitlines() if ln.strip()]
    if len(lines) != 1:
        raise ParseError(f"chronyc tracking: expected one CSV line, got {len(lines)}")
    f = lines[0].split(",")
    if len(f) != len(TRACKING_FIELDS):
        raise ParseError(f"chronyc tracking: expected {len(TRACKING_FIELDS)} fields, got {len(f)}: "
                         f"{lines[0]!r}")
    try:
        out: Dict[str, Any] = dict(zip(TRACKING_FIELDS, f))
        out["stratum"] = int(f[2])
        for k in TRACKING_FIELDS[3:13]:
            out[k] = float(out[k])
    except ValueError as exc:
        raise ParseError(f"chronyc tracking: {exc}: {lines[0]!r}") from exc
    out["ref_id"] = f[0].upper()
    out["synchronized"] = out["leap_status"] != "Not synchronised" and out["ref_id"] != "00000000"
    return out


def refclock_kind(name: str) -> str:
    """What a refclock's refid says it is: pps, phc (PTP hardware clock) or gps."""
    up = name.upper()
    if "PPS" in up:
        return "pps"
    if "PHC" in up or "PTP" in up:
        return "phc"
    return "gps"


def parse_sources_csv(text: str) -> List[Dict[str, Any]]:
    """``chronyc -c sources``: one CSV line of 10 fields per source."""
    out = []
    for line in text.splitlines():
        if not line.strip():
            continue
        f = line.split(",")
        if len(f) != 10 or f[0] not in SOURCE_MODES or f[1] not in SOURCE_STATES:
            raise ParseError(f"chronyc sources: unexpected line {line!r}")
        try:
            last_rx = int(f[6])
            src: Dict[str, Any] = {
                "mode": SOURCE_MODES[f[0]], "state": SOURCE_STATES[f[1]], "name": f[2],
                "stratum": int(f[3]), "poll": int(f[4]), "reach": int(f[5], 8),
                "last_rx_s": None if last_rx == LASTRX_NEVER else last_rx,
                "offset_s": float(f[7]), "measured_offset_s": float(f[8]), "error_s": float(f[9]),
            }
        except ValueError as exc:
            raise ParseError(f"chronyc sources: {exc}: {line!r}") from exc
        src["kind"] = refclock_kind(f[2]) if f[0] == "#" else src["mode"]
        out.append(src)
    return out


def run_chronyc(chronyc: str, command: str, sock: Optional[str], timeout: float = 5.0) -> str:
    cmd = [chronyc, "-c"] + (["-h", sock] if sock else []) + [command]
    try:
        res = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout, check=False)
    except FileNotFoundError as exc:
        raise ClockError(f"{chronyc} not found (apt-get install chrony)") from exc
    except subprocess.TimeoutExpired as exc:
        raise ClockError(f"{' '.join(cmd)}: no answer in {timeout:g} s") from exc
    if res.returncode != 0:
        raise ClockError(f"chronyd not reachable ({' '.join(cmd)}: "
                         f"{(res.stderr or res.stdout).strip() or 'exit ' + str(res.returncode)})")
    return res.stdout


def chrony_state(chronyc: str = "chronyc", sock: Optional[str] = None) -> Dict[str, Any]:
    try:
        tracking = parse_tracking_csv(run_chronyc(chronyc, "tracking", sock))
        sources = parse_sources_csv(run_chronyc(chronyc, "sources", sock))
    except (ClockError, ParseError) as exc:
        return {"available": False, "error": str(exc), "tracking": None, "sources": []}
    return {"available": True, "error": None, "tracking": tracking, "sources": sources}


# --------------------------------------------------------------------------
# gpsd: JSON protocol

def parse_gpsd(lines: Iterable[str]) -> Dict[str, Any]:
    """gpsd's JSON reports (VERSION, DEVICES, TPV, SKY, PPS, TOFF, POLL) as one summary."""
    out: Dict[str, Any] = {"version": None, "devices": [], "fix": None, "satellites": None,
                           "pps": [], "toff": []}
    for line in lines:
        line = line.strip()
        if not line.startswith("{"):
            continue
        try:
            msg = json.loads(line)
        except json.JSONDecodeError as exc:
            raise ParseError(f"gpsd: bad JSON {line[:80]!r}: {exc}") from exc
        cls = msg.get("class")
        if cls == "VERSION":
            out["version"] = msg.get("release")
        elif cls == "DEVICES":
            out["devices"] = [{k: d.get(k) for k in ("path", "driver", "activated", "flags")}
                              for d in msg.get("devices", [])]
        elif cls == "DEVICE" and msg.get("path"):
            if not any(d["path"] == msg["path"] for d in out["devices"]):
                out["devices"].append({k: msg.get(k) for k in ("path", "driver", "activated", "flags")})
        elif cls == "TPV":
            out["fix"] = _tpv(msg)
        elif cls == "SKY":
            out["satellites"] = {"seen": msg.get("nSat"), "used": msg.get("uSat")}
        elif cls in ("PPS", "TOFF"):
            ev = {"device": msg.get("device"), "real_sec": msg.get("real_sec"),
                  "real_nsec": msg.get("real_nsec"), "clock_sec": msg.get("clock_sec"),
                  "clock_nsec": msg.get("clock_nsec"), "precision": msg.get("precision")}
            out["pps" if cls == "PPS" else "toff"].append(ev)
        elif cls == "POLL":
            for t in msg.get("tpv", []):
                out["fix"] = _tpv(t)
            for s in msg.get("sky", []):
                out["satellites"] = {"seen": s.get("nSat"), "used": s.get("uSat")}
    for ev in out["pps"]:
        if None not in (ev["real_sec"], ev["real_nsec"], ev["clock_sec"], ev["clock_nsec"]):
            ev["offset_us"] = ((ev["real_sec"] - ev["clock_sec"]) * 1e6
                               + (ev["real_nsec"] - ev["clock_nsec"]) / 1e3)
    return out


FIX_MODES = {0: "unknown", 1: "no fix", 2: "2D", 3: "3D"}


def _tpv(msg: Dict[str, Any]) -> Dict[str, Any]:
    mode = msg.get("mode", 0)
    return {"device": msg.get("device"), "mode": FIX_MODES.get(mode, str(mode)), "time": msg.get("time"),
            "ept_s": msg.get("ept")}


def query_gpsd(host: str, port: int, timeout: float = 2.0) -> List[str]:
    """The reports gpsd sends in ``timeout`` seconds after ?WATCH (JSON and
    PPS) and ?POLL, stopping early once POLL came back and a TPV was seen."""
    deadline = time.monotonic() + timeout
    lines: List[str] = []
    with socket.create_connection((host, port), timeout=timeout) as s:
        s.sendall(b'?WATCH={"enable":true,"json":true,"pps":true};\n?POLL;\n')
        buf = b""
        polled = False
        while time.monotonic() < deadline:
            s.settimeout(max(0.01, deadline - time.monotonic()))
            try:
                chunk = s.recv(65536)
            except socket.timeout:
                break
            if not chunk:
                break
            buf += chunk
            while b"\n" in buf:
                raw, buf = buf.split(b"\n", 1)
                line = raw.decode("utf-8", "replace").strip()
                lines.append(line)
                if '"class":"POLL"' in line:
                    polled = True
            if polled and any('"class":"TPV"' in ln or '"tpv":[{' in ln for ln in lines):
                break
    return lines


def gpsd_state(endpoint: Optional[str], timeout: float = 2.0) -> Dict[str, Any]:
    if not endpoint:
        return {"available": False, "error": "not queried", "endpoint": None}
    host, _, port = endpoint.rpartition(":")
    try:
        lines = query_gpsd(host.strip("[]") or "localhost", int(port), timeout)
        st = parse_gpsd(lines)
    except (OSError, ValueError) as exc:
        why = "not running" if isinstance(exc, ConnectionRefusedError) else str(exc)
        return {"available": False, "error": f"gpsd at {endpoint}: {why}", "endpoint": endpoint}
    return {"available": True, "error": None, "endpoint": endpoint, **st}


# --------------------------------------------------------------------------
# PPS devices

def parse_pps_event(text: Optional[str]) -> Optional[Dict[str, Any]]:
    """``/sys/class/pps/ppsN/assert``: "SEC.NSEC#SEQUENCE"; None before any event."""
    if not text or "#" not in text:
        return None
    ts, _, seq = text.strip().partition("#")
    try:
        t, n = float(ts), int(seq)
    except ValueError:
        return None
    return None if n == 0 and t == 0 else {"time": t, "sequence": n}


def pps_devices(root: Path = Path("/sys/class/pps")) -> List[Dict[str, Any]]:
    out: List[Dict[str, Any]] = []
    if not root.is_dir():
        return out
    for d in sorted(root.iterdir()):
        def rd(name: str) -> Optional[str]:
            try:
                return (d / name).read_text().strip()
            except OSError:
                return None
        out.append({"device": f"/dev/{d.name}", "name": rd("name"), "path": rd("path"),
                    "mode": rd("mode"), "assert": parse_pps_event(rd("assert")),
                    "clear": parse_pps_event(rd("clear"))})
    return out


# --------------------------------------------------------------------------
# verdict

#: Typical per-host error of each class, for the message (docs/clock.md).
CLASS_TYPICAL = {"pps": "< ~10 µs", "phc": "< ~10 µs", "gps-nmea": "~1-100 ms",
                 "ntp": "~0.1-10 ms", "kernel": "as the kernel's maxerror says"}
DEFAULT_MAX_ERROR_US = 100.0


def ott_bounds(source: str, peer_clock_hz: Any, clock_bound_ms: Optional[float]
               ) -> Tuple[Optional[float], Optional[float], str]:
    """The error bounds (ms) of an absolute OTT and of a queuing delay over it, from
    the source the module measured them with, and what they mean.

    ``option`` (tcp_option/): receiver's clock minus sender's, off by at most the
    pair's clock bound ``clock_bound_ms`` (None: unknown); the queuing delay, a
    difference of two such OTTs, by at most twice it.  ``ts`` (RFC 7323): the
    peer's TS clock is no wall clock, so the OTT has no bound, while the queuing
    delay is exact to one tick of it (1 ms at Linux's 1000 Hz unless the module
    measured another rate; "other": unknown).  Anything else (``rtt``): none.
    """
    if source == "option":
        if clock_bound_ms is None:
            return None, None, ("absolute OTT (one-way-timestamp option) without a synchronized "
                                "clock on both hosts: its error is unknown; the queuing delay "
                                "does not depend on the clocks' offset, only on their drift")
        return clock_bound_ms, 2 * clock_bound_ms, (
            "absolute OTT (one-way-timestamp option): off by at most the clocks' bound; the "
            "queuing delay by at most twice it")
    if source == "ts":
        tick = (1e3 / peer_clock_hz if isinstance(peer_clock_hz, (int, float)) and
                peer_clock_hz > 0 else None if peer_clock_hz == "other" else 1.0)
        return None, tick, ("RFC 7323 timestamps, no synchronized clock: the queuing delay is "
                            "exact (a difference of one clock, to its tick); the absolute OTT "
                            "and min OTT are not (they hold the two clocks' unknown offset)")
    return None, None, f"source {source}: no one-way figure (the delay includes the reverse path)"


def chrony_bound_us(tr: Dict[str, Any]) -> float:
    """chrony's bound on the system clock's error (chronyc tracking docs):
    |system time offset| + root dispersion + root delay / 2."""
    return float((abs(tr["system_time_offset_s"]) + tr["root_dispersion_s"] + tr["root_delay_s"] / 2) * 1e6)


def verdict(kernel: Optional[Dict[str, Any]], chrony: Dict[str, Any], gpsd: Dict[str, Any],
            pps: Sequence[Dict[str, Any]], max_error_us: float = DEFAULT_MAX_ERROR_US,
            peer_error_us: Optional[float] = None) -> Dict[str, Any]:
    """Fit or not, the class of the clock discipline and the error bounds.

    host bound: chrony's (when chronyd is synchronised and steers the kernel
    clock), else the kernel's maxerror (another daemon keeps it); OTT bound:
    host bound + the peer's (``peer_error_us``, else the same as this host's).
    """
    reasons: List[str] = []
    notes: List[str] = []
    k_sync = bool(kernel and kernel["synchronized"])
    tr = chrony.get("tracking") if chrony.get("available") else None
    sel = next((s for s in chrony.get("sources", []) if s["state"] == "selected"), None)
    bound: Optional[float] = None
    source: Optional[str] = None
    if tr and tr["synchronized"]:
        bound = chrony_bound_us(tr)
        source = tr["ref_name"] or tr["ref_id"]
        if tr["ref_id"] == LOCAL_REFID:
            cls = "local"
            reasons.append("chronyd serves its own clock (local reference): no external time source")
        elif sel is not None and sel["mode"] == "refclock":
            cls = {"pps": "pps", "phc": "phc"}.get(sel["kind"], "gps-nmea")
        else:
            cls = "ntp"
        if not k_sync and cls != "local":
            reasons.append(f"chronyd tracks {source} but the kernel clock is unsynchronised "
                           f"(STA_UNSYNC): chronyd does not steer the system clock (started with -x?)")
            cls = "undisciplined"
    elif k_sync and kernel is not None:
        bound = float(kernel["maxerror_us"])
        pps_k = kernel["pps"]["signal"] and kernel["pps"]["time_discipline"]
        cls = "pps" if pps_k else "kernel"
        source = "kernel PPS" if pps_k else "kernel (no chronyd: ntpd, systemd-timesyncd or another daemon)"
        if chrony.get("error"):
            notes.append(chrony["error"])
    else:
        cls = "unsynchronized"
        reasons.append("the kernel clock is unsynchronised (STA_UNSYNC)" if kernel else
                       "the kernel clock state is unknown")
        if chrony.get("available") and tr is not None:
            reasons.append("chronyd has no selected source (Not synchronised)")
        elif chrony.get("error"):
            reasons.append(chrony["error"])
    if bound is not None and not reasons and bound > max_error_us:
        reasons.append(f"the error bound ±{bound:.1f} µs exceeds ±{max_error_us:g} µs "
                       f"({cls}: typically {CLASS_TYPICAL.get(cls, '?')})")
    # Hints about a better source that is there but not used.
    gps_refs = [s for s in chrony.get("sources", []) if s["mode"] == "refclock"]
    if pps and not any(s["kind"] == "pps" for s in gps_refs):
        notes.append(f"PPS device{'s' if len(pps) > 1 else ''} {', '.join(p['device'] for p in pps)} "
                     f"present but chrony has no PPS refclock (docs/clock.md)")
    if gpsd.get("available") and gpsd.get("fix") and not gps_refs:
        notes.append("gpsd has a fix but chrony has no GPS refclock (refclock SHM 0, docs/clock.md)")
    fit = not reasons and bound is not None
    peer = peer_error_us if peer_error_us is not None else bound
    ott = None if bound is None or peer is None else bound + peer
    if fit:
        summary = (f"fit for exact OTT ({cls}, {source}): error bound ±{ott:.1f} µs "
                   f"(this host ±{bound:.1f} µs + peer ±{peer:.1f} µs)")
    else:
        summary = f"unfit for exact OTT ({cls}): " + "; ".join(reasons)
        if ott is not None:
            summary += f"; error bound would be ±{ott:.1f} µs"
    return {"fit": fit, "class": cls, "source": source, "host_error_us": bound,
            "peer_error_us": peer, "ott_error_us": ott, "max_error_us": max_error_us,
            "reasons": reasons, "notes": notes, "summary": summary}


# --------------------------------------------------------------------------
# command line

def collect(args: argparse.Namespace) -> Dict[str, Any]:
    state, tx = read_adjtimex()
    kernel = decode_adjtimex(state, tx)
    chrony = chrony_state(args.chronyc, args.chronyc_socket)
    gpsd = gpsd_state(None if args.gpsd == "none" else args.gpsd, args.gpsd_timeout)
    pps = pps_devices(Path(args.pps_sysfs))
    return {"kernel": kernel, "chrony": chrony, "gpsd": gpsd, "pps_devices": pps,
            "verdict": verdict(kernel, chrony, gpsd, pps, args.max_error_us, args.peer_error_us)}


def _us(x: Optional[float]) -> str:
    return "-" if x is None or math.isnan(x) else f"{x:.1f} µs"


def format_report(r: Dict[str, Any]) -> List[str]:
    k = r["kernel"]
    lines = [f"kernel:  {k['state']}, {'synchronised' if k['synchronized'] else 'unsynchronised'}, "
             f"maxerror {k['maxerror_us']} µs, esterror {k['esterror_us']} µs, "
             f"flags {' '.join(k['flags']) or '-'}"]
    c = r["chrony"]
    if c["available"]:
        tr = c["tracking"]
        lines.append(f"chrony:  {tr['leap_status']}, reference {tr['ref_name'] or tr['ref_id']} "
                     f"stratum {tr['stratum']}, offset {tr['system_time_offset_s'] * 1e6:+.1f} µs, "
                     f"root delay {tr['root_delay_s'] * 1e6:.1f} µs, "
                     f"root dispersion {tr['root_dispersion_s'] * 1e6:.1f} µs")
        for s in c["sources"]:
            lines.append(f"  {s['mode']:8} {s['name']:16} {s['state']:13} reach {s['reach']:03o} "
                         f"offset {s['offset_s'] * 1e6:+.1f} µs ± {s['error_s'] * 1e6:.1f} µs")
    else:
        lines.append(f"chrony:  {c['error']}")
    g = r["gpsd"]
    if g["available"]:
        fix = g.get("fix") or {}
        lines.append(f"gpsd:    {g.get('version')} at {g['endpoint']}, devices "
                     f"{', '.join(d['path'] or '?' for d in g['devices']) or 'none'}, fix "
                     f"{fix.get('mode', 'none')} {fix.get('time') or ''}, PPS events {len(g['pps'])}")
    else:
        lines.append(f"gpsd:    {g['error']}")
    for p in r["pps_devices"]:
        a = p["assert"]
        lines.append(f"pps:     {p['device']} {p['name'] or ''} {p['path'] or ''} "
                     + (f"assert #{a['sequence']} at {a['time']:.9f}" if a else "no events"))
    if not r["pps_devices"]:
        lines.append("pps:     no devices in /sys/class/pps")
    v = r["verdict"]
    lines.append(f"verdict: {v['summary']}")
    for n in v["notes"]:
        lines.append(f"note:    {n}")
    return lines


def cmd_clock(args: argparse.Namespace) -> int:
    try:
        r = collect(args)
    except ClockError as exc:
        if args.json:
            print(json.dumps({"error": str(exc)}))
        print(f"synctcp clock: {exc}", file=sys.stderr)
        return 2
    if args.json:
        print(json.dumps(r, indent=2))
    else:
        print("\n".join(format_report(r)))
    return 0 if r["verdict"]["fit"] else 1


def add_parser(sub: "argparse._SubParsersAction[argparse.ArgumentParser]") -> None:
    s = sub.add_parser("clock", help="is this host's clock fit for exact OTT? (kernel, chrony, gpsd, PPS)",
                       description="Kernel NTP state, chrony tracking and sources, gpsd and PPS "
                       "devices, and a verdict with the OTT error bound they imply (docs/clock.md). "
                       "Exit 0 fit, 1 unfit, 2 error.")
    s.add_argument("--json", action="store_true", help="JSON output")
    s.add_argument("--chronyc", default="chronyc", metavar="PATH", help="chronyc binary")
    s.add_argument("--chronyc-socket", metavar="PATH",
                   help="chronyd's command socket (chronyc -h PATH; default: chronyc's own)")
    s.add_argument("--gpsd", default="localhost:2947", metavar="HOST:PORT",
                   help="gpsd to ask (default localhost:2947; 'none' to skip)")
    s.add_argument("--gpsd-timeout", type=float, default=2.0, metavar="SEC",
                   help="how long to listen to gpsd (default 2 s)")
    s.add_argument("--pps-sysfs", default="/sys/class/pps", metavar="DIR", help=argparse.SUPPRESS)
    s.add_argument("--max-error-us", type=float, default=DEFAULT_MAX_ERROR_US, metavar="US",
                   help=f"largest per-host error bound that is fit (default {DEFAULT_MAX_ERROR_US:g} µs)")
    s.add_argument("--peer-error-us", type=float, metavar="US",
                   help="the peer's error bound (default: the same as this host's)")
    s.set_defaults(func=cmd_clock)
