"""Preflight of real hosts (synctcp_testbed.remote.preflight): canned probe outputs in, one
line per failure out, naming the host and the fix."""

from __future__ import annotations

from typing import Dict, List, Optional

import pytest

from synctcp_testbed.remote.inventory import Host, from_dict
from synctcp_testbed.remote.preflight import (Needs, needs_of, notes, option_problems,
                                              parse_probe, probe_script, problems, traffic_of)
from synctcp_testbed.remote.ssh import LocalTransport

HOST = Host(name="dc1", roles=["sender", "receiver"], address="local",
            data_address="127.0.0.1")
SENDS = Needs(ccs={"sync"}, sends=True, bind={40001})
RECEIVES = Needs(receives=True, listen={5201, 6201})

GOOD = {"kernel": "6.1.0-18-amd64", "uid": "0", "headers": "1",
        "available": "reno cubic sync", "allowed": "reno cubic", "timestamps": "1",
        "owts": "none", "ip_forward": "0", "modfile_tcp_sync": "1", "modfile_tcp_mixreact": "1",
        "modfile_tcp_etcp": "1", "dkms": "1", "have_cc": "1", "have_python3": "1",
        "have_tcpdump": "1", "have_tc": "1", "have_ip": "1", "have_iperf3": "0",
        "have_chronyc": "1", "have_timeout": "1", "have_setsid": "1", "have_tar": "1",
        "have_mkfifo": "1", "pyroute2": "1", "sudo": "0", "boot_id": "b1",
        "tracking": "50505300,PPS,1,1795298900.1,-0.00000012,-0.0,0.0,-12.3,-0.001,0.012,"
                    "0.000000001,0.00000325,16.0,Normal"}


def probe(changes: Optional[Dict[str, str]] = None, socks: List[str] = ()) -> str:
    """A probe's output as the host's sh prints it."""
    facts = {**GOOD, **(changes or {})}
    lines = [f"{k}={v}" for k, v in facts.items()] + [f"SOCK={s}" for s in socks]
    return "\n".join(lines + ["probe=done"]) + "\n"


def lines(changes: Optional[Dict[str, str]] = None, needs: Needs = SENDS,
          socks: List[str] = (), host: Host = HOST) -> List[str]:
    facts, used = parse_probe(probe(changes, socks))
    out = problems(host, facts, used, needs)
    for line in out:
        assert line.startswith(f"host {host.name}: ") and "; fix: " in line and "\n" not in line
    return out


def test_a_ready_host_has_no_problem() -> None:
    assert lines() == [] and lines(needs=RECEIVES) == []


@pytest.mark.parametrize("changes, said", [
    ({"available": "reno cubic", "modfile_tcp_sync": "0"},
     "host dc1: module tcp_sync for algorithm sync is not installed (DKMS is there); fix: make "
     "dkms-install in a checkout on the host (docs/dkms.md)"),
    ({"available": "reno cubic", "modfile_tcp_sync": "0", "dkms": "0"},
     "host dc1: module tcp_sync for algorithm sync is not installed (no DKMS); fix: apt-get "
     "install dkms, then make dkms-install"),
    ({"available": "reno cubic", "modfile_tcp_sync": "0", "headers": "0"},
     "host dc1: module tcp_sync for algorithm sync is not installed, and kernel "
     "6.1.0-18-amd64 has no headers to build it; fix: apt-get install "
     "linux-headers-6.1.0-18-amd64 dkms"),
    ({"available": "reno cubic", "modfile_tcp_sync": "0", "kernel": "5.10.0-28-amd64"},
     "host dc1: kernel 5.10.0-28-amd64 is older than 6.1, the oldest the modules support; "
     "fix: a Debian 12 (6.1) or newer kernel"),
    ({"uid": "1000"},
     "host dc1: algorithm sync is loaded but not allowed for unprivileged sockets; fix: "
     "sysctl -w net.ipv4.tcp_allowed_congestion_control=\"cubic reno sync\""),
    ({"timestamps": "0"},
     "host dc1: net.ipv4.tcp_timestamps is 0: RFC 7323 timestamps off, so the modules fall "
     "back to RTT and no OTT is measured; fix: sysctl -w net.ipv4.tcp_timestamps=1"),
    ({"pyroute2": "0"}, "host dc1: no python3 with pyroute2 for the sender's inet_diag sampler"),
    ({"have_cc": "0"}, "host dc1: no C compiler to build flowgen from the shipped source, and "
                       "no iperf3 to fall back on"),
])
def test_each_failure_is_one_line_with_its_fix(changes: Dict[str, str], said: str) -> None:
    got = lines(changes)
    assert any(line.startswith(said) for line in got), got


def test_an_algorithm_not_in_the_kernel() -> None:
    got = lines(needs=Needs(ccs={"bbr"}, sends=True))
    assert got == ["host dc1: algorithm bbr is not available in kernel 6.1.0-18-amd64; fix: "
                   "modprobe tcp_bbr, or another kernel"]


def test_ports_in_use() -> None:
    # /proc/net/tcp's local_address: 0100007F:1451 is 127.0.0.1:5201
    got = lines(needs=RECEIVES, socks=["0100007F:1451", "00000000:0016"])
    assert got == ["host dc1: port 5201 is in use (the flows' ports); fix: stop what uses them "
                   "(ss -tanp), or free the ports 5201+, 6201+ and 40001+"]


@pytest.mark.parametrize("changes, said", [
    ({"have_tcpdump": "0"}, "host dc1: no tcpdump for --capture; fix: apt-get install tcpdump"),
    ({"uid": "1000", "tcpdump_caps": ""},
     "host dc1: tcpdump cannot capture as this user; fix: log in as root, or setcap"),
])
def test_tcpdump(changes: Dict[str, str], said: str) -> None:
    got = lines(changes, needs=Needs(receives=True, capture=True))
    assert [line for line in got if "tcpdump" in line][0].startswith(said)


def test_an_unfinished_probe() -> None:
    facts, used = parse_probe("kernel=6.1.0\n")
    assert problems(HOST, facts, used, SENDS) == [
        "host dc1: the probe did not finish (a POSIX sh with uname, cat, awk?); fix: a Debian "
        "or similar host"]


def test_the_option_must_be_on_where_both_ends_run_the_patched_kernel() -> None:
    r = Host(name="dc2", roles=["receiver"], address="local", data_address="127.0.0.2")
    facts = {"dc1": {"owts": "1"}, "dc2": {"owts": "0"}}
    assert option_problems([(HOST, r)], facts) == [
        "host dc2: both dc1 and dc2 run the one-way-timestamp kernel, but net.ipv4.tcp_owts is "
        "0 here: the flows would not negotiate the option; fix: sysctl -w net.ipv4.tcp_owts=1 "
        "(docs/tcp-option.md)"]
    assert option_problems([(HOST, r)], {"dc1": {"owts": "1"}, "dc2": {"owts": "none"}}) == []


def test_notes_say_when_there_is_no_clock_bound() -> None:
    facts, _ = parse_probe(probe())
    assert notes(HOST, facts) == []
    facts, _ = parse_probe(probe({"tracking": "506 Cannot talk to daemon"}))
    assert notes(HOST, facts) == [
        "host dc1: no clock bound: none (chronyc: 506 Cannot talk to daemon) (absolute OTTs "
        "without a bound; queuing delays are still exact)"]


@pytest.mark.parametrize("traffic, changes, said", [
    ("iperf3", {"have_iperf3": "0"}, 'host dc1: traffic = "iperf3" but no iperf3; fix: apt-get '
     'install iperf3'),
    ("flowgen", {"have_cc": "0", "have_iperf3": "1"}, 'host dc1: traffic = "flowgen" but no C '
     'compiler to build it from the shipped source; fix: apt-get install gcc libc6-dev (or '
     'traffic = "iperf3")'),
])
def test_the_traffic_key_asks_for_its_tool(traffic: str, changes: Dict[str, str],
                                            said: str) -> None:
    h = Host(name="dc1", roles=["sender"], address="local", data_address="127.0.0.1",
             traffic=traffic)
    assert lines(changes, host=h) == [said]


@pytest.mark.parametrize("traffic, changes, tool, note", [
    ("auto", {}, "flowgen", None),
    ("auto", {"have_cc": "0", "have_iperf3": "1"}, "iperf3", "no C compiler"),
    ("iperf3", {"have_iperf3": "1"}, "iperf3", 'traffic = "iperf3"'),
    ("flowgen", {"have_iperf3": "1"}, "flowgen", None),
])
def test_which_traffic_generator_a_host_runs(traffic: str, changes: Dict[str, str], tool: str,
                                             note: Optional[str]) -> None:
    h = Host(name="dc1", roles=["sender"], address="local", data_address="127.0.0.1",
             traffic=traffic)
    facts, _ = parse_probe(probe(changes))
    assert traffic_of(h, facts) == tool
    said = [n for n in notes(h, facts) if "instead of flowgen" in n]
    assert said == ([] if note is None else [
        f"host dc1: iperf3 -C instead of flowgen ({note}): bulk flows only, intervals placed "
        f"within a round trip (docs/real-hosts.md)"])


def test_needs_follow_the_roles() -> None:
    inv = from_dict({"host": [
        {"name": "s", "address": "local", "data_address": "127.0.0.1", "roles": ["sender"]},
        {"name": "r", "address": "local", "data_address": "127.0.0.1", "roles": ["receiver"]},
    ]}, "hosts.toml")
    n = needs_of(inv, {"sync"}, flows=2, capture=True)
    assert n["s"].sends and n["s"].bind == {40001, 40002} and not n["s"].receives
    assert n["r"].receives and n["r"].listen == {5201, 5202, 6201, 6202} and n["r"].capture


def test_the_probe_runs_in_a_posix_sh() -> None:
    """The real probe on this machine (LocalTransport: no SSH, no network)."""
    res = LocalTransport(HOST).run(probe_script(HOST), timeout=30, check=False)
    facts, used = parse_probe(res.out)
    assert facts["probe"] == "done" and facts["kernel"] and facts["timestamps"]
    assert all(0 <= p < 65536 for p in used)
