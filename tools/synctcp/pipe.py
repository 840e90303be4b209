"""Console scripts whose reader goes away (``synctcp-testbed list | head -1``)."""

from __future__ import annotations

import os
import sys

EXIT_PIPE = 128 + 13        # as a shell reports a command killed by SIGPIPE


def stdout_closed() -> int:
    """Silence the rest of the output, as other Unix tools are silent, and
    give the SIGPIPE status: no traceback for a closed pipe."""
    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
    except (OSError, ValueError):
        pass
    return EXIT_PIPE
