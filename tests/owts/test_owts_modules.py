"""tcp_sync and tcp_mixreact take their OTT from the option in the patched kernel.

The modules are built against the patched kernel (make -C tcp_option
modules; SYNCTCP_OWTS_KMOD names the directory).  A bulk flow from A to B
crosses a netem queue (8 Mbit/s, 60 packets, 20 ms): its sender's module
reports through inet_diag which OTT source it chose.  With the option the
minimum OTT is the real one-way delay (about 20 ms); from RFC 7323
timestamps it would carry an arbitrary offset.
"""

from __future__ import annotations

import json
import socket
import time
from pathlib import Path
from typing import Any, Dict, Iterator, List

import pytest

from conftest import FWD_MS, KMOD, Pair, sink, set_owts
from synctcp.diag import list_sockets, open_diag_socket
from synctcp.modctl import module_of
from synctcp_testbed.network.netns import in_netns, sh

TCP_CONGESTION = getattr(socket, "TCP_CONGESTION", 13)
#: the modules that take an OTT (etcp does not)
OTT_MODULES = [module_of("sync"), module_of("mixreact")]
PORT = 5351


def loaded(name: str) -> bool:
    return any(ln.split()[0] == name for ln in Path("/proc/modules").read_text().splitlines())


@pytest.fixture(scope="module")
def modules() -> Iterator[None]:
    for m in OTT_MODULES:
        if loaded(m):
            sh(["rmmod", m])
        ko = KMOD / f"{m}.ko"
        assert ko.exists(), f"{ko} missing: make -C tcp_option modules"
        sh(["insmod", str(ko)])
    yield
    for m in OTT_MODULES:
        sh(["rmmod", m], check=False)


@pytest.fixture
def queue(pair: Pair) -> Iterator[Pair]:
    """A bottleneck on A's egress for the duration of one test."""
    sh(["tc", "qdisc", "replace", "dev", pair.a_dev, "root", "netem", "delay", f"{FWD_MS}ms",
        "rate", "8mbit", "limit", "60"], ns=pair.a)
    yield pair
    sh(["tc", "qdisc", "replace", "dev", pair.a_dev, "root", "netem", "delay", f"{FWD_MS}ms",
        "limit", "100000"], ns=pair.a)


def bulk(pair: Pair, cc: str, port: int, seconds: float) -> List[Dict[str, Any]]:
    """Send for ``seconds`` with ``cc``; the sender's module records, every 0.25 s."""
    srv = sink(pair, port)
    with in_netns(pair.a):
        cs = socket.socket()
        ds = open_diag_socket()
    records: List[Dict[str, Any]] = []

    def poll() -> None:
        # from this thread: a pyroute2 socket belongs to the thread that made it
        for st in list_sockets(cc=[cc], ds=ds, families=(socket.AF_INET,)):
            if st.dport == port and st.synctcp:
                records.append(st.synctcp)

    with cs:
        cs.setsockopt(socket.IPPROTO_TCP, TCP_CONGESTION, cc.encode())
        cs.settimeout(20)
        cs.connect((pair.b_ip, port))
        data = b"y" * (1 << 14)
        end = time.monotonic() + seconds
        next_poll = time.monotonic() + 0.25
        for _ in range(1_000_000):
            now = time.monotonic()
            if now >= end:
                break
            cs.sendall(data)
            if now >= next_poll:
                poll()
                next_poll = now + 0.25
        poll()
        cs.shutdown(socket.SHUT_WR)
    ds.close()
    srv.finish()
    return records


def last(records: List[Dict[str, Any]]) -> Dict[str, Any]:
    assert records, "no telemetry from the module"
    return records[-1]


@pytest.mark.parametrize("cc", ["sync", "mixreact"])
def test_module_uses_the_option(modules: None, queue: Pair, results_dir: Path, cc: str) -> None:
    set_owts(queue.a, True)
    set_owts(queue.b, True)
    try:
        recs = bulk(queue, cc, PORT + (cc == "mixreact"), seconds=8.0)
    finally:
        set_owts(queue.a, False)
        set_owts(queue.b, False)
    (results_dir / f"owts-{cc}-telemetry.json").write_text(json.dumps(recs) + "\n")
    r = last(recs)
    assert r["source"] == "option", r
    if cc == "sync":
        # The option's OTT is absolute: its minimum is the path's one-way delay.
        assert FWD_MS * 1000 <= r["min_ott_us"] <= FWD_MS * 1000 + 5000, r
        assert max(x["max_qdelay_us"] for x in recs) > 1000, "no queuing delay seen"
    else:
        assert max(x["max_qdelay_us"] for x in recs) > 1000, "no queuing delay seen"
        assert any(x["qdelay_avg_us"] > 0 for x in recs)


def test_timestamps_when_the_option_is_off(modules: None, queue: Pair) -> None:
    r = last(bulk(queue, "sync", PORT + 2, seconds=3.0))
    assert r["source"] == "ts", r


def test_source_parameter_forces_timestamps(modules: None, queue: Pair) -> None:
    param = Path("/sys/module/tcp_sync/parameters/source")
    param.write_text("ts")
    set_owts(queue.a, True)
    set_owts(queue.b, True)
    try:
        r = last(bulk(queue, "sync", PORT + 3, seconds=3.0))
    finally:
        param.write_text("auto")
        set_owts(queue.a, False)
        set_owts(queue.b, False)
    assert r["source"] == "ts", r
    assert param.read_text().strip() == "auto"
