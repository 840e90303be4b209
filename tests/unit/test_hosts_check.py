"""``synctcp-testbed hosts check HOSTS.toml``: exit 2 with one line per problem (bad inventory,
a refusing host, what a host lacks), 0 when every host is ready.  No network: a stand-in ssh,
and hosts with address = "local"."""

from __future__ import annotations

from pathlib import Path
from typing import Any, List

import pytest

from synctcp_testbed import cli
from synctcp_testbed.remote import preflight
from test_remote_ssh import fake_ssh

LOCAL = """
[[host]]
name = "a"
address = "local"
data_address = "127.0.0.1"
roles = ["sender"]

[[host]]
name = "b"
address = "local"
data_address = "127.0.0.1"
roles = ["receiver"]
"""


def run(tmp_path: Path, text: str, capsys: pytest.CaptureFixture[str], *opts: str
        ) -> tuple[int, List[str], List[str]]:
    f = tmp_path / "hosts.toml"
    f.write_text(text)
    rc = cli.main(["hosts", "check", str(f), *opts])
    out, err = capsys.readouterr()
    return rc, out.splitlines(), err.splitlines()


def test_a_bad_inventory_is_one_line(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    rc, out, err = run(tmp_path, LOCAL.replace('roles = ["receiver"]', 'roles = "receiver"'),
                       capsys)
    assert rc == 2 and out == []
    assert err == [f"synctcp-testbed: {tmp_path}/hosts.toml: host b.roles must be a list of "
                   f"values, e.g. roles = [...], not a string like \"receiver\""]


def test_a_refusing_host_stops_everything(tmp_path: Path, capsys: pytest.CaptureFixture[str],
                                          monkeypatch: pytest.MonkeyPatch) -> None:
    fake_ssh(tmp_path, monkeypatch, "ssh: connect to host 192.0.2.7 port 22: Connection refused",
             255)
    probed: List[str] = []
    monkeypatch.setattr(preflight, "probe_script", lambda h: probed.append(h.name) or "true")
    rc, out, err = run(tmp_path, LOCAL.replace('address = "local"\ndata_address = "127.0.0.1"\n'
                                               'roles = ["receiver"]',
                                               'address = "192.0.2.7"\nroles = ["receiver"]'),
                       capsys)
    assert rc == 2 and probed == [] and out == []
    assert err == ["host b: connection refused (192.0.2.7:22); check: is sshd running and "
                   "listening on that port?"]


def test_local_hosts(tmp_path: Path, capsys: pytest.CaptureFixture[str],
                     monkeypatch: pytest.MonkeyPatch) -> None:
    """The real probe on this machine; what it lacks is stood in for (this machine may or may
    not have the modules)."""
    monkeypatch.setattr(preflight, "problems", lambda *a: [])
    rc, out, err = run(tmp_path, LOCAL, capsys, "--cc", "sync,reno", "--flows", "2")
    assert rc == 0 and err == []
    assert "clock bound a -> b: ±0.000 ms (one kernel's clock (same boot_id))" in out
    assert out[-1] == "2 hosts ready (a, b)"
    lacks: Any = lambda h, *a: [f"host {h.name}: no tcpdump for --capture; fix: apt-get install tcpdump"]
    monkeypatch.setattr(preflight, "problems", lacks)
    rc, out, err = run(tmp_path, LOCAL, capsys)
    assert rc == 2 and err == [
        "host a: no tcpdump for --capture; fix: apt-get install tcpdump",
        "host b: no tcpdump for --capture; fix: apt-get install tcpdump"]
