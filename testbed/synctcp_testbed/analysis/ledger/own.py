"""The project's own claims (issue 29), not a seed paper's: next to CUBIC, and latecomers.

docs/coexistence.md gives the design these claims test.  A sync or
mixreact case of a run whose modules had ``compete`` set is labelled
"sync (compete)" (cases.all_cases): competing mode is off by default.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, Dict, List, Tuple

from ..rundir import Run
from ..stats import paired
from ..stats import text as txt
from .cases import RUN, VARIANT_CCS, add_check, all_cases, at_least, below, by_seed, over_seeds
from .markdown import table
from .model import PAPER_NAME, Section

#: the bottleneck of the dumbbell presets
LINK = "lr"


def _name(cc: str) -> str:
    base, _, rest = cc.partition(" ")
    return PAPER_NAME.get(base, base) + (f" {rest}" if rest else "")


def _algorithms(runs: List[Run]) -> Tuple[List[Dict[str, Any]], List[str]]:
    """Every case of ``runs`` (labelled) and their algorithms in order, not the ceiling."""
    cases = all_cases(runs)
    return cases, list(dict.fromkeys(c["cc"] for c in cases if c.get("aqm") != "ceiling"))


def coexistence(sec: Section, figs: Path) -> None:
    cases, order = _algorithms(sec.runs)
    setups: List[tuple] = []
    for c in cases:
        run = c[RUN]
        if run.scenario_name.startswith("cubic-recovery"):
            continue
        n = len((run.meta.get("scenario") or {}).get("topology", {}).get("rtts_ms") or []) - 1
        q = (c.get("point") or {}).get("queue_pkts")
        key = (run.scenario_name, n, q)
        if key not in setups:
            setups.append(key)
    rows = []
    for name, n, q in sorted(setups, key=lambda k: (k[1], k[2] or 0)):
        def where(c: Dict[str, Any], name: str = name, q: Any = q) -> bool:
            return c[RUN].scenario_name == name and (c.get("point") or {}).get("queue_pkts") == q
        for cc in order:
            r = by_seed(cases, cc, where)
            if not r:
                continue
            share = over_seeds(r, "minority_share")
            rows.append([f"{n} CUBIC, {q} packets", cc, str(len(r)), f"**{txt(share)}**",
                         txt(over_seeds(r, f"{LINK}.mean_pkts"), 1)])
            if cc.endswith("(compete)"):     # the default mode yields: shown, not claimed
                add_check(sec, f"{_name(cc)}: at least 0.5 of its fair share next to {n} CUBIC "
                          f"flow{'s' if n > 1 else ''} on {q} packets (all of the interval)",
                          at_least(share, 0.5), f"share {txt(share)}", r, algo=_name(cc))
    sec.ours = table(["setup", "algorithm", "seeds", "goodput ÷ fair share",
                      "mean queue (packets)"], rows)
    rec_rows = []
    for cc in order:
        r = by_seed(cases, cc, lambda c: c[RUN].scenario_name.startswith("cubic-recovery"))
        if r:
            rec_rows.append([cc, str(len(r)), txt(over_seeds(r, "recovery_s"), 1),
                             txt(over_seeds(r, f"{LINK}.mean_pkts"), 1)])
    if rec_rows:
        sec.ours += ("\n\nCUBIC leaves (`cubic-recovery`): seconds until the queue stays at the "
                     "level the remaining flow keeps alone (shown, not a check)\n\n"
                     + table(["algorithm", "seeds", "recovery s", "mean queue (packets)"],
                             rec_rows))


def latecomer(sec: Section, figs: Path) -> None:
    cases, order = _algorithms(sec.runs)
    runs = {cc: by_seed(cases, cc) for cc in order}
    reno = runs.get("reno")
    rows = []
    for cc in order:
        r = runs[cc]
        jain = over_seeds(r, "jain")
        q = paired(r, reno, f"{LINK}.mean_pkts") if reno else None
        rows.append([cc, str(len(r)), f"**{txt(jain, 3)}**",
                     txt(over_seeds(r, f"{LINK}.mean_pkts"), 1), txt(q),
                     txt(over_seeds(r, "goodput_mbit"))])
        if cc in VARIANT_CCS:
            add_check(sec, f"{_name(cc)}: Jain's index of the two flows at least 0.98 over "
                      "the last 60 s (all of the interval)", at_least(jain, 0.98),
                      f"Jain {txt(jain, 3)}", r, algo=_name(cc))
            if reno:
                add_check(sec, f"{_name(cc)}: mean queue below 0.5 of Reno's (all of the "
                          "paired interval)", below(q, 0.5), f"queue ÷ Reno {txt(q)}", r, reno,
                          algo=_name(cc))
    sec.ours = table(["algorithm", "seeds", "Jain (last 60 s)", "mean queue (packets)",
                      "queue ÷ Reno", "goodput Mbit/s"], rows)


def many_flows(sec: Section, figs: Path) -> None:
    link = "r0r1"
    cases, order = _algorithms(sec.runs)
    runs = {cc: by_seed(cases, cc) for cc in order}
    reno = runs.get("reno")
    rows = []
    for cc in order:
        r = runs[cc]
        q = paired(r, reno, f"{link}.mean_pkts") if reno else None
        d = paired(r, reno, f"{link}.drop_pct") if reno else None
        u = paired(r, reno, f"{link}.utilization", "diff", 100) if reno else None
        rows.append([cc, str(len(r)), txt(over_seeds(r, f"{link}.utilization"), 2, 100),
                     txt(over_seeds(r, f"{link}.drop_pct")),
                     txt(over_seeds(r, f"{link}.mean_pkts"), 1), txt(u, 2), txt(d), txt(q)])
        if cc in VARIANT_CCS and reno:
            name = _name(cc)
            add_check(sec, f"{name}: mean queue below 0.5 of Reno's (all of the paired "
                      "interval)", below(q, 0.5), f"queue ÷ Reno {txt(q)}", r, reno, algo=name)
            add_check(sec, f"{name}: drops below 0.1 of Reno's (all of the paired interval)",
                      below(d, 0.1), f"drops ÷ Reno {txt(d)}", r, reno, algo=name)
            add_check(sec, f"{name}: utilization at most 1 point below Reno's (all of the "
                      "paired interval)", at_least(u, -1.0), f"util − Reno {txt(u, 2)} pp", r,
                      reno, algo=name)
    sec.ours = table(["algorithm", "seeds", "utilization % R0→R1", "drop %",
                      "avg queue pkts", "util − Reno (pp)", "drops ÷ Reno", "queue ÷ Reno"], rows)


#: a long run keeps its queue "as low" in its last minute as in its second: within a
#: tenth of it (the bound was set before the first run)
DRIFT_MAX = 1.1


def long_run(sec: Section, figs: Path) -> None:
    cases, order = _algorithms(sec.runs)
    rows = []
    for cc in order:
        r = by_seed(cases, cc)
        drift = over_seeds(r, "queue_drift")
        rows.append([cc, str(len(r)), txt(over_seeds(r, "queue_minute2_pkts"), 1),
                     txt(over_seeds(r, "queue_last_minute_pkts"), 1), f"**{txt(drift)}**",
                     txt(over_seeds(r, f"{LINK}.mean_pkts"), 1),
                     txt(over_seeds(r, f"{LINK}.utilization"), 2, 100)])
        if cc in VARIANT_CCS:
            add_check(sec, f"{_name(cc)}: mean queue of the last minute at most "
                      f"{DRIFT_MAX:g} x the second minute's (all of the interval)",
                      below(drift, DRIFT_MAX), f"last ÷ second minute {txt(drift)}", r,
                      algo=_name(cc))
    sec.ours = table(["algorithm", "seeds", "queue, minute 2 (packets)",
                      "queue, last minute", "last ÷ second", "mean queue 60-600 s",
                      "utilization %"], rows)


#: issue 32's peers: the systems of the peers-* presets in the table's order, and the
#: references of the checks (the Internet's default; Linux's default AQM)
PEER_ORDER = ("sync/droptail", "mixreact/droptail", "dctcp/dualpi2", "cubic/cake",
              "cubic/fq_codel", "bbr/droptail", "cubic/droptail", "reno/droptail")
PEER_AQMS = ("dctcp/dualpi2", "cubic/cake", "cubic/fq_codel")
PEER_DEFAULT, PEER_AQM = "cubic/droptail", "cubic/fq_codel"
#: "within reach" of an AQM system: a mean queuing delay at most this many times its own
REACH = 2.0
PEER_TOPOLOGIES = {"peers-dumbbell": "dumbbell, 3 flows (20 Mbit/s, 40 ms, 100 packets)",
                   "peers-reverse-path": "reverse path loaded (10 Mbit/s, 50 ms, 80 packets)",
                   "peers-weigle-ftp": "Weigle's FTP, 20 + 20 flows (10 Mbit/s, 92 packets)"}


def _first_link(run: Run) -> str:
    measure = ((run.meta.get("scenario") or {}).get("topology") or {}).get("measure") or [LINK]
    return str(measure[0])


def peers(sec: Section, figs: Path) -> None:
    cases = all_cases(sec.runs)
    names = list(dict.fromkeys(c[RUN].scenario_name for c in cases))
    rows, reach_rows = [], []
    for name in sorted(names, key=lambda n: list(PEER_TOPOLOGIES).index(n)
                       if n in PEER_TOPOLOGIES else len(PEER_TOPOLOGIES)):
        where_name = [c for c in cases if c[RUN].scenario_name == name]
        link = _first_link(where_name[0][RUN])
        found = list(dict.fromkeys(f"{c['cc']}/{c['aqm']}" for c in where_name
                                   if c.get("aqm") != "ceiling"))
        order = [s for s in PEER_ORDER if s in found] + [s for s in found if s not in PEER_ORDER]

        def sel(system: str) -> Any:
            cc, _, aqm = system.partition("/")
            return by_seed(where_name, cc, lambda c, aqm=aqm: c.get("aqm") == aqm)

        runs = {s: sel(s) for s in order}
        topo = PEER_TOPOLOGIES.get(name, name)
        default = runs.get(PEER_DEFAULT)
        for s in order:
            r = runs[s]
            d = paired(r, default, f"{link}.mean_delay_ms") if default and s != PEER_DEFAULT \
                else None
            rows.append([topo, s, str(len(r)), f"**{txt(over_seeds(r, f'{link}.mean_delay_ms'))}**",
                         txt(over_seeds(r, f"{link}.p99_delay_ms")),
                         txt(over_seeds(r, f"{link}.utilization"), 2, 100),
                         txt(over_seeds(r, f"{link}.drop_pct")),
                         txt(over_seeds(r, f"{link}.mark_pct")),
                         txt(over_seeds(r, "flow_mean_kbit"), 0), txt(over_seeds(r, "jain"), 3),
                         txt(d)])
        for s in ("sync/droptail", "mixreact/droptail"):
            if s not in runs:
                continue
            r, name_s = runs[s], _name(s.partition("/")[0])
            reach = []
            for a in PEER_AQMS:
                if a in runs:
                    reach.append(txt(paired(r, runs[a], f"{link}.mean_delay_ms")))
                    reach.append(txt(paired(r, runs[a], f"{link}.utilization", "diff", 100), 2))
                else:
                    reach += ["-", "-"]
            reach_rows.append([topo, s] + reach)
            if default:
                q = paired(r, default, f"{link}.mean_delay_ms")
                u = paired(r, default, f"{link}.utilization", "diff", 100)
                add_check(sec, f"{name_s} over drop-tail, {topo}: mean queuing delay below 0.5 "
                          f"of CUBIC's over drop-tail (all of the paired interval)",
                          below(q, 0.5), f"delay ÷ CUBIC {txt(q)}", r, default, algo=name_s)
                add_check(sec, f"{name_s} over drop-tail, {topo}: utilization at most 1 point "
                          f"below CUBIC's over drop-tail", at_least(u, -1.0),
                          f"util − CUBIC {txt(u, 2)} pp", r, default, algo=name_s)
            aqm = runs.get(PEER_AQM)
            if aqm:
                q = paired(r, aqm, f"{link}.mean_delay_ms")
                add_check(sec, f"{name_s} over drop-tail, {topo}: within reach of CUBIC over "
                          f"fq_codel, Linux's default AQM (mean queuing delay at most {REACH:g}x "
                          f"its own, all of the paired interval)", below(q, REACH),
                          f"delay ÷ CUBIC/fq_codel {txt(q)}", r, aqm, algo=name_s)
    sec.ours = table(["setup", "system (algorithm/queue)", "seeds", "mean queuing delay ms",
                      "p99 delay ms", "utilization %", "drop %", "mark %",
                      "goodput per flow kbit/s", "Jain", "delay ÷ CUBIC/drop-tail"], rows)
    if reach_rows:
        heads = []
        for a in PEER_AQMS:
            heads += [f"delay ÷ {a}", f"util − {a} (pp)"]
        sec.ours += ("\n\nWithin reach of an AQM-assisted system? A sender-only algorithm over "
                     "drop-tail against each, paired by seed (delay ratio; utilization "
                     "difference in points)\n\n" + table(["setup", "system"] + heads, reach_rows))


#: the claims of this module: (key, prefixes, title, claim, what stands for the paper, evaluate)
OWN: List[tuple] = [
    ("coexistence", ("cubic-",), "Ours: next to CUBIC",
     "The project's own claim (issue 29), not a seed paper's: with competing mode on "
     "(`compete=1`), a sync or mixreact flow of variant best gets at least half its fair share "
     "next to one CUBIC flow and next to four, on 1- and 2-BDP drop-tail buffers; when CUBIC "
     "leaves, it returns to a low queue (docs/coexistence.md).",
     "No seed paper mixes protocols (Weigle 2003, §4.1.2; §5.6.1 expects a Sync-TCP flow to "
     "lose to loss-based ones); Martin et al. (2003) ask of an enhancement that it not lose to "
     "competing TCP as the only enhanced flow.", coexistence),
    ("latecomer", ("latecomer",), "Ours: a latecomer of the same algorithm",
     "The project's own claim (issue 29): a second flow that starts 30 s after the first "
     "(10 Mbit/s, 50 ms, 100 packets, 120 s) shares the link fairly with it (Jain's index at "
     "least 0.98 over the last 60 s), with at most half of Reno's queue.",
     "No seed paper measures it; Reno and BBR reach 0.999 here, Vegas 0.990 (issue 29).",
     latecomer),
    ("many-flows", ("many-flows",), "Ours: 100 flows each way",
     "The project's own claim (issue 29): Weigle's FTP experiment scaled to 100 flows each way "
     "(five per pair of Table 4.2's RTTs, 50 Mbit/s, 442 packets): sync and mixreact keep at "
     "most half of Reno's mean queue and a tenth of its drops, at utilization at most 1 point "
     "below Reno's.",
     "Weigle 2003 ran 20 flows each way (Table 4.3); this is our scale-up.", many_flows),
    ("long-run", ("long-run",), "Ours: one flow for 600 s",
     "The project's own claim (issue 29): one sync or mixreact flow alone for 600 s "
     "(10 Mbit/s, 50 ms, 100 packets) keeps its queue as low in its last minute as in its "
     "second (at most 1.1 times it): neither its base nor its learnt maximum creeps.",
     "No seed paper runs a flow this long; BBR answers the same question with ProbeRTT, "
     "LEDBAT++ with periodic slowdowns (issue 29).", long_run),
    ("peers", ("peers-",), "Ours: next to AQM-assisted peers",
     "The project's own claim (issue 32): a sender-only Sync-TCP over drop-tail keeps a mean "
     "queuing delay below half of CUBIC's over the same drop-tail at utilization at most 1 point "
     "below it, and within twice that of CUBIC over fq_codel (Linux's default AQM), on the "
     "demo's dumbbell, with the reverse path loaded and in Weigle's FTP experiment; the table "
     "sets it beside DCTCP over DualPI2 (L4S), CUBIC over CAKE and BBRv1.",
     "No seed paper compares with an AQM but Weigle's RED/ARED runs; an operator's question: "
     "deploy an AQM, or change only the senders? (issue 32).", peers),
]

__all__: List[str] = ["OWN", "coexistence", "latecomer", "long_run", "many_flows", "peers"]
