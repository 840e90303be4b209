"""A pytest plugin: every skipped test and why, for ``make test``'s skip count.

pyproject.toml loads it into every pytest run of this repository (``-p
skiplog``); it does nothing unless ``SYNCTCP_SKIP_LOG`` names a directory.
Then, at the end of the session, it writes one JSON object per skip (test
id, reason, phase) to a file of its own there (``HOST[-UMLRUN]-PID-N.jsonl``, the first free N).  The
variable reaches the UML instances and VMs (scripts/vmrun forwards
``SYNCTCP_*``), which write into the checkout like the tests' results.
``scripts/make-test`` sets it per part and holds the skips against the
reviewed allow-list, ``tests/skips.toml``: a skip not on it fails
``make test``.
"""

from __future__ import annotations

import json
import os
import socket
from pathlib import Path
from typing import Any, Dict, List

import pytest

ENV = "SYNCTCP_SKIP_LOG"
_SKIPS: List[Dict[str, Any]] = []


def _reason(report: Any) -> str:
    longrepr = report.longrepr
    if isinstance(longrepr, tuple) and len(longrepr) == 3:
        reason = str(longrepr[2])
    else:
        reason = str(longrepr or "")
    return reason.removeprefix("Skipped: ").strip()


def _record(report: Any, when: str) -> None:
    if report.skipped and not hasattr(report, "wasxfail"):
        _SKIPS.append({"test": report.nodeid, "reason": _reason(report), "when": when})


def pytest_runtest_logreport(report: pytest.TestReport) -> None:
    _record(report, report.when)


def pytest_collectreport(report: pytest.CollectReport) -> None:
    _record(report, "collect")


def pytest_sessionfinish(session: pytest.Session) -> None:
    where = os.environ.get(ENV)
    if not where:
        return
    out = Path(where)
    out.mkdir(parents=True, exist_ok=True)
    # UML instances booted alike give their pytest the same host name, pid and
    # random numbers, and own-instances runs them side by side: the instance's
    # own run directory (umlrun's, unique on the host) names it too, then the
    # first free N
    where_run = Path(os.environ.get("SYNCTCP_UML_RUNDIR", "")).name
    stem = "-".join(p for p in (socket.gethostname(), where_run, str(os.getpid())) if p)
    for n in range(10000):
        path = out / f"{stem}-{n}.jsonl"
        try:
            f = path.open("x")
        except FileExistsError:
            continue
        with f:
            for skip in _SKIPS:
                f.write(json.dumps(skip) + "\n")
        return
    raise RuntimeError(f"skiplog: no free file name in {out}")
