"""A sender / router / receiver dumbbell in network namespaces.

::

    snd --veth-- rtr --veth-- rcv
     netem fwd    htb rate +  netem rev
     delay        pfifo limit delay
                  (bottleneck)

* The bottleneck is the router's egress towards the receiver: an HTB class
  at ``rate_mbit`` whose leaf is a drop-tail ``pfifo`` of ``queue_pkts``.
* Propagation delay is netem on the sender's and on the receiver's egress
  (half the base RTT each way), with a limit far above any window, so
  netem's own queue never drops or becomes the bottleneck.
* TSO/GSO/GRO are switched off on every interface by default, so a queue
  limit in packets counts wire packets, not super-packets; the setting is
  read back with ``ethtool -k`` and a run refuses to start if it did not
  take.

All addresses live inside the namespaces this module creates; teardown
deletes the namespaces (and with them every veth and qdisc) also on
errors and Ctrl-C.
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
import time
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any, Dict, List, Optional, Sequence

from .metrics import QueueStats, queue_stats, read_samples

SND_ADDR = "10.201.1.1"
RTR_SND_ADDR = "10.201.1.2"
RTR_RCV_ADDR = "10.201.2.2"
RCV_ADDR = "10.201.2.1"
MTU_BYTES = 1500


class TestbedError(RuntimeError):
    """The topology could not be built or a run failed."""


def run(cmd: Sequence[str], ns: Optional[str] = None, check: bool = True,
        capture: bool = True, timeout: float = 60) -> subprocess.CompletedProcess:
    """Run a command, optionally inside network namespace ``ns``."""
    full = (["ip", "netns", "exec", ns] if ns else []) + list(cmd)
    try:
        res = subprocess.run(full, capture_output=capture, text=True, timeout=timeout)
    except FileNotFoundError as exc:
        raise TestbedError(f"{cmd[0]} is not installed (make setup)") from exc
    if check and res.returncode != 0:
        raise TestbedError(f"{' '.join(full)} failed ({res.returncode}): {res.stderr.strip()}")
    return res


@dataclass
class DumbbellConfig:
    """Link and queue of the dumbbell."""

    rate_mbit: float = 20.0
    rtt_ms: float = 40.0
    queue_pkts: int = 100
    offloads: bool = False
    prefix: str = "st"

    def validate(self) -> None:
        if not 0.1 <= self.rate_mbit <= 10000:
            raise TestbedError(f"rate_mbit {self.rate_mbit} out of range 0.1..10000")
        if not 0 <= self.rtt_ms <= 10000:
            raise TestbedError(f"rtt_ms {self.rtt_ms} out of range 0..10000")
        if not 1 <= self.queue_pkts <= 100000:
            raise TestbedError(f"queue_pkts {self.queue_pkts} out of range 1..100000")
        if not self.prefix.isalnum() or len(self.prefix) > 6:
            raise TestbedError("prefix must be alphanumeric, at most 6 characters")

    @property
    def bdp_pkts(self) -> float:
        return self.rate_mbit * 1e6 * self.rtt_ms / 1e3 / 8 / MTU_BYTES


@dataclass
class FlowResult:
    """One bulk flow as iperf3 reported it."""

    cc: str
    goodput_mbit: float
    retransmits: int


@dataclass
class RunResult:
    """One run of ``flows`` parallel bulk flows of one algorithm."""

    cc: str
    seconds: float
    flows: List[FlowResult]
    queue: QueueStats
    telemetry: List[Dict[str, Any]] = field(default_factory=list)
    samples_path: Optional[str] = None

    @property
    def goodput_mbit(self) -> float:
        return sum(f.goodput_mbit for f in self.flows)

    @property
    def retransmits(self) -> int:
        return sum(f.retransmits for f in self.flows)

    def as_dict(self) -> Dict[str, Any]:
        d = asdict(self)
        d["goodput_mbit"] = self.goodput_mbit
        d["retransmits"] = self.retransmits
        return d


class Dumbbell:
    """Build the dumbbell on ``__enter__``, tear it down on ``__exit__``."""

    def __init__(self, cfg: DumbbellConfig):
        cfg.validate()
        self.cfg = cfg
        p = cfg.prefix
        self.snd, self.rtr, self.rcv = f"{p}-snd", f"{p}-rtr", f"{p}-rcv"
        self.bottleneck_dev = f"{p}r2"
        self._old_sigterm: Any = None

    # -- topology -------------------------------------------------------
    def __enter__(self) -> "Dumbbell":
        self._old_sigterm = signal.signal(signal.SIGTERM, _raise_keyboard_interrupt)
        try:
            self.teardown()          # leftovers of a killed run
            self._build()
        except BaseException:
            self.teardown()
            raise
        return self

    def __exit__(self, *exc: Any) -> None:
        self.teardown()
        if self._old_sigterm is not None:
            signal.signal(signal.SIGTERM, self._old_sigterm)

    def namespaces(self) -> List[str]:
        return [self.snd, self.rtr, self.rcv]

    def teardown(self) -> None:
        for ns in self.namespaces():
            if Path(f"/var/run/netns/{ns}").exists():
                # kill what still runs in it (iperf3 servers, samplers)
                res = run(["ip", "netns", "pids", ns], check=False)
                for pid in res.stdout.split():
                    try:
                        os.kill(int(pid), signal.SIGKILL)
                    except (ProcessLookupError, ValueError):
                        pass
                run(["ip", "netns", "del", ns], check=False)

    def _build(self) -> None:
        c, p = self.cfg, self.cfg.prefix
        for ns in self.namespaces():
            run(["ip", "netns", "add", ns])
            run(["ip", "link", "set", "lo", "up"], ns=ns)
        # snd:{p}s1 <-> rtr:{p}r1   rtr:{p}r2 <-> rcv:{p}c1
        run(["ip", "link", "add", f"{p}s1", "netns", self.snd, "type", "veth",
             "peer", "name", f"{p}r1", "netns", self.rtr])
        run(["ip", "link", "add", f"{p}r2", "netns", self.rtr, "type", "veth",
             "peer", "name", f"{p}c1", "netns", self.rcv])
        links = [(self.snd, f"{p}s1", SND_ADDR), (self.rtr, f"{p}r1", RTR_SND_ADDR),
                 (self.rtr, f"{p}r2", RTR_RCV_ADDR), (self.rcv, f"{p}c1", RCV_ADDR)]
        for ns, dev, addr in links:
            run(["ip", "addr", "add", f"{addr}/24", "dev", dev], ns=ns)
            run(["ip", "link", "set", dev, "up"], ns=ns)
            self._set_offloads(ns, dev, c.offloads)
        run(["ip", "route", "add", "default", "via", RTR_SND_ADDR], ns=self.snd)
        run(["ip", "route", "add", "default", "via", RTR_RCV_ADDR], ns=self.rcv)
        run(["sysctl", "-qw", "net.ipv4.ip_forward=1"], ns=self.rtr)
        half = f"{c.rtt_ms / 2:.3f}ms"
        netem_limit = str(max(10000, int(c.bdp_pkts * 10)))
        run(["tc", "qdisc", "add", "dev", f"{p}s1", "root", "netem", "delay", half,
             "limit", netem_limit], ns=self.snd)
        run(["tc", "qdisc", "add", "dev", f"{p}c1", "root", "netem", "delay", half,
             "limit", netem_limit], ns=self.rcv)
        dev = self.bottleneck_dev
        run(["tc", "qdisc", "add", "dev", dev, "root", "handle", "1:", "htb",
             "default", "10"], ns=self.rtr)
        run(["tc", "class", "add", "dev", dev, "parent", "1:", "classid", "1:10", "htb",
             "rate", f"{c.rate_mbit}mbit", "ceil", f"{c.rate_mbit}mbit"], ns=self.rtr)
        run(["tc", "qdisc", "add", "dev", dev, "parent", "1:10", "handle", "10:",
             "pfifo", "limit", str(c.queue_pkts)], ns=self.rtr)

    def _set_offloads(self, ns: str, dev: str, on: bool) -> None:
        if shutil.which("ethtool") is None:
            raise TestbedError("ethtool is not installed (make setup)")
        state = "on" if on else "off"
        run(["ethtool", "-K", dev, "tso", state, "gso", state, "gro", state], ns=ns)
        if not on:
            shown = run(["ethtool", "-k", dev], ns=ns).stdout
            for feat in ("tcp-segmentation-offload", "generic-segmentation-offload",
                         "generic-receive-offload"):
                line = next((ln for ln in shown.splitlines() if ln.startswith(feat + ":")), "")
                if " on" in line:
                    raise TestbedError(f"{ns}/{dev}: {feat} is still on: {line.strip()}")

    # -- traffic ------------------------------------------------------------
    def run_bulk(self, cc: str, flows: int = 1, seconds: float = 20,
                 outdir: Optional[Path] = None, sample_hz: Optional[float] = None,
                 diag_hz: Optional[float] = None) -> RunResult:
        """``flows`` parallel iperf3 flows of algorithm ``cc``, queue sampled.

        Default rates: 100 Hz queue and 10 Hz telemetry natively; 25 Hz and
        2 Hz in the emulated VM, where each Python sample costs ~10-50 ms of
        CPU that the forwarding path needs (the achieved rate is reported in
        ``RunResult.queue.sample_hz``).
        """
        in_vm = os.environ.get("SYNCTCP_IN_VM") == "1"
        sample_hz = sample_hz or (25.0 if in_vm else 100.0)
        diag_hz = diag_hz or (2.0 if in_vm else 10.0)
        if not 1 <= flows <= 128:
            raise TestbedError("flows must be 1..128")
        if not 1 <= seconds <= 3600:
            raise TestbedError("seconds must be 1..3600")
        outdir = Path(outdir or f"/tmp/synctcp-run-{os.getpid()}")
        outdir.mkdir(parents=True, exist_ok=True)
        qfile = outdir / f"queue-{cc}.csv"
        dfile = outdir / f"diag-{cc}.jsonl"
        port = 5201
        py = os.environ.get("SYNCTCP_PYTHON", sys.executable)
        server = None
        samplers: List[subprocess.Popen] = []
        try:
            server = subprocess.Popen(
                ["ip", "netns", "exec", self.rcv, "iperf3", "-s", "-1", "-p", str(port), "-J"],
                stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
            for spec, hz, out in (
                (["--qdisc", f"{self.rtr}:{self.bottleneck_dev}:1:10"], sample_hz, qfile),
                (["--diag", f"{self.snd}:{cc}"], diag_hz, dfile),
            ):
                samplers.append(subprocess.Popen(
                    [py, "-m", "synctcp_testbed.sampler", *spec, "--hz", str(hz),
                     "--max-seconds", str(seconds + 300), "--out", str(out)],
                    stdout=subprocess.PIPE, text=True))
            _wait_listening(self.rcv, port)
            for proc in samplers:
                _wait_ready(proc)
            t_start = time.monotonic()
            client = run(["iperf3", "-c", RCV_ADDR, "-p", str(port), "-C", cc, "-P", str(flows),
                          "-t", str(seconds), "-J"], ns=self.snd, check=False,
                         timeout=seconds + 120)
            try:
                report = json.loads(client.stdout)
            except json.JSONDecodeError as exc:
                raise TestbedError(f"iperf3 failed: {client.stderr.strip() or client.stdout[:200]}") from exc
            if "error" in report:
                raise TestbedError(f"iperf3: {report['error']}")
            server.wait(timeout=30)
        finally:
            for proc in samplers:
                if proc.poll() is None:
                    proc.send_signal(signal.SIGINT)
            for proc in [*samplers, *([server] if server else [])]:
                try:
                    proc.wait(timeout=60)
                except subprocess.TimeoutExpired:
                    proc.kill()
        flows_out = _iperf_flows(report, cc)
        samples = read_samples(qfile)
        # the measured interval: the transfer, less its first second
        qs = queue_stats(samples, rate_mbit=self.cfg.rate_mbit, start_s=t_start + 1.0,
                         end_s=t_start + seconds)
        telemetry = _read_jsonl(dfile)
        return RunResult(cc=cc, seconds=seconds, flows=flows_out, queue=qs,
                         telemetry=telemetry, samples_path=str(qfile))


def _raise_keyboard_interrupt(signum: int, frame: Any) -> None:
    raise KeyboardInterrupt


def _wait_listening(ns: str, port: int, timeout: float = 20) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        out = run(["ss", "-Hltn", f"sport = :{port}"], ns=ns, check=False).stdout
        if out.strip():
            return
        time.sleep(0.1)
    raise TestbedError(f"iperf3 server in {ns} did not listen on port {port}")


def _wait_ready(proc: subprocess.Popen, timeout: float = 180) -> None:
    """Wait for the sampler's "ready" line (imports are slow under TCG)."""
    assert proc.stdout is not None
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        line = proc.stdout.readline()
        if line.strip() == "ready":
            return
        if not line and proc.poll() is not None:
            raise TestbedError(f"sampler exited with {proc.returncode} before it was ready")
    raise TestbedError("sampler was not ready in time")


def _iperf_flows(report: Dict[str, Any], cc: str) -> List[FlowResult]:
    streams = report.get("end", {}).get("streams", [])
    out = []
    for s in streams:
        rcv = s.get("receiver", {})
        snd = s.get("sender", {})
        out.append(FlowResult(cc=cc, goodput_mbit=rcv.get("bits_per_second", 0) / 1e6,
                              retransmits=int(snd.get("retransmits", 0))))
    if not out:
        raise TestbedError("iperf3 reported no streams")
    used = report.get("end", {}).get("sender_tcp_congestion")
    if used and used != cc:
        raise TestbedError(f"iperf3 ran {used}, not {cc}")
    return out


def _read_jsonl(path: Path) -> List[Dict[str, Any]]:
    out = []
    try:
        with open(path) as fh:
            for line in fh:
                line = line.strip()
                if line:
                    try:
                        out.append(json.loads(line))
                    except json.JSONDecodeError:
                        continue   # a line cut by the sampler's stop
    except OSError:
        pass
    return out
