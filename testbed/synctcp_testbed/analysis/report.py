"""The self-contained HTML report of a run directory, and the command that
regenerates a run's tables, plots and report.

The run directory is described in ``docs/testbed-rundir.md``.  The runner's
command calls :func:`.tables.write_summary_csv` and :func:`write_report`
(which draws the plots with :func:`.plots.write_plots`); the same can be
regenerated later::

    python -m synctcp_testbed.analysis.report RUNDIR

``report.html`` embeds the plots as base64 data URIs and has no external
resources; every string read from the run directory is HTML-escaped.
"""

from __future__ import annotations

import argparse
import base64
import html
import json
import math
import shlex
import sys
import time
from pathlib import Path
from typing import Any, Dict, Iterable, List, Optional, Sequence

from .http import SMALL_RESPONSE_MAX
from .plots import slug, write_plots
from .rundir import CaseSummary, Run, RunDirError, RunLike, as_run, load_run
from .stats import ratio_to, reference
from .tables import run_groups, write_summary_csv

DASH = "\u2014"


CSS = """
body{font-family:system-ui,-apple-system,"Segoe UI",sans-serif;margin:1.5em auto;max-width:1200px;
color:#222;padding:0 1em}
h1{font-size:1.5em}h2{font-size:1.2em;margin-top:1.6em;border-bottom:1px solid #ccc}
table{border-collapse:collapse;margin:.5em 0;font-size:.85em}
th,td{border:1px solid #ccc;padding:.2em .5em;text-align:right;vertical-align:top}
th{background:#f2f2f2}td.l,th.l{text-align:left}
tbody tr:nth-child(even){background:#fafafa}
table.meta th{text-align:left;width:10em}table.meta td{text-align:left}
code,pre{font-family:ui-monospace,monospace;font-size:.9em}
pre{background:#f6f6f6;padding:.5em;overflow:auto;max-height:30em}
figure{margin:1em 0}figure img{max-width:100%;border:1px solid #eee}
figcaption{font-size:.8em;color:#666}
details summary{cursor:pointer;font-weight:600;margin:.5em 0}
.note{color:#666;font-size:.85em}
.warn{color:#a00;background:#fee;padding:.4em}
"""


def esc(v: Any) -> str:
    """HTML-escaped text of ``v`` (quotes too)."""
    return html.escape(str(v), quote=True)


def fmt(v: Any, digits: int = 2, scale: float = 1.0) -> str:
    """A number with ``digits`` decimals (ints as such), or an em dash."""
    if isinstance(v, bool) or not isinstance(v, (int, float)):
        return DASH
    if isinstance(v, int) and scale == 1.0:
        return str(v)
    x = float(v) * scale
    return DASH if not math.isfinite(x) else f"{x:.{digits}f}"


def _row(cells: Sequence[str], left: int = 1, tag: str = "td") -> str:
    """A table row of already-escaped cells; the first ``left`` are left-aligned."""
    return "<tr>" + "".join(f'<{tag}{" class=l" if i < left else ""}>{c}</{tag}>'
                            for i, c in enumerate(cells)) + "</tr>"


def _table(head: Sequence[str], rows: Iterable[Sequence[str]], left: int = 1,
           attrs: str = "") -> str:
    """An HTML table (head cells escaped here, body cells already escaped)."""
    body = "\n".join(_row(r, left) for r in rows)
    return (f"<table{attrs}><thead>{_row([esc(h) for h in head], left, 'th')}</thead>"
            f"<tbody>\n{body}\n</tbody></table>")


def _modules_text(mods: Any) -> str:
    """Modules of meta.json as escaped lines: name version (param=value, ...)."""
    if not isinstance(mods, dict) or not mods:
        return DASH
    lines = []
    for name, info in mods.items():
        info = info if isinstance(info, dict) else {}
        params = info.get("params") if isinstance(info.get("params"), dict) else {}
        ps = ", ".join(f"{k}={v}" for k, v in params.items())
        version = info.get("version")
        text = f"{name}" + (f" {version}" if version else "") + (f" ({ps})" if ps else "")
        lines.append(esc(text))
    return "<br>".join(lines)


def _command_text(cmd: Any) -> str:
    """The command line of meta.json, shell-quoted when it is a list."""
    if isinstance(cmd, list):
        return shlex.join(str(c) for c in cmd)
    return str(cmd) if cmd else DASH


def meta_section(run: Run) -> str:
    """Metadata table and the resolved scenario (collapsible)."""
    m = run.meta
    cost = m.get("wall_cost") or {}
    spw = cost.get("simulated_per_wall_s")
    items = [("scenario", run.scenario_name), ("started (UTC)", m.get("started_utc")),
             ("kernel", m.get("kernel")), ("platform", m.get("platform")),
             ("time", m.get("time_mode")),
             ("wall cost", (f"{cost['wall_s']:g} s" + (f"; {cost['simulated_s']:g} simulated s "
                            f"in {cost['instance_wall_s']:g} instance wall s ({spw:g} simulated "
                            f"s per wall s), {m.get('jobs', 1)} at once" if spw else ""))
              if cost.get("wall_s") is not None else None),
             ("backend", m.get("backend") or "netns"), ("host", m.get("host")),
             ("git", m.get("git")), ("tool version", m.get("tool_version")),
             ("seed", m.get("seed"))]
    rows = [f"<tr><th>{esc(k)}</th><td>{esc(DASH if v is None else v)}</td></tr>"
            for k, v in items]
    rows.append(f"<tr><th>modules</th><td>{_modules_text(m.get('modules'))}</td></tr>")
    rows.append(f"<tr><th>command</th><td><code>{esc(_command_text(m.get('command')))}</code>"
                "</td></tr>")
    out = "<h2>Run</h2>\n<table class=meta>" + "\n".join(rows) + "</table>"
    if m.get("scenario") is not None:
        scen = json.dumps(m["scenario"], indent=2, sort_keys=True, default=str)
        out += f"\n<details><summary>scenario</summary><pre>{esc(scen)}</pre></details>"
    return out


#: below this share of the link, the platform (not the algorithm) limits the figures
CEILING_MIN = 0.95


def ceiling_section(run: Run) -> str:
    """The platform's ceiling cases (CUBIC, large buffer), with a warning below 95%."""
    rows, low = [], []
    for c in run.cases:
        s = c.summary
        if s.aqm != "ceiling" or not s.bottlenecks:
            continue
        b = s.bottlenecks[0]
        rows.append([esc(s.id), fmt(b.rate_mbit, 1), fmt(s.goodput_mbit),
                     fmt(b.utilization, 1, 100)])
        if b.utilization is not None and b.utilization < CEILING_MIN:
            low.append(f"{s.id} ({100 * b.utilization:.1f}%)")
    if not rows:
        return ""
    out = ("<h2>Platform ceiling</h2>\n<p class=note>CUBIC with a large buffer: what the "
           "platform itself carries at each sweep point.</p>\n"
           + _table(["case", "link Mbit/s", "goodput Mbit/s", "utilization %"], rows,
                    attrs=' id="ceiling"'))
    if low:
        out += (f"<p class=warn><b>Warning:</b> the platform ({esc(run.meta.get('platform'))}) "
                f"carried less than {100 * CEILING_MIN:.0f}% of the link in "
                f"{esc(', '.join(low))}: at these points the figures measure the platform, "
                f"not the algorithms (docs/platform.md).</p>")
    return out


def ratios(run: Run, case: CaseSummary, cc: str, link: str) -> List[Optional[float]]:
    """Goodput, mean-queue and drop ratios at ``link`` of ``case`` to its reference case
    of algorithm ``cc`` (:func:`.stats.ratio_to`: same queue, sweep point and seed)."""
    raws = [c.summary.raw for c in run.cases]
    return [ratio_to(raws, case.raw, cc, m)
            for m in ("goodput_mbit", f"{link}.mean_pkts", f"{link}.drop_pct")]


def summary_section(run: Run, link: str) -> str:
    """Summary table of one bottleneck, with ratio columns vs Reno/CUBIC of the same AQM."""
    cases = [c.summary for c in run.cases if c.summary.bottleneck(link) is not None]
    refs = [name for name, cc in (("Reno", "reno"), ("CUBIC", "cubic"))
            if any(reference([r.summary.raw for r in run.cases], c.raw, cc) for c in cases)]
    ceiling = any(c.platform_ceiling_mbit is not None for c in cases)
    head = ["case", "utilization %", "drop %", "mark %", "mean queue pkts", "p95 queue pkts",
            "mean queue delay ms", "goodput Mbit/s", "retransmits"]
    head += ["platform ceiling Mbit/s"] if ceiling else []
    for name in refs:
        head += [f"goodput \u00f7 {name}", f"queue \u00f7 {name}", f"drops \u00f7 {name}"]
    rows = []
    for c in cases:
        b = c.bottleneck(link)
        assert b is not None
        cells = [esc(c.id), fmt(b.utilization, 1, 100), fmt(b.drop_pct), fmt(b.mark_pct),
                 fmt(b.mean_pkts, 1), fmt(b.p95_pkts, 1), fmt(b.mean_delay_ms, 1),
                 fmt(c.goodput_mbit), fmt(c.retransmits, 0)]
        cells += [fmt(c.platform_ceiling_mbit)] if ceiling else []
        for name in refs:
            cells += [fmt(r) for r in ratios(run, c, name.lower(), link)]
        rows.append(cells)
    rate = next((b.rate_mbit for c in cases for b in c.bottlenecks
                 if b.link == link and b.rate_mbit), None)
    title = f"Bottleneck {link}" + (f" ({fmt(rate, 1)} Mbit/s)" if rate else "")
    note = ("<p class=note>Ratios are to the case of that algorithm with the same queue "
            "discipline: goodput of the case, mean queue and drop % at this bottleneck.</p>"
            if refs else "")
    return (f"<h2>{esc(title)}</h2>\n"
            + _table(head, rows, attrs=f' id="summary-{esc(slug(link))}"') + note)


def groups_section(run: Run, link: str) -> str:
    """Mean and 95% interval over the seeds of each case group at ``link`` (repeated runs)."""
    from .stats import text

    gs = [g for g in run_groups(run) if f"{link}.utilization" in g["metrics"]]
    if not any(g["n"] > 1 for g in gs):
        return ""

    def cell(d: Optional[Dict[str, Any]], digits: int = 2, scale: float = 1.0) -> str:
        return esc(text(d, digits, scale))

    refs = [r for r in ("reno", "cubic") if any(r in g["ratios"] for g in gs)]
    head = ["case", "seeds", "utilization %", "drop %", "mean queue pkts", "mean queue delay ms",
            "goodput Mbit/s", "retransmits"]
    for r in refs:
        head += [f"goodput \u00f7 {r}", f"queue \u00f7 {r}", f"drops \u00f7 {r}"]
    rows = []
    for g in gs:
        m = g["metrics"]
        cells = [esc(g["group"]), esc(" ".join(str(x) for x in g["seeds"])),
                 cell(m.get(f"{link}.utilization"), 1, 100), cell(m.get(f"{link}.drop_pct")),
                 cell(m.get(f"{link}.mean_pkts"), 1), cell(m.get(f"{link}.mean_delay_ms"), 1),
                 cell(m.get("goodput_mbit")), cell(m.get("retransmits"), 0)]
        for r in refs:
            got = g["ratios"].get(r, {})
            cells += [cell(got.get("goodput_mbit")), cell(got.get(f"{link}.mean_pkts")),
                      cell(got.get(f"{link}.drop_pct"))]
        rows.append(cells)
    return (f"<h2>{esc(link)}: mean \u00b1 95% confidence interval over the seeds</h2>\n"
            + _table(head, rows, attrs=f' id="groups-{esc(slug(link))}"')
            + "<p class=note>Student-t intervals over the repetitions of each case (seeds "
              "listed); ratios are paired: each seed's case over the reference algorithm's "
              "case of the same seed, queue discipline and sweep point (groups.csv has "
              "every metric).</p>")


def http_section(run: Run) -> str:
    """Table of the HTTP summary of each case that has one (empty if none has)."""
    cases = [c.summary for c in run.cases if c.summary.http]
    if not cases:
        return ""
    head = ["case", "responses", "errors", "median ms", "p90 ms",
            f"median ms \u2264 {SMALL_RESPONSE_MAX:,} B", f"median ms > {SMALL_RESPONSE_MAX:,} B"]
    rows = []
    for c in cases:
        h = c.http or {}
        rows.append([esc(c.id), fmt(h.get("responses"), 0), fmt(h.get("errors"), 0),
                     fmt(h.get("median_ms"), 1), fmt(h.get("p90_ms"), 1),
                     fmt(h.get("small_median_ms"), 1), fmt(h.get("large_median_ms"), 1)])
    return "<h2>HTTP</h2>\n" + _table(head, rows, attrs=' id="http"')


def oneway_section(run: Run) -> str:
    """The senders' one-way figures with their clock bounds (runs on hosts,
    docs/real-hosts.md), and the warning when a bound is above a tenth of the
    smallest queuing delay; empty when no case has them."""
    from .oneway import pm, warnings

    cases = [c.summary.raw for c in run.cases if c.summary.raw.get("oneway")]
    if not cases:
        return ""
    head = ["case", "queuing delay", "OTT", "min OTT", "source", "clocks", "discipline",
            "note"]
    rows = []
    for c in cases:
        o = c["oneway"]
        rows.append([esc(c["id"]), esc(pm(o.get("qdelay_ms"), o.get("qdelay_bound_ms"))),
                     esc(pm(o.get("ott_ms"), o.get("ott_bound_ms"))),
                     esc(pm(o.get("min_ott_ms"), o.get("ott_bound_ms"))),
                     esc(o.get("source", DASH)), esc(o.get("clock_basis", DASH)),
                     esc(o.get("discipline", DASH)), esc(o.get("note", ""))])
    warn = "".join(f"<p class=warn>{esc(w)}</p>\n" for w in warnings(cases))
    return ("<h2>One-way delays and their clock bounds</h2>\n" + warn
            + _table(head, rows, attrs=' id="oneway"'))


def flows_section(run: Run) -> str:
    """Per-flow table of every case, collapsed (empty if no case has flows)."""
    head = ["case", "flow", "group", "cc", "src:sport \u2192 dst:dport", "base RTT ms",
            "goodput Mbit/s", "bytes", "retransmits"]
    rows = []
    for case in run.cases:
        for f in case.flows():
            ends = (f"{f.get('src', '?')}:{f.get('sport', '?')} \u2192 "
                    f"{f.get('dst', '?')}:{f.get('dport', '?')}") if "sport" in f else DASH
            rows.append([esc(case.id), esc(f.get("id", DASH)), esc(f.get("group", DASH)),
                         esc(f.get("cc", case.summary.cc)), esc(ends),
                         fmt(f.get("base_rtt_ms"), 1), fmt(f.get("goodput_mbit"), 3),
                         fmt(f.get("bytes"), 0), fmt(f.get("retransmits"), 0)])
    if not rows:
        return ""
    return (f"<h2>Flows</h2>\n<details><summary>{len(rows)} flows</summary>\n"
            + _table(head, rows, left=5, attrs=' id="flows"') + "\n</details>")


def plots_section(plots: Sequence[Path]) -> str:
    """Every plot, embedded as a base64 PNG data URI."""
    figs = []
    for p in plots:
        data = base64.b64encode(Path(p).read_bytes()).decode("ascii")
        figs.append(f'<figure><img alt="{esc(p.name)}" src="data:image/png;base64,{data}">'
                    f"<figcaption>plots/{esc(p.name)}</figcaption></figure>")
    return "<h2>Plots</h2>\n" + "\n".join(figs) if figs else ""


def render_report(run: Run, plots: Sequence[Path]) -> str:
    """The report's HTML text."""
    title = f"synctcp testbed: {run.scenario_name}"
    links = [link for link in run.links()
             if any(c.summary.bottleneck(link) for c in run.cases)]
    parts = [
        "<!DOCTYPE html>", '<html lang="en"><head><meta charset="utf-8">',
        '<meta name="viewport" content="width=device-width, initial-scale=1">',
        f"<title>{esc(title)}</title><style>{CSS}</style></head><body>",
        f"<h1>{esc(title)}</h1>",
        f"<p class=note>{len(run.cases)} case(s): {esc(', '.join(c.id for c in run.cases))}</p>",
        meta_section(run), ceiling_section(run),
        *(groups_section(run, link) for link in links),
        *(summary_section(run, link) for link in links),
        oneway_section(run), http_section(run), flows_section(run), plots_section(plots),
        f"<p class=note>Generated by synctcp_testbed.analysis.report at "
        f"{esc(time.strftime('%Y-%m-%d %H:%M:%S UTC', time.gmtime()))}.</p>",
        "</body></html>",
    ]
    return "\n".join(p for p in parts if p) + "\n"


def write_report(rundir: RunLike, plots: Optional[Sequence[Path]] = None) -> Path:
    """Write ``RUN/report.html`` and return its path.

    ``plots`` are the PNGs to embed; by default :func:`write_plots` draws them.
    """
    run = as_run(rundir)
    if plots is None:
        plots = write_plots(run)
    path = run.path / "report.html"
    path.write_text(render_report(run, plots), encoding="utf-8")
    return path


def main(argv: Optional[Sequence[str]] = None) -> int:
    """CLI: regenerate summary.csv, plots and report.html of a run directory."""
    ap = argparse.ArgumentParser(
        prog="python -m synctcp_testbed.analysis.report",
        description="Regenerate summary.csv, plots/ and report.html of a testbed run directory.")
    ap.add_argument("rundir", type=Path, help="run directory (with meta.json and summary.json)")
    args = ap.parse_args(argv)
    try:
        run = load_run(args.rundir)
        write_summary_csv(run)
        path = write_report(run, write_plots(run))
    except RunDirError as exc:
        print(f"report: {exc}", file=sys.stderr)
        return 2
    print(path)
    return 0


if __name__ == "__main__":
    sys.exit(main())
