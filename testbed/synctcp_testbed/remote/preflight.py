"""What every host must have before a case runs, checked before anything runs.

One POSIX shell probe per host (:data:`PROBE`: no Python needed on the host
to be told what is missing) prints ``key=value`` facts: kernel, headers,
the congestion-control algorithms available and allowed, our modules
installed or DKMS-installable, ``tcp_timestamps``, the one-way-timestamp
option's sysctl (the patched kernel of ``tcp_option/``), the ports in use,
the programs the run needs (a C compiler for flowgen and qsampler, or
iperf3; python3 with pyroute2 for the sender's inet_diag sampler; tcpdump
for captures; tc for an emulator), and the clock (``boot_id``, ``chronyc -c
tracking``: :func:`clock_of`).  :func:`problems` turns the facts and what
a run needs of each host (:func:`needs_of`) into one line per failure,
naming the host and the fix; :func:`notes` says what is no failure but
changes the figures (no clock bound).
"""

from __future__ import annotations

import re
import shlex
from dataclasses import dataclass, field
from typing import Dict, List, Optional, Set, Tuple

from synctcp.modctl import CC_MODULES

from ..plan.flows import BULK_PORT, CBR_PORT, CPORT
from .clocks import HostClock, host_clock
from .inventory import Host, Inventory

#: the probe: key=value lines; SOCK lines are the local addresses in use
PROBE = r"""
echo "kernel=$(uname -r)"
echo "uid=$(id -u)"
[ -d "/lib/modules/$(uname -r)/build" ] && echo headers=1 || echo headers=0
echo "available=$(cat /proc/sys/net/ipv4/tcp_available_congestion_control 2>/dev/null)"
echo "allowed=$(cat /proc/sys/net/ipv4/tcp_allowed_congestion_control 2>/dev/null)"
echo "timestamps=$(cat /proc/sys/net/ipv4/tcp_timestamps 2>/dev/null || echo none)"
echo "owts=$(cat /proc/sys/net/ipv4/tcp_owts 2>/dev/null || echo none)"
echo "ip_forward=$(cat /proc/sys/net/ipv4/ip_forward 2>/dev/null)"
echo "boot_id=$(cat /proc/sys/kernel/random/boot_id 2>/dev/null)"
command -v chronyc >/dev/null 2>&1 && echo "tracking=$(timeout 5 chronyc -c CHRONYC_SOCKET tracking 2>/dev/null | head -n 1)"
for m in MODULES; do
  if modinfo -F filename "$m" >/dev/null 2>&1; then echo "modfile_$m=1"; else echo "modfile_$m=0"; fi
done
command -v dkms >/dev/null 2>&1 && echo dkms=1 || echo dkms=0
for p in cc python3 tcpdump tc ip iperf3 chronyc timeout setsid tar mkfifo; do
  command -v "$p" >/dev/null 2>&1 && echo "have_$p=1" || echo "have_$p=0"
done
python3 -c 'import pyroute2' >/dev/null 2>&1 && echo pyroute2=1 || echo pyroute2=0
if command -v getcap >/dev/null 2>&1 && command -v tcpdump >/dev/null 2>&1; then
  echo "tcpdump_caps=$(getcap "$(command -v tcpdump)" 2>/dev/null | sed 's/.* //')"
fi
SUDO
for d in IFACES; do [ -e "/sys/class/net/$d" ] && echo "if_$d=1" || echo "if_$d=0"; done
# TCP sockets but those in TIME_WAIT (06), which flowgen's SO_REUSEADDR binds over:
# an earlier run's last connections hold its ports for a minute
[ -r /proc/net/tcp ] && awk 'NR > 1 && $4 != "06" { print "SOCK=" $2 }' /proc/net/tcp
[ -r /proc/net/udp ] && awk 'NR > 1 { print "SOCK=" $2 }' /proc/net/udp
echo probe=done
"""


@dataclass
class Needs:
    """What a run asks of one host."""

    ccs: Set[str] = field(default_factory=set)          # algorithms it sends with
    listen: Set[int] = field(default_factory=set)       # ports its receivers listen on
    bind: Set[int] = field(default_factory=set)         # its senders' client ports
    sends: bool = False
    receives: bool = False
    capture: bool = False
    emulator: bool = False


def needs_of(inv: Inventory, ccs: Set[str], flows: int, capture: bool) -> Dict[str, Needs]:
    """What a run of ``flows`` flows per sender/receiver pair with algorithms ``ccs`` asks of
    each host of the inventory (``hosts check`` has no scenario: these are its options)."""
    out: Dict[str, Needs] = {}
    for h in inv.hosts:
        n = Needs(capture=capture and "emulator" not in h.roles,
                  emulator="emulator" in h.roles)
        if "sender" in h.roles:
            n.sends, n.ccs = True, set(ccs)
            n.bind = {CPORT + k for k in range(flows)}
        if "receiver" in h.roles:
            n.receives = True
            n.listen = {p + k for p in (BULK_PORT, CBR_PORT) for k in range(flows)}
        out[h.name] = n
    return out


def probe_script(host: Host) -> str:
    ifaces = " ".join(sorted(set(host.interfaces.values()))) or "''"
    sudo = ("sudo -n true >/dev/null 2>&1 && echo sudo=1 || echo sudo=0"
            if host.sudo else "echo sudo=0")
    sock = f"-h {shlex.quote(host.chronyc_socket)}" if host.chronyc_socket else ""
    return (PROBE.replace("MODULES", " ".join(sorted(CC_MODULES.values())))
            .replace("IFACES", ifaces).replace("SUDO", sudo).replace("CHRONYC_SOCKET", sock))


def parse_probe(text: str) -> Tuple[Dict[str, str], Set[int]]:
    """The probe's facts and the local ports in use (TCP and UDP)."""
    facts: Dict[str, str] = {}
    ports: Set[int] = set()
    for line in text.splitlines():
        key, sep, value = line.partition("=")
        if not sep:
            continue
        if key == "SOCK":
            _, _, port = value.rpartition(":")
            try:
                ports.add(int(port, 16))
            except ValueError:
                continue
        else:
            facts[key] = value.strip()
    return facts, ports


def kernel_version(release: str) -> Optional[Tuple[int, int]]:
    m = re.match(r"(\d+)\.(\d+)", release)
    return (int(m.group(1)), int(m.group(2))) if m else None


def problems(host: Host, facts: Dict[str, str], used: Set[int], needs: Needs) -> List[str]:
    """One line per failure of ``host``: "host NAME: what; fix: how"."""
    out: List[str] = []

    def bad(what: str, fix: str) -> None:
        out.append(f"host {host.name}: {what}; fix: {fix}")

    if facts.get("probe") != "done":
        bad("the probe did not finish (a POSIX sh with uname, cat, awk?)", "a Debian or "
            "similar host")
        return out
    root = facts.get("uid") == "0" or facts.get("sudo") == "1"
    release = facts.get("kernel", "?")
    available = set(facts.get("available", "").split())
    allowed = set(facts.get("allowed", "").split())
    for p in ("tar", "mkfifo", "timeout", "setsid"):
        if facts.get(f"have_{p}") != "1":
            bad(f"no {p}", "apt-get install coreutils tar util-linux")
    if needs.sends or needs.receives:
        if host.traffic == "iperf3" and facts.get("have_iperf3") != "1":
            bad("traffic = \"iperf3\" but no iperf3", "apt-get install iperf3")
        elif host.traffic == "flowgen" and facts.get("have_cc") != "1":
            bad("traffic = \"flowgen\" but no C compiler to build it from the shipped source",
                "apt-get install gcc libc6-dev (or traffic = \"iperf3\")")
        elif facts.get("have_cc") != "1" and facts.get("have_iperf3") != "1":
            bad("no C compiler to build flowgen from the shipped source, and no iperf3 to "
                "fall back on", "apt-get install gcc libc6-dev (or iperf3)")
        if facts.get("timestamps") != "1":
            bad(f"net.ipv4.tcp_timestamps is {facts.get('timestamps')}: RFC 7323 timestamps "
                f"off, so the modules fall back to RTT and no OTT is measured",
                "sysctl -w net.ipv4.tcp_timestamps=1")
    if needs.sends:
        ver = kernel_version(release)
        ours = {cc for cc in needs.ccs if cc in CC_MODULES}
        for cc in sorted(needs.ccs):
            if cc in available:
                if not root and cc not in allowed:
                    bad(f"algorithm {cc} is loaded but not allowed for unprivileged sockets",
                        f"sysctl -w net.ipv4.tcp_allowed_congestion_control=\"{' '.join(sorted(allowed | {cc}))}\" "
                        f"(or log in as root)")
                continue
            mod = CC_MODULES.get(cc, f"tcp_{cc}")
            if facts.get(f"modfile_{mod}") == "1" or (cc not in CC_MODULES):
                if cc not in CC_MODULES and facts.get(f"modfile_{mod}") != "1":
                    bad(f"algorithm {cc} is not available in kernel {release}",
                        f"modprobe {mod}, or another kernel")
                elif not root:
                    bad(f"module {mod} is installed but not loaded, and loading it needs root",
                        f"modprobe {mod} on the host (or sudo = true in the inventory)")
                continue
            if ver is not None and ver < (6, 1):
                bad(f"kernel {release} is older than 6.1, the oldest the modules support",
                    "a Debian 12 (6.1) or newer kernel")
            elif facts.get("headers") != "1":
                bad(f"module {mod} for algorithm {cc} is not installed, and kernel {release} "
                    f"has no headers to build it", f"apt-get install linux-headers-{release} "
                    f"dkms, then make dkms-install in a checkout on the host (docs/dkms.md)")
            else:
                bad(f"module {mod} for algorithm {cc} is not installed "
                    f"({'DKMS is there' if facts.get('dkms') == '1' else 'no DKMS'})",
                    "make dkms-install in a checkout on the host (docs/dkms.md)"
                    if facts.get("dkms") == "1" else
                    "apt-get install dkms, then make dkms-install in a checkout on the host "
                    "(docs/dkms.md)")
        if ours and not root:
            bad("the modules' variant and parameters are set through /sys/module: needs root",
                "log in as root, or sudo = true with passwordless sudo")
        if facts.get("have_python3") != "1" or facts.get("pyroute2") != "1":
            bad("no python3 with pyroute2 for the sender's inet_diag sampler",
                "apt-get install python3 python3-pyroute2")
    busy = sorted((needs.listen | needs.bind) & used)
    if busy:
        bad(f"port{'s' if len(busy) > 1 else ''} {', '.join(map(str, busy[:8]))} "
            f"{'are' if len(busy) > 1 else 'is'} in use (the flows' ports)",
            "stop what uses them (ss -tanp), or free the ports 5201+, 6201+ and 40001+")
    if needs.capture:
        if facts.get("have_tcpdump") != "1":
            bad("no tcpdump for --capture", "apt-get install tcpdump")
        elif not root and "cap_net_raw" not in facts.get("tcpdump_caps", ""):
            bad("tcpdump cannot capture as this user",
                "log in as root, or setcap cap_net_raw,cap_net_admin=eip $(command -v tcpdump)")
    if needs.emulator:
        if not root:
            bad("the emulator's qdiscs need root", "log in as root, or sudo = true")
        if facts.get("have_tc") != "1":
            bad("no tc", "apt-get install iproute2")
        if facts.get("have_cc") != "1":
            bad("no C compiler to build qsampler (the queue sampler) from the shipped source",
                "apt-get install gcc libc6-dev")
        if facts.get("ip_forward") != "1":
            bad("net.ipv4.ip_forward is off: the emulator would not forward the flows",
                "sysctl -w net.ipv4.ip_forward=1")
    for key, dev in sorted(host.interfaces.items()):
        if facts.get(f"if_{dev}") != "1":
            bad(f"interfaces.{key}: no interface {dev}", "ip link (the names on the host)")
    return out


def option_problems(pairs: List[Tuple[Host, Host]], facts: Dict[str, Dict[str, str]]) -> List[str]:
    """Where both ends run the patched kernel (``net.ipv4.tcp_owts`` exists), the option
    must be on at both, or the flows would not negotiate it."""
    out: List[str] = []
    for s, r in pairs:
        fs, fr = facts.get(s.name, {}), facts.get(r.name, {})
        if fs.get("owts", "none") == "none" or fr.get("owts", "none") == "none":
            continue
        for h, f in ((s, fs), (r, fr)):
            if f.get("owts") == "0":
                line = (f"host {h.name}: both {s.name} and {r.name} run the one-way-timestamp "
                        f"kernel, but net.ipv4.tcp_owts is 0 here: the flows would not "
                        f"negotiate the option; fix: sysctl -w net.ipv4.tcp_owts=1 "
                        f"(docs/tcp-option.md)")
                if line not in out:
                    out.append(line)
    return out


def clock_of(host: Host, facts: Dict[str, str]) -> HostClock:
    """The host's clock as the probe read it (``chronyc -c tracking``, ``boot_id``)."""
    return host_clock(host.name, facts.get("tracking"), facts.get("boot_id") or None)


def notes(host: Host, facts: Dict[str, str]) -> List[str]:
    """What is not a failure but changes the figures: no clock bound (absolute OTTs
    without one), no compiler (iperf3 instead of flowgen)."""
    out = []
    if facts.get("have_chronyc") != "1":
        out.append(f"host {host.name}: no chronyc: no clock bound from it (absolute OTTs "
                   f"without a bound; queuing delays are still exact)")
    elif not clock_of(host, facts).bounded:
        out.append(f"host {host.name}: no clock bound: {clock_of(host, facts).basis} "
                   f"(absolute OTTs without a bound; queuing delays are still exact)")
    if "emulator" not in host.roles and traffic_of(host, facts) == "iperf3":
        out.append(f"host {host.name}: iperf3 -C instead of flowgen ("
                   + ("traffic = \"iperf3\"" if host.traffic == "iperf3" else "no C compiler")
                   + "): bulk flows only, intervals placed within a round trip "
                     "(docs/real-hosts.md)")
    return out


def traffic_of(host: Host, facts: Dict[str, str]) -> str:
    """The traffic generator an end host runs: its ``traffic`` key, or for ``auto`` flowgen
    where it has a C compiler and else iperf3 (remote/iperf.py)."""
    if host.traffic != "auto":
        return host.traffic
    return "flowgen" if facts.get("have_cc") == "1" else "iperf3"
