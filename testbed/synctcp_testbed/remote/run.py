"""``synctcp-testbed run SCENARIO --hosts HOSTS.toml``: a scenario's cases on real hosts.

:func:`run_on_hosts` is :func:`synctcp_testbed.platform.run.run_scenario` for
an inventory instead of a platform: it connects to every host and probes it
(:mod:`.check`: a host unreachable or lacking something is one line and
nothing runs), copies the traffic generator's and the samplers' sources to
each host and builds them there, then runs the cases one after the other
(cases on a shared real path must not overlap), each by
:class:`.case.HostCase`, into the run-directory layout of
docs/testbed-rundir.md.  A case that fails (a host lost in the middle) is
recorded in its ``error.txt`` and the others go on; ``--resume`` runs the
ones without a ``result.json``.

On each host everything lives under ``/tmp/synctcp-remote/HOST``:
``bin/`` (flowgen, qsampler, the Python package as a zip) and one directory
per case with its processes' pid, output and status files and the
``restore.sh`` that undoes its settings.  Every process is started under
``timeout`` in a session of its own, so it ends by itself even if the
runner dies, and is stopped by its process group; a host's leftovers of an
earlier, killed run are stopped and restored at the next contact.
"""

from __future__ import annotations

import io
import json
import shlex
import sys
import time
import zipfile
from datetime import datetime, timezone
from importlib import resources
from pathlib import Path
from typing import Any, Callable, Dict, List, Optional

from .. import __version__
from ..case.errors import RunError
from ..plan.flows import case_ccs
from ..plan.planfile import write_plan
from ..platform.run import _write_summary, git_describe, kmod_tree
from ..scenario import Scenario
from .case import HostCase
from .check import check
from .inventory import Host, Inventory
from .preflight import traffic_of
from .ssh import Connections, HostError

Log = Callable[[str], None]
ROOT = "/tmp/synctcp-remote"
#: the processes that only measure: stopped before the files are copied back
SAMPLERS = ("sampler", "qsampler", "tcpdump", "tcpdump-receiver")


def package_zip() -> bytes:
    """The Python files of synctcp_testbed and synctcp (the inet_diag sampler's decoder)
    as one zip: the sampler runs from it on a host, nothing installed there."""
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w", zipfile.ZIP_DEFLATED) as z:
        for pkg in ("synctcp_testbed", "synctcp"):
            base = Path(str(resources.files(pkg)))
            for p in sorted(base.rglob("*.py")):
                z.write(p, f"{pkg}/" + p.relative_to(base).as_posix())
    return buf.getvalue()


class RemoteRun:
    """What the cases of one run share: the inventory, the connections, the hosts' files."""

    def __init__(self, inv: Inventory, conns: Connections, log: Log,
                 diag_hz: float = 10.0, queue_hz: float = 1000.0):
        self.inventory = inv
        self.connections = conns
        self.log = log
        self.diag_hz = diag_hz
        self.queue_hz = queue_hz
        #: each end host's traffic generator (flowgen or iperf3: preflight.traffic_of)
        self.tools: Dict[str, str] = {}

    # -- what HostCase asks -----------------------------------------------------------
    def workdir(self, host: Host) -> str:
        return f"{ROOT}/{host.name}"

    def privileged(self, host: Host, script: str) -> str:
        return f"sh -c {shlex.quote(script)}"

    def job_script(self, cw: str, name: str, argv: List[Any], limit: float, env: str,
                   stdout: str) -> str:
        """Start ``argv`` in ``cw`` in a session of its own under ``timeout``: NAME.pid (its
        process group), NAME.out (or ``stdout``), NAME.err, NAME.status when it ends."""
        cmd = " ".join(shlex.quote(str(a)) for a in argv)
        out = shlex.quote(stdout or f"{name}.out")
        inner = (f"echo $$ > {name}.pid; exec timeout -k 5 {limit:g} "
                 f"{('env ' + env + ' ') if env else ''}{cmd}")
        return (f"cd {shlex.quote(cw)} && rm -f {name}.status && "
                f"(setsid sh -c {shlex.quote(inner)} > {out} 2> {name}.err < /dev/null; "
                f"echo $? > {name}.status) > /dev/null 2>&1 &")

    def stop_script(self, cw: str, samplers_only: bool = False) -> str:
        """Stop the case's processes (only the samplers: ``samplers_only``) by their process
        groups (SIGINT, as the local runner stops its samplers; dash's kill takes a group
        as -PGID, without ``--``), wait for them (10 s, then SIGKILL), and (all) undo the case's settings with its restore.sh."""
        names = " ".join(f"{n}.pid" for n in SAMPLERS) if samplers_only else "*.pid"
        return (f"cd {shlex.quote(cw)} 2>/dev/null || exit 0\n"
                f"for f in {names}; do [ -f \"$f\" ] || continue; "
                f"kill -INT -\"$(cat \"$f\")\" 2>/dev/null; done\n"
                f"for i in 1 2 3 4 5 6 7 8 9 10 11 12 13 14 15 16 17 18 19 20; do alive=0; for f in {names}; do "
                f"[ -f \"$f\" ] && kill -0 -\"$(cat \"$f\")\" 2>/dev/null && alive=1; done; "
                f"[ $alive = 0 ] && break; sleep 0.5; done\n"
                f"for f in {names}; do [ -f \"$f\" ] && kill -KILL -\"$(cat \"$f\")\" "
                f"2>/dev/null; done\n"
                + ("" if samplers_only else
                   "[ -f restore.sh ] && sh restore.sh; rm -f restore.sh *.pid\n")
                + "exit 0\n")

    def clean_stale(self, host: Host) -> None:
        """Stop and undo whatever an earlier case left on ``host`` (a killed run)."""
        root = shlex.quote(self.workdir(host))
        stop = self.stop_script("CASEDIR").replace(shlex.quote("CASEDIR"), '"$d"')
        script = (f"for d in {root}/*/; do [ -d \"$d\" ] && [ \"$d\" != {root}/bin/ ] || "
                  f"continue; (\n{stop}\n); done; exit 0")
        self.connections[host.name].run(self.privileged(host, script), timeout=120,
                                         check=False)

    # -- the hosts' own builds --------------------------------------------------------
    def ship(self, hosts: List[Host]) -> None:
        """The package's zip to each host's bin/, and the sources of what the host builds
        there with its own compiler: flowgen on an end host that runs it (not one on
        iperf3: :attr:`tools`), qsampler on the emulator."""
        files = {"flowgen.c": _source("traffic", "flowgen.c"),
                 "qsampler.c": _source("measure", "qsampler.c"),
                 "py.zip": package_zip()}
        for h in hosts:
            bindir = f"{self.workdir(h)}/bin"
            conn = self.connections[h.name]
            conn.run(f"mkdir -p {shlex.quote(bindir)}", timeout=60)
            builds = (["qsampler"] if "emulator" in h.roles else
                      ["flowgen"] if self.tools.get(h.name, "flowgen") == "flowgen" else [])
            conn.put_files({k: v for k, v in files.items()
                            if k == "py.zip" or k[:-2] in builds}, bindir)
            if not builds:
                continue
            res = conn.run(f"cd {shlex.quote(bindir)} && " + " && ".join(
                f"cc -O2 -o {b} {b}.c -lm" for b in builds), timeout=300, check=False)
            if res.rc != 0:
                raise RunError(f"host {h.name}: building {' and '.join(builds)} failed: "
                               f"{(res.err or res.out).strip().splitlines()[-1:] or '?'}")

    def teardown(self, hosts: List[Host]) -> None:
        """Nothing of the run left running on any reachable host."""
        for h in hosts:
            try:
                self.clean_stale(h)
            except HostError:
                continue


def _source(sub: str, name: str) -> bytes:
    return resources.files("synctcp_testbed").joinpath(sub, name).read_bytes()


def run_on_hosts(sc: Scenario, out: Path, inv: Inventory, ccs: Optional[List[str]] = None,
                 aqms: Optional[List[str]] = None, command: Optional[List[str]] = None,
                 log: Log = print, progress: Any = None, resume: bool = False) -> Path:
    """Every case of ``sc`` on the hosts of ``inv`` into ``out``; raises :class:`RunError`
    (one line) when a host cannot be used, and naming the failed cases after the others ran."""
    cases = sc.cases(ccs, aqms)
    bulk_ccs = sorted({cc for c in cases for cc in case_ccs(c)})
    out.mkdir(parents=True, exist_ok=True)
    earlier = {}
    if resume:
        for c in cases:
            try:
                earlier[c.id] = json.loads((out / c.id / "result.json").read_text())
            except (OSError, ValueError):
                continue
    todo = [c for c in cases if c.id not in earlier]
    with Connections(inv.hosts, inv.ssh) as conns:
        found = check(inv, set(bulk_ccs), flows=max(len(c.scenario.topology.rtts_ms)
                                                     for c in cases), capture=sc.capture)
        if found.problems:
            raise RunError(found.problems[0] + (f" (and {len(found.problems) - 1} more: "
                                                f"synctcp-testbed hosts check)"
                                                if len(found.problems) > 1 else ""))
        errors = conns.connect_all()
        if errors:
            raise RunError(str(errors[0]))
        run = RemoteRun(inv, conns, log)
        run.tools = {h.name: traffic_of(h, found.facts.get(h.name, {})) for h in inv.hosts
                     if "emulator" not in h.roles}
        for line in found.info:
            if "instead of flowgen" in line:
                log(line)
        log(f"hosts {', '.join(h.name for h in inv.hosts)}: {len(cases)} cases"
            + (f", {len(earlier)} done before, {len(todo)} to run" if resume else ""))
        if not resume:
            write_plan(out, sc.as_dict(), ccs, aqms)
        meta: Dict[str, Any] = {
            "schema": 1, "scenario_name": sc.name, "scenario": sc.as_dict(), "seed": sc.seed,
            "started_utc": datetime.now(timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ"),
            "command": command or sys.argv, "platform": "hosts",
            "platform_choice": f"--hosts {inv.path}", "time_mode": "real",
            "hosts": inv.public(), "facts": found.facts, "traffic": run.tools, "jobs": 1, "backend": "hosts",
            "capture": sc.capture, "tool_version": __version__, "git": git_describe(),
            "kmod_tree": kmod_tree(), "modules": {}, "skipped_cases": [],
            "executor": {"kind": "hosts", "jobs": 1}}
        (out / "meta.json").write_text(json.dumps(meta, indent=1))
        run.ship(inv.hosts)
        results: List[Dict[str, Any]] = list(earlier.values())
        failed: List[str] = []
        wall0 = time.monotonic()
        try:
            for case in todo:
                cdir = out / case.id
                (cdir / "error.txt").unlink(missing_ok=True)
                try:
                    res = HostCase(run, case, cdir, log).run()
                except RunError as exc:
                    cdir.mkdir(parents=True, exist_ok=True)
                    (cdir / "error.txt").write_text(str(exc) + "\n")
                    why = str(exc) if str(exc).startswith(case.id) else f"{case.id}: {exc}"
                    log(f"[red]failed[/red]: {why}")
                    failed.append(why)
                    continue
                finally:
                    if progress:
                        progress()
                (cdir / "result.json").write_text(json.dumps(res, indent=1) + "\n")
                results.append(res)
                order = {c.id: i for i, c in enumerate(cases)}
                _write_summary(out, sc, sorted(results, key=lambda r: order.get(r["id"], 0)))
        finally:
            run.teardown(inv.hosts)
        meta["wall_s"] = round(time.monotonic() - wall0, 1)
        (out / "meta.json").write_text(json.dumps(meta, indent=1))
    if failed:
        raise RunError("; ".join(failed[:5]) + (f" (and {len(failed) - 5} more)"
                                                if len(failed) > 5 else ""))
    return out
