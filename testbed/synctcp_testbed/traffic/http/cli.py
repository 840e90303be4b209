"""``python -m synctcp_testbed.traffic.http``: the server, the client, the metrics of a CSV.

    python -m synctcp_testbed.traffic.http server --port 8080 --cc sync
    python -m synctcp_testbed.traffic.http client --server 10.0.9.1:8080 --load-pct 85 \\
        --capacity-mbit 10 --seconds 300 --seed 1 --cc sync --out http.csv
    python -m synctcp_testbed.traffic.http metrics http.csv

Bad options are one line on stderr and exit status 2.
"""

from __future__ import annotations

import argparse
import asyncio
import ipaddress
import json
import math
import re
import socket
from typing import Any, Dict, Optional, Sequence, Tuple

from ...analysis.http import http_metrics
from ...analysis.rundir import RunDirError, read_http_csv
from .client import ClientConfig, LoadGenerator
from .model import calibrate
from .server import HttpServer, listening_socket, run_server
from .sockets import check_congestion, log, raise_fd_limit

#: a client's flow_group value
GROUP_RE = re.compile(r"[A-Za-z0-9_.-]{1,32}")


def parse_server_address(text: str) -> Tuple[str, int]:
    """Split ``ADDR:PORT`` or ``[V6ADDR]:PORT``; ValueError if malformed."""
    host, sep, port_text = text.rpartition(":")
    if not sep or not host or not port_text.isdigit():
        raise ValueError(f"--server {text!r} is not ADDR:PORT")
    if host.startswith("[") and host.endswith("]"):
        host = host[1:-1]
    port = int(port_text)
    if not 1 <= port <= 65535:
        raise ValueError(f"--server port {port} is not within 1..65535")
    return host, port


def _resolve(host: str, port: int) -> Tuple[int, str]:
    """Address family and numeric address of ``host``."""
    try:
        version = ipaddress.ip_address(host).version
        return (socket.AF_INET6 if version == 6 else socket.AF_INET), host
    except ValueError:
        pass
    try:
        info = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM)
    except OSError as exc:
        raise ValueError(f"cannot resolve {host!r}: {exc}") from exc
    return info[0][0], info[0][4][0]


def _build_parser() -> argparse.ArgumentParser:
    ap = argparse.ArgumentParser(prog="python -m synctcp_testbed.traffic.http",
                                 description="Web-like HTTP/1.0 workload: size model, load "
                                             "calibration, server, client, metrics.")
    sub = ap.add_subparsers(dest="command", required=True)

    srv = sub.add_parser("server", help="serve HTTP/1.0 responses of the requested size")
    srv.add_argument("--host", default="0.0.0.0", help="address to listen on")
    srv.add_argument("--port", type=int, required=True, help="TCP port (0: any free port)")
    srv.add_argument("--cc", help="TCP congestion control of the server's sockets")
    srv.add_argument("--max-seconds", type=float, default=None, help="stop after this long")
    srv.set_defaults(parser=srv)

    cli = sub.add_parser("client", help="generate the calibrated web-like load")
    cli.add_argument("--server", required=True, metavar="ADDR:PORT")
    cli.add_argument("--load-pct", type=float, required=True,
                     help="offered load in %% of the capacity (1..200)")
    cli.add_argument("--capacity-mbit", type=float, required=True, help="bottleneck rate")
    cli.add_argument("--seconds", type=float, required=True, help="length of the arrival process")
    cli.add_argument("--seed", type=int, default=1)
    cli.add_argument("--cc", help="TCP congestion control of the client's sockets")
    cli.add_argument("--out", required=True, help="per-response CSV")
    cli.add_argument("--max-connections", type=int, default=1000,
                     help="concurrent connections; arrivals over it are dropped and counted")
    cli.add_argument("--group", default="fwd", help="flow_group column value")
    cli.add_argument("--drain-seconds", type=float, default=15.0,
                     help="wait this long after the last arrival for running responses")
    cli.add_argument("--arrival-shape", type=float, default=None,
                     help="Weibull shape of inter-arrivals (default: PackMime's for the "
                          "rate; 1 = Poisson)")
    cli.set_defaults(parser=cli)

    met = sub.add_parser("metrics", help="response-time summary of an http.csv as JSON")
    met.add_argument("csv")
    met.add_argument("--group", default=None, help="only rows of this flow_group")
    met.set_defaults(parser=met)
    return ap


def _json_safe(summary: Dict[str, Any]) -> Dict[str, Any]:
    """NaN (a median of no response) as JSON's null."""
    return {k: (None if isinstance(v, float) and math.isnan(v) else v) for k, v in summary.items()}


def _server_main(ap: argparse.ArgumentParser, args: argparse.Namespace) -> int:
    if not 0 <= args.port <= 65535:
        ap.error(f"--port {args.port} is not within 0..65535")
    if args.max_seconds is not None and not args.max_seconds > 0:
        ap.error("--max-seconds must be positive")
    try:
        check_congestion(args.cc)
        sock = listening_socket(args.host, args.port, args.cc)
    except ValueError as exc:
        ap.error(str(exc))
    except OSError as exc:
        ap.error(f"cannot listen on {args.host}:{args.port}: {exc.strerror or exc}")
    raise_fd_limit()
    stats = asyncio.run(run_server(sock, HttpServer(args.cc), args.max_seconds))
    print(json.dumps(stats), flush=True)
    return 0


def _client_config(ap: argparse.ArgumentParser, args: argparse.Namespace) -> ClientConfig:
    try:
        calibrate(args.load_pct, args.capacity_mbit)
        host, port = parse_server_address(args.server)
        family, host = _resolve(host, port)
        check_congestion(args.cc)
    except ValueError as exc:
        ap.error(str(exc))
    if not 0 < args.seconds <= 86400:
        ap.error("--seconds must be within 0..86400")
    if not 0 <= args.drain_seconds <= 3600:
        ap.error("--drain-seconds must be within 0..3600")
    if args.max_connections < 1:
        ap.error("--max-connections must be at least 1")
    if args.arrival_shape is not None and not 0.05 <= args.arrival_shape <= 20:
        ap.error("--arrival-shape must be within 0.05..20")
    if not GROUP_RE.fullmatch(args.group):
        ap.error("--group must be 1..32 characters of letters, digits, '_', '.' or '-'")
    fd_room = raise_fd_limit() - 64
    if args.max_connections > fd_room:
        log(f"--max-connections {args.max_connections} lowered to {fd_room} (open-files limit)")
        args.max_connections = max(1, fd_room)
    try:
        out = open(args.out, "w", newline="")
    except OSError as exc:
        ap.error(f"cannot write --out {args.out}: {exc.strerror or exc}")
    return ClientConfig(host=host, port=port, family=family, load_pct=args.load_pct,
                        capacity_mbit=args.capacity_mbit, seconds=args.seconds, seed=args.seed,
                        out=out, cc=args.cc, group=args.group,
                        max_connections=args.max_connections, drain_seconds=args.drain_seconds,
                        arrival_shape=args.arrival_shape)


def _client_main(ap: argparse.ArgumentParser, args: argparse.Namespace) -> int:
    cfg = _client_config(ap, args)
    with cfg.out:
        summary = asyncio.run(LoadGenerator(cfg).run())
    print(json.dumps(summary), flush=True)
    return 0


def _metrics_main(ap: argparse.ArgumentParser, args: argparse.Namespace) -> int:
    try:
        rows = read_http_csv(args.csv, args.group)
    except (OSError, RunDirError) as exc:
        ap.error(str(exc))
    print(json.dumps(_json_safe(http_metrics(rows))))
    return 0


def main(argv: Optional[Sequence[str]] = None) -> int:
    """Entry point of ``python -m synctcp_testbed.traffic.http``."""
    args = _build_parser().parse_args(argv)
    if args.command == "server":
        return _server_main(args.parser, args)
    if args.command == "client":
        return _client_main(args.parser, args)
    return _metrics_main(args.parser, args)

