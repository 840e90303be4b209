"""The sockets of the server and the client: their congestion control, the
open-files limit, stopping on SIGINT/SIGTERM, and the one-line log."""

from __future__ import annotations

import asyncio
import errno
import re
import resource
import signal
import socket
import sys
from pathlib import Path
from typing import Any, Optional

#: a congestion-control name the kernel could know
CC_RE = re.compile(r"[A-Za-z0-9_]{1,15}")


def available_congestion_controls() -> str:
    """The kernel's list of loaded congestion-control algorithms."""
    try:
        return Path("/proc/sys/net/ipv4/tcp_available_congestion_control").read_text().strip()
    except OSError:
        return "unknown"


def set_congestion(sock: Any, cc: str) -> None:
    """Set TCP_CONGESTION on ``sock``; ValueError with a clear message if refused."""
    try:
        sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_CONGESTION, cc.encode("ascii"))
    except OSError as exc:
        if exc.errno == errno.ENOENT:
            loaded = available_congestion_controls()
            raise ValueError(f"congestion control {cc!r} is not available "
                             f"(loaded: {loaded}); load its module") from exc
        if exc.errno == errno.EPERM:
            raise ValueError(f"congestion control {cc!r} is not allowed for this user "
                             "(see net.ipv4.tcp_allowed_congestion_control)") from exc
        raise ValueError(f"cannot set congestion control {cc!r}: {exc.strerror}") from exc


def check_congestion(cc: Optional[str]) -> None:
    """Raise ValueError unless ``cc`` is None or settable on a TCP socket."""
    if cc is None:
        return
    if not CC_RE.fullmatch(cc):
        raise ValueError(f"bad congestion control name {cc!r}")
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        set_congestion(sock, cc)


def raise_fd_limit() -> int:
    """Raise the soft open-files limit to the hard one; return the new soft limit."""
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    if hard != resource.RLIM_INFINITY and soft < hard:
        resource.setrlimit(resource.RLIMIT_NOFILE, (hard, hard))
        soft = hard
    return soft


def install_stop(stop: asyncio.Event) -> None:
    """Set ``stop`` on SIGINT or SIGTERM."""
    loop = asyncio.get_running_loop()
    for sig in (signal.SIGINT, signal.SIGTERM):
        loop.add_signal_handler(sig, stop.set)


def log(msg: str) -> None:
    """One line on stderr, prefixed ``http:``."""
    print(f"http: {msg}", file=sys.stderr, flush=True)
