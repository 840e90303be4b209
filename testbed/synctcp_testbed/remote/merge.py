"""The files of several hosts on one clock: flowgen's two sides merged into one result,
and the samples of each host (queue CSVs, HTTP responses, telemetry lines) moved onto the
reference host's CLOCK_MONOTONIC (:class:`.case.HostCase` computes each host's shift from
its realtime/monotonic pair)."""

from __future__ import annotations

import json
from typing import Any, Dict, List


def merge_flowgen(sides: List[Dict[str, Any]], ref_real: float, ref_mono: float
                  ) -> Dict[str, Any]:
    """One flowgen result from the send and receive sides of several hosts.

    Every time is put on the reference's clock (the first sender host's go):
    a side whose go was ``g`` (CLOCK_REALTIME) has its times moved by
    ``g - ref_real``.  A flow takes its sender's start, stop, algorithm,
    tcp_info and retransmissions, and its receiver's intervals, bytes and
    end (and a CBR flow its loss).
    """
    flows: Dict[str, Dict[str, Any]] = {}
    order: List[str] = []
    interval = sides[0]["interval_s"] if sides else 1.0
    stopped = None
    for doc in sides:
        shift = float(doc["go_realtime"]) - ref_real
        stopped = stopped or doc.get("stopped")
        for f in doc["flows"]:
            cur = flows.setdefault(f["id"], {})
            if f["id"] not in order:
                order.append(f["id"])
            mv = (lambda t: None if t is None else t + shift)  # noqa: E731
            if doc.get("side") == "send":
                for k in ("kind", "port", "cport", "cc_requested", "cc", "start_s", "seconds",
                          "bytes_sent", "retransmits", "tcp_info", "rate_bps", "pkt_bytes",
                          "traffic"):
                    if k in f:
                        cur[k] = f[k]
                for k in ("started", "connected", "stopped"):
                    cur[k] = mv(f.get(k))
                cur["retrans"] = [[t + shift, n] for t, n in f.get("retrans", [])]
                if f.get("error"):
                    cur["error"] = f"sender: {f['error']}"
            else:
                for k in ("kind", "port", "cport", "bytes_received", "packets_sent",
                          "packets_received", "out_of_order", "lost_pct"):
                    if k in f:
                        cur[k] = f[k]
                cur.setdefault("start_s", f.get("start_s"))
                cur.setdefault("seconds", f.get("seconds"))
                cur["recv_end"] = mv(f.get("recv_end"))
                cur["intervals"] = [[a + shift, b + shift, n] for a, b, n in f["intervals"]]
                if f.get("error") and not cur.get("error"):
                    cur["error"] = f"receiver: {f['error']}"
    out = []
    for fid in order:
        f = flows[fid]
        f.setdefault("error", None)
        f.setdefault("intervals", [])
        f.setdefault("bytes_received", 0)
        f.setdefault("retrans", [])
        for k in ("started", "stopped", "recv_end"):
            f.setdefault(k, None)
        out.append({"id": fid, **f})
    return {"flowgen": 1, "interval_s": interval, "go_monotonic": ref_mono,
            "go_realtime": ref_real, "times": "seconds from go", "stopped": stopped,
            "merged_from": [d.get("host") for d in sides], "flows": out}


def rebase_csv(text: str, shift: float, columns: int = 1) -> str:
    """A CSV whose first ``columns`` fields are times, each moved by ``shift`` seconds
    (another host's clock): queue-LINK.csv (``t``), an HTTP client's responses
    (``t_start``, ``t_end``: ``columns=2``)."""
    lines = text.splitlines()
    if not lines or shift == 0:
        return text
    out = [lines[0]]
    for ln in lines[1:]:
        f = ln.split(",")
        try:
            for i in range(min(columns, len(f) - 1)):
                f[i] = f"{float(f[i]) + shift:.6f}"
        except ValueError:
            pass
        out.append(",".join(f))
    return "\n".join(out) + "\n"


def rebase_queue_csv(text: str, shift: float) -> str:
    """queue-LINK.csv with every ``t`` moved by ``shift`` seconds."""
    return rebase_csv(text, shift)


def rebase_http_csv(text: str, shift: float) -> str:
    """An HTTP client's responses (t_start, t_end first) moved by ``shift`` seconds."""
    return rebase_csv(text, shift, columns=2)


def rebase_jsonl(text: str, shift: float) -> str:
    if shift == 0:
        return text
    out = []
    for ln in text.splitlines():
        obj = json.loads(ln)
        obj["t"] = obj["t"] + shift
        out.append(json.dumps(obj))
    return "\n".join(out) + ("\n" if out else "")
