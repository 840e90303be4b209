"""The real clock chain on this machine: gpsfake -> gpsd -> chronyd -> synctcp clock.

gpsfake (Debian gpsd-clients) replays an NMEA log, generated here with the
current time at 1 Hz, to a gpsd of its own over TCP (``-t``: gpsd leaves
pseudo-terminals, gpsfake's default, out of NTP).  gpsd writes each fix's
time to the NTP shared-memory segment 0; a private chronyd takes that as
``refclock SHM 0 refid GPS``.  chronyd runs with ``-x``: it never steps or
slews the system clock.  Its pid file and command socket are in a temporary
directory, its NTP and UDP command ports are off.  ``synctcp clock`` is then
pointed at that chronyd and gpsd and must report the GPS source.

Bounded: at most ~60 s, every daemon killed in ``finally``.  Needs root
(segment 0 is root's, gpsd creates it only as root); as root, missing
programs are a failure (``make setup`` installs them), not a skip.
"""

from __future__ import annotations

import datetime as dt
import html
import json
import os
import shutil
import signal
import socket
import subprocess
import time
from pathlib import Path
from typing import Dict, Iterator, List, Optional, Set

import pytest

from synctcp.cli import main
from synctcp.clock import chrony_bound_us, parse_sources_csv, parse_tracking_csv
from synctcp_testbed.remote.clocks import host_clock, pair_basis, pair_bound_s

PROGRAMS = ("gpsfake", "gpsd", "chronyd", "chronyc")
#: High halves of the SysV shm keys gpsd creates: "NT" (NTP0..NTP7) and "Gp"
#: (its export segment, a key per gpsfake session).
GPSD_SHM_PREFIXES = (0x4E54, 0x4770)
DEADLINE_S = 60


def nmea(sentence: str) -> str:
    csum = 0
    for ch in sentence:
        csum ^= ord(ch)
    return f"${sentence}*{csum:02X}\r\n"


def nmea_log(start: dt.datetime, seconds: int) -> str:
    """RMC + GGA each second from ``start`` (UTC), a fixed position."""
    out = []
    for i in range(seconds):
        t = start + dt.timedelta(seconds=i)
        hms, dmy = t.strftime("%H%M%S") + ".00", t.strftime("%d%m%y")
        out.append(nmea(f"GPRMC,{hms},A,4807.038,N,01131.000,E,000.0,000.0,{dmy},,,A"))
        out.append(nmea(f"GPGGA,{hms},4807.038,N,01131.000,E,1,08,0.9,545.4,M,46.9,M,,"))
    return "".join(out)


def test_nmea_checksums() -> None:
    # the NMEA 0183 example sentence and its published checksum
    assert nmea("GPGGA,123519,4807.038,N,01131.000,E,1,08,0.9,545.4,M,46.9,M,,") == \
        "$GPGGA,123519,4807.038,N,01131.000,E,1,08,0.9,545.4,M,46.9,M,,*47\r\n"


def shm_keys() -> Dict[int, int]:
    """SysV shm key -> attach count, from /proc/sysvipc/shm."""
    out: Dict[int, int] = {}
    try:
        lines = Path("/proc/sysvipc/shm").read_text().splitlines()[1:]
    except OSError:
        return out
    for ln in lines:
        f = ln.split()
        out[int(f[0])] = int(f[6])
    return out


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def stop(p: Optional[subprocess.Popen]) -> None:
    """SIGTERM the process group we started, SIGKILL after 5 s."""
    if p is None or p.poll() is not None:
        return
    try:
        os.killpg(p.pid, signal.SIGTERM)
        p.wait(timeout=5)
    except subprocess.TimeoutExpired:
        os.killpg(p.pid, signal.SIGKILL)
        p.wait(timeout=5)
    except ProcessLookupError:
        pass


@pytest.fixture
def chain(tmp_path: Path) -> Iterator[Dict[str, str]]:
    if os.geteuid() != 0:
        pytest.skip("needs root: gpsd creates the NTP shared-memory segment 0 only as root")
    missing = [p for p in PROGRAMS if shutil.which(p) is None]
    assert not missing, f"missing {', '.join(missing)}: apt-get install gpsd gpsd-clients chrony (make setup)"
    run = tmp_path / "run"
    run.mkdir(mode=0o700)
    sock = run / "chronyd.sock"
    conf = tmp_path / "chrony.conf"
    conf.write_text(f"""# private chronyd: no NTP port, no UDP command port, never touches the clock (-x)
pidfile {run / 'chronyd.pid'}
bindcmdaddress {sock}
cmdport 0
port 0
refclock SHM 0 refid GPS poll 2 dpoll 0 delay 0.2 precision 1e-3
""")
    # gpsfake starts feeding the log about 1-2 s after it starts
    start = dt.datetime.now(dt.timezone.utc).replace(microsecond=0) + dt.timedelta(seconds=2)
    log = tmp_path / "gps.nmea"
    log.write_text(nmea_log(start, DEADLINE_S + 30))
    port = free_port()
    before: Set[int] = set(shm_keys())
    chronyd = gpsfake = None
    files = {n: open(tmp_path / f"{n}.log", "w") for n in ("chronyd", "gpsfake")}
    try:
        chronyd = subprocess.Popen(["chronyd", "-x", "-d", "-u", "root", "-f", str(conf)],
                                   stdout=files["chronyd"], stderr=subprocess.STDOUT,
                                   start_new_session=True)
        gpsfake = subprocess.Popen(["gpsfake", "-t", "-q", "-1", "-n", "-c", "0.5", "-W", str(DEADLINE_S + 30),
                                    "-P", str(port), str(log)],
                                   stdout=files["gpsfake"], stderr=subprocess.STDOUT,
                                   env={**os.environ, "TMPDIR": str(run)}, start_new_session=True)
        yield {"socket": str(sock), "gpsd": f"127.0.0.1:{port}", "dir": str(tmp_path)}
    finally:
        stop(gpsfake)
        stop(chronyd)
        for f in files.values():
            f.close()
        # segments gpsd created for this test and nobody uses any more
        for key, nattch in shm_keys().items():
            if key >> 16 in GPSD_SHM_PREFIXES and key not in before and nattch == 0:
                subprocess.run(["ipcrm", "-M", str(key)], capture_output=True, check=False)


def chronyc(sock: str, cmd: str) -> str:
    return subprocess.run(["chronyc", "-c", "-h", sock, cmd], capture_output=True, text=True,
                          timeout=5, check=False).stdout


def test_gpsfake_gpsd_chronyd_chain(chain: Dict[str, str], capsys: pytest.CaptureFixture) -> None:
    t0 = time.monotonic()
    clock_before = time.time()
    sources: List[dict] = []
    # wait for chronyd to select the GPS refclock (about 15 s: gpsd needs 4
    # fixes, chronyd a few 4-s polls)
    while time.monotonic() - t0 < DEADLINE_S - 10:
        try:
            sources = parse_sources_csv(chronyc(chain["socket"], "sources"))
        except ValueError:
            sources = []
        if any(s["name"] == "GPS" and s["state"] == "selected" for s in sources):
            break
        time.sleep(1)
    logs = {n: Path(chain["dir"], f"{n}.log").read_text()[-2000:] for n in ("chronyd", "gpsfake")}
    assert any(s["name"] == "GPS" and s["state"] == "selected" for s in sources), \
        f"chronyd did not select GPS in {DEADLINE_S - 10} s: sources {sources}; logs {logs}"
    tracking = parse_tracking_csv(chronyc(chain["socket"], "tracking"))
    assert tracking["ref_name"] == "GPS" and tracking["synchronized"]

    rc = main(["clock", "--json", "--chronyc-socket", chain["socket"], "--gpsd", chain["gpsd"],
               "--gpsd-timeout", "3"])
    out = capsys.readouterr().out
    r = json.loads(out)
    print(out)
    (src,) = [s for s in r["chrony"]["sources"] if s["name"] == "GPS"]
    assert src["mode"] == "refclock" and src["kind"] == "gps" and src["reach"] > 0
    assert r["chrony"]["tracking"]["ref_name"] == "GPS"
    g = r["gpsd"]
    assert g["available"] and g["version"] and g["fix"]["mode"] == "3D", g
    assert g["devices"] and g["devices"][0]["path"].startswith("tcp://127.0.0.1:")
    fix = dt.datetime.fromisoformat(g["fix"]["time"].replace("Z", "+00:00"))
    assert abs(fix.timestamp() - time.time()) < 5          # replayed in real time
    v = r["verdict"]
    # a replayed NMEA source through a chronyd that does not steer the clock
    # (-x) cannot be fit: unsynchronised kernel, else a bound over 100 ms
    assert rc == 1 and not v["fit"] and v["class"] in ("undisciplined", "gps-nmea"), v
    assert v["source"] == "GPS"
    assert v["host_error_us"] == pytest.approx(chrony_bound_us(r["chrony"]["tracking"]))
    assert v["host_error_us"] >= 0.2 / 2 * 1e6                  # root delay 0.2 s (refclock delay)
    # chronyd -x left the system clock alone: no step
    assert abs(time.time() - clock_before - (time.monotonic() - t0)) < 1.0

    rc = main(["clock", "--chronyc-socket", chain["socket"], "--gpsd", chain["gpsd"]])
    text = capsys.readouterr().out
    print(text)
    assert rc == 1 and "reference GPS stratum 1" in text and "refclock GPS" in text
    assert "fix 3D" in text

    # issue 30: the bound of a one-way delay between two hosts from this real
    # chronyd's tracking (two readings as two hosts' of the same discipline:
    # distinct boot ids, so the one-kernel shortcut does not apply), through
    # the testbed's one-way figures into report.html
    readings = [chronyc(chain["socket"], "tracking") for _ in range(2)]
    a, b = (host_clock(name, text, boot) for name, text, boot in
            (("dc1", readings[0], "boot-a"), ("dc2", readings[1], "boot-b")))
    ta, tb = (parse_tracking_csv(r) for r in readings)
    bound_s = pair_bound_s(a, b)
    assert a.basis == "chrony GPS (stratum 1)" and bound_s is not None
    assert bound_s == pytest.approx(
        abs(ta["system_time_offset_s"] - tb["system_time_offset_s"])
        + ta["root_dispersion_s"] + ta["root_delay_s"] / 2
        + tb["root_dispersion_s"] + tb["root_delay_s"] / 2)
    assert bound_s >= 0.2                       # half of each refclock's 0.2 s root delay
    report_shows_the_bound(chain["dir"], bound_s * 1e3, pair_basis(a, b))


def report_shows_the_bound(where: str, bound_ms: float, basis: str) -> None:
    """A run whose sender measured OTT with the one-way-timestamp option: its report
    gives OTT and queuing delay within that bound (and twice it)."""
    import importlib.util

    from synctcp_testbed.analysis.oneway import oneway, pm
    from synctcp_testbed.analysis.report import render_report
    from synctcp_testbed.analysis.rundir import TcpSample, load_run

    spec = importlib.util.spec_from_file_location("test_report",
                                                  Path(__file__).with_name("test_report.py"))
    assert spec is not None and spec.loader is not None
    tr = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(tr)
    root = tr.make_run(Path(where) / "run", with_samples=False)
    summary = json.loads((root / "summary.json").read_text())
    case = summary["cases"][0]
    tel = {"module": "sync", "source": "option", "min_ott_us": 20000, "qdelay_us": 3000}
    o = oneway([TcpSample("s1", 1.0, [{"sport": 40001, "dport": 5201, "synctcp": tel}])],
               [{"group": "fwd", "kind": "bulk", "sport": 40001, "dport": 5201}], 0.0, 5.0,
               bound_ms, basis)
    assert o is not None and o["ott_bound_ms"] == bound_ms
    case["oneway"] = o
    (root / "summary.json").write_text(json.dumps(summary))
    page = html.unescape(render_report(load_run(root), []))
    print(f"report: OTT {pm(o['ott_ms'], o['ott_bound_ms'])}, queuing delay "
          f"{pm(o['qdelay_ms'], o['qdelay_bound_ms'])} ({basis})")
    assert pm(23.0, bound_ms) in page and pm(3.0, 2 * bound_ms) in page and basis in page
