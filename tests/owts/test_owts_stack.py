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
    """Both ends on, one paced transfer captured; the OTTs each way (us)."""
    set_owts(pair.a, True)
    set_owts(pair.b, True)
    before = {ns: owts_counters(ns) for ns in (pair.a, pair.b)}
    try:
        with Capture(pair.b, pair.b_dev, path):
            sent, got = transfer(pair, port, seconds=seconds)
    finally:
        set_owts(pair.a, False)
        set_owts(pair.b, False)
    assert got == sent > 0
    rows = rows_of(path)
    later = [r for r in rows if not r.flags & 0x02]
    return {"rows": rows, "later": later, "counters": deltas(pair, before),
            "fwd": [r.option.ott_us for r in later if r.option is not None
                    and r.src[0] == pair.b_ip and r.option.ott_us is not None],
            "rev": [r.option.ott_us for r in later if r.option is not None
                    and r.src[0] == pair.a_ip and r.option.ott_us is not None]}


def test_negotiated_carried_and_accurate(pair: Pair, results_dir: Path) -> None:
    """Both ends on: SYN and SYN-ACK offer it, every later segment carries it, and
    the OTTs read 20 ms forward and 5 ms reverse.

    The OTT the option measures runs from writing the option to parsing it
    at the other end: netem's delay plus the stack's own transit, which is
    measured in the same run with netem at 0 ms (reported, not asserted).
    Always: no OTT is below netem's delay (the clocks are one clock) and
    the fastest segments read it to within 0.2 ms.  On a real CPU (native,
    KVM) the median must be within 0.2 ms too; under TCG emulation the
    emulated stack adds more than that to a typical segment, and the
    median must be within 1 ms.  The distributions are printed and kept in
    results/owts-tests/owts-accuracy.json.
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
              "segments": len(rows), "counters": d,
              "kernel": Path("/proc/sys/kernel/osrelease").read_text().strip()}
    (results_dir / "owts-accuracy.json").write_text(json.dumps(result, indent=1) + "\n")
    print("\nOWTS accuracy:", json.dumps(result, indent=1))
    median_bound = 0.2 if result["platform"] in ("native", "kvm") else 1.0
    for way in ("forward", "reverse"):
        r = result[way]
        assert 0 <= r["min_err_ms"] <= 0.2, (way, r)
        assert abs(r["median_err_ms"]) <= median_bound, (way, r)
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
