"""Reverse-path congestion: OTT against RTT (Weigle 2003, §3.3; the project's own test)."""

from __future__ import annotations

from pathlib import Path
from typing import Any, Callable, Dict

from ..stats import paired
from ..stats import text as txt
from .cases import above, add_check, all_cases, at_least, by_seed, kept_by_seed, over_seeds
from .markdown import table
from .model import PAPER_NAME, Section
from .plots import plot_bars

def reverse(sec: Section, figs: Path) -> None:
    cases = all_cases(sec.runs)
    order = ("reno", "cubic", "vegas", "bbr", "sync", "mixreact")

    def rev(on: bool) -> Callable[[Dict[str, Any]], bool]:
        return lambda c: bool((c.get("point") or {}).get("bulk_rev",
                                                          (c.get("point") or {}).get("rev_load"))) == on

    off = {cc: by_seed(cases, cc, rev(False)) for cc in order}
    on = {cc: by_seed(cases, cc, rev(True)) for cc in order}
    kept_s = {cc: kept_by_seed(on[cc], off[cc]) for cc in order}
    kept = {cc: over_seeds(kept_s[cc], "kept") for cc in order}
    rows = []
    for cc in order:
        if not on[cc]:
            continue
        rows.append([cc, str(len(on[cc])), txt(over_seeds(off[cc], "goodput_mbit")),
                     txt(over_seeds(on[cc], "goodput_mbit")), f"**{txt(kept[cc])}**",
                     txt(over_seeds(on[cc], "lr.mean_delay_ms"), 1),
                     txt(paired(on[cc], on["reno"], "lr.mean_delay_ms")),
                     txt(over_seeds(on[cc], "lr-rev.mean_delay_ms"), 1)])
    sec.ours = table(["algorithm", "seeds", "goodput, reverse idle (Mbit/s)",
                       "goodput, reverse loaded", "goodput kept (paired)",
                       "forward queue delay ms (loaded)", "forward queue ÷ Reno (loaded)",
                       "reverse queue delay ms"], rows)
    for cc in ("sync", "mixreact"):
        if kept[cc] is None:
            continue
        algo = PAPER_NAME.get(cc, cc)
        add_check(sec, f"{cc}: keeps at least 0.9 of its goodput when the ACK path is loaded "
                  "(all of the paired interval)", at_least(kept[cc], 0.9),
                  f"kept {txt(kept[cc])}", kept_s[cc], algo=algo)
        if kept["vegas"] is not None:
            d = paired(kept_s[cc], kept_s["vegas"], "kept", "diff")
            add_check(sec, f"{cc}: keeps more than Vegas (RTT-based) beyond the CI",
                      above(d, 0.0), f"kept − Vegas's {txt(d)}", kept_s[cc], kept_s["vegas"],
                      algo=algo)
    labels = [cc for cc in order if kept[cc] is not None]
    if labels:
        sec.figures.append(plot_bars(figs / "reverse-path-kept.png",
                                      "goodput kept with the ACK path loaded, mean ± 95% CI",
                                      labels, [("kept", [kept[cc] for cc in labels])],
                                      "goodput(loaded) ÷ goodput(idle)"))
