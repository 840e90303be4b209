"""The seed papers' claims, the runs each one reads, and the ledger built from them.

Each run directory belongs to the claim its scenario's name starts with;
several directories of one claim are read together.  A new claim is an
entry here and a function ``evaluate(section, figures_dir)`` in its
paper's module.
"""

from __future__ import annotations

from pathlib import Path
from typing import Dict, List, Sequence

from ..rundir import Run, RunDirError, load_run
from .gu import gu
from .holl import holl
from .markdown import software, table
from .martin import martin
from .own import OWN
from .model import Claim, LedgerError, Section
from .reverse import reverse
from .weigle import ftp, http

CLAIMS = [
    Claim("weigle-ftp", ("weigle-ftp",), "Weigle: FTP over one bottleneck (Table 4.3)",
          "With 20 two-way FTP flows on a 10 Mbit/s drop-tail bottleneck (queue 2 × BDP), "
          "Sync-TCP(Pcwnd) and Sync-TCP(MixReact) both keep a lower mean queue and drop fewer "
          "packets than Reno; Pcwnd matches Reno's utilization, MixReact's is \"comparable\" "
          "(Weigle 2003, §4.2.1, §4.2.3, §5.4.2).",
          table(["protocol", "utilization %", "drop %", "avg queue (packets)"],
                 [["TCP Reno", "90.59", "1.56", "41.51"],
                  ["Sync-TCP(Pcwnd)", "91.97", "0.06", "26.49"],
                  ["Sync-TCP(MixReact)", "85.79", "1.03", "30.97"]])
          + "\n\nTable 4.3 (p. 86): ns-2, one run per protocol, all flows from t = 0, 300 s, "
            "window 46, queue 92 packets, base RTTs of Table 4.2 (16-691 ms, median 53 ms).",
          ftp),
    Claim("weigle-http", ("weigle-http",), "Weigle: HTTP over one bottleneck (Tables 4.10-4.11)",
          "Under two-way web traffic on a 10 Mbit/s drop-tail bottleneck, both Sync-TCP variants "
          "drop fewer packets than Reno at every load, MixReact keeps a smaller queue at every "
          "load, and both complete more responses within 1500 ms than Reno at 60-105% load "
          "(§4.3.1, §4.4).",
          table(["load", "Reno drops (%)", "Pcwnd", "MixReact"],
                 [["50%", "3589 (0.08)", "2598 (0.06)", "0 (0)"],
                  ["70%", "21,522 (0.43)", "14,717 (0.29)", "312 (0.01)"],
                  ["85%", "100,001 (1.99)", "56,064 (1.13)", "24,801 (0.51)"],
                  ["90%", "181,997 (3.86)", "87,998 (1.92)", "91,673 (2.00)"],
                  ["95%", "416,811 (8.02)", "252,344 (5.07)", "277,257 (5.52)"],
                  ["105%", "1,340,671 (23.79)", "1,158,960 (21.92)", "1,164,277 (21.85)"]])
          + "\n\nTable 4.11 (p. 106). At 85% load 94% (MixReact), 92% (Pcwnd) and 89% (Reno) of "
            "the responses completed within 1500 ms; response times are otherwise plotted only "
            "(Figs 4.12-4.22). 250,000 responses per case after a 120 s warm-up.",
          http),
    Claim("gu", ("gu-",), "Gu et al.: E-TCP on a 20-packet buffer",
          "With a 20-packet drop-tail bottleneck, Reno's utilization falls as capacity grows "
          "while E-TCP keeps an almost constant high utilization, about 88% in the model, with "
          "a loss rate just above p0 = 0.01 (§VI, Fig. 1, Fig. 6).",
          table(["capacity", "Reno (model)", "E-TCP (model)"],
                 [["10 Mbit/s", "0.703", "0.949"], ["100 Mbit/s", "0.560", "0.890"],
                  ["1 Gbit/s", "0.450", "0.881"]])
          + "\n\nThe paper gives no table: its Fig. 1 (the M/M/1/20 model, 1000-byte packets, "
            "100 ms) says Reno \"quickly drops under 50%\" and E-TCP \"converges to 88%\"; the "
            "values above are that model's, derived in docs/spec/etcp.md. Its simulations (ns-2) "
            "give 94.7% for 50 flows at 500 Mbit/s and a loss rate of about 0.0102 for one flow "
            "at 1 Gbit/s. It ran no ten-flow case; ours extend it.",
          gu),
    Claim("holl", ("holl",), "Holl: a GEO satellite link with voice calls",
          "On a 1.536 Mbit/s, 450 ms GEO link with a 64-packet queue, 64 bulk flows and 0-17 "
          "voice calls, the TCP variants behave alike; RED costs bulk throughput (-25% at 17 "
          "calls) but improves fairness (§4.3, Ch. 8).",
          "Drop-tail, 17 calls: 5357 bit/s per bulk flow; RED: 4000 bit/s (-25%). Without calls "
          "18-20 kbit/s per flow (Fig. 5.3). CBR loss with New Reno: 27% on drop-tail, 17% "
          "with RED. RED lowers the spread of the flows' throughput by about 3 kbit/s. "
          "Measured over 63.6-123.6 s, MTU 576, ns-2, one run each; Holl compares TCP "
          "variants (Tahoe to FACK) and STP, not Sync-TCP or E-TCP.",
          holl),
    Claim("martin", ("martin",), "Martin et al.: one delay-based flow against Reno",
          "A single delay-reacting flow competing with Reno over a multi-bottleneck path with "
          "bidirectional background traffic gets less throughput than Reno (Table V), because "
          "RTT rises precede only 7-18% of losses (CIM, Table III).",
          table(["cut", "Emory: change % (95% CI)", "ASU"],
                 [["50%", "-37 (-42, -31)", "-13.2 (-19.8, -6.6)"],
                  ["25%", "-12 (-21, -4)", "-9.8 (-24, 4)"],
                  ["12.5%", "-6.8 (-13, 8)", "-7.4 (-18.1, 3.1)"]])
          + "\n\nTable V: 10 runs of 500 s each (ns-2), one DCA flow (window 12) against one "
            "Reno flow on 13-hop paths with several hundred background TCP flows; the cut is "
            "DCA's decrease on a delay rise. CIM (Table III): 0.047-0.34, 7-18% of losses "
            "preceded by an RTT rise on average.",
          martin),
    Claim("reverse-path", ("reverse-path",), "Reverse-path congestion: OTT against RTT",
          "A delay signal from one-way transit times measures the forward queue only, so "
          "congestion on the ACK path does not make Sync-TCP back off, while an RTT-based "
          "signal cannot tell the two apart (Weigle 2003, §3.3).",
          "Weigle states this as a design argument; no experiment of the dissertation isolates "
          "it and it gives no figure. The rules below are the project's own test of it: each "
          "algorithm's forward goodput with the reverse path loaded by CUBIC bulk flows, over "
          "its goodput with the reverse path idle, per seed.",
          reverse),
] + [Claim(*own) for own in OWN]


def run_names(runs: Sequence[Run]) -> Dict[Path, str]:
    """Each run's name in the ledger: its directory's name, or the path as given where
    two directories have the same name.  The same directory twice is an error."""
    seen: Dict[Path, Path] = {}
    for r in runs:
        real = r.path.resolve()
        if real in seen:
            raise LedgerError(f"{seen[real]} and {r.path} are the same run directory: give it "
                              "once")
        seen[real] = r.path
    base = [r.path.name for r in runs]
    return {r.path: (r.path.name if base.count(r.path.name) == 1 else str(r.path)) for r in runs}


def build(rundirs: Sequence[Path], figs: Path) -> List[Section]:
    runs: List[Run] = []
    for d in rundirs:
        try:
            runs.append(load_run(d))
        except RunDirError as exc:
            raise LedgerError(str(exc)) from None
    names = run_names(runs)
    sections = [Section(c.key, c.title, c.claim, c.paper, names=names) for c in CLAIMS]
    for run in runs:
        name = run.scenario_name
        claim = next((i for i, c in enumerate(CLAIMS) if name.startswith(c.prefixes)), None)
        if claim is None:
            raise LedgerError(f"{run.path}: scenario {name!r} belongs to no claim of the ledger "
                              f"(scenario names start with "
                              f"{', '.join(p for c in CLAIMS for p in c.prefixes)})")
        if not run.cases:
            raise LedgerError(f"{run.path}: no case finished")
        sections[claim].runs.append(run)
    for sec, claim in zip(sections, CLAIMS):
        if sec.runs:
            claim.evaluate(sec, figs)
            # a run's image and kernel ("" unrecorded; " and " where its cases differed)
            soft = [software(r) for r in sec.runs]
            if len(set(soft)) > 1 or any(" and " in s for s in soft):
                named = "; ".join(f"`{r.scenario_name}`: {s or 'not recorded'}"
                                  for r, s in zip(sec.runs, soft))
                sec.notes.append(
                    f"The runs combined here were not all made with the same user-space image "
                    f"and kernel ({named}): the same commit and seed give the same figures only "
                    f"on the same ones (docs/platform.md, \"Determinism\").")
    return sections
