"""The asyncio HTTP/1.0 server: one request per connection, a body of the requested size.

``python -m synctcp_testbed.traffic.http server`` prints ``ready`` on stdout
once it listens (its address goes to stderr) and a JSON summary line when
it stops (SIGINT, SIGTERM or ``--max-seconds``).
"""

from __future__ import annotations

import asyncio
import socket
from collections import Counter
from typing import Any, Dict, Optional

from .sockets import install_stop, log, set_congestion
from .wire import CHUNK, HEAD_LIMIT, PAD, BadRequest, parse_request, response_head


class HttpServer:
    """HTTP/1.0 server: one request per connection, body of the requested size."""

    def __init__(self, cc: Optional[str] = None, header_timeout: float = 60.0) -> None:
        self.cc = cc
        self.header_timeout = header_timeout
        self.stats: Counter = Counter(connections=0, served=0, bad_requests=0, aborted=0,
                                      bytes_sent=0)

    async def handle(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        """Serve one connection, then close it; never raises."""
        self.stats["connections"] += 1
        try:
            if self.cc:
                set_congestion(writer.get_extra_info("socket"), self.cc)
            head = await asyncio.wait_for(reader.readuntil(b"\r\n\r\n"), self.header_timeout)
            req = parse_request(head)
            await self._discard(reader, req.body_bytes)
            await self._send_response(writer, req.resp_bytes)
            self.stats["served"] += 1
        except (BadRequest, asyncio.LimitOverrunError) as exc:
            self.stats["bad_requests"] += 1
            await self._send_bad_request(writer, str(exc))
        except (asyncio.IncompleteReadError, asyncio.TimeoutError, OSError, ValueError):
            self.stats["aborted"] += 1
        finally:
            writer.close()

    async def _discard(self, reader: asyncio.StreamReader, nbytes: int) -> None:
        while nbytes > 0:
            data = await reader.read(min(nbytes, CHUNK))
            if not data:
                raise asyncio.IncompleteReadError(b"", nbytes)
            nbytes -= len(data)

    async def _send_response(self, writer: asyncio.StreamWriter, body_bytes: int) -> None:
        writer.write(response_head(body_bytes))
        left = body_bytes
        while left > 0:
            n = min(left, CHUNK)
            writer.write(PAD[:n])
            left -= n
            self.stats["bytes_sent"] += n
            await writer.drain()
        await writer.drain()

    async def _send_bad_request(self, writer: asyncio.StreamWriter, reason: str) -> None:
        body = (reason[:200] + "\n").encode("ascii", "replace")
        head = f"HTTP/1.0 400 Bad Request\r\nContent-Length: {len(body)}\r\n\r\n"
        try:
            writer.write(head.encode("ascii") + body)
            await writer.drain()
        except OSError:
            pass


def listening_socket(host: str, port: int, cc: Optional[str]) -> socket.socket:
    """A socket listening on ``host:port`` with congestion control ``cc`` (ValueError if
    the kernel refuses it)."""
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    sock = socket.create_server((host, port), family=family, backlog=1024)
    try:
        if cc:
            set_congestion(sock, cc)
    except ValueError:
        sock.close()
        raise
    return sock


async def run_server(sock: socket.socket, server: HttpServer,
                     max_seconds: Optional[float] = None) -> Dict[str, Any]:
    """Serve on the listening ``sock`` until SIGINT/SIGTERM or ``max_seconds``."""
    stop = asyncio.Event()
    install_stop(stop)
    srv = await asyncio.start_server(server.handle, sock=sock, limit=HEAD_LIMIT, backlog=1024)
    host, port = sock.getsockname()[:2]
    log(f"listening on {host}:{port} cc={server.cc or 'default'}")
    print("ready", flush=True)
    try:
        await asyncio.wait_for(stop.wait(), max_seconds)
    except asyncio.TimeoutError:
        pass
    srv.close()
    return dict(server.stats)
