"""Sample the bottleneck queue and the senders' TCP state during a run.

One process serves both: it opens a netlink socket in the router's
namespace (qdisc statistics) and an inet_diag socket in the sender's
namespace (per-socket state and synctcp telemetry), then polls them at
their own rates until SIGINT/SIGTERM or ``--max-seconds``::

    python -m synctcp_testbed.sampler --qdisc st-rtr:str2:1:10 --hz 100 \\
        --diag st-snd:sync --diag-hz 10 --qout queue.csv --dout diag.jsonl

It prints ``ready`` once both sockets are open, so that a run starts its
traffic only then (starting Python takes seconds under emulation).
Timestamps are CLOCK_MONOTONIC seconds, comparable across processes.
Queue rows: ``t,qlen_pkts,backlog_bytes,drops,sent_pkts,sent_bytes``.
"""

from __future__ import annotations

import argparse
import csv
import ctypes
import json
import os
import signal
import sys
import time
from contextlib import contextmanager
from typing import Any, Iterator, List, Optional, Sequence, Tuple

QUEUE_FIELDS = ("t", "qlen_pkts", "backlog_bytes", "drops", "sent_pkts", "sent_bytes")
CLONE_NEWNET = 0x40000000


@contextmanager
def in_netns(name: str) -> Iterator[None]:
    """Run the body in network namespace ``name`` (sockets stay there)."""
    libc = ctypes.CDLL(None, use_errno=True)
    home = os.open("/proc/self/ns/net", os.O_RDONLY)
    try:
        target = os.open(f"/var/run/netns/{name}", os.O_RDONLY)
    except FileNotFoundError:
        os.close(home)
        raise SystemExit(f"sampler: no network namespace {name}")
    try:
        if libc.setns(target, CLONE_NEWNET) != 0:
            raise OSError(ctypes.get_errno(), f"setns({name}) failed")
        yield
    finally:
        libc.setns(home, CLONE_NEWNET)
        os.close(target)
        os.close(home)


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


def main(argv: Optional[Sequence[str]] = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--qdisc", required=True, metavar="NS:DEV:PARENT",
                    help="sample the qdisc whose parent is PARENT (e.g. 1:10) on DEV in NS")
    ap.add_argument("--hz", type=float, default=100.0, help="queue samples per second")
    ap.add_argument("--diag", metavar="NS:CC[,CC]", help="poll sockets of these algorithms in NS")
    ap.add_argument("--diag-hz", type=float, default=10.0)
    ap.add_argument("--max-seconds", type=float, default=3600.0)
    ap.add_argument("--qout", required=True)
    ap.add_argument("--dout")
    args = ap.parse_args(argv)
    if not 1 <= args.hz <= 1000 or not 0.1 <= args.diag_hz <= 100 or not 0 < args.max_seconds <= 86400:
        ap.error("--hz must be 1..1000, --diag-hz 0.1..100, --max-seconds 0..86400")
    try:
        q_ns, q_dev, q_parent = args.qdisc.split(":", 2)
        parent = parse_handle(q_parent)
    except ValueError:
        ap.error("--qdisc is NS:DEV:MAJOR:MINOR")
    if args.diag and not args.dout:
        ap.error("--diag needs --dout")

    from pyroute2 import IPRoute

    from synctcp.diag import list_sockets, open_diag_socket

    with in_netns(q_ns):
        ipr = IPRoute()
    links = ipr.link_lookup(ifname=q_dev)
    if not links:
        print(f"sampler: no device {q_dev} in {q_ns}", file=sys.stderr)
        return 2
    idx = links[0]
    ds = None
    ccs: List[str] = []
    if args.diag:
        d_ns, _, cc_list = args.diag.partition(":")
        ccs = [c for c in cc_list.split(",") if c]
        with in_netns(d_ns):
            ds = open_diag_socket()

    stop = False

    def _stop(*_: Any) -> None:
        nonlocal stop
        stop = True

    signal.signal(signal.SIGINT, _stop)
    signal.signal(signal.SIGTERM, _stop)

    rows: List[Tuple[Any, ...]] = []
    dout = open(args.dout, "w") if args.dout else None
    print("ready", flush=True)
    period, dperiod = 1.0 / args.hz, 1.0 / args.diag_hz
    t0 = time.monotonic()
    nxt, dnxt = t0, t0
    try:
        while not stop and time.monotonic() - t0 < args.max_seconds:
            now = time.monotonic()
            for msg in ipr.get_qdiscs(index=idx):
                if msg["parent"] == parent:
                    rows.append((now, *qdisc_counters(msg)))
                    break
            if ds is not None and now >= dnxt:
                socks = list_sockets(cc=ccs or None, ds=ds)
                dout.write(json.dumps({"t": now, "sockets": [s.as_dict() for s in socks]}) + "\n")
                dnxt += dperiod
                if dnxt < now:
                    dnxt = now + dperiod
            nxt += period
            delay = nxt - time.monotonic()
            if delay > 0:
                time.sleep(delay)
            else:
                nxt = time.monotonic()   # fell behind: do not burst
    finally:
        if dout:
            dout.close()
        with open(args.qout, "w", newline="") as fh:
            w = csv.writer(fh)
            w.writerow(QUEUE_FIELDS)
            for r in rows:
                w.writerow((f"{r[0]:.4f}", *r[1:]))
        ipr.close()
        if ds is not None:
            ds.close()
    return 0 if rows else 1


if __name__ == "__main__":
    sys.exit(main())
