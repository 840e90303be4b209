#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""The per-ACK cost table of bench_ack: ns/ACK (best of 5 timed runs) and
instructions/ACK (valgrind's callgrind, counting only inside each loop),
each as a ratio to Reno's loop, and the instructions net of the loop that
only reads the ACK stream.

    python3 report.py BUILD/bench_ack
"""
import os
import re
import shutil
import subprocess
import sys
import tempfile

GOAL = 2.0          # issue 15: each core's per-ACK path within 2x Reno's


def instructions(binary: str, name: str) -> float:
    with tempfile.TemporaryDirectory() as tmp:
        out = os.path.join(tmp, "cg.out")
        subprocess.run(["valgrind", "--tool=callgrind", f"--toggle-collect=run_{name}",
                        f"--callgrind-out-file={out}", binary, "--only", name],
                       check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        with open(out) as f:
            m = re.search(r"^(?:summary|totals): (\d+)", f.read(), re.M)
    if not m:
        raise SystemExit(f"report.py: no instruction total in callgrind's output for {name}")
    return int(m.group(1)) / 1e6          # bench_ack runs 10^6 ACKs


def main() -> int:
    if len(sys.argv) != 2:
        print("usage: report.py BUILD/bench_ack", file=sys.stderr)
        return 2
    binary = sys.argv[1]
    timed = dict(line.split() for line in
                 subprocess.run([binary], check=True, capture_output=True,
                                text=True).stdout.splitlines())
    ns = {k: float(v) for k, v in timed.items()}
    have_vg = shutil.which("valgrind") is not None
    ins = {k: instructions(binary, k) for k in ns} if have_vg else {}
    base_ns, base_ins = ns.pop("stream"), ins.pop("stream", 0.0)
    net_ins = {k: v - base_ins for k, v in ins.items()}
    print(f"per-ACK cost over 10^6 ACKs, the whole loop (reading the ACK stream alone: "
          f"{base_ns:.2f} ns" + (f", {base_ins:.1f} instructions" if have_vg else "")
          + f"); goal: each core within {GOAL:.0f}x Reno")
    print(f"{'':10} {'ns/ACK':>7} {'x Reno':>7}" + (
        f" {'instr/ACK':>10} {'x Reno':>7} {'instr net':>10}" if have_vg else ""))
    for k in ns:
        row = f"{k:10} {ns[k]:7.2f} {ns[k] / ns['reno']:7.2f}"
        if have_vg:
            row += f" {ins[k]:10.1f} {ins[k] / ins['reno']:7.2f} {net_ins[k]:10.1f}"
        print(row)
    if not have_vg:
        print("(instructions: valgrind is not installed; make setup installs it)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
