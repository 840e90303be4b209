"""The workload's model: request and response sizes, load calibration, arrivals.

Sizes follow an empirical body with a truncated Pareto tail
(:class:`SizeDistribution`); the arrival rate offers a given % of the
bottleneck (:func:`calibrate`); inter-arrivals are Weibull with PackMime's
shape for the rate (:func:`packmime_arrival_shape`).  :func:`plan` draws
the connections from two RNGs seeded from the client's seed, so the k-th
connection has the same sizes at every load and in every run.
"""

from __future__ import annotations

import bisect
import math
import random
from dataclasses import dataclass
from functools import cached_property
from typing import Iterator, List, NamedTuple, Optional, Set, Tuple, Union

from .wire import SERVER_BODY_CAP, SERVER_REQUEST_CAP, response_head

#: data bytes per segment in the dissertation
SEGMENT_BYTES = 1420

Number = Union[int, float]


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
