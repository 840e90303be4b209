"""``iperf3 -C ALG``: the traffic of a case on hosts without a C compiler (or with
``traffic = "iperf3"`` in the hosts file), in place of flowgen.

Each bulk flow is one ``iperf3 -s -1 -J`` on its receiver host (the flow's port,
bound to the host's data address) and one client on its sender host, started
by a wrapper (:func:`client_script`) that waits for the case's go, sleeps the
flow's start offset, runs ``iperf3 -c ... -C ALG -t SECONDS -i 1 -J
--get-server-output`` and records the host's CLOCK_REALTIME and
CLOCK_MONOTONIC at the go and when iperf3 exits.  :func:`side_docs` turns the
client's JSON (which carries the server's, the receiver's intervals) into the
two flowgen result documents (``--side send`` and ``--side recv``) that
:func:`.case.merge_flowgen` merges for every run on hosts, so that the case
directory is the same as with flowgen and ``report``/``ledger`` read it
unchanged.

What differs from flowgen, and is said in the flow's ``traffic`` note:

* iperf3 gives its intervals from its own test start, not on a clock.  The
  test ends when the client's last interval ends, and the client exits after
  the results are exchanged, about one round trip later: the intervals are
  placed so that the test ended one base round trip before the exit.  Their
  placement is off by a round trip or so, against flowgen's microseconds;
  the measured window keeps the intervals wholly inside it, so the goodput of
  a flow that runs through the window is unchanged by it.
* Bulk flows only: a CBR flow needs flowgen.
* The sender's retransmissions are iperf3's per interval (flowgen samples
  them every interval too).
* The client's port is the kernel's choice, not the plan's: iperf3 binds
  ``--cport`` without SO_REUSEADDR, so a case within a minute of one with
  the same port (its connection in TIME_WAIT) would fail.  The port in the
  document (``start.connected``) replaces the plan's, so the telemetry is
  matched to the flow as with flowgen.
"""

from __future__ import annotations

import json
import shlex
from typing import Any, Dict, List, Optional, Tuple

from ..plan.flows import Flow

#: a wrapper's clock reading: "REALTIME MONOTONIC" on one line
CLOCKS = "python3 -c 'import time; print(repr(time.time()), repr(time.monotonic()))'"
#: the file each side of a host's iperf3 flows waits for before it starts
GO_FILE = "go-send"


class IperfError(ValueError):
    """An iperf3 result that cannot be read (one line)."""


def client_job(fid: str) -> str:
    return f"iperf3-c-{fid}"


def server_job(fid: str) -> str:
    return f"iperf3-s-{fid}"


def server_argv(flow: Flow) -> List[Any]:
    """One test on the flow's port at the receiver's data address, then exit; ``-J``: the
    client's ``--get-server-output`` then carries the server's intervals as JSON (without
    it, as text)."""
    return ["iperf3", "-s", "-1", "-J", "-B", flow.dst_addr, "-p", flow.port]


def client_script(flow: Flow, seconds: float) -> str:
    """The sender's wrapper: ready, wait for the go, the start offset, iperf3, the clocks."""
    fid = flow.id
    # no --cport: iperf3 binds it without SO_REUSEADDR, so the same client port within a
    # minute of the last case (its connection in TIME_WAIT) fails; the port the kernel
    # chose is read back from the document (flow_sides)
    args = ["iperf3", "-c", flow.dst_addr, "-B", flow.src_addr,
            "-p", flow.port, "-C", flow.cc, "-t", f"{max(1, round(seconds))}", "-i", "1",
            "-J", "--get-server-output"]
    cmd = " ".join(shlex.quote(str(a)) for a in args)
    return (f"echo ready\n"
            f"while [ ! -e {GO_FILE} ]; do sleep 0.01; done\n"
            f"{CLOCKS} > {fid}.go\n"
            f"sleep {flow.start_s:g}\n"
            f"{cmd} > {fid}.iperf3.json\n"
            f"rc=$?\n"
            f"{CLOCKS} > {fid}.exit\n"
            f"exit $rc\n")


def read_clocks(text: str) -> Tuple[float, float]:
    """(realtime, monotonic) of a wrapper's clock file."""
    try:
        real, mono = text.split()
        return float(real), float(mono)
    except ValueError:
        raise IperfError(f"not a clock reading: {text.strip()[:60]!r}") from None


def _intervals(doc: Dict[str, Any], what: str) -> List[Tuple[float, float, int]]:
    try:
        return [(float(iv["sum"]["start"]), float(iv["sum"]["end"]), int(iv["sum"]["bytes"]))
                for iv in doc.get("intervals", [])]
    except (KeyError, TypeError, ValueError) as exc:
        raise IperfError(f"iperf3 {what} intervals: {exc}") from None


def flow_sides(flow: Flow, seconds: float, client: Optional[str], go: Tuple[float, float],
               exit_: Optional[Tuple[float, float]], rtt_s: float, ref_real: float
               ) -> Tuple[Dict[str, Any], Dict[str, Any]]:
    """The flow as flowgen's send side and recv side would report it, times in seconds
    from ``ref_real`` (the host's go, CLOCK_REALTIME).  A failed iperf3 (no JSON, or its
    ``error``) is the flow's error on both sides, never empty figures."""
    base: Dict[str, Any] = {"id": flow.id, "kind": "bulk", "port": flow.port,
                            "cport": flow.cport, "start_s": flow.start_s, "seconds": seconds}
    started = go[0] + flow.start_s - ref_real
    send: Dict[str, Any] = {**base, "cc_requested": flow.cc, "cc": None, "started": started,
                            "connected": None, "stopped": None, "bytes_sent": 0,
                            "retransmits": None, "retrans": [], "tcp_info": None,
                            "error": None, "traffic": "iperf3"}
    recv: Dict[str, Any] = {**base, "intervals": [], "bytes_received": 0, "recv_end": None,
                            "error": None}
    try:
        doc = json.loads(client or "")
    except ValueError:
        doc = {"error": "iperf3 wrote no result"}
    if not isinstance(doc, dict) or doc.get("error") or exit_ is None:
        why = (doc.get("error") if isinstance(doc, dict) else None) or "iperf3 did not finish"
        send["error"] = recv["error"] = f"iperf3: {why}"
        return send, recv
    try:
        cport = int(doc["start"]["connected"][0]["local_port"])
    except (KeyError, IndexError, TypeError, ValueError):
        send["error"] = recv["error"] = "iperf3: its document names no connection"
        return send, recv
    send["cport"] = recv["cport"] = cport
    sent = _intervals(doc, "client")
    server = doc.get("server_output_json") or {}
    got = _intervals(server, "server")
    if not sent or not got:
        why = ("the server's output came as text (its iperf3 ran without -J)"
               if doc.get("server_output_text") and not server else
               "no intervals from the client" if not sent else "no server output")
        send["error"] = recv["error"] = f"iperf3: {why}"
        return send, recv
    end = exit_[0] - rtt_s - ref_real           # the test ended a round trip before the exit
    t0 = end - sent[-1][1]                       # its start, on the host's clock
    total = doc.get("end", {}).get("sum_sent", {})
    retrans, acc = [], 0
    for iv, raw in zip(sent, doc.get("intervals", [])):
        acc += int(raw["sum"].get("retransmits", 0) or 0)
        retrans.append([t0 + iv[1], acc])
    send.update(cc=doc.get("end", {}).get("sender_tcp_congestion") or flow.cc,
                connected=t0, stopped=end, bytes_sent=int(total.get("bytes", 0)),
                retransmits=int(total.get("retransmits", acc) or 0), retrans=retrans)
    recv.update(intervals=[[t0 + a, t0 + b, n] for a, b, n in got],
                bytes_received=sum(n for _, _, n in got), recv_end=t0 + got[-1][1])
    return send, recv


def side_docs(host_send: str, host_recv: Dict[str, str], flows: List[Flow],
              seconds: Dict[str, float], files: Dict[str, Dict[str, Optional[str]]],
              rtt_s: Dict[str, float]) -> List[Dict[str, Any]]:
    """One sender host's iperf3 flows as flowgen documents: its ``send`` side, and a
    ``recv`` side per receiver host (``host_recv``: flow id -> receiver host), all on the
    sender host's clock (its earliest go).  ``files``: flow id -> ``go``, ``exit``,
    ``json`` (each file's text, None when missing)."""
    gos = {f.id: read_clocks(files[f.id]["go"] or "") for f in flows
           if files[f.id].get("go")}
    if not gos:
        raise IperfError(f"host {host_send}: no iperf3 client saw the go")
    ref_real, ref_mono = min(gos.values())
    sends, recvs = [], {}
    for f in flows:
        go = gos.get(f.id)
        if go is None:
            raise IperfError(f"host {host_send}: flow {f.id}'s iperf3 never saw the go")
        ex = files[f.id].get("exit")
        s, r = flow_sides(f, seconds[f.id], files[f.id].get("json"), go,
                          read_clocks(ex) if ex else None, rtt_s[f.id], ref_real)
        sends.append(s)
        recvs.setdefault(host_recv[f.id], []).append(r)
    head = {"flowgen": 1, "interval_s": 1.0, "go_realtime": ref_real, "go_monotonic": ref_mono,
            "times": "seconds from go", "stopped": None, "tool": "iperf3"}
    out = [{**head, "side": "send", "host": host_send, "flows": sends}]
    out += [{**head, "side": "recv", "host": h, "flows": fl} for h, fl in recvs.items()]
    return out
