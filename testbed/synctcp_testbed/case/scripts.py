"""The shell scripts a case runs, written into its directory: replayable by hand.

* ``samplers.sh``: qsampler on the measured links (and tcpdump with
  ``--capture``), :func:`qsampler_line`, :func:`capture_line`;
* ``servers.sh``: the HTTP servers (nginx, or the asyncio server),
  :func:`servers_script`, with nginx's files from :func:`nginx_setup`;
* ``traffic.sh``: every client held at a start barrier, :func:`clients_script`:
  flowgen (every bulk and CBR flow, both ends, ``flowgen.conf``) and the
  HTTP load generators.

Each is a script of background jobs that ends only when they all have
(:func:`background_script`).
"""

from __future__ import annotations

import os
import shlex
import sys
from pathlib import Path
from typing import Any, List, Optional, Sequence

from ..network.topology import Topology
from ..plan.flows import HTTP_PORT, Flow, HttpPair, Plan, http_seed
from ..traffic.flowgen import FlowgenError, FlowSpec, config_text, limit_for
from ..traffic.flowgen import command as fg_command
from .errors import RunError


def _q(args: Sequence[Any]) -> str:
    """``args`` as one shell-quoted command line."""
    return " ".join(shlex.quote(str(a)) for a in args)


def background_script(lines: List[str]) -> str:
    """A script of background jobs that ends only when they have all ended.

    The runner stops a script with SIGINT to its process group.  A plain
    ``wait`` returns at once on it, so the runner would read a sampler's
    CSV while the sampler is still flushing it (a truncated last row); the
    background jobs ignore SIGINT unless they catch it, and every one of
    ours catches it.  The trap keeps the shell alive, and the second
    ``wait`` waits for the jobs to finish.
    """
    return "\n".join(["trap : INT TERM", *lines, "wait", "wait"]) + "\n"


def nginx_setup(plan: Plan, home: Path, rate_mbit: float, seconds: float, seed: int) -> None:
    """nginx's directory ``home/SERVER`` for each HTTP server of ``plan``: its
    configuration and a file for every response size its client will ask for."""
    from ..traffic.http.model import response_sizes
    from ..traffic.nginx import conf, make_www

    for i, h in enumerate(plan.http):
        d = home / h.server
        make_www(d / "www", response_sizes(h.load_pct, rate_mbit, seconds, http_seed(seed, i)))
        (d / "nginx.conf").write_text(conf(d, h.server_addr, NGINX_CONNECTIONS, HTTP_PORT))


#: nginx's worker_connections: more than a case's HTTP connections at once
NGINX_CONNECTIONS = 8192


def servers_script(plan: Plan, topo: Topology, case_dir: Path, duration: float,
                   nginx_home: Optional[Path] = None) -> str:
    """The HTTP servers (bulk and CBR receivers are flowgen's, in ``traffic.sh``):
    nginx with the files of :func:`nginx_setup` under ``nginx_home``, else the
    asyncio server of :mod:`synctcp_testbed.traffic.http.server`."""
    py = os.environ.get("SYNCTCP_PYTHON", sys.executable)
    lines = []
    for h in plan.http:
        cc = plan.http_cc
        if nginx_home is not None:
            lines.append(f"ip netns exec {topo.ns(h.server)} "
                         f"{_q(['nginx', '-c', nginx_home / h.server / 'nginx.conf', '-g', 'daemon off;'])}"
                         f" > {shlex.quote(str(case_dir / f'httpd-{h.server}.log'))} 2>&1 &")
            continue
        lines.append(f"ip netns exec {topo.ns(h.server)} "
                     f"{_q([py, '-m', 'synctcp_testbed.traffic.http', 'server', '--port', HTTP_PORT, '--cc', cc, '--max-seconds', int(duration + 120)])}"
                     f" > {shlex.quote(str(case_dir / f'httpd-{h.server}.json'))} "
                     f"2> {shlex.quote(str(case_dir / f'httpd-{h.server}.log'))} &")
    return background_script(lines)


#: bulk clients run this long past the measured interval, so that every flow
#: is still active at its end even though their starts spread by seconds
TAIL_S = 10.0

#: packets a capture (--capture) keeps: the first ones of the flow.  Its
#: analysis holds every packet in memory (about 1.2 KB each in Python), and a
#: UML instance has 2 GB: 740,000 packets (16 s of a 250 Mbit/s flow) left the
#: correlation thrashing for over an hour.  Martin's 500 s at 0.3 Mbit/s are
#: about 30,000.
CAPTURE_MAX_PACKETS = 200_000

#: flowgen's files in the case directory
FLOWGEN_CONF, FLOWGEN_OUT, FLOWGEN_LOG, FLOWGEN_STATUS = (
    "flowgen.conf", "flowgen.json", "flowgen.log", "flowgen.status")


#: qsampler's files in the case directory: its stderr and its exit status
QSAMPLER_LOG, QSAMPLER_STATUS = "qsampler.log", "qsampler.status"


def qsampler_line(argv: Sequence[Any], case_dir: Path) -> str:
    """The line of ``samplers.sh`` that runs qsampler in the background.

    "ready" goes to ``.ready-q``, stderr to ``qsampler.log`` and the exit
    status to ``qsampler.status``, so that the runner sees a sampler that
    failed at once, with its message.
    """
    d = case_dir
    return (f"{{ {_q(argv)} > {shlex.quote(str(d / '.ready-q'))} "
            f"2> {shlex.quote(str(d / QSAMPLER_LOG))}; "
            f"echo $? > {shlex.quote(str(d / QSAMPLER_STATUS))}; }} &")


def flow_seconds(f: Flow, duration: float) -> int:
    """How long flow ``f`` sends: past the measured interval by TAIL_S, or
    until its own stop (``others_stop_s``)."""
    if f.stop_s:
        return max(1, int(round(f.stop_s - f.start_s)))
    return max(1, int(round(duration - f.start_s + TAIL_S)))


def flowgen_specs(plan: Plan, topo: Topology, duration: float) -> List[FlowSpec]:
    """The bulk and CBR flows of ``plan`` as flowgen config lines."""
    specs = []
    for f in plan.flows:
        cbr = f.kind == "cbr"
        specs.append(FlowSpec(
            id=f.id, kind=f.kind, src_ns=topo.ns(f.src), dst_ns=topo.ns(f.dst),
            src_addr=f.src_addr, dst_addr=f.dst_addr, port=f.port, cport=f.cport,
            cc="-" if cbr else f.cc, start_s=f.start_s, seconds=flow_seconds(f, duration),
            rate_bps=plan.cbr_kbit * 1000 if cbr else 0.0,
            pkt_bytes=plan.cbr_bytes if cbr else 0))
    return specs


def flowgen_config(plan: Plan, topo: Topology, duration: float) -> str:
    """The text of ``flowgen.conf``: every bulk and CBR flow of the case."""
    try:
        return config_text(flowgen_specs(plan, topo, duration))
    except FlowgenError as exc:
        raise RunError(f"flows of the case: {exc}") from None


def clients_script(plan: Plan, topo: Topology, case_dir: Path, duration: float, seed: int,
                   rate_mbit: float, barrier_dir: Optional[Path] = None,
                   flowgen_bin: str = "flowgen", window_bytes: int = 0) -> str:
    """Every client, held at a start barrier.

    All bulk and CBR flows, both ends, are one ``flowgen`` process
    (``flowgen.conf`` in the case directory, written by the runner): it
    creates every receiver and sender socket, appends a line to
    ``.launched`` and waits on the FIFO ``.go``, then starts each flow at
    its offset.  Each HTTP client announces itself in ``.launched`` and
    blocks opening ``.go``.  The runner releases them all at once (open +
    close of the FIFO), so that process start-up (seconds under emulation)
    does not spread the flows' starts.  The FIFO lives in ``barrier_dir``
    (default ``case_dir``): 9p, the VM's view of the host filesystem, has
    no FIFOs.
    """
    py = os.environ.get("SYNCTCP_PYTHON", sys.executable)
    bdir = barrier_dir or case_dir
    launched, go = shlex.quote(str(bdir / ".launched")), shlex.quote(str(bdir / ".go"))
    lines = []

    def held(ns: str, argv: Sequence[Any], out: Path, err: Optional[Path],
             delay: float = 0.0) -> str:
        # enter the namespace before the barrier: only exec is left after it
        sleep = f"sleep {delay:g}; " if delay else ""
        dest = f"> {shlex.quote(str(out))} " + (f"2> {shlex.quote(str(err))}" if err else "2>&1")
        inner = f"echo >> {launched}; read _ < {go}; {sleep}exec {_q(argv)} {dest}"
        return f"ip netns exec {ns} sh -c {shlex.quote(inner)} &"

    if plan.flows:
        specs = flowgen_specs(plan, topo, duration)
        argv = fg_command(flowgen_bin, case_dir / FLOWGEN_CONF, case_dir / FLOWGEN_OUT,
                          limit_s=limit_for(specs), ready_file=bdir / ".launched",
                          go_file=bdir / ".go", window_bytes=window_bytes)
        by_hand = fg_command(flowgen_bin, case_dir / FLOWGEN_CONF, case_dir / FLOWGEN_OUT,
                             limit_s=limit_for(specs), window_bytes=window_bytes)
        lines.append(f"# by hand, without the barrier (go is a line on stdin): "
                     f"echo go | {_q(by_hand)}")
        lines.append(f"{{ {_q(argv)} > /dev/null 2> {shlex.quote(str(case_dir / FLOWGEN_LOG))}; "
                     f"echo $? > {shlex.quote(str(case_dir / FLOWGEN_STATUS))}; }} &")
    for i, h in enumerate(plan.http):
        args = http_client_argv(py, h, HTTP_PORT, rate_mbit, duration, http_seed(seed, i),
                                case_dir / f"http-{h.client}.csv", plan.http_cc)
        lines.append(held(topo.ns(h.client), args, case_dir / f"httpc-{h.client}.json",
                          case_dir / f"httpc-{h.client}.log"))
    return background_script(lines)


def http_client_argv(py: str, pair: HttpPair, port: int, rate_mbit: float, duration: float,
                     seed: int, out: Any, cc: str) -> List[Any]:
    """The HTTP client of ``pair`` (its server at ``port``) for a case of ``duration``
    seconds (it runs TAIL_S more, so that the measured interval has its responses),
    writing its responses to ``out`` (both runners)."""
    return [py, "-m", "synctcp_testbed.traffic.http", "client", "--server",
            f"{pair.server_addr}:{port}", "--load-pct", f"{pair.load_pct:g}",
            "--capacity-mbit", f"{rate_mbit:g}", "--seconds", f"{duration + TAIL_S:g}",
            "--seed", seed, "--group", pair.client, "--out", out, "--cc", cc]


def client_count(plan: Plan) -> int:
    """Processes that announce themselves at the start barrier: flowgen, HTTP clients."""
    return (1 if plan.flows else 0) + len(plan.http)


def capture_line(topo: Topology, flow: Flow, case_dir: Path) -> str:
    """tcpdump of ``flow``'s headers at its sender (for ``synctcp trace/correlate``)
    and at its receiver (``FLOW-receiver.pcap``: how long the receiver held
    each ACK after the data it acknowledges arrived)."""
    # tcpdump writes to its standard output, which the shell opens: a
    # file tcpdump opens itself it chowns to its unprivileged user, and
    # on UML's hostfs (the host user nobody) that fails and leaves a
    # capture of its header only
    lines = []
    for node, pcap, log in ((flow.src, f"{flow.id}.pcap", "tcpdump.log"),
                            (flow.dst, f"{flow.id}-receiver.pcap", "tcpdump-receiver.log")):
        link = next(lk for lk in topo.links if node in (lk.a, lk.b))
        args = ["tcpdump", "-i", topo.dev(node, link), "-s", "128", "-U",
                "-c", str(CAPTURE_MAX_PACKETS), "-w", "-", f"tcp port {flow.port}"]
        lines.append(f"ip netns exec {topo.ns(node)} {_q(args)} "
                     f"> {shlex.quote(str(case_dir / pcap))} "
                     f"2> {shlex.quote(str(case_dir / log))} &")
    return "\n".join(lines)
