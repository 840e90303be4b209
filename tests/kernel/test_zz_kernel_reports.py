"""The kernel's own checkers after the whole session (collected last: zz).

Every kernel test runs in the same boot before this one, so the kernel log
holds whatever they provoked: a WARN_ON, a BUG, a lockdep splat, a KASAN or
UBSAN report, a sleeping function called from atomic context.  On the debug
kernel (``make kernel-test-debug``: KASAN, UBSAN, lockdep, KMEMLEAK,
DEBUG_ATOMIC_SLEEP) kmemleak is also scanned for objects leaked by the
modules.  Any report fails, printed in full.
"""

from __future__ import annotations

import subprocess
import time
from pathlib import Path
from typing import List

import pytest

from conftest import REPORT
from synctcp.modctl import CC_MODULES

KMEMLEAK = Path("/sys/kernel/debug/kmemleak")


def reports(lines: List[str]) -> List[str]:
    """Each report's first line and the 30 lines after it."""
    out: List[str] = []
    for i, line in enumerate(lines):
        if REPORT.search(line):
            out.append("\n".join(lines[i:i + 30]))
    return out


def test_no_kernel_report_in_the_session() -> None:
    log = subprocess.run(["dmesg"], capture_output=True, text=True, check=True).stdout
    found = reports(log.splitlines())
    assert not found, "\n\n".join(found)


def test_no_leak_by_the_modules() -> None:
    if not KMEMLEAK.exists():         # debugfs not mounted yet (its mount point is there)
        subprocess.run(["mount", "-t", "debugfs", "debugfs", str(KMEMLEAK.parent)],
                       capture_output=True, check=False)
    if not KMEMLEAK.exists():
        pytest.skip("this kernel has no kmemleak (make kernel-test-debug has)")
    # kmemleak reports an object only after it stayed unreferenced over two
    # scans, some seconds apart (its documentation: scan, wait, scan)
    for _ in range(2):
        KMEMLEAK.write_text("scan\n")
        time.sleep(6)
    leaks = [b for b in KMEMLEAK.read_text().split("unreferenced object") if b.strip()]
    ours = [b for b in leaks if any(m in b for m in CC_MODULES.values())]
    print(f"kmemleak: {len(leaks)} unreferenced objects, {len(ours)} from the modules")
    for b in leaks[:5]:
        print("unreferenced object" + b)
    assert not ours, "\n".join("unreferenced object" + b for b in ours)
