"""Martin et al.: one delay-based flow against Reno."""

from __future__ import annotations

from pathlib import Path
from typing import Any, Dict, List

from ..stats import paired
from ..stats import text as txt
from .cases import add_check, all_cases, below, by_seed, over_seeds, within
from .markdown import table
from .model import PAPER_NAME, Section
from .plots import plot_bars

#: Martin et al.'s Table V: the change (%) at a 50% cut, mean and 95% interval
MARTIN_50 = {"Emory": (-37.0, -42.0, -31.0), "ASU": (-13.2, -19.8, -6.6)}


#: Martin et al.'s Table III: the CIM on RTT of their seven paths (x = 2, w = 20, 1 sigma)
MARTIN_CIM = (0.047, 0.34)


def martin(sec: Section, figs: Path) -> None:
    cases = all_cases(sec.runs)
    order = ("reno", "vegas", "sync", "mixreact")
    runs = {cc: by_seed(cases, cc) for cc in order}
    captured = any(m.get("cim_rtt") is not None for r in runs.values() for m in r.values())
    rows = []
    for cc in order:
        if runs[cc]:
            row = [cc, str(len(runs[cc])),
                   f"**{txt(over_seeds(runs[cc], 'minority_change_pct'), 1)}**",
                   txt(over_seeds(runs[cc], "minority_share")),
                   txt(over_seeds(runs[cc], "goodput_mbit"))]
            if captured:
                row += [txt(over_seeds(runs[cc], k)) for k in ("cim_rtt", "cim_ott")]
                row += [txt(over_seeds(runs[cc], k), 1)
                        for k in ("lcdc1_excess_rtt_ms", "lcdc1_excess_ott_ms")]
            rows.append(row)
    head = ["flow f01's algorithm", "runs", "change of f01 against Reno % (Table V)",
            "f01 ÷ fair share", "forward goodput Mbit/s"]
    if captured:
        head += ["f01's CIM on RTT", "on OTT", "LCDC lag -1 excess, RTT ms", "OTT ms"]
    sec.ours = table(head, rows)
    for cc in ("vegas", "sync", "mixreact"):
        if not runs[cc]:
            continue
        e = over_seeds(runs[cc], "minority_change_pct")
        add_check(sec, f"{cc}: less throughput than the Reno flow (the interval's upper end "
                  f"below 0)", below(e, 0.0), f"{txt(e, 1)}%", runs[cc],
                  algo=PAPER_NAME.get(cc, cc))
    lo, hi = MARTIN_CIM
    rule = (f"Reno (the control's f01): RTT rises precede few losses, CIM on RTT within "
            f"Table III's {lo:g}-{hi:g} (all of the interval)")
    cim = over_seeds(runs["reno"], "cim_rtt") if runs["reno"] else None
    add_check(sec, rule, within(cim, lo, hi),
              txt(cim, 3) if cim is not None else "no Reno run with a capture (run --capture)",
              runs["reno"], algo="TCP Reno")
    if runs["reno"]:
        sec.notes.append(f"Reno against Reno (the control; the interval should hold 0): "
                         f"{txt(over_seeds(runs['reno'], 'minority_change_pct'), 1)}%.")
    if captured:
        diffs = []
        for cc in (cc for cc in order if runs[cc]):
            ott, rtt = ({seed: {"cim": m.get(k)} for seed, m in runs[cc].items()}
                        for k in ("cim_ott", "cim_rtt"))
            diffs.append(f"{cc} {txt(paired(ott, rtt, 'cim', 'diff'))}")
        sec.notes.append("CIM and LCDC: `synctcp correlate` on f01's capture at its sender "
                         f"(docs/correlate.md: {_params(cases)}), over the whole "
                         "flow, the RTT and the OTT of the same ACKs; CIM on OTT − on RTT, "
                         "paired by seed: " + "; ".join(diffs) + ".")
    labels = [cc for cc in order if runs[cc]]
    if labels:
        sec.figures.append(plot_bars(figs / "martin-change.png",
                                      "change of f01's throughput against Reno's, mean ± 95% CI",
                                      labels, [("ours", [over_seeds(runs[cc], "minority_change_pct")
                                                         for cc in labels])], "%"))


def _params(cases: List[Dict[str, Any]]) -> str:
    """The correlation's parameters as the cases' records give them."""
    seen: List[str] = []
    for c in cases:
        p = (c.get("correlation") or {}).get("params") or {}
        if p:
            text = (f"x = {p.get('x', '?')}, w = {p.get('w', '?')}, "
                    f"{float(p.get('sigma', 1)):g}σ")
            if text not in seen:
                seen.append(text)
    return "; ".join(seen) or "parameters not recorded"
