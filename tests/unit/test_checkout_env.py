"""Each clone runs its own code: the per-checkout environment .venv/ (scripts/venv.sh).

``make setup`` used to install this project editable into the system's
Python from whichever clone ran it: a second clone's ``make test`` re-pointed
``synctcp-testbed`` and ``synctcp`` at itself, and once it was deleted every
command failed with ``ModuleNotFoundError``.  Now each clone has its own
``.venv/`` and the system's Python gets nothing from a clone.  This test
makes two clones, runs the second's setup and a test run of it, deletes it,
and checks the first clone's commands (and the system's Python) are as
before.  It builds two editable installs: pip needs its build requirements
(setuptools, wheel) from its index or cache, as make setup does.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path
from typing import List, Optional

REPO = Path(__file__).resolve().parents[2]
#: the environment of every command here: no PYTHONPATH pointing at this checkout
ENV = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "VIRTUAL_ENV")}


def run(cmd: List[str], cwd: Optional[Path] = None, timeout: float = 600) -> str:
    res = subprocess.run([str(c) for c in cmd], cwd=cwd, env=ENV, capture_output=True,
                         text=True, timeout=timeout)
    assert res.returncode == 0, f"{cmd}: exit {res.returncode}\n{res.stdout}{res.stderr}"
    return res.stdout + res.stderr


def clone(dest: Path) -> Path:
    """A copy of this checkout's files (tracked or new, not ignored; as they are now)."""
    files = subprocess.run(["git", "-C", str(REPO), "ls-files", "-z", "--cached", "--others",
                            "--exclude-standard"], capture_output=True,
                           check=True).stdout.decode().split("\0")
    for name in filter(None, files):
        src = REPO / name
        if src.is_file():
            (dest / name).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(src, dest / name)
    return dest


def system_python() -> str:
    """Where the system's Python (the base of this one, if this is a venv's) finds
    synctcp_testbed, or why it does not."""
    base = Path(sys.base_prefix) / "bin" / "python3"
    res = subprocess.run([str(base), "-c", "import synctcp_testbed; print(synctcp_testbed.__file__)"],
                         env=ENV, capture_output=True, text=True, cwd="/")
    return res.stdout.strip() or res.stderr.strip().splitlines()[-1]


def test_a_second_clones_setup_test_run_and_deletion_leave_the_first_clones_commands(
        tmp_path: Path) -> None:
    first, second = clone(tmp_path / "first"), clone(tmp_path / "second")
    system = system_python()
    run([first / "scripts/venv.sh"])
    run([second / "scripts/venv.sh"])
    # the second clone's commands are its own
    assert run([second / ".venv/bin/python3", "-c", "import synctcp_testbed; "
                "print(synctcp_testbed.__file__)"]).strip() == \
        str(second / "testbed/synctcp_testbed/__init__.py")
    run([second / ".venv/bin/python3", "-m", "pytest", "-q", "-p", "no:cacheprovider",
         "tests/unit/test_help.py"], cwd=second)
    shutil.rmtree(second)

    bin_ = first / ".venv/bin"
    where = tmp_path                 # outside the checkout: the commands find their code
    assert "weigle-ftp " in run([bin_ / "synctcp-testbed", "list"], cwd=where)
    assert run([bin_ / "python3", "-m", "synctcp_testbed", "show", "weigle-ftp"],
               cwd=where).startswith("weigle-ftp: ")
    assert "usage: synctcp " in run([bin_ / "synctcp", "--help"], cwd=where)
    assert "usage: synctcp-mininet" in run([bin_ / "synctcp-mininet", "--help"], cwd=where)
    assert run([bin_ / "python3", "-c", "import synctcp, synctcp_testbed; "
                "print(synctcp.__file__, synctcp_testbed.__file__)"], cwd=where).split() == [
        str(first / "tools/synctcp/__init__.py"), str(first / "testbed/synctcp_testbed/__init__.py")]
    # make's targets use it: setup's venv step is quiet when it is there
    assert run(["make", "-s", "-C", first, "venv"]) == ""
    # and the system's Python is as it was: nothing was installed there
    assert system_python() == system
