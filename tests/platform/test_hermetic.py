"""A test that compares figures gives the same figures whatever ran before it (issue 33).

In one UML instance the kernel's random generator and clock carry over from
test to test, and move the next test's figures: Reno's median 100 kB
response was 1076, 1076 and 1057 ms in three runs one after another in one
instance, each started at a whole simulated second, and 1076 or 1067 ms for
the second run depending only on whether 16 bytes were read from
/dev/urandom before it (docs/platform.md, "Figures that depend on the tests
before").  So ``make kernel-test`` runs the tests marked ``figures`` each in
an instance of its own (scripts/own-instances).  This test runs two of them
in both orders, one instance after the other, and then both at once (each
instance its own results directory at the one path, ``--jobs 2``), and
requires every figure they print to be the same.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Dict, List

import pytest

REPO = Path(__file__).resolve().parents[2]
NODES = ["tests/kernel/test_short_flows.py::test_sync_answers_100kb_faster_than_reno",
         "tests/kernel/test_tcp_sync.py::test_sync_queue_well_below_renos_near_renos_goodput"]
SUMMARY = REPO / "results" / "kernel-tests" / "own-instances" / "summary.json"


def figures(reverse: bool, jobs: int = 1) -> Dict[str, List[str]]:
    """Each test's FIGURES lines, from one own-instances run (its summary.json)."""
    r = subprocess.run([sys.executable, str(REPO / "scripts" / "own-instances"), "--series", "7.2",
                        "--jobs", str(jobs), *(["--reverse"] if reverse else []), *NODES],
                       cwd=REPO, capture_output=True, text=True, timeout=3600,
                       env=dict(os.environ, SYNCTCP_UML_SEED="1"))
    assert r.returncode == 0, r.stdout + r.stderr
    return {t["node"]: t["figures"] for t in json.loads(SUMMARY.read_text())}


def test_figures_tests_give_the_same_figures_in_either_order() -> None:
    if os.geteuid() != 0:
        pytest.skip("needs root (UML instances: make platform-test)")
    fwd, rev = figures(False), figures(True)
    assert list(fwd) == NODES and all(fwd.values()), fwd
    for node, lines in fwd.items():
        print(f"{node}:\n  first:  {lines}\n  second: {rev.get(node)}")
    assert list(rev) == NODES[::-1], rev
    assert fwd == rev
    both = figures(False, jobs=2)
    print(f"both at once: {both}")
    assert both == fwd
