"""``synctcp clock``: parsers on recorded outputs, the verdict, the command."""

from __future__ import annotations

import ctypes
import json
import os
import socket
import stat
import threading
from pathlib import Path
from typing import Any, Dict, Iterator, List

import pytest

from synctcp import clock
from synctcp.cli import main
from synctcp.clock import (ParseError, chrony_bound_us, decode_adjtimex, parse_gpsd, parse_pps_event,
                           parse_sources_csv, parse_tracking_csv, pps_devices, verdict)

FIX = Path(__file__).parent / "fixtures" / "clock"


def fx(name: str) -> str:
    return (FIX / name).read_text()


def kernel(name: str) -> Dict[str, Any]:
    d = json.loads(fx(name))
    return decode_adjtimex(d["state"], d["timex"])


def chrony(tracking: str, sources: str) -> Dict[str, Any]:
    return {"available": True, "error": None, "tracking": parse_tracking_csv(fx(tracking)),
            "sources": parse_sources_csv(fx(sources))}


NO_CHRONY = {"available": False, "error": "chronyd not reachable", "tracking": None, "sources": []}
NO_GPSD: Dict[str, Any] = {"available": False, "error": "not queried"}


# --- kernel -----------------------------------------------------------------

def test_timex_matches_the_c_struct() -> None:
    if ctypes.sizeof(ctypes.c_long) == 8:
        assert ctypes.sizeof(clock.Timex) == 208   # sizeof(struct timex) on LP64


def test_adjtimex_reads_this_host() -> None:
    state, tx = clock.read_adjtimex()
    k = decode_adjtimex(state, tx)
    assert k["state"] in clock.TIME_STATES.values()
    assert k["synchronized"] == (not tx["status"] & clock.STA_UNSYNC and state != clock.TIME_ERROR)


def test_recorded_unsynchronised_kernel() -> None:
    k = kernel("adjtimex_unsync_container.json")
    assert k["state"] == "TIME_ERROR" and k["flags"] == ["STA_UNSYNC"]
    assert not k["synchronized"]
    assert k["maxerror_us"] == 16_000_000 and k["esterror_us"] == 16_000_000


def test_kernel_pps_discipline_in_nanosecond_mode() -> None:
    k = kernel("constructed_adjtimex_kernel_pps.json")
    assert k["synchronized"] and k["state"] == "TIME_OK"
    assert {"STA_PLL", "STA_PPSFREQ", "STA_PPSTIME", "STA_PPSSIGNAL", "STA_NANO"} == set(k["flags"])
    assert k["pps"]["signal"] and k["pps"]["time_discipline"] and k["pps"]["errors"] == []
    assert k["offset_us"] == pytest.approx(0.25)        # 250 ns
    assert k["pps"]["jitter_us"] == pytest.approx(1.5)  # 1500 ns
    assert k["freq_ppm"] == pytest.approx(2.0)          # 131072 / 2^16


# --- chrony -----------------------------------------------------------------

def test_tracking_of_the_gpsfake_chain() -> None:
    tr = parse_tracking_csv(fx("chronyc_tracking_gpsfake.csv"))
    assert tr["ref_id"] == "47505300" and tr["ref_name"] == "GPS" and tr["stratum"] == 1
    assert tr["synchronized"] and tr["leap_status"] == "Normal"
    assert tr["root_delay_s"] == pytest.approx(0.2, abs=1e-8)
    # |offset| + root dispersion + root delay / 2
    assert chrony_bound_us(tr) == pytest.approx(736402.512 + 12778.005 + 100000.0015, abs=0.01)


def test_sources_of_the_gpsfake_chain() -> None:
    (src,) = parse_sources_csv(fx("chronyc_sources_gpsfake.csv"))
    assert src == {"mode": "refclock", "state": "selected", "name": "GPS", "stratum": 0, "poll": 2,
                   "reach": 0o377, "last_rx_s": 4, "offset_s": -0.003707453,
                   "measured_offset_s": -0.003406215, "error_s": 0.104684725, "kind": "gps"}
    (start,) = parse_sources_csv(fx("chronyc_sources_gpsfake_start.csv"))
    assert start["state"] == "unusable" and start["reach"] == 0 and start["last_rx_s"] is None


def test_unsynchronised_and_local_tracking() -> None:
    assert not parse_tracking_csv(fx("chronyc_tracking_unsync.csv"))["synchronized"]
    local = parse_tracking_csv(fx("chronyc_tracking_local.csv"))
    assert local["ref_id"] == clock.LOCAL_REFID and local["ref_name"] == ""


def test_ntp_client_over_loopback() -> None:
    c = chrony("chronyc_tracking_ntp_loopback.csv", "chronyc_sources_ntp_loopback.csv")
    (src,) = c["sources"]
    assert src["mode"] == "server" and src["kind"] == "server" and src["state"] == "selected"
    assert c["tracking"]["ref_name"] == "127.0.0.1" and c["tracking"]["stratum"] == 4


def test_pps_sources_are_classified() -> None:
    kinds = [(s["name"], s["kind"], s["state"])
             for s in parse_sources_csv(fx("constructed_chronyc_sources_pps.csv"))]
    assert kinds == [("NMEA", "gps", "not combined"), ("PPS", "pps", "selected"),
                     ("192.0.2.10", "server", "not combined")]


@pytest.mark.parametrize("text", ["", "a,b\n", fx("chronyc_tracking_gpsfake.csv") * 2,
                                  fx("chronyc_tracking_gpsfake.csv").replace("GPS,1,", "GPS,one,")])
def test_bad_tracking_is_refused(text: str) -> None:
    with pytest.raises(ParseError):
        parse_tracking_csv(text)


@pytest.mark.parametrize("line", ["!,*,GPS,0,2,377,4,0,0,0", "#,*,GPS,0,2,377,4,0,0",
                                  "#,*,GPS,0,2,999,4,0,0,0", "MS Name/IP address"])
def test_bad_sources_are_refused(line: str) -> None:
    with pytest.raises(ParseError):
        parse_sources_csv(line)


# --- gpsd -------------------------------------------------------------------

def test_gpspipe_of_the_gpsfake_chain() -> None:
    g = parse_gpsd(fx("gpspipe_w_gpsfake.jsonl").splitlines())
    assert g["version"] == "3.22"
    assert [d["driver"] for d in g["devices"]] == ["NMEA0183"]
    assert g["devices"][0]["path"].startswith("tcp://127.0.0.1:")
    assert g["fix"]["mode"] == "3D" and g["fix"]["time"] == "2026-11-21T22:02:42.000Z"
    assert g["pps"] == []


def test_watch_and_poll_of_the_gpsfake_chain() -> None:
    lines = (FIX / "gpsd_watch_poll_gpsfake.jsonl").read_bytes().decode().split("\n")
    g = parse_gpsd(lines)
    assert g["fix"]["mode"] == "3D" and g["fix"]["time"] == "2026-11-21T22:03:12.000Z"
    assert g["satellites"] == {"seen": 0, "used": 0}


def test_gpsd_pps_events() -> None:
    g = parse_gpsd(fx("constructed_gpsd_pps.jsonl").splitlines())
    (pps,) = g["pps"]
    assert pps["device"] == "/dev/ttyS0" and pps["offset_us"] == pytest.approx(0.21)
    assert g["toff"][0]["clock_nsec"] == 112345678
    assert g["satellites"] == {"seen": 14, "used": 9}


def test_bad_gpsd_json_is_refused() -> None:
    with pytest.raises(ParseError):
        parse_gpsd(['{"class":"TPV",'])


@pytest.fixture
def fake_gpsd() -> Iterator[int]:
    """A TCP server that answers like the recorded gpsd session."""
    rec = (FIX / "gpsd_watch_poll_gpsfake.jsonl").read_bytes().split(b"\r\n")
    srv = socket.socket()
    srv.bind(("127.0.0.1", 0))
    srv.listen(1)
    got: List[bytes] = []

    def serve() -> None:
        conn, _ = srv.accept()
        with conn:
            conn.sendall(rec[0] + b"\r\n")
            got.append(conn.recv(4096))
            conn.sendall(b"\r\n".join(rec[1:]))
            conn.recv(1)

    t = threading.Thread(target=serve, daemon=True)
    t.start()
    yield srv.getsockname()[1]
    srv.close()
    t.join(timeout=2)
    assert got and b"?WATCH=" in got[0] and b"?POLL;" in got[0]


def test_query_gpsd_on_the_wire(fake_gpsd: int) -> None:
    st = clock.gpsd_state(f"127.0.0.1:{fake_gpsd}", timeout=3)
    assert st["available"] and st["version"] == "3.22" and st["fix"]["mode"] == "3D"


def test_gpsd_not_running() -> None:
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
    s.close()
    st = clock.gpsd_state(f"127.0.0.1:{port}", timeout=1)
    assert not st["available"] and "not running" in st["error"]


# --- PPS sysfs --------------------------------------------------------------

def test_pps_events() -> None:
    assert parse_pps_event("1795299000.000000210#42") == {"time": pytest.approx(1795299000.00000021),
                                                          "sequence": 42}
    assert parse_pps_event("0.000000000#0") is None
    assert parse_pps_event(None) is None and parse_pps_event("garbage") is None


def test_pps_sysfs(tmp_path: Path) -> None:
    d = tmp_path / "pps0"
    d.mkdir()
    (d / "name").write_text("pps@ttyS0\n")
    (d / "path").write_text("/dev/ttyS0\n")
    (d / "assert").write_text("1795299000.000000210#42\n")
    (d / "clear").write_text("0.000000000#0\n")
    (devs,) = pps_devices(tmp_path)
    assert devs["device"] == "/dev/pps0" and devs["name"] == "pps@ttyS0"
    assert devs["assert"]["sequence"] == 42 and devs["clear"] is None
    assert pps_devices(tmp_path / "absent") == []


# --- verdict ----------------------------------------------------------------

def test_unsynchronised_host_is_unfit() -> None:
    v = verdict(kernel("adjtimex_unsync_container.json"), NO_CHRONY, NO_GPSD, [])
    assert not v["fit"] and v["class"] == "unsynchronized" and v["ott_error_us"] is None
    assert "STA_UNSYNC" in v["summary"]


def test_chronyd_that_does_not_steer_the_clock_is_unfit() -> None:
    v = verdict(kernel("adjtimex_unsync_container.json"),
                chrony("chronyc_tracking_gpsfake.csv", "chronyc_sources_gpsfake.csv"), NO_GPSD, [])
    assert not v["fit"] and v["class"] == "undisciplined" and v["source"] == "GPS"
    assert "-x" in v["summary"]


def test_pps_disciplined_host_is_fit() -> None:
    c = chrony("constructed_chronyc_tracking_pps.csv", "constructed_chronyc_sources_pps.csv")
    v = verdict(kernel("constructed_adjtimex_chrony_pps.json"), c, NO_GPSD, [])
    bound = 0.120 + 3.250 + 0.0005
    assert v["fit"] and v["class"] == "pps" and v["source"] == "PPS"
    assert v["host_error_us"] == pytest.approx(bound)
    assert v["ott_error_us"] == pytest.approx(2 * bound)      # a peer like this host
    v = verdict(kernel("constructed_adjtimex_chrony_pps.json"), c, NO_GPSD, [], peer_error_us=10)
    assert v["ott_error_us"] == pytest.approx(bound + 10)
    assert verdict(kernel("constructed_adjtimex_chrony_pps.json"), c, NO_GPSD, [],
                   max_error_us=1)["fit"] is False


def test_nmea_only_is_too_coarse() -> None:
    v = verdict(kernel("constructed_adjtimex_chrony_pps.json"),
                chrony("chronyc_tracking_gpsfake.csv", "chronyc_sources_gpsfake.csv"), NO_GPSD, [])
    assert not v["fit"] and v["class"] == "gps-nmea" and "exceeds" in v["summary"]


def test_ntp_and_local_reference() -> None:
    synced = kernel("constructed_adjtimex_chrony_pps.json")
    v = verdict(synced, chrony("chronyc_tracking_ntp_loopback.csv", "chronyc_sources_ntp_loopback.csv"),
                NO_GPSD, [])
    assert v["class"] == "ntp" and v["host_error_us"] == pytest.approx(1.172 + 1.546 + 2.999, abs=0.001)
    v = verdict(synced, {"available": True, "error": None, "sources": [],
                         "tracking": parse_tracking_csv(fx("chronyc_tracking_local.csv"))}, NO_GPSD, [])
    assert not v["fit"] and v["class"] == "local"


def test_kernel_disciplined_without_chrony() -> None:
    v = verdict(kernel("constructed_adjtimex_kernel_pps.json"), NO_CHRONY, NO_GPSD, [])
    assert v["fit"] and v["class"] == "pps" and v["host_error_us"] == 8
    k = kernel("constructed_adjtimex_chrony_pps.json")
    v = verdict(k, NO_CHRONY, NO_GPSD, [])
    assert v["fit"] and v["class"] == "kernel" and v["host_error_us"] == 12


def test_unused_pps_device_and_gps_are_pointed_out() -> None:
    g = {"available": True, "fix": {"mode": "3D"}}
    pps = [{"device": "/dev/pps0"}]
    v = verdict(kernel("adjtimex_unsync_container.json"), NO_CHRONY, g, pps)
    assert any("/dev/pps0" in n for n in v["notes"]) and any("gpsd has a fix" in n for n in v["notes"])


# --- the command ------------------------------------------------------------

@pytest.fixture
def fake_chronyc(tmp_path: Path) -> Path:
    """A chronyc that prints the recorded PPS outputs and logs its arguments."""
    log = tmp_path / "args"
    exe = tmp_path / "chronyc"
    exe.write_text(f"""#!/bin/sh
echo "$@" >> {log}
case "$*" in
*tracking) cat {FIX / 'constructed_chronyc_tracking_pps.csv'} ;;
*sources) cat {FIX / 'constructed_chronyc_sources_pps.csv'} ;;
*) exit 1 ;;
esac
""")
    exe.chmod(exe.stat().st_mode | stat.S_IXUSR)
    return exe


def _clock(capsys: pytest.CaptureFixture, monkeypatch: pytest.MonkeyPatch, adjtimex: str,
           *args: str) -> tuple:
    d = json.loads(fx(adjtimex))
    monkeypatch.setattr(clock, "read_adjtimex", lambda: (d["state"], d["timex"]))
    rc = main(["clock", "--gpsd", "none", "--pps-sysfs", "/nonexistent", *args])
    return rc, capsys.readouterr()


def test_clock_command_fit(capsys: pytest.CaptureFixture, monkeypatch: pytest.MonkeyPatch,
                           fake_chronyc: Path) -> None:
    rc, out = _clock(capsys, monkeypatch, "constructed_adjtimex_chrony_pps.json", "--json",
                     "--chronyc", str(fake_chronyc), "--chronyc-socket", "/run/x.sock")
    r = json.loads(out.out)
    assert rc == 0 and r["verdict"]["fit"] and r["verdict"]["class"] == "pps"
    assert r["chrony"]["tracking"]["ref_name"] == "PPS"
    assert (fake_chronyc.parent / "args").read_text().splitlines() == [
        "-c -h /run/x.sock tracking", "-c -h /run/x.sock sources"]
    rc, out = _clock(capsys, monkeypatch, "constructed_adjtimex_chrony_pps.json",
                     "--chronyc", str(fake_chronyc))
    assert rc == 0 and "verdict: fit for exact OTT (pps, PPS): error bound ±6.7 µs" in out.out


def test_clock_command_unfit(capsys: pytest.CaptureFixture, monkeypatch: pytest.MonkeyPatch) -> None:
    rc, out = _clock(capsys, monkeypatch, "adjtimex_unsync_container.json", "--json",
                     "--chronyc", "/nonexistent/chronyc")
    r = json.loads(out.out)
    assert rc == 1 and not r["verdict"]["fit"]
    assert "not found" in r["chrony"]["error"] and r["gpsd"]["available"] is False


def test_clock_command_error(capsys: pytest.CaptureFixture, monkeypatch: pytest.MonkeyPatch) -> None:
    def fail() -> None:
        raise clock.ClockError("adjtimex: Operation not permitted")

    monkeypatch.setattr(clock, "read_adjtimex", fail)
    assert main(["clock", "--gpsd", "none"]) == 2
    assert "adjtimex" in capsys.readouterr().err


def test_clock_help(capsys: pytest.CaptureFixture) -> None:
    with pytest.raises(SystemExit) as e:
        main(["clock", "--help"])
    assert e.value.code == 0
    out = " ".join(capsys.readouterr().out.split())
    assert "--chronyc-socket" in out and "--gpsd" in out and "Exit 0 fit, 1 unfit, 2 error" in out


def test_cli_lists_every_subcommand(capsys: pytest.CaptureFixture) -> None:
    with pytest.raises(SystemExit):
        main(["--help"])
    out = capsys.readouterr().out
    for sub in ("list", "load", "unload", "clock", "status", "ss"):
        assert sub in out
    assert os.path.exists(FIX / "README.md")
