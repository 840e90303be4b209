"""``summary.csv`` and ``groups.csv``: a run's figures as flat tables.

:func:`write_summary_csv` is the one writer of both (the runner's command
calls it too), so the files are the same whether written during or after a
run.  summary.csv has one row per case and bottleneck; groups.csv one row
per case group (its repetitions), metric and reference algorithm, with the
mean and 95% interval (:func:`.stats.groups`).
"""

from __future__ import annotations

import csv
from pathlib import Path
from typing import Any, Dict, List, Tuple

from .rundir import Run, RunLike, as_run
from .stats import HTTP_KEYS, estimate, groups

# summary.csv: one row per case and bottleneck; columns in this order, then
# any further scalar fields of the records (sorted), so nothing is lost.
CASE_COLUMNS = ("case", "cc", "aqm", "t_start", "t_end", "duration_s")
BOTTLENECK_COLUMNS = ("link", "rate_mbit", "samples", "sample_hz", "mean_pkts", "p95_pkts",
                      "max_pkts", "mean_delay_ms", "p95_delay_ms", "p99_delay_ms", "drops", "marks",
                      "sent_pkts",
                      "drop_pct", "mark_pct", "utilization")
CASE_TAIL_COLUMNS = ("goodput_mbit", "retransmits", "flows", "platform_ceiling_mbit")
SUMMARY_COLUMNS = (CASE_COLUMNS + BOTTLENECK_COLUMNS + CASE_TAIL_COLUMNS
                   + tuple(f"http_{k}" for k in HTTP_KEYS))


def _is_scalar(v: Any) -> bool:
    """True for values that fit in one CSV cell."""
    return v is None or isinstance(v, (str, int, float, bool))


def _csv_cell(v: Any) -> str:
    """CSV text of a summary value: empty for null, 0/1 for booleans."""
    if v is None:
        return ""
    if isinstance(v, bool):
        return str(int(v))
    return str(v)


def summary_rows(run: Run) -> Tuple[List[str], List[Dict[str, Any]]]:
    """Columns and flat rows of summary.csv: one per case and bottleneck.

    A case without bottleneck records still gets one row (empty link
    columns).  ``flows`` is the number of per-flow records.
    """
    rows: List[Dict[str, Any]] = []
    extra: Dict[str, None] = {}
    known = set(SUMMARY_COLUMNS) | {"id", "bottlenecks", "http"}
    for case in run.cases:
        raw = case.summary.raw
        base: Dict[str, Any] = {"case": case.id, "cc": case.summary.cc, "aqm": case.summary.aqm}
        for k, v in raw.items():
            if k not in ("id", "cc", "aqm", "bottlenecks", "http", "flows") and _is_scalar(v):
                base[k] = v
        base["flows"] = len(case.summary.flows)
        for k, v in (case.summary.http or {}).items():
            if _is_scalar(v):
                base[f"http_{k}"] = v
        bns = [b.raw for b in case.summary.bottlenecks] or [{}]
        for bn in bns:
            row = dict(base)
            row.update({k: v for k, v in bn.items() if _is_scalar(v) and k not in CASE_COLUMNS})
            rows.append(row)
            extra.update((k, None) for k in row if k not in known)
    return list(SUMMARY_COLUMNS) + sorted(extra), rows


def write_summary_csv(rundir: RunLike) -> Path:
    """Write ``RUN/summary.csv`` and ``RUN/groups.csv`` from ``RUN/summary.json``.

    This is the one writer of both (the runner calls it too), so that the
    files are the same whether written during or after a run.  Returns the
    path of summary.csv.
    """
    run = as_run(rundir)
    columns, rows = summary_rows(run)
    path = run.path / "summary.csv"
    with open(path, "w", newline="") as fh:
        w = csv.writer(fh, lineterminator="\n")
        w.writerow(columns)
        for row in rows:
            w.writerow([_csv_cell(row.get(c)) for c in columns])
    with open(run.path / "groups.csv", "w", newline="") as fh:
        w = csv.writer(fh, lineterminator="\n")
        w.writerow(GROUP_COLUMNS)
        for row in group_rows(run):
            w.writerow([_csv_cell(row.get(c)) for c in GROUP_COLUMNS])
    return path


#: groups.csv: one row per case group (its repetitions), metric and reference
GROUP_COLUMNS = ("group", "cc", "aqm", "point", "n", "seeds", "metric", "ratio_to", "mean",
                 "ci95", "lo", "hi")


def run_groups(run: Run) -> List[Dict[str, Any]]:
    """The run's case groups (stats.groups of its cases)."""
    return groups([c.summary.raw for c in run.cases])


def group_rows(run: Run) -> List[Dict[str, Any]]:
    """The rows of groups.csv: each group's metrics, then its ratios to Reno and CUBIC."""
    rows = []
    for g in run_groups(run):
        base = {"group": g["group"], "cc": g["cc"], "aqm": g["aqm"],
                "point": ";".join(f"{k}={v}" for k, v in g["point"].items()), "n": g["n"],
                "seeds": " ".join(str(x) for x in g["seeds"])}
        items = [(m, "", d) for m, d in g["metrics"].items()]
        items += [(m, ref, d) for ref, got in g["ratios"].items() for m, d in got.items()]
        for metric, ref, d in items:
            e = estimate(d)
            assert e is not None
            rows.append({**base, "metric": metric, "ratio_to": ref, "mean": e.mean, "ci95": e.ci,
                         "lo": e.lo, "hi": e.hi})
    return rows
