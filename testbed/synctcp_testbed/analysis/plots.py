"""The plots of a run directory, drawn into ``RUN/plots/`` (:func:`write_plots`).

Per bottleneck link: utilization, drops and mean queue per case; the queue
over time; its CDF over the measured interval.  Per run: goodput per flow;
HTTP response-time CDF and CCDF (all responses, and split at 25,560 B).
Per case: cwnd per flow.  Plots are drawn with matplotlib's Agg canvas (no
pyplot, no display); a plot whose data is absent is skipped, never drawn
empty.
"""

from __future__ import annotations

import math
import re
from pathlib import Path
from typing import TYPE_CHECKING, Any, Dict, List, Optional, Sequence, Tuple

from .http import SMALL_RESPONSE_MAX, WITHIN_MS
from .metrics import eccdf, ecdf
from .rundir import Case, CaseSummary, Run, RunLike, as_run, flow_labeler

if TYPE_CHECKING:  # pragma: no cover
    from matplotlib.axes import Axes
    from matplotlib.figure import Figure

DPI = 100
FLOWS_PER_AXES = 20
MAX_CWND_AXES = 6
MAX_BAR_FLOWS = 60
MAX_PLOT_POINTS = 4000  # per line, before envelope thinning


def _new_figure(width: float, height: float) -> "Figure":
    """A matplotlib Figure on an Agg canvas (pyplot's global state untouched)."""
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure

    fig = Figure(figsize=(width, height), dpi=DPI)
    FigureCanvasAgg(fig)
    return fig


def _save(fig: "Figure", path: Path) -> Path:
    """Lay out and save ``fig`` as PNG."""
    fig.tight_layout()
    fig.savefig(path, dpi=DPI, format="png")
    return path


def _text(s: Any) -> str:
    """A string safe as matplotlib text: no mathtext, visible as a legend label."""
    out = str(s).replace("$", r"\$")
    return "\u200b" + out if out.startswith("_") else out


def slug(s: str) -> str:
    """``s`` as a safe file name part."""
    return re.sub(r"[^A-Za-z0-9._-]+", "_", s).strip("._") or "x"


def case_colors(run: Run) -> Dict[str, Any]:
    """One colour per case, the same in every plot."""
    from matplotlib import colormaps

    cmap = colormaps["tab10" if len(run.cases) <= 10 else "tab20"]
    return {c.id: cmap(i % cmap.N) for i, c in enumerate(run.cases)}


def _thin(xs: Sequence[float], ys: Sequence[float],
          limit: int = MAX_PLOT_POINTS) -> Tuple[Sequence[float], Sequence[float]]:
    """At most about ``limit`` points of a line, keeping its envelope.

    Longer lines are cut into buckets; each keeps its lowest and highest
    point, in time order, so that peaks survive the thinning.
    """
    n = len(xs)
    if n <= limit:
        return xs, ys
    k = math.ceil(n / max(1, limit // 2))
    out_x: List[float] = []
    out_y: List[float] = []
    for lo in range(0, n, k):
        chunk = range(lo, min(lo + k, n))
        i_min = min(chunk, key=ys.__getitem__)
        i_max = max(chunk, key=ys.__getitem__)
        for i in sorted({i_min, i_max}):
            out_x.append(xs[i])
            out_y.append(ys[i])
    return out_x, out_y


def _case_t0(case: Case, fallback: float) -> float:
    """Start of the measured interval of ``case`` (``fallback`` if unknown)."""
    return case.summary.t_start if case.summary.t_start is not None else fallback


def _measured(case: Case, link: str) -> List[float]:
    """Queue lengths of ``link`` within the case's measured interval.

    All samples when the interval is unknown or holds none.
    """
    samples = case.queue(link)
    lo = case.summary.t_start if case.summary.t_start is not None else -math.inf
    hi = case.summary.t_end if case.summary.t_end is not None else math.inf
    kept = [s.qlen_pkts for s in samples if lo <= s.t <= hi]
    return kept or [s.qlen_pkts for s in samples]


def _from_traffic(case: Case, samples: List[Any]) -> List[Any]:
    """Samples from 1 s before the case's traffic started (``t_traffic``), if known."""
    t = case.summary.raw.get("t_traffic")
    if not isinstance(t, (int, float)):
        return samples
    return [s for s in samples if s.t >= t - 1.0]


def _legend(ax: "Axes", n: int) -> None:
    """A legend sized for ``n`` entries."""
    ax.legend(fontsize=7 if n > 6 else 8, ncol=1 if n <= 8 else 2, loc="best", framealpha=0.8)


def plot_queue_time(run: Run, link: str, out: Path, colors: Dict[str, Any]) -> Optional[Path]:
    """Queue length of ``link`` over time, one line per case (t = 0 at t_start)."""
    series = [(c, _from_traffic(c, c.queue(link))) for c in run.cases]
    series = [(c, q) for c, q in series if q]
    if not series:
        return None
    fig = _new_figure(9, 3.6)
    ax = fig.add_subplot()
    for case, q in series:
        t0 = _case_t0(case, q[0].t)
        xs, ys = _thin([s.t - t0 for s in q], [s.qlen_pkts for s in q])
        ax.plot(xs, ys, lw=0.8, color=colors[case.id], label=_text(case.id))
    durations = [c.summary.duration_s for c, _ in series if c.summary.duration_s]
    ax.axvline(0, color="grey", ls=":", lw=0.8)
    if durations:
        ax.axvline(max(durations), color="grey", ls=":", lw=0.8)
    ax.set_xlabel("time since start of measured interval (s)")
    ax.set_ylabel("queue (pkts)")
    ax.set_ylim(bottom=0)
    ax.set_title(_text(f"{run.scenario_name}: bottleneck {link} queue"), fontsize=10)
    _legend(ax, len(series))
    return _save(fig, out / f"queue-time-{slug(link)}.png")


def plot_queue_cdf(run: Run, link: str, out: Path, colors: Dict[str, Any]) -> Optional[Path]:
    """CDF of the queue length of ``link`` over the measured interval, one line per case."""
    series = [(c, _measured(c, link)) for c in run.cases]
    series = [(c, v) for c, v in series if v]
    if not series:
        return None
    fig = _new_figure(6.4, 4)
    ax = fig.add_subplot()
    for case, vals in series:
        xs, ys = ecdf(vals)
        ax.step(xs, ys, where="post", lw=1, color=colors[case.id], label=_text(case.id))
    ax.set_xlabel("queue (pkts)")
    ax.set_ylabel("P(queue \u2264 x)")
    ax.set_ylim(0, 1.02)
    ax.set_xlim(left=0)
    ax.grid(alpha=0.3)
    ax.set_title(_text(f"{run.scenario_name}: bottleneck {link} queue CDF"), fontsize=10)
    _legend(ax, len(series))
    return _save(fig, out / f"queue-cdf-{slug(link)}.png")


def cwnd_series(case: Case) -> Dict[str, Tuple[List[float], List[float]]]:
    """cwnd over time per flow label (flows.json id, else ``src:sport``).

    Times are relative to the case's t_start.  Flows of flows.json come
    first in its order, then the unmatched sockets sorted by label.
    """
    label = flow_labeler(case.flows())
    series: Dict[str, Tuple[List[float], List[float]]] = {}
    t0: Optional[float] = case.summary.t_start
    for sample in case.tcp_samples():
        if t0 is None:
            t0 = sample.t
        for sock in sample.sockets:
            info = sock.get("tcp_info")
            cwnd = info.get("cwnd") if isinstance(info, dict) else None
            if not isinstance(cwnd, (int, float)) or isinstance(cwnd, bool):
                continue
            xs, ys = series.setdefault(label(sock), ([], []))
            xs.append(sample.t - t0)
            ys.append(float(cwnd))
    order = {str(f.get("id")): i for i, f in enumerate(case.flows())}
    for xs, ys in series.values():  # files of several nodes: keep each line in time order
        if any(b < a for a, b in zip(xs, xs[1:])):
            pairs = sorted(zip(xs, ys))
            xs[:], ys[:] = [p[0] for p in pairs], [p[1] for p in pairs]
    ranked = sorted(series, key=lambda k: (0, order[k], "") if k in order else (1, 0, k))
    return {k: series[k] for k in ranked}


def plot_cwnd(run: Run, case: Case, out: Path) -> Optional[Path]:
    """cwnd per flow of ``case``: small multiples of at most 20 flows each."""
    series = cwnd_series(case)
    if not series:
        return None
    labels = list(series)
    shown = labels[:FLOWS_PER_AXES * MAX_CWND_AXES]
    groups = [shown[i:i + FLOWS_PER_AXES] for i in range(0, len(shown), FLOWS_PER_AXES)]
    from matplotlib import colormaps

    palette = colormaps["tab20" if len(shown) > 10 else "tab10"]
    fig = _new_figure(9, 2.8 * len(groups) + 0.4)
    axes = [fig.add_subplot(len(groups), 1, i + 1) for i in range(len(groups))]
    for ax, group in zip(axes, groups):
        for i, name in enumerate(group):
            xs, ys = _thin(*series[name], limit=max(400, 4 * MAX_PLOT_POINTS // len(group)))
            ax.plot(xs, ys, lw=0.8, color=palette(i % palette.N), label=_text(name))
        ax.set_ylabel("cwnd (pkts)")
        ax.set_ylim(bottom=0)
        ax.legend(fontsize=6, ncol=1 if len(group) <= 10 else 2, loc="upper left",
                  bbox_to_anchor=(1.01, 1.0), borderaxespad=0)
    axes[-1].set_xlabel("time since start of measured interval (s)")
    more = f" (first {len(shown)} of {len(labels)} flows)" if len(shown) < len(labels) else ""
    fig.suptitle(_text(f"{run.scenario_name}: {case.id} cwnd per flow{more}"), fontsize=10)
    return _save(fig, out / f"cwnd-{slug(case.id)}.png")


def flow_goodputs(case: Case) -> Dict[str, float]:
    """Goodput (Mbit/s) per flow id of ``case``, from flows.json or the summary."""
    out: Dict[str, float] = {}
    for f in case.flows():
        g = f.get("goodput_mbit")
        if f.get("id") is not None and isinstance(g, (int, float)) and not isinstance(g, bool):
            out[str(f["id"])] = float(g)
    return out


def plot_goodput(run: Run, out: Path, colors: Dict[str, Any]) -> Optional[Path]:
    """Goodput per flow: flows on x, one bar per case."""
    per_case = [(c, flow_goodputs(c)) for c in run.cases]
    per_case = [(c, g) for c, g in per_case if g]
    if not per_case:
        return None
    ids: Dict[str, None] = {}
    for _, g in per_case:
        ids.update((k, None) for k in g)
    flows = list(ids)
    shown = flows[:MAX_BAR_FLOWS]
    width = 0.8 / len(per_case)
    fig = _new_figure(min(16.0, max(6.4, 0.35 * len(shown) * max(1, len(per_case) / 2) + 2)), 4)
    ax = fig.add_subplot()
    for j, (case, g) in enumerate(per_case):
        xs = [i + (j - (len(per_case) - 1) / 2) * width for i in range(len(shown))]
        ax.bar(xs, [g.get(f, math.nan) for f in shown], width=width, color=colors[case.id],
               label=_text(case.id))
    ax.set_xticks(range(len(shown)))
    ax.set_xticklabels([_text(f) for f in shown], rotation=90 if len(shown) > 12 else 0,
                       fontsize=7 if len(shown) > 12 else 9)
    ax.set_xlabel("flow")
    ax.set_ylabel("goodput (Mbit/s)")
    more = f" (first {len(shown)} of {len(flows)} flows)" if len(shown) < len(flows) else ""
    ax.set_title(_text(f"{run.scenario_name}: goodput per flow{more}"), fontsize=10)
    _legend(ax, len(per_case))
    return _save(fig, out / "goodput-flows.png")


HTTP_PARTS: Tuple[Tuple[str, str], ...] = (
    ("all", "all responses"),
    ("small", f"responses \u2264 {SMALL_RESPONSE_MAX:,} B"),
    ("large", f"responses > {SMALL_RESPONSE_MAX:,} B"),
)
"""Response classes of the HTTP plots: key and title."""


def http_parts(case: Case) -> Dict[str, List[float]]:
    """Response times (ms) of the complete responses of ``case``: all, small, large.

    Small responses have at most :data:`SMALL_RESPONSE_MAX` bytes.  Incomplete
    responses (``ok`` = 0) are left out.
    """
    parts: Dict[str, List[float]] = {key: [] for key, _ in HTTP_PARTS}
    for r in case.http():
        if r.ok:
            parts["all"].append(r.response_ms)
            parts["small" if r.resp_bytes <= SMALL_RESPONSE_MAX else "large"].append(r.response_ms)
    return parts


def _draw_rt(ax: "Axes", data: List[Tuple[Case, List[float]]], colors: Dict[str, Any],
             ccdf: bool) -> None:
    """Response-time CDF (linear, to 1500 ms) or CCDF (log-log) of each case."""
    for case, vals in data:
        # the CCDF on log axes: of the positive times only
        xs, ys = eccdf([v for v in vals if v > 0]) if ccdf else ecdf(vals)
        if xs:  # P(X <= x) holds from each x on; P(X >= x) up to each x
            ax.step(xs, ys, where="pre" if ccdf else "post", lw=1, color=colors[case.id],
                    label=_text(case.id))
    if ccdf:
        from matplotlib.ticker import NullFormatter

        ax.set_xscale("log")
        ax.set_yscale("log")
        ax.xaxis.set_minor_formatter(NullFormatter())
        ax.set_ylabel("P(response time \u2265 x)")
    else:
        ax.set_xlim(0, WITHIN_MS)
        ax.set_ylim(0, 1.02)
        ax.set_ylabel("P(response time \u2264 x)")
    ax.set_xlabel("response time (ms)")
    ax.grid(alpha=0.3)
    _legend(ax, len(data))


def plot_http(run: Run, out: Path, colors: Dict[str, Any]) -> List[Path]:
    """HTTP response-time CDF and CCDF, of all responses and split small/large."""
    per_case = [(c, http_parts(c)) for c in run.cases]
    data = {key: [(c, p[key]) for c, p in per_case if p[key]] for key, _ in HTTP_PARTS}
    titles = dict(HTTP_PARTS)
    paths: List[Path] = []
    for ccdf, kind in ((False, "cdf"), (True, "ccdf")):
        if data["all"]:
            fig = _new_figure(6.4, 4)
            ax = fig.add_subplot()
            _draw_rt(ax, data["all"], colors, ccdf)
            ax.set_title(_text(f"{run.scenario_name}: HTTP response time {kind.upper()}"),
                         fontsize=10)
            paths.append(_save(fig, out / f"http-rt-{kind}.png"))
        split = [key for key in ("small", "large") if data[key]]
        if split:
            fig = _new_figure(6.0 * len(split), 4)
            for i, key in enumerate(split):
                ax = fig.add_subplot(1, len(split), i + 1)
                _draw_rt(ax, data[key], colors, ccdf)
                ax.set_title(titles[key], fontsize=10)
            fig.suptitle(_text(f"{run.scenario_name}: HTTP response time {kind.upper()} by size"),
                         fontsize=10)
            paths.append(_save(fig, out / f"http-rt-split-{kind}.png"))
    return paths


def _bar_metric(case: CaseSummary, link: str, key: str) -> float:
    """Value of a summary-bar metric of ``case`` at ``link`` (NaN if absent)."""
    b = case.bottleneck(link)
    v = getattr(b, key, None) if b is not None else None
    if not isinstance(v, (int, float)) or isinstance(v, bool):
        return math.nan
    return float(v) * 100 if key == "utilization" else float(v)


def plot_summary_bars(run: Run, link: str, out: Path, colors: Dict[str, Any]) -> Optional[Path]:
    """Utilization %, drop % and mean queue of ``link``, one bar per case."""
    cases = [c for c in run.cases if c.summary.bottleneck(link) is not None]
    metrics = [("utilization", "utilization (%)"), ("drop_pct", "drops (%)"),
               ("mean_pkts", "mean queue (pkts)")]
    values = {k: [_bar_metric(c.summary, link, k) for c in cases] for k, _ in metrics}
    metrics = [(k, t) for k, t in metrics if any(not math.isnan(v) for v in values[k])]
    if not cases or not metrics:
        return None
    fig = _new_figure(max(6.4, 3.2 * len(metrics) + 0.25 * len(cases)), 3.6)
    for i, (key, title) in enumerate(metrics):
        ax = fig.add_subplot(1, len(metrics), i + 1)
        ax.bar(range(len(cases)), values[key], color=[colors[c.id] for c in cases])
        ax.set_xticks(range(len(cases)))
        ax.set_xticklabels([_text(c.id) for c in cases], rotation=45, ha="right", fontsize=8)
        ax.set_title(title, fontsize=10)
        ax.grid(axis="y", alpha=0.3)
    fig.suptitle(_text(f"{run.scenario_name}: bottleneck {link}"), fontsize=10)
    return _save(fig, out / f"summary-{slug(link)}.png")


def write_plots(rundir: RunLike) -> List[Path]:
    """Draw every plot whose data exists into ``RUN/plots/`` and return the PNG paths.

    Older PNGs in ``RUN/plots/`` are removed first, so the directory holds
    exactly the report's plots.
    """
    run = as_run(rundir)
    out = run.path / "plots"
    out.mkdir(exist_ok=True)
    for old in out.glob("*.png"):
        old.unlink()
    colors = case_colors(run)
    links = run.links()
    found: List[Optional[Path]] = []
    for link in links:
        found += [plot_summary_bars(run, link, out, colors),
                  plot_queue_time(run, link, out, colors), plot_queue_cdf(run, link, out, colors)]
    found.append(plot_goodput(run, out, colors))
    found += plot_http(run, out, colors)
    found += [plot_cwnd(run, case, out) for case in run.cases]
    return [p for p in found if p is not None]
