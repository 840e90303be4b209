"""A console script whose reader has gone (``| head -1``) ends quietly with
the SIGPIPE status, never with a traceback."""

from __future__ import annotations

import os
import subprocess
import sys
from typing import List

import pytest

from synctcp.pipe import EXIT_PIPE

CASES = [["synctcp.cli", "list"],
         ["synctcp_testbed.cli", "list"], ["synctcp_testbed.cli", "show", "weigle-ftp"],
         ["synctcp_mininet.cli", "show", "gu-smallbuffer"]]


@pytest.mark.parametrize("unbuffered", ["", "1"], ids=["buffered", "PYTHONUNBUFFERED"])
@pytest.mark.parametrize("argv", CASES, ids=[" ".join(a) for a in CASES])
def test_closed_stdout_is_quiet(argv: List[str], unbuffered: str) -> None:
    env = {k: v for k, v in os.environ.items() if k != "PYTHONUNBUFFERED"}
    if unbuffered:
        env["PYTHONUNBUFFERED"] = unbuffered
    r, w = os.pipe()
    os.close(r)                  # the reader is gone before the first write
    try:
        p = subprocess.run([sys.executable, "-c", f"import sys; from {argv[0]} import main; sys.exit(main())",
                            *argv[1:]], stdout=w, stderr=subprocess.PIPE, text=True, timeout=60, env=env)
    finally:
        os.close(w)
    assert "Traceback" not in p.stderr and "Exception ignored" not in p.stderr, p.stderr
    assert p.returncode == EXIT_PIPE, (p.returncode, p.stderr)
