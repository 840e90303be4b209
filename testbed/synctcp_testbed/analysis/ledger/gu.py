"""Gu et al.: E-TCP on a 20-packet buffer."""

from __future__ import annotations

from pathlib import Path
from typing import Any, Dict, List, Optional

from ..rundir import Run
from ..stats import Estimate, paired
from ..stats import text as txt
from .cases import (RUN, BySeed, above, add_check, all_cases, at_least, by_seed, falls,
                    gap_at_least, over_seeds)
from .markdown import table
from .model import Section
from .plots import plot_bars

#: the M/M/1/20 model's utilization (docs/spec/etcp.md; derived, not the paper's)
GU_MODEL = {10.0: (0.703, 0.949), 100.0: (0.560, 0.890), 1000.0: (0.450, 0.881)}


def rate_of(c: Dict[str, Any]) -> float:
    b = (c.get("bottlenecks") or [{}])[0]
    return float(b.get("rate_mbit") or (c.get("point") or {}).get("rate_mbit") or 0)


def flows_of(c: Dict[str, Any]) -> int:
    return int((c.get("point") or {}).get("flows_per_pair", 1))


def gu(sec: Section, figs: Path) -> None:
    cases = all_cases(sec.runs)
    rates = sorted({rate_of(c) for c in cases if c.get("aqm") != "ceiling"})
    flows = sorted({flows_of(c) for c in cases})
    rows = []
    for n in flows:
        etcp_u: Dict[float, Optional[Estimate]] = {}
        reno_u: Dict[float, Optional[Estimate]] = {}
        gap: Dict[float, Optional[Estimate]] = {}
        seeds: Dict[float, int] = {}
        sel: Dict[str, Dict[float, BySeed]] = {"etcp": {}, "reno": {}}
        for rate in rates:
            def at(c: Dict[str, Any], rate: float = rate) -> bool:
                return rate_of(c) == rate and flows_of(c) == n
            e, r, cu = (by_seed(cases, cc, at) for cc in ("etcp", "reno", "cubic"))
            if not e and not r:
                continue
            sel["etcp"][rate], sel["reno"][rate] = e, r
            etcp_u[rate], reno_u[rate] = over_seeds(e, "goodput_util"), over_seeds(r, "goodput_util")
            gap[rate] = paired(e, r, "goodput_util", "diff")
            seeds[rate] = len(e)
            model = GU_MODEL.get(rate)
            rows.append([f"{rate:g}", str(n), str(len(e)), txt(etcp_u[rate], 3),
                         txt(reno_u[rate], 3), txt(over_seeds(cu, "goodput_util"), 3),
                         txt(gap[rate], 3), txt(over_seeds(e, "lr.drop_pct"), 2),
                         f"{model[1]:.3f} / {model[0]:.3f}" if model else "-"])
        # the claim covers the paper's capacities; a capacity beyond them is shown, not checked
        span = f"{min(GU_MODEL):g}-{max(GU_MODEL):g} Mbit/s"
        got = [rt for rt in rates if etcp_u.get(rt) is not None and rt in GU_MODEL]
        beyond = [rt for rt in rates if etcp_u.get(rt) is not None and rt not in GU_MODEL]
        if beyond:
            where = ", ".join(f"{rt:g} Mbit/s ({seeds[rt]} seed(s))" for rt in beyond)
            sec.notes.append(f"{n} flow(s) at {where}: beyond the paper's capacities "
                             f"({span}), shown and not checked.")
        if not got:
            continue
        es = [sel["etcp"][rt] for rt in got]
        add_check(sec, f"{n} flow(s): E-TCP's utilization at least 0.80 at every capacity "
                  "(all of the interval)", all(at_least(etcp_u[rt], 0.80) for rt in got),
                  "; ".join(f"{rt:g}: {txt(etcp_u[rt], 3)}" for rt in got), *es, algo="E-TCP")
        if len(got) > 1:
            first, last = etcp_u[got[0]], etcp_u[got[-1]]
            assert first is not None and last is not None
            flat = gap_at_least(first, last, -0.05)
            check = add_check(
                sec, f"{n} flow(s): E-TCP's utilization flat with capacity (at {got[-1]:g} "
                f"Mbit/s no more than 5 points below {got[0]:g}, all of both intervals)", flat,
                f"{txt(last, 3)} vs {txt(first, 3)}", sel["etcp"][got[0]], sel["etcp"][got[-1]],
                algo="E-TCP")
            if check.ok is False:        # got holds the model's capacities only
                lo_m, hi_m = GU_MODEL[got[0]], GU_MODEL[got[-1]]
                sec.notes.append(
                    f"{n} flow(s): E-TCP falls {100 * (first.mean - last.mean):.1f} points "
                    f"from {got[0]:g} to {got[-1]:g} Mbit/s; the paper's own model falls "
                    f"{100 * (lo_m[1] - hi_m[1]):.1f} ({lo_m[1]:.3f} to {hi_m[1]:.3f}), so a "
                    f"flat line is more than the model claims; ours is "
                    f"{100 * (first.mean - lo_m[1]):+.1f} and {100 * (last.mean - hi_m[1]):+.1f} "
                    f"points from the model at the two ends.")
        high = [rt for rt in got if rt >= 100 and gap.get(rt) is not None]
        if high:
            add_check(sec, f"{n} flow(s): E-TCP above Reno at every capacity ≥ 100 Mbit/s "
                      "(all of the paired interval)", all(above(gap[rt], 0.0) for rt in high),
                      "; ".join(f"{rt:g}: {txt(gap[rt], 3)}" for rt in high),
                      *(sel[cc][rt] for rt in high for cc in ("etcp", "reno")), algo="E-TCP")
        rg = [rt for rt in got if reno_u.get(rt) is not None]
        if len(rg) > 1:
            add_check(sec, f"{n} flow(s): Reno's utilization falls as capacity grows (each "
                      "interval below the previous one)",
                      falls([reno_u[rt] for rt in rg]),      # type: ignore[misc]
                      "; ".join(f"{rt:g}: {txt(reno_u[rt], 3)}" for rt in rg),
                      *(sel["reno"][rt] for rt in rg), algo="TCP Reno")
        sec.figures.append(plot_bars(
            figs / f"gu-utilization-{n}flow.png",
            f"{n} flow(s), 20-packet buffer, 100 ms: goodput ÷ capacity, mean ± 95% CI",
            [f"{rt:g} Mbit/s" for rt in got],
            [("etcp", [etcp_u.get(rt) for rt in got]), ("reno", [reno_u.get(rt) for rt in got])],
            "utilization", [GU_MODEL[rt][1] if rt in GU_MODEL else None for rt in got],
            "E-TCP model (derived)"))
    sec.ours = table(["capacity Mbit/s", "flows", "seeds", "E-TCP util", "Reno util",
                       "CUBIC util", "E-TCP − Reno (paired)", "E-TCP drop %",
                       "model E-TCP / Reno (derived)"], rows)
    _burst_note(sec, cases)
    _reno_equilibrium_note(sec, cases)


def burst_segs(run: Run) -> str:
    """The run's E-TCP ``burst_segs`` as meta.json recorded the loaded module."""
    rec = (run.meta.get("modules") or {}).get("tcp_etcp")
    if not isinstance(rec, dict):
        return "not recorded"
    value = (rec.get("params") or {}).get("burst_segs")
    return str(value) if value is not None else "none (a module before the parameter)"


def _burst_note(sec: Section, cases: List[Dict[str, Any]]) -> None:
    """E-TCP's pacing in the runs that ran it (a run of Reno alone has none)."""
    etcp_runs: List[Run] = []
    for c in cases:
        run = c[RUN]
        if c.get("cc") == "etcp" and all(run is not r for r in etcp_runs):
            etcp_runs.append(run)
    bursts = {sec.name(r): burst_segs(r) for r in etcp_runs}
    if not bursts:
        return
    if set(bursts.values()) == {"1"}:
        sec.notes.append("E-TCP paces packet by packet, as the paper does (the module's "
                         "burst_segs = 1 in every run of it). Linux's own pacing sends ~1 ms GSO "
                         "bursts, which overflow a 20-packet buffer at high rates (docs/etcp.md).")
        return
    by_value: Dict[str, List[str]] = {}
    for name, value in bursts.items():
        by_value.setdefault(value, []).append(f"`{name}`")
    sec.notes.append("E-TCP's burst_segs differs between the runs of it or was not recorded ("
                     + "; ".join(f"{v}: {', '.join(names)}" for v, names in by_value.items())
                     + "); a module before the parameter paced in ~1 ms GSO bursts, which "
                       "overflow a 20-packet buffer at high rates (docs/etcp.md).")


def _reno_equilibrium_note(sec: Section, cases: List[Dict[str, Any]]) -> None:
    """The capacities at which one Reno flow's sawtooth is longer than its case, from the
    case's scenario (capacity, base RTT, packet size, duration)."""
    slow = []
    for rate in sorted({rate_of(c) for c in cases if c.get("cc") == "reno" and flows_of(c) == 1}):
        c = next(c for c in cases if c.get("cc") == "reno" and flows_of(c) == 1
                 and rate_of(c) == rate)
        sc = c[RUN].meta.get("scenario") or {}
        topo = sc.get("topology") or {}
        rtts, mtu = topo.get("rtts_ms") or [], float(topo.get("mtu") or 1500)
        if len(rtts) != 1 or not sc.get("duration_s") or rate <= 0:
            continue
        rtt_s = float(rtts[0]) / 1000
        bdp = rate * 1e6 * rtt_s / (8 * mtu)
        sawtooth = bdp / 2 * rtt_s          # from half the window back to the full one
        runs = float(sc["duration_s"])
        if sawtooth > runs:
            slow.append(f"at {rate:g} Mbit/s about {sawtooth:,.0f} s (BDP {bdp:,.0f} packets of "
                        f"{mtu:g} bytes at {rtt_s * 1000:g} ms) where the case runs {runs:g} s "
                        f"({float(sc.get('warmup_s') or 0):g} s of them warm-up)")
    if slow:
        sec.notes.append("One Reno flow is not at equilibrium where its sawtooth, from half its "
                         "window back to the full one at +1 packet per RTT, is longer than the "
                         "case: " + "; ".join(slow) + ".")
