"""The namespace hosts of issue 30 (synctcp_testbed.remote.lab): each host a
network namespace with its own sshd on a management network, the data path
between them, and nothing left behind after ``down``."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path
from typing import Iterator, List

import pytest

from synctcp_testbed.network.netns import pids_in_netns
from synctcp_testbed.remote import lab as labmod
from synctcp_testbed.remote.lab import Lab

KMOD = Path(__file__).resolve().parents[2] / "kmod"

pytestmark = pytest.mark.skipif(os.geteuid() != 0, reason="namespaces need root")


def _ssh(lab: Lab, host: labmod.LabHost, cmd: str) -> str:
    res = subprocess.run(lab.ssh_command(host) + [cmd], capture_output=True, text=True,
                         timeout=60)
    assert res.returncode == 0, f"ssh {host.name}: {res.stderr.strip()}"
    return res.stdout


def _sshd_pids() -> List[int]:
    return [int(p) for p in subprocess.run(["pgrep", "-x", "sshd"], capture_output=True,
                                           text=True).stdout.split()]


@pytest.fixture
def lab_dir(tmp_path: Path) -> Iterator[Path]:
    yield tmp_path / "lab"
    labmod.down(tmp_path / "lab")


def test_emulator_lab_hosts_answer_over_their_own_sshd(lab_dir: Path) -> None:
    lab = Lab(lab_dir, senders=2, emulator=True)
    hosts_toml = lab.up()
    text = hosts_toml.read_text()
    assert text.count("[[host]]") == 5
    assert 'roles = ["emulator"]' in text and "BatchMode" not in text
    topo = lab.topology()
    for h in lab.hosts:
        # the answer comes from the host's own namespace: its management and data addresses
        addrs = _ssh(lab, h, "ip -o -4 addr show")
        assert f" {h.mgmt}/24 " in addrs
        if h.data_address:
            assert f" {h.data_address}/24 " in addrs
        for dev in h.interfaces.values():
            assert f": {dev} " in addrs or f" {dev} " in addrs
    # the data path: sender 1 reaches receiver 1 through the emulator
    r1 = next(h for h in lab.hosts if h.name == "r1")
    s1 = next(h for h in lab.hosts if h.name == "s1")
    out = _ssh(lab, s1, f"ping -c 2 -W 2 -q {r1.data_address}")
    assert " 0% packet loss" in out
    # control traffic never crosses the data path: no SSH packet on the
    # emulator's data interfaces while the orchestrator talks to every host
    em = f"{labmod.PREFIX}-em"
    devs = [topo.dev("em", topo.link("Lem")), topo.dev("em", topo.link("emR"))]
    caps = [lab_dir / f"{d}.pcap" for d in devs]
    dumps = [subprocess.Popen(["ip", "netns", "exec", em, "tcpdump", "-q", "-n", "-U", "-i", d,
                               "-w", str(c), "tcp port 22"], stderr=subprocess.PIPE)
             for d, c in zip(devs, caps)]
    try:
        for d in dumps:     # "listening on ...": the capture is on
            assert d.stderr is not None and b"listening" in d.stderr.readline()
        for h in lab.hosts:
            _ssh(lab, h, "uname -r")
    finally:
        for d in dumps:
            d.terminate()
            d.wait(timeout=30)
    for c in caps:
        seen = subprocess.run(["tcpdump", "-n", "-r", str(c)], capture_output=True, text=True)
        assert seen.returncode == 0 and seen.stdout == "", seen.stdout[:300]


def test_path_lab_delays_and_down_leaves_nothing(lab_dir: Path) -> None:
    lab = Lab(lab_dir, senders=1, emulator=False, rate_mbit=10, delay_ms=40, queue_pkts=50)
    lab.up()
    s1 = next(h for h in lab.hosts if h.name == "s1")
    r1 = next(h for h in lab.hosts if h.name == "r1")
    out = _ssh(lab, s1, f"ping -c 3 -i 0.3 -q {r1.data_address}")
    rtt_min = float(re.search(r"= ([\d.]+)/", out).group(1))
    assert 40.0 <= rtt_min < 41.0, out
    assert _sshd_pids()
    # a host lost: unreachable over SSH within the connect timeout, and back
    labmod.lose(lab_dir, "r1")
    res = subprocess.run(lab.ssh_command(r1) + ["true"], capture_output=True, text=True,
                         timeout=60)
    assert res.returncode == 255, res.stderr
    labmod.lose(lab_dir, "r1", lost=False)
    _ssh(lab, r1, "true")
    names = labmod.namespaces()
    assert f"{labmod.PREFIX}-s1" in names
    labmod.down(lab_dir)
    assert labmod.namespaces() == []
    assert pids_in_netns(names) == []
    assert _sshd_pids() == []
    assert subprocess.run(["ip", "link", "show", labmod.BRIDGE],
                          capture_output=True).returncode != 0
    labmod.down(lab_dir)        # idempotent


def test_bad_lab_is_one_line(tmp_path: Path) -> None:
    res = subprocess.run(["python3", "-m", "synctcp_testbed.remote.lab", "up",
                          str(tmp_path / "x"), "--senders", "9"],
                         capture_output=True, text=True, timeout=120)
    assert res.returncode == 2
    assert res.stderr.strip() == "lab: senders 9: 1 to 8"


def _check(hosts_toml: Path, *args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "synctcp_testbed.cli", "hosts", "check",
                           str(hosts_toml), *args], capture_output=True, text=True, timeout=300)


def _sync_loaded() -> bool:
    return "sync" in Path("/proc/sys/net/ipv4/tcp_available_congestion_control").read_text().split()


def test_hosts_check_over_ssh_names_each_host_and_its_fix(lab_dir: Path) -> None:
    """Preflight over real sshd: a host without the module, a host with
    timestamps off, a host lost (one line, exit 2, nothing probed)."""
    lab = Lab(lab_dir, senders=1, emulator=True)
    hosts_toml = lab.up()
    ok = _check(hosts_toml, "--cc", "reno,cubic")
    assert ok.returncode == 0, ok.stderr
    assert "clock bound s1 -> r1: \u00b10.000 ms (one kernel's clock" in ok.stdout
    if _sync_loaded():      # an earlier test of this instance loaded it
        assert subprocess.run(["rmmod", "tcp_sync"]).returncode == 0
    # no tcp_sync among this kernel's modules and none loaded: the sender lacks it
    miss = _check(hosts_toml, "--cc", "sync")
    assert miss.returncode == 2
    lines = [ln for ln in miss.stderr.splitlines() if "tcp_sync" in ln]
    assert len(lines) == 1 and lines[0].startswith("host s1: ") and "fix: " in lines[0], \
        miss.stderr
    assert subprocess.run(["insmod", str(KMOD / "tcp_sync.ko")]).returncode == 0
    assert _check(hosts_toml, "--cc", "sync").returncode == 0
    r1 = f"{labmod.PREFIX}-r1"
    subprocess.run(["ip", "netns", "exec", r1, "sysctl", "-qw", "net.ipv4.tcp_timestamps=0"],
                   check=True)
    ts = _check(hosts_toml, "--cc", "sync")
    assert ts.returncode == 2
    assert [ln for ln in ts.stderr.splitlines() if "tcp_timestamps" in ln] == [
        "host r1: net.ipv4.tcp_timestamps is 0: RFC 7323 timestamps off, so the modules fall "
        "back to RTT and no OTT is measured; fix: sysctl -w net.ipv4.tcp_timestamps=1"]
    subprocess.run(["ip", "netns", "exec", r1, "sysctl", "-qw", "net.ipv4.tcp_timestamps=1"],
                   check=True)
    labmod.lose(lab_dir, "r1")
    lost = _check(hosts_toml, "--cc", "sync")
    assert lost.returncode == 2 and lost.stdout == ""
    assert lost.stderr.splitlines() == [
        "host r1: no answer (timed out) (root@10.250.0.12:22); check: is the host up and the "
        "address right? a firewall?"], lost.stderr
