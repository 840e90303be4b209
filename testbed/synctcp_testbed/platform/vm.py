"""Cases in a VM (``kvm`` or ``tcg``): one virtme-ng VM booting the Debian kernel runs
them all, in real time, one after another (``scripts/vmrun`` running
:mod:`synctcp_testbed.platform.worker`)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path
from typing import List

from .choose import Platform, repo
from .prepare import pythonpath


def run_in_vm(plat: Platform, case_ids: List[str], out: Path, capture: bool,
              backend: str) -> None:
    """Run the cases ``case_ids`` of ``out/plan.json`` in one VM, into ``out/CASE``."""
    env = dict(os.environ, PYTHONPATH=pythonpath(), SYNCTCP_PLATFORM=plat.name)
    top = repo(f"the {plat.name} platform")
    cmd = [str(top / "scripts" / "vmrun"), "--platform", plat.name, "--", sys.executable,
           "-m", "synctcp_testbed.platform.worker", str(out), *case_ids,
           "--backend", backend, *(["--capture"] if capture else [])]
    subprocess.run(cmd, stdin=subprocess.DEVNULL, env=env, cwd=str(top))
