"""The ``synctcp`` command: state of the modules and of their sockets.

    synctcp list [--json]     modules built/installed/loaded, parameters, sysctls
    synctcp status            the same (alias of list)
    synctcp load / unload     modules, parameters, allowed and default sysctls (modctl.py)
    synctcp clock [--json]    is this host's clock fit for exact OTT? (clock.py)
    synctcp ss [--json]       live sockets of sync/mixreact/etcp, decoded
    synctcp ss --watch 0.5    the same, refreshed every 0.5 s
    synctcp trace / correlate FILE   RTT, OTT and losses from a capture (trace.py, correlate.py)
    synctcp owts FILE         the one-way-timestamp option, packet by packet (owtsdump.py)

Exit codes: 0 success, 1 unfit (``clock``) or nothing matched (``trace``,
``correlate``, ``owts``), 2 error, 3 ``ss`` found no socket (it says so on
stderr).
"""

from __future__ import annotations

import argparse
import json
import math
import sys
import time
from pathlib import Path
from typing import Any, Dict, List, Optional, Sequence

from . import __version__, clock, modctl
from .pipe import stdout_closed
from . import correlate as _correlate
from . import owtsdump as _owtsdump
from . import trace as _trace
from .diag import (ETCP_PHASES, MIX_ACTIONS, MIX_REGIONS, MIX_TRENDS, DiagError, SocketState,
                   list_sockets)

SYSCTL = Path("/proc/sys/net/ipv4")
SYSMOD = Path("/sys/module")

#: ``synctcp ss`` exit code when no socket matched (0: some did, 2: an error)
EXIT_NO_SOCKETS = 3


def _read(path: Path) -> Optional[str]:
    try:
        return path.read_text().strip()
    except OSError:
        return None


def status() -> Dict[str, Any]:
    """Which synctcp modules are loaded, with parameters, and the sysctls
    (``synctcp list``)."""
    return modctl.list_state()


def _fmt_us(us: Optional[int]) -> str:
    return "-" if us is None else f"{us / 1000:.1f}ms"


def _pm_us(us: Optional[int], bound_ms: Optional[float], known: bool) -> str:
    """``11.6ms±1.0ms``; ``±?`` where the figure's error is unknown (``known`` False)."""
    if us is None:
        return "-"
    if not known:
        return f"{_fmt_us(us)}\u00b1?"
    # a bound rounds up: never shown smaller than it is
    return _fmt_us(us) + ("" if bound_ms is None else
                          f"\u00b1{math.ceil(bound_ms * 100 - 1e-9) / 100:.2f}ms")


def format_socket(st: SocketState, clock_bound_ms: Optional[float] = None) -> str:
    """One line per socket, in the spirit of ``ss -ti``; sync's OTT figures with their
    bounds (:func:`synctcp.clock.ott_bounds`: the peer's tick for a queuing delay from
    timestamps, none for their OTT; ``clock_bound_ms``, the pair's clock bound, for the
    option's)."""
    head = f"{st.src}:{st.sport} -> {st.dst}:{st.dport} {st.cc or '?'}"
    ti = st.tcp_info
    parts = [head, f"cwnd:{ti.get('cwnd', '-')}", f"rtt:{_fmt_us(ti.get('rtt_us'))}",
             f"retrans:{ti.get('retrans', '-')}"]
    s = st.synctcp
    if s:
        parts.append(f"src:{s['source']}")
        if s.get("peer_clock_hz"):
            parts.append(f"peer_clock:{s['peer_clock_hz']}Hz")
        ott_b, q_b, _ = clock.ott_bounds(s["source"], s.get("peer_clock_hz"), clock_bound_ms)
        one_way = s["source"] in ("ts", "option")
        for key, label in (("min_ott_us", "min_ott"), ("qdelay_us", "qdelay"),
                           ("qdelay_avg_us", "qdelay_avg"), ("max_qdelay_us", "max_qdelay")):
            if key not in s:
                continue
            if not one_way:
                parts.append(f"{label}:{_fmt_us(s[key])}")
            elif key == "min_ott_us":
                parts.append(f"{label}:{_pm_us(s[key], ott_b, ott_b is not None)}")
            else:
                parts.append(f"{label}:{_pm_us(s[key], q_b, q_b is not None)}")
        for key in ("signals", "reductions"):
            if key in s:
                parts.append(f"{key}:{s[key]}")
        if "trend" in s:
            parts.append(f"trend:{MIX_TRENDS.get(s['trend'], s['trend'])}")
            parts.append(f"region:{MIX_REGIONS.get(s['region'], s['region'])}")
            parts.append(f"action:{MIX_ACTIONS.get(s['action'], s['action'])}")
            parts.append(f"increases:{s['increases']} decreases:{s['decreases']}")
        if "w_x256" in s:
            parts.append(f"W:{s['w_x256'] / 256:.2f}")
            parts.append(f"phase:{ETCP_PHASES.get(s['phase'], s['phase'])}")
            parts.append(f"losses:{s['losses']} ecn:{s['ecn_events']} undos:{s['undos']}")
        flags = [n for n in ("loss_seen", "congested") if s.get(n)]
        if flags:
            parts.append("[" + ",".join(flags) + "]")
    return " ".join(parts)


def cmd_status(args: argparse.Namespace) -> int:
    return modctl.cmd_list(args)


def _either(names: Sequence[str]) -> str:
    """``a``, ``a or b``, ``a, b or c``."""
    return names[0] if len(names) == 1 else f"{', '.join(names[:-1])} or {names[-1]}"


def no_sockets_message(ccs: Sequence[str], cc_filter: Optional[str] = None) -> str:
    """The line ``synctcp ss`` prints to stderr when no socket matched."""
    msg = f"synctcp ss: no {_either(list(ccs))} sockets"
    return f"{msg} (--cc {cc_filter})" if cc_filter else msg


def cmd_ss(args: argparse.Namespace) -> int:
    ccs: List[str] = ([c for c in args.cc.split(",") if c] if args.cc else []) \
        or list(modctl.CC_MODULES)
    rounds = 0
    while True:
        socks = list_sockets(cc=ccs)
        if not socks:
            print(no_sockets_message(ccs, args.cc), file=sys.stderr, flush=True)
        elif args.json:
            print(json.dumps({"time": time.time(), "sockets": [s.as_dict() for s in socks]}), flush=True)
        else:
            for s in socks:
                print(format_socket(s, args.clock_bound_ms))
            if args.watch:
                print(flush=True)
        rounds += 1
        if not args.watch or (args.count and rounds >= args.count):
            return 0 if socks else EXIT_NO_SOCKETS
        time.sleep(args.watch)


def build_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(
        prog="synctcp",
        description="State of the synctcp congestion-control modules (sync, mixreact, etcp) "
                    "and of their sockets, and what captures say about RTT, OTT and losses.",
        epilog=f"Exit codes: 0 success, 1 unfit (clock) or nothing matched (trace, correlate, "
               f"owts), 2 error, {EXIT_NO_SOCKETS} no socket (ss).")
    p.add_argument("--version", action="version", version=f"%(prog)s {__version__}")
    sub = p.add_subparsers(dest="command", required=True, metavar="COMMAND", title="commands",
                           help="'synctcp COMMAND --help' shows its options")

    modctl.add_parsers(sub)
    clock.add_parser(sub)
    s = sub.add_parser("status", help="alias of list",
                       description="The same as 'synctcp list'.")
    s.add_argument("--json", action="store_true", help="JSON output")
    s.set_defaults(func=cmd_status)

    s = sub.add_parser(
        "ss", help="live per-socket state of synctcp sockets",
        description="Connected TCP sockets of this network namespace that use a synctcp "
                    "algorithm, with their tcp_info and the module's telemetry, one line each.",
        epilog=f"Exit 0 sockets shown, {EXIT_NO_SOCKETS} no matching socket (a line on stderr "
               f"says so; with --watch, of the last round), 2 error.")
    s.add_argument("--cc", help="comma-separated algorithms (default: sync,mixreact,etcp)")
    s.add_argument("--json", action="store_true",
                   help="one JSON object per round (nothing on stdout for a round without sockets)")
    s.add_argument("--watch", type=float, metavar="SEC",
                   help="repeat every SEC seconds until interrupted (default: once)")
    s.add_argument("--count", type=int, default=0, help="with --watch: stop after N rounds")
    s.add_argument("--clock-bound-ms", type=float, metavar="MS",
                   help="the bound of the two hosts' clock difference (synctcp-testbed hosts "
                        "check prints it): the one-way-timestamp option's min OTT is shown "
                        "within it, its queuing delay within twice it (default: unknown, ±?)")
    s.set_defaults(func=cmd_ss)

    _trace.add_parser(sub)
    _correlate.add_parser(sub)
    _owtsdump.add_parser(sub)
    return p


def main(argv: Optional[Sequence[str]] = None) -> int:
    args = build_parser().parse_args(argv)
    if getattr(args, "watch", None) is not None and args.watch <= 0:
        print("synctcp: --watch needs a positive interval", file=sys.stderr)
        return 2
    try:
        rc = int(args.func(args))
        sys.stdout.flush()          # a closed pipe shows here, not at exit
        return rc
    except DiagError as exc:
        print(f"synctcp: {exc}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        return 130
    except BrokenPipeError:
        return stdout_closed()


if __name__ == "__main__":
    sys.exit(main())
