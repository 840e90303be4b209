"""The SSH transport of real hosts (synctcp_testbed.remote.ssh): the ssh command line, ssh's
failures as one line naming the host (canned stderr, a stand-in ssh: no network), files both
ways through LocalTransport."""

from __future__ import annotations

import os
import stat
from pathlib import Path

import pytest

from synctcp_testbed.remote.inventory import Host, SshSettings
from synctcp_testbed.remote.ssh import (Connections, HostError, LocalTransport, SshTransport,
                                        connect_error)

WHERE = "ops@203.0.113.10:22"


@pytest.mark.parametrize("stderr, said", [
    ("ssh: connect to host 203.0.113.10 port 22: Connection refused\r\n",
     f"connection refused ({WHERE}); check: is sshd running and listening on that port?"),
    ("ssh: connect to host 203.0.113.10 port 22: Connection timed out\r\n",
     f"no answer (timed out) ({WHERE}); check: is the host up and the address right? a "
     f"firewall?"),
    ("ssh: connect to host 203.0.113.10 port 22: No route to host\r\n",
     f"no route to host ({WHERE}); check: is the host up, and on a network this machine "
     f"reaches?"),
    ("ssh: Could not resolve hostname dc9: Name or service not known\r\n",
     f"unknown host name ({WHERE}); check: the address, or the Host entry of ~/.ssh/config"),
    ("ops@203.0.113.10: Permission denied (publickey,password).\r\n",
     f"refused the login ({WHERE}); check: the user and key (ssh-copy-id; BatchMode: no "
     f"password prompts)"),
    ("@@@@@@@\nWARNING: REMOTE HOST IDENTIFICATION HAS CHANGED!\nHost key verification failed.\n",
     f"host key verification failed ({WHERE}); check: the host's key in known_hosts"),
    ("Timeout, server 203.0.113.10 not responding.\r\n",
     f"connection lost (no answer to keep-alives) ({WHERE}); check: the network"),
    ("kex_exchange_identification: something new\n", f"kex_exchange_identification: something "
                                                      f"new ({WHERE})"),
    ("", f"ssh failed without a message ({WHERE})"),
])
def test_ssh_errors_are_one_line(stderr: str, said: str) -> None:
    got = connect_error(stderr, WHERE)
    assert got.startswith(said) and "\n" not in got


def test_the_ssh_command_line(tmp_path: Path) -> None:
    key = tmp_path / "id_ed25519"
    key.write_text("x")
    h = Host(name="dc1", roles=["sender"], address="203.0.113.10", user="ops", port=2222,
             key=str(key))
    argv = SshTransport(h, SshSettings(), tmp_path).argv("uname -r")
    opts = [argv[i + 1] for i, a in enumerate(argv) if a == "-o"]
    assert argv[0] == "ssh" and argv[-2:] == ["203.0.113.10", "sh -c 'uname -r'"]
    assert argv[-3] == "--"                     # an address is never read as an option
    assert "BatchMode=yes" in opts and "ControlMaster=auto" in opts
    assert f"ControlPath={tmp_path}/dc1.sock" in opts and "IdentitiesOnly=yes" in opts
    assert argv[argv.index("-p") + 1] == "2222" and argv[argv.index("-l") + 1] == "ops"
    assert argv[argv.index("-i") + 1] == str(key)
    alias = Host(name="dc2", roles=["receiver"], ssh_host="dc2", data_address="198.51.100.2")
    argv = SshTransport(alias, SshSettings(), tmp_path).argv("true")
    assert argv[-2:] == ["dc2", "sh -c true"] and "-p" not in argv and "-l" not in argv


def fake_ssh(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, stderr: str, rc: int) -> None:
    """An ``ssh`` on PATH that says ``stderr`` and exits ``rc`` (what OpenSSH does when a host
    refuses)."""
    bindir = tmp_path / "bin"
    bindir.mkdir()
    ssh = bindir / "ssh"
    ssh.write_text(f"#!/bin/sh\nprintf '%s\\n' '{stderr}' >&2\nexit {rc}\n")
    ssh.chmod(ssh.stat().st_mode | stat.S_IEXEC)
    monkeypatch.setenv("PATH", f"{bindir}{os.pathsep}{os.environ['PATH']}")


def test_a_refusing_host_is_one_lost_host_error(tmp_path: Path,
                                                monkeypatch: pytest.MonkeyPatch) -> None:
    fake_ssh(tmp_path, monkeypatch, "ssh: connect to host 192.0.2.7 port 22: Connection refused",
             255)
    h = Host(name="dc1", roles=["sender"], address="192.0.2.7")
    with pytest.raises(HostError) as exc:
        SshTransport(h, SshSettings(), tmp_path).run("true")
    assert exc.value.lost and str(exc.value) == (
        "host dc1: connection refused (192.0.2.7:22); check: is sshd running and listening on "
        "that port?")
    local = Host(name="here", roles=["receiver"], address="local", data_address="127.0.0.1")
    with Connections([h, local], SshSettings(connect_timeout_s=2)) as conns:
        errors = conns.connect_all()
        control = conns.dir
    assert [str(e) for e in errors] == [str(exc.value)]        # the local host is reachable
    assert not control.exists()                                 # the control sockets' dir


def test_a_failing_command_names_the_host_and_the_command() -> None:
    t = LocalTransport(Host(name="here", roles=["sender"], address="local",
                            data_address="127.0.0.1"))
    with pytest.raises(HostError) as exc:
        t.run("echo oops >&2; exit 3")
    assert str(exc.value) == "host here: echo oops >&2; exit 3: exit 3: oops"
    assert not exc.value.lost
    assert t.run("exit 3", check=False).rc == 3


def test_files_both_ways(tmp_path: Path) -> None:
    t = LocalTransport(Host(name="here", roles=["sender"], address="local",
                            data_address="127.0.0.1"))
    remote = tmp_path / "remote"
    t.put_files({"a.txt": b"one", "run.sh": b"#!/bin/sh\n"}, str(remote))
    assert (remote / "a.txt").read_bytes() == b"one" and os.access(remote / "run.sh", os.X_OK)
    got = t.get_dir(str(remote), tmp_path / "back", names=["a.txt", "missing.txt"])
    assert got == ["a.txt"] and (tmp_path / "back" / "a.txt").read_bytes() == b"one"
