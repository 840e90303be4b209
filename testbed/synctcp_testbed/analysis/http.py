"""HTTP response-time metrics of a case, each one function with its definition.

Weigle 2003, §4.1.4: the response time is "the amount of time between a
client sending a HTTP request and receiving the complete HTTP response";
here from the start of the TCP connect to the last byte of the response
(one :class:`~synctcp_testbed.traffic.http.records.HttpRow` per pair).
The dissertation splits responses at 25,560 B (18 segments) and plots CDFs
up to 1500 ms; the summary keeps a logarithmic histogram of the times so
that the seeds of a case can be pooled (the ledger draws their CDF).
"""

from __future__ import annotations

import math
from collections import Counter
from pathlib import Path
from typing import Any, Dict, List, Sequence, Tuple, Union

from ..traffic.http.records import HttpRow
from .metrics import percentile
from .rundir import read_http_csv

#: 18 segments: the "under 25 KB" bin of Weigle's Figs 4.29-4.49
SMALL_RESPONSE_MAX = 25_560


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
            part = "small" if is_small_response(r.resp_bytes) else "large"
            parts[part][rt_bin(r.response_ms)] += 1
    return {key: [[k, n] for k, n in sorted(c.items())] for key, c in parts.items()}


def http_metrics(rows: Union[str, Path, Sequence[HttpRow]]) -> Dict[str, Any]:
    """Response-time summary of an http.csv (a path: :func:`.rundir.read_http_csv`) or
    of its rows, with the response-time histogram (``rt_hist``, :func:`rt_histogram`)."""
    if isinstance(rows, (str, Path)):
        rows = read_http_csv(rows)
    return {"responses": response_count(rows), "errors": error_count(rows),
            "median_ms": median_ms(rows), "p90_ms": p90_ms(rows),
            "small_median_ms": small_median_ms(rows), "large_median_ms": large_median_ms(rows),
            "within_1500ms_pct": within_pct(rows), "rt_hist": rt_histogram(rows)}
