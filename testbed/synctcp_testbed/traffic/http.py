"""Web-like HTTP/1.0 workload: size model, load calibration, server, client, metrics.

In the spirit of PackMime (Weigle 2003, App. A; see docs/http-workload.md):
one TCP connection per request/response pair, heavy-tailed request and
response sizes, connection arrivals at a rate calibrated to an offered load
in % of the bottleneck capacity, and one timing row per response::

    python -m synctcp_testbed.traffic.http server --port 8080 --cc sync
    python -m synctcp_testbed.traffic.http client --server 10.0.9.1:8080 --load-pct 85 \\
        --capacity-mbit 10 --seconds 300 --seed 1 --cc sync --out http.csv
    python -m synctcp_testbed.traffic.http metrics http.csv

The server prints ``ready`` on stdout once it listens (its address goes to
stderr) and a JSON summary line when it stops.  The client prints nothing on
stdout but its final one-line JSON summary.  Both stop cleanly on
SIGINT/SIGTERM.  Times are CLOCK_MONOTONIC seconds (``time.monotonic()``).
"""

from __future__ import annotations

import argparse
import asyncio
import bisect
import csv
import errno
import ipaddress
import json
import math
import random
import re
import resource
import signal
import socket
import sys
import time
from collections import Counter
from dataclasses import dataclass
from functools import cached_property
from pathlib import Path
from typing import IO, Any, Dict, Iterator, List, NamedTuple, Optional, Sequence, Set, Tuple, Union

from ..analysis.metrics import percentile

SEGMENT_BYTES = 1420            # data bytes per segment in the dissertation
SMALL_RESPONSE_MAX = 25_560     # 18 segments: the "under 25 KB" bin of Figs 4.29-4.49
SERVER_BODY_CAP = 64 * 2**20    # largest response body the server sends
SERVER_REQUEST_CAP = 8 * 2**20  # largest request body (padding) the server reads
HEAD_LIMIT = 16 * 1024          # largest request or response head (line + headers)
CHUNK = 64 * 1024
CSV_FIELDS = ("t_start", "t_end", "req_bytes", "resp_bytes", "rcvd_bytes", "ok", "flow_group")
PAD = memoryview(b"x" * CHUNK)
GROUP_RE = re.compile(r"[A-Za-z0-9_.-]{1,32}")
CC_RE = re.compile(r"[A-Za-z0-9_]{1,15}")

Number = Union[int, float]


# --------------------------------------------------------------------------
# Size model
# --------------------------------------------------------------------------

@dataclass(frozen=True)
class SizeDistribution:
    """Empirical body with log-linear interpolation and a truncated Pareto tail.

    ``knots`` are ``(size_bytes, cdf)`` points with strictly increasing sizes
    and CDF values, the first CDF value 0 and the last below 1.  Between two
    knots the CDF is linear in log(size) (sizes are log-uniform inside a
    segment).  Above the last knot ``x_t`` the remaining mass ``p = 1 - F(x_t)``
    follows a Pareto(``tail_alpha``) law with scale ``x_t``, truncated at
    ``cap`` (conditioned on being <= cap, so there is no point mass at the cap).
    """

    knots: Tuple[Tuple[float, float], ...]
    tail_alpha: float
    cap: float

    def __post_init__(self) -> None:
        if len(self.knots) < 2:
            raise ValueError("a size distribution needs at least two knots")
        sizes = [k[0] for k in self.knots]
        probs = [k[1] for k in self.knots]
        if probs[0] != 0.0 or probs[-1] >= 1.0:
            raise ValueError("the first knot's CDF must be 0 and the last one's below 1")
        if sizes[0] <= 0 or any(b <= a for a, b in zip(sizes, sizes[1:])):
            raise ValueError("knot sizes must be positive and strictly increasing")
        if any(b <= a for a, b in zip(probs, probs[1:])):
            raise ValueError("knot CDF values must be strictly increasing")
        if not self.tail_alpha > 0:
            raise ValueError("the tail index alpha must be positive")
        if not self.cap > sizes[-1]:
            raise ValueError("the cap must lie above the last knot")

    @property
    def tail_start(self) -> float:
        """Size where the Pareto tail begins (the last knot)."""
        return self.knots[-1][0]

    @property
    def tail_mass(self) -> float:
        """Probability of a size above the tail start."""
        return 1.0 - self.knots[-1][1]

    def _cap_ratio(self) -> float:
        """(x_t / cap) ** alpha: untruncated Pareto mass beyond the cap."""
        return (self.tail_start / self.cap) ** self.tail_alpha

    @cached_property
    def _probs(self) -> List[float]:
        return [k[1] for k in self.knots]

    def quantile(self, u: float) -> float:
        """Size with CDF ``u`` (0 <= u < 1), by inverting the CDF."""
        probs = self._probs
        if u < probs[-1]:
            i = bisect.bisect_right(probs, u) - 1
            (a, fa), (b, fb) = self.knots[i], self.knots[i + 1]
            return a * (b / a) ** ((u - fa) / (fb - fa))
        v = (u - probs[-1]) / self.tail_mass
        return self.tail_start * (1.0 - v * (1.0 - self._cap_ratio())) ** (-1.0 / self.tail_alpha)

    def cdf(self, x: float) -> float:
        """P(size <= x) of the continuous distribution."""
        if x < self.knots[0][0]:
            return 0.0
        if x >= self.cap:
            return 1.0
        for (a, fa), (b, fb) in zip(self.knots, self.knots[1:]):
            if x <= b:
                return fa + (fb - fa) * math.log(x / a) / math.log(b / a)
        tail = 1.0 - (self.tail_start / x) ** self.tail_alpha
        return self.knots[-1][1] + self.tail_mass * tail / (1.0 - self._cap_ratio())

    def sample(self, rng: random.Random) -> int:
        """One size in whole bytes (the continuous size rounded to nearest)."""
        return min(int(self.quantile(rng.random()) + 0.5), int(self.cap))

    @property
    def mean(self) -> float:
        """Exact mean of the (capped) continuous distribution, in bytes.

        Rounding samples to whole bytes moves it by less than half a byte.
        """
        body = sum((fb - fa) * (b - a) / math.log(b / a)
                   for (a, fa), (b, fb) in zip(self.knots, self.knots[1:]))
        return body + self.tail_mass * self._tail_mean()

    def _tail_mean(self) -> float:
        """Mean of the Pareto tail truncated to [x_t, cap]."""
        xt, cap, alpha = self.tail_start, self.cap, self.tail_alpha
        if alpha == 1.0:
            return xt * math.log(cap / xt) / (1.0 - xt / cap)
        integral = (cap ** (1.0 - alpha) - xt ** (1.0 - alpha)) / (1.0 - alpha)
        return alpha * xt ** alpha * integral / (1.0 - self._cap_ratio())

    def mean_digits(self) -> float:
        """Mean number of decimal digits of a rounded size (exact for this CDF)."""
        digits, power = 1.0, 10.0
        while power <= self.cap:
            digits += 1.0 - self.cdf(power - 0.5)
            power *= 10.0
        return digits


#: Responses: median 730 B, 60% in one 1420-byte segment, 90% in ten, 99% under
#: 66,560 B, Pareto(1.23) tail from 21,000 B, capped at 50 MB (docs/http-workload.md).
RESPONSE_SIZES = SizeDistribution(
    knots=((64.0, 0.0), (730.0, 0.50), (1420.0, 0.60), (14200.0, 0.90), (21000.0, 0.9587)),
    tail_alpha=1.23,
    cap=50_000_000.0,
)

#: Requests: median 400 B, 92% at most 1 KB, Pareto(1.2) tail capped at 2 MB.
REQUEST_SIZES = SizeDistribution(
    knots=((100.0, 0.0), (400.0, 0.50), (1024.0, 0.92)),
    tail_alpha=1.2,
    cap=2_000_000.0,
)


class HttpSizeModel:
    """Request and response sizes of the workload, sampled from a seeded RNG."""

    def __init__(self, request: SizeDistribution = REQUEST_SIZES,
                 response: SizeDistribution = RESPONSE_SIZES) -> None:
        if response.cap > SERVER_BODY_CAP or request.cap > SERVER_REQUEST_CAP:
            raise ValueError("size caps exceed what the server accepts")
        self.request = request
        self.response = response

    def sample_request(self, rng: random.Random) -> int:
        """Bytes the client sends: request line, headers and padding."""
        return self.request.sample(rng)

    def sample_response(self, rng: random.Random) -> int:
        """Response body bytes (Content-Length) the client asks for."""
        return self.response.sample(rng)

    @property
    def mean_request_bytes(self) -> float:
        """Mean request size (exact for the capped distribution)."""
        return self.request.mean

    @property
    def mean_response_bytes(self) -> float:
        """Mean response body size (exact for the capped distribution)."""
        return self.response.mean

    @property
    def mean_response_head_bytes(self) -> float:
        """Mean length of the server's status line and headers."""
        return len(response_head(0)) - 1 + self.response.mean_digits()

    @property
    def mean_connection_bytes(self) -> float:
        """Mean application bytes one connection carries (both directions)."""
        return self.mean_request_bytes + self.mean_response_bytes + self.mean_response_head_bytes


# --------------------------------------------------------------------------
# Load calibration and the arrival plan
# --------------------------------------------------------------------------

def _finite(name: str, value: Number) -> float:
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value):
        raise ValueError(f"{name} must be a finite number, got {value!r}")
    return float(value)


def calibrate(load_pct: Number, capacity_mbit: Number, model: Optional[HttpSizeModel] = None,
              extra_bytes_per_connection: Number = 0.0) -> float:
    """Connection arrival rate (connections/s) offering ``load_pct`` % of the capacity.

    Offered load (bit/s) = rate x mean bytes per connection x 8, where a
    connection's bytes are its request, its response body and the response
    head (plus ``extra_bytes_per_connection``, e.g. an estimate of TCP/IP
    headers).  So ``rate = load/100 x capacity / (8 x mean bytes)``.
    """
    load = _finite("load_pct", load_pct)
    capacity = _finite("capacity_mbit", capacity_mbit)
    extra = _finite("extra_bytes_per_connection", extra_bytes_per_connection)
    if not 1.0 <= load <= 200.0:
        raise ValueError(f"load_pct must be within 1..200 (% of capacity), got {load:g}")
    if capacity <= 0:
        raise ValueError(f"capacity_mbit must be positive, got {capacity:g}")
    if extra < 0:
        raise ValueError(f"extra_bytes_per_connection must be >= 0, got {extra:g}")
    model = model or HttpSizeModel()
    return load / 100.0 * capacity * 1e6 / (8.0 * (model.mean_connection_bytes + extra))


def offered_load_bps(rate: float, model: Optional[HttpSizeModel] = None,
                     extra_bytes_per_connection: float = 0.0) -> float:
    """Offered load (bit/s) of ``rate`` connections/s: the inverse of :func:`calibrate`."""
    model = model or HttpSizeModel()
    return rate * (model.mean_connection_bytes + extra_bytes_per_connection) * 8.0


def packmime_arrival_shape(rate: float) -> float:
    """Weibull shape of PackMime-HTTP connection inter-arrivals at ``rate`` conn/s.

    Cao et al. (INFOCOM 2004) fit ``logit(shape) = 0.352 + 0.388 log2(rate)``:
    bursty (shape < 1) at low rates, tending to Poisson (shape 1) as the rate
    grows.
    """
    if not rate > 0:
        raise ValueError(f"rate must be positive, got {rate!r}")
    return 1.0 / (1.0 + math.exp(-(0.352 + 0.388 * math.log2(rate))))


def weibull_scale(rate: float, shape: float) -> float:
    """Weibull scale giving a mean inter-arrival time of exactly 1/rate."""
    return 1.0 / (rate * math.gamma(1.0 + 1.0 / shape))


class Connection(NamedTuple):
    """One planned request/response pair."""

    offset: float       # seconds after the start of the run
    req_bytes: int
    resp_bytes: int


def plan(rate: float, seconds: float, seed: int, model: Optional[HttpSizeModel] = None,
         shape: Optional[float] = None) -> Iterator[Connection]:
    """Connections arriving in [0, seconds): Weibull gaps, sizes from ``model``.

    Arrivals and sizes come from two RNGs seeded from ``seed``, so the k-th
    connection has the same sizes at every load level and in every run.
    """
    if not rate > 0 or not seconds > 0:
        raise ValueError("rate and seconds must be positive")
    model = model or HttpSizeModel()
    shape = packmime_arrival_shape(rate) if shape is None else shape
    if not shape > 0:
        raise ValueError(f"arrival shape must be positive, got {shape!r}")
    scale = weibull_scale(rate, shape)
    gaps = random.Random(f"arrivals:{seed}")
    sizes = random.Random(f"sizes:{seed}")
    t = gaps.weibullvariate(scale, shape)
    while t < seconds:
        yield Connection(t, model.sample_request(sizes), model.sample_response(sizes))
        t += gaps.weibullvariate(scale, shape)


def response_sizes(load_pct: Number, capacity_mbit: Number, seconds: float, seed: int,
                   model: Optional[HttpSizeModel] = None,
                   arrival_shape: Optional[float] = None) -> Set[int]:
    """Every response size the client with these options asks for (what a
    static server must hold): the same calibration and plan as :class:`LoadGenerator`."""
    model = model or HttpSizeModel()
    rate = calibrate(load_pct, capacity_mbit, model)
    shape = arrival_shape or packmime_arrival_shape(rate)
    return {c.resp_bytes for c in plan(rate, seconds, seed, model, shape)}


# --------------------------------------------------------------------------
# Wire format
# --------------------------------------------------------------------------

class BadRequest(ValueError):
    """A request the server refuses (answered with 400 and closed)."""


class Request(NamedTuple):
    """What the server needs from a request head."""

    resp_bytes: int
    body_bytes: int


REQUEST_LINE_RE = re.compile(r"GET /(\d{1,10}) HTTP/1\.[01]")
STATUS_LINE_RE = re.compile(r"HTTP/1\.[01] (\d{3})(?: .*)?")


def response_head(body_bytes: int) -> bytes:
    """Status line and headers of a response with ``body_bytes`` of body."""
    return f"HTTP/1.0 200 OK\r\nContent-Length: {body_bytes}\r\n\r\n".encode("ascii")


def request_head(req_bytes: int, resp_bytes: int) -> Tuple[bytes, int]:
    """Request head and padding length so that head + padding = ``req_bytes``.

    The padding travels as a request body announced by a fixed-width
    Content-Length.  Requests shorter than the head itself (about 55 bytes)
    are sent as the bare head.
    """
    line = f"GET /{resp_bytes} HTTP/1.0\r\n"
    pad = max(0, req_bytes - len(line) - len("Content-Length: 0000000000\r\n\r\n"))
    head = f"{line}Content-Length: {pad:010d}\r\n\r\n".encode("ascii")
    return head, pad


def parse_request(head: bytes, body_cap: int = SERVER_BODY_CAP,
                  request_cap: int = SERVER_REQUEST_CAP) -> Request:
    """Validate a request head (ending in a blank line) and return its sizes."""
    if not head.endswith(b"\r\n\r\n"):
        raise BadRequest("request head does not end with a blank line")
    lines = head[:-4].decode("latin-1").split("\r\n")
    match = REQUEST_LINE_RE.fullmatch(lines[0])
    if not match:
        raise BadRequest(f"bad request line {lines[0][:80]!r}")
    resp = int(match.group(1))
    if resp > body_cap:
        raise BadRequest(f"response of {resp} bytes is over the {body_cap}-byte cap")
    body: Optional[int] = None
    for line in lines[1:]:
        name, sep, value = line.partition(":")
        if not sep or not name.strip():
            raise BadRequest(f"bad header line {line[:80]!r}")
        if name.strip().lower() == "content-length":
            value = value.strip()
            if body is not None or not value.isdigit() or len(value) > 10:
                raise BadRequest(f"bad Content-Length {value[:20]!r}")
            body = int(value)
    if body is not None and body > request_cap:
        raise BadRequest(f"request body of {body} bytes is over the {request_cap}-byte cap")
    return Request(resp, body or 0)


def parse_response_head(head: bytes) -> Tuple[int, Optional[int]]:
    """Status code and Content-Length (None if absent) of a response head."""
    lines = head.rstrip(b"\r\n").decode("latin-1").split("\r\n")
    match = STATUS_LINE_RE.fullmatch(lines[0])
    if not match:
        raise ValueError(f"bad status line {lines[0][:80]!r}")
    length: Optional[int] = None
    for line in lines[1:]:
        name, _, value = line.partition(":")
        if name.strip().lower() == "content-length" and value.strip().isdigit():
            length = int(value.strip())
    return int(match.group(1)), length


# --------------------------------------------------------------------------
# Socket helpers
# --------------------------------------------------------------------------

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


def _install_stop(stop: asyncio.Event) -> None:
    loop = asyncio.get_running_loop()
    for sig in (signal.SIGINT, signal.SIGTERM):
        loop.add_signal_handler(sig, stop.set)


def _log(msg: str) -> None:
    print(f"http: {msg}", file=sys.stderr, flush=True)


# --------------------------------------------------------------------------
# Server
# --------------------------------------------------------------------------

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


def _listening_socket(host: str, port: int, cc: Optional[str]) -> socket.socket:
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
    _install_stop(stop)
    srv = await asyncio.start_server(server.handle, sock=sock, limit=HEAD_LIMIT, backlog=1024)
    host, port = sock.getsockname()[:2]
    _log(f"listening on {host}:{port} cc={server.cc or 'default'}")
    print("ready", flush=True)
    try:
        await asyncio.wait_for(stop.wait(), max_seconds)
    except asyncio.TimeoutError:
        pass
    srv.close()
    return dict(server.stats)


# --------------------------------------------------------------------------
# Client (load generator)
# --------------------------------------------------------------------------

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
        _install_stop(stop)
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
            _log(f"{c['dropped']} of {c['offered']} connections were dropped: "
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


# --------------------------------------------------------------------------
# Response-time metrics
# --------------------------------------------------------------------------

@dataclass(frozen=True)
class HttpRow:
    """One row of http.csv."""

    t_start: float
    t_end: float
    req_bytes: int
    resp_bytes: int
    rcvd_bytes: int
    ok: bool
    flow_group: str

    @property
    def response_ms(self) -> float:
        """Response time of this pair in milliseconds."""
        return (self.t_end - self.t_start) * 1e3


def read_http_csv(path: Union[str, Path], group: Optional[str] = None) -> List[HttpRow]:
    """Rows of an http.csv (only those of ``group`` if given)."""
    with open(path, newline="") as fh:
        reader = csv.DictReader(fh)
        missing = [f for f in CSV_FIELDS if f not in (reader.fieldnames or [])]
        if missing:
            raise ValueError(f"{path}: not an http.csv, missing columns {', '.join(missing)}")
        rows = []
        for n, rec in enumerate(reader, start=2):
            try:
                rows.append(HttpRow(float(rec["t_start"]), float(rec["t_end"]),
                                    int(rec["req_bytes"]), int(rec["resp_bytes"]),
                                    int(rec["rcvd_bytes"]), rec["ok"].strip() == "1",
                                    rec["flow_group"]))
            except (TypeError, ValueError) as exc:
                raise ValueError(f"{path}:{n}: bad row ({exc})") from exc
    return [r for r in rows if group is None or r.flow_group == group]


def response_count(rows: Sequence[HttpRow]) -> int:
    """Completed request/response pairs: the whole response arrived (ok=1)."""
    return sum(1 for r in rows if r.ok)


def error_count(rows: Sequence[HttpRow]) -> int:
    """Pairs whose response did not arrive whole (refused, reset, cut by the run's end)."""
    return sum(1 for r in rows if not r.ok)


def response_times_ms(rows: Sequence[HttpRow]) -> List[float]:
    """HTTP response times (ms) of the completed pairs.

    Weigle 2003, section 4.1.4: "the amount of time between a client sending
    a HTTP request and receiving the complete HTTP response"; measured here
    from the start of the TCP connect to the last byte of the response.
    """
    return [r.response_ms for r in rows if r.ok]


def median_ms(rows: Sequence[HttpRow]) -> float:
    """Median response time (ms, nearest rank) of the completed pairs; NaN if none."""
    return percentile(response_times_ms(rows), 50)


def p90_ms(rows: Sequence[HttpRow]) -> float:
    """90th percentile response time (ms, nearest rank) of the completed pairs."""
    return percentile(response_times_ms(rows), 90)


#: the response-time bound of Weigle's CDFs (Figs 4.15-4.19: "completed in 1500 ms or less")
WITHIN_MS = 1500.0


def within_pct(rows: Sequence[HttpRow], bound_ms: float = WITHIN_MS) -> float:
    """% of the pairs that completed within ``bound_ms`` (of all pairs, errors
    included: a response that never arrived did not complete in time); NaN if none."""
    if not rows:
        return math.nan
    return 100.0 * sum(1 for r in rows if r.ok and r.response_ms <= bound_ms) / len(rows)


def is_small_response(resp_bytes: int) -> bool:
    """The dissertation's split: responses of at most 25,560 B (18 segments) are small."""
    return resp_bytes <= SMALL_RESPONSE_MAX


def small_median_ms(rows: Sequence[HttpRow]) -> float:
    """Median response time of completed responses no larger than 25,560 B (Figs 4.29-4.34)."""
    return median_ms([r for r in rows if is_small_response(r.resp_bytes)])


def large_median_ms(rows: Sequence[HttpRow]) -> float:
    """Median response time of completed responses larger than 25,560 B (Figs 4.35-4.40)."""
    return median_ms([r for r in rows if not is_small_response(r.resp_bytes)])


#: the summary's response-time histogram: logarithmic bins, RT_BINS_PER_DECADE a
#: decade from 1 ms; bin k holds [10^(k/20), 10^((k+1)/20)) ms, times below 1 ms
#: fall in bin 0 and times from 10^6 ms (17 minutes) on in the last bin
RT_BINS_PER_DECADE = 20
RT_BINS = 6 * RT_BINS_PER_DECADE


def rt_bin(ms: float) -> int:
    """The histogram bin of a response time of ``ms`` milliseconds."""
    if not ms > 1.0:        # also NaN
        return 0
    return min(RT_BINS - 1, int(math.floor(math.log10(ms) * RT_BINS_PER_DECADE)))


def rt_bin_edges_ms(k: int) -> Tuple[float, float]:
    """Bin ``k``'s lower and upper response time (ms)."""
    if not 0 <= k < RT_BINS:
        raise ValueError(f"response-time bin {k} is outside 0-{RT_BINS - 1}")
    return 10.0 ** (k / RT_BINS_PER_DECADE), 10.0 ** ((k + 1) / RT_BINS_PER_DECADE)


def rt_histogram(rows: Sequence[HttpRow]) -> Dict[str, List[List[int]]]:
    """The completed pairs' response times binned by :func:`rt_bin`, split at
    25,560 B: ``{"small": [[bin, count], ...], "large": [...]}``, non-empty bins only,
    in bin order.  Small enough for a run summary, and the counts of seeds add up,
    so the ledger draws the CDF and CCDF of a case pooled over its seeds."""
    parts: Dict[str, Counter] = {"small": Counter(), "large": Counter()}
    for r in rows:
        if r.ok:
            parts["small" if is_small_response(r.resp_bytes) else "large"][rt_bin(r.response_ms)] += 1
    return {key: [[k, n] for k, n in sorted(c.items())] for key, c in parts.items()}


def http_metrics(rows: Union[str, Path, Sequence[HttpRow]]) -> Dict[str, Any]:
    """Response-time summary of an http.csv (a path) or of its rows, with the
    response-time histogram (``rt_hist``, :func:`rt_histogram`)."""
    if isinstance(rows, (str, Path)):
        rows = read_http_csv(rows)
    return {"responses": response_count(rows), "errors": error_count(rows),
            "median_ms": median_ms(rows), "p90_ms": p90_ms(rows),
            "small_median_ms": small_median_ms(rows), "large_median_ms": large_median_ms(rows),
            "within_1500ms_pct": within_pct(rows), "rt_hist": rt_histogram(rows)}


def cdf(values: Sequence[float]) -> Tuple[List[float], List[float]]:
    """Empirical CDF: distinct values x and P(X <= x), for a step plot.

    The dissertation plots response-time CDFs up to 1500 ms (Figs 4.15-4.19).
    """
    xs = sorted(values)
    n = len(xs)
    out_x: List[float] = []
    out_y: List[float] = []
    for i, x in enumerate(xs):
        if i + 1 < n and xs[i + 1] == x:
            continue
        out_x.append(x)
        out_y.append((i + 1) / n)
    return out_x, out_y


def ccdf(values: Sequence[float]) -> Tuple[List[float], List[float]]:
    """Empirical CCDF: distinct values x and P(X >= x), never 0 (log-log plots).

    The dissertation plots response-time CCDFs on log-log axes (Figs 4.20-4.22).
    """
    xs = sorted(values)
    n = len(xs)
    out_x: List[float] = []
    out_y: List[float] = []
    for i, x in enumerate(xs):
        if i > 0 and xs[i - 1] == x:
            continue
        out_x.append(x)
        out_y.append((n - i) / n)
    return out_x, out_y


# --------------------------------------------------------------------------
# Command line
# --------------------------------------------------------------------------

def parse_server_address(text: str) -> Tuple[str, int]:
    """Split ``ADDR:PORT`` or ``[V6ADDR]:PORT``; ValueError if malformed."""
    host, sep, port_text = text.rpartition(":")
    if not sep or not host or not port_text.isdigit():
        raise ValueError(f"--server {text!r} is not ADDR:PORT")
    if host.startswith("[") and host.endswith("]"):
        host = host[1:-1]
    port = int(port_text)
    if not 1 <= port <= 65535:
        raise ValueError(f"--server port {port} is not within 1..65535")
    return host, port


def _resolve(host: str, port: int) -> Tuple[int, str]:
    """Address family and numeric address of ``host``."""
    try:
        version = ipaddress.ip_address(host).version
        return (socket.AF_INET6 if version == 6 else socket.AF_INET), host
    except ValueError:
        pass
    try:
        info = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM)
    except OSError as exc:
        raise ValueError(f"cannot resolve {host!r}: {exc}") from exc
    return info[0][0], info[0][4][0]


def _build_parser() -> argparse.ArgumentParser:
    ap = argparse.ArgumentParser(prog="python -m synctcp_testbed.traffic.http",
                                 description=__doc__.split("\n")[0])
    sub = ap.add_subparsers(dest="command", required=True)

    srv = sub.add_parser("server", help="serve HTTP/1.0 responses of the requested size")
    srv.add_argument("--host", default="0.0.0.0", help="address to listen on")
    srv.add_argument("--port", type=int, required=True, help="TCP port (0: any free port)")
    srv.add_argument("--cc", help="TCP congestion control of the server's sockets")
    srv.add_argument("--max-seconds", type=float, default=None, help="stop after this long")
    srv.set_defaults(parser=srv)

    cli = sub.add_parser("client", help="generate the calibrated web-like load")
    cli.add_argument("--server", required=True, metavar="ADDR:PORT")
    cli.add_argument("--load-pct", type=float, required=True,
                     help="offered load in %% of the capacity (1..200)")
    cli.add_argument("--capacity-mbit", type=float, required=True, help="bottleneck rate")
    cli.add_argument("--seconds", type=float, required=True, help="length of the arrival process")
    cli.add_argument("--seed", type=int, default=1)
    cli.add_argument("--cc", help="TCP congestion control of the client's sockets")
    cli.add_argument("--out", required=True, help="per-response CSV")
    cli.add_argument("--max-connections", type=int, default=1000,
                     help="concurrent connections; arrivals over it are dropped and counted")
    cli.add_argument("--group", default="fwd", help="flow_group column value")
    cli.add_argument("--drain-seconds", type=float, default=15.0,
                     help="wait this long after the last arrival for running responses")
    cli.add_argument("--arrival-shape", type=float, default=None,
                     help="Weibull shape of inter-arrivals (default: PackMime's for the "
                          "rate; 1 = Poisson)")
    cli.set_defaults(parser=cli)

    met = sub.add_parser("metrics", help="response-time summary of an http.csv as JSON")
    met.add_argument("csv")
    met.add_argument("--group", default=None, help="only rows of this flow_group")
    met.set_defaults(parser=met)
    return ap


def _json_safe(summary: Dict[str, Any]) -> Dict[str, Any]:
    return {k: (None if isinstance(v, float) and math.isnan(v) else v) for k, v in summary.items()}


def _server_main(ap: argparse.ArgumentParser, args: argparse.Namespace) -> int:
    if not 0 <= args.port <= 65535:
        ap.error(f"--port {args.port} is not within 0..65535")
    if args.max_seconds is not None and not args.max_seconds > 0:
        ap.error("--max-seconds must be positive")
    try:
        check_congestion(args.cc)
        sock = _listening_socket(args.host, args.port, args.cc)
    except ValueError as exc:
        ap.error(str(exc))
    except OSError as exc:
        ap.error(f"cannot listen on {args.host}:{args.port}: {exc.strerror or exc}")
    raise_fd_limit()
    stats = asyncio.run(run_server(sock, HttpServer(args.cc), args.max_seconds))
    print(json.dumps(stats), flush=True)
    return 0


def _client_config(ap: argparse.ArgumentParser, args: argparse.Namespace) -> ClientConfig:
    try:
        calibrate(args.load_pct, args.capacity_mbit)
        host, port = parse_server_address(args.server)
        family, host = _resolve(host, port)
        check_congestion(args.cc)
    except ValueError as exc:
        ap.error(str(exc))
    if not 0 < args.seconds <= 86400:
        ap.error("--seconds must be within 0..86400")
    if not 0 <= args.drain_seconds <= 3600:
        ap.error("--drain-seconds must be within 0..3600")
    if args.max_connections < 1:
        ap.error("--max-connections must be at least 1")
    if args.arrival_shape is not None and not 0.05 <= args.arrival_shape <= 20:
        ap.error("--arrival-shape must be within 0.05..20")
    if not GROUP_RE.fullmatch(args.group):
        ap.error("--group must be 1..32 characters of letters, digits, '_', '.' or '-'")
    fd_room = raise_fd_limit() - 64
    if args.max_connections > fd_room:
        _log(f"--max-connections {args.max_connections} lowered to {fd_room} (open-files limit)")
        args.max_connections = max(1, fd_room)
    try:
        out = open(args.out, "w", newline="")
    except OSError as exc:
        ap.error(f"cannot write --out {args.out}: {exc.strerror or exc}")
    return ClientConfig(host=host, port=port, family=family, load_pct=args.load_pct,
                        capacity_mbit=args.capacity_mbit, seconds=args.seconds, seed=args.seed,
                        out=out, cc=args.cc, group=args.group,
                        max_connections=args.max_connections, drain_seconds=args.drain_seconds,
                        arrival_shape=args.arrival_shape)


def _client_main(ap: argparse.ArgumentParser, args: argparse.Namespace) -> int:
    cfg = _client_config(ap, args)
    with cfg.out:
        summary = asyncio.run(LoadGenerator(cfg).run())
    print(json.dumps(summary), flush=True)
    return 0


def _metrics_main(ap: argparse.ArgumentParser, args: argparse.Namespace) -> int:
    try:
        rows = read_http_csv(args.csv, args.group)
    except (OSError, ValueError) as exc:
        ap.error(str(exc))
    print(json.dumps(_json_safe(http_metrics(rows))))
    return 0


def main(argv: Optional[Sequence[str]] = None) -> int:
    """Entry point of ``python -m synctcp_testbed.traffic.http``."""
    args = _build_parser().parse_args(argv)
    if args.command == "server":
        return _server_main(args.parser, args)
    if args.command == "client":
        return _client_main(args.parser, args)
    return _metrics_main(args.parser, args)


if __name__ == "__main__":
    sys.exit(main())
