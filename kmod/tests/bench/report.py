#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""The per-ACK cost tables of `make bench-ack`.

1. bench_kernel: every algorithm through its tcp_congestion_ops hooks, the
   kernel's own reno, cubic, bbr, vegas, dctcp and our modules, compiled
   from their files against kshim/ (bench_kernel.c says what the loop does
   per ACK).  ns/ACK: best, median and worst of 5 timed runs of 10^6 ACKs;
   instructions/ACK: valgrind's callgrind counting only inside the loop
   (run_ops).  "net" is net of row "stack", the same loop with no hook on
   the ACK path (and no pacing update: the net of a cong_avoid() module
   has the kernel's tcp_update_pacing_rate(), as tcp_cong_control() runs it); the ratios to bbr and to cubic are of the net figures.
   The goal of issue 32: sync and mixreact at or below bbr's cost, etcp at
   or below cubic's.
2. bench_ack: the cores alone (kmod/core, no module glue) against a copy
   of Reno's loop, as before.

    python3 report.py BUILD/bench_kernel BUILD/bench_ack
"""
import os
import re
import shutil
import subprocess
import sys
import tempfile
from typing import Dict, List, Optional, Tuple

N_ACKS = 1e6
ROWS = ["reno", "cubic", "bbr", "vegas", "dctcp", "sync", "mixreact", "etcp"]
WHAT = {"reno": "kernel tcp_cong.c", "cubic": "kernel tcp_cubic.c", "bbr": "kernel tcp_bbr.c",
        "vegas": "kernel tcp_vegas.c", "dctcp": "kernel tcp_dctcp.c",
        "sync": "our tcp_sync.ko's", "mixreact": "our tcp_mixreact.ko's",
        "etcp": "our tcp_etcp.ko's"}
GOALS: List[Tuple[str, str]] = [("sync", "bbr"), ("mixreact", "bbr"), ("etcp", "cubic")]
CORES_GOAL = 2.0    # issue 15: each core's per-ACK path within 2x Reno's


def instructions(binary: str, name: str, toggle: str) -> float:
    """Instructions per ACK inside function toggle, running row name once."""
    with tempfile.TemporaryDirectory() as tmp:
        out = os.path.join(tmp, "cg.out")
        subprocess.run(["valgrind", "--tool=callgrind", f"--toggle-collect={toggle}",
                        f"--callgrind-out-file={out}", binary, "--only", name],
                       check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        with open(out) as f:
            m = re.search(r"^(?:summary|totals): (\d+)", f.read(), re.M)
    if not m:
        raise SystemExit(f"report.py: no instruction total in callgrind's output for {name}")
    return int(m.group(1)) / N_ACKS


def timed(binary: str) -> Dict[str, List[float]]:
    """Each row's ns/ACK as the binary prints them (best first)."""
    out = subprocess.run([binary], check=True, capture_output=True, text=True).stdout
    return {f[0]: [float(x) for x in f[1:]] for f in (line.split() for line in out.splitlines())}


def ratio(a: float, b: float) -> str:
    return f"{a / b:.2f}" if b > 0 else "-"


def kernel_table(binary: str, have_vg: bool) -> None:
    ns = timed(binary)
    ins: Dict[str, float] = ({k: instructions(binary, k, "run_ops") for k in ["stack"] + ROWS}
                             if have_vg else {})
    base_ns = ns["stack"][0]
    net_ns = {k: ns[k][0] - base_ns for k in ROWS}
    net_ins = {k: ins[k] - ins["stack"] for k in ROWS} if have_vg else {}
    print("Per-ACK cost through the tcp_congestion_ops hooks (bench_kernel: the kernel's files and "
          "our modules, -O2, one binary), 10^6 ACKs")
    print(f"  the loop alone (row stack: the socket's updates, no hook, no pacing update): "
          f"{base_ns:.2f} ns" + (f", {ins['stack']:.1f} instructions" if have_vg else "")
          + "; net = minus that; x bbr, x cubic: ratios of the net figures")
    print("  the cong_avoid() rows' net includes the kernel's tcp_update_pacing_rate() after "
          "the hook (tcp_cong_control()); bbr and etcp pace in cong_control()")
    head = (f"{'':9} {'module hooks of':22} {'ns best':>7} {'median':>7} {'worst':>7} "
            f"{'ns net':>7} {'x bbr':>6} {'x cubic':>7}")
    if have_vg:
        head += f" {'instr':>7} {'net':>7} {'x bbr':>6} {'x cubic':>7}"
    print(head)
    for k in ROWS:
        best, med, worst = ns[k]
        row = (f"{k:9} {WHAT[k]:22} {best:7.2f} {med:7.2f} {worst:7.2f} {net_ns[k]:7.2f} "
               f"{ratio(net_ns[k], net_ns['bbr']):>6} {ratio(net_ns[k], net_ns['cubic']):>7}")
        if have_vg:
            row += (f" {ins[k]:7.1f} {net_ins[k]:7.1f} {ratio(net_ins[k], net_ins['bbr']):>6} "
                    f"{ratio(net_ins[k], net_ins['cubic']):>7}")
        print(row)
    print("goal (issue 32): sync, mixreact <= bbr; etcp <= cubic (net cost per ACK)")
    for ours, ref in GOALS:
        line = f"  {ours} <= {ref}:"
        if have_vg:
            line += (f" instructions {'yes' if net_ins[ours] <= net_ins[ref] else 'no'}"
                     f" ({net_ins[ours]:.1f} vs {net_ins[ref]:.1f}),")
        line += (f" ns {'yes' if net_ns[ours] <= net_ns[ref] else 'no'}"
                 f" ({net_ns[ours]:.2f} vs {net_ns[ref]:.2f}, best of 5)")
        print(line)


def cores_table(binary: str, have_vg: bool) -> None:
    ns = {k: v[0] for k, v in timed(binary).items()}
    ins = {k: instructions(binary, k, f"run_{k}") for k in ns} if have_vg else {}
    base_ns, base_ins = ns.pop("stream"), ins.pop("stream", 0.0)
    net_ins = {k: v - base_ins for k, v in ins.items()}
    print(f"The cores alone (bench_ack: kmod/core's calls as the modules make them, no glue) "
          f"against a copy of Reno's loop, the whole loop (reading the ACK stream alone: "
          f"{base_ns:.2f} ns" + (f", {base_ins:.1f} instructions" if have_vg else "")
          + f"); goal (issue 15): each core within {CORES_GOAL:.0f}x Reno")
    print(f"{'':10} {'ns/ACK':>7} {'x Reno':>7}" + (
        f" {'instr/ACK':>10} {'x Reno':>7} {'instr net':>10}" if have_vg else ""))
    for k in ns:
        row = f"{k:10} {ns[k]:7.2f} {ns[k] / ns['reno']:7.2f}"
        if have_vg:
            row += f" {ins[k]:10.1f} {ins[k] / ins['reno']:7.2f} {net_ins[k]:10.1f}"
        print(row)


def main(argv: Optional[List[str]] = None) -> int:
    args = sys.argv[1:] if argv is None else argv
    if len(args) != 2:
        print("usage: report.py BUILD/bench_kernel BUILD/bench_ack", file=sys.stderr)
        return 2
    have_vg = shutil.which("valgrind") is not None
    kernel_table(args[0], have_vg)
    print()
    cores_table(args[1], have_vg)
    if not have_vg:
        print("(instructions: valgrind is not installed; make setup installs it)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
