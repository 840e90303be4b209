"""Holl: a GEO satellite link with voice calls."""

from __future__ import annotations

from pathlib import Path
from typing import Any, Callable, Dict

from ..stats import paired
from ..stats import text as txt
from .cases import add_check, all_cases, below, by_seed, over_seeds, scenario_of, within
from .markdown import table
from .model import PAPER_NAME, Section

#: Holl's figures (Ch. 4-5): per bulk flow 18-20 kbit/s without calls, 5357 bit/s at 17
#: calls on drop-tail, 4000 with RED (-25%); New Reno's CBR loss 27% (drop-tail), 17% (RED)
HOLL_NO_CALLS_KBIT = (18.0, 20.0)
HOLL_17_KBIT = 5.357
HOLL_CBR_LOSS = 27.0
#: the most calls Holl ran (the 5357 bit/s and 27% above are at this many)
HOLL_CALLS = 17


def holl(sec: Section, figs: Path) -> None:
    cases = all_cases(sec.runs)
    order = ("reno", "cubic", "sync", "mixreact")
    calls = sorted({int((c.get("point") or {}).get("cbr_calls", 0)) for c in cases})

    def sel(aqm: str, n: int) -> Callable[[Dict[str, Any]], bool]:
        return lambda c: c.get("aqm") == aqm and int((c.get("point") or {}).get("cbr_calls", 0)) == n

    rows = []
    for n in calls:
        for aqm in ("droptail", "red"):
            for cc in order:
                r = by_seed(cases, cc, sel(aqm, n))
                if r:
                    rows.append([str(n), aqm, cc, str(len(r)), txt(over_seeds(r, "flow_mean_kbit")),
                                 txt(over_seeds(r, "flow_sd_kbit")),
                                 txt(over_seeds(r, "cbr_loss_pct"), 1),
                                 txt(over_seeds(r, "lr.utilization"), 1, 100)])
    sec.ours = table(["calls", "queue", "algorithm", "seeds", "bulk flow mean kbit/s",
                       "bulk flows' std dev kbit/s", "CBR loss %", "utilization %"], rows)
    lo, hi = HOLL_NO_CALLS_KBIT
    reno0 = by_seed(cases, "reno", sel("droptail", 0))
    if reno0:
        e = over_seeds(reno0, "flow_mean_kbit")
        add_check(sec, f"Reno, no calls, drop-tail: {lo:g}-{hi:g} kbit/s per bulk flow (±15%, "
                  "all of the interval)", within(e, lo * 0.85, hi * 1.15), f"{txt(e)} kbit/s",
                  reno0, algo="TCP Reno")
    top = max(calls) if calls else 0
    reno_t = by_seed(cases, "reno", sel("droptail", top))
    if top < HOLL_CALLS or not reno_t:
        for rule, algo in ((f"Reno, {HOLL_CALLS} calls, drop-tail: per-flow goodput and CBR loss",
                            "TCP Reno"),
                           (f"Reno, {HOLL_CALLS} calls: RED's cost to the bulk flows and its "
                            "CBR loss", "RED (Reno)")):
            add_check(sec, rule, None, f"no Reno case with {HOLL_CALLS} calls on drop-tail",
                      algo=algo)
    else:
        e = over_seeds(reno_t, "flow_mean_kbit")
        add_check(sec, f"Reno, {top} calls, drop-tail: {HOLL_17_KBIT:g} kbit/s per bulk flow "
                  "(±25%, all of the interval)",
                  within(e, 0.75 * HOLL_17_KBIT, 1.25 * HOLL_17_KBIT), f"{txt(e)} kbit/s",
                  reno_t, algo="TCP Reno")
        loss = over_seeds(reno_t, "cbr_loss_pct")
        add_check(sec, f"Reno, {top} calls, drop-tail: CBR loss {HOLL_CBR_LOSS:g}% (±10 points, "
                  "all of the interval)", within(loss, HOLL_CBR_LOSS - 10, HOLL_CBR_LOSS + 10),
                  f"{txt(loss, 1)}%", reno_t, algo="TCP Reno")
        red_t = by_seed(cases, "reno", sel("red", top))
        if red_t:
            d = paired(red_t, reno_t, "flow_mean_kbit", "diff")
            add_check(sec, f"Reno, {top} calls: RED gives the bulk flows less than drop-tail "
                      "(paper -25%)", below(d, 0.0), f"RED - drop-tail {txt(d)} kbit/s",
                      red_t, reno_t, algo="RED (Reno)")
            dl = paired(red_t, reno_t, "cbr_loss_pct", "diff")
            add_check(sec, f"Reno, {top} calls: RED loses fewer CBR packets than drop-tail "
                      "(paper 17% vs 27%)", below(dl, 0.0), f"RED - drop-tail {txt(dl, 1)} points",
                      red_t, reno_t, algo="RED (Reno)")
    red0 = by_seed(cases, "reno", sel("red", 0))
    if reno0 and red0:
        d = paired(red0, reno0, "flow_sd_kbit", "diff")
        add_check(sec, "Reno, no calls: RED spreads the bulk flows' goodput less (std dev across "
                  "flows, paper -3 kbit/s)", below(d, 0.0), f"RED - drop-tail {txt(d)} kbit/s",
                  red0, reno0, algo="RED (Reno)")
    sec.notes.append("Differences of the setup: " + _calls(sec) + ", where Holl's calls ran "
                     "both ways between their own nodes (5 ms access); the links count "
                     + _counts(sec) + ".")
    queues = {aqm: over_seeds(by_seed(cases, "reno", sel(aqm, top)), "lr.mean_pkts")
              for aqm in ("droptail", "red")}
    limits = [f"{v:g}" for v in scenario_of(sec.runs, "topology", "queue_pkts") if v]
    held = (f" At {top} calls Reno's RED queue held {txt(queues['red'], 1)} packets on average, "
            f"the drop-tail one {txt(queues['droptail'], 1)} (its limit is "
            f"{' or '.join(limits) or '?'})." if top and all(queues.values()) else "")
    mtu_values = [float(v) for v in scenario_of(sec.runs, "topology", "mtu") if v]
    mtus = " or ".join(f"{v:g}" for v in mtu_values) or "?"
    sizes = [int(c["pkt_bytes"]) + IP_UDP_HEADER for c in scenario_of(sec.runs, "traffic", "cbr")
             if isinstance(c, dict) and c.get("pkt_bytes")]
    weighs = (f"a call's {sizes[0]}-byte packet weighs {sizes[0] / mtu_values[0]:.2f} of a bulk "
              "packet" if len(sizes) == 1 and len(mtu_values) == 1
              else "a call's packet weighs less than a bulk packet")
    sec.notes.append("Linux's RED is not ns-2's: it measures the queue in bytes (the thresholds "
                     f"are packets x {mtus} B), so {weighs}, where ns-2's RED counts packets; "
                     "and it has no gentle mode: "
                     "above max_th it drops every arrival, where Holl's gentle RED (Eq. 4.1) "
                     "ramps up to 2 x max_th." + held)
    for cc in ("cubic", "sync", "mixreact"):
        r = by_seed(cases, cc, sel("droptail", 0))
        if r and reno0:
            q = paired(r, reno0, "flow_mean_kbit")
            add_check(sec, f"{cc}, no calls, drop-tail: per-flow goodput like Reno's (ratio "
                      "0.85-1.15, all of the paired interval; \"the TCP variants performed "
                      "similarly\")", within(q, 0.85, 1.15), f"÷ Reno {txt(q)}", r, reno0,
                      algo=PAPER_NAME.get(cc, cc))


#: bytes of IP and UDP header around a call's payload
IP_UDP_HEADER = 28


def _calls(sec: Section) -> str:
    """What a call is in the runs (scenario key traffic.cbr)."""
    out = []
    for cbr in scenario_of(sec.runs, "traffic", "cbr"):
        if not isinstance(cbr, dict) or not cbr.get("pkt_bytes") or not cbr.get("rate_kbit"):
            continue
        size = int(cbr["pkt_bytes"])
        every = size * 8 / float(cbr["rate_kbit"])
        out.append(f"a call here is one forward CBR flow ({size + IP_UDP_HEADER}-byte IP packets "
                   f"every {every:g} ms) on bulk pair 1..N")
    return "; ".join(out) or "a call here is one forward CBR flow on bulk pair 1..N"


def _counts(sec: Section) -> str:
    values = [v for v in scenario_of(sec.runs, "topology", "rate_counts") if v]
    if values == ["ip"]:
        return "IP bytes (`rate_counts = \"ip\"`), as ns-2's do"
    return "frames" if not values or values == ["frame"] else " or ".join(values)
