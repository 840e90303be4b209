"""``make bench``: the benchmark set, with every figure next to Reno and CUBIC.

Runs the presets of the benchmark set (scaled to a bench-sized duration,
each case with several seeds) and prints, per scenario, each algorithm's
figures as mean ± 95% confidence interval over the seeds, with its ratio to
Reno and to CUBIC *of the same run* (paired by seed: the ratios of
:func:`synctcp_testbed.analysis.stats.groups`):

* ``weigle-ftp``: the columns of Weigle's Table 4.3 (utilization %,
  drop %, average queue in packets at the forward bottleneck R0->R1) for
  reno, cubic, bbr, vegas, sync and mixreact, and the large-buffer CUBIC
  case: what the platform itself carries;
* ``gu-smallbuffer``: link utilization of etcp, reno and cubic at each
  capacity, with the large-buffer CUBIC ceiling the platform reached.

The full set (60 s and 30 s, 5 seeds) takes under 60 minutes on the
2-core machine of the README; ``--quick`` (20 s and 10 s, 3 seeds) under
10 (docs/scaling.md has the figures).  Benchmarks report; they do not
assert.  Each scenario's run directory (with report.html) is kept under
``--out``, and the tables in ``--out/bench.txt``.
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

from .analysis.stats import groups
from .analysis.stats import text as _cell

#: preset -> (duration s, warm-up s, seeds) of its bench-sized run
BENCH = {"weigle-ftp": (60.0, 15.0, 5), "gu-smallbuffer": (30.0, 5.0, 5)}
#: ``--quick``: both presets, shorter and with fewer seeds (within 10 minutes on 2 cores)
QUICK = {"weigle-ftp": (20.0, 5.0, 3), "gu-smallbuffer": (10.0, 2.5, 3)}


def _groups(summary: Dict[str, Any]) -> List[Dict[str, Any]]:
    """The summary's case groups (recomputed: older summaries have none)."""
    return groups(summary["cases"])


def _ceiling(gs: List[Dict[str, Any]], point: Any) -> Optional[Dict[str, Any]]:
    """The platform's ceiling group at sweep ``point``, if the run has one."""
    return next((g for g in gs if g["aqm"] == "ceiling" and g.get("point") == point), None)


def weigle_table(summary: Dict[str, Any], link: str = "r0r1") -> Table:
    """Table 4.3's columns at ``link`` (mean ± 95% CI), paired ratios to Reno and CUBIC."""
    gs = _groups(summary)
    n = max((g["n"] for g in gs), default=1)
    t = Table(title=f"weigle-ftp (Table 4.3 columns, bottleneck {link}; mean \u00b1 95% CI "
                    f"over {n} seeds, ratios paired by seed)")
    for col in ("algorithm", "util %", "drop %", "avg queue pkts", "util/reno", "drop/reno",
                "queue/reno", "util/cubic", "drop/cubic", "queue/cubic"):
        t.add_column(col, justify="left" if col == "algorithm" else "right")
    for g in gs:
        m = g["metrics"]
        if f"{link}.utilization" not in m:
            continue
        name = g["cc"] if g["aqm"] != "ceiling" else "cubic, large buffer (platform ceiling)"
        row = [name, _cell(m[f"{link}.utilization"], 2, 100), _cell(m.get(f"{link}.drop_pct")),
               _cell(m.get(f"{link}.mean_pkts"))]
        for ref in ("reno", "cubic"):
            r = g["ratios"].get(ref, {})
            row += [_cell(r.get(f"{link}.utilization")), _cell(r.get(f"{link}.drop_pct")),
                    _cell(r.get(f"{link}.mean_pkts"))]
        t.add_row(*row)
    return t


def gu_table(summary: Dict[str, Any], link: str = "lr") -> Table:
    """Utilization of each algorithm at each capacity (mean ± 95% CI), ratios and the ceiling."""
    gs = _groups(summary)
    n = max((g["n"] for g in gs), default=1)
    t = Table(title=f"gu-smallbuffer (20-packet buffer, 100 ms; bottleneck {link}; mean "
                    f"\u00b1 95% CI over {n} seeds)")
    for col in ("capacity Mbit/s", "algorithm", "util %", "drop %", "avg queue", "util/reno",
                "util/cubic", "ceiling util %"):
        t.add_column(col, justify="left" if col == "algorithm" else "right")
    for g in gs:
        m = g["metrics"]
        if g["aqm"] == "ceiling" or f"{link}.utilization" not in m:
            continue
        ceil = _ceiling(gs, g.get("point"))
        rate = (g.get("point") or {}).get("rate_mbit")
        row = [f"{rate:g}" if rate is not None else "-", g["cc"],
               _cell(m[f"{link}.utilization"], 1, 100), _cell(m.get(f"{link}.drop_pct")),
               _cell(m.get(f"{link}.mean_pkts"), 1)]
        for ref in ("reno", "cubic"):
            row.append(_cell(g["ratios"].get(ref, {}).get(f"{link}.utilization")))
        row.append(_cell(ceil["metrics"].get(f"{link}.utilization"), 1, 100) if ceil else "-")
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
                    help="the quick set: both presets, "
                         + ", ".join(f"{k} {d:g} s x {n} seeds" for k, (d, _, n) in QUICK.items())
                         + " (within 10 minutes on 2 cores)")
    ap.add_argument("--repeat", type=int, metavar="N",
                    help="seeds per case (default: 5, --quick 3)")
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
    sizes = QUICK if args.quick else BENCH
    names = args.only.split(",") if args.only else list(BENCH)
    unknown = [n for n in names if n not in BENCH]
    if unknown:
        ap.error(f"not in the bench set: {', '.join(unknown)} (have {', '.join(BENCH)})")
    if args.repeat is not None and args.repeat < 1:
        ap.error(f"--repeat {args.repeat}: at least 1")
    from .cli import main as testbed

    console = Console(width=160, record=True)
    out = Path(args.out)
    timings: Dict[str, float] = {}
    rc = 0
    for name in names:
        rundir = out / name
        if not args.tables_only:
            dur, warm, seeds = sizes[name]
            if args.duration:
                dur, warm = args.duration, min(warm, args.duration / 4)
            t0 = time.monotonic()
            code = testbed(["run", name, "--duration", f"{dur:g}", "--warmup", f"{warm:g}",
                            "--repeat", str(args.repeat or seeds), "--out", str(rundir),
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
