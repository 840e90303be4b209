"""A built wheel works outside the checkout: scenarios and C sources are package data.

The package finds its presets (``scenario/presets/*.toml``) and its C helpers
(``measure/qsampler.c``, ``traffic/flowgen.c``) through importlib.resources,
never through the checkout around it.  The wheel is built with ``pip wheel``,
installed into a throwaway venv (which sees the system's libraries, not this
checkout) and run from a directory outside the repository.  pip needs its
build requirements (setuptools, wheel) from its index or cache.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path
from typing import List
from zipfile import ZipFile

REPO = Path(__file__).resolve().parents[2]
ENV = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "VIRTUAL_ENV")}
BASE = Path(sys.base_prefix) / "bin" / "python3"


def run(cmd: List[object], cwd: Path) -> str:
    res = subprocess.run([str(c) for c in cmd], cwd=cwd, env=ENV, capture_output=True,
                         text=True, timeout=600)
    assert res.returncode == 0, f"{cmd}: exit {res.returncode}\n{res.stdout}{res.stderr}"
    return res.stdout


def test_a_built_wheel_lists_shows_and_compiles_outside_the_checkout(tmp_path: Path) -> None:
    run([BASE, "-m", "pip", "wheel", "-q", "--no-deps", "-w", tmp_path / "dist", REPO], tmp_path)
    wheel = next((tmp_path / "dist").glob("synctcp-*.whl"))
    names = ZipFile(wheel).namelist()
    assert "synctcp_testbed/scenario/presets/weigle-ftp.toml" in names
    assert {"synctcp_testbed/measure/qsampler.c", "synctcp_testbed/traffic/flowgen.c"} <= set(names)
    venv = tmp_path / "venv"
    run([BASE, "-m", "venv", "--system-site-packages", venv], tmp_path)
    run([venv / "bin/python3", "-m", "pip", "install", "-q", "--no-deps", wheel], tmp_path)
    away = tmp_path / "elsewhere"
    away.mkdir()
    listed = run([venv / "bin/synctcp-testbed", "list"], away)
    from synctcp_testbed.scenario import presets
    assert [ln.split()[0] for ln in listed.splitlines()] == sorted(presets())   # every preset
    shown = run([venv / "bin/synctcp-testbed", "show", "weigle-ftp"], away)
    assert shown.startswith("weigle-ftp: ") and "  sync-droptail" in shown
    # the installed package's own files, and its C source compiled from package data
    got = run([venv / "bin/python3", "-c", "import os, synctcp_testbed as t; "
               "os.environ['SYNCTCP_CACHE'] = os.getcwd(); "
               "from synctcp_testbed.platform.helpers import qsampler_path; "
               "print(t.__file__); print(qsampler_path())"], away).split()
    assert got[0].startswith(str(venv)) and got[1].startswith(str(away / "bin" / "qsampler-"))
