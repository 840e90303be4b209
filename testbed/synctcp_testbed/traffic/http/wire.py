"""HTTP/1.0 on the wire: the heads the client sends and the server answers.

A request asks for its response size in its path (``GET /BYTES``) and
carries padding up to its own sampled size as a body announced by a
fixed-width Content-Length; the server answers ``200`` with that many
bytes, or ``400`` to anything else.
"""

from __future__ import annotations

import re
from typing import NamedTuple, Optional, Tuple

SERVER_BODY_CAP = 64 * 2**20    # largest response body the server sends
SERVER_REQUEST_CAP = 8 * 2**20  # largest request body (padding) the server reads
HEAD_LIMIT = 16 * 1024          # largest request or response head (line + headers)
#: bytes read or written at once, and the padding they come from
CHUNK = 64 * 1024
PAD = memoryview(b"x" * CHUNK)


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
