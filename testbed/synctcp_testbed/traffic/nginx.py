"""nginx as the HTTP workload's server: its configuration and the files it serves.

The PackMime client (:mod:`.http.client`) asks for ``GET /N`` and expects N bytes
of body.  nginx serves static files, so the server's document root holds a
file named N of N bytes for every response size the client will ask for:
sparse files (``truncate``), which cost neither disk nor memory on tmpfs.
The sizes are the client's own plan (:func:`synctcp_testbed.traffic.http.model.response_sizes`),
so no request can miss.  The kernel tests (``tests/kernel``) use the same
configuration for their nginx load test.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Iterable

CONF = """\
user root;
worker_processes 1;
worker_rlimit_nofile {nofile};
pid {tmp}/nginx.pid;
error_log {tmp}/error.log warn;
events {{ worker_connections {connections}; }}
http {{
    access_log off;
    client_body_temp_path {tmp}/body;
    proxy_temp_path {tmp}/proxy;
    fastcgi_temp_path {tmp}/fastcgi;
    uwsgi_temp_path {tmp}/uwsgi;
    scgi_temp_path {tmp}/scgi;
    server {{
        listen {addr}:{port} backlog={connections};
        root {tmp}/www;
    }}
}}
"""


def conf(tmp: Path, addr: str, connections: int, port: int = 8080) -> str:
    """An nginx configuration serving ``tmp/www`` on ``addr:port`` with
    everything of its own under ``tmp``.  Its worker runs as root (the
    directories may be private to root)."""
    return CONF.format(tmp=tmp, addr=addr, port=port, connections=connections,
                       nofile=2 * connections)


def make_www(www: Path, sizes: Iterable[int]) -> int:
    """Files ``www/N`` of N bytes (sparse) for each size N; how many were made."""
    www.mkdir(parents=True, exist_ok=True)
    n = 0
    for size in set(sizes):
        if size < 0:
            raise ValueError(f"a response of {size} bytes")
        fd = os.open(www / str(size), os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644)
        try:
            os.ftruncate(fd, size)
        finally:
            os.close(fd)
        n += 1
    return n
