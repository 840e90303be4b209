"""Sample the senders' TCP state during a run, over inet_diag.

The runner starts one of these for a case: it opens an inet_diag socket in
each sending namespace (per-socket state and synctcp telemetry) and polls
them until SIGINT/SIGTERM or ``--max-seconds``, one JSON line per namespace
and round.  The bottleneck queues are sampled by ``qsampler`` (C, netlink,
:mod:`synctcp_testbed.platform.helpers`)::

    python -m synctcp_testbed.measure.sampler --diag st-s1:sync --hz 10 --out tcp-s1.jsonl
    python -m synctcp_testbed.measure.sampler --diag st-s1:*:tcp-s1.jsonl \\
        --diag st-s2:*:tcp-s2.jsonl
    python -m synctcp_testbed.measure.sampler --diag-stdin --hz 2     (what the runner runs)
    python -m synctcp_testbed.measure.sampler --diag=-:*:tcp-s1.jsonl  (a real host: its own namespace)

It prints ``ready`` once its sockets are open, so that a run starts its
traffic only then (starting Python takes seconds under emulation); with
``--diag-stdin`` it prints ``loaded`` after its imports and then reads the
``--diag`` specs from one line of stdin.  Timestamps are CLOCK_MONOTONIC
seconds, comparable across processes.  Line format:
``{"t": T, "sockets": [SocketState.as_dict(), ...]}``.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import signal
import socket
import sys
import time
from typing import Any, List, Optional, Sequence, Tuple

from ..network.netns import in_netns
from ..network.topology import TopologyError


def main(argv: Optional[Sequence[str]] = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    what = ap.add_mutually_exclusive_group(required=True)
    what.add_argument("--diag", metavar="NS:CC[,CC][:FILE]", action="append",
                      help="poll sockets of these algorithms (all: '*') in NS, into FILE "
                           "(default --out); repeat for several namespaces")
    what.add_argument("--diag-stdin", action="store_true",
                      help="import everything first, then read the --diag specs from one line "
                           "of stdin (space-separated): lets a runner start the sampler while "
                           "it builds the namespaces")
    ap.add_argument("--hz", type=float, default=100.0, help="samples per second")
    ap.add_argument("--max-seconds", type=float, default=3600.0,
                    help="stop after this long even without a signal")
    ap.add_argument("--out", help="JSON lines file of a --diag without its own FILE")
    args = ap.parse_args(argv)
    if not 0.1 <= args.hz <= 1000 or not 0 < args.max_seconds <= 86400:
        ap.error("--hz must be 0.1..1000 and --max-seconds 0..86400")

    stop = False

    def _stop(*_: Any) -> None:
        nonlocal stop
        stop = True

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
        try:
            out = open(path, "w")
        except OSError as exc:
            ap.error(f"--diag {spec!r}: cannot write {path}: {exc.strerror}")
        # "-": this process's own namespace (a host of its own: run --hosts)
        with (contextlib.nullcontext() if ns == "-" else in_netns(ns)):
            ds = open_diag_socket()
        polls.append((ds, ccs, out))

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
