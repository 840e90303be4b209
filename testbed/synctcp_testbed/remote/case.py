"""One case on real hosts: the same lifecycle as :mod:`synctcp_testbed.case.lifecycle`,
its processes started over SSH.

For a case, :class:`HostCase`

1. maps the scenario's end nodes onto the inventory's hosts (pair i's
   sender side on sender host i mod n, its receiver side on receiver host
   i mod m) and plans the flows between their ``data_address``es
   (:func:`synctcp_testbed.plan.flows.plan_case`, unchanged);
2. sets each end host's TCP sysctls as the namespace runner does (ECN for
   a marking queue, ``tcp_no_metrics_save``, buffers of 4 BDPs), loads the
   algorithms and sets their variant and parameters, routes each end host's
   peers with the scenario's window, initial window and MTU, and on an
   emulator host builds the bottleneck stages (netem delay, HTB rate, the
   queue) on its two interfaces and each flow's own delay
   (:mod:`.emulate`); a ``restore.sh`` on each host undoes all of it, also
   at the next contact after a host was lost;
3. reads every host's clock before, starts the samplers (the emulator's
   qsampler, each sender's inet_diag sampler), flowgen's
   receivers on the receiver hosts and its senders on the sender hosts
   (``--side``), releases receivers then senders, waits, stops, reads the
   clocks after;
4. copies everything back and writes the case directory in the layout of
   docs/testbed-rundir.md (one flowgen.json merged from the two sides, the
   queue and socket samples on one clock), so that
   :func:`synctcp_testbed.case.collect.collect` computes the figures as for
   any run; adds the one-way figures with their clock bound.

Every remote process runs under ``timeout`` (it ends by itself even if the
runner dies) with its pid recorded, and is stopped by that pid.
"""

from __future__ import annotations

import json
import shlex
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, Dict, List, Optional, Protocol, Tuple

from synctcp.modctl import module_of

from ..analysis.oneway import flat, oneway
from ..analysis.rundir import RunDirError, read_tcp_jsonl
from ..case.collect import collect
from ..case.errors import RunError
from ..case.kernel import VARIANT_CCS
from ..case.scripts import (CAPTURE_MAX_PACKETS, FLOWGEN_CONF, FLOWGEN_LOG, FLOWGEN_OUT,
                            FLOWGEN_STATUS, TAIL_S, flow_seconds, http_client_argv)
from ..network.backends import socket_buffers
from ..network.qdisc import Egress
from ..plan.flows import Flow, HttpPair, Plan, PlanError, http_seed, plan_case
from ..scenario import Case
from ..traffic.flowgen import FlowgenError, FlowSpec, config_text, limit_for, parse_result
from . import clocks, iperf
from .clocks import TIMEPAIR, clock_probe, pair_bound, worst
from .emulate import (DelayStage, HostTopology, delay_script, emulator_stages, flow_delays,
                      http_port, map_nodes, route_attrs, route_script)
from .inventory import Host, Inventory
from .merge import merge_flowgen, rebase_http_csv, rebase_jsonl, rebase_queue_csv
from .preflight import clock_of, parse_probe
from .ssh import Connections, HostError

Log = Callable[[str], None]

#: polling the hosts while a case runs: every this many seconds
POLL_S = 2.0
#: the jobs whose end is the end of a case's traffic (flowgen's sides, iperf3's clients)
TRAFFIC_JOBS = ("flowgen-", "iperf3-c-", "http-client-")
#: the file the HTTP clients of a host wait for
HTTP_GO = "go-http"


def flow_specs(flows: List[Flow], duration: float) -> List[FlowSpec]:
    """The flows as flowgen lines, each end in its host's own namespace ("-")."""
    return [FlowSpec(id=f.id, kind=f.kind, src_ns="-", dst_ns="-", src_addr=f.src_addr,
                     dst_addr=f.dst_addr, port=f.port, cport=f.cport,
                     cc="-" if f.kind == "cbr" else f.cc, start_s=f.start_s,
                     seconds=flow_seconds(f, duration),
                     rate_bps=0.0, pkt_bytes=0) for f in flows]


def _q(args: List[Any]) -> str:
    return " ".join(shlex.quote(str(a)) for a in args)


@dataclass
class Job:
    """A process started on a host: its name (files NAME.out/.err/.status/.pid)."""

    host: str
    name: str
    ready: bool = True          # prints "ready" on stdout when it is
    #: ready when its last line on stderr holds this instead (tcpdump: "listening on")
    ready_err: str = ""


@dataclass
class HostPart:
    """What one host does in a case."""

    host: Host
    send: List[Flow] = field(default_factory=list)
    recv: List[Flow] = field(default_factory=list)
    ccs: List[str] = field(default_factory=list)
    #: the HTTP pairs whose server (the responses' sender) / client is this host
    http_serve: List[HttpPair] = field(default_factory=list)
    http_fetch: List[HttpPair] = field(default_factory=list)


class HostCase:
    """One case of a run on the inventory's hosts (the run's :class:`RemoteRun`)."""

    def __init__(self, run: "RemoteRunLike", case: Case, case_dir: Path, log: Log):
        self.run_ctx, self.case, self.dir, self.log = run, case, case_dir, log
        self.inv: Inventory = run.inventory
        self.conn: Connections = run.connections
        self.jobs: List[Job] = []
        self.touched: List[str] = []            # hosts with a restore.sh of this case
        self._node_host: Dict[str, Host] = {}
        #: "before"/"after" -> host -> its ``synctcp clock --json`` reading
        self.discipline: Dict[str, Dict[str, Dict[str, Any]]] = {}
        #: (host, file in its case directory, name in ours) to copy back
        self._copies: List[Tuple[str, str, str]] = []
        #: (host, file): the HTTP clients' responses, each on its host's clock
        self._http_csv: List[Tuple[str, str]] = []
        #: an HTTP-only case's reference clock: a client host's clocks at the go
        self.http_ref: Dict[str, Any] = {}

    # -- paths -------------------------------------------------------------------
    def cw(self, host: Host) -> str:
        return f"{self.run_ctx.workdir(host)}/{self.case.id}"

    def bindir(self, host: Host) -> str:
        return f"{self.run_ctx.workdir(host)}/bin"

    def sh(self, host: Host, script: str, timeout: float = 60.0, check: bool = True) -> str:
        try:
            return self.conn[host.name].run(script, timeout=timeout, check=check).out
        except HostError as exc:
            raise RunError(f"{self.case.id}: {exc}"
                           f"{' (lost during the case)' if exc.lost else ''}") from exc

    # -- the case -----------------------------------------------------------------------
    def run(self) -> Dict[str, Any]:
        case = self.case
        self.dir.mkdir(parents=True, exist_ok=True)
        node_host = map_nodes(case, self.inv)
        self._node_host = node_host
        egress = emulator_stages(case, self.inv)
        topo = HostTopology(node_host, self.inv.emulator, egress)
        try:
            plan = plan_case(case, topo)        # type: ignore[arg-type]
        except PlanError as exc:
            raise RunError(str(exc)) from None
        if not plan.flows and not plan.http:
            raise RunError(f"{case.id}: no flow and no HTTP pair to run")
        delays = flow_delays(case, plan)
        parts = self._parts(plan, node_host)
        hosts = [p.host for p in parts.values()] + ([self.inv.emulator] if self.inv.emulator
                                                    else [])
        (self.dir / "hosts.json").write_text(json.dumps(
            {"nodes": {n: h.name for n, h in node_host.items()},
             "inventory": self.inv.public()}, indent=1))
        try:
            for h in hosts:
                self.run_ctx.clean_stale(h)
                self.sh(h, f"rm -rf {shlex.quote(self.cw(h))} && mkdir -p {shlex.quote(self.cw(h))}")
            self._setup(parts, egress, delays, plan)
            before = self._clocks(parts, "before")
            pairs0 = self._timepairs(hosts)
            t0 = self._traffic(parts, egress, plan)
            after = self._clocks(parts, "after")
            self._fetch(parts, hosts, egress, pairs0)
        finally:
            self._cleanup(hosts)
        pairs = sorted({(node_host[f.src].name, node_host[f.dst].name) for f in plan.flows
                        if f.group in ("fwd", "minority")})
        bounds = [pair_bound(self.inv.host(s), self.inv.host(r), before, after)
                  for s, r in pairs]
        result = collect(case, self.dir, topo, plan, t0, case.scenario.capture,  # type: ignore[arg-type]
                         self.log)
        bound, basis = worst(bounds)
        disc = {p.host.name: clocks.discipline_summary(
            p.host.name, self.discipline.get("before", {}).get(p.host.name, {}),
            self.discipline.get("after", {}).get(p.host.name, {})) for p in parts.values()}
        (self.dir / "clock.json").write_text(json.dumps(
            {"before": {n: c.__dict__ for n, c in before.items()},
             "after": {n: c.__dict__ for n, c in after.items()}, "pairs": bounds,
             "discipline": disc, "readings": self.discipline}, indent=1))
        flows = json.loads((self.dir / "flows.json").read_text())
        samples = []
        try:
            for p in sorted(self.dir.glob("tcp-*.jsonl")):
                samples += list(read_tcp_jsonl(p, p.stem[4:]))
        except RunDirError as exc:
            raise RunError(f"{case.id}: {exc}") from None
        ow = oneway(samples, flows, result["t_start"], result["t_end"], bound, basis)
        if ow is not None:
            ow["discipline"] = "; ".join(d["text"] for d in disc.values())
        result["oneway"] = ow
        result["clock_bound_ms"] = bound
        result.update(flat(ow))
        result["hosts"] = {n: h.name for n, h in node_host.items()}
        return result

    def _parts(self, plan: Plan, node_host: Dict[str, Host]) -> Dict[str, HostPart]:
        parts: Dict[str, HostPart] = {}
        for f in plan.flows:
            s, r = node_host[f.src], node_host[f.dst]
            parts.setdefault(s.name, HostPart(s)).send.append(f)
            parts.setdefault(r.name, HostPart(r)).recv.append(f)
            if f.kind == "bulk" and f.cc not in parts[s.name].ccs:
                parts[s.name].ccs.append(f.cc)
        for hp in plan.http:
            s, r = node_host[hp.server], node_host[hp.client]
            parts.setdefault(s.name, HostPart(s)).http_serve.append(hp)
            parts.setdefault(r.name, HostPart(r)).http_fetch.append(hp)
            if plan.http_cc not in parts[s.name].ccs:
                parts[s.name].ccs.append(plan.http_cc)
        return parts

    # -- set up and undo -----------------------------------------------------------------
    def _setup(self, parts: Dict[str, HostPart], egress: Dict[str, Tuple[str, Egress]],
               delays: List[DelayStage], plan: Plan) -> None:
        sc = self.case.scenario
        t = sc.topology
        attrs = route_attrs(sc)
        ecn = any(eg.queue is not None and eg.queue.ecn for _, eg in egress.values())
        rmem, wmem = socket_buffers(t.rate_mbit, max(t.rtts_ms))
        for part in parts.values():
            h = part.host
            sysctls = {"net.ipv4.tcp_ecn": "1" if ecn else "0",
                       "net.ipv4.tcp_no_metrics_save": "1",
                       "net.ipv4.tcp_rmem": f"4096 131072 {rmem}",
                       "net.ipv4.tcp_wmem": f"4096 16384 {wmem}"}
            lines = [f"cd {shlex.quote(self.cw(h))}", ": > restore.sh"]
            for k, v in sysctls.items():
                path = "/proc/sys/" + k.replace(".", "/")
                lines.append(f"printf 'echo %s > {path}\\n' \"$(cat {path} | tr '\\t' ' ')\" "
                             f">> restore.sh && echo {shlex.quote(v)} > {path}")
            for cc in part.ccs:
                mod = module_of(cc) or f"tcp_{cc}"
                lines.append(f"grep -qw {cc} /proc/sys/net/ipv4/tcp_available_congestion_control"
                             f" || modprobe {mod}")
                params = dict(sc.module_params.get(cc, {}))
                if cc in VARIANT_CCS:
                    params["variant"] = sc.variant
                for name, value in params.items():
                    p = f"/sys/module/{mod}/parameters/{name}"
                    lines.append(f"printf 'echo %s > {p}\\n' \"$(cat {p})\" >> restore.sh && "
                                 f"echo {shlex.quote(str(value))} > {p}")
            peers = ([f.dst_addr for f in part.send] + [f.src_addr for f in part.recv]
                     + [hp.server_addr for hp in part.http_fetch]
                     + [self._node_host[hp.client].data_address for hp in part.http_serve])
            lines += route_script(peers, attrs)
            script = "\n".join(["set -e", *lines]) + "\n"
            (self.dir / f"setup-{h.name}.sh").write_text(script)
            self.touched.append(h.name)
            self.sh(h, self.run_ctx.privileged(h, script))
        em = self.inv.emulator
        if egress and em is not None:
            tc = []
            for dev in sorted({d for d, _ in egress.values()}):
                tc.append(f"tc qdisc del dev {dev} root 2>/dev/null || true")
            for label, (dev, eg) in egress.items():
                tc += ["tc " + " ".join(c) for c in eg.tc_commands(dev)]
            restore = "".join(f"tc qdisc del dev {d} root 2>/dev/null || true\n"
                              for d in sorted({d for d, _ in egress.values()}))
            dl, undo = delay_script(delays, {s: em.interfaces[s] for s in ("sender", "receiver")},
                                    plan)
            tc += dl
            restore += undo
            script = (f"set -e\ncd {shlex.quote(self.cw(em))}\n"
                      f"printf %s {shlex.quote(restore)} > restore.sh\n" + "\n".join(tc) + "\n")
            (self.dir / "topology.sh").write_text(script)
            self.touched.append(em.name)
            self.sh(em, self.run_ctx.privileged(em, script))

    def _cleanup(self, hosts: List[Host]) -> None:
        """Stop this case's processes and undo its settings on every host still reachable
        (one that is not gets it at the next contact: :meth:`RemoteRun.clean_stale`)."""
        for h in hosts:
            try:
                self.conn[h.name].run(self.run_ctx.privileged(h, self.run_ctx.stop_script(
                    self.cw(h))), timeout=60, check=False)
            except HostError:
                continue

    # -- clocks -------------------------------------------------------------------------
    def _clocks(self, parts: Dict[str, HostPart], phase: str) -> Dict[str, clocks.HostClock]:
        """Each end host's clock now: ``chronyc -c tracking`` and ``boot_id`` (the bound's
        terms), and its whole discipline as ``synctcp clock --json`` reads it (kernel,
        chrony's sources, gpsd, the PPS devices) into ``self.discipline[phase]``."""
        out: Dict[str, clocks.HostClock] = {}
        for part in parts.values():
            h = part.host
            text = self.sh(h, clock_probe(h, self.bindir(h)), timeout=30, check=False)
            facts, _ = parse_probe(text)
            out[h.name] = clock_of(h, facts)
            state: Dict[str, Any] = {"error": "no reading (python3 and the shipped package)"}
            for line in text.splitlines():
                if line.startswith("discipline="):
                    try:
                        state = json.loads(line[len("discipline="):])
                    except ValueError as exc:
                        state = {"error": f"unreadable reading: {exc}"}
            self.discipline.setdefault(phase, {})[h.name] = state
        return out

    def _timepairs(self, hosts: List[Host]) -> Dict[str, Dict[str, float]]:
        out = {}
        for h in hosts:
            text = self.sh(h, TIMEPAIR, timeout=30)
            out[h.name] = json.loads(text.strip().splitlines()[-1])
        return out

    # -- processes -------------------------------------------------------------------------
    def _start(self, host: Host, name: str, argv: List[Any], limit: float, env: str = "",
               ready: bool = True, stdout: str = "", ready_err: str = "") -> None:
        cw = self.cw(host)
        script = self.run_ctx.job_script(cw, name, argv, limit, env, stdout)
        (self.dir / f"{name}-{host.name}.sh").write_text(script)
        self.sh(host, self.run_ctx.privileged(host, script))
        self.jobs.append(Job(host.name, name, ready, ready_err))

    def _captures(self, plan: Plan, limit: float) -> None:
        """``capture = true``: tcpdump of the first flow's headers at its sender
        (``FLOW.pcap``, for ``synctcp trace/correlate``: one host's clock) and at its
        receiver (``FLOW-receiver.pcap``), on each host's ``interfaces.data`` (else
        ``any``), as the local runner captures (:func:`..case.scripts.capture_line`)."""
        flow = plan.flows[0]
        for node, name, pcap in ((flow.src, "tcpdump", f"{flow.id}.pcap"),
                                 (flow.dst, "tcpdump-receiver", f"{flow.id}-receiver.pcap")):
            h = self._node_host[node]
            self._copies += [(h.name, pcap, pcap), (h.name, f"{name}.err", f"{name}.log")]
            dev = h.interfaces.get("data", "any")
            self._start(h, name, ["tcpdump", "-i", dev, "-n", "-s", "128", "-U", "-c",
                                  CAPTURE_MAX_PACKETS, "-w", "-", f"tcp port {flow.port}"],
                        limit, ready=False, stdout=pcap, ready_err="listening on")

    def _traffic(self, parts: Dict[str, HostPart], egress: Dict[str, Tuple[str, Egress]],
                 plan: Plan) -> float:
        sc = self.case.scenario
        dur = sc.duration_s
        hz = self.run_ctx.diag_hz
        em = self.inv.emulator
        sampler_limit = dur + 600
        labels = [p[0] for p in _measured(self.case, egress)]
        if em is not None and labels:
            args: List[Any] = [f"{self.bindir(em)}/qsampler"]
            for label in labels:
                dev, eg = egress[label]
                args += ["-i", dev, "-p", eg.leaf_parent(), "-o", f"queue-{label}.csv"]
            args += ["-r", self.run_ctx.queue_hz, "-d", sampler_limit]
            self._start(em, "qsampler", args, sampler_limit + 30)
        # an HTTP-only case ends with its clients (their run: the case plus TAIL_S)
        fg_limit = (limit_for(flow_specs(plan.flows, dur)) if plan.flows
                    else dur + TAIL_S + 120)
        if sc.capture and plan.flows:
            self._captures(plan, sampler_limit + 30)
        for part in parts.values():
            h = part.host
            if part.send and any(f.kind == "bulk" for f in part.send):
                self._start(h, "sampler", ["python3", "-m", "synctcp_testbed.measure.sampler",
                                           f"--diag=-:*:tcp-{h.name}.jsonl", "--hz", hz,
                                           "--max-seconds", sampler_limit],
                            sampler_limit + 30, env=f"PYTHONPATH={self.bindir(h)}/py.zip")
        if plan.flows and self.tool(parts) == "iperf3":
            return self._traffic_iperf3(parts, plan)
        for part in parts.values():
            h = part.host
            for side, flows in (("recv", part.recv), ("send", part.send)):
                if not flows:
                    continue
                conf = config_text(flow_specs(flows, dur))
                (self.dir / f"flowgen-{h.name}-{side}.conf").write_text(conf)
                self.conn[h.name].put_files({f"flowgen-{side}.conf": conf.encode()}, self.cw(h))
                self.sh(h, f"cd {shlex.quote(self.cw(h))} && rm -f go-{side} && mkfifo go-{side}")
                self._start(h, f"flowgen-{side}",
                            [f"{self.bindir(h)}/flowgen", "-c", f"flowgen-{side}.conf", "-o",
                             f"flowgen-{side}.json", "-i", "1", "-l", f"{fg_limit:g}", "--side",
                             side, "--go-file", f"go-{side}",
                             *(["-W", sc.topology.window_bytes] if sc.topology.window_bytes
                               else [])], fg_limit + 30)
        self._http(parts, plan)
        self._wait_ready()
        self.log(f"{self.case.id}: {len(plan.flows)} flows on "
                 f"{', '.join(sorted(parts))}{' through ' + em.name if em and egress else ''}, "
                 f"{dur:g} s")
        # receivers first: each side's intervals start at its own go
        for side in ("recv", "send"):
            for part in parts.values():
                if (part.recv if side == "recv" else part.send):
                    self.sh(part.host, f"cd {shlex.quote(self.cw(part.host))} && "
                            f"exec 3> go-{side} && exec 3>&-", timeout=30)
        t0 = self._go_http(parts, plan)
        self._wait_flowgen(fg_limit + 60)
        return t0

    def _go_http(self, parts: Dict[str, HostPart], plan: Plan) -> float:
        """Release the HTTP clients.  A case without flowgen takes its clock from the
        first client host: its CLOCK_MONOTONIC and CLOCK_REALTIME at the go
        (``self.http_ref``), and that monotonic time is the case's t0."""
        t0 = time.monotonic()
        for part in parts.values():
            if not part.http_fetch:
                continue
            clock = "" if plan.flows or self.http_ref else (
                " && python3 -c 'import time; print(time.monotonic(), time.time())'")
            out = self.sh(part.host, f"cd {shlex.quote(self.cw(part.host))} && : > {HTTP_GO}"
                          f"{clock}", timeout=30)
            if clock:
                mono, real = (float(x) for x in out.split()[-2:])
                self.http_ref = {"host": part.host.name, "monotonic": mono, "realtime": real}
                t0 = mono
        return t0

    def _http(self, parts: Dict[str, HostPart], plan: Plan) -> None:
        """The HTTP workload as the local runner runs it (case/scripts.py): the asyncio
        server of :mod:`synctcp_testbed.traffic.http` on each host that serves (the pairs'
        left side, whose responses cross the bottleneck with the bulk flows), one client
        per pair on its right-side host, held until the go (a file, ``go-http``), all
        from the package the run ships."""
        if not plan.http:
            return
        sc = self.case.scenario
        if sc.traffic.http_server != "asyncio":
            raise RunError(f"{self.case.id}: traffic.http_server {sc.traffic.http_server!r}: on "
                           f"hosts the HTTP workload runs the asyncio server the run ships "
                           f"(nginx would need its files and a daemon on each host); set "
                           f"traffic.http_server = \"asyncio\"")
        dur = sc.duration_s
        limit = dur + TAIL_S + 180
        for part in parts.values():
            h = part.host
            # a server per pair, each on its own port: an emulator tells the pairs' delays
            # apart by it (remote/emulate.py)
            for hp in part.http_serve:
                self._start(h, f"http-server-{hp.server}",
                            ["python3", "-m", "synctcp_testbed.traffic.http", "server", "--host",
                             h.data_address, "--port", http_port(plan, hp), "--cc",
                             plan.http_cc, "--max-seconds", int(dur + 120)],
                            limit, env=f"PYTHONPATH={self.bindir(h)}/py.zip",
                            stdout=f"http-server-{hp.server}.out")
        for part in parts.values():
            h = part.host
            for hp in part.http_fetch:
                i = plan.http.index(hp)
                args = http_client_argv("python3", hp, http_port(plan, hp),
                                        sc.topology.rate_mbit, dur,
                                        http_seed(self.case.seed, i), f"http-{hp.client}.csv",
                                        plan.http_cc)
                script = (f"echo ready\nwhile [ ! -e {HTTP_GO} ]; do sleep 0.01; done\n"
                          f"PYTHONPATH={shlex.quote(self.bindir(h) + '/py.zip')} exec "
                          f"{_q(args)} > httpc-{hp.client}.json 2> httpc-{hp.client}.log\n")
                self._start(h, f"http-client-{hp.client}", ["sh", "-c", script], limit)
                self._copies.append((h.name, f"httpc-{hp.client}.json",
                                     f"httpc-{hp.client}.json"))
                self._copies.append((h.name, f"httpc-{hp.client}.log",
                                     f"httpc-{hp.client}.log"))
                self._http_csv.append((h.name, f"http-{hp.client}.csv"))

    def tool(self, parts: Dict[str, HostPart]) -> str:
        """The case's traffic generator: iperf3 when any end host runs it (the flows
        between two hosts need the same tool at both ends), else flowgen."""
        tools = self.run_ctx.tools
        return ("iperf3" if any(tools.get(n) == "iperf3" for n in parts) else "flowgen")

    def _traffic_iperf3(self, parts: Dict[str, HostPart], plan: Plan) -> float:
        """The flows as ``iperf3 -C`` pairs (remote/iperf.py): the servers, then the
        clients' wrappers, the go (a file each sender host's wrappers wait for), the end."""
        dur = self.case.scenario.duration_s
        if self.case.scenario.topology.window_bytes:
            raise RunError(f"{self.case.id}: topology.window_segs: iperf3 (which these hosts "
                           f"run instead of flowgen) cannot hold a receiver's window to it "
                           f"(Linux resets the clamp; flowgen -W re-applies it): give the "
                           f"hosts a C compiler for flowgen, or remove window_segs")
        cbr = [f.id for f in plan.flows if f.kind != "bulk"]
        if cbr:
            raise RunError(f"{self.case.id}: flow {cbr[0]} is CBR: iperf3 (which these hosts "
                           f"run instead of flowgen) runs bulk flows only")
        limit = limit_for(flow_specs(plan.flows, dur)) + 30
        for part in parts.values():
            for f in part.recv:
                self._start(part.host, iperf.server_job(f.id), iperf.server_argv(f), limit,
                            ready=False)
        for part in parts.values():
            if part.recv:
                ports = " ".join(str(f.port) for f in part.recv)
                wait = (f"for i in $(seq 100); do ok=1; for p in {ports}; do ss -Hltn "
                        f"\"sport = :$p\" | grep -q . || ok=0; done; [ $ok = 1 ] && exit 0; "
                        f"sleep 0.1; done; echo not listening; exit 1")
                if "not listening" in self.sh(part.host, wait, timeout=30, check=False):
                    raise RunError(f"{self.case.id}: iperf3 on {part.host.name} did not listen "
                                   f"on port(s) {ports} within 10 s")
        for part in parts.values():
            for f in part.send:
                self._start(part.host, iperf.client_job(f.id),
                            ["sh", "-c", iperf.client_script(f, flow_seconds(f, dur))], limit)
        self._http(parts, plan)
        self._wait_ready()
        self.log(f"{self.case.id}: {len(plan.flows)} flows (iperf3) on "
                 f"{', '.join(sorted(parts))}, {dur:g} s")
        for part in parts.values():
            go = ([iperf.GO_FILE] if part.send else []) + ([HTTP_GO] if part.http_fetch else [])
            if go:
                self.sh(part.host, f"cd {shlex.quote(self.cw(part.host))} && "
                        + " && ".join(f": > {g}" for g in go), timeout=30)
        t0 = time.monotonic()
        self._wait_flowgen(limit + 60)
        return t0

    def _status(self) -> Dict[Tuple[str, str], Dict[str, str]]:
        """Each job's out (first line), status and last error line, one SSH call per host."""
        out: Dict[Tuple[str, str], Dict[str, str]] = {}
        by_host: Dict[str, List[Job]] = {}
        for j in self.jobs:
            by_host.setdefault(j.host, []).append(j)
        for name, jobs in by_host.items():
            h = self.inv.host(name)
            script = f"cd {shlex.quote(self.cw(h))} && for j in {' '.join(j.name for j in jobs)}; do " \
                     "printf '%s\\t%s\\t%s\\t%s\\n' \"$j\" \"$(head -c 64 $j.out 2>/dev/null | " \
                     "head -1)\" \"$(cat $j.status 2>/dev/null)\" \"$(tail -1 $j.err 2>/dev/null)\"; done"
            for line in self.sh(h, script, timeout=30).splitlines():
                f = line.split("\t")
                if len(f) == 4:
                    out[(name, f[0])] = {"out": f[1], "status": f[2], "err": f[3]}
        return out

    def _wait_ready(self, timeout: float = 300.0) -> None:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            st = self._status()
            pending = []
            for j in self.jobs:
                s = st.get((j.host, j.name), {})
                if s.get("status"):
                    raise RunError(f"{self.case.id}: {j.name} on {j.host} exited with status "
                                   f"{s['status']} before it was ready: {s.get('err') or 'no message'}")
                if j.ready_err and j.ready_err not in s.get("err", ""):
                    pending.append(f"{j.name} on {j.host}")
                elif j.ready and "ready" not in s.get("out", ""):
                    pending.append(f"{j.name} on {j.host}")
            if not pending:
                return
            time.sleep(0.5)
        raise RunError(f"{self.case.id}: not ready after {timeout:g} s: {', '.join(pending)}")

    def _wait_flowgen(self, limit: float) -> None:
        deadline = time.monotonic() + limit
        fg = [j for j in self.jobs if j.name.startswith(TRAFFIC_JOBS)]
        while time.monotonic() < deadline:
            time.sleep(POLL_S)
            st = self._status()
            for j in self.jobs:
                s = st.get((j.host, j.name), {})
                if j.name.startswith(TRAFFIC_JOBS) and s.get("status") not in (None, "", "0",
                                                                                 "1"):
                    raise RunError(f"{self.case.id}: {j.name} on {j.host} exited with status "
                                   f"{s['status']}: {s.get('err') or 'no message'}")
            if all(st.get((j.host, j.name), {}).get("status") for j in fg):
                return
        raise RunError(f"{self.case.id}: the flows did not finish within {limit:g} s")

    # -- back home --------------------------------------------------------------------------
    def _iperf3_sides(self, parts: Dict[str, HostPart], got: Dict[str, Path], logs: List[str],
                      statuses: List[int]) -> List[Dict[str, Any]]:
        """The iperf3 clients' files of every sender host as flowgen documents."""
        dur = self.case.scenario.duration_s
        recv_host = {f.id: p.host.name for p in parts.values() for f in p.recv}
        sides: List[Dict[str, Any]] = []
        for part in parts.values():
            if not part.send:
                continue
            d = got[part.host.name]

            def text(name: str) -> Optional[str]:
                p = d / name
                return p.read_text() if p.exists() else None
            files = {f.id: {"go": text(f"{f.id}.go"), "exit": text(f"{f.id}.exit"),
                            "json": text(f"{f.id}.iperf3.json")} for f in part.send}
            for f in part.send:
                job = iperf.client_job(f.id)
                err = (text(f"{job}.err") or "").strip()
                logs += [f"{part.host.name} {f.id}: {ln}" for ln in err.splitlines()]
                st = (text(f"{job}.status") or "").strip()
                if st.isdigit():
                    statuses.append(int(st))
            try:
                docs = iperf.side_docs(part.host.name, recv_host, part.send,
                                       {f.id: flow_seconds(f, dur) for f in part.send}, files,
                                       {f.id: f.base_rtt_ms / 1e3 for f in part.send})
            except iperf.IperfError as exc:
                raise RunError(f"{self.case.id}: {exc}{' | ' + logs[-1] if logs else ''}"
                               ) from None
            # the client port the kernel chose: the flow's from now on (its telemetry)
            ports = {d["id"]: d["cport"] for d in docs[0]["flows"]}
            for f in part.send:
                f.cport = ports.get(f.id, f.cport)
            sides += docs
        return sides

    def _fetch(self, parts: Dict[str, HostPart], hosts: List[Host],
               egress: Dict[str, Tuple[str, Egress]], pairs0: Dict[str, Dict[str, float]]) -> None:
        """Stop the samplers, copy every host's files back, merge them into the case directory."""
        for h in hosts:
            self.sh(h, self.run_ctx.privileged(h, self.run_ctx.stop_script(self.cw(h),
                                                                              samplers_only=True)),
                    timeout=90)
        got: Dict[str, Path] = {}
        stage = self.dir / ".hosts"
        for h in hosts:
            dest = stage / h.name
            try:
                self.conn[h.name].get_dir(self.cw(h), dest)
            except HostError as exc:
                raise RunError(f"{self.case.id}: {exc}") from exc
            got[h.name] = dest
        sides: List[Dict[str, Any]] = []
        logs: List[str] = []
        statuses: List[int] = []
        iperf3 = any(p.send for p in parts.values()) and self.tool(parts) == "iperf3"
        if iperf3:
            sides = self._iperf3_sides(parts, got, logs, statuses)
        for part in (parts.values() if not iperf3 else []):
            for side in ("recv", "send"):
                p = got[part.host.name] / f"flowgen-{side}.json"
                if not (part.recv if side == "recv" else part.send):
                    continue
                err = got[part.host.name] / f"flowgen-{side}.err"
                if err.exists() and err.read_text().strip():
                    logs += [f"{part.host.name} {side}: {ln}" for ln in err.read_text().splitlines()]
                st = got[part.host.name] / f"flowgen-{side}.status"
                if st.exists() and st.read_text().strip().isdigit():
                    statuses.append(int(st.read_text().strip()))
                try:
                    doc = json.loads(p.read_text())
                    parse_result(p.read_text())
                except (OSError, ValueError, FlowgenError) as exc:
                    raise RunError(f"{self.case.id}: no flowgen result from {part.host.name} "
                                   f"({side}): {exc}{' | ' + logs[-1] if logs else ''}") from None
                doc["host"] = part.host.name
                sides.append(doc)
        send0 = next((d for d in sides if d["side"] == "send"), None)
        if send0 is not None:
            ref_host = send0["host"]
            ref_real, ref_mono = float(send0["go_realtime"]), float(send0["go_monotonic"])
            merged = merge_flowgen(sides, ref_real, ref_mono)
            (self.dir / FLOWGEN_OUT).write_text(json.dumps(merged, indent=1))
            (self.dir / FLOWGEN_LOG).write_text("".join(ln + "\n" for ln in logs))
            (self.dir / FLOWGEN_STATUS).write_text(f"{max(statuses) if statuses else 1}\n")
            (self.dir / FLOWGEN_CONF).write_text("".join(
                f"# {p.name}\n{p.read_text()}" for p in sorted(self.dir.glob("flowgen-*.conf"))))
        elif self.http_ref:           # HTTP only: the first client host's clock
            ref_host = self.http_ref["host"]
            ref_real, ref_mono = self.http_ref["realtime"], self.http_ref["monotonic"]
        else:
            raise RunError(f"{self.case.id}: no traffic generator's clock to put the hosts' "
                           f"files on")

        def shift(host: str) -> float:
            """Seconds from ``host``'s CLOCK_MONOTONIC to the reference's."""
            tp = pairs0[host]
            return (tp["realtime"] - tp["monotonic"]) - (ref_real - ref_mono)

        em = self.inv.emulator
        if em is not None:
            for label in egress:
                src = got[em.name] / f"queue-{label}.csv"
                if src.exists():
                    (self.dir / src.name).write_text(rebase_queue_csv(src.read_text(),
                                                                      shift(em.name)))
        for part in parts.values():
            h = part.host
            d = got[h.name]
            for p in d.glob("tcp-*.jsonl"):
                (self.dir / p.name).write_text(rebase_jsonl(p.read_text(), shift(h.name)))
        for host, name in self._http_csv:
            src = got[host] / name
            if src.exists():
                (self.dir / name).write_text(rebase_http_csv(src.read_text(), shift(host)))
        for host, name, local in self._copies:
            src = got[host] / name
            if src.exists():
                (self.dir / local).write_bytes(src.read_bytes())
        for h in hosts:
            for name in ("qsampler.err", "sampler.err"):
                p = got[h.name] / name
                if p.exists() and p.read_text().strip():
                    (self.dir / f"{name[:-4]}-{h.name}.log").write_text(p.read_text())
        host_json = {"hosts": {h.name: {"timepair": pairs0.get(h.name)} for h in hosts},
                     "reference_clock": f"CLOCK_MONOTONIC of {ref_host} (its go: "
                                        f"{ref_mono:.6f})"}
        (self.dir / "host.json").write_text(json.dumps(host_json, indent=1))


def _measured(case: Case, egress: Dict[str, Tuple[str, Egress]]) -> List[Tuple[str, str]]:
    want = case.scenario.topology.measure
    labels = [lb for lb in egress if not want or lb in want]
    unknown = set(want) - set(egress) if egress else set()
    if unknown:
        raise RunError(f"topology.measure: no link {', '.join(sorted(unknown))} on the emulator; "
                       f"links: {', '.join(egress)}")
    return [(lb, egress[lb][0]) for lb in labels]


class RemoteRunLike(Protocol):
    """The run-wide context a :class:`HostCase` uses (:class:`.run.RemoteRun`)."""

    inventory: Inventory
    connections: Connections
    diag_hz: float
    queue_hz: float
    #: each end host's traffic generator (flowgen or iperf3)
    tools: Dict[str, str]

    def workdir(self, host: Host) -> str: ...
    def privileged(self, host: Host, script: str) -> str: ...
    def job_script(self, cw: str, name: str, argv: List[Any], limit: float, env: str,
                   stdout: str) -> str: ...
    def stop_script(self, cw: str, samplers_only: bool = False) -> str: ...
    def clean_stale(self, host: Host) -> None: ...
