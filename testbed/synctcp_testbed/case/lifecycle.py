"""One case from start to finish, in this process: the case's lifecycle.

:class:`CaseRun`

1. builds the scenario's topology with the case's queue discipline, the
   case's algorithm as every sender's default (``tcp_congestion_control``
   is per network namespace), ECN on where the queue marks;
2. starts the queue sampler (C, ``qsampler``, 100 Hz, one process) on the
   measured links and one inet_diag sampler over all sending namespaces;
3. starts the HTTP servers, waits until all listen, then starts every
   client at once from one shell script (``traffic.sh`` in the case
   directory: the exact commands, replayable by hand; :mod:`.scripts`):
   every bulk and CBR flow, both ends, is one ``flowgen`` process (C, one
   epoll loop);
4. stops the samplers, collects the figures over the measured interval
   (:mod:`.collect`) and tears the topology down (also on errors and Ctrl-C).

The layout of the case directory is ``docs/testbed-rundir.md``.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any, Callable, Dict, List, Optional, Tuple

from ..network import backends
from ..network.netns import in_netns
from ..network.topology import Topology
from ..plan.flows import HTTP_PORT, Plan, PlanError, case_ccs, plan_case
from ..platform.helpers import flowgen_path, qsampler_path
from ..scenario import Case
from .collect import collect, measured_links, read_text, save_qdiscs
from .errors import RunError
from .kernel import (check_kernel, ensure_cc, module_info, restore_module_params,
                     set_module_params, set_variant)
from .scripts import (FLOWGEN_CONF, FLOWGEN_LOG, FLOWGEN_OUT, FLOWGEN_STATUS, QSAMPLER_LOG,
                      QSAMPLER_STATUS, TAIL_S, background_script, capture_line, client_count,
                      clients_script, flowgen_config, nginx_setup, qsampler_line, servers_script)


def topology_builder(backend: str = "netns") -> Callable[[Case, str], Topology]:
    """The function that builds a case's topology on ``backend``
    (:mod:`synctcp_testbed.network.backends`).

    ``netns``: ``build_topology`` (``ip netns``, veths, tc).  ``mininet``:
    the same topology built by Mininet, its hosts' namespaces named as the
    testbed names them (``synctcp_mininet.backend``), so everything after
    the build is the same code.
    """
    try:
        return backends.get(backend)
    except backends.BackendError as exc:
        raise RunError(str(exc)) from exc


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
        self.modules: Optional[Dict[str, Any]] = None

    def run(self) -> Dict[str, Any]:
        case = self.case
        self.dir.mkdir(parents=True, exist_ok=True)
        restore: Dict[str, str] = {}
        params_before: Dict[str, Dict[str, str]] = {}
        try:
            check_kernel(case.scenario, aqms=["droptail" if case.aqm == "ceiling" else case.aqm])
            for cc in case_ccs(case):
                ensure_cc(cc)
                before = set_variant(cc, case.scenario.variant)
                if before is not None and before != case.scenario.variant:
                    restore[cc] = before
                if cc in case.scenario.module_params:
                    params_before[cc] = set_module_params(cc, case.scenario.module_params[cc])
            #: the modules as the case ran them (version, parameters): host.json
            self.modules = module_info()
            return self._run_case(case)
        finally:
            for cc, before in restore.items():     # a native host keeps its own setting
                with contextlib.suppress(RunError):
                    set_variant(cc, before)
            for cc, old in params_before.items():
                restore_module_params(cc, old)

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
                try:
                    plan = plan_case(case, topo)
                except PlanError as exc:
                    raise RunError(str(exc)) from None
                try:
                    t0 = self._traffic(topo, plan)
                finally:
                    self._stop_all()
                save_qdiscs(topo, self.dir)
                return collect(case, self.dir, topo, plan, t0, self.capture, self.log)
        finally:
            self._stop_all()

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
            [py, "-m", "synctcp_testbed.measure.sampler", "--diag-stdin", "--hz", str(self.diag_hz),
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

    def _traffic(self, topo: Topology, plan: Plan) -> float:
        sc = self.case.scenario
        dur = sc.duration_s
        qs = qsampler_path()
        lines = []
        # one qsampler for every measured link: one wake-up per sample for all
        targets: List[Any] = []
        for label, ns, dev, parent in measured_links(self.case, topo):
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
            lines.append(capture_line(topo, plan.flows[0], self.dir))
        for name in (QSAMPLER_STATUS, ".ready-q"):     # not a previous run's
            (self.dir / name).unlink(missing_ok=True)
        self._spawn(background_script(lines), "samplers.sh")
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
                                             sc.topology.rate_mbit, self.barrier, fg_bin,
                                             sc.topology.window_bytes),
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
        status = read_text(self.dir / FLOWGEN_STATUS)
        if status is None or not status.isdigit() or int(status) in accept:
            return
        log = (read_text(self.dir / FLOWGEN_LOG) or "").splitlines()
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
                status = read_text(self.dir / QSAMPLER_STATUS)
                if status is not None and self.dir / ".ready-q" in pending:
                    log = (read_text(self.dir / QSAMPLER_LOG) or "").splitlines()
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
        """Wait until every HTTP server listens (flowgen creates the flows' receivers itself
        before it reports ready)."""
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
    return out
