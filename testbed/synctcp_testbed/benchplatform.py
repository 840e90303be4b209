"""``make bench-platform``: what each platform costs, and where it stops being faithful.

Runs four reference cases on User-Mode Linux (simulated time), one at a
time so that each instance has a core to itself, and prints for each the
simulated seconds per wall second (above 1: faster than real time) and
the link utilization it reached; then the same cases through the TCG VM
where its forwarding rate allows (real time: one wall second per simulated
second plus boot, but the utilization shows when the emulator, not the
algorithm, is the bottleneck).

    python3 -m synctcp_testbed.benchplatform [--out DIR] [--platforms uml,tcg]
            [--only weigle-ftp,100M-1,1G-1,1G-100] [--duration SEC]

Benchmarks report, they do not assert.  The table is also written to
``DIR/bench-platform.txt`` and ``DIR/bench-platform.json``.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from dataclasses import replace
from pathlib import Path
from typing import Any, Callable, Dict, List, Optional, Sequence

from .scenario import Scenario, ScenarioError, TopologySpec, TrafficSpec, load


def _dumbbell(name: str, rate: float, flows: int, seconds: float) -> Scenario:
    """One pair, ``flows`` CUBIC flows, 40 ms, a 2-BDP drop-tail buffer."""
    sc = Scenario(name=name, description=f"{rate:g} Mbit/s, {flows} flow(s), 40 ms, 2 BDP",
                  cc=["cubic"], aqm=["droptail"], duration_s=seconds,
                  warmup_s=min(5.0, seconds / 4), seed=1,
                  topology=TopologySpec(kind="dumbbell", rate_mbit=rate, rtts_ms=[40.0],
                                        queue_bdp=2.0),
                  traffic=TrafficSpec(flows_per_pair=flows))
    sc.validate()
    return sc


def _weigle(seconds: float) -> Scenario:
    sc = load("weigle-ftp")
    return replace(sc, cc=["reno"], ceiling=False, duration_s=seconds,
                   warmup_s=min(sc.warmup_s, seconds / 4))


#: label -> (what it is, scenario of a duration)
CASES: Dict[str, Any] = {
    "weigle-ftp": ("10 Mbit/s parking lot, 20+20 reno flows (weigle-ftp)", _weigle, 30.0),
    "100M-1": ("100 Mbit/s, 1 flow", lambda s: _dumbbell("bp-100M-1", 100, 1, s), 20.0),
    "1G-1": ("1 Gbit/s, 1 flow", lambda s: _dumbbell("bp-1G-1", 1000, 1, s), 10.0),
    "1G-100": ("1 Gbit/s, 100 flows", lambda s: _dumbbell("bp-1G-100", 1000, 100, s), 10.0),
}


def measure(label: str, sc: Scenario, platform: str, out: Path,
            log: Callable[[str], None]) -> Dict[str, Any]:
    from .case.errors import RunError
    from .platform.run import run_scenario

    rundir = out / f"{label}-{platform}"
    row: Dict[str, Any] = {"case": label, "platform": platform,
                           "rate_mbit": sc.topology.rate_mbit, "duration_s": sc.duration_s}
    t0 = time.monotonic()
    try:
        run_scenario(sc, rundir, command=["bench-platform", label], log=log,
                     platform=platform, jobs=1)
    except RunError as exc:
        row["error"] = str(exc)
    row["wall_s"] = round(time.monotonic() - t0, 1)
    try:
        summary = json.loads((rundir / "summary.json").read_text())
        meta = json.loads((rundir / "meta.json").read_text())
    except (OSError, json.JSONDecodeError):
        return row
    if not summary["cases"]:
        row.setdefault("error", "skipped on this platform" if meta.get("skipped_cases")
                       else "no result")
        return row
    case = summary["cases"][0]
    b = case["bottlenecks"][0] if case["bottlenecks"] else {}
    row.update({"goodput_mbit": round(case["goodput_mbit"], 2),
                "utilization": round(b.get("utilization", 0.0), 4),
                "flows": len(case["flows"])})
    cost = case.get("cost") or {}
    if cost.get("command_sim_s"):
        row.update({"simulated_s": cost["command_sim_s"], "instance_wall_s": cost["command_wall_s"],
                    "sim_per_wall": cost["sim_per_wall"], "userspace": cost.get("userspace"),
                    "release": cost.get("release")})
    else:                               # real time: 1 by definition; wall includes the VM's boot
        row["real_time"] = True
    return row


def table(rows: List[Dict[str, Any]]) -> str:
    head = ("case", "platform", "flows", "sim s", "wall s", "sim s / wall s", "util %",
            "goodput Mbit/s", "note")
    lines = [head]
    for r in rows:
        lines.append((r["case"], r["platform"], str(r.get("flows", "-")),
                      f"{r['simulated_s']:.1f}" if r.get("simulated_s") else "-",
                      f"{r.get('instance_wall_s') or r['wall_s']:.1f}",
                      f"{r['sim_per_wall']:.2f}" if r.get("sim_per_wall")
                      else ("1 (real time)" if r.get("real_time") else "-"),
                      f"{100 * r['utilization']:.1f}" if "utilization" in r else "-",
                      f"{r['goodput_mbit']:.2f}" if "goodput_mbit" in r else "-",
                      r.get("error", "") or ("wall: the whole run, VM boot included"
                                             if r.get("real_time") else "")
                      or (r.get("userspace") or "") + (
                          f" {r['release']}" if r.get("release") else "")))
    widths = [max(len(x[i]) for x in lines) for i in range(len(head))]
    return "\n".join("  ".join(c.ljust(w) if i in (0, 1, 8) else c.rjust(w)
                               for i, (c, w) in enumerate(zip(x, widths))).rstrip()
                     for x in lines)


def main(argv: Optional[Sequence[str]] = None) -> int:
    ap = argparse.ArgumentParser(prog="python3 -m synctcp_testbed.benchplatform",
                                 description=__doc__.split("\n")[0])
    ap.add_argument("--out", type=Path, default=Path("results/bench-platform"))
    ap.add_argument("--platforms", default="uml,tcg",
                    help="comma-separated platforms to measure (default: uml,tcg)")
    ap.add_argument("--only", help=f"comma-separated cases of: {', '.join(CASES)}")
    ap.add_argument("--duration", type=float, help="simulated seconds of every case")
    ap.add_argument("--series", default=None,
                    help="comma-separated UML kernel series to measure, e.g. 6.1,7.2 "
                         "(default: SYNCTCP_UML_SERIES or the default series)")
    args = ap.parse_args(argv)
    names = args.only.split(",") if args.only else list(CASES)
    bad = [n for n in names if n not in CASES]
    if bad:
        ap.error(f"unknown case {', '.join(bad)}: of {', '.join(CASES)}")
    plats = [p for p in args.platforms.split(",") if p]
    from .platform.choose import PLATFORMS
    bad = [p for p in plats if p not in PLATFORMS]
    if bad:
        ap.error(f"unknown platform {', '.join(bad)}: of {', '.join(PLATFORMS)}")
    args.out.mkdir(parents=True, exist_ok=True)

    def log(msg: str) -> None:
        print(f"  {msg}", file=sys.stderr, flush=True)

    from .platform.choose import uml_series
    series = [x for x in (args.series or uml_series()).split(",") if x]
    rows: List[Dict[str, Any]] = []
    try:
        for plat in plats:
            for ser in (series if plat == "uml" else [""]):
                if ser:
                    os.environ["SYNCTCP_UML_SERIES"] = ser
                for name in names:
                    what, make, secs = CASES[name]
                    sc = make(args.duration or secs)
                    label = f"{plat} {ser}".strip()
                    print(f"{name} on {label}: {what}, {sc.duration_s:g} s", file=sys.stderr,
                          flush=True)
                    row = measure(name, sc, plat, args.out / label.replace(" ", "-"), log)
                    row["platform"] = label
                    rows.append(row)
    except ScenarioError as exc:
        print(f"bench-platform: {exc}", file=sys.stderr)
        return 2
    text = table(rows)
    print(text)
    (args.out / "bench-platform.txt").write_text(text + "\n")
    (args.out / "bench-platform.json").write_text(json.dumps(rows, indent=1) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
