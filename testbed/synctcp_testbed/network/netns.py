"""Network namespaces: entering one, running commands in it, setting it up.

The primitives under :mod:`.topology` (and the samplers, the runner's
listening check, the kernel tests): :func:`in_netns` runs a block of Python
in a named namespace (``setns``), :func:`sh` runs a command there (``ip
netns exec``), :func:`write_sysctls` and :func:`set_offloads` set a
namespace's sysctls and an interface's TSO/GSO/GRO (ioctls, no ethtool
process), :func:`pids_in_netns` finds what still runs in namespaces about
to be deleted.
"""

from __future__ import annotations

import contextlib
import ctypes
import fcntl
import os
import socket
import struct
import subprocess
from contextlib import contextmanager
from pathlib import Path
from typing import Dict, Iterator, List, Optional, Sequence

CLONE_NEWNET = 0x40000000
NETNS_DIR = Path("/var/run/netns")


class TopologyError(RuntimeError):
    """A namespace or topology that could not be entered, described or built."""


@contextmanager
def in_netns_file(path: str, what: str) -> Iterator[None]:
    """Run the body in the network namespace of ``path`` (a netns file, e.g.
    /proc/PID/ns/net); sockets opened stay there.  ``what`` names it in errors."""
    libc = ctypes.CDLL(None, use_errno=True)
    home = os.open("/proc/self/ns/net", os.O_RDONLY)
    try:
        target = os.open(path, os.O_RDONLY)
    except FileNotFoundError:
        os.close(home)
        raise TopologyError(f"no network namespace {what}") from None
    try:
        if libc.setns(target, CLONE_NEWNET) != 0:
            raise OSError(ctypes.get_errno(), f"setns({what}) failed")
        yield
    finally:
        libc.setns(home, CLONE_NEWNET)
        os.close(target)
        os.close(home)


def in_netns(name: str) -> "contextlib.AbstractContextManager[None]":
    """Run the body in network namespace ``name``; sockets opened stay there."""
    return in_netns_file(str(NETNS_DIR / name), name)


def sh(cmd: Sequence[str], ns: Optional[str] = None, stdin: Optional[str] = None,
       timeout: float = 120, check: bool = True) -> subprocess.CompletedProcess:
    """Run ``cmd`` (in namespace ``ns``); a failure raises with its stderr."""
    full = (["ip", "netns", "exec", ns] if ns else []) + list(cmd)
    try:
        res = subprocess.run(full, input=stdin, capture_output=True, text=True, timeout=timeout)
    except FileNotFoundError as exc:
        raise TopologyError(f"{cmd[0]} is not installed (make setup)") from exc
    if check and res.returncode != 0:
        what = " ".join(full) if stdin is None else f"{' '.join(full)} <<\n{stdin}"
        raise TopologyError(f"{what}\nfailed ({res.returncode}): {res.stderr.strip()}")
    return res


def pids_in_netns(names: Sequence[str]) -> List[int]:
    """Processes whose network namespace is one of the named ones."""
    inodes = set()
    for n in names:
        try:
            inodes.add(os.stat(NETNS_DIR / n).st_ino)
        except FileNotFoundError:
            pass
    out = []
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                if os.stat(entry / "ns" / "net").st_ino in inodes:
                    out.append(int(entry.name))
            except OSError:
                continue
    return out


def write_sysctls(ns: str, values: Dict[str, str]) -> None:
    """Set sysctls of the current namespace (``ns`` names it in errors)."""
    for key, val in values.items():
        path = Path("/proc/sys") / key.replace(".", "/")
        try:
            path.write_text(str(val))
        except OSError as exc:
            raise TopologyError(f"{ns}: cannot set {key}={val}: {exc}") from exc


# legacy ethtool commands (linux/ethtool.h): get/set TSO, GSO, GRO
SIOCETHTOOL = 0x8946
ETHTOOL_OFFLOADS = {"tso": (0x1E, 0x1F), "gso": (0x23, 0x24), "gro": (0x2B, 0x2C)}


def _ethtool_value(sock: socket.socket, dev: str, cmd: int, data: int = 0) -> int:
    """One ETHTOOL_{G,S}* ioctl with a ``struct ethtool_value``."""
    val = ctypes.create_string_buffer(struct.pack("II", cmd, data))
    ifreq = struct.pack("16sP", dev.encode(), ctypes.addressof(val)) + bytes(16)
    fcntl.ioctl(sock.fileno(), SIOCETHTOOL, ifreq)
    return struct.unpack("II", val.raw[:8])[1]


def offloads(dev: str) -> Dict[str, bool]:
    """TSO/GSO/GRO of ``dev`` in the current namespace."""
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as sock:
        return {k: bool(_ethtool_value(sock, dev, get)) for k, (get, _) in ETHTOOL_OFFLOADS.items()}


def set_offloads(dev: str, on: bool) -> None:
    """TSO/GSO/GRO of ``dev`` on or off, read back (``ethtool -K`` as ioctls)."""
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as sock:
        for name, (get, set_) in ETHTOOL_OFFLOADS.items():
            try:
                _ethtool_value(sock, dev, set_, int(on))
            except OSError as exc:
                raise TopologyError(f"{dev}: cannot set {name} {'on' if on else 'off'}: {exc}") from exc
            if bool(_ethtool_value(sock, dev, get)) != on:
                raise TopologyError(f"{dev}: {name} is still {'off' if on else 'on'}")
