"""Scenario kind ``path`` (docs/real-hosts.md): the real path between the hosts of
``run --hosts``; the local runner and the platform options refuse it in one line."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from synctcp_testbed.plan.flows import pair_nodes
from synctcp_testbed.scenario import load

PATH_TOML = """\
name = "path-check"
description = "a real path"
cc = ["reno"]
aqm = ["droptail"]
duration_s = 10
warmup_s = 2

[topology]
kind = "path"
rate_mbit = 10
rtts_ms = [40, 40]
"""


def _cli(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "synctcp_testbed.cli", *args],
                          capture_output=True, text=True, timeout=120)


def test_a_path_scenario_is_valid_and_pairs_its_ends(tmp_path: Path) -> None:
    p = tmp_path / "path.toml"
    p.write_text(PATH_TOML)
    sc = load(str(p))
    assert sc.topology.kind == "path"
    assert pair_nodes(sc) == [("s1", "r1"), ("s2", "r2")]


def test_the_local_runner_refuses_a_path_in_one_line(tmp_path: Path) -> None:
    p = tmp_path / "path.toml"
    p.write_text(PATH_TOML)
    r = _cli("run", str(p), "--out", str(tmp_path / "out"))
    assert r.returncode == 2 and r.stdout == ""
    assert r.stderr.strip().splitlines() == [
        f"synctcp-testbed: {p}: topology.kind path is the real path between hosts: run it "
        f"with --hosts HOSTS.toml (docs/real-hosts.md)"]
    assert not (tmp_path / "out").exists()


def test_hosts_do_not_go_with_the_platform_options(tmp_path: Path) -> None:
    p = tmp_path / "path.toml"
    p.write_text(PATH_TOML)
    hosts = tmp_path / "hosts.toml"
    hosts.write_text('[[host]]\nname = "a"\naddress = "local"\ndata_address = "127.0.0.1"\n'
                     'roles = ["sender", "receiver"]\n')
    r = _cli("run", str(p), "--hosts", str(hosts), "--platform", "uml", "--jobs", "2")
    assert r.returncode == 2
    assert r.stderr.strip() == ("synctcp-testbed: --hosts runs the cases on the inventory's "
                                "hosts, one at a time: not with --platform, --jobs")
    r = _cli("run", "--resume", str(tmp_path), "--hosts", str(hosts))
    assert r.returncode == 2 and len(r.stderr.strip().splitlines()) == 1, r.stderr


def test_an_http_clients_responses_move_to_the_reference_clock() -> None:
    from synctcp_testbed.remote.merge import rebase_http_csv
    text = ("t_start,t_end,req_bytes,resp_bytes,rcvd_bytes,ok,flow_group\n"
            "100.000000,100.250000,300,1200,1200,1,r1\n")
    assert rebase_http_csv(text, -99.5) == (
        "t_start,t_end,req_bytes,resp_bytes,rcvd_bytes,ok,flow_group\n"
        "0.500000,0.750000,300,1200,1200,1,r1\n")
    assert rebase_http_csv(text, 0) == text
