"""The ``make demo`` comparison of the modules against Reno and CUBIC.

1. Delay-based: reno, cubic, sync and mixreact, each alone (3 bulk flows)
   through one dumbbell: 20 Mbit/s, 40 ms base RTT, 100-packet drop-tail.
2. Small buffer: etcp, reno and cubic, one flow each: 50 Mbit/s, 100 ms,
   a 20-packet drop-tail buffer (``--no-small-buffer`` skips it).

Each part is a scenario run by the testbed's runner (one call of
``run_scenario`` per part, each algorithm on a freshly built topology,
offloads off), into a run directory under ``--out`` (``delay/``,
``small-buffer/``: ``docs/testbed-rundir.md``).  From those run
directories alone the demo prints a table per part (goodput, utilization,
queue, queuing delay, drops, retransmissions) and writes ``queue.png`` /
``queue-smallbuffer.png`` (bottleneck queue over time), ``summary.json``
and ``summary.csv`` into ``--out``.

    python -m synctcp_testbed.demo --out results/demo [--seconds 10]
"""

from __future__ import annotations

import argparse
import csv
import json
import sys
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable, Dict, List, Optional, Sequence

from synctcp.pipe import stdout_closed

from .analysis.rundir import Run, RunDirError, load_run
from .scenario import Scenario, ScenarioError, bulk_dumbbell

#: the measured link of both parts (the dumbbell's forward bottleneck)
LINK = "lr"


@dataclass(frozen=True)
class PathSpec:
    """A part's bottleneck: rate, base RTT and drop-tail buffer."""

    rate_mbit: float
    rtt_ms: float
    queue_pkts: int


#: the small-buffer part's path (Gu et al.'s setting, scaled to 50 Mbit/s)
SMALL_BUFFER = PathSpec(rate_mbit=50, rtt_ms=100, queue_pkts=20)


@dataclass
class Part:
    """One part of the demo: a scenario and where its results go."""

    label: str              # run directory under --out, and summary.csv's "part"
    path: PathSpec
    flows: int
    scenario: Scenario
    png: str
    title: str


def cc_list(text: str) -> List[str]:
    """``"reno, sync,"`` -> ``["reno", "sync"]``."""
    return [c.strip() for c in text.split(",") if c.strip()]


def parts(args: argparse.Namespace, where: str = "") -> List[Part]:
    """The demo's parts for the parsed options (ScenarioError if they cannot run)."""
    p1 = PathSpec(args.rate_mbit, args.rtt_ms, args.queue_pkts)
    out = [Part("delay", p1, args.flows,
                bulk_dumbbell("demo-delay", cc_list(args.cc), p1.rate_mbit, p1.rtt_ms,
                              p1.queue_pkts, args.flows, args.seconds),
                "queue.png",
                f"{where}{p1.rate_mbit:g} Mbit/s, {p1.rtt_ms:g} ms, {p1.queue_pkts}-packet "
                f"drop-tail, {args.flows} flows each, {args.seconds:g} s")]
    sb_ccs = [] if args.no_small_buffer else cc_list(args.small_buffer_cc)
    if sb_ccs:
        sb = SMALL_BUFFER
        out.append(Part("small-buffer", sb, 1,
                        bulk_dumbbell("demo-small-buffer", sb_ccs, sb.rate_mbit, sb.rtt_ms,
                                      sb.queue_pkts, 1, args.seconds),
                        "queue-smallbuffer.png",
                        f"{where}small buffer: {sb.rate_mbit:g} Mbit/s, {sb.rtt_ms:g} ms, "
                        f"{sb.queue_pkts}-packet drop-tail, 1 flow each, {args.seconds:g} s"))
    return out


def table_rows(run: Run) -> List[Dict[str, Any]]:
    """The demo table's rows: one per case of a run directory, from its summary.json."""
    rows = []
    for case in run.cases:
        s = case.summary
        b = s.bottleneck(LINK)
        if b is None:
            raise RunDirError(f"{run.path}: case {s.id} has no {LINK} bottleneck")
        rows.append({
            "cc": s.cc,
            "flows": len(s.flows),
            "goodput_mbit": round(s.goodput_mbit or 0.0, 2),
            "utilization": round(b.utilization or 0.0, 3),
            "queue_mean_pkts": round(b.mean_pkts or 0.0, 1),
            "qdelay_mean_ms": round(b.mean_delay_ms or 0.0, 1),
            "qdelay_p95_ms": round(b.p95_delay_ms or 0.0, 1),
            "drop_pct": round(b.drop_pct or 0.0, 2),
            "retransmits": s.retransmits or 0,
            "samples_hz": round(b.sample_hz or 0.0, 1),
        })
    return rows


def print_table(rows: List[Dict[str, Any]], title: str) -> None:
    from rich.console import Console
    from rich.table import Table

    t = Table(title=title)
    heads = [("cc", "algorithm"), ("goodput_mbit", "goodput Mbit/s"), ("utilization", "link util"),
             ("queue_mean_pkts", "queue mean pkts"), ("qdelay_mean_ms", "qdelay mean ms"),
             ("qdelay_p95_ms", "qdelay p95 ms"), ("drop_pct", "drops %"), ("retransmits", "retrans")]
    for key, h in heads:
        t.add_column(h, justify="right", no_wrap=key == "cc")
    for row in rows:
        t.add_row(*(str(row[k]) for k, _ in heads))
    Console(width=max(Console().width, 120)).print(t)     # whole columns in a log too


def plot_queues(run: Run, path: Path, p: PathSpec) -> Path:
    """One panel per case: the bottleneck queue from the traffic's start, the
    measured interval shaded."""
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure

    n = max(1, len(run.cases))
    fig = Figure(figsize=(9, 2.4 * n))
    FigureCanvasAgg(fig)
    axes = fig.subplots(n, 1, sharex=True, squeeze=False)
    for ax, case in zip(axes[:, 0], run.cases):
        s = case.summary
        samples = case.queue(LINK)
        t0 = s.raw.get("t_traffic") or (samples[0].t if samples else 0.0)
        if samples:
            ax.plot([q.t - t0 for q in samples], [q.qlen_pkts for q in samples], lw=0.8)
        if s.t_start is not None and s.t_end is not None:
            ax.axvspan(s.t_start - t0, s.t_end - t0, color="0.93", zorder=0)
        b = s.bottleneck(LINK)
        ax.axhline(p.queue_pkts, color="grey", ls=":", lw=0.8)
        ax.set_ylim(0, p.queue_pkts * 1.08)
        ax.set_ylabel("queue (pkts)")
        ax.set_title(f"{s.cc}: mean {b.mean_pkts if b and b.mean_pkts is not None else 0:.1f} pkts, "
                     f"goodput {s.goodput_mbit or 0:.1f} Mbit/s", fontsize=10)
    axes[-1, 0].set_xlabel("time since the flows' release (s); shaded: measured")
    fig.suptitle(f"Bottleneck queue: {p.rate_mbit:g} Mbit/s, {p.rtt_ms:g} ms RTT, "
                 f"{p.queue_pkts}-packet drop-tail", fontsize=11)
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    return path


def parser(description: str, out: Path, prog: str = "synctcp_testbed.demo") -> argparse.ArgumentParser:
    """The demo's options (shared with synctcp_mininet.demo)."""
    ap = argparse.ArgumentParser(prog=f"python3 -m {prog}", description=description.replace("``", ""),
                                 epilog="make demo passes DEMO_ARGS to these options, e.g. "
                                        "make demo DEMO_ARGS=\"--cc reno,sync --no-small-buffer\". "
                                        "Exit codes: 0 done, 1 a case failed, 2 bad input.")
    ap.add_argument("--out", type=Path, default=out, help=f"result directory (default: {out})")
    ap.add_argument("--cc", default="reno,cubic,sync,mixreact",
                    help="comma-separated algorithms of the first part, each alone through the "
                         "dumbbell (default: reno,cubic,sync,mixreact)")
    ap.add_argument("--flows", type=int, default=3, help="bulk flows per algorithm (default: 3)")
    ap.add_argument("--seconds", type=float, default=10,
                    help="measured seconds of traffic per algorithm, after a warm-up of a fifth "
                         "of it, at most 2 s (default: 10)")
    ap.add_argument("--rate-mbit", type=float, default=20, help="bottleneck rate of the first part (default: 20)")
    ap.add_argument("--rtt-ms", type=float, default=40, help="base RTT of the first part (default: 40)")
    ap.add_argument("--queue-pkts", type=int, default=100,
                    help="drop-tail queue of the first part, in packets (default: 100)")
    ap.add_argument("--small-buffer-cc", default="etcp,reno,cubic",
                    help="algorithms of the second part: one flow each, 50 Mbit/s, 100 ms, "
                         "20-packet buffer (default: etcp,reno,cubic)")
    ap.add_argument("--no-small-buffer", action="store_true", help="skip the second part")
    ap.add_argument("--no-report", action="store_true",
                    help="skip each part's report.html (the tables, queue plots and summaries "
                         "are written anyway)")
    ap.add_argument("--platform", choices=("native", "kvm", "uml", "tcg"),
                    help="where the cases run (default: SYNCTCP_PLATFORM, else native where "
                         "this host loads modules, else uml: docs/platform.md)")
    ap.add_argument("--jobs", type=int, metavar="N",
                    help="cases at once on uml (default: the number of cores)")
    # options of the runner's run_scenario, passed through as keywords
    ap.set_defaults(run_opts={})
    return ap


#: (option, lowest, highest) of the numeric options
RANGES = (("seconds", 1, 3600), ("flows", 1, 100), ("rate_mbit", 0.01, 100000),
          ("rtt_ms", 0, 20000), ("queue_pkts", 1, 100000))


def check_args(args: argparse.Namespace) -> Optional[str]:
    """Why the options cannot run, in one line; None if they can."""
    for name, lo, hi in RANGES:
        v = getattr(args, name)
        if not lo <= v <= hi:
            return f"--{name.replace('_', '-')} {v:g}: must be {lo:g}..{hi:g}"
    if not cc_list(args.cc):
        return "--cc: give at least one algorithm"
    if not args.no_small_buffer and not cc_list(args.small_buffer_cc):
        return "--small-buffer-cc: give at least one algorithm (or --no-small-buffer)"
    return None


def write_summaries(out: Path, done: List[Part], runs: List[Run], rows: List[List[Dict[str, Any]]],
                    args: argparse.Namespace) -> None:
    """summary.json and summary.csv of the demo (the tables' figures)."""
    meta = runs[0].meta
    part = {p.label: (p, run, r) for p, run, r in zip(done, runs, rows)}

    def section(label: str) -> Dict[str, Any]:
        if label not in part:
            return {"config": None, "rundir": None, "results": []}
        p, run, r = part[label]
        return {"config": {**p.path.__dict__, "flows": p.flows}, "rundir": run.path.name,
                "results": r}

    delay = section("delay")
    (out / "summary.json").write_text(json.dumps(
        {"config": delay["config"], "flows": args.flows, "seconds": args.seconds,
         "kernel": meta.get("kernel"), "platform": meta.get("platform"),
         "backend": meta.get("backend"), "rundir": delay["rundir"], "results": delay["results"],
         "small_buffer": section("small-buffer")}, indent=2))
    all_rows = [{"part": p.label, **row} for p, r in zip(done, rows) for row in r]
    with open(out / "summary.csv", "w", newline="") as fh:
        w = csv.DictWriter(fh, fieldnames=list(all_rows[0]))
        w.writeheader()
        w.writerows(all_rows)


def main(argv: Optional[Sequence[str]] = None, backend: str = "netns",
         prog: str = "synctcp_testbed.demo", out: Path = Path("results/demo"),
         description: Optional[str] = None) -> int:
    """The demo on ``backend`` (``synctcp_mininet.demo`` is this with ``mininet``)."""
    args = parser((description or __doc__ or "").split("\n")[0], out, prog).parse_args(argv)
    name = prog.rsplit(".", 1)[0].replace("_", "-") + " demo"
    bad = check_args(args)
    if bad is None:
        try:
            plan = parts(args, "Mininet: " if backend == "mininet" else "")
        except ScenarioError as exc:
            bad = str(exc)
    if bad is None:
        from .platform.executor import check_jobs
        from .platform.choose import PlatformError, choose
        try:
            check_jobs(choose(args.platform), args.jobs)
        except PlatformError as exc:
            bad = str(exc)
        args.run_opts = {**args.run_opts, **{k: v for k, v in (("platform", args.platform),
                                                                ("jobs", args.jobs)) if v}}
    if bad is not None:
        print(f"{name}: {bad}", file=sys.stderr)
        return 2

    from .analysis.report import write_report
    from .analysis.tables import write_summary_csv
    from .case.errors import RunError
    from .platform.run import run_scenario
    from .network.topology import TopologyError

    log: Callable[[str], None] = lambda m: print(m, file=sys.stderr, flush=True)
    started = time.monotonic()
    outdir = args.out.absolute()
    outdir.mkdir(parents=True, exist_ok=True)
    command = [f"python3 -m {prog}", *(sys.argv[1:] if argv is None else argv)]
    runs: List[Run] = []
    rows: List[List[Dict[str, Any]]] = []
    rc = 0
    try:
        for part in plan:
            try:
                rundir = run_scenario(part.scenario, out=outdir / part.label, log=log,
                                      command=command, backend=backend, **args.run_opts)
                run = load_run(rundir)
                part_rows = table_rows(run)
                write_summary_csv(run)
                if not args.no_report:
                    write_report(run)
            except (RunError, TopologyError, RunDirError) as exc:
                print(f"{name}: {part.label}: {exc}", file=sys.stderr)
                rc = 1
                break
            runs.append(run)
            rows.append(part_rows)
            print_table(part_rows, part.title)
        if not runs:
            return rc
        # what the parts that ran measured, also when a later one failed
        done = plan[:len(runs)]
        pngs = [plot_queues(run, outdir / p.png, p.path) for p, run in zip(done, runs)]
        write_summaries(outdir, done, runs, rows, args)
        print(f"queue plots: {', '.join(str(p) for p in pngs)}; run directories: "
              f"{', '.join(str(r.path) for r in runs)}   ({time.monotonic() - started:.0f} s)")
        sys.stdout.flush()          # a closed pipe shows here, not at exit
    except KeyboardInterrupt:
        return 130
    except BrokenPipeError:
        return stdout_closed()
    return rc

if __name__ == "__main__":
    sys.exit(main())
