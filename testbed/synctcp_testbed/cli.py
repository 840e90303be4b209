"""``synctcp-testbed``: run the seeds' scenarios and compare the algorithms.

    synctcp-testbed list                         the preset scenarios
    synctcp-testbed show weigle-ftp              a scenario, resolved, and its cases
    synctcp-testbed run weigle-ftp --duration 60 --cc reno,cubic,sync
    synctcp-testbed run my.toml --aqm droptail,red-ecn --out results/my
    synctcp-testbed run gu-smallbuffer --backend mininet   the same cases on Mininet
    synctcp-testbed report RUNDIR                regenerate plots and report.html
    synctcp-testbed ledger RUNDIR...             the seeds' claims and verdicts: docs/results.md
    synctcp-testbed hosts check hosts.toml       real hosts over SSH: what each lacks, one line each

``run`` runs the cases on a platform (``--platform``, docs/platform.md):
this host's kernel where it can load the modules (root), else User-Mode
Linux on simulated time, several cases at once (``--jobs``).
Exit codes: 0 done, 1 a case failed, 2 bad input.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import textwrap
import time
from pathlib import Path
from typing import Any, Dict, List, Optional, Sequence

from synctcp.pipe import stdout_closed

from .analysis.rundir import RunDirError
from .network.qdisc import AQMS
from .remote.inventory import InventoryError
from .scenario import VARIANTS, ScenarioError, load, presets, updated

RESULTS = Path(os.environ.get("SYNCTCP_RESULTS", "results"))


def _csv(text: Optional[str]) -> Optional[List[str]]:
    return [x for x in text.split(",") if x] if text else None


def cmd_list(args: argparse.Namespace) -> int:
    width = max((len(n) for n in presets()), default=0)
    for name in presets():
        sc = load(name)
        print(f"{name:{width}} {len(sc.cases()):3} cases  {sc.description}")
    return 0


def cmd_show(args: argparse.Namespace) -> int:
    sc = load(args.scenario)
    if args.json:
        print(json.dumps(sc.as_dict(), indent=1))
        return 0
    print(f"{sc.name}: {sc.description}\nsource: {sc.source}")
    t = sc.topology
    print(f"topology: {t.kind}, {t.rate_mbit:g} Mbit/s, {len(t.rtts_ms)} pairs, "
          f"RTTs {min(t.rtts_ms):g}-{max(t.rtts_ms):g} ms (median {sc.median_rtt_ms():g}), "
          f"queue {sc.queue_pkts()} pkts (BDP {sc.bdp_pkts():.1f}), MTU {t.mtu}")
    print(f"duration {sc.duration_s:g} s, warm-up {sc.warmup_s:g} s, seed {sc.seed}"
          + (f", {sc.repeat} repetitions (seeds {sc.seed}-{sc.seed + sc.repeat - 1})"
             if sc.repeat > 1 else ""))
    for c in sc.cases():
        print(f"  {c.id}")
    return 0


def cmd_ledger(args: argparse.Namespace) -> int:
    from .analysis.ledger import main as ledger_main

    return ledger_main([*args.rundirs, "--out", args.out,
                        *(["--figures", args.figures] if args.figures else [])])


def cmd_report(args: argparse.Namespace) -> int:
    from .analysis.report import main as report_main

    return report_main([args.rundir])


RESUME_CLASHES = ("cc", "aqm", "duration", "warmup", "seed", "repeat", "variant", "out")


def _check_executor(args: argparse.Namespace) -> None:
    """One line on what does not go together among --jobs, --dask, --slurm and --shared-dir."""
    slurm_opts = [f"--slurm-{k.replace('_', '-')}" for k in
                  ("partition", "cores", "memory", "walltime", "jobs", "config")
                  if getattr(args, f"slurm_{k}") is not None]
    if args.dask and args.slurm:
        raise ScenarioError("--dask and --slurm: one cluster at a time")
    if args.jobs is not None and (args.dask or args.slurm):
        raise ScenarioError(f"--jobs and --{'dask' if args.dask else 'slurm'}: the cluster's "
                            f"workers decide how many cases run at once")
    if slurm_opts and not args.slurm:
        raise ScenarioError(f"{slurm_opts[0]} without --slurm")
    if args.shared_dir is not None:
        if not (args.dask or args.slurm):
            raise ScenarioError("--shared-dir is for --dask or --slurm workers")
        if not Path(args.shared_dir).is_dir():
            raise ScenarioError(f"--shared-dir {args.shared_dir}: not a directory")


def _pool(args: argparse.Namespace, log: Any) -> Any:
    """The cluster the cases run on (a context manager), or a null context for local jobs."""
    import contextlib

    if not (args.dask or args.slurm):
        return contextlib.nullcontext(None)
    from .platform.cluster import DaskPool, slurm_options

    shared = Path(args.shared_dir).absolute() if args.shared_dir else None
    if args.dask:
        return DaskPool(address=args.dask, shared_dir=shared, log=log)
    opts = slurm_options(args.slurm_config, partition=args.slurm_partition,
                         cores=args.slurm_cores, memory=args.slurm_memory,
                         walltime=args.slurm_walltime, jobs=args.slurm_jobs)
    return DaskPool(slurm=opts, shared_dir=shared, log=log)


def cmd_run(args: argparse.Namespace, argv: Sequence[str]) -> int:
    from .platform.choose import PlatformError

    _check_executor(args)
    if args.resume is not None:
        if args.scenario is not None:
            raise ScenarioError("run: a scenario or --resume RUNDIR, not both")
        given = [f"--{k}" for k in RESUME_CLASHES if getattr(args, k) not in (None, False)]
        if given:
            raise ScenarioError(f"--resume runs the cases of RUNDIR/plan.json as they were "
                                f"planned: {', '.join(given)} cannot change them")
        return _resume(args, argv)
    if args.scenario is None:
        raise ScenarioError("run: a scenario (preset name or .toml path), or --resume RUNDIR")
    if args.hosts is not None:
        _check_hosts_args(args)
    sc = load(args.scenario)
    if args.duration is not None:
        warm = args.warmup if args.warmup is not None else min(sc.warmup_s, args.duration / 5)
        sc = updated(sc, "command line", duration_s=args.duration, warmup_s=warm)
    elif args.warmup is not None:
        sc = updated(sc, "command line", warmup_s=args.warmup)
    if args.seed is not None:
        sc = updated(sc, "command line", seed=args.seed)
    if args.repeat is not None:
        sc = updated(sc, "command line", repeat=args.repeat)
    if args.variant is not None:
        sc = updated(sc, "command line", variant=args.variant)
    sc.validate()
    if sc.topology.kind == "path" and args.hosts is None:
        raise ScenarioError(f"{args.scenario}: topology.kind path is the real path between "
                            f"hosts: run it with --hosts HOSTS.toml (docs/real-hosts.md)")
    ccs, aqms = _csv(args.cc), _csv(args.aqm)
    cases = sc.cases(ccs, aqms)
    if not cases:
        raise ScenarioError("no case to run")
    out = Path(args.out or RESULTS / f"{sc.name}-{time.strftime('%Y%m%d-%H%M%S')}").absolute()
    try:
        return _run(args, argv, sc, out, ccs, aqms, len(cases), resume=False)
    except PlatformError as exc:
        raise ScenarioError(str(exc)) from exc


def _resume(args: argparse.Namespace, argv: Sequence[str]) -> int:
    """``run --resume RUNDIR``: the cases of RUNDIR's plan that have no result yet."""
    from .platform.executor import load_plan
    from .platform.choose import PlatformError
    from .scenario import from_dict

    out = Path(args.resume).absolute()
    if not out.is_dir():
        raise ScenarioError(f"--resume {args.resume}: no such run directory")
    plan = load_plan(out)
    try:
        meta = json.loads((out / "meta.json").read_text())
    except (OSError, json.JSONDecodeError) as exc:
        raise ScenarioError(f"--resume {out}/meta.json: {exc}") from exc
    sc = from_dict(plan["scenario"], where=f"{out}/plan.json")
    ccs, aqms = plan.get("ccs"), plan.get("aqms")
    if meta.get("platform") == "hosts" or args.hosts is not None:
        if args.hosts is None:
            raise ScenarioError(f"--resume {args.resume}: a run on hosts; give its inventory "
                                f"again (--hosts HOSTS.toml)")
        if meta.get("platform") != "hosts":
            raise ScenarioError(f"--resume {args.resume}: a run on {meta.get('platform')}, "
                                f"not on hosts: no --hosts")
        _check_hosts_args(args)
        return _run_hosts(args, argv, sc, out, ccs, aqms, len(sc.cases(ccs, aqms)), resume=True)
    if args.platform is None:
        args.platform = meta.get("platform")
    args.backend = meta.get("backend", args.backend)
    args.capture = args.capture or bool(meta.get("capture"))
    try:
        return _run(args, argv, sc, out, ccs, aqms, len(sc.cases(ccs, aqms)), resume=True)
    except PlatformError as exc:
        raise ScenarioError(str(exc)) from exc


def _check_hosts_args(args: argparse.Namespace) -> None:
    """One line on what --hosts does not go with: the platform's own options."""
    given = [opt for opt, on in (("--platform", args.platform is not None),
                                 ("--jobs", args.jobs is not None),
                                 ("--dask", bool(args.dask)), ("--slurm", bool(args.slurm)),
                                 ("--capture", bool(args.capture)),
                                 ("--backend mininet", args.backend == "mininet")) if on]
    if given:
        raise ScenarioError(f"--hosts runs the cases on the inventory's hosts, one at a time: "
                            f"not with {', '.join(given)}")


def _run_hosts(args: argparse.Namespace, argv: Sequence[str], sc: Any, out: Path,
               ccs: Optional[List[str]], aqms: Optional[List[str]], ncases: int,
               resume: bool) -> int:
    """``run --hosts``: the cases on real hosts (:mod:`.remote.run`)."""
    from rich.console import Console
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

    from .case.errors import RunError
    from .remote.inventory import InventoryError, load as load_inventory
    from .remote.run import run_on_hosts

    try:
        inv = load_inventory(args.hosts)
    except InventoryError as exc:
        raise ScenarioError(str(exc)) from None
    t0 = time.monotonic()
    console = Console(stderr=True)
    rc = 0
    with Progress(TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(),
                  TimeElapsedColumn(), console=console, transient=True) as bar:
        task = bar.add_task(f"{sc.name}: cases on {len(inv.hosts)} hosts", total=ncases)
        try:
            run_on_hosts(sc, out, inv, ccs, aqms, command=["synctcp-testbed", *argv],
                         log=console.log, progress=lambda: bar.advance(task), resume=resume)
        except RunError as exc:
            if not (out / "meta.json").exists():        # nothing ran: a usage-class error
                raise ScenarioError(str(exc)) from None
            console.log(f"[red]failed:[/red] {exc}")
            rc = 1
    if (out / "summary.json").exists() and json.loads((out / "summary.json").read_text())["cases"]:
        _finish(out, args.no_report, t0)
    return rc


def _run(args: argparse.Namespace, argv: Sequence[str], sc: Any, out: Path,
         ccs: Optional[List[str]], aqms: Optional[List[str]], ncases: int, resume: bool) -> int:
    from .platform.executor import check_jobs
    from .platform.choose import choose

    if args.hosts is not None:
        return _run_hosts(args, argv, sc, out, ccs, aqms, ncases, resume)

    plat = choose(args.platform)
    check_jobs(plat, args.jobs)
    check_names(sc, ccs, aqms, plat.here)
    if (args.dask or args.slurm) and (plat.here or plat.name != "uml"):
        raise ScenarioError(f"--{'dask' if args.dask else 'slurm'}: a cluster runs cases on the "
                            f"uml platform (simulated time) only, not on {plat.name}")
    t0 = time.monotonic()
    args.capture = args.capture or sc.capture
    from rich.console import Console

    from .case.errors import RunError
    from .platform.run import run_scenario
    from .network.topology import TopologyError

    console = Console(stderr=True)

    def log(msg: str) -> None:
        console.log(msg)

    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

    rc = 0
    with _pool(args, log) as pool:
        size = f" on {pool.describe()}" if pool is not None else ""
        # a bar over the cases (they may run several at once); the log above it
        with Progress(TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(),
                      TimeElapsedColumn(), console=console, transient=True) as bar:
            task = bar.add_task(f"{sc.name}: cases{size}", total=ncases)
            try:
                run_scenario(sc, out, ccs, aqms, command=["synctcp-testbed", *argv], log=log,
                             progress=lambda: bar.advance(task), capture=args.capture,
                             backend=args.backend, platform=args.platform, jobs=args.jobs,
                             pool=pool, resume=resume)
            except (RunError, TopologyError) as exc:
                console.log(f"[red]failed:[/red] {exc}")
                rc = 1
    if (out / "summary.json").exists() and json.loads((out / "summary.json").read_text())["cases"]:
        _finish(out, args.no_report, t0)
    return rc


def check_names(sc: Any, ccs: Optional[List[str]], aqms: Optional[List[str]], here: bool) -> None:
    """ScenarioError naming every algorithm of the run no case could run, before a
    kernel is built, a cluster started or a case run."""
    from .case.errors import RunError
    from .case.kernel import check_ccs
    from .plan.flows import case_ccs

    try:
        check_ccs(sorted({cc for c in sc.cases(ccs, aqms) for cc in case_ccs(c)}), here)
    except RunError as exc:
        raise ScenarioError(str(exc)) from None


def _finish(out: Path, no_report: bool, t0: float) -> None:
    """summary.csv, plots and report.html of a run directory, and its table."""
    from .analysis.report import write_report
    from .analysis.tables import write_summary_csv

    write_summary_csv(out)
    if not no_report:
        write_report(out)
    print_summary(out)
    if not no_report:
        print(f"{out}/report.html  ({time.monotonic() - t0:.0f} s)")


def print_summary(rundir: Path) -> None:
    """The run's summary table with ratios to Reno and CUBIC of the same run."""
    from rich.console import Console
    from rich.table import Table

    from .analysis.stats import ratio_to

    summary = json.loads((rundir / "summary.json").read_text())
    if summary.get("repeat", 1) > 1:
        print_groups(rundir, summary)
        return
    from .analysis.oneway import pm, warnings

    cases = summary["cases"]
    # runs on hosts (docs/real-hosts.md): the senders' one-way figures with their bound
    oneway = any(c.get("oneway") for c in cases)
    table = Table(title=f"{summary['scenario']}: {rundir}")
    cols = ["case", "link", "util %", "drop %", "mark %", "avg queue", "goodput Mbit/s",
            "retrans", "goodput/reno", "queue/reno", "goodput/cubic", "queue/cubic"]
    for col in cols + (["qdelay (OTT)", "OTT"] if oneway else []):
        table.add_column(col, justify="left" if col in ("case", "link") else "right")
    for c in cases:
        # a case on a real path measures no queue of its own: one row without a link
        for b in c["bottlenecks"] or [None]:
            row = [c["id"], b["link"] if b else "-"]
            row += [f"{100 * b['utilization']:.1f}", f"{b['drop_pct']:.2f}",
                    f"{b['mark_pct']:.2f}", f"{b['mean_pkts']:.1f}"] if b else ["-"] * 4
            row += [f"{c['goodput_mbit']:.2f}", str(c["retransmits"])]
            for ref in ("reno", "cubic"):
                row += [_ratio(ratio_to(cases, c, ref, "goodput_mbit")),
                        _ratio(ratio_to(cases, c, ref, f"{b['link']}.mean_pkts") if b else None)]
            if oneway:
                o = c.get("oneway") or {}
                row += [pm(o.get("qdelay_ms"), o.get("qdelay_bound_ms")),
                        pm(o.get("ott_ms"), o.get("ott_bound_ms"))]
            table.add_row(*row)
    console = Console(width=max(Console().width, 190 if oneway else 150))
    console.print(table)
    for line in warnings(cases):
        console.print(f"[yellow]{line}[/yellow]")


def print_groups(rundir: Path, summary: Dict[str, Any]) -> None:
    """Each case's mean and 95% interval over its seeds, with ratios to Reno and CUBIC."""
    from rich.console import Console
    from rich.table import Table

    from .analysis.stats import text as cell

    table = Table(title=f"{summary['scenario']}: {rundir} (mean \u00b1 95% CI over "
                        f"{summary['repeat']} seeds)")
    for col in ("case", "n", "link", "util %", "drop %", "avg queue", "goodput Mbit/s",
                "goodput/reno", "queue/reno", "goodput/cubic", "queue/cubic"):
        table.add_column(col, justify="left" if col in ("case", "link") else "right")
    for g in summary.get("groups", []):
        m = g["metrics"]
        links = sorted({k.split(".", 1)[0] for k in m if k.endswith(".utilization")})
        for link in links or [""]:
            row = [g["group"], str(g["n"]), link, cell(m.get(f"{link}.utilization"), 1, 100),
                   cell(m.get(f"{link}.drop_pct")), cell(m.get(f"{link}.mean_pkts"), 1),
                   cell(m.get("goodput_mbit"))]
            for ref in ("reno", "cubic"):
                r = g["ratios"].get(ref, {})
                row += [cell(r.get("goodput_mbit")), cell(r.get(f"{link}.mean_pkts"))]
            table.add_row(*row)
    Console(width=max(Console().width, 170)).print(table)


def _ratio(r: Optional[float]) -> str:
    """A ratio to a reference in a table cell: two decimals, "-" for none."""
    return "-" if r is None else f"{r:.2f}"


#: what ``--help`` says about where ``run`` runs (``synctcp-mininet`` says it too)
WHERE_RUN_RUNS = ("runs the cases on a platform (--platform): this host's own kernel (native) "
                  "where it can load the modules, else User-Mode Linux on simulated time "
                  "(uml: figures independent of the host's speed and load, --jobs cases at "
                  "once); kvm and tcg run them in a virtme-ng VM booting the Debian kernel, "
                  "in real time.")
RUN_EXIT_CODES = "Exit codes: 0 done, 1 a case failed, 2 bad input."


def _text(*paragraphs: str) -> str:
    """Paragraphs filled to 79 columns, for a RawDescriptionHelpFormatter."""
    return "\n\n".join(textwrap.fill(p, 79) for p in paragraphs)


def build_parser(prog: str = "synctcp-testbed", backend: Optional[str] = None,
                 description: Optional[str] = None) -> argparse.ArgumentParser:
    """The command's parser; ``synctcp-mininet`` is this with ``backend="mininet"``."""
    from .network.backends import names as backend_names
    from .platform.choose import PLATFORMS

    examples = "\n".join(f"  {prog} {line}" for line in (
        "list                         the preset scenarios",
        "show weigle-ftp              a scenario, resolved, and its cases",
        "run weigle-ftp --duration 60 --cc reno,cubic,sync",
        "run my.toml --aqm droptail,red-ecn --out results/my",
        *(["run gu-smallbuffer --backend mininet   the same cases on Mininet"]
          if backend is None else []),
        "report RUNDIR                regenerate plots and report.html",
        *(["hosts check hosts.toml       real hosts over SSH: one line per problem"]
          if backend is None else [])))
    p = argparse.ArgumentParser(
        prog=prog, formatter_class=argparse.RawDescriptionHelpFormatter,
        description=_text(description or "Run the testbed's scenarios (the seed papers' "
                          "experiments as TOML files) with several congestion-control "
                          "algorithms and queue disciplines, and compare them."),
        epilog=f"examples:\n{examples}\n\n" + _text(f"'run' {WHERE_RUN_RUNS}", RUN_EXIT_CODES))
    sub = p.add_subparsers(dest="command", required=True, metavar="COMMAND", title="commands",
                           help=f"'{prog} COMMAND --help' shows its options")
    sub.add_parser("list", help="preset scenarios",
                   description="The preset scenarios: name, number of cases, description.")
    s = sub.add_parser("show", help="a scenario and its cases",
                       description="A scenario, resolved (defaults filled in), and its cases.")
    s.add_argument("scenario", help="preset name or .toml path")
    s.add_argument("--json", action="store_true", help="the resolved scenario as JSON")
    s = sub.add_parser("run", help="run a scenario's cases and write a run directory",
                       formatter_class=argparse.RawDescriptionHelpFormatter,
                       description=_text("Run every case of a scenario (algorithm x queue "
                                         "discipline x sweep point), each on a freshly built "
                                         "topology, and write a run directory with metrics, "
                                         "summary.csv, plots and report.html.",
                                         f"It {WHERE_RUN_RUNS}"),
                       epilog=RUN_EXIT_CODES)
    s.add_argument("scenario", nargs="?", help="preset name or .toml path")
    s.add_argument("--resume", metavar="RUNDIR",
                   help="run only the cases of RUNDIR (an interrupted run) that have no "
                        "result yet, then its summary and report as usual")
    s.add_argument("--cc", metavar="CC[,CC...]",
                   help="comma-separated congestion-control algorithms, e.g. reno,cubic,sync "
                        "(default: the scenario's)")
    s.add_argument("--aqm", metavar="AQM[,AQM...]",
                   help=f"comma-separated queue disciplines of the bottleneck, of: "
                        f"{', '.join(AQMS)} (default: the scenario's)")
    s.add_argument("--duration", type=float, metavar="SEC",
                   help="seconds of traffic per case (default: the scenario's duration_s)")
    s.add_argument("--warmup", type=float, metavar="SEC",
                   help="seconds excluded from the metrics (default: the scenario's warmup_s; "
                        "with --duration at most a fifth of it)")
    s.add_argument("--seed", type=int,
                   help="seed of the cases' random elements: the kernel's random numbers, "
                        "the flows' start jitter, the HTTP arrivals and sizes; the same in "
                        "every algorithm's case (default: the scenario's seed)")
    s.add_argument("--repeat", type=int, metavar="N",
                   help="run each case N times, with seeds SEED .. SEED+N-1; the summary "
                        "gives means and 95%% confidence intervals (default: the "
                        "scenario's repeat, else 1)")
    s.add_argument("--variant", choices=VARIANTS,
                   help="the version of sync and mixreact: best, or paper for the "
                        "dissertation's algorithms (default: the scenario's, else best)")
    s.add_argument("--out", metavar="DIR",
                   help="run directory (default: results/NAME-TIMESTAMP)")
    s.add_argument("--no-report", action="store_true", help="skip plots and report.html")
    s.add_argument("--capture", action="store_true",
                   help="tcpdump the first flow's headers at its sender (CASE/f01.pcap)")
    default = backend or "netns"
    s.add_argument("--backend", choices=backend_names(), default=default,
                   help=f"who builds the topology: netns (ip netns) or mininet "
                        f"(docs/mininet.md) (default: {default})")
    s.add_argument("--platform", choices=PLATFORMS,
                   help="where the cases run: native, uml, kvm or tcg (default: "
                        "SYNCTCP_PLATFORM, else native where this host loads modules, else uml)")
    s.add_argument("--jobs", type=int, metavar="N",
                   help="cases at once, each in its own UML instance (uml only; default: "
                        "the number of cores)")
    s.add_argument("--hosts", metavar="HOSTS.toml",
                   help="run the cases between the hosts of this inventory over SSH, one "
                        "after the other, instead of on a platform (docs/real-hosts.md)")
    g = s.add_argument_group("clusters (uml only; docs/scaling.md)")
    g.add_argument("--dask", metavar="ADDRESS",
                   help="run each case as a task of the dask.distributed scheduler at "
                        "ADDRESS (e.g. tcp://10.0.0.1:8786)")
    g.add_argument("--slurm", action="store_true",
                   help="start Dask workers as Slurm jobs (dask-jobqueue) and run the cases "
                        "on them")
    g.add_argument("--slurm-partition", metavar="NAME", help="Slurm partition (default: the "
                   "cluster's default)")
    g.add_argument("--slurm-cores", type=int, metavar="N",
                   help="cores per Slurm job: cases at once on it (default 1)")
    g.add_argument("--slurm-memory", metavar="SIZE", help="memory per Slurm job (default 3GB)")
    g.add_argument("--slurm-walltime", metavar="HH:MM:SS",
                   help="wall-time limit of each Slurm job (default 01:00:00)")
    g.add_argument("--slurm-jobs", type=int, metavar="N",
                   help="Slurm jobs (Dask workers) to start (default 1)")
    g.add_argument("--slurm-config", metavar="FILE",
                   help="TOML file with partition, cores, memory, walltime, jobs, interface, "
                        "start_timeout_s, job_extra_directives; options override it")
    g.add_argument("--shared-dir", metavar="DIR",
                   help="a directory the workers and this host both see: cases are written "
                        "there instead of being sent back")
    s = sub.add_parser("ledger", help="the seeds' claims against run directories: docs/results.md",
                       description="Write docs/results.md: each claim of the seed papers with "
                       "the paper's figures, ours from the run directories (mean and 95% "
                       "confidence interval over their seeds), the checks and a verdict.")
    s.add_argument("rundirs", nargs="+", metavar="RUNDIR", help="run directories written by run")
    s.add_argument("--out", default="docs/results.md", help="the file (default: docs/results.md)")
    s.add_argument("--figures", metavar="DIR",
                   help="directory of its plots (default: results/ next to --out)")
    s = sub.add_parser("report", help="regenerate plots, summary.csv and report.html",
                       description="Regenerate summary.csv, the plots and report.html of a "
                       "run directory.")
    s.add_argument("rundir", help="a run directory written by run")
    if backend is None:
        add_hosts_parser(sub)
    return p


def add_hosts_parser(sub: "argparse._SubParsersAction[argparse.ArgumentParser]") -> None:
    """``hosts check``: real hosts, not a backend's topology (synctcp-testbed only)."""
    s = sub.add_parser("hosts", help="real hosts over SSH: check an inventory",
                       description="Real hosts (issue 30): the hosts of an inventory, reached "
                       "over SSH (OpenSSH, BatchMode) or on this machine (address = \"local\").")
    hs = s.add_subparsers(dest="hosts_command", required=True, metavar="SUBCOMMAND",
                          help="check: reach and probe every host")
    c = hs.add_parser("check", help="reach and probe every host before anything runs",
                      description="Connect to every host of HOSTS.toml and probe it: kernel "
                      "and headers, the modules (or DKMS to build them), the algorithms "
                      "selectable, tcp_timestamps, free ports, tcpdump, the emulator's tc and "
                      "forwarding; print each sender/receiver pair's clock bound (chronyc "
                      "tracking). Exit 0 when every host is ready, 2 with one line per "
                      "problem naming the host and the fix.")
    c.add_argument("hosts", metavar="HOSTS.toml", help="the inventory (TOML)")
    c.add_argument("--cc", metavar="CC[,CC...]",
                   help="the algorithms the senders must be able to select (default: sync)")
    c.add_argument("--flows", type=int, default=1, metavar="N",
                   help="flows per pair: their ports must be free (default 1)")
    c.add_argument("--capture", action="store_true",
                   help="the ends must be able to run tcpdump")


def cmd_hosts(args: argparse.Namespace) -> int:
    """``hosts check HOSTS.toml``: exit 0 when every host can run the cases, 2 with one line
    per problem (an unreachable host, a missing module, ...) on stderr."""
    from .remote.check import check
    from .remote.inventory import load as load_inventory

    inv = load_inventory(args.hosts)
    ccs = set(_csv(args.cc) or ["sync"])
    if args.flows < 1:
        raise ScenarioError("hosts check: --flows must be at least 1")
    res = check(inv, ccs, flows=args.flows, capture=args.capture)
    for line in res.info:
        print(line)
    for line in res.problems:
        print(line, file=sys.stderr)
    if res.problems:
        return 2
    print(f"{len(inv.hosts)} host{'s' if len(inv.hosts) > 1 else ''} ready "
          f"({', '.join(h.name for h in inv.hosts)})")
    return 0


def main(argv: Optional[Sequence[str]] = None, prog: str = "synctcp-testbed") -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    args = build_parser().parse_args(argv)
    commands = {"list": cmd_list, "show": cmd_show, "report": cmd_report, "ledger": cmd_ledger,
                "hosts": cmd_hosts}
    try:
        rc = commands[args.command](args) if args.command in commands else cmd_run(args, argv)
        sys.stdout.flush()          # a closed pipe shows here, not at exit
        return rc
    except (ScenarioError, RunDirError, InventoryError) as exc:
        print(f"{prog}: {exc}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        return 130
    except BrokenPipeError:
        return stdout_closed()


if __name__ == "__main__":
    sys.exit(main())
