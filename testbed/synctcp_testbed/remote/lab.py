"""Namespace hosts: real hosts to run ``--hosts`` against, on one machine.

A lab is what issue 30's tests and a newcomer without two machines need:
network namespaces that each run a real OpenSSH ``sshd`` on an address of
their own, reached by the orchestrator (the caller's namespace) over a
management network of their own, so that control traffic never crosses
the measured path.  The data path between them is a
:class:`~synctcp_testbed.network.topology.Topology`::

    path lab (default)              s1..sN -- L ===== R -- r1..rN
                                    the "WAN": the link L-R delays and rate-limits
                                    (netem delay, HTB rate, a drop-tail queue)
    emulator lab (--emulator)       s1..sN -- L -- em -- R -- r1..rN
                                    em is a host with role emulator: the runner
                                    builds the scenario's stages on its two
                                    interfaces, as on a two-NIC box in between

The hosts are the s*, r* (and em) namespaces; L and R only forward.  Every
host gets a veth ``mgmt`` on the bridge ``labmgmt`` of the caller's
namespace (10.250.0.1/24; host i has 10.250.0.(10+i)) and its own sshd on
that address alone, with a host key, an authorized key and a known_hosts
file the lab generates in its directory (``ssh-keygen``; nothing of the
caller's ~/.ssh is read or written).  :meth:`Lab.up` writes the
inventory ``hosts.toml`` there, usable as is::

    python -m synctcp_testbed.remote.lab up DIR [--senders N] [--emulator]
                                        [--rate-mbit R] [--delay-ms D] [--queue-pkts Q]
    synctcp-testbed run SCENARIO --hosts DIR/hosts.toml
    python -m synctcp_testbed.remote.lab down DIR
    python -m synctcp_testbed.remote.lab lose|restore DIR HOST   (a host lost, for tests)

``down`` stops the sshds (their pid files) and deletes the namespaces and
the bridge; it is also what ``up`` does first, so a killed lab never
blocks the next one.  Root only (namespaces); the image of the UML
instances has OpenSSH (uml/rootfs/packages).
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import signal
import subprocess
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Dict, List, Optional, Sequence

from ..network.netns import TopologyError, pids_in_netns, sh
from ..network.qdisc import Egress, QueueSpec
from ..network.topology import Topology

PREFIX = "lab"
#: the topology's data subnets are 10.SUBNET.LINK.0/24
SUBNET = 240
BRIDGE = "labmgmt"
MGMT_NET = "10.250.0"
MGMT_GW = f"{MGMT_NET}.1"
SSHD = "/usr/sbin/sshd"
#: sshd's privilege-separation directory (Debian's build needs it)
PRIVSEP = Path("/run/sshd")
STATE = "lab.json"


class LabError(RuntimeError):
    """A lab that cannot be built or reached (one line)."""


@dataclass
class LabHost:
    name: str
    node: str
    roles: List[str]
    mgmt: str
    data_address: str = ""
    interfaces: Dict[str, str] = field(default_factory=dict)


@dataclass
class Lab:
    """A lab's description; :meth:`up` builds it in ``root``, :meth:`down` removes it."""

    root: Path
    senders: int = 1
    emulator: bool = False
    rate_mbit: float = 20.0
    delay_ms: float = 20.0
    queue_pkts: int = 100
    hosts: List[LabHost] = field(default_factory=list)

    def topology(self) -> Topology:
        """The data path: the hosts' namespaces and the forwarding ones between them."""
        if not 1 <= self.senders <= 8:
            raise LabError(f"senders {self.senders}: 1 to 8")
        topo = Topology(prefix=PREFIX, subnet_base=SUBNET)
        topo.add_node("L", router=True)
        topo.add_node("R", router=True)
        if self.emulator:
            topo.add_node("em", router=True)
            topo.connect("L", "em", name="Lem")
            topo.connect("em", "R", name="emR")
        else:
            # the WAN: one-way delay and the rate both ways, a drop-tail queue
            wan = Egress(delay_ms=self.delay_ms / 2, rate_mbit=self.rate_mbit,
                         queue=QueueSpec("droptail", self.queue_pkts))
            rev = Egress(delay_ms=self.delay_ms / 2, rate_mbit=self.rate_mbit,
                         queue=QueueSpec("droptail", self.queue_pkts))
            topo.connect("L", "R", a_egress=wan, b_egress=rev, name="wan")
        for i in range(1, self.senders + 1):
            topo.add_node(f"s{i}")
            topo.add_node(f"r{i}")
            topo.connect(f"s{i}", "L")
            topo.connect("R", f"r{i}")
        return topo

    def plan_hosts(self, topo: Topology) -> List[LabHost]:
        out = []
        n = 0
        for i in range(1, self.senders + 1):
            for node, role in ((f"s{i}", "sender"), (f"r{i}", "receiver")):
                n += 1
                out.append(LabHost(node, node, [role], f"{MGMT_NET}.{10 + n}",
                                   data_address=topo.addr(node),
                                   interfaces={"data": topo.dev(node, topo._links_of(node)[0])}))
        if self.emulator:
            n += 1
            out.append(LabHost("em", "em", ["emulator"], f"{MGMT_NET}.{10 + n}",
                               interfaces={"sender": topo.dev("em", topo.link("Lem")),
                                           "receiver": topo.dev("em", topo.link("emR"))}))
        return out

    # -- life cycle --------------------------------------------------------------
    def up(self) -> Path:
        """Build the lab, start every host's sshd, write ``hosts.toml``; its path."""
        if os.geteuid() != 0:
            raise LabError("a lab needs root (network namespaces)")
        for tool in ("ssh", "ssh-keygen"):
            if not shutil.which(tool):
                raise LabError(f"{tool} is not installed (apt-get install openssh-client)")
        if not os.access(SSHD, os.X_OK):
            raise LabError(f"{SSHD} is not installed (apt-get install openssh-server)")
        down(self.root)
        self.root.mkdir(parents=True, exist_ok=True)
        topo = self.topology()
        self.hosts = self.plan_hosts(topo)
        try:
            topo.build()
            self._mgmt()
            self._keys()
            for h in self.hosts:
                self._sshd(h)
            self._wait_ready()
        except BaseException:
            down(self.root, topo)
            raise
        (self.root / STATE).write_text(json.dumps(
            {"namespaces": [topo.ns(n) for n in topo.nodes],
             "hosts": [h.__dict__ for h in self.hosts]}, indent=1) + "\n")
        return self._inventory()

    def _mgmt(self) -> None:
        lines = [f"link add {BRIDGE} type bridge", f"addr add {MGMT_GW}/24 dev {BRIDGE}",
                 f"link set {BRIDGE} up"]
        for k, h in enumerate(self.hosts, 1):
            ns = f"{PREFIX}-{h.node}"
            lines += [f"link add labm{k} type veth peer name mgmt netns {ns}",
                      f"link set labm{k} master {BRIDGE}", f"link set labm{k} up"]
        sh(["ip", "-batch", "-"], stdin="\n".join(lines) + "\n")
        for h in self.hosts:
            sh(["ip", "-batch", "-"], ns=f"{PREFIX}-{h.node}",
               stdin=f"addr add {h.mgmt}/24 dev mgmt\nlink set mgmt up\n")

    def _keys(self) -> None:
        for name in ("hostkey", "id"):
            for f in (self.root / name, self.root / f"{name}.pub"):
                f.unlink(missing_ok=True)
            sh(["ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-C", f"synctcp-lab-{name}",
                "-f", str(self.root / name)])
        auth = self.root / "authorized_keys"
        auth.write_text((self.root / "id.pub").read_text())
        auth.chmod(0o600)
        pub = (self.root / "hostkey.pub").read_text().split()
        (self.root / "known_hosts").write_text(
            "".join(f"{h.mgmt} {pub[0]} {pub[1]}\n" for h in self.hosts))

    def _sshd(self, h: LabHost) -> None:
        PRIVSEP.mkdir(mode=0o755, exist_ok=True)
        conf = self.root / f"sshd-{h.name}.conf"
        conf.write_text("\n".join([
            f"ListenAddress {h.mgmt}", "Port 22", f"HostKey {self.root / 'hostkey'}",
            f"AuthorizedKeysFile {self.root / 'authorized_keys'}",
            "PermitRootLogin prohibit-password", "PasswordAuthentication no",
            "KbdInteractiveAuthentication no", "UsePAM no",
            # the lab's files belong to whoever made them (an idmapped mount under UML)
            "StrictModes no", f"PidFile {self.root / f'sshd-{h.name}.pid'}",
            "LogLevel ERROR", "MaxStartups 50", ""]))
        sh([SSHD, "-f", str(conf), "-E", str(self.root / f"sshd-{h.name}.log")],
           ns=f"{PREFIX}-{h.node}")

    def _wait_ready(self, timeout_s: float = 30.0) -> None:
        """Until every host answers over SSH (sshd forks before it listens)."""
        deadline = time.monotonic() + timeout_s
        for h in self.hosts:
            while True:
                res = subprocess.run(self.ssh_command(h) + ["true"], capture_output=True,
                                     text=True, timeout=timeout_s)
                if res.returncode == 0:
                    break
                if time.monotonic() > deadline:
                    raise LabError(f"lab host {h.name}: sshd on {h.mgmt} does not answer: "
                                   f"{res.stderr.strip().splitlines()[-1:] or 'no output'}")
                time.sleep(0.2)

    def ssh_command(self, h: LabHost) -> List[str]:
        return ["ssh", "-i", str(self.root / "id"), "-o", "BatchMode=yes",
                "-o", f"UserKnownHostsFile={self.root / 'known_hosts'}",
                "-o", "StrictHostKeyChecking=yes", "-o", "ConnectTimeout=5",
                f"root@{h.mgmt}"]

    def _inventory(self) -> Path:
        out = ["# written by python -m synctcp_testbed.remote.lab up (docs/real-hosts.md)",
               "[ssh]", f'known_hosts = "{self.root / "known_hosts"}"', ""]
        for h in self.hosts:
            out += ["[[host]]", f'name = "{h.name}"', f'address = "{h.mgmt}"', 'user = "root"',
                    f'key = "{self.root / "id"}"', f"roles = {json.dumps(h.roles)}"]
            if h.data_address:
                out.append(f'data_address = "{h.data_address}"')
            if h.interfaces:
                out.append("interfaces = { " + ", ".join(
                    f'{k} = "{v}"' for k, v in sorted(h.interfaces.items())) + " }")
            out.append("")
        path = self.root / "hosts.toml"
        path.write_text("\n".join(out))
        return path


def lose(root: Path, name: str, lost: bool = True) -> None:
    """Take host ``name`` off the management network (its bridge port down), as a
    host that died or whose network failed looks to the orchestrator; ``lost=False``
    brings it back.  Its processes and its data path are untouched."""
    try:
        state = json.loads((root / STATE).read_text())
    except (OSError, ValueError):
        raise LabError(f"{root}: no lab (python -m synctcp_testbed.remote.lab up)") from None
    names = [h["name"] for h in state["hosts"]]
    if name not in names:
        raise LabError(f"lab has no host {name!r}; hosts: {', '.join(names)}")
    sh(["ip", "link", "set", f"labm{names.index(name) + 1}", "down" if lost else "up"])


def namespaces() -> List[str]:
    """The namespaces a lab (any lab: one per machine) has now."""
    d = Path("/run/netns")
    return sorted(p.name for p in d.iterdir() if p.name.startswith(f"{PREFIX}-")) \
        if d.is_dir() else []


def down(root: Path, topo: Optional[Topology] = None) -> None:
    """Stop a lab's sshds and every process left in its namespaces; delete them and the
    bridge.  Idempotent."""
    for pid_file in root.glob("sshd-*.pid") if root.is_dir() else []:
        try:
            os.kill(int(pid_file.read_text().split()[0]), signal.SIGTERM)
        except (ValueError, IndexError, ProcessLookupError, OSError):
            pass
        pid_file.unlink(missing_ok=True)
    names = namespaces()
    for pid in pids_in_netns(names):
        try:
            os.kill(pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
    if names:
        sh(["ip", "-force", "-batch", "-"], stdin="".join(f"netns del {n}\n" for n in names),
           check=False)
    sh(["ip", "link", "del", BRIDGE], check=False)
    left = namespaces()
    if left:
        raise LabError(f"could not delete namespaces {', '.join(left)}")


def main(argv: Optional[Sequence[str]] = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m synctcp_testbed.remote.lab",
                                 description="namespace hosts with sshd (docs/real-hosts.md)")
    sub = ap.add_subparsers(dest="cmd", required=True)
    u = sub.add_parser("up", help="build a lab and write DIR/hosts.toml")
    u.add_argument("dir")
    u.add_argument("--senders", type=int, default=1, help="sender/receiver host pairs (1-8)")
    u.add_argument("--emulator", action="store_true",
                   help="an emulator host between them (the scenario's stages go there)")
    u.add_argument("--rate-mbit", type=float, default=20.0, help="the WAN's rate (path lab)")
    u.add_argument("--delay-ms", type=float, default=20.0, help="the WAN's RTT (path lab)")
    u.add_argument("--queue-pkts", type=int, default=100, help="the WAN's queue (path lab)")
    d = sub.add_parser("down", help="stop a lab's sshds, delete its namespaces")
    d.add_argument("dir")
    for cmd, what in (("lose", "take HOST off the management network"),
                      ("restore", "bring HOST back")):
        c = sub.add_parser(cmd, help=what)
        c.add_argument("dir")
        c.add_argument("host")
    a = ap.parse_args(argv)
    try:
        if a.cmd == "up":
            lab = Lab(Path(a.dir).resolve(), a.senders, a.emulator, a.rate_mbit, a.delay_ms,
                      a.queue_pkts)
            print(lab.up())
        elif a.cmd in ("lose", "restore"):
            lose(Path(a.dir).resolve(), a.host, a.cmd == "lose")
        else:
            down(Path(a.dir).resolve())
    except (LabError, TopologyError, ValueError) as exc:
        print(f"lab: {str(exc).splitlines()[0]}", file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main())
