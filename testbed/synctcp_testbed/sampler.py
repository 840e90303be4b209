"""Sample the bottleneck queue and the senders' TCP state during a run.

A sampler opens a netlink socket in the router's namespace (qdisc
statistics) or an inet_diag socket in the sender's namespace (per-socket
state and synctcp telemetry), and polls it until SIGINT/SIGTERM or
``--max-seconds``.  A run starts one of each, so that decoding the slower
socket dumps never delays the queue samples::

    python -m synctcp_testbed.sampler --qdisc st-rtr:str2:1:10 --hz 100 --out queue.csv
    python -m synctcp_testbed.sampler --diag st-snd:sync --hz 10 --out diag.jsonl

It prints ``ready`` once its socket is open, so that a run starts its
traffic only then (starting Python takes seconds under emulation).
Timestamps are CLOCK_MONOTONIC seconds, comparable across processes.
Queue rows: ``t,qlen_pkts,backlog_bytes,drops,sent_pkts,sent_bytes``.
"""

from __future__ import annotations

import argparse
import csv
import json
import os
import signal
import socket
import sys
import time
from typing import Any, List, Optional, Sequence, Tuple

from .topology import TopologyError, in_netns

QUEUE_FIELDS = ("t", "qlen_pkts", "backlog_bytes", "drops", "sent_pkts", "sent_bytes")


def parse_handle(text: str) -> int:
    """tc's "major:minor" (hex) to the 32-bit handle netlink uses."""
    major, _, minor = text.partition(":")
    try:
        return (int(major or "0", 16) << 16) | int(minor or "0", 16)
    except ValueError as exc:
        raise argparse.ArgumentTypeError(f"bad tc handle {text!r}") from exc


def qdisc_counters(msg: Any) -> Tuple[int, int, int, int, int]:
    """(qlen, backlog bytes, drops, packets, bytes) of one RTM_NEWQDISC message."""
    st2 = msg.get_attr("TCA_STATS2")
    if st2 is not None:
        q = st2.get_attr("TCA_STATS_QUEUE") or {}
        b = st2.get_attr("TCA_STATS_BASIC") or {}
        return (int(q.get("qlen", 0)), int(q.get("backlog", 0)), int(q.get("drops", 0)),
                int(b.get("packets", 0)), int(b.get("bytes", 0)))
    st = msg.get_attr("TCA_STATS") or {}
    return (int(st.get("qlen", 0)), int(st.get("backlog", 0)), int(st.get("drops", 0)),
            int(st.get("packets", 0)), int(st.get("bytes", 0)))


def _open_qdisc(spec: str) -> Tuple[Any, int, int]:
    """(IPRoute in NS, ifindex of DEV, parent handle) for NS:DEV:PARENT."""
    from pyroute2 import IPRoute

    try:
        ns, dev, parent_text = spec.split(":", 2)
        parent = parse_handle(parent_text)
    except (ValueError, argparse.ArgumentTypeError):
        raise SystemExit(f"sampler: --qdisc {spec!r} is not NS:DEV:MAJOR:MINOR")
    with in_netns(ns):
        ipr = IPRoute()
    links = ipr.link_lookup(ifname=dev)
    if not links:
        ipr.close()
        raise SystemExit(f"sampler: no device {dev} in {ns}")
    return ipr, links[0], parent


def main(argv: Optional[Sequence[str]] = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    what = ap.add_mutually_exclusive_group(required=True)
    what.add_argument("--qdisc", metavar="NS:DEV:PARENT",
                      help="sample the qdisc whose parent is PARENT (e.g. 1:10) on DEV in NS")
    what.add_argument("--diag", metavar="NS:CC[,CC][:FILE]", action="append",
                      help="poll sockets of these algorithms (all: '*') in NS, into FILE "
                           "(default --out); repeat for several namespaces")
    what.add_argument("--diag-stdin", action="store_true",
                      help="import everything first, then read the --diag specs from one line "
                           "of stdin (space-separated): lets a runner start the sampler while "
                           "it builds the namespaces")
    ap.add_argument("--hz", type=float, default=100.0, help="samples per second")
    ap.add_argument("--max-seconds", type=float, default=3600.0)
    ap.add_argument("--out", help="CSV (--qdisc) or JSON lines (--diag)")
    args = ap.parse_args(argv)
    if not 0.1 <= args.hz <= 1000 or not 0 < args.max_seconds <= 86400:
        ap.error("--hz must be 0.1..1000 and --max-seconds 0..86400")

    stop = False

    def _stop(*_: Any) -> None:
        nonlocal stop
        stop = True

    if args.qdisc:
        if not args.out:
            ap.error("--qdisc needs --out")
        ipr, idx, parent = _open_qdisc(args.qdisc)
        rows: List[Tuple[Any, ...]] = []

        def sample(now: float) -> None:
            for msg in ipr.get_qdiscs(index=idx):
                if msg["parent"] == parent:
                    rows.append((now, *qdisc_counters(msg)))
                    return

        def finish() -> None:
            ipr.close()
            with open(args.out, "w", newline="") as fh:
                w = csv.writer(fh)
                w.writerow(QUEUE_FIELDS)
                for r in rows:
                    w.writerow((f"{r[0]:.4f}", *r[1:]))
    else:
        from synctcp.diag import list_sockets, open_diag_socket

        polls: List[Tuple[Any, Optional[List[str]], Any]] = []
        if args.diag_stdin:
            print("loaded", flush=True)
            args.diag = sys.stdin.readline().split()
            if not args.diag:
                return 0
        for spec in args.diag:
            ns, cc_list, path = (spec.split(":", 2) + [""])[:3]
            path = path or args.out
            if not ns or not path:
                ap.error(f"--diag {spec!r}: want NS:CC[,CC][:FILE] (or --out FILE)")
            ccs = None if cc_list in ("", "*") else [c for c in cc_list.split(",") if c]
            with in_netns(ns):
                ds = open_diag_socket()
            polls.append((ds, ccs, open(path, "w")))

        def sample(now: float) -> None:
            for ds, ccs, out in polls:
                # IPv4 only: the testbed has no IPv6 flows, and each family is a
                # netlink dump (wall time under UML)
                socks = list_sockets(cc=ccs, ds=ds, families=(socket.AF_INET,))
                out.write(json.dumps({"t": now, "sockets": [s.as_dict() for s in socks]}) + "\n")

        def finish() -> None:
            for ds, _, out in polls:
                ds.close()
                out.close()

    signal.signal(signal.SIGINT, _stop)
    signal.signal(signal.SIGTERM, _stop)
    # Measuring must not take the CPU from the traffic it measures.
    os.nice(10)
    print("ready", flush=True)
    period = 1.0 / args.hz
    t0 = time.monotonic()
    nxt = t0
    n = 0
    try:
        while not stop and time.monotonic() - t0 < args.max_seconds:
            sample(time.monotonic())
            n += 1
            nxt += period
            delay = nxt - time.monotonic()
            if delay <= 0:
                # fell behind: do not burst, and still leave the CPU a while
                nxt = time.monotonic() + period / 4
                delay = period / 4
            time.sleep(delay)
    finally:
        finish()
    return 0 if n else 1


if __name__ == "__main__":
    try:
        sys.exit(main())
    except TopologyError as exc:     # e.g. a namespace that is gone
        sys.exit(f"sampler: {exc}")
