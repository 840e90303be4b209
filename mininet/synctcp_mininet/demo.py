"""``make demo MININET=1``: the demo's two parts on Mininet.

The same comparison as :mod:`synctcp_testbed.demo`, each part a scenario run
by the testbed's runner on the Mininet backend (so each algorithm gets a
freshly built Mininet network and the testbed's measurements):

1. Delay-based: reno, cubic, sync and mixreact, each alone (3 bulk flows)
   through one dumbbell: 20 Mbit/s, 40 ms base RTT, 100-packet drop-tail.
2. Small buffer: etcp, reno and cubic, one flow each: 50 Mbit/s, 100 ms,
   a 20-packet drop-tail buffer (``--no-small-buffer`` skips it).

Prints a table per part and writes a run directory per part
(``delay/``, ``small-buffer/``: summary.json/.csv, samples, report.html)
into ``--out``.

    python -m synctcp_mininet.demo --out results/demo-mininet [--seconds 10]
"""

from __future__ import annotations

import sys
import time
from pathlib import Path
from typing import Any, Dict, List, Optional, Sequence

from synctcp_testbed.demo import SMALL_BUFFER, cc_list, print_table
from synctcp_testbed.demo import parser as demo_parser
from synctcp_testbed.scenario import Scenario, TopologySpec


def part_scenario(name: str, ccs: List[str], rate: float, rtt: float, queue: int, flows: int,
                  seconds: float) -> Scenario:
    warm = min(2.0, seconds / 5)
    sc = Scenario(name=name, cc=ccs, aqm=["droptail"], duration_s=seconds + warm, warmup_s=warm,
                  topology=TopologySpec(kind="dumbbell", rate_mbit=rate, rtts_ms=[rtt] * flows,
                                        queue_pkts=queue, measure=["lr"]),
                  tcg_max_rate_mbit=100)
    sc.validate()
    return sc


def rows(out: Path) -> List[Dict[str, Any]]:
    """The demo table's rows from a run directory's summary."""
    import json

    res = []
    for c in json.loads((out / "summary.json").read_text())["cases"]:
        b = c["bottlenecks"][0]
        res.append({"cc": c["cc"], "flows": len(c["flows"]),
                    "goodput_mbit": round(c["goodput_mbit"], 2),
                    "utilization": round(b["utilization"], 3),
                    "queue_mean_pkts": round(b["mean_pkts"], 1),
                    "qdelay_mean_ms": round(b["mean_delay_ms"], 1),
                    "qdelay_p95_ms": round(b["p95_delay_ms"], 1),
                    "drop_pct": round(b["drop_pct"], 2), "retransmits": c["retransmits"],
                    "samples_hz": round(b["sample_hz"], 1)})
    return res


def main(argv: Optional[Sequence[str]] = None) -> int:
    args = demo_parser(__doc__.split("\n")[0], Path("results/demo-mininet"), "synctcp_mininet.demo").parse_args(argv)

    from synctcp_testbed.report import write_report, write_summary_csv
    from synctcp_testbed.runner import RunError, run_scenario
    from synctcp_testbed.topology import TopologyError

    sb = SMALL_BUFFER
    parts = [("delay", part_scenario("demo-delay", cc_list(args.cc), args.rate_mbit, args.rtt_ms,
                                     args.queue_pkts, args.flows, args.seconds),
              f"Mininet: {args.rate_mbit:g} Mbit/s, {args.rtt_ms:g} ms, {args.queue_pkts}-packet "
              f"drop-tail, {args.flows} flows each, {args.seconds:g} s")]
    if not args.no_small_buffer:
        parts.append(("small-buffer", part_scenario(
            "demo-small-buffer", cc_list(args.small_buffer_cc), sb.rate_mbit, sb.rtt_ms,
            sb.queue_pkts, 1, args.seconds),
            f"Mininet small buffer: {sb.rate_mbit:g} Mbit/s, {sb.rtt_ms:g} ms, "
            f"{sb.queue_pkts}-packet drop-tail, 1 flow each, {args.seconds:g} s"))
    started = time.monotonic()
    for label, sc, title in parts:
        out = args.out.absolute() / label
        try:
            run_scenario(sc, out, backend="mininet", log=lambda m: print(m, file=sys.stderr),
                         command=["synctcp-mininet demo", *(argv or sys.argv[1:])])
        except (RunError, TopologyError) as exc:
            print(f"demo: {exc}", file=sys.stderr)
            return 2
        write_summary_csv(out)
        write_report(out)
        print_table(rows(out), title)
        print(f"{out}/report.html")
    print(f"Mininet demo: {time.monotonic() - started:.0f} s")
    return 0


if __name__ == "__main__":
    sys.exit(main())
