"""Run a scenario: every case on a fresh topology, measured, into a run directory.

For each case the runner

1. builds the scenario's topology with the case's queue discipline, the
   case's algorithm as every sender's default (``tcp_congestion_control``
   is per network namespace), ECN on where the queue marks;
2. starts the queue sampler (C, ``qsampler``, 100 Hz, one process) on the
   measured links and one inet_diag sampler over all sending namespaces;
3. starts the HTTP servers, waits until all listen, then starts every
   client at once from one shell script (``traffic.sh`` in the case
   directory: the exact commands, replayable by hand): every bulk and CBR
   flow, both ends, is one ``flowgen`` process (C, one epoll loop);
4. stops the samplers, computes the metrics over ``[warmup, duration]``
   and tears the topology down (also on errors and Ctrl-C).

The layout of the run directory is ``docs/testbed-rundir.md``.
"""

from __future__ import annotations

import contextlib
import json
import math
import os
import platform as platform_mod
import random
import shlex
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from dataclasses import asdict, dataclass, field
from datetime import datetime, timezone
from pathlib import Path
from typing import Any, Callable, Dict, List, Optional, Sequence, Tuple

from synctcp import modctl

from . import __version__, backends
from .backends import build_topology  # noqa: F401 (runner.build_topology, as before)
from .flowgen import (FlowgenError, FlowgenResult, FlowResult, FlowSpec, config_text,
                      limit_for, load_result, window_bytes, window_retrans)
from .flowgen import command as fg_command
from .metrics import QueueStats, queue_stats, read_samples
from .native import flowgen_path, qsampler_path
from .scenario import Case, Scenario
from .topology import Topology, TopologyError, in_netns

REPO = Path(__file__).resolve().parents[2]
BULK_PORT, CBR_PORT, HTTP_PORT, CPORT = 5201, 6201, 8080, 40001


class RunError(RuntimeError):
    """A case could not be run; the message says why."""


@dataclass
class Flow:
    id: str
    group: str
    cc: str
    src: str
    dst: str
    port: int
    cport: int
    base_rtt_ms: float
    start_s: float = 0.0
    kind: str = "bulk"          # bulk | cbr
    src_addr: str = ""
    dst_addr: str = ""


@dataclass
class HttpPair:
    server: str
    client: str
    server_addr: str
    load_pct: float


@dataclass
class Plan:
    flows: List[Flow] = field(default_factory=list)
    http: List[HttpPair] = field(default_factory=list)
    #: algorithm of the HTTP servers and clients
    http_cc: str = "reno"
    cbr_kbit: float = 64.0
    cbr_bytes: int = 200


# ---------------------------------------------------------------------------
# platform


def platform_name() -> str:
    """native, kvm, uml or tcg: where this process runs."""
    from .platforms import inside_instance

    return inside_instance() or "native"


def ensure_cc(cc: str) -> None:
    """Make ``cc`` available and allowed (:func:`synctcp.modctl.ensure_cc`), or raise RunError."""
    try:
        modctl.ensure_cc(cc)
    except modctl.ModError as exc:
        raise RunError(str(exc)) from exc


#: the project's algorithms that have a "variant" parameter
VARIANT_CCS = ("sync", "mixreact")


def set_variant(cc: str, variant: str, sys_root: Path = Path("/sys")) -> Optional[str]:
    """Set ``cc``'s "variant" module parameter; return the value it had (None: no such cc).

    The parameter is read when a connection starts, so it holds for every
    connection of the case.  RunError when the loaded module has none (a
    build older than the parameter) or refuses the value.
    """
    if cc not in VARIANT_CCS:
        return None
    mod = modctl.module_of(cc)
    path = sys_root / "module" / str(mod) / "parameters" / "variant"
    try:
        before = path.read_text().strip()
        path.write_text(variant)
    except FileNotFoundError:
        raise RunError(f"variant {variant}: the loaded {mod} has no variant parameter "
                       f"(an older build: make modules)") from None
    except OSError as exc:
        raise RunError(f"variant {variant}: {mod} refused it ({exc.strerror})") from None
    return before


def _read(path: Path) -> Optional[str]:
    try:
        return path.read_text().strip()
    except OSError:
        return None


def _load_json(path: Path) -> Optional[Dict[str, Any]]:
    """A JSON file's object, or None when it is missing or not JSON."""
    try:
        data = json.loads(path.read_text())
    except (OSError, json.JSONDecodeError):
        return None
    return data if isinstance(data, dict) else None


def case_ccs(case: Case) -> List[str]:
    """Every algorithm a case's flows use, in a fixed order."""
    tr = case.scenario.traffic
    return sorted({case.cc, tr.minority_of, tr.rev_cc} - {"", "udp"})


def module_info() -> Dict[str, Any]:
    """Version and parameters of the loaded synctcp modules (meta.json)."""
    return modctl.loaded_modules()


def git_describe() -> Optional[str]:
    try:
        res = subprocess.run(["git", "-C", str(REPO), "describe", "--always", "--dirty"],
                             capture_output=True, text=True, timeout=10)
        return res.stdout.strip() or None
    except (OSError, subprocess.SubprocessError):
        return None


# ---------------------------------------------------------------------------
# topology and plan of a case


def topology_builder(backend: str = "netns") -> Callable[[Case, str], Topology]:
    """The function that builds a case's topology on ``backend`` (:mod:`.backends`).

    ``netns``: :func:`build_topology` (``ip netns``, veths, tc).  ``mininet``:
    the same topology built by Mininet, its hosts' namespaces named as the
    testbed names them (``synctcp_mininet.backend``), so everything after
    the build is this module's unchanged code.
    """
    try:
        return backends.get(backend)
    except backends.BackendError as exc:
        raise RunError(str(exc)) from exc


def pair_nodes(sc: Scenario) -> List[Tuple[str, str]]:
    """(sender-side node, receiver-side node) of each end-to-end pair."""
    n = len(sc.topology.rtts_ms)
    if sc.topology.kind == "dumbbell":
        return [(f"s{i}", f"r{i}") for i in range(1, n + 1)]
    return [(f"a{i}", f"b{i}") for i in range(1, n + 1)]


def plan_case(case: Case, topo: Topology) -> Plan:
    """The flows of a case: who sends to whom, with which algorithm, on which ports."""
    sc, tr = case.scenario, case.scenario.traffic
    plan = Plan(http_cc=case.cc)
    if tr.cbr:
        plan.cbr_kbit, plan.cbr_bytes = tr.cbr.rate_kbit, tr.cbr.pkt_bytes
    pairs = pair_nodes(sc)
    k = 0
    # each flow's jitter: the k-th draw of the case's seed, whatever else the case runs
    jitter = random.Random(f"start:{sc.seed}")

    def add(group: str, cc: str, src: str, dst: str, rtt: float, kind: str = "bulk") -> None:
        nonlocal k
        port = (CBR_PORT if kind == "cbr" else BULK_PORT) + k
        plan.flows.append(Flow(f"f{k + 1:02d}", group, cc, src, dst, port, CPORT + k, rtt,
                               start_s=k * tr.stagger_s + round(jitter.uniform(
                                   0, tr.start_jitter_s), 3), kind=kind, src_addr=topo.addr(src),
                               dst_addr=topo.addr(dst)))
        k += 1

    if tr.bulk_fwd:
        for i, ((s, r), rtt) in enumerate(zip(pairs, sc.topology.rtts_ms)):
            cc = tr.minority_of if (tr.minority_of and i > 0) else case.cc
            for _ in range(tr.flows_per_pair):
                add("fwd" if not tr.minority_of or i > 0 else "minority", cc, s, r, rtt)
    if tr.bulk_rev:
        for i, ((s, r), rtt) in enumerate(zip(pairs, sc.topology.rtts_ms), 1):
            if not tr.rev_pairs or i in tr.rev_pairs:
                for _ in range(tr.flows_per_pair):
                    add("rev", tr.rev_cc or case.cc, r, s, rtt)
    if tr.cross and sc.topology.kind != "dumbbell":
        cross_hops = (sc.topology.cross_hops if sc.topology.kind == "parking-lot"
                      else range(sc.topology.hops))
        for h in cross_hops:
            for j in range(1, sc.topology.cross_pairs + 1):
                rtt = sc.topology.cross_rtt_ms or 6 * sc.topology.link_delay_ms
                add("cross", tr.minority_of or case.cc, f"x{h}s{j}", f"x{h}r{j}", rtt)
    if tr.cbr:
        for i in tr.cbr.pairs:
            if not 1 <= i <= len(pairs):
                raise RunError(f"traffic.cbr.pairs: no pair {i}")
            s, r = pairs[i - 1]
            add("cbr", "udp", s, r, sc.topology.rtts_ms[i - 1], kind="cbr")
    if tr.http_load_pct:
        n = tr.http_pairs
        for s, r in pairs[:n]:
            plan.http.append(HttpPair(s, r, topo.addr(s), tr.http_load_pct / n))
    return plan


# ---------------------------------------------------------------------------
# scripts


def _q(args: Sequence[Any]) -> str:
    return " ".join(shlex.quote(str(a)) for a in args)


def _background_script(lines: List[str]) -> str:
    """A script of background jobs that ends only when they have all ended.

    The runner stops a script with SIGINT to its process group.  A plain
    ``wait`` returns at once on it, so the runner would read a sampler's
    CSV while the sampler is still flushing it (a truncated last row); the
    background jobs ignore SIGINT unless they catch it, and every one of
    ours catches it.  The trap keeps the shell alive, and the second
    ``wait`` waits for the jobs to finish.
    """
    return "\n".join(["trap : INT TERM", *lines, "wait", "wait"]) + "\n"


def http_seed(seed: int, client: int) -> int:
    """The seed of HTTP client number ``client`` (0-based) of a case with ``seed``."""
    return seed * 1000 + client


def nginx_setup(plan: Plan, home: Path, rate_mbit: float, seconds: float, seed: int) -> None:
    """nginx's directory ``home/SERVER`` for each HTTP server of ``plan``: its
    configuration and a file for every response size its client will ask for."""
    from .http import response_sizes
    from .nginx import conf, make_www

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
    asyncio server of ``http.py``."""
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
                     f"{_q([py, '-m', 'synctcp_testbed.http', 'server', '--port', HTTP_PORT, '--cc', cc, '--max-seconds', int(duration + 120)])}"
                     f" > {shlex.quote(str(case_dir / f'httpd-{h.server}.json'))} "
                     f"2> {shlex.quote(str(case_dir / f'httpd-{h.server}.log'))} &")
    return _background_script(lines)


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
    """How long flow ``f`` sends: past the measured interval by TAIL_S."""
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
                   flowgen_bin: str = "flowgen") -> str:
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
                          go_file=bdir / ".go")
        by_hand = fg_command(flowgen_bin, case_dir / FLOWGEN_CONF, case_dir / FLOWGEN_OUT,
                             limit_s=limit_for(specs))
        lines.append(f"# by hand, without the barrier (go is a line on stdin): "
                     f"echo go | {_q(by_hand)}")
        lines.append(f"{{ {_q(argv)} > /dev/null 2> {shlex.quote(str(case_dir / FLOWGEN_LOG))}; "
                     f"echo $? > {shlex.quote(str(case_dir / FLOWGEN_STATUS))}; }} &")
    for i, h in enumerate(plan.http):
        args = [py, "-m", "synctcp_testbed.http", "client", "--server", f"{h.server_addr}:{HTTP_PORT}",
                "--load-pct", f"{h.load_pct:g}", "--capacity-mbit", f"{rate_mbit:g}",
                "--seconds", f"{duration + TAIL_S:g}", "--seed", http_seed(seed, i),
                "--group", h.client, "--out", case_dir / f"http-{h.client}.csv",
                "--cc", plan.http_cc]
        lines.append(held(topo.ns(h.client), args, case_dir / f"httpc-{h.client}.json",
                          case_dir / f"httpc-{h.client}.log"))
    return _background_script(lines)


def client_count(plan: Plan) -> int:
    """Processes that announce themselves at the start barrier: flowgen, HTTP clients."""
    return (1 if plan.flows else 0) + len(plan.http)


# ---------------------------------------------------------------------------
# running one case


class CaseRun:
    """One case: topology up, samplers, traffic, metrics, topology down."""

    def __init__(self, case: Case, case_dir: Path, prefix: str = "st",
                 log: Callable[[str], None] = lambda s: None,
                 queue_hz: float = 100.0, diag_hz: Optional[float] = None,
                 capture: bool = False, backend: str = "netns"):
        self.case, self.dir, self.prefix, self.log = case, case_dir, prefix, log
        self.capture = capture
        self.backend = backend
        self.build_topology = topology_builder(backend)
        self.queue_hz = queue_hz
        in_vm = os.environ.get("SYNCTCP_IN_VM") == "1"
        self.diag_hz = diag_hz or (2.0 if in_vm else 10.0)
        self.procs: List[subprocess.Popen] = []
        #: nginx's files (HTTP cases with http_server = "nginx"), removed with the processes
        self.nginx_home: Optional[Path] = None
        self.diag: Optional[subprocess.Popen] = None
        self.barrier = Path("/nonexistent")
        self.wall0 = time.time()

    def run(self) -> Dict[str, Any]:
        case = self.case
        self.dir.mkdir(parents=True, exist_ok=True)
        restore: Dict[str, str] = {}
        for cc in case_ccs(case):
            ensure_cc(cc)
            before = set_variant(cc, case.scenario.variant)
            if before is not None and before != case.scenario.variant:
                restore[cc] = before
        try:
            return self._run_case(case)
        finally:
            for cc, before in restore.items():     # a native host keeps its own setting
                with contextlib.suppress(RunError):
                    set_variant(cc, before)

    def _run_case(self, case: Case) -> Dict[str, Any]:
        topo = self.build_topology(case, self.prefix)
        # the diag sampler imports for seconds under emulation: let it do so
        # while the namespaces are built
        self._start_diag()
        t_build = time.monotonic()
        try:
            with topo:
                self.log(f"{case.id}: topology of {len(topo.nodes)} namespaces built in "
                         f"{time.monotonic() - t_build:.1f} s ({self.backend})")
                (self.dir / "topology.sh").write_text(topo.script)
                for node in topo.nodes.values():
                    if not node.router:
                        _set_default_cc(topo.ns(node.name), case.cc)
                plan = plan_case(case, topo)
                try:
                    t0 = self._traffic(topo, plan)
                finally:
                    self._stop_all()
                self._save_qdiscs(topo)
                return self._collect(topo, plan, t0)
        finally:
            self._stop_all()

    def _save_qdiscs(self, topo: Topology) -> None:
        """Every router's qdiscs with their final counters (``tc -s -j``) to qdiscs.json."""
        routers = [n for n in topo.nodes if topo.nodes[n].router]
        script = "".join(f"echo '#{n}'; tc -n {topo.ns(n)} -s -j qdisc show; echo\n"
                         for n in routers)
        out = subprocess.run(["sh", "-c", script], capture_output=True, text=True).stdout
        result: Dict[str, Any] = {}
        node = None
        for line in out.splitlines():
            if line.startswith("#"):
                node = line[1:]
            elif line.strip() and node:
                try:
                    result[node] = json.loads(line)
                except json.JSONDecodeError:
                    result[node] = line
        (self.dir / "qdiscs.json").write_text(json.dumps(result, indent=1))

    # -- processes -------------------------------------------------------------
    def _spawn(self, script: str, name: str) -> subprocess.Popen:
        (self.dir / name).write_text(script)
        proc = subprocess.Popen(["sh", str(self.dir / name)], start_new_session=True,
                                stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
        self.procs.append(proc)
        return proc

    def _start_diag(self) -> None:
        py = os.environ.get("SYNCTCP_PYTHON", sys.executable)
        dur = self.case.scenario.duration_s
        ready = open(self.dir / ".ready-diag", "w")
        self.diag = subprocess.Popen(
            [py, "-m", "synctcp_testbed.sampler", "--diag-stdin", "--hz", str(self.diag_hz),
             "--max-seconds", str(dur + 600)],
            stdin=subprocess.PIPE, stdout=ready, stderr=subprocess.PIPE, text=True,
            start_new_session=True)
        ready.close()
        self.procs.append(self.diag)

    def _stop_all(self) -> None:
        for proc in reversed(self.procs):
            if proc.poll() is None:
                try:
                    os.killpg(proc.pid, signal.SIGINT)
                except ProcessLookupError:
                    pass
        deadline = time.monotonic() + 30
        for proc in self.procs:
            try:
                proc.wait(timeout=max(0.1, deadline - time.monotonic()))
            except subprocess.TimeoutExpired:
                os.killpg(proc.pid, signal.SIGKILL)
                proc.wait()
        self.procs.clear()
        if self.nginx_home is not None:
            shutil.rmtree(self.nginx_home, ignore_errors=True)
            self.nginx_home = None

    def _measured(self, topo: Topology) -> List[Tuple[str, str, str, str]]:
        core = [p for p in topo.sample_points() if _is_core(p[0])]
        want = self.case.scenario.topology.measure
        if want:
            unknown = set(want) - {p[0] for p in core}
            if unknown:
                raise RunError(f"topology.measure: no core link {', '.join(sorted(unknown))}; "
                               f"links: {', '.join(p[0] for p in core)}")
            core = [p for p in core if p[0] in want]
        return core

    def _traffic(self, topo: Topology, plan: Plan) -> float:
        sc = self.case.scenario
        dur = sc.duration_s
        qs = qsampler_path()
        lines = []
        # one qsampler for every measured link: one wake-up per sample for all
        targets: List[Any] = []
        for label, ns, dev, parent in self._measured(topo):
            targets += ['-n', ns, '-i', dev, '-p', parent, '-o', self.dir / f'queue-{label}.csv']
        if targets:
            lines.append(qsampler_line([qs, *targets, '-r', self.queue_hz, '-d', dur + 600],
                                       self.dir))
        senders = sorted({f.src for f in plan.flows if f.kind == "bulk"} | {h.server for h in plan.http})
        assert self.diag.stdin is not None
        self.diag.stdin.write(" ".join(f"{topo.ns(n)}:*:{self.dir / f'tcp-{n}.jsonl'}"
                                       for n in senders) + "\n")
        self.diag.stdin.close()
        if self.capture and plan.flows:
            lines.append(self._capture_cmd(topo, plan.flows[0]))
        for name in (QSAMPLER_STATUS, ".ready-q"):     # not a previous run's
            (self.dir / name).unlink(missing_ok=True)
        self._spawn(_background_script(lines), "samplers.sh")
        if plan.http:
            home = None
            if sc.traffic.http_server == "nginx":
                home = self.nginx_home = Path(tempfile.mkdtemp(prefix="synctcp-nginx-"))
                nginx_setup(plan, home, sc.topology.rate_mbit, dur + TAIL_S, sc.seed)
            self._spawn(servers_script(plan, topo, self.dir, dur, home), "servers.sh")
        if self.capture and plan.flows:
            self._snapshot(topo, plan.flows[0].src, dur)
        self._wait_ready(([self.dir / ".ready-q"] if targets else [])
                         + ([self.dir / ".ready-diag"] if senders else []))
        self._wait_listening(topo, plan)
        self.log(f"{self.case.id}: {len(plan.flows)} flows"
                 f"{f', HTTP on {len(plan.http)} pairs' if plan.http else ''}, {dur:g} s")
        fg_bin = "flowgen"
        if plan.flows:
            fg_bin = flowgen_path()
            (self.dir / FLOWGEN_CONF).write_text(flowgen_config(plan, topo, dur))
            for name in (FLOWGEN_OUT, FLOWGEN_STATUS):
                (self.dir / name).unlink(missing_ok=True)
        self.barrier = Path(tempfile.mkdtemp(prefix="synctcp-barrier-"))
        os.mkfifo(self.barrier / ".go")
        clients = self._spawn(clients_script(plan, topo, self.dir, dur, sc.seed,
                                             sc.topology.rate_mbit, self.barrier, fg_bin),
                              "traffic.sh")
        try:
            t0 = self._release(clients, client_count(plan))
        finally:
            shutil.rmtree(self.barrier, ignore_errors=True)
        try:
            clients.wait(timeout=dur + 180)
        except subprocess.TimeoutExpired:
            raise RunError(f"{self.case.id}: traffic did not finish within {dur + 180:g} s")
        if plan.flows:
            self._flowgen_failed("flowgen", accept=(0, 1))
        return t0

    def _flowgen_failed(self, what: str, accept: Tuple[int, ...] = (0,)) -> None:
        """RunError with flowgen's message if it exited with a status not in ``accept``."""
        status = _read(self.dir / FLOWGEN_STATUS)
        if status is None or not status.isdigit() or int(status) in accept:
            return
        log = (_read(self.dir / FLOWGEN_LOG) or "").splitlines()
        raise RunError(f"{self.case.id}: {what} exited with status {status}: "
                       f"{log[-1] if log else 'no message'}")

    def _release(self, clients: subprocess.Popen, n: int, timeout: float = 300) -> float:
        """Wait until all ``n`` clients wait at the barrier, release them; the start time."""
        launched = self.barrier / ".launched"
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            have = launched.read_text().count("\n") if launched.exists() else 0
            if have >= n:
                break
            self._flowgen_failed("flowgen")
            if clients.poll() is not None:
                raise RunError(f"{self.case.id}: the clients' script ended before they started")
            time.sleep(0.1)
        else:
            raise RunError(f"{self.case.id}: only {have} of {n} clients started in {timeout:g} s")
        fd = os.open(self.barrier / ".go", os.O_WRONLY)
        time.sleep(0.5)     # a client between its echo and its open still gets through
        os.close(fd)
        self.wall0 = time.time()
        return time.monotonic()

    def _snapshot(self, topo: Topology, node: str, duration: float) -> None:
        """``synctcp ss --watch`` of ``node``'s sockets through the run, to CASE/ss.txt.

        Started before the traffic: Python takes tens of seconds to start in
        an emulated VM, so it must be up by the time the flows are.
        """
        every = max(2.0, duration / 10)
        args = ["ss", "--watch", f"{every:g}", "--count", "14"]
        cmd = ["ip", "netns", "exec", topo.ns(node), sys.executable, "-m", "synctcp.cli", *args]
        out = open(self.dir / "ss.txt", "w")
        out.write(f"$ ip netns exec {topo.ns(node)} synctcp {' '.join(args)}\n")
        out.flush()
        self.procs.append(subprocess.Popen(cmd, stdout=out, stderr=subprocess.STDOUT,
                                           start_new_session=True))
        out.close()

    def _capture_cmd(self, topo: Topology, flow: Flow) -> str:
        """tcpdump of ``flow``'s headers at its sender (for ``synctcp trace/correlate``)."""
        # tcpdump writes to its standard output, which the shell opens: a
        # file tcpdump opens itself it chowns to its unprivileged user, and
        # on UML's hostfs (the host user nobody) that fails and leaves a
        # capture of its header only
        link = next(lk for lk in topo.links if flow.src in (lk.a, lk.b))
        args = ["tcpdump", "-i", topo.dev(flow.src, link), "-s", "128", "-U",
                "-c", str(CAPTURE_MAX_PACKETS), "-w", "-", f"tcp port {flow.port}"]
        return (f"ip netns exec {topo.ns(flow.src)} {_q(args)} "
                f"> {shlex.quote(str(self.dir / f'{flow.id}.pcap'))} "
                f"2> {shlex.quote(str(self.dir / 'tcpdump.log'))} &")

    def _correlation(self, flow: Flow) -> Dict[str, Any]:
        """Martin et al.'s loss-delay correlation (CIM, LCDC, delay CDF) on the
        RTT and on the OTT of ``flow``, from its capture (``synctcp correlate``,
        docs/correlate.md), over the whole flow, or over its first
        CAPTURE_MAX_PACKETS packets, which ``capture`` then says (and the log).
        A capture without the flow's data is a RunError with tcpdump's last
        line: never an empty figure."""
        from synctcp.correlate import correlate_flow
        from synctcp.pcap import PcapError, read_tcp
        from synctcp.trace import select_flows, trace_packets

        path = self.dir / f"{flow.id}.pcap"
        log = (_read(self.dir / "tcpdump.log") or "").strip().splitlines()
        why = f"tcpdump: {log[-1]}" if log else "tcpdump said nothing"
        try:
            packets, _ = read_tcp(path)
        except (OSError, PcapError) as exc:
            raise RunError(f"{self.case.id}: capture {path.name}: {exc} ({why})") from exc
        traces = select_flows(trace_packets(packets), str(flow.port))
        if not traces:
            raise RunError(f"{self.case.id}: capture {path.name} holds no data of flow "
                           f"{flow.id} ({len(packets)} TCP packets; {why})")
        out = correlate_flow(max(traces, key=lambda t: len(t.samples)))
        out["capture"] = {"packets": len(packets), "limit": CAPTURE_MAX_PACKETS,
                          "truncated": len(packets) >= CAPTURE_MAX_PACKETS,
                          "span_s": round(packets[-1].t - packets[0].t, 6)}   # capture order
        if out["capture"]["truncated"]:
            self.log(f"{self.case.id}: the capture stopped at {CAPTURE_MAX_PACKETS:,} packets, "
                     f"the first {out['capture']['span_s']:.1f} s of {flow.id}: its correlation "
                     f"covers only those")
        return out

    def _wait_ready(self, files: List[Path], timeout: float = 300) -> None:
        """Wait until every sampler wrote "ready" to its file of ``files``.

        A sampler that ends first is a RunError with its last line of
        stderr, at once: qsampler's exit status is ``QSAMPLER_STATUS``
        (its shell's bare ``wait`` would hide it), the inet_diag sampler's
        the process's own.
        """
        deadline = time.monotonic() + timeout
        pending = list(files)
        while pending and time.monotonic() < deadline:
            pending = [f for f in pending if not (f.exists() and "ready" in f.read_text())]
            if pending:
                status = _read(self.dir / QSAMPLER_STATUS)
                if status is not None and self.dir / ".ready-q" in pending:
                    log = (_read(self.dir / QSAMPLER_LOG) or "").splitlines()
                    raise RunError(f"{self.case.id}: qsampler exited with status {status} "
                                   f"before it was ready: {log[-1] if log else 'no message'}")
                if (self.diag is not None and self.dir / ".ready-diag" in pending
                        and self.diag.poll() is not None):
                    err = (self.diag.stderr.read() if self.diag.stderr else "").strip()
                    raise RunError(f"{self.case.id}: the inet_diag sampler exited with status "
                                   f"{self.diag.returncode} before it was ready: "
                                   f"{err.splitlines()[-1] if err else 'no message'}")
                time.sleep(0.2)
        if pending:
            raise RunError(f"samplers not ready after {timeout:g} s: {[f.name for f in pending]}")

    def _wait_listening(self, topo: Topology, plan: Plan, timeout: float = 300) -> None:
        # flowgen creates the flows' receivers itself before it reports ready
        want: Dict[str, set] = {}
        for h in plan.http:
            want.setdefault(h.server, set()).add((HTTP_PORT, "bulk"))
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            missing = [(n, p) for n, ports in want.items()
                       for p in ports - _listening(topo.ns(n))]
            if not missing:
                return
            time.sleep(0.3)
        raise RunError(f"servers not listening after {timeout:g} s: {missing[:5]}")

    # -- results ----------------------------------------------------------------
    def _flowgen(self, plan: Plan) -> Optional[FlowgenResult]:
        """flowgen's result (None for a case without bulk or CBR flows)."""
        if not plan.flows:
            return None
        try:
            return load_result(self.dir / FLOWGEN_OUT)
        except FlowgenError as exc:
            log = (_read(self.dir / FLOWGEN_LOG) or "").splitlines()
            raise RunError(f"{self.case.id}: {exc}"
                           f"{f' ({log[-1]})' if log else ''}") from None

    def _window(self, plan: Plan, t0: float,
                fg: Optional[FlowgenResult] = None) -> Tuple[float, float, float]:
        """The measured interval, from when the flows really started.

        The interval begins ``warmup`` after the last flow started (rounded
        up to flowgen's interval grid, so that whole receiver intervals
        fill it) and lasts ``duration - warmup``, cut short at the grid
        point before the first flow stopped sending.  Returns (t_start,
        t_end, go), CLOCK_MONOTONIC; go is flowgen's time 0 (the release
        time ``t0`` without flowgen).
        """
        sc = self.case.scenario
        if fg is None:
            t_start = t0 + sc.warmup_s
            return t_start, t_start + (sc.duration_s - sc.warmup_s), t0
        go, step = fg.go_monotonic, fg.interval_s
        started = [f.started for f in fg.flows.values() if f.started is not None]
        stopped = [f.stopped for f in fg.flows.values() if f.stopped is not None]
        if not started:
            raise RunError(f"{self.case.id}: flowgen started no flow"
                           f"{f' ({fg.stopped})' if fg.stopped else ''}")
        rel_start = math.ceil((max(started) + sc.warmup_s) / step - 1e-9) * step
        rel_end = rel_start + math.floor((sc.duration_s - sc.warmup_s) / step + 1e-9) * step
        if stopped:
            rel_end = min(rel_end, math.floor(min(stopped) / step + 1e-9) * step)
        t_start, t_end = go + rel_start, go + rel_end
        if t_end - t_start < 0.5 * (sc.duration_s - sc.warmup_s):
            self.log(f"{self.case.id}: [yellow]flows started {max(started):.0f} s after their "
                     f"release: measured only {t_end - t_start:.1f} s[/yellow]")
        if t_end <= t_start:
            raise RunError(f"{self.case.id}: no measured interval left (flows started "
                           f"{max(started):.0f} s late; raise duration_s)")
        return t_start, t_end, go

    def _collect(self, topo: Topology, plan: Plan, t0: float) -> Dict[str, Any]:
        sc = self.case.scenario
        fg = self._flowgen(plan)
        t_start, t_end, go = self._window(plan, t0, fg)
        bottlenecks = []
        rate = sc.topology.rate_mbit
        for label, _, _, _ in self._measured(topo):
            samples = read_samples(self.dir / f"queue-{label}.csv")
            try:
                q = queue_stats(samples, rate_mbit=rate, start_s=t_start, end_s=t_end)
            except ValueError as exc:
                raise RunError(f"{self.case.id}: queue of {label}: {exc}") from exc
            kept = [s for s in samples if t_start <= s["t"] <= t_end]
            marks = int(kept[-1].get("marks", 0) - kept[0].get("marks", 0))
            offered = q.sent_pkts + q.drops
            bottlenecks.append({"link": label, "rate_mbit": rate, **asdict(q), "marks": marks,
                                "mark_pct": 100.0 * marks / offered if offered else 0.0})
        flows = []
        if fg is not None:
            for f in plan.flows:
                res = fg.flows.get(f.id)
                if res is None:
                    raise RunError(f"{self.case.id}: flowgen reported nothing of flow {f.id}")
                flows.append(flow_result(self.case.id, f, res, t_start - go, t_end - go))
        (self.dir / "flows.json").write_text(json.dumps(flows, indent=1))
        http = self._http_result(plan, t_start, t_end)
        fwd = [f for f in flows if f["group"] in ("fwd", "minority")]
        return {
            "id": self.case.id, "cc": self.case.cc, "aqm": self.case.aqm, "point": self.case.point,
            "group": self.case.group, "seed": self.case.seed,
            "t_traffic": t0, "t_start": t_start, "t_end": t_end, "duration_s": t_end - t_start,
            "bottlenecks": bottlenecks,
            "goodput_mbit": sum(f["goodput_mbit"] for f in fwd),
            "retransmits": sum(f["retransmits"] for f in fwd),
            "flows": [{k: f[k] for k in ("id", "group", "cc", "goodput_mbit", "retransmits",
                                         "base_rtt_ms", "udp_lost_pct")} for f in flows],
            "http": http,
            "correlation": (self._correlation(plan.flows[0])
                            if self.capture and plan.flows else None),
            "platform_ceiling_mbit": None,
        }

    def _http_result(self, plan: Plan, t_start: float, t_end: float) -> Optional[Dict[str, Any]]:
        """HTTP metrics of the responses that started in the measured interval."""
        if not plan.http:
            return None
        from .http import http_metrics, read_http_csv

        rows = []
        for h in plan.http:
            path = self.dir / f"http-{h.client}.csv"
            if path.exists():
                rows += [r for r in read_http_csv(path) if t_start <= r.t_start <= t_end]
        with open(self.dir / "http.csv", "w") as out:
            from .http import CSV_FIELDS
            out.write(",".join(CSV_FIELDS) + "\n")
            for h in plan.http:
                path = self.dir / f"http-{h.client}.csv"
                if path.exists():
                    out.writelines(path.read_text().splitlines(keepends=True)[1:])
        if not rows:
            raise RunError(f"{self.case.id}: the HTTP clients recorded no response")
        return http_metrics(rows)


def _set_default_cc(ns: str, cc: str) -> None:
    """Make ``cc`` the default algorithm of namespace ``ns``, or raise RunError.

    Never another one in its place: a case that does not run its algorithm
    measures nothing.
    """
    path = Path("/proc/sys/net/ipv4/tcp_congestion_control")
    try:
        with in_netns(ns):
            path.write_text(cc)
            got = path.read_text().strip()
    except OSError as exc:
        raise RunError(f"{ns}: cannot make {cc} the default congestion control: "
                       f"{exc.strerror or exc}") from exc
    if got != cc:
        raise RunError(f"{ns}: the default congestion control is {got}, not {cc}")


def flow_result(case_id: str, f: Flow, res: FlowResult, start: float,
                end: float) -> Dict[str, Any]:
    """Flow ``f``'s record of flows.json from flowgen's ``res``.

    Goodput: the receiver's bytes of the intervals wholly inside [start,
    end] (seconds from flowgen's go) over their length.  Retransmissions:
    the sender's over the same interval (``retransmits``; over the whole
    flow: ``retransmits_total``).  A flow that failed, that ran another
    algorithm than ``f.cc``, or whose sender was not sampled at ``end``
    is a RunError.
    """
    if res.error:
        raise RunError(f"{case_id}: flow {f.id} ({f.src}->{f.dst}): {res.error}")
    if f.kind == "bulk" and res.cc != f.cc:
        raise RunError(f"{case_id}: flow {f.id} ran {res.cc or 'an unknown algorithm'}, "
                       f"not {f.cc}")
    nbytes, secs = window_bytes(res.intervals, start, end)
    retrans = 0
    if f.kind == "bulk":
        got = window_retrans(res.retrans, start, end)
        if got is None:
            raise RunError(f"{case_id}: flowgen recorded no retransmission count of flow "
                           f"{f.id} at the end of the measured interval ({end:g} s)")
        retrans = got
    return {**asdict(f), "sport": f.cport, "dport": f.port, "bytes": nbytes,
            "goodput_mbit": nbytes * 8 / secs / 1e6 if secs > 0 else 0.0,
            "retransmits": retrans, "retransmits_total": int(res.retransmits or 0),
            "udp_lost_pct": res.lost_pct if f.kind == "cbr" else None}


def _is_core(label: str) -> bool:
    base = label[:-4] if label.endswith("-rev") else label
    return base == "lr" or (base[:1] == "r" and [p.isdigit() for p in base[1:].split("r")] == [True, True])


def _listening(ns: str) -> set:
    """(port, kind) of TCP listeners and bound UDP sockets in ``ns``."""
    out = set()
    with in_netns(ns):
        for path, kind, state in (("/proc/self/net/tcp", "bulk", "0A"),
                                  ("/proc/self/net/tcp6", "bulk", "0A"),
                                  ("/proc/self/net/udp", "cbr", None)):
            try:
                lines = Path(path).read_text().splitlines()[1:]
            except OSError:
                continue
            for ln in lines:
                parts = ln.split()
                if state is None or parts[3] == state:
                    out.add((int(parts[1].rsplit(":", 1)[1], 16), kind))
    # iperf3 -s listens on TCP even for UDP tests
    return out | {(p, "cbr") for p, k in out if k == "bulk"}


# ---------------------------------------------------------------------------
# a whole scenario


def run_scenario(sc: Scenario, out: Path, ccs: Optional[List[str]] = None,
                 aqms: Optional[List[str]] = None, command: Optional[List[str]] = None,
                 log: Callable[[str], None] = print, progress: Any = None,
                 capture: bool = False, backend: str = "netns",
                 platform: Optional[str] = None, jobs: Optional[int] = None,
                 pool: Any = None, resume: bool = False) -> Path:
    """Run every case of ``sc`` into directory ``out`` on ``backend``; returns it.

    ``platform`` (native, kvm, uml, tcg; default: ``SYNCTCP_PLATFORM``, else
    native where this host loads modules, else uml) says where the cases
    run, ``jobs`` how many at once (uml only; default: the host's cores), or
    ``pool`` (an :class:`~synctcp_testbed.executor.CasePool`, e.g. a Dask
    cluster; uml only) runs them.  ``resume``: ``out`` holds an earlier run
    of the same cases; only those without a ``result.json`` run.
    Raises :class:`RunError` naming the cases that failed, after the others ran.
    """
    from .executor import CaseFailed, check_jobs, execute, prepare, write_plan
    from .platforms import PlatformError, choose

    topology_builder(backend)       # refuse an unusable backend before anything runs
    try:
        plat = choose(platform)
        njobs = check_jobs(plat, jobs)
        if pool is not None and (plat.here or plat.name != "uml"):
            raise PlatformError(f"a {pool.kind} cluster runs cases on the uml platform only "
                                f"(simulated time), not on {plat.name}")
    except PlatformError as exc:
        raise RunError(str(exc)) from exc
    cases = sc.cases(ccs, aqms)
    if plat.here:       # elsewhere each instance's worker does it (CaseRun)
        for cc in sorted({cc for c in cases for cc in case_ccs(c)}):
            ensure_cc(cc)
    out.mkdir(parents=True, exist_ok=True)
    skipped = []
    if plat.name == "tcg":
        keep = [c for c in cases if c.scenario.topology.rate_mbit <= sc.tcg_max_rate_mbit]
        skipped = [c.id for c in cases if c not in keep]
        cases = keep
    for c in skipped:
        log(f"skipped {c}: above {sc.tcg_max_rate_mbit:g} Mbit/s, more than this emulated "
            f"VM forwards (--platform uml runs it on simulated time)")
    earlier = {c.id: r for c in cases if (r := _load_json(out / c.id / "result.json"))} \
        if resume else {}
    todo = [c for c in cases if c.id not in earlier]
    for cid, r in earlier.items():      # as execute gives it: with the instance's cost
        from .executor import uml_cost

        if plat.name == "uml" and not plat.here and (cost := uml_cost(out / cid)):
            r["cost"] = cost
    where = pool.describe() if pool is not None else (f"{njobs} at once" if njobs > 1 else "")
    log(f"platform {plat.name} ({plat.why}), {len(cases)} cases"
        + (f", {len(earlier)} done before, {len(todo)} to run" if resume else "")
        + (f", {where}" if where else ""))
    old_meta = _load_json(out / "meta.json") if resume else None
    if not resume:
        write_plan(out, sc.as_dict(), ccs, aqms)
    now = datetime.now(timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")
    meta: Dict[str, Any] = {
        "schema": 1, "scenario_name": sc.name, "scenario": sc.as_dict(), "seed": sc.seed,
        "started_utc": now,
        "command": command or sys.argv, "kernel": platform_mod.release(), "host": platform_mod.node(),
        "platform": plat.name, "platform_choice": plat.why,
        "time_mode": "simulated (time-travel=inf-cpu)" if plat.name == "uml" else "real",
        "jobs": njobs, "backend": backend, "capture": capture, "tool_version": __version__,
        "git": git_describe(), "modules": {}, "skipped_cases": skipped,
        "executor": pool.info() if pool is not None else {"kind": "local", "jobs": njobs},
    }
    if old_meta:
        meta["started_utc"] = old_meta.get("started_utc", now)
        meta["resumed"] = [*old_meta.get("resumed", []),
                           {"utc": now, "command": meta["command"], "ran": [c.id for c in todo],
                            "executor": meta["executor"]}]
    (out / "meta.json").write_text(json.dumps(meta, indent=1))
    try:
        meta.update(prepare(plat, log))
    except PlatformError as exc:
        raise RunError(str(exc)) from exc
    wall0 = time.monotonic()
    order = {c.id: i for i, c in enumerate(cases)}

    def merged(res: List[Dict[str, Any]]) -> List[Dict[str, Any]]:
        """This session's results and the earlier ones, in the order of the cases."""
        return sorted([*earlier.values(), *res], key=lambda r: order.get(r.get("id", ""), 0))

    def partial(res: List[Optional[Dict[str, Any]]]) -> None:
        _write_summary(out, sc, merged([r for r in res if r is not None]))

    def here(case: Case, cdir: Path) -> Dict[str, Any]:
        try:
            return CaseRun(case, cdir, log=log, capture=capture, backend=backend).run()
        except (RunError, TopologyError) as exc:
            raise CaseFailed(case.id, str(exc)) from exc

    if progress:
        for _ in earlier:
            progress()
    results, failed = execute(plat, todo, out, njobs, log, progress=progress,
                              capture=capture, backend=backend, on_result=partial,
                              run_here=here, pool=pool)
    results = merged(results)
    _platform_meta(meta, out, plat.here, [c.id for c in cases], time.monotonic() - wall0)
    (out / "meta.json").write_text(json.dumps(meta, indent=1))
    _fill_ceilings(results)
    _write_summary(out, sc, results)
    if failed:
        raise RunError("; ".join(f"{cid}: {why}" for cid, why in failed[:5])
                       + (f" (and {len(failed) - 5} more)" if len(failed) > 5 else ""))
    return out


def _platform_meta(meta: Dict[str, Any], out: Path, here: bool, ids: List[str],
                   wall: float) -> None:
    """Kernel, modules and wall cost of the run, from its cases' records."""
    hosts = [_load_json(out / i / "host.json") or {} for i in ids]
    if here:
        meta["modules"] = module_info()
    else:
        kernels = sorted({h["kernel"] for h in hosts if h.get("kernel")})
        if kernels:
            meta["kernel"] = kernels[0] if len(kernels) == 1 else kernels
        meta["modules"] = next((h["modules"] for h in hosts if h.get("modules")), {})
    cost: Dict[str, Any] = {"wall_s": round(wall, 1)}
    from .executor import uml_cost

    sims = [uml_cost(out / i) or {} for i in ids]
    sim = sum(m.get("command_sim_s") or 0 for m in sims)
    inst = sum(m.get("command_wall_s") or 0 for m in sims)
    if sim and inst:
        cost.update({"simulated_s": round(sim, 1), "instance_wall_s": round(inst, 1),
                     "simulated_per_wall_s": round(sim / inst, 3),
                     "userspace": sorted({m.get("userspace") for m in sims if m.get("userspace")}),
                     "uml_release": sorted({m.get("release") for m in sims if m.get("release")})})
    meta["wall_cost"] = cost
    # what the instances ran: the user-space image ("KEY CONTENT_SHA256", or
    # host) and the kernel binary's SHA256; a list when cases differ
    for key, field in (("uml_image", "image"), ("uml_kernel_sha256", "kernel_sha256")):
        got = sorted({m[field] for m in sims if m.get(field)})
        if got:
            meta[key] = got[0] if len(got) == 1 else got
    where = {i: w for i in ids if (w := _load_json(out / i / "where.json"))}
    if where:
        meta["case_where"] = where


def _fill_ceilings(results: List[Dict[str, Any]]) -> None:
    """Each case's platform ceiling: the goodput of the ceiling case at its sweep point."""
    ceil = {json.dumps(r["point"], sort_keys=True): r["goodput_mbit"]
            for r in results if r["aqm"] == "ceiling"}
    for r in results:
        r["platform_ceiling_mbit"] = ceil.get(json.dumps(r["point"], sort_keys=True))


def _write_summary(out: Path, sc: Scenario, results: List[Dict[str, Any]]) -> None:
    from .stats import groups

    summary = {"schema": 1, "scenario": sc.name, "repeat": sc.repeat, "seeds": sc.seeds(),
               "cases": results, "groups": groups(results)}
    tmp = out / "summary.json.tmp"
    tmp.write_text(json.dumps(summary, indent=1))
    tmp.replace(out / "summary.json")
