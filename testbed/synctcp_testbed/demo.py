"""The ``make demo`` comparison of the modules against Reno and CUBIC.

1. Delay-based: reno, cubic, sync and mixreact, each alone (3 bulk flows)
   through one dumbbell: 20 Mbit/s, 40 ms base RTT, 100-packet drop-tail.
2. Small buffer: etcp, reno and cubic, one flow each: 50 Mbit/s, 100 ms,
   a 20-packet drop-tail buffer (``--no-small-buffer`` skips it).

Offloads are off on every interface.  Prints a table per part (goodput,
utilization, queue, queuing delay, drops, retransmissions) and writes
``queue.png`` / ``queue-smallbuffer.png`` (bottleneck queue over time),
``summary.json`` and ``summary.csv`` plus the raw samples into ``--out``.

    python -m synctcp_testbed.demo --out results/demo [--seconds 10]
"""

from __future__ import annotations

import argparse
import csv
import json
import subprocess
import sys
import time
from pathlib import Path
from typing import Dict, List, Optional, Sequence

from .dumbbell import Dumbbell, DumbbellConfig, RunResult, TestbedError
from .metrics import read_samples

ROOT = Path(__file__).resolve().parents[2]
MODULE_OF = {"sync": "tcp_sync", "mixreact": "tcp_mixreact", "etcp": "tcp_etcp"}


def ensure_modules(ccs: Sequence[str]) -> None:
    """insmod the modules of ``ccs`` from kmod/ unless the kernel has them."""
    available = Path("/proc/sys/net/ipv4/tcp_available_congestion_control").read_text().split()
    for cc in ccs:
        if cc in available:
            continue
        mod = MODULE_OF.get(cc)
        if mod is None:
            subprocess.run(["modprobe", f"tcp_{cc}"], check=False, capture_output=True)
        else:
            ko = ROOT / "kmod" / f"{mod}.ko"
            if not ko.exists():
                raise TestbedError(f"{ko} is not built (run make)")
            res = subprocess.run(["insmod", str(ko)], capture_output=True, text=True)
            if res.returncode != 0:
                raise TestbedError(f"insmod {ko}: {res.stderr.strip()}")
        available = Path("/proc/sys/net/ipv4/tcp_available_congestion_control").read_text().split()
        if cc not in available:
            raise TestbedError(f"congestion control {cc} is not available in this kernel")


def table_rows(results: List[RunResult], rate_mbit: float) -> List[Dict[str, object]]:
    rows = []
    for r in results:
        rows.append({
            "cc": r.cc,
            "flows": len(r.flows),
            "goodput_mbit": round(r.goodput_mbit, 2),
            "utilization": round(r.queue.utilization, 3),
            "queue_mean_pkts": round(r.queue.mean_pkts, 1),
            "qdelay_mean_ms": round(r.queue.mean_delay_ms, 1),
            "qdelay_p95_ms": round(r.queue.p95_delay_ms, 1),
            "drop_pct": round(r.queue.drop_pct, 2),
            "retransmits": r.retransmits,
            "samples_hz": round(r.queue.sample_hz, 1),
        })
    return rows


def print_table(rows: List[Dict[str, object]], title: str) -> None:
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
    Console().print(t)


def plot_queues(results: List[RunResult], out: Path, cfg: DumbbellConfig,
                name: str = "queue.png") -> Path:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, axes = plt.subplots(len(results), 1, figsize=(9, 2.4 * len(results)), sharex=True,
                             squeeze=False)
    for ax, r in zip(axes[:, 0], results):
        samples = read_samples(r.samples_path or "")
        if samples:
            t0 = samples[0]["t"]
            ax.plot([s["t"] - t0 for s in samples], [s["qlen_pkts"] for s in samples], lw=0.8)
        ax.axhline(cfg.queue_pkts, color="grey", ls=":", lw=0.8)
        ax.set_ylim(0, cfg.queue_pkts * 1.08)
        ax.set_ylabel("queue (pkts)")
        ax.set_title(f"{r.cc}: mean {r.queue.mean_pkts:.1f} pkts, goodput {r.goodput_mbit:.1f} Mbit/s",
                     fontsize=10)
    axes[-1, 0].set_xlabel("time (s)")
    fig.suptitle(f"Bottleneck queue: {cfg.rate_mbit:g} Mbit/s, {cfg.rtt_ms:g} ms RTT, "
                 f"{cfg.queue_pkts}-packet drop-tail", fontsize=11)
    fig.tight_layout()
    path = out / name
    fig.savefig(path, dpi=110)
    plt.close(fig)
    return path


def run_part(cfg: DumbbellConfig, ccs: List[str], flows: int, seconds: float,
             out: Path, label: str) -> List[RunResult]:
    """Each algorithm of ``ccs`` alone through one dumbbell, with progress."""
    from rich.progress import BarColumn, Progress, TextColumn, TimeElapsedColumn

    results: List[RunResult] = []
    with Dumbbell(cfg) as db, Progress(TextColumn("{task.description}"), BarColumn(),
                                       TimeElapsedColumn()) as prog:
        task = prog.add_task(label, total=len(ccs))
        for cc in ccs:
            prog.update(task, description=f"{label}: {cc}, {flows} flow(s), {seconds:g} s")
            results.append(db.run_bulk(cc, flows=flows, seconds=seconds, outdir=out))
            prog.advance(task)
    return results


def parser(description: str, out: Path, prog: str = "synctcp_testbed.demo") -> argparse.ArgumentParser:
    """The demo's options (shared with synctcp_mininet.demo)."""
    ap = argparse.ArgumentParser(prog=f"python3 -m {prog}", description=description.replace("``", ""),
                                 epilog="make demo passes DEMO_ARGS to these options, e.g. "
                                        "make demo DEMO_ARGS=\"--cc reno,sync --no-small-buffer\"")
    ap.add_argument("--out", type=Path, default=out, help=f"result directory (default: {out})")
    ap.add_argument("--cc", default="reno,cubic,sync,mixreact",
                    help="comma-separated algorithms of the first part, each alone through the "
                         "dumbbell (default: reno,cubic,sync,mixreact)")
    ap.add_argument("--flows", type=int, default=3, help="bulk flows per algorithm (default: 3)")
    ap.add_argument("--seconds", type=float, default=10, help="seconds of traffic per algorithm (default: 10)")
    ap.add_argument("--rate-mbit", type=float, default=20, help="bottleneck rate of the first part (default: 20)")
    ap.add_argument("--rtt-ms", type=float, default=40, help="base RTT of the first part (default: 40)")
    ap.add_argument("--queue-pkts", type=int, default=100,
                    help="drop-tail queue of the first part, in packets (default: 100)")
    ap.add_argument("--small-buffer-cc", default="etcp,reno,cubic",
                    help="algorithms of the second part: one flow each, 50 Mbit/s, 100 ms, "
                         "20-packet buffer (default: etcp,reno,cubic)")
    ap.add_argument("--no-small-buffer", action="store_true", help="skip the second part")
    return ap


#: the small-buffer part's path (shared with synctcp_mininet.demo)
SMALL_BUFFER = DumbbellConfig(rate_mbit=50, rtt_ms=100, queue_pkts=20)


def cc_list(text: str) -> List[str]:
    """``"reno, sync,"`` -> ``["reno", "sync"]``."""
    return [c.strip() for c in text.split(",") if c.strip()]


def main(argv: Optional[Sequence[str]] = None) -> int:
    args = parser(__doc__.split("\n")[0], Path("results/demo")).parse_args(argv)

    ccs = cc_list(args.cc)
    sb_ccs = [] if args.no_small_buffer else cc_list(args.small_buffer_cc)
    cfg = DumbbellConfig(rate_mbit=args.rate_mbit, rtt_ms=args.rtt_ms, queue_pkts=args.queue_pkts)
    sb_cfg = SMALL_BUFFER
    args.out.mkdir(parents=True, exist_ok=True)
    started = time.monotonic()
    try:
        ensure_modules(ccs + sb_ccs)
        results = run_part(cfg, ccs, args.flows, args.seconds, args.out, "delay-based")
        sb_results = (run_part(sb_cfg, sb_ccs, 1, args.seconds, args.out / "small-buffer",
                               "small buffer") if sb_ccs else [])
    except TestbedError as exc:
        print(f"demo: {exc}", file=sys.stderr)
        return 2
    rows = table_rows(results, cfg.rate_mbit)
    print_table(rows, f"{cfg.rate_mbit:g} Mbit/s, {cfg.rtt_ms:g} ms, {cfg.queue_pkts}-packet drop-tail, "
                      f"{args.flows} flows each, {args.seconds:g} s")
    pngs = [plot_queues(results, args.out, cfg)]
    sb_rows = table_rows(sb_results, sb_cfg.rate_mbit)
    if sb_rows:
        print_table(sb_rows, f"small buffer: {sb_cfg.rate_mbit:g} Mbit/s, {sb_cfg.rtt_ms:g} ms, "
                             f"{sb_cfg.queue_pkts}-packet drop-tail, 1 flow each, {args.seconds:g} s")
        pngs.append(plot_queues(sb_results, args.out, sb_cfg, "queue-smallbuffer.png"))
    (args.out / "summary.json").write_text(json.dumps(
        {"config": cfg.__dict__, "flows": args.flows, "seconds": args.seconds,
         "kernel": Path("/proc/sys/kernel/osrelease").read_text().strip(),
         "results": rows, "small_buffer": {"config": sb_cfg.__dict__, "results": sb_rows}},
        indent=2))
    with open(args.out / "summary.csv", "w", newline="") as fh:
        w = csv.DictWriter(fh, fieldnames=["part", *rows[0]])
        w.writeheader()
        w.writerows({"part": "delay", **r} for r in rows)
        w.writerows({"part": "small-buffer", **r} for r in sb_rows)
    print(f"queue plots: {', '.join(str(p) for p in pngs)}   ({time.monotonic() - started:.0f} s)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
