"""The hosts file of ``synctcp-testbed hosts check hosts.toml``.

A TOML file, validated like a scenario (pydantic, one line per error naming
the file and the key)::

    [ssh]                               # optional; for every host
    connect_timeout_s = 10
    known_hosts = "~/.ssh/known_hosts"  # default: OpenSSH's own
    options = ["StrictHostKeyChecking=accept-new"]

    [[host]]
    name = "dc1"
    address = "203.0.113.10"            # SSH address; "local": this machine, no SSH
    user = "root"
    port = 22
    key = "~/.ssh/id_ed25519"           # a private key file (never copied anywhere)
    roles = ["sender"]                  # sender, receiver, emulator
    data_address = "198.51.100.10"      # where the flows go (default: address)
    interfaces = { data = "eth1" }      # captures; an emulator: sender = "eth1", receiver = "eth2"
    sudo = false                        # a user with passwordless sudo counts as privileged
    traffic = "auto"                    # flowgen | iperf3 | auto (flowgen if there is a cc)
    chronyc_socket = ""                 # chronyc -h PATH (default: chronyc's own)

    [[host]]
    name = "dc2"
    ssh_host = "dc2"                    # a Host of ~/.ssh/config instead of address/user/port/key
    data_address = "198.51.100.20"
    roles = ["receiver"]

Passwords are not supported: SSH runs with ``BatchMode=yes`` (keys or an
agent), so nothing secret is ever typed, stored or written to a run
directory; a ``password`` key is refused without its value being repeated.
:meth:`Inventory.public` is what a run's meta.json may record: names,
roles, where each host is reached and its data address, never a key file
or an SSH option.
"""

from __future__ import annotations

import ipaddress
import re
import tomllib
from pathlib import Path
from typing import Any, Dict, List, Optional

from pydantic import ConfigDict, Field, ValidationError
from pydantic.dataclasses import dataclass

from ..scenario.keys import kind_of, model_error, num

ROLES = ("sender", "receiver", "emulator")
#: the traffic generators of an end host (remote/iperf.py for iperf3)
TRAFFIC = ("auto", "flowgen", "iperf3")
#: interface keys: a sender's or receiver's data interface; the emulator's two sides
INTERFACE_KEYS = ("data", "sender", "receiver")
NAME_RE = re.compile(r"[A-Za-z0-9][A-Za-z0-9_-]{0,31}")
#: keys that would hold a secret: refused, their value never repeated
SECRET_KEYS = ("password", "passphrase", "passwd", "secret")
#: ssh -o values this tool sets itself and an inventory may not change
OWN_OPTIONS = ("batchmode", "controlmaster", "controlpath", "controlpersist", "passwordauthentication",
               "kbdinteractiveauthentication", "localcommand", "permitlocalcommand",
               "proxycommand")

MODEL = ConfigDict(strict=True, extra="forbid")


class InventoryError(ValueError):
    """A hosts file that cannot be used, with the reason (one line)."""


@dataclass(config=MODEL)
class SshSettings:
    connect_timeout_s: float = num(10.0, 1, 300, unit="s")
    #: seconds without an answer from a host before its connection counts as lost
    alive_timeout_s: float = num(15.0, 2, 600, unit="s")
    known_hosts: str = ""
    options: List[str] = Field(default_factory=list)


@dataclass(config=MODEL)
class Host:
    name: str
    roles: List[str] = Field(min_length=1)
    address: str = ""
    ssh_host: str = ""
    user: str = ""
    port: int = num(22, 1, 65535)
    key: str = ""
    data_address: str = ""
    interfaces: Dict[str, str] = Field(default_factory=dict)
    #: chronyd's command socket on the host (chronyc -h; default: chronyc's own)
    chronyc_socket: str = ""
    #: run privileged commands through sudo -n (a user with passwordless sudo)
    sudo: bool = False
    #: the traffic generator: flowgen built on the host, iperf3 -C ALG, or auto (flowgen
    #: where the host has a C compiler, else iperf3)
    traffic: str = "auto"

    @property
    def local(self) -> bool:
        return self.address == "local"

    @property
    def where(self) -> str:
        """The host as SSH reaches it, for messages: user@address:port or the ssh_config host."""
        if self.local:
            return "this machine"
        if self.ssh_host:
            return f"ssh_config host {self.ssh_host}"
        return f"{self.user + '@' if self.user else ''}{self.address}:{self.port}"


@dataclass
class Inventory:
    hosts: List[Host]
    ssh: SshSettings
    path: str = ""

    def with_role(self, role: str) -> List[Host]:
        return [h for h in self.hosts if role in h.roles]

    def host(self, name: str) -> Host:
        for h in self.hosts:
            if h.name == name:
                return h
        raise InventoryError(f"{self.path}: no host {name}")

    @property
    def emulator(self) -> Optional[Host]:
        em = self.with_role("emulator")
        return em[0] if em else None

    def public(self) -> Dict[str, Any]:
        """What a run directory may record: no key file, no SSH options."""
        return {"path": self.path,
                "hosts": [{"name": h.name, "roles": h.roles, "where": h.where,
                           "data_address": h.data_address, "interfaces": h.interfaces}
                          for h in self.hosts]}


def _check_ipv4(value: str, what: str) -> None:
    try:
        ipaddress.IPv4Address(value)
    except ValueError:
        raise InventoryError(f"{what} must be an IPv4 address like 192.0.2.1 (flowgen binds "
                             f"IPv4 addresses), not {value!r}") from None


def validate_host(h: Host, where: str) -> None:
    """What the types cannot say: names, roles, addresses, interfaces together."""
    at = f"{where}: host {h.name!r}"
    if not NAME_RE.fullmatch(h.name):
        raise InventoryError(f"{where}: host name {h.name!r}: 1-32 letters, digits, - or _")
    for r in h.roles:
        if r not in ROLES:
            raise InventoryError(f"{at}: role {r!r}: one of {', '.join(ROLES)}")
    if len(set(h.roles)) != len(h.roles):
        raise InventoryError(f"{at}: a role is named twice")
    if "emulator" in h.roles and len(h.roles) > 1:
        raise InventoryError(f"{at}: an emulator forwards the traffic and is no end of it: "
                             f"roles = [\"emulator\"] alone")
    if bool(h.address) == bool(h.ssh_host):
        raise InventoryError(f"{at}: give address (with user, port, key) or ssh_host "
                             f"(a Host of ~/.ssh/config), one of them")
    if h.ssh_host and (h.user or h.key or h.port != 22):
        raise InventoryError(f"{at}: with ssh_host, user, port and key come from ~/.ssh/config")
    for name, value in (("address", h.address), ("ssh_host", h.ssh_host), ("user", h.user)):
        if value and (value.startswith("-") or any(c.isspace() or c in "'\"\\;&|`$" for c in value)):
            raise InventoryError(f"{at}: {name} {value!r} is not a host or user name")
    if h.key and not Path(h.key).expanduser().is_file():
        raise InventoryError(f"{at}: key {h.key}: no such file")
    if not h.data_address:
        if h.local or h.ssh_host:
            if "emulator" not in h.roles:
                raise InventoryError(f"{at}: data_address is required (the IPv4 address the "
                                     f"flows use)")
        else:
            try:
                ipaddress.IPv4Address(h.address)
                h.data_address = h.address
            except ValueError:
                if "emulator" not in h.roles:
                    raise InventoryError(f"{at}: data_address is required when address is a "
                                         f"name (the IPv4 address the flows use)") from None
    if h.data_address:
        _check_ipv4(h.data_address, f"{at}: data_address")
    for k, dev in h.interfaces.items():
        if k not in INTERFACE_KEYS:
            raise InventoryError(f"{at}: interfaces.{k}: keys are {', '.join(INTERFACE_KEYS)}")
        if not re.fullmatch(r"[A-Za-z0-9_.:@-]{1,15}", dev):
            raise InventoryError(f"{at}: interfaces.{k} {dev!r} is not an interface name")
    if h.traffic not in TRAFFIC:
        raise InventoryError(f"{at}: traffic {h.traffic!r}: one of {', '.join(TRAFFIC)}")
    if "emulator" in h.roles and not {"sender", "receiver"} <= set(h.interfaces):
        raise InventoryError(f"{at}: an emulator needs interfaces = {{ sender = \"DEV\", "
                             f"receiver = \"DEV\" }}: its interfaces toward the senders and "
                             f"toward the receivers")


def from_dict(data: Dict[str, Any], where: str = "hosts") -> Inventory:
    """The inventory of a file's tables; InventoryError (one line) when it is not one."""
    data = dict(data)
    unknown = set(data) - {"ssh", "host"}
    if unknown:
        raise InventoryError(f"{where}: unknown key(s) {', '.join(sorted(unknown))}; "
                             f"known: [ssh], [[host]]")
    raw_ssh = data.get("ssh", {})
    if not isinstance(raw_ssh, dict):
        raise InventoryError(f"{where}: ssh must be a table ([ssh]), not {kind_of(raw_ssh)}")
    try:
        ssh = SshSettings(**raw_ssh)
    except (ValidationError, TypeError) as exc:
        raise InventoryError(_error(SshSettings, exc, where, "ssh")) from None
    for opt in ssh.options:
        name = opt.split("=", 1)[0].strip().lower()
        if "=" not in opt or not name.isalnum():
            raise InventoryError(f"{where}: ssh.options: {opt!r} is not NAME=VALUE")
        if name in OWN_OPTIONS:
            raise InventoryError(f"{where}: ssh.options: {opt.split('=', 1)[0]} is set by "
                                 f"the runner (synctcp_testbed/remote/ssh.py)")
    raw_hosts = data.get("host")
    if not isinstance(raw_hosts, list) or not raw_hosts:
        raise InventoryError(f"{where}: no hosts: give each as a [[host]] table")
    hosts = []
    for i, raw in enumerate(raw_hosts, 1):
        if not isinstance(raw, dict):
            raise InventoryError(f"{where}: host {i} must be a table ([[host]])")
        secret = next((k for k in raw if str(k).lower() in SECRET_KEYS), None)
        if secret is not None:
            raise InventoryError(f"{where}: host {raw.get('name', i)}.{secret}: passwords are "
                                 f"not supported (SSH runs in BatchMode): give key = \"PATH\" "
                                 f"or use an ssh-agent")
        try:
            h = Host(**raw)
        except (ValidationError, TypeError) as exc:
            raise InventoryError(_error(Host, exc, where, f"host {raw.get('name', i)}")) from None
        validate_host(h, where)
        hosts.append(h)
    names = [h.name for h in hosts]
    dup = sorted({n for n in names if names.count(n) > 1})
    if dup:
        raise InventoryError(f"{where}: host {dup[0]} is named twice")
    inv = Inventory(hosts, ssh, where)
    for role in ("sender", "receiver"):
        if not inv.with_role(role):
            raise InventoryError(f"{where}: no host with role {role} (roles = [\"{role}\"])")
    if len(inv.with_role("emulator")) > 1:
        raise InventoryError(f"{where}: at most one emulator host")
    return inv


def _error(cls: Any, exc: Exception, where: str, table: str) -> str:
    if isinstance(exc, ValidationError):
        return model_error(cls, exc, where, table)
    return f"{where} [{table}]: {exc}"


def load(path: str) -> Inventory:
    """Read and validate a hosts file; InventoryError (one line) when it cannot be used."""
    p = Path(path)
    try:
        data = tomllib.loads(p.read_text())
    except OSError as exc:
        raise InventoryError(f"{path}: {exc.strerror or exc}") from None
    except tomllib.TOMLDecodeError as exc:
        raise InventoryError(f"{path}: not TOML: {exc}") from None
    return from_dict(data, str(path))
