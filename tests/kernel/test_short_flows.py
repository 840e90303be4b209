"""Short flows (issue 17, item 3): a real web server and client, nginx
serving one file and ab fetching it, one connection per request, through
10 Mbit/s, 40 ms and a 60-packet drop-tail queue, with the algorithm as the
server's default (the sender of the responses).

Before issue 17 the RFC 7323 sampler gave its first OTT sample after a
second of clock-rate estimation, so a connection this short never had one;
now it has one from its first data ACK, and starts from the full-queue
delay an earlier connection to the client learnt (glue/pathcache.c,
core/pathtab.c).

Every measurement builds its own dumbbell (new namespaces: no tcp_metrics
entry, no destination-cache entry of an earlier one) after the module was
loaded fresh, and each comparison measures both of its algorithms itself:
its figures do not depend on which tests ran before (issue 33).

- 20 kB, 3000 requests, 32 at once, with reno, cubic and sync: every
  request completes (the figures are printed, not compared: sync's median
  is within a few percent of Reno's, a benchmark figure, docs/ott.md).
- 100 kB, 1000 requests, 16 at once: sync's median response time is below
  Reno's by more than the spread of the figures between runs
  (:data:`MEDIAN_BOUND`).

The figures go to results/kernel-tests/short_flows.json.  It runs on
simulated time (UML).  Most drops come from the initial windows (32 x 10
segments into 60 packets), before any ACK: docs/ott.md.
"""

from __future__ import annotations

import json
import re
import subprocess
import time
from pathlib import Path
from contextlib import contextmanager
from typing import Any, Dict, Iterator, Tuple

import pytest

from conftest import RESULTS, is_loaded, load, nginx_conf
from synctcp_testbed.platform.choose import inside_instance
from synctcp_testbed.network.qdisc import QueueSpec
from synctcp.diag import list_sockets
from synctcp_testbed.network.netns import in_netns
from synctcp_testbed.network.topology import Topology, dumbbell

pytestmark = pytest.mark.module("tcp_sync")

#: (response bytes, requests, concurrency) of each workload
SMALL = (20_000, 3000, 32)
LARGE = (100_000, 1000, 16)
#: sync's median response time for LARGE at most this share of Reno's.  Measured
#: on UML 7.2 (this file's code and versions of it that differed in the test code
#: only), each on fresh namespaces, in different orders, alone and after the SMALL
#: runs: Reno 1036-1116 ms (7 runs, mean 1080, sd 2.6%), sync 879-927 ms (7 runs,
#: mean 898, sd 1.9%); the test's own pairs gave 0.840, 0.849 and 0.878, the worst
#: pairing of any sync run with any Reno run 927 / 1036 = 0.895.  The bound is 0.045
#: above that worst pairing, four standard deviations of the ratio above its mean
#: (0.831): the effect, about -17%, is several times the spread of either figure.
#: In an instance of its own (make kernel-test, scripts/own-instances; issue 33)
#: the figures repeat exactly: 844 / 1075 ms = 0.785 on UML 7.2.
MEDIAN_BOUND = 0.94
FIGURES: Dict[str, Dict[str, Any]] = {}


@pytest.fixture(scope="module")
def uml_only() -> None:
    if inside_instance() != "uml":
        pytest.skip("response times are compared on simulated time (UML: make kernel-test)")


@contextmanager
def dumbbell_path(tag: str) -> Iterator[Topology]:
    """A fresh 10 Mbit/s, 40 ms, 60-packet dumbbell: namespaces of its own."""
    topo = dumbbell([40], rate_mbit=10, queue=QueueSpec("droptail", 60), prefix=f"f{tag}")
    try:
        topo.build()
        yield topo
    finally:
        topo.teardown()


def drops(topo: Topology) -> Dict[str, int]:
    """Packets sent and dropped so far by the bottleneck's qdiscs in the
    responses' direction, r -> l (``lr-rev``)."""
    ns, dev = next((ns, dev) for label, ns, dev, _ in topo.sample_points() if label == "lr-rev")
    out = subprocess.run(["tc", "-n", ns, "-s", "-j", "qdisc", "show", "dev", dev],
                         capture_output=True, text=True, check=True).stdout
    sent = dropped = 0
    for q in json.loads(out):
        sent += q.get("packets", 0)
        dropped += q.get("drops", 0)
    return {"sent": sent, "dropped": dropped}


def closing_sockets(topo: Topology, cc: str, timeout: float) -> int:
    """Wait up to ``timeout`` s for the server's ``cc`` sockets to be gone;
    return how many are left."""
    deadline = time.monotonic() + timeout
    for _ in range(int(timeout) + 1):
        with in_netns(topo.ns("r1")):
            n = len(list_sockets(cc=[cc]))
        if not n or time.monotonic() > deadline:
            return n
        time.sleep(1)
    return n


def serve_and_fetch(topo: Topology, cc: str, tmp: Path, workload: Tuple[int, int, int]
                    ) -> Dict[str, Any]:
    size, requests, concurrency = workload
    subprocess.run(["ip", "netns", "exec", topo.ns("r1"), "sysctl", "-qw",
                    f"net.ipv4.tcp_congestion_control={cc}"], check=True)
    (tmp / "www").mkdir()
    (tmp / "www" / "f").write_bytes(b"x" * size)
    (tmp / "nginx.conf").write_text(nginx_conf(tmp, topo.addr("r1"), 1024))
    before = drops(topo)
    nginx = subprocess.Popen(["ip", "netns", "exec", topo.ns("r1"), "nginx", "-c",
                              str(tmp / "nginx.conf"), "-g", "daemon off;"],
                             stderr=subprocess.PIPE, text=True)
    try:
        time.sleep(1)
        assert nginx.poll() is None, nginx.stderr.read() if nginx.stderr else ""
        ab = subprocess.run(["ip", "netns", "exec", topo.ns("s1"), "ab", "-q", "-r", "-s", "30",
                             "-n", str(requests), "-c", str(concurrency),
                             f"http://{topo.addr('r1')}:8080/f"],
                            capture_output=True, text=True, timeout=3600)
    finally:
        nginx.terminate()
        nginx.wait(timeout=30)
        subprocess.run(["ip", "netns", "exec", topo.ns("r1"), "sysctl", "-qw",
                        "net.ipv4.tcp_congestion_control=cubic"], check=False)
    # the server's closing sockets (FIN states) hold the module: the next
    # test (the load test's rmmod) needs them gone
    left = closing_sockets(topo, cc, timeout=120)
    assert not left, f"{left} {cc} sockets still open 120 s after the server stopped"
    after = drops(topo)
    out = ab.stdout
    assert ab.returncode == 0, ab.stderr
    done = int(re.search(r"Complete requests:\s+(\d+)", out).group(1))  # type: ignore[union-attr]
    failed = int(re.search(r"Failed requests:\s+(\d+)", out).group(1))  # type: ignore[union-attr]
    assert done == requests and failed == 0 and "Non-2xx responses" not in out, out
    pct = {int(p): int(ms) for p, ms in re.findall(r"^\s+(\d+)%\s+(\d+)", out, re.M)}
    sent = after["sent"] - before["sent"]
    dropped = after["dropped"] - before["dropped"]
    return {"median_ms": pct[50], "p90_ms": pct[90], "p99_ms": pct[99],
            "drop_pct": round(100 * dropped / max(1, sent + dropped), 1)}


def measure(cc: str, tmp: Path, workload: Tuple[int, int, int]) -> Dict[str, Any]:
    """One algorithm's figures for ``workload`` on a dumbbell of its own."""
    if cc == "sync" and not is_loaded("tcp_sync"):
        load("tcp_sync")
    allowed = Path("/proc/sys/net/ipv4/tcp_allowed_congestion_control")
    old = allowed.read_text().split()
    allowed.write_text(" ".join(sorted(set(old) | {"reno", "cubic", "sync"})) + "\n")
    tmp.mkdir(parents=True, exist_ok=True)
    try:
        with dumbbell_path(cc[0] + ("s" if workload is SMALL else "l")) as topo:
            fig = serve_and_fetch(topo, cc, tmp, workload)
    finally:
        allowed.write_text(" ".join(old) + "\n")
    key = f"{workload[0] // 1000}kB-{cc}"
    FIGURES.setdefault(key, fig)
    RESULTS.mkdir(parents=True, exist_ok=True)
    (RESULTS / "short_flows.json").write_text(json.dumps(FIGURES, indent=2))
    print(f"{key}: {fig}")
    return fig


@pytest.mark.parametrize("cc", ["reno", "cubic", "sync"])
def test_every_short_response_completes(module_loaded: str, uml_only: None, cc: str,
                                        tmp_path: Path) -> None:
    """20 kB responses, 32 at once: every request completes (serve_and_fetch asserts
    it, and that the server's sockets close)."""
    measure(cc, tmp_path, SMALL)


@pytest.mark.figures
def test_sync_answers_100kb_faster_than_reno(module_loaded: str, uml_only: None,
                                             tmp_path: Path) -> None:
    """100 kB responses, 16 at once: sync's median response time at most
    MEDIAN_BOUND of Reno's, both measured here on fresh namespaces."""
    reno = measure("reno", tmp_path / "reno", LARGE)
    sync = measure("sync", tmp_path / "sync", LARGE)
    ratio = sync["median_ms"] / reno["median_ms"]
    print(f"FIGURES 100 kB: sync's median {sync['median_ms']} ms / Reno's {reno['median_ms']} ms "
          f"= {ratio:.3f} (bound {MEDIAN_BOUND})")
    assert ratio <= MEDIAN_BOUND, (reno, sync)
