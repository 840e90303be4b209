"""The option between two patched kernel stacks: negotiation, carriage, accuracy, fallback.

Every case captures the connection with tcpdump on the server's veth and
decodes the capture with ``synctcp owts`` (tools/synctcp/owtsdump.py).
"""

from __future__ import annotations

import json
import os
import socket
import statistics
import subprocess
import time
from pathlib import Path
from typing import Any, Dict, List, Tuple

import pytest

from conftest import FWD_MS, REV_MS, Pair, owts_counters, set_owts, sink
from synctcp import owts
from synctcp.owtsdump import Row, decode_file
from synctcp_testbed.network.netns import in_netns, sh

PORT = 5301


class Capture:
    """tcpdump of the server's veth into PATH, started and stopped around a body."""

    def __init__(self, ns: str, dev: str, path: Path) -> None:
        self.ns, self.dev, self.path = ns, dev, path

    def __enter__(self) -> "Capture":
        self.path.unlink(missing_ok=True)
        self.proc = subprocess.Popen(["ip", "netns", "exec", self.ns, "tcpdump", "-Z", "root",
                                      "-U", "-n", "-s", "128", "-i", self.dev, "-w",
                                      str(self.path), "tcp"],
                                     stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        deadline = time.monotonic() + 20
        while time.monotonic() < deadline and not (self.path.exists()
                                                  and self.path.stat().st_size >= 24):
            time.sleep(0.1)
        time.sleep(0.5)
        return self

    def __exit__(self, *exc: object) -> None:
        time.sleep(0.5)
        self.proc.terminate()
        try:
            self.proc.wait(10)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait(5)


def transfer(pair: Pair, port: int, seconds: float, chunk: int = 4 * 1448,
             period: float = 0.01) -> Tuple[int, int]:
    """Client in A sends ``chunk`` bytes every ``period`` for ``seconds`` to B.

    Paced well below what the path carries, so that no queue builds: the
    OTT is the netem delay plus the stack's own time.  Returns (sent, received).
    """
    srv = sink(pair, port)
    with in_netns(pair.a):
        cs = socket.socket()
    sent = 0
    with cs:
        cs.settimeout(20)
        cs.connect((pair.b_ip, port))
        data = b"x" * chunk
        end = time.monotonic() + seconds
        for _ in range(int(seconds / period) + 1):
            if time.monotonic() >= end:
                break
            cs.sendall(data)
            sent += chunk
            time.sleep(period)
        cs.shutdown(socket.SHUT_WR)
    return sent, srv.finish()


def pct(values: List[float], q: float) -> float:
    s = sorted(values)
    return s[min(len(s) - 1, int(q * len(s)))]


def distribution(values_us: List[int], expect_ms: float) -> Dict[str, float]:
    err = [v / 1000.0 - expect_ms for v in values_us]
    return {"n": len(values_us), "expect_ms": expect_ms,
            "median_ms": statistics.median(values_us) / 1000.0,
            "min_err_ms": min(err), "p10_err_ms": pct(err, 0.10),
            "median_err_ms": statistics.median(err), "p90_err_ms": pct(err, 0.90),
            "p99_err_ms": pct(err, 0.99), "max_err_ms": max(err),
            "within_0.2ms_pct": 100.0 * sum(abs(e) <= 0.2 for e in err) / len(err)}


def parse_units(rows: List[Row], src_ip: str) -> int:
    """The fewest segments the receiver may have parsed of what ``src_ip``
    sent: a run of back-to-back segments with the same option, contiguous in
    sequence (the wire segments of one GSO burst), counts once."""
    n, prev = 0, None
    for r in rows:
        if r.src[0] != src_ip:
            continue
        key = (r.option.tsval_us, r.option.ott_us) if r.option is not None else None
        if not (prev is not None and key is not None and key == prev[0] and r.seq == prev[1]):
            n += 1
        prev = (key, r.seq + r.length)
    return n


def rows_of(path: Path) -> List[Row]:
    rows, _ = decode_file(str(path))
    assert rows, f"nothing captured in {path}"
    return rows


def deltas(pair: Pair, before: Dict[str, Dict[str, int]]) -> Dict[str, Dict[str, int]]:
    return {ns: {k: v - before[ns][k] for k, v in owts_counters(ns).items()}
            for ns in (pair.a, pair.b)}


def test_sysctl_is_per_namespace_and_off_by_default(pair: Pair) -> None:
    assert Path("/proc/sys/net/ipv4/tcp_owts").read_text().strip() == "0"
    assert sh(["sysctl", "-n", "net.ipv4.tcp_owts"], ns=pair.a).stdout.strip() == "0"
    set_owts(pair.a, True)
    try:
        assert sh(["sysctl", "-n", "net.ipv4.tcp_owts"], ns=pair.a).stdout.strip() == "1"
        assert sh(["sysctl", "-n", "net.ipv4.tcp_owts"], ns=pair.b).stdout.strip() == "0"
        assert Path("/proc/sys/net/ipv4/tcp_owts").read_text().strip() == "0"
        bad = sh(["sysctl", "-qw", "net.ipv4.tcp_owts=3"], ns=pair.a, check=False)
        assert bad.returncode != 0                  # 0, 1 or 2 only
    finally:
        set_owts(pair.a, False)


def set_delays(pair: Pair, fwd_ms: float, rev_ms: float) -> None:
    for ns, dev, ms in ((pair.a, pair.a_dev, fwd_ms), (pair.b, pair.b_dev, rev_ms)):
        sh(["tc", "qdisc", "replace", "dev", dev, "root", "netem", "delay", f"{ms}ms",
            "limit", "100000"], ns=ns)


def ott_samples(pair: Pair, path: Path, port: int, seconds: float) -> Dict[str, Any]:
    """Both ends on, one paced transfer captured on both veths (the server's
    into ``path``, the client's beside it, ``-a``); the OTTs each way (us)."""
    set_owts(pair.a, True)
    set_owts(pair.b, True)
    before = {ns: owts_counters(ns) for ns in (pair.a, pair.b)}
    path_a = path.with_name(path.stem + "-a" + path.suffix)
    try:
        with Capture(pair.b, pair.b_dev, path), Capture(pair.a, pair.a_dev, path_a):
            sent, got = transfer(pair, port, seconds=seconds)
    finally:
        set_owts(pair.a, False)
        set_owts(pair.b, False)
    assert got == sent > 0
    rows = rows_of(path)
    later = [r for r in rows if not r.flags & 0x02]
    return {"rows": rows, "rows_a": rows_of(path_a), "later": later,
            "counters": deltas(pair, before),
            "fwd": [r.option.ott_us for r in later if r.option is not None
                    and r.src[0] == pair.b_ip and r.option.ott_us is not None],
            "rev": [r.option.ott_us for r in later if r.option is not None
                    and r.src[0] == pair.a_ip and r.option.ott_us is not None]}


def agreement(rows: List[Row], measured: str, echoer: str, window: int = 3) -> List[int]:
    """Each OTT that ``echoer`` echoes, minus the capture's own reading of it (us).

    ``rows`` is a capture on the echoer's veth, whose receive tap sees a
    segment just before the stack takes its arrival time.  The capture's
    clock is CLOCK_REALTIME, the option's clock, so a segment's ``age_us``
    (capture time minus its ``tsval``) reads the same transit as the option,
    but by another route.  The OTT
    an echo carries is that of the last segment from ``measured`` that the
    echoer had received when it wrote the echo; that is one of the last few
    captured before the echo's ``tsval`` (some may still have been in the
    stack), and the one of ``window`` whose age is closest is taken.
    """
    seen: List[Row] = []
    out: List[int] = []
    for r in rows:
        if r.option is None or r.flags & 0x02 or r.epoch is None:
            continue
        if r.src[0] == measured:
            seen.append(r)
        elif r.src[0] == echoer and r.option.ott_us is not None:
            ott = r.option.ott_us
            cand = [s for s in seen[-64:] if s.age_us is not None and s.epoch is not None
                    and owts.diff_us(r.option.tsval_us, owts.tsval_of(s.epoch)) >= 0][-window:]
            if cand:
                out.append(min((ott - s.age_us for s in cand if s.age_us is not None), key=abs))
    return out


def test_negotiated_carried_and_accurate(pair: Pair, results_dir: Path) -> None:
    """Both ends on: SYN and SYN-ACK offer it, every later segment carries it, and
    the OTTs each way agree with the capture's reading of the same segments.

    The OTT the option measures runs from writing the option to the segment's
    arrival at the other end: netem's delay, netem's timer coming late (on
    an emulated CPU, more so when the host is busy), and the stack's own
    transit.  What is asserted holds whatever else the host is doing:

    - no OTT is below netem's delay (the two ends share one clock);
    - each echoed OTT agrees with the capture's own age of the segment it
      measured (a capture on the measuring end's veth is another reader of
      the same clock, a step before the stack's): the median disagreement
      each way is within 0.2 ms, the accuracy the option is for.  Host load
      moves both readings alike.

    How far the OTTs lie above netem's delay is a property of the platform,
    not of the option: the distributions, the stack's own transit (netem at
    0 ms, same run) and the agreement are printed and kept in
    results/owts-tests/owts-accuracy.json, not asserted (a CI run under TCG
    read a forward median 1.024 ms above netem's 20 ms).
    """
    set_delays(pair, 0, 0)
    try:
        base = ott_samples(pair, results_dir / "owts-both-on-0ms.pcap", PORT + 10, 4.0)
    finally:
        set_delays(pair, FWD_MS, REV_MS)
    res = ott_samples(pair, results_dir / "owts-both-on.pcap", PORT, 6.0)
    rows, later, d = res["rows"], res["later"], res["counters"]
    syn = [r for r in rows if r.flags & 0x12 == 0x02]
    synack = [r for r in rows if r.flags & 0x12 == 0x12]
    assert syn and all(r.option is not None and r.option.ott_us is None for r in syn)
    assert synack and all(r.option is not None and r.option.ott_us is None for r in synack)
    missing = [r for r in later if r.option is None or r.problems]
    assert not missing, f"{len(missing)} of {len(later)} segments without a valid option"
    fwd, rev = res["fwd"], res["rev"]
    assert len(fwd) > 100 and len(rev) > 100 and base["fwd"] and base["rev"]
    agree = {"forward": agreement(rows, pair.a_ip, pair.b_ip),
             "reverse": agreement(res["rows_a"], pair.b_ip, pair.a_ip)}
    stack = {"forward_median_ms": statistics.median(base["fwd"]) / 1000.0,
             "reverse_median_ms": statistics.median(base["rev"]) / 1000.0,
             "forward": distribution(base["fwd"], 0.0), "reverse": distribution(base["rev"], 0.0)}
    result = {"platform": os.environ.get("SYNCTCP_ACCEL", "unknown"),
              "forward": distribution(fwd, FWD_MS), "reverse": distribution(rev, REV_MS),
              "stack_transit_at_0ms": stack,
              "forward_less_stack_err_ms":
                  statistics.median(fwd) / 1000.0 - stack["forward_median_ms"] - FWD_MS,
              "reverse_less_stack_err_ms":
                  statistics.median(rev) / 1000.0 - stack["reverse_median_ms"] - REV_MS,
              "option_less_capture": {
                  way: {"n": len(v), "median_abs_us": statistics.median(abs(x) for x in v),
                        "p10_us": pct(v, 0.10), "median_us": statistics.median(v),
                        "p90_us": pct(v, 0.90)} if v else {"n": 0}
                  for way, v in agree.items()},
              "segments": len(rows), "counters": d,
              "kernel": Path("/proc/sys/kernel/osrelease").read_text().strip()}
    (results_dir / "owts-accuracy.json").write_text(json.dumps(result, indent=1) + "\n")
    print("\nOWTS accuracy:", json.dumps(result, indent=1))
    for way, echoes in (("forward", fwd), ("reverse", rev)):
        assert result[way]["min_err_ms"] >= 0, (way, result[way])
        a = result["option_less_capture"][way]
        assert a["n"] >= 0.9 * len(echoes), (way, a, len(echoes))
        assert a["median_abs_us"] <= 200, (way, a)
    # Out counts what TCP sent, a GSO super-segment (software GSO stays on)
    # once; In counts every segment parsed.  Nothing is lost on this path,
    # so each end parsed at least as many as the other sent, and at least
    # as many as the capture (which may miss some under load) saw, counting
    # the wire segments of one GSO burst once: they carry the same option
    # (one send time), so the receiver's GRO may merge them back into one
    # parsed segment, as it did for 7 of 2297 in a busy TCG VM.
    a_seen = parse_units(rows, pair.a_ip)
    b_seen = parse_units(rows, pair.b_ip)
    assert d[pair.a]["TCPOWTSOut"] > 0 and d[pair.b]["TCPOWTSOut"] > 0
    assert d[pair.b]["TCPOWTSIn"] >= max(a_seen, d[pair.a]["TCPOWTSOut"])
    assert d[pair.a]["TCPOWTSIn"] >= max(b_seen, d[pair.b]["TCPOWTSOut"])
    assert d[pair.a]["TCPOWTSRejected"] == d[pair.b]["TCPOWTSRejected"] == 0


@pytest.mark.parametrize("off", ["server", "client"])
def test_one_side_off_falls_back_cleanly(pair: Pair, results_dir: Path, off: str) -> None:
    """With the sysctl off on one side no segment after the SYN carries the option,
    nothing is rejected, and the data arrive as without the patch."""
    on_ns = pair.a if off == "server" else pair.b
    set_owts(on_ns, True)
    before = {ns: owts_counters(ns) for ns in (pair.a, pair.b)}
    cap = results_dir / f"owts-{off}-off.pcap"
    try:
        with Capture(pair.b, pair.b_dev, cap):
            sent, got = transfer(pair, PORT + (1 if off == "server" else 2), seconds=2.0)
    finally:
        set_owts(on_ns, False)
    d = deltas(pair, before)
    assert got == sent > 0
    rows = rows_of(cap)
    with_opt = [r for r in rows if r.count]
    syns = [r for r in rows if r.flags & 0x12 == 0x02]
    if off == "server":
        assert syns and all(r.count == 1 for r in syns)        # the client offers it...
        assert with_opt == syns                                # ...and nothing else has it
        assert d[pair.a]["TCPOWTSOut"] == len(syns)
    else:
        assert not with_opt
        assert d[pair.b]["TCPOWTSOut"] == 0
    for ns in (pair.a, pair.b):
        assert d[ns]["TCPOWTSRejected"] == 0 and d[ns]["TCPOWTSIn"] == 0, d
