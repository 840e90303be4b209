"""The load generator: the planned connections, each one request/response, one row each.

It opens one connection per planned request (:func:`.model.plan`) at its
arrival time, up to ``max_connections`` at once (arrivals over it are
dropped and counted), and writes one row per response to its CSV
(:mod:`.records`).  ``python -m synctcp_testbed.traffic.http client``
prints nothing on stdout but its final one-line JSON summary.  Times are
CLOCK_MONOTONIC seconds (``time.monotonic()``).
"""

from __future__ import annotations

import asyncio
import csv
import socket
import time
from collections import Counter
from dataclasses import dataclass
from typing import IO, Any, Dict, Optional, Set

from .model import Connection, HttpSizeModel, calibrate, packmime_arrival_shape, plan
from .records import CSV_FIELDS
from .sockets import install_stop, log, set_congestion
from .wire import CHUNK, HEAD_LIMIT, PAD, parse_response_head, request_head, response_head


@dataclass
class ClientConfig:
    """Everything the load generator needs."""

    host: str
    port: int
    family: int
    load_pct: float
    capacity_mbit: float
    seconds: float
    seed: int
    out: IO[str]
    cc: Optional[str] = None
    group: str = "fwd"
    max_connections: int = 1000
    drain_seconds: float = 15.0
    arrival_shape: Optional[float] = None


class LoadGenerator:
    """Opens one connection per planned request and writes one CSV row per response."""

    def __init__(self, cfg: ClientConfig, model: Optional[HttpSizeModel] = None) -> None:
        self.cfg = cfg
        self.model = model or HttpSizeModel()
        self.rate = calibrate(cfg.load_pct, cfg.capacity_mbit, self.model)
        self.shape = cfg.arrival_shape or packmime_arrival_shape(self.rate)
        self.writer = csv.writer(cfg.out)
        self.writer.writerow(CSV_FIELDS)
        self.active: Set["asyncio.Task[None]"] = set()
        self.counts: Counter = Counter(offered=0, started=0, completed=0, dropped=0,
                                       offered_bytes=0, rcvd_bytes=0)
        self.error_kinds: Counter = Counter()

    async def fetch(self, conn: Connection) -> None:
        """Run one request/response; the row is written even when cancelled."""
        t_start = time.monotonic()
        head, pad = request_head(conn.req_bytes, conn.resp_bytes)
        self.counts["offered_bytes"] += (len(head) + pad + conn.resp_bytes
                                         + len(response_head(conn.resp_bytes)))
        rcvd, ok = 0, False
        sock = socket.socket(self.cfg.family, socket.SOCK_STREAM)
        sock.setblocking(False)
        writer: Optional[asyncio.StreamWriter] = None
        try:
            if self.cfg.cc:
                set_congestion(sock, self.cfg.cc)
            await asyncio.get_running_loop().sock_connect(sock, (self.cfg.host, self.cfg.port))
            reader, writer = await asyncio.open_connection(sock=sock, limit=HEAD_LIMIT)
            await self._send_request(writer, head, pad)
            status, length = parse_response_head(await reader.readuntil(b"\r\n\r\n"))
            want = length if length is not None else conn.resp_bytes
            while rcvd < want:
                data = await reader.read(min(CHUNK, want - rcvd))
                if not data:
                    break
                rcvd += len(data)
            ok = status == 200 and length == conn.resp_bytes and rcvd == length
            if not ok:
                self.error_kinds[f"status {status}" if status != 200 else "short response"] += 1
        except (OSError, asyncio.IncompleteReadError, asyncio.LimitOverrunError, ValueError) as exc:
            self.error_kinds[type(exc).__name__] += 1
        except asyncio.CancelledError:
            self.error_kinds["unfinished"] += 1
            raise
        finally:
            self._record(t_start, conn, head, pad, rcvd, ok)
            if writer is not None:
                writer.close()
            else:
                sock.close()

    async def _send_request(self, writer: asyncio.StreamWriter, head: bytes, pad: int) -> None:
        writer.write(head)
        while pad > 0:
            n = min(pad, CHUNK)
            writer.write(PAD[:n])
            pad -= n
            await writer.drain()
        await writer.drain()

    def _record(self, t_start: float, conn: Connection, head: bytes, pad: int, rcvd: int,
                ok: bool) -> None:
        t_end = time.monotonic()
        self.counts["completed"] += ok
        self.counts["rcvd_bytes"] += rcvd
        self.writer.writerow((f"{t_start:.6f}", f"{t_end:.6f}", len(head) + pad, conn.resp_bytes,
                              rcvd, int(ok), self.cfg.group))

    async def run(self) -> Dict[str, Any]:
        """Generate the planned arrivals, drain, and return the summary."""
        stop = asyncio.Event()
        install_stop(stop)
        loop = asyncio.get_running_loop()
        t0 = loop.time()
        for conn in plan(self.rate, self.cfg.seconds, self.cfg.seed, self.model, self.shape):
            if await self._sleep_until(stop, t0 + conn.offset):
                break
            self._launch(conn)
        elapsed = loop.time() - t0
        if not stop.is_set():
            await self._sleep_until(stop, t0 + self.cfg.seconds)
            elapsed = min(loop.time() - t0, self.cfg.seconds)
            await self._drain(stop)
        await self._cancel_active()
        return self._summary(elapsed, stop.is_set())

    async def _sleep_until(self, stop: asyncio.Event, when: float) -> bool:
        """Wait until loop time ``when``; True if asked to stop meanwhile."""
        delay = when - asyncio.get_running_loop().time()
        if delay > 0 and not stop.is_set():
            try:
                await asyncio.wait_for(stop.wait(), delay)
            except asyncio.TimeoutError:
                pass
        return stop.is_set()

    def _launch(self, conn: Connection) -> None:
        self.counts["offered"] += 1
        if len(self.active) >= self.cfg.max_connections:
            self.counts["dropped"] += 1
            return
        self.counts["started"] += 1
        task = asyncio.get_running_loop().create_task(self.fetch(conn))
        self.active.add(task)
        task.add_done_callback(self.active.discard)

    async def _drain(self, stop: asyncio.Event) -> None:
        """Let running connections finish, for at most ``drain_seconds``."""
        if not self.active:
            return
        everything = asyncio.ensure_future(asyncio.wait(set(self.active)))
        stopper = asyncio.ensure_future(stop.wait())
        await asyncio.wait({everything, stopper}, timeout=self.cfg.drain_seconds,
                           return_when=asyncio.FIRST_COMPLETED)
        for fut in (everything, stopper):
            fut.cancel()
        await asyncio.gather(everything, stopper, return_exceptions=True)

    async def _cancel_active(self) -> None:
        tasks = list(self.active)
        for task in tasks:
            task.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)

    def _summary(self, elapsed: float, interrupted: bool) -> Dict[str, Any]:
        c = self.counts
        seconds = max(elapsed, 1e-9)
        if c["dropped"]:
            log(f"{c['dropped']} of {c['offered']} connections were dropped: "
                 f"over the --max-connections cap of {self.cfg.max_connections}")
        return {
            "offered": c["offered"], "started": c["started"], "completed": c["completed"],
            "errors": c["started"] - c["completed"], "dropped": c["dropped"],
            "offered_bytes": c["offered_bytes"], "rcvd_bytes": c["rcvd_bytes"],
            "seconds": round(elapsed, 3),
            "offered_mbit": round(c["offered_bytes"] * 8 / seconds / 1e6, 4),
            "target_mbit": round(self.cfg.load_pct / 100 * self.cfg.capacity_mbit, 4),
            "rate_cps": round(self.rate, 4), "arrival_shape": round(self.shape, 4),
            "seed": self.cfg.seed, "interrupted": interrupted,
            "error_kinds": dict(self.error_kinds),
        }
