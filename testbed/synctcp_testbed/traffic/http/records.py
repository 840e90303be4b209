"""One row per response: what the load generator writes (``http-CLIENT.csv``,
merged into the case's ``http.csv``) and the run directory's reader returns
(:func:`synctcp_testbed.analysis.rundir.read_http_csv`)."""

from __future__ import annotations

from dataclasses import dataclass

#: the columns of http.csv, in order
CSV_FIELDS = ("t_start", "t_end", "req_bytes", "resp_bytes", "rcvd_bytes", "ok", "flow_group")


@dataclass(frozen=True)
class HttpRow:
    """One request/response pair: connect and last byte (CLOCK_MONOTONIC s), sizes, success."""

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
