"""The ledger's figures: bars with 95% intervals, response-time CDFs of pooled seeds."""

from __future__ import annotations

from pathlib import Path
from typing import Dict, List, Optional, Sequence, Tuple

from ..stats import Estimate
from .cases import Cases
from .model import LedgerError

def plot_bars(path: Path, title: str, labels: Sequence[str],
               series: Sequence[Tuple[str, Sequence[Optional[Estimate]]]], ylabel: str,
               ref: Optional[Sequence[Optional[float]]] = None, ref_label: str = "") -> Path:
    """Grouped bars with 95% intervals (and the paper's values as markers)."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(max(5.0, 0.9 * len(labels) + 2), 3.4))
    n = len(series)
    width = 0.8 / max(1, n)
    for i, (name, ests) in enumerate(series):
        xs = [k + (i - (n - 1) / 2) * width for k in range(len(labels))]
        ys = [e.mean if e else 0.0 for e in ests]
        errs = [(e.ci or 0.0) if e else 0.0 for e in ests]
        ax.bar(xs, ys, width=width * 0.95, yerr=errs, capsize=3, label=name)
    if ref is not None:
        pts = [(k, v) for k, v in enumerate(ref) if v is not None]
        if pts:
            ax.scatter([k for k, _ in pts], [v for _, v in pts], marker="D", color="black",
                       zorder=3, label=ref_label)
    ax.set_xticks(range(len(labels)))
    ax.set_xticklabels(labels)
    ax.set_ylabel(ylabel)
    ax.set_title(title, fontsize=10)
    ax.grid(axis="y", alpha=0.3)
    if n > 1 or ref is not None:
        ax.legend(fontsize=8)
    fig.tight_layout()
    path.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(path, dpi=110)
    plt.close(fig)
    return path


def pooled_rt_hist(cases: Cases) -> Dict[str, Dict[int, int]]:
    """The response-time histograms (``http.rt_hist``) of ``cases`` added up,
    bin by bin: the seeds of one case pooled.  Cases without one add nothing."""
    from ..http import RT_BINS

    out: Dict[str, Dict[int, int]] = {"small": {}, "large": {}}
    for c in cases:
        hist = (c.get("http") or {}).get("rt_hist") or {}
        for part, acc in out.items():
            for pair in hist.get(part) or []:
                try:
                    k, n = (int(v) for v in pair)
                except (TypeError, ValueError):
                    k, n = -1, -1
                if not (0 <= k < RT_BINS and n >= 0):
                    raise LedgerError(f"case {c.get('id', '?')}: http.rt_hist.{part} has "
                                      f"{pair!r}, not [bin 0-{RT_BINS - 1}, count >= 0]")
                acc[k] = acc.get(k, 0) + n
    return out


def rt_curve(hist: Dict[int, int], ccdf: bool) -> Tuple[List[float], List[float]]:
    """The CDF (P(X < upper edge), at each bin's upper edge) or the CCDF
    (P(X >= lower edge), at each bin's lower edge) of a pooled histogram."""
    from ..http import rt_bin_edges_ms

    total = sum(hist.values())
    xs: List[float] = []
    ys: List[float] = []
    below = 0
    for k in sorted(hist):
        lo, hi = rt_bin_edges_ms(k)
        if ccdf:
            xs.append(lo)
            ys.append((total - below) / total)
        below += hist[k]
        if not ccdf:
            xs.append(hi)
            ys.append(below / total)
    return xs, ys


def plot_rt(path: Path, ccdf: bool, loads: Sequence[float], order: Sequence[str],
             hists: Dict[Tuple[float, str], Dict[str, Dict[int, int]]]) -> Optional[Path]:
    """Response-time CDFs (to 1500 ms, as Weigle's Figs 4.15-4.19) or CCDFs
    (log-log, Figs 4.20-4.22): a row per load, small and large responses apart."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    from ..http import SMALL_RESPONSE_MAX, WITHIN_MS

    if not any(sum(h.values()) for parts in hists.values() for h in parts.values()):
        return None
    fig, axes = plt.subplots(len(loads), 2, figsize=(8.5, 2.1 * len(loads) + 0.6),
                             squeeze=False, sharex=True)
    for row, load in enumerate(loads):
        for col, part in enumerate(("small", "large")):
            ax = axes[row][col]
            for cc in order:
                h = hists.get((load, cc), {}).get(part) or {}
                if sum(h.values()):
                    xs, ys = rt_curve(h, ccdf)
                    ax.step(xs, ys, where="post", lw=1.1,
                            label=f"{cc} ({sum(h.values()):,})")
            if ccdf:
                ax.set_xscale("log")
                ax.set_yscale("log")
            else:
                ax.set_xlim(0, WITHIN_MS)
                ax.set_ylim(0, 1)
            size = (f"\u2264 {SMALL_RESPONSE_MAX:,} B" if part == "small"
                    else f"> {SMALL_RESPONSE_MAX:,} B")
            ax.set_title(f"{load:g}% load, responses {size}", fontsize=8)
            ax.grid(alpha=0.3)
            ax.legend(fontsize=6)
            ax.tick_params(labelsize=7)
    for ax in axes[-1]:
        ax.set_xlabel("response time (ms)", fontsize=8)
    fig.suptitle(f"Response-time {'CCDF' if ccdf else 'CDF'}, seeds pooled "
                 "(responses counted in the legend)", fontsize=9)
    fig.tight_layout()
    path.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(path, dpi=100)
    plt.close(fig)
    return path
