"""``make bench``: the benchmark set, with every figure next to Reno and CUBIC.

Runs the presets of the benchmark set (scaled to a bench-sized duration)
and prints, per scenario, each algorithm's figures with its ratio to Reno
and to CUBIC *of the same run*:

* ``weigle-ftp``: the columns of Weigle's Table 4.3 (utilization %,
  drop %, average queue in packets at the forward bottleneck R0->R1) for
  reno, cubic, bbr, vegas, sync and mixreact;
* ``gu-smallbuffer``: link utilization of etcp, reno and cubic at each
  capacity, with the large-buffer CUBIC ceiling the platform reached.

Benchmarks report; they do not assert.  Each scenario's run directory
(with report.html) is kept under ``--out``, and the tables in
``--out/bench.txt``.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path
from typing import Any, Dict, List, Optional, Sequence

from rich.console import Console
from rich.table import Table

#: preset -> (duration s, warm-up s) of its bench-sized run
BENCH = {"weigle-ftp": (60.0, 15.0), "gu-smallbuffer": (20.0, 5.0)}
#: ``--quick``: the quick set, gu-smallbuffer's 20 cases at 10 s each (docs/scaling.md)
QUICK = {"only": "gu-smallbuffer", "duration": 10.0}


def _ratio(a: Optional[float], b: Optional[float]) -> str:
    return "-" if a is None or not b else f"{a / b:.2f}"


def _find(cases: List[Dict[str, Any]], cc: str, point: Any) -> Optional[Dict[str, Any]]:
    return next((c for c in cases if c["cc"] == cc and c["aqm"] != "ceiling"
                 and c.get("point") == point), None)


def _link(case: Optional[Dict[str, Any]], link: str) -> Optional[Dict[str, Any]]:
    if case is None:
        return None
    return next((b for b in case["bottlenecks"] if b["link"] == link), None)


def weigle_table(summary: Dict[str, Any], link: str = "r0r1") -> Table:
    """Table 4.3's columns at ``link``, with ratios to Reno and CUBIC."""
    t = Table(title=f"weigle-ftp (Table 4.3 columns, bottleneck {link})")
    for col in ("algorithm", "util %", "drop %", "avg queue pkts", "util/reno", "drop/reno",
                "queue/reno", "util/cubic", "drop/cubic", "queue/cubic"):
        t.add_column(col, justify="left" if col == "algorithm" else "right")
    cases = [c for c in summary["cases"] if c["aqm"] != "ceiling"]
    for c in summary["cases"]:
        b = _link(c, link)
        if b is None:
            continue
        name = c["cc"] if c["aqm"] != "ceiling" else "cubic, large buffer (platform ceiling)"
        row = [name, f"{100 * b['utilization']:.2f}", f"{b['drop_pct']:.2f}",
               f"{b['mean_pkts']:.2f}"]
        for ref in ("reno", "cubic"):
            rb = _link(_find(cases, ref, c.get("point")), link)
            row += [_ratio(b["utilization"], rb and rb["utilization"]),
                    _ratio(b["drop_pct"], rb and rb["drop_pct"]),
                    _ratio(b["mean_pkts"], rb and rb["mean_pkts"])]
        t.add_row(*row)
    return t


def gu_table(summary: Dict[str, Any], link: str = "lr") -> Table:
    """Utilization of each algorithm at each capacity, with ratios and the ceiling."""
    t = Table(title=f"gu-smallbuffer (20-packet buffer, 100 ms; bottleneck {link})")
    for col in ("capacity Mbit/s", "algorithm", "util %", "drop %", "avg queue", "util/reno",
                "util/cubic", "ceiling util %"):
        t.add_column(col, justify="left" if col == "algorithm" else "right")
    cases = summary["cases"]
    for c in cases:
        if c["aqm"] == "ceiling":
            continue
        b = _link(c, link)
        if b is None:
            continue
        ceil = next((_link(x, link) for x in cases
                     if x["aqm"] == "ceiling" and x.get("point") == c.get("point")), None)
        row = [f"{b['rate_mbit']:g}", c["cc"], f"{100 * b['utilization']:.1f}",
               f"{b['drop_pct']:.2f}", f"{b['mean_pkts']:.1f}"]
        for ref in ("reno", "cubic"):
            rb = _link(_find(cases, ref, c.get("point")), link)
            row.append(_ratio(b["utilization"], rb and rb["utilization"]))
        row.append(f"{100 * ceil['utilization']:.1f}" if ceil else "-")
        t.add_row(*row)
    return t


TABLES = {"weigle-ftp": weigle_table, "gu-smallbuffer": gu_table}


def main(argv: Optional[Sequence[str]] = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--out", default="results/bench", help="directory of the run directories")
    ap.add_argument("--only", help="comma-separated presets (default: all of the bench set)")
    ap.add_argument("--duration", type=float, help="override every preset's bench duration")
    ap.add_argument("--platform", help="where the cases run: native, uml, kvm or tcg (default: "
                    "native where this host loads modules, else uml; docs/platform.md)")
    ap.add_argument("--jobs", type=int, help="cases at once on uml (default: the number of cores)")
    ap.add_argument("--quick", action="store_true",
                    help=f"the quick set: --only {QUICK['only']} --duration {QUICK['duration']:g}")
    ap.add_argument("--dask", metavar="ADDRESS",
                    help="run the cases on the Dask scheduler at ADDRESS (docs/scaling.md)")
    ap.add_argument("--slurm", action="store_true",
                    help="run the cases on Dask workers started as Slurm jobs; their options "
                         "in --slurm-config FILE")
    ap.add_argument("--slurm-config", metavar="FILE",
                    help="TOML file of the Slurm jobs (synctcp-testbed run --help)")
    ap.add_argument("--shared-dir", metavar="DIR",
                    help="a directory the workers and this host share (synctcp-testbed run)")
    ap.add_argument("--tables-only", action="store_true",
                    help="print the tables of existing run directories, run nothing")
    args = ap.parse_args(argv)
    if args.quick:
        if args.only or args.duration:
            ap.error("--quick is --only gu-smallbuffer --duration 10: not with --only or --duration")
        args.only, args.duration = QUICK["only"], QUICK["duration"]
    names = args.only.split(",") if args.only else list(BENCH)
    unknown = [n for n in names if n not in BENCH]
    if unknown:
        ap.error(f"not in the bench set: {', '.join(unknown)} (have {', '.join(BENCH)})")
    from .cli import main as testbed

    console = Console(width=160, record=True)
    out = Path(args.out)
    timings: Dict[str, float] = {}
    rc = 0
    for name in names:
        rundir = out / name
        if not args.tables_only:
            dur, warm = BENCH[name]
            if args.duration:
                dur, warm = args.duration, min(warm, args.duration / 4)
            t0 = time.monotonic()
            code = testbed(["run", name, "--duration", f"{dur:g}", "--warmup", f"{warm:g}",
                            "--out", str(rundir),
                            *(["--platform", args.platform] if args.platform else []),
                            *(["--jobs", str(args.jobs)] if args.jobs else []),
                            *(["--dask", args.dask] if args.dask else []),
                            *(["--slurm"] if args.slurm else []),
                            *(["--slurm-config", args.slurm_config] if args.slurm_config else []),
                            *(["--shared-dir", args.shared_dir] if args.shared_dir else [])])
            timings[name] = time.monotonic() - t0
            if code != 0:
                console.print(f"[red]{name}: run failed ({code})[/red]")
                rc = 1
        summary_path = rundir / "summary.json"
        if summary_path.exists():
            summary = json.loads(summary_path.read_text())
            console.print(TABLES[name](summary))
            if name in timings:
                console.print(f"{name}: {len(summary['cases'])} cases in {timings[name]:.0f} s; "
                              f"report {rundir / 'report.html'}")
    if not args.tables_only:
        out.mkdir(parents=True, exist_ok=True)
        (out / "bench.txt").write_text(console.export_text())
        print(f"tables also in {out / 'bench.txt'}")
    return rc


if __name__ == "__main__":
    sys.exit(main())
