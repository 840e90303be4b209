"""The shell commands of README.md, docs/*.md and */README.md, and where each runs.

Every line of a ```sh or ```bash block is a command (a trailing ``\\``
continues it on the next line; a ``# comment`` after it is dropped).  Each
command matches exactly one rule of ``RULES`` (the first that matches):

* ``host``: run on the host by tests/unit/test_docs_commands.py;
* ``vm``: run in a kernel that loads the modules by
  tests/kernel/test_docs_commands.py (in the VM under ``make kernel-test``),
  the commands of one block in order, as a reader types them;
* ``synopsis``: a usage line (``[--option]``): every option it names must be
  in the command's ``--help``;
* ``skip``: not run, for the reason the rule gives.

A command no rule matches fails the tests: a new command in the docs needs a
rule, so it is either run or skipped for a stated reason.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path
from typing import List, Optional, Tuple

REPO = Path(__file__).resolve().parents[1]
SAMPLES = REPO / "docs/samples"


@dataclass(frozen=True)
class Rule:
    pattern: str
    where: str                     # host | vm | synopsis | skip
    expect: str = ""               # host/vm: a regex the output must match; skip: the reason
    exit: Tuple[int, ...] = (0,)   # the documented exit statuses where 0 is not the only one
    stdin: str = ""
    needs: str = ""                # a file it needs (~ expanded); missing: skipped, saying so


@dataclass(frozen=True)
class Command:
    doc: str                       # path relative to the repo
    line: int
    block: int                     # index of the code block in its doc
    text: str
    rule: Optional[Rule]

    def __str__(self) -> str:
        return f"{self.doc}:{self.line}: {self.text}"


UML_DEFAULT = "~/.cache/synctcp/kernel/uml-7.2/.done"     # the default series
KERNEL_BUILD = ("building and installing a patched kernel on a real host, with a reboot; make test "
                "builds the same series into its test kernel (tcp_option/build-kernel.sh) and boots it")
PATCHED = "needs the kernel of tcp_option/ with the option on: tests/owts (make test) checks it"
GPS = ("needs a GPS receiver with PPS and a chronyd disciplining this host; tests/unit/test_clock*.py "
       "run private chronyd and gpsfake instances instead")

RULES: List[Rule] = [
    # -- the README's two commands and other long or host-changing ones --------
    Rule(r"^make (demo|test)$", "skip", "the README's two commands: make fresh-check runs them in a pristine root"),
    Rule(r"^make demo MININET=1$", "skip", "the demo on Mininet (minutes): tests/kernel/test_mininet.py runs the "
         "backend"),
    Rule(r"^make bench$", "skip", "a benchmark of tens of minutes (make bench)"),
    Rule(r"^(sudo )?make (install|dkms-install|dkms-uninstall)\b", "skip",
         "installs into this host's /lib/modules or DKMS; tests/unit/test_dkms.py runs dkms in temporary trees"),
    Rule(r"^make -C kmod/tests$", "skip", "the C unit tests: make test runs them (make unit)"),
    Rule(r"^(SERIES=7.2 )?make -C tcp_option (kernel|modules|test)$", "skip",
         "the patched test kernel: make test builds it and runs tests/owts in it (owts-test)"),
    Rule(r"^make -C tcp_option (check|port-check)$", "skip",
         "checkpatch of the series (make checkpatch) and a 5-minute sid source build (port-check)"),
    Rule(r"^make$", "host", ""),
    Rule(r"^make -C kmod$", "host", ""),
    Rule(r"^(sudo )?make load$", "vm", r"\bsync\b.*\bmixreact\b.*\betcp\b|\betcp\b"),
    # -- modules and sysctls ------------------------------------------------
    Rule(r"^(sudo )?(\.venv/bin/)?synctcp load sync ", "vm", r"sync"),
    Rule(r"^(sudo )?(\.venv/bin/)?synctcp load all --allow$", "skip",
         "after make dkms-install (modprobe finds them there)"),
    Rule(r"^(sudo )?sysctl net\.ipv4\.tcp_congestion_control=(sync|etcp)$", "vm",
         r"net\.ipv4\.tcp_congestion_control = (sync|etcp)"),
    Rule(r"^(sudo )?sysctl net\.ipv4\.tcp_allowed_congestion_control=", "vm",
         r"tcp_allowed_congestion_control = reno cubic sync"),
    Rule(r"^(sudo )?ip route replace 10\.0\.0\.0/24 via 192\.0\.2\.1 ", "skip",
         "needs a gateway at 192.0.2.1, a documentation address (RFC 5737)"),
    Rule(r"^insmod kmod/tcp_etcp\.ko ", "vm", ""),
    Rule(r"^echo 30 > /sys/module/tcp_etcp/parameters/b$", "vm", ""),
    Rule(r"^modinfo tcp_sync \| grep signer$", "skip", "a DKMS-signed module installed for Secure Boot"),
    Rule(r"^dkms status synctcp$", "skip", "after make dkms-install"),
    Rule(r"^(sudo )?apt-get install dkms ", "skip", "make setup installs dkms"),
    Rule(r"^(sudo )?(mokutil|reboot)\b", "skip", "Secure Boot enrolment on a real host"),
    # -- reading state ------------------------------------------------------
    Rule(r"^synctcp list$", "host", r"^sync\s"),
    Rule(r"^synctcp clock$", "host", r"^verdict: ", exit=(0, 1)),      # 0 fit, 1 unfit (docs/clock.md)
    Rule(r"^synctcp clock --json$", "host", r'"verdict"', exit=(0, 1)),
    Rule(r"^synctcp clock --(peer-error-us|max-error-us) \d+$", "host", r"^verdict: ", exit=(0, 1)),
    Rule(r"^synctcp clock --chronyc-socket ", "host", r"^verdict: ", exit=(0, 1)),
    Rule(r"^synctcp ss$", "vm", r"^\S+:\d+ -> \S+:\d+ sync cwnd:\d+ rtt:\S+ .*src:ts"),
    Rule(r"^synctcp ss --watch 0\.5$", "vm", r"sync cwnd:\d+", stdin=""),
    # -- experiments --------------------------------------------------------
    Rule(r"^synctcp-testbed list$", "host", r"^weigle-ftp\s+\d+ cases"),
    Rule(r"^synctcp-testbed show weigle-ftp$", "host", r"^topology: parking-lot"),
    Rule(r"^synctcp-testbed run ", "skip", "runs of minutes per case: tests/kernel/test_testbed.py runs the runner"),
    Rule(r"^(PYTHONPATH=\S+ +)?dask (scheduler|worker) ", "skip",
         "a Dask scheduler or worker that runs until stopped: tests/distributed (make dist-test) "
         "starts both on loopback and runs cases through them"),
    Rule(r"^synctcp-mininet run ", "skip", "runs of minutes per case: tests/kernel/test_mininet.py runs the backend"),
    Rule(r"^synctcp-testbed report results/gu$", "skip", "needs the run directory the run above writes"),
    Rule(r"^synctcp-testbed ledger RUNDIR\.\.\. \[", "synopsis"),
    # -- real hosts (docs/real-hosts.md) ----------------------------------------
    Rule(r"^synctcp-testbed hosts check hosts\.toml --cc sync,cubic \[", "synopsis"),
    Rule(r"^(python -m synctcp_testbed\.remote\.lab (up|lose|down) /tmp/lab|"
         r"synctcp-testbed hosts check /tmp/lab/hosts\.toml )", "skip",
         "namespace hosts with sshd (root, OpenSSH): tests/kernel/test_remote_lab.py runs the "
         "same commands on UML 7.2, whose image has OpenSSH"),
    Rule(r"^apt-get install -y git make gcc libc6-dev dkms ", "skip",
         "a fresh real host's packages (docs/real-hosts.md, section 9): make setup installs them "
         "here"),
    Rule(r"^git clone URL-OF-THIS-REPOSITORY ", "skip", "a placeholder for the operator's clone"),
    Rule(r"^sysctl net\.ipv4\.tcp_timestamps$", "host", r"^net\.ipv4\.tcp_timestamps = 1$"),
    Rule(r"^chronyc tracking$", "skip",
         "needs a running chronyd: tests/unit/test_clock_chain.py runs a private one"),
    Rule(r"^make venv$", "skip", "make test runs it first (this checkout's .venv)"),
    Rule(r"^\.venv/bin/synctcp-testbed (hosts check hosts\.toml|run wan\.toml --hosts|"
         r"report runs/wan)", "skip",
         "two real hosts: tests/kernel/test_remote_run.py runs run --hosts, its captures and "
         "preflight on namespace hosts, tests/unit/test_report.py the report"),
    Rule(r"^scripts/umlrun -- \.venv/bin/python3 -m pytest -q tests/kernel/test_remote_lab\.py$",
         "skip", "the kernel tests: make kernel-test runs them"),
    Rule(r"^synctcp-testbed ledger RUNDIR\.\.\.$", "skip",
         "needs run directories: tests/unit/test_ledger.py runs the ledger on made-up ones"),
    Rule(r"^mn --custom mininet/synctcp_mininet/topos\.py --topo dumbbell --controller none --test pingall$",
         "vm", r"Results: 0% dropped"),
    Rule(r"^mn --custom mininet/synctcp_mininet/topos\.py --topo dumbbell,[^ ]+ --controller none$", "vm",
         r"\*\*\* Starting CLI", stdin="exit\n"),
    Rule(r"^mininet> ", "skip", "typed at the Mininet CLI that the line before starts"),
    # -- captures (FILE.pcap and CAP.pcap: the shipped samples) ---------------
    Rule(r"^synctcp owts CAP\.pcap$", "host", r"ott ms: n=\d+"),
    Rule(r"^synctcp owts CAP\.pcap -q --expect-fwd-ms 20 --expect-rev-ms 5$", "host", r"error vs 5 ms"),
    Rule(r"^synctcp owts CAP\.pcap --json$", "host", r'"connections"'),
    Rule(r"^synctcp owts CAP\.pcap --csv out\.csv --plot out\.png$", "host", r"ott ms"),
    Rule(r"^synctcp owts CAP\.pcap --flow 5001 --all$", "host", r"^\s+[\d.]+ 10\.0\.0\.2:5001 > 10\.0\.0\.1:40000 .*ott_us=\d+"),
    Rule(r"^synctcp trace docs/samples/ts-sawtooth\.pcap$", "host", r"10\.0\.0\.1:40000>10\.0\.0\.2:5001 .* ts "),
    Rule(r"^synctcp correlate docs/samples/ts-sawtooth\.pcap$", "host", r"CIM x=2 w=20 1σ .*1\.000 \(5/5\)"),
    Rule(r"^synctcp (trace|correlate) FILE\.pcap \[", "synopsis"),
    Rule(r"^\[--", "synopsis"),
    Rule(r"^PYTHONPATH=.* scripts/vmrun python3 -m pytest ", "skip", "the kernel tests: make kernel-test runs them"),
    # -- simulated time (docs/platform.md) -------------------------------------
    Rule(r"^(nice -n 19 ionice -c3 uml/build-uml\.sh|make uml-kernel$)", "skip",
         "builds a UML kernel (10-15 min); tests/unit/test_uml.py checks the cached build"),
    Rule(r"^scripts/umlrun sh -c 'uname -r; cat /proc/uptime'$", "host", r"^7\.2\.\d+", needs=UML_DEFAULT),
    Rule(r"^uml/build-rootfs\.sh --key$", "host", r"^[0-9a-f]{12}$"),
    Rule(r"^uml/build-rootfs\.sh --print$", "host", "", exit=(0, 1)),
    Rule(r"^uml/build-rootfs\.sh --lock$", "skip",
         "rewrites uml/rootfs/*.lock from the mirror's current versions: a new image and new golden files"),
    Rule(r"^uml/build-rootfs\.sh --renew$", "skip",
         "rewrites the lines of uml/rootfs/debs.lock the mirror dropped: tests/unit/test_rootfs_renew.py runs it on a local repository"),
    Rule(r"^SYNCTCP_GOLDEN_UPDATE=1 (\.venv/bin/)?python3 -m pytest ", "skip",
         "rewrites the golden files; make platform-test runs the same test without it"),
    Rule(r"^SYNCTCP_UML_SERIES=7\.2 scripts/umlrun python3 -m pytest ", "skip",
         "the module tests on sid's UML kernel: minutes of wall time"),
    Rule(r"^(SYNCTCP_UML_SERIES=7\.2 )?(nice -n 10 )?scripts/umlrun "
         r"(python3 -m synctcp_testbed\.cli run |sh uml/sampler-cost\.sh )", "skip",
         "the wall-cost measurements of docs/platform.md: minutes of UML time each"),
    # -- a real host's clock and kernel (docs/clock.md, docs/tcp-option.md) ----
    Rule(r"^(chronyc|ppstest|gpspipe) ", "skip", GPS),
    Rule(r"^[A-Z_]+=\"", "skip", "a line of /etc/default/gpsd, not a command"),
    Rule(r"^(apt-get install linux-source-6\.1|tar xf /usr/src/linux-source|for p in /path/to/synctcp|"
         r"cp /boot/config-|scripts/config --disable|make olddefconfig|make -j\"\$\(nproc\)\" bindeb-pkg|"
         r"dpkg -i \.\./linux-image|reboot$|cd /path/to/synctcp)", "skip", KERNEL_BUILD),
    Rule(r"^sysctl -w net\.ipv4\.tcp_(owts=1|congestion_control=sync)$", "skip", PATCHED),
    Rule(r"^nstat -az TCPOWTS", "skip", PATCHED),
]


def _strip_comment(line: str) -> str:
    out, quote = [], ""
    for i, ch in enumerate(line):
        if quote:
            quote = "" if ch == quote else quote
        elif ch in "'\"":
            quote = ch
        elif ch == "#" and (i == 0 or line[i - 1] in " \t"):
            break
        out.append(ch)
    return "".join(out).rstrip()


def doc_files() -> List[Path]:
    return [REPO / "README.md", *sorted((REPO / "docs").glob("*.md")), *sorted(REPO.glob("*/README.md"))]


def extract(path: Path) -> List[Tuple[int, int, str]]:
    """(line, block, command) for every command of the file's sh/bash blocks."""
    cmds: List[Tuple[int, int, str]] = []
    fence: Optional[str] = None
    block = -1
    pending = ""
    start = 0
    for no, raw in enumerate(path.read_text().splitlines(), 1):
        m = re.match(r"^\s*```(\w*)\s*$", raw)
        if m:
            if fence is None:
                fence = m.group(1)
                block += 1
            else:
                fence = None
            continue
        if fence not in ("sh", "bash"):
            continue
        line = _strip_comment(raw).strip()
        if not line and not pending:
            continue
        if not pending:
            start = no
        if line.endswith("\\"):
            pending += line[:-1].rstrip() + " "
            continue
        cmds.append((start, block, (pending + line).strip()))
        pending = ""
    return cmds


def rule_for(text: str) -> Optional[Rule]:
    for r in RULES:
        if re.search(r.pattern, text):
            return r
    return None


def commands() -> List[Command]:
    return [Command(str(p.relative_to(REPO)), line, block, text, rule_for(text))
            for p in doc_files() for line, block, text in extract(p)]


def substitute(text: str) -> str:
    """A documented command as the test runs it: placeholders become the shipped samples."""
    text = re.sub(r"^sudo ", "", text)
    text = re.sub(r"(?<![\w/])docs/samples/", f"{SAMPLES}/", text)
    text = text.replace("FILE.pcap", str(SAMPLES / "ts-sawtooth.pcap"))
    text = text.replace("CAP.pcap", str(SAMPLES / "owts.pcap"))
    return text
