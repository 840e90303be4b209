"""synctcp trace: RTT, OTT and losses recovered from synthetic and real sender-side captures."""

from __future__ import annotations

import json
import shutil
import signal
import socket
import struct
import subprocess
import threading
import time
from pathlib import Path
from typing import List, Tuple

import pytest

from pcapgen import ISN_A, SMSS, FlowSpec, Frame, Truth, simulate, write_capture
from synctcp.cli import main
from synctcp.owts import EXID, KIND, LENGTH, Owts
from synctcp.pcap import PcapError, parse_tcp_options, read_tcp
from synctcp.trace import FlowTrace, select_flows, snap_clock_hz, trace_file

US = 1e-3   # one microsecond in ms


def ramp_fwd(t: float) -> float:
    """Forward delay: 20 ms base, queue ramps 0 → 30 ms over 1 s, then drains 30 → 0 in 1 s."""
    q = 0.030 * (t / 1.0 if t < 1.0 else max(0.0, 2.0 - t))
    return 0.020 + q


def bumpy_rev(k: int, t: float) -> float:
    """Reverse delay: 20 ms, plus 15 ms of reverse queuing between 0.8 and 1.2 s."""
    return 0.020 + (0.015 if 0.8 <= t < 1.2 else 0.0)


def traced(tmp_path: Path, spec: FlowSpec, **write) -> Tuple[FlowTrace, Truth, List[Frame]]:
    frames, truth = simulate(spec)
    path = write_capture(frames, tmp_path / "cap.pcap", **write)
    flows, _ = trace_file(str(path))
    assert len(flows) == 1
    return flows[0], truth, frames


def true_rtt_ms(truth: Truth, t_ack: float, ack: int) -> float:
    return (t_ack - truth.first_tx[ack // SMSS - 1]) * 1000


# --- RTT ----------------------------------------------------------------------------------

def test_rtt_of_every_ack_is_recovered_and_karn_drops_retransmitted(tmp_path: Path) -> None:
    spec = FlowSpec(n_segs=1500, fwd=ramp_fwd, rev=bumpy_rev, lost={400, 900},
                    spurious={1200: 0.005, 1499: 0.005})   # 1499: a TLP-like tail probe
    flow, truth, _ = traced(tmp_path, spec)
    retx_segs = {seq // SMSS for _, seq, _ in truth.retrans}
    timed = [s for s in flow.samples if s.rtt_ms is not None]
    assert len(timed) > 600
    for s in timed:
        assert s.ack // SMSS - 1 not in retx_segs
        assert s.rtt_ms == pytest.approx(true_rtt_ms(truth, s.t, s.ack), abs=2 * US)
    karn = [s for s in flow.samples if s.karn]
    assert karn and all(s.rtt_ms is None for s in karn)
    assert {s.ack // SMSS - 1 for s in karn} <= retx_segs


def test_rtt_follows_forward_plus_reverse_delay(tmp_path: Path) -> None:
    flow, _, _ = traced(tmp_path, FlowSpec(n_segs=1500, fwd=ramp_fwd, rev=bumpy_rev))
    in_bump = [s.rtt_ms for s in flow.samples if s.rtt_ms and 0.9 < s.t < 1.1]
    before = [s.rtt_ms for s in flow.samples if s.rtt_ms and 0.6 < s.t < 0.7]
    assert min(in_bump) > 40 + 15 + 20     # base 40 + reverse bump 15 + forward queue > 20
    assert max(before) < 40 + 0.030 * 0.7 * 1000 + 1


# --- OTT from RFC 7323 timestamps -----------------------------------------------------------------

@pytest.mark.parametrize("peer_hz", [1000, 250])
def test_ts_qdelay_follows_forward_ramp_and_ignores_reverse_queue(tmp_path: Path,
                                                                  peer_hz: int) -> None:
    flow, truth, _ = traced(tmp_path, FlowSpec(n_segs=1800, fwd=ramp_fwd, rev=bumpy_rev,
                                               peer_hz=peer_hz))
    assert flow.source == "ts"
    assert flow.peer_clock_hz == peer_hz
    assert flow.peer_clock_est_hz == pytest.approx(peer_hz, rel=0.02)
    q_min = min(truth.fwd_q_ms.values())
    tol = 1000 / peer_hz + 1.0 + 0.1      # one peer tick + one own tick + slack
    rows = [s for s in flow.samples if s.qdelay_ms is not None]
    assert len(rows) > 800
    errs = [s.qdelay_ms - (truth.fwd_q_ms[s.ack // SMSS - 1] - q_min) for s in rows]
    assert max(abs(e) for e in errs) <= tol
    peak = max(rows, key=lambda s: s.qdelay_ms)
    assert peak.qdelay_ms == pytest.approx(30, abs=tol)
    assert 0.9 < peak.t_tx < 1.1            # the ramp's top, not the reverse bump's


def test_acks_with_sack_blocks_give_no_ts_ott(tmp_path: Path) -> None:
    # the receiver freezes TS.Recent while it holds a hole (RFC 7323 §4.3), so a SACK-carrying
    # ACK echoes the TSval of the last in-order segment however long ago it arrived
    flow, truth, _ = traced(tmp_path, FlowSpec(n_segs=600, fwd=ramp_fwd, lost={200, 400}))
    sacked = [s for s in flow.samples if s.sack]
    assert sacked and all(s.ott_ms is None for s in sacked)
    q_min = min(truth.fwd_q_ms.values())
    for s in flow.samples:
        if s.qdelay_ms is not None and not s.in_recovery:
            assert abs(s.qdelay_ms - (truth.fwd_q_ms[s.ack // SMSS - 1] - q_min)) <= 2.1


def test_peer_clock_rates_snap_like_the_kernel() -> None:
    assert snap_clock_hz(1180.0) == 1000
    assert snap_clock_hz(240.0) == 250
    assert snap_clock_hz(1_050_000.0) == 1_000_000
    assert snap_clock_hz(600.0) == 600.0          # unknown rate: used as estimated


def test_no_ts_ott_without_enough_peer_ticks(tmp_path: Path) -> None:
    flow, _, _ = traced(tmp_path, FlowSpec(n_segs=30, peer_hz=100))   # 30 ms: 3 ticks
    assert flow.peer_clock_hz is None and flow.source == "none"
    assert all(s.ott_ms is None for s in flow.samples)
    assert any(s.rtt_ms is not None for s in flow.samples)


# --- OTT from the one-way-timestamp option ---------------------------------------------------------

def test_owts_layout_round_trips() -> None:
    o = Owts(4_000_000_123, -20_333)
    raw = o.pack()
    assert raw[0] == KIND == 253 and raw[1] == LENGTH == len(raw) == 12
    assert struct.unpack("!HIi", raw[2:]) == (EXID, 4_000_000_123, -20_333)
    assert parse_tcp_options(raw).owts == o
    assert o.ott_ns == -20_333_000
    other_exp = raw[:2] + b"\x12\x34" + raw[4:]
    assert parse_tcp_options(other_exp).owts is None      # another RFC 6994 experiment


@pytest.mark.parametrize("with_ts", [False, True])
def test_owts_option_is_used_when_present_and_exact(tmp_path: Path, with_ts: bool) -> None:
    flow, truth, _ = traced(tmp_path, FlowSpec(n_segs=800, fwd=ramp_fwd, rev=bumpy_rev,
                                               owts=True, timestamps=with_ts))
    assert flow.source == "owts"
    rows = [s for s in flow.samples if s.ott_ms is not None]
    assert len(rows) > 350
    for s in rows:
        assert s.source == "owts"
        assert s.ott_ms == pytest.approx(truth.fwd_q_ms[s.ack // SMSS - 1], abs=1 * US)
    assert min(s.qdelay_ms for s in rows) == 0


# --- retransmissions and losses ----------------------------------------------------------------

def test_retransmissions_are_found_with_the_lost_transmission_time(tmp_path: Path) -> None:
    flow, truth, _ = traced(tmp_path, FlowSpec(n_segs=1500, fwd=ramp_fwd, lost={300, 301, 1000},
                                               spurious={700: 0.003}))
    got = [(r.t, r.seq, r.t_lost) for r in flow.retransmissions]
    assert len(got) == len(truth.retrans) == 4
    for (t, seq, lost), (tt, tseq, tlost) in zip(got, sorted(truth.retrans)):
        assert seq == tseq
        assert t == pytest.approx(tt, abs=1e-6) and lost == pytest.approx(tlost, abs=1e-6)
    assert all(r.length == SMSS for r in flow.retransmissions)
    assert flow.loss_times() == sorted(r.t_lost for r in flow.retransmissions)


def test_acks_during_recovery_are_flagged(tmp_path: Path) -> None:
    flow, truth, _ = traced(tmp_path, FlowSpec(n_segs=800, lost={300}))
    t_retx = truth.retrans[0][0]
    rec = [s for s in flow.samples if s.in_recovery]
    assert rec and all(s.t > t_retx for s in rec)
    # recovery ends with the ACK that covers everything sent before the retransmission
    snd_max = max(i for t, i, r in truth.sends if t < t_retx and not r) + 1
    assert rec[-1].ack >= snd_max * SMSS
    assert not any(s.in_recovery for s in flow.samples if s.ack > rec[-1].ack)


def test_sequence_numbers_wrap(tmp_path: Path) -> None:
    flow, _, frames = traced(tmp_path, FlowSpec(n_segs=300))
    assert any(f.seq < 10_000 for f in frames if f.from_sender and f.payload)   # it did wrap
    acks = [s.ack for s in flow.samples]
    assert acks == sorted(acks) and acks[-1] == 300 * SMSS
    assert flow.data_bytes == 300 * SMSS and not flow.retransmissions


# --- capture formats ---------------------------------------------------------------------------------

@pytest.mark.parametrize("link,fmt,v6", [("sll2", "pcap", False), ("sll2", "pcapng", False),
                                         ("ethernet", "pcapng", True), ("sll", "pcap", False),
                                         ("raw", "pcap", True)])
def test_link_types_and_formats_give_the_same_trace(tmp_path: Path, link: str, fmt: str,
                                                    v6: bool) -> None:
    spec = FlowSpec(n_segs=300, fwd=ramp_fwd, lost={100})
    base, _, _ = traced(tmp_path, spec)
    frames, _ = simulate(spec)
    path = write_capture(frames, tmp_path / f"cap.{fmt}", link=link, fmt=fmt, v6=v6)
    flows, stats = trace_file(str(path))
    assert stats.format == fmt and stats.tcp == len(frames) and stats.truncated == 0
    got = flows[0]
    assert ("::" in got.src) == v6
    assert len(got.samples) == len(base.samples)
    assert [r.seq for r in got.retransmissions] == [r.seq for r in base.retransmissions]
    for a, b in zip(got.samples, base.samples):
        assert (a.rtt_ms is None) == (b.rtt_ms is None)
        if a.rtt_ms is not None:
            assert a.rtt_ms == pytest.approx(b.rtt_ms, abs=2 * US)


def test_the_same_segment_on_two_interfaces_is_kept_once(tmp_path: Path) -> None:
    frames, _ = simulate(FlowSpec(n_segs=100))
    path = tmp_path / "any.pcap"
    write_capture(frames, path, link="sll2")
    raw = path.read_bytes()
    # copy each record with interface index 2, 50 µs later (a routed/bridged second hop)
    out, off = bytearray(raw[:24]), 24
    while off < len(raw):
        sec, frac, caplen, wire = struct.unpack_from("<IIII", raw, off)
        rec = raw[off:off + 16 + caplen]
        frame = bytearray(rec[16:])
        frame[4:8] = struct.pack("!i", 2)
        out += rec + struct.pack("<IIII", sec, frac + 50_000, caplen, wire) + frame
        off += 16 + caplen
    path.write_bytes(bytes(out))
    packets, stats = read_tcp(path)
    assert stats.duplicates == len(frames) and len(packets) == len(frames)


def test_tcp_options_parse_sack_and_flag_malformed() -> None:
    o = parse_tcp_options(b"\x01\x01\x05\x12" + struct.pack("!IIII", 1, 2, 3, 4) +
                          b"\x01\x01\x08\x0a" + struct.pack("!II", 7, 9))
    assert o.sack == ((1, 2), (3, 4)) and o.ts == (7, 9) and not o.malformed
    bad = parse_tcp_options(b"\x02\x04\x05\xb4\x08\x0a\x00")   # TS runs past the list
    assert bad.mss == 1460 and bad.ts is None and bad.malformed


def test_headers_cut_by_snaplen_are_skipped_and_counted(tmp_path: Path) -> None:
    frames, _ = simulate(FlowSpec(n_segs=200))
    path = tmp_path / "snap.pcap"
    write_capture(frames, path)
    raw = bytearray(path.read_bytes())
    out, off, cut = bytearray(raw[:24]), 24, 0
    while off < len(raw):
        sec, frac, caplen, wire = struct.unpack_from("<IIII", raw, off)
        frame = raw[off + 16:off + 16 + caplen]
        if cut < 7 and caplen > 60 and off % 3 == 0:
            frame, cut = frame[:50], cut + 1             # 14 + 20 + 16: TCP header incomplete
        out += struct.pack("<IIII", sec, frac, len(frame), wire) + frame
        off += 16 + caplen
    path.write_bytes(bytes(out))
    packets, stats = read_tcp(path)
    assert cut and stats.truncated == cut and len(packets) == len(frames) - cut


# --- errors --------------------------------------------------------------------------------------

UNKNOWN_LINK = (struct.pack("<IHHiIII", 0xA1B2C3D4, 2, 4, 0, 0, 65535, 999) +
                struct.pack("<IIII", 1, 0, 40, 40) + bytes(40))


@pytest.mark.parametrize("content", [b"", b"\xd4\xc3\xb2\xa1\x02\x00", b"hello, not a pcap" * 4,
                                     b"\x0a\x0d\x0d\x0a\xff\xff\xff\xff\x4d\x3c\x2b\x1a",
                                     UNKNOWN_LINK])
@pytest.mark.parametrize("cmd", ["trace", "correlate"])
def test_bad_files_exit_2_with_a_clear_message(tmp_path: Path, capsys: pytest.CaptureFixture,
                                               content: bytes, cmd: str) -> None:
    path = tmp_path / "bad.pcap"
    path.write_bytes(content)
    assert main([cmd, str(path), "--json"]) == 2
    err = capsys.readouterr().err
    assert "bad.pcap" in err and "Traceback" not in err


def test_missing_file_exits_2(tmp_path: Path, capsys: pytest.CaptureFixture) -> None:
    assert main(["trace", str(tmp_path / "nope.pcap")]) == 2
    assert "cannot read" in capsys.readouterr().err


def test_corrupt_record_length_is_an_error(tmp_path: Path) -> None:
    frames, _ = simulate(FlowSpec(n_segs=20))
    path = write_capture(frames, tmp_path / "c.pcap")
    raw = bytearray(path.read_bytes())
    raw[24 + 8:24 + 12] = struct.pack("<I", 0x7FFFFFFF)
    path.write_bytes(bytes(raw))
    with pytest.raises(PcapError, match="corrupt record"):
        read_tcp(path)


def test_file_cut_inside_its_last_record_keeps_the_rest(tmp_path: Path) -> None:
    frames, _ = simulate(FlowSpec(n_segs=50))
    path = write_capture(frames, tmp_path / "cut.pcap")
    path.write_bytes(path.read_bytes()[:-10])
    packets, stats = read_tcp(path)
    assert stats.file_truncated and stats.truncated == 1 and len(packets) == len(frames) - 1


# --- command line -------------------------------------------------------------------------------

def test_cli_writes_csv_png_and_json(tmp_path: Path, capsys: pytest.CaptureFixture) -> None:
    frames, truth = simulate(FlowSpec(n_segs=400, fwd=ramp_fwd, lost={200}))
    path = write_capture(frames, tmp_path / "cap.pcap")
    out = tmp_path / "out"
    assert main(["trace", str(path), "--out", str(out), "--json"]) == 0
    summary = json.loads(capsys.readouterr().out)
    (f,) = summary["flows"]
    assert f["ott_source"] == "ts" and f["peer_clock_hz"] == 1000 and f["retransmissions"] == 1
    assert f["loss_times_s"] == pytest.approx([truth.retrans[0][2]], abs=1e-6)
    rows = Path(f["files"]["samples_csv"]).read_text().splitlines()
    assert rows[0].startswith("t_s,t_tx_s,ack,acked_bytes,rtt_ms,ott_ms,qdelay_ms,source")
    assert len(rows) == f["samples"] + 1
    assert Path(f["files"]["png"]).stat().st_size > 1000
    assert json.loads((out / "summary.json").read_text())["flows"][0]["id"] == f["id"]


def test_flow_filter() -> None:
    flows = [FlowTrace(0, "10.0.0.1", 40000, "10.0.0.2", 5001),
             FlowTrace(1, "fd00::1", 40001, "fd00::2", 5002)]
    assert [f.index for f in select_flows(flows, "5002")] == [1]
    assert [f.index for f in select_flows(flows, "#0")] == [0]
    assert [f.index for f in select_flows(flows, "[fd00::1]:40001>")] == [1]
    assert select_flows(flows, "#7") == [] and len(select_flows(flows, None)) == 2


def test_no_flow_matches_exits_1(tmp_path: Path) -> None:
    frames, _ = simulate(FlowSpec(n_segs=20))
    path = write_capture(frames, tmp_path / "cap.pcap")
    assert main(["trace", str(path), "--flow", "4242", "--out", str(tmp_path / "o")]) == 1


# --- a real capture on the loopback ------------------------------------------------------------------

def _start_tcpdump(path: Path, port: int) -> subprocess.Popen:
    tcpdump = shutil.which("tcpdump")
    if not tcpdump:
        pytest.skip("tcpdump not installed")
    proc = subprocess.Popen([tcpdump, "-i", "lo", "-U", "--immediate-mode", "-n", "-s", "128", "-w", str(path),
                             f"tcp port {port}"], stderr=subprocess.PIPE, text=True)
    deadline = time.monotonic() + 5
    assert proc.stderr is not None
    while time.monotonic() < deadline:
        line = proc.stderr.readline()
        if "listening on" in line:
            return proc
        if proc.poll() is not None:
            break
    proc.kill()
    proc.wait()
    pytest.skip("tcpdump cannot capture on lo here")


def _transfer(srv: socket.socket, nbytes: int, chunk: int) -> None:
    def sink() -> None:
        conn, _ = srv.accept()
        with conn:
            while conn.recv(1 << 16):
                pass

    th = threading.Thread(target=sink)
    th.start()
    with socket.socket() as c:
        c.setsockopt(socket.IPPROTO_TCP, socket.TCP_MAXSEG, 1448)
        c.settimeout(5)
        c.connect(srv.getsockname())
        for _ in range(nbytes // chunk):
            c.sendall(b"x" * chunk)
            time.sleep(0.002)
    th.join(5)


def test_loopback_capture_gives_small_rtts(tmp_path: Path) -> None:
    srv = socket.socket()
    srv.bind(("127.0.0.1", 0))
    srv.listen(1)
    port = srv.getsockname()[1]
    path = tmp_path / "lo.pcap"
    proc = _start_tcpdump(path, port)
    try:
        _transfer(srv, 1 << 20, 32 << 10)
        time.sleep(0.2)
    finally:
        srv.close()
        proc.send_signal(signal.SIGTERM)
        proc.wait(5)
    flows, stats = trace_file(str(path), str(port))
    assert stats.truncated == 0
    (flow,) = flows
    assert flow.sport != port and flow.dport == port        # the client sent the data
    rtts = sorted(s.rtt_ms for s in flow.samples if s.rtt_ms is not None)
    assert len(rtts) >= 10
    assert rtts[len(rtts) // 2] < 5.0
    assert flow.data_bytes == 1 << 20
    assert flow.peer_clock_hz in (1000, 1_000_000)
