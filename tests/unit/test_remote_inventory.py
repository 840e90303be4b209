"""The hosts file of issue 30 (synctcp_testbed.remote.inventory): one-line errors naming the
file and the key; secrets refused without being repeated; what meta.json may record."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any, Dict

import pytest

from synctcp_testbed.remote.inventory import InventoryError, from_dict, load

SENDER = {"name": "dc1", "address": "203.0.113.10", "roles": ["sender"]}
RECEIVER = {"name": "dc2", "address": "local", "data_address": "127.0.0.1",
            "roles": ["receiver"]}


def inv(*hosts: Dict[str, Any], **top: Any) -> Dict[str, Any]:
    return {"host": list(hosts) or [SENDER, RECEIVER], **top}


def error(data: Dict[str, Any]) -> str:
    with pytest.raises(InventoryError) as exc:
        from_dict(data, "hosts.toml")
    msg = str(exc.value)
    assert "\n" not in msg
    return msg


def test_a_valid_inventory() -> None:
    i = from_dict(inv(), "hosts.toml")
    assert [h.name for h in i.with_role("sender")] == ["dc1"]
    assert i.host("dc1").data_address == "203.0.113.10"      # the SSH address, an IPv4 one
    assert i.host("dc2").local and i.host("dc2").where == "this machine"
    assert i.host("dc1").where == "203.0.113.10:22"


@pytest.mark.parametrize("data, said", [
    (inv({**SENDER, "port": "22"}, RECEIVER),
     'hosts.toml: host dc1.port must be a whole number from 1 to 65535, not a string like "22"'),
    (inv({**SENDER, "port": 0}, RECEIVER), "hosts.toml: host dc1.port must be"),
    (inv({**SENDER, "roles": ["sender", "router"]}, RECEIVER),
     "hosts.toml: host 'dc1': role 'router': one of sender, receiver, emulator"),
    (inv(SENDER), 'hosts.toml: no host with role receiver (roles = ["receiver"])'),
    (inv(SENDER, {**RECEIVER, "name": "dc1"}), "hosts.toml: host dc1 is named twice"),
    (inv({**SENDER, "ssh_host": "dc1"}, RECEIVER),
     "hosts.toml: host 'dc1': give address (with user, port, key) or ssh_host"),
    (inv({**SENDER, "address": "dc1.example.net"}, RECEIVER),
     "hosts.toml: host 'dc1': data_address is required when address is a name"),
    (inv({**SENDER, "data_address": "::1"}, RECEIVER),
     "hosts.toml: host 'dc1': data_address must be an IPv4 address"),
    (inv({**SENDER, "key": "/nonexistent/id_ed25519"}, RECEIVER),
     "hosts.toml: host 'dc1': key /nonexistent/id_ed25519: no such file"),
    (inv({**SENDER, "address": "-oProxyCommand=x"}, RECEIVER),
     "hosts.toml: host 'dc1': address '-oProxyCommand=x' is not a host or user name"),
    (inv(ssh={"options": ["ControlPath=/tmp/x"]}),
     "hosts.toml: ssh.options: ControlPath is set by the runner"),
    (inv(ssh={"connect_timeout_s": 0}), "hosts.toml: ssh.connect_timeout_s must be"),
    ({"hosts": []}, "hosts.toml: unknown key(s) hosts; known: [ssh], [[host]]"),
    ({"host": []}, "hosts.toml: no hosts: give each as a [[host]] table"),
    (inv({**SENDER, "colour": "red"}, RECEIVER), "hosts.toml: host dc1.colour"),
    (inv({**SENDER, "traffic": "netperf"}, RECEIVER),
     "hosts.toml: host 'dc1': traffic 'netperf': one of auto, flowgen, iperf3"),
])
def test_errors_are_one_line_naming_file_and_key(data: Dict[str, Any], said: str) -> None:
    assert error(data).startswith(said)


@pytest.mark.parametrize("key", ["password", "Passphrase"])
def test_a_password_is_refused_and_never_repeated(key: str) -> None:
    msg = error(inv({**SENDER, key: "hunter2"}, RECEIVER))
    assert msg.startswith(f"hosts.toml: host dc1.{key}: passwords are not supported")
    assert "hunter2" not in msg


def test_public_has_no_key_nor_ssh_options(tmp_path: Path) -> None:
    key = tmp_path / "id_test"
    key.write_text("-----BEGIN OPENSSH PRIVATE KEY-----\nsecret\n")
    i = from_dict(inv({**SENDER, "user": "ops", "key": str(key)}, RECEIVER,
                      ssh={"options": ["IdentityAgent=/run/agent.sock"]}), "hosts.toml")
    text = json.dumps(i.public())
    assert "id_test" not in text and "secret" not in text and "IdentityAgent" not in text
    assert i.public()["hosts"][0] == {"name": "dc1", "roles": ["sender"],
                                      "where": "ops@203.0.113.10:22",
                                      "data_address": "203.0.113.10", "interfaces": {}}


def test_load_reports_a_missing_or_broken_file(tmp_path: Path) -> None:
    with pytest.raises(InventoryError, match=r"^/nonexistent/hosts.toml: No such file"):
        load("/nonexistent/hosts.toml")
    bad = tmp_path / "hosts.toml"
    bad.write_text("[[host]\nname = 1\n")
    with pytest.raises(InventoryError, match=r"hosts.toml: not TOML: "):
        load(str(bad))
