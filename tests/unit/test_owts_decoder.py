"""``synctcp owts``: the decoder on synthetic captures, its statistics, outputs and errors."""

from __future__ import annotations

import csv
import json
import struct
from pathlib import Path
from typing import Any, Dict

import dpkt
import pytest

from pcapgen import (A_PORT, B_IP, B_PORT, ISN_A, ISN_B, T0, FlowSpec, Frame, ott_us,
                     simulate, write_capture)
from synctcp import owts
from synctcp.cli import main
from synctcp.owtsdump import decode_file, flag_str, summarize

TS = b"\x01\x01\x08\x0a" + struct.pack("!II", 1000, 2000)


def ramp(t: float) -> float:
    return 0.020 + 0.010 * min(t, 0.5)            # 20 ms, +10 ms of queue over 0.5 s


def run_json(capsys: pytest.CaptureFixture, *argv: str) -> Dict[str, Any]:
    assert main(["owts", *argv, "--json"]) == 0
    return json.loads(capsys.readouterr().out)


def direction(summary: Dict[str, Any], role: str) -> Dict[str, Any]:
    (conn,) = summary["connections"]
    return next(d for d in conn["directions"] if d["role"] == role)


@pytest.mark.parametrize("link,fmt,v6", [("ethernet", "pcap", False), ("sll", "pcap", False),
                                         ("sll2", "pcapng", True), ("ethernet", "pcapng", True),
                                         ("raw", "pcap", False)])
def test_statistics_match_the_simulation(tmp_path: Path, capsys: pytest.CaptureFixture,
                                         link: str, fmt: str, v6: bool) -> None:
    frames, truth = simulate(FlowSpec(n_segs=400, fwd=ramp, owts=True))
    path = write_capture(frames, tmp_path / f"c.{fmt}", link=link, fmt=fmt, v6=v6)
    s = run_json(capsys, str(path), "--expect-fwd-ms", "20", "--expect-rev-ms", "20")
    assert s["tcp"] == len(frames) and s["with_option"] == len(frames) and s["malformed"] == 0
    (conn,) = s["connections"]
    assert conn["data_sender"].endswith(f":{A_PORT}") and conn["client"] == conn["data_sender"]
    fwd, rev = direction(s, "fwd"), direction(s, "rev")
    # the forward OTT rides on the receiver's ACKs, the reverse one on the sender's segments
    assert fwd["carried_by"].split(">")[0].endswith(f":{B_PORT}")
    assert rev["carried_by"].split(">")[0] == conn["data_sender"]
    assert fwd["path"].startswith(conn["data_sender"])
    assert fwd["none"] == 1 and rev["none"] == 1              # SYN-ACK and SYN
    want = sorted(ott_us(truth.first_tx[i], truth.first_tx[i] + truth.fwd_q_ms[i] / 1000)
                  for i in range(400))
    got = fwd["ott_ms"]            # ACKs echo every second segment: within one segment's step
    assert got["min"] == pytest.approx(want[0] / 1000, abs=0.025)
    assert got["max"] == pytest.approx(want[-1] / 1000, abs=0.025)
    assert got["n"] == fwd["with_option"] - 1 > 150
    assert rev["ott_ms"]["min"] == rev["ott_ms"]["max"] == 20.0
    assert rev["error_ms"]["max_abs"] == 0.0
    assert fwd["error_ms"]["max_abs"] == pytest.approx(got["max"] - 20, abs=1e-9)
    assert 0 < fwd["error_ms"]["mean_abs"] < fwd["error_ms"]["max_abs"]


def test_every_ack_echoes_the_last_arrival(tmp_path: Path) -> None:
    frames, truth = simulate(FlowSpec(n_segs=200, fwd=ramp, owts=True))
    rows, _ = decode_file(str(write_capture(frames, tmp_path / "c.pcap")))
    acks = [r for r in rows if r.src == (B_IP, B_PORT) and r.option
            and 0 < (r.ack - ISN_A - 1) % (1 << 32) < 1 << 30]
    assert len(acks) > 90
    for r in acks:
        seg = (r.ack - ISN_A - 1) % (1 << 32) // 1448 - 1    # the segment it acknowledges
        t_tx = truth.first_tx[seg]
        assert r.option.ott_us == ott_us(t_tx, t_tx + truth.fwd_q_ms[seg] / 1000)
        # captured at the sender: capture time - the ACK's send stamp = the reverse OTT
        assert r.age_us == pytest.approx(20_000, abs=1)


def test_option_yields_to_two_sack_blocks(tmp_path: Path, capsys: pytest.CaptureFixture) -> None:
    frames, _ = simulate(FlowSpec(n_segs=300, owts=True, lost={100, 102}))
    two = [f for f in frames if len(f.sack) >= 2]
    assert two and all(f.owts is None for f in two)
    s = run_json(capsys, str(write_capture(frames, tmp_path / "c.pcap")))
    assert s["with_option"] == len(frames) - len(two)


def malformed_capture(tmp_path: Path) -> Path:
    now = owts.tsval_of(T0)
    good = owts.encode(now, 20_000)
    cases = [
        TS + good,                                                        # fine
        TS + b"\x01\x01" + owts.encode_raw(now, 5, length=10)[:10],       # bad length 10
        TS + b"\x01\x01" + owts.encode_raw(now, 5, length=14) + b"\0\0",  # bad length 14
        TS + good[:8],                                                    # truncated
        TS + good + owts.encode(now, 30_000),                             # repeated
        TS + owts.encode((now + 3_600_000_000) % (1 << 32), 20_000),      # tsval +1 h
        TS + owts.encode_raw(now, 0x7FFFFFFF),                            # absurd ott
        TS,                                                               # no option
    ]
    frames = [Frame(0.001 * k, k % 2 == 0, ISN_A + 1 + 100 * k, ISN_B + 1, 0x18, 100,
                    raw_opts=o) for k, o in enumerate(cases)]
    return write_capture(frames, tmp_path / "bad.pcap")


def test_malformed_options_are_marked_per_packet(tmp_path: Path, capsys: pytest.CaptureFixture
                                                 ) -> None:
    path = malformed_capture(tmp_path)
    assert main(["owts", str(path), "--all", "--csv", str(tmp_path / "o.csv")]) == 0
    lines = capsys.readouterr().out.splitlines()[:8]
    marks = [ln.split("!")[1] if "!" in ln else "" for ln in lines]
    assert marks == ["", "bad-length", "bad-length", "truncated", "repeated", "absurd-tsval",
                     "absurd-ott", ""]
    assert "ott_us=20000" in lines[0] and "ott_us=20000" in lines[4]       # the first of two
    assert "tsval_us=- ott_us=-" in lines[7] and "tsval_us=? ott_us=?" in lines[1]
    rows = list(csv.DictReader(open(tmp_path / "o.csv")))
    assert len(rows) == 8 and rows[4]["owts_count"] == "2" and rows[3]["problems"] == "truncated"
    assert rows[6]["ott_us"] == str(0x7FFFFFFF)
    s = summarize(*decode_file(str(path)))
    assert s["malformed"] == 6 and s["with_option"] == 7
    assert s["problems"] == {"absurd-ott": 1, "absurd-tsval": 1, "bad-length": 2, "repeated": 1,
                             "truncated": 1}


def test_absurd_values_stay_out_of_the_statistics(tmp_path: Path) -> None:
    s = summarize(*decode_file(str(malformed_capture(tmp_path))))
    stats = [d["ott_ms"] for d in s["connections"][0]["directions"] if d["ott_ms"]]
    assert all(st["max"] <= 30.0 for st in stats)
    assert sum(st["n"] for st in stats) == 3       # the fine one, the repeated one, the +1 h one


def test_plot_and_csv_are_written(tmp_path: Path, capsys: pytest.CaptureFixture) -> None:
    frames, _ = simulate(FlowSpec(n_segs=100, owts=True))
    path = write_capture(frames, tmp_path / "c.pcap")
    png, out = tmp_path / "o.png", tmp_path / "o.csv"
    assert main(["owts", str(path), "-q", "--plot", str(png), "--csv", str(out),
                 "--expect-fwd-ms", "20"]) == 0
    text = capsys.readouterr().out
    assert "seq=" not in text and "ott ms: n=" in text and "error vs 20 ms" in text
    assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n" and png.stat().st_size > 10_000
    rows = list(csv.DictReader(open(out)))
    assert len(rows) == len(frames) and rows[0]["flags"] == "S" and rows[0]["ott_us"] == "none"


def test_flow_filter(tmp_path: Path, capsys: pytest.CaptureFixture) -> None:
    frames, _ = simulate(FlowSpec(n_segs=50, owts=True))
    path = write_capture(frames, tmp_path / "c.pcap")
    assert run_json(capsys, str(path), "--flow", str(B_PORT))["tcp"] == len(frames)
    assert run_json(capsys, str(path), "--flow", f"{B_IP}:{B_PORT}>")["tcp"] == len(frames)
    assert main(["owts", str(path), "--flow", "9"]) == 1
    assert "no TCP segment matches" in capsys.readouterr().err


def test_flags() -> None:
    assert flag_str(0x12) == "S." and flag_str(0x18) == "P." and flag_str(0x11) == "F."
    assert flag_str(0x04) == "R" and flag_str(0) == "none"


# --- bad input ---------------------------------------------------------------------------------

def cli_error(capsys: pytest.CaptureFixture, *argv: str) -> str:
    rc = main(["owts", *argv])
    err = capsys.readouterr().err
    assert rc == 2, err
    assert len(err.strip().splitlines()) == 1 and "Traceback" not in err
    return err


def test_missing_file(tmp_path: Path, capsys: pytest.CaptureFixture) -> None:
    assert "No such file" in cli_error(capsys, str(tmp_path / "nope.pcap"))


def test_not_a_capture(tmp_path: Path, capsys: pytest.CaptureFixture) -> None:
    p = tmp_path / "x.pcap"
    p.write_text("hello, this is not a capture\n")
    assert "not a pcap or pcapng file" in cli_error(capsys, str(p))
    p.write_bytes(b"")
    assert "too short" in cli_error(capsys, str(p))


def test_capture_without_tcp(tmp_path: Path, capsys: pytest.CaptureFixture) -> None:
    p = tmp_path / "udp.pcap"
    with open(p, "wb") as fh:
        w = dpkt.pcap.Writer(fh, linktype=1)
        udp = dpkt.udp.UDP(sport=1, dport=2, data=b"x")
        ip = dpkt.ip.IP(src=b"\x0a\0\0\1", dst=b"\x0a\0\0\2", p=17, data=udp, len=29)
        w.writepkt(bytes(dpkt.ethernet.Ethernet(src=b"\2" * 6, dst=b"\4" * 6, data=ip)), ts=1.0)
    assert "no TCP segment in 1 frames" in cli_error(capsys, str(p))


def test_capture_without_option_exits_1(tmp_path: Path, capsys: pytest.CaptureFixture) -> None:
    frames, _ = simulate(FlowSpec(n_segs=20))
    path = write_capture(frames, tmp_path / "c.pcap")
    assert main(["owts", str(path), "--json"]) == 1
    out = capsys.readouterr()
    assert json.loads(out.out)["with_option"] == 0 and "no OWTS option" in out.err


def test_unwritable_output(tmp_path: Path, capsys: pytest.CaptureFixture) -> None:
    frames, _ = simulate(FlowSpec(n_segs=20, owts=True))
    path = write_capture(frames, tmp_path / "c.pcap")
    assert "cannot write" in cli_error(capsys, str(path), "--csv", str(tmp_path / "no" / "o.csv"))
