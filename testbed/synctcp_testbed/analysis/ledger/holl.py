"""Holl: a GEO satellite link with voice calls."""

from __future__ import annotations

from pathlib import Path
from typing import Any, Callable, Dict

from ..stats import paired
from ..stats import text as txt
from .cases import all_cases, below, by_seed, over_seeds
from .markdown import table
from .model import Check, Section

#: Holl's figures (Ch. 4-5): per bulk flow 18-20 kbit/s without calls, 5357 bit/s at 17
#: calls on drop-tail, 4000 with RED (-25%); New Reno's CBR loss 27% (drop-tail), 17% (RED)
HOLL_NO_CALLS_KBIT = (18.0, 20.0)
HOLL_17_KBIT = 5.357
HOLL_CBR_LOSS = 27.0


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
        sec.checks.append(Check(f"Reno, no calls, drop-tail: {lo:g}-{hi:g} kbit/s per bulk flow "
                                f"(±15%)", e is not None and lo * 0.85 <= e.mean <= hi * 1.15,
                                f"{txt(e)} kbit/s"))
    top = max(calls) if calls else 0
    reno_t = by_seed(cases, "reno", sel("droptail", top))
    if top < 17 or not reno_t:
        for rule in ("Reno, 17 calls, drop-tail: per-flow goodput and CBR loss",
                     "Reno, 17 calls: RED's cost to the bulk flows and its CBR loss"):
            sec.checks.append(Check(rule, None, "no Reno case with 17 calls on drop-tail"))
    else:
        e = over_seeds(reno_t, "flow_mean_kbit")
        sec.checks.append(Check(f"Reno, {top} calls, drop-tail: {HOLL_17_KBIT:g} kbit/s per bulk "
                                f"flow (±25%)", e is not None
                                and abs(e.mean - HOLL_17_KBIT) <= 0.25 * HOLL_17_KBIT,
                                f"{txt(e)} kbit/s"))
        loss = over_seeds(reno_t, "cbr_loss_pct")
        sec.checks.append(Check(f"Reno, {top} calls, drop-tail: CBR loss {HOLL_CBR_LOSS:g}% "
                                f"(±10 points)", loss is not None
                                and abs(loss.mean - HOLL_CBR_LOSS) <= 10, f"{txt(loss, 1)}%"))
        red_t = by_seed(cases, "reno", sel("red", top))
        if red_t:
            d = paired(red_t, reno_t, "flow_mean_kbit", "diff")
            sec.checks.append(Check(f"Reno, {top} calls: RED gives the bulk flows less than "
                                    f"drop-tail (paper -25%)", below(d, 0.0),
                                    f"RED - drop-tail {txt(d)} kbit/s"))
            dl = paired(red_t, reno_t, "cbr_loss_pct", "diff")
            sec.checks.append(Check(f"Reno, {top} calls: RED loses fewer CBR packets than "
                                    f"drop-tail (paper 17% vs 27%)", below(dl, 0.0),
                                    f"RED - drop-tail {txt(dl, 1)} points"))
    red0 = by_seed(cases, "reno", sel("red", 0))
    if reno0 and red0:
        d = paired(red0, reno0, "flow_sd_kbit", "diff")
        sec.checks.append(Check("Reno, no calls: RED spreads the bulk flows' goodput less "
                                "(std dev across flows, paper -3 kbit/s)", below(d, 0.0),
                                f"RED - drop-tail {txt(d)} kbit/s"))
    sec.notes.append("Differences of the setup: a call here is one forward CBR flow (92-byte IP "
                     "packets every 8 ms) on bulk pair 1..N, where Holl's calls ran both ways "
                     "between their own nodes (5 ms access); the links count IP bytes "
                     "(`rate_counts = \"ip\"`), as ns-2's do.")
    queues = {aqm: over_seeds(by_seed(cases, "reno", sel(aqm, top)), "lr.mean_pkts")
              for aqm in ("droptail", "red")}
    held = (f" At {top} calls Reno's RED queue held {txt(queues['red'], 1)} packets on average, "
            f"the drop-tail one {txt(queues['droptail'], 1)} (its limit is 64)."
            if top and all(queues.values()) else "")
    sec.notes.append("Linux's RED is not ns-2's: it measures the queue in bytes (the thresholds "
                     "are packets x 576 B), so a call's 92-byte packet weighs a sixth of a bulk "
                     "packet, where ns-2's RED counts packets; and it has no gentle mode: above "
                     "max_th it drops every arrival, where Holl's gentle RED (Eq. 4.1) ramps "
                     "up to 2 x max_th." + held)
    for cc in ("cubic", "sync", "mixreact"):
        r = by_seed(cases, cc, sel("droptail", 0))
        if r and reno0:
            q = paired(r, reno0, "flow_mean_kbit")
            sec.checks.append(Check(f"{cc}, no calls, drop-tail: per-flow goodput like Reno's "
                                    f"(ratio 0.85-1.15; \"the TCP variants performed "
                                    f"similarly\")", q is not None and 0.85 <= q.mean <= 1.15,
                                    f"÷ Reno {txt(q)}"))
