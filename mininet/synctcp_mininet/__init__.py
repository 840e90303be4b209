"""The testbed's experiments on Mininet: topologies, a backend for the runner.

Debian's ``mininet`` package installs the ``mininet`` Python package for
the system interpreter only (``/usr/lib/python3/dist-packages``).
:func:`ensure_mininet` makes it importable from another interpreter of the
same minor version (pyenv, a venv): it appends that directory to the end of
``sys.path``, so the interpreter's own packages keep precedence.
"""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

__version__ = "0.1.0"

#: where Debian's python3-mininet lives
DEBIAN_DIST_PACKAGES = Path("/usr/lib/python3/dist-packages")


class MininetMissing(ImportError):
    """Mininet is not installed (``make setup`` installs Debian's ``mininet``)."""


def ensure_mininet() -> None:
    """Make ``import mininet`` find Mininet, or raise :class:`MininetMissing`.

    This repository's own ``mininet/`` directory (no ``__init__.py``) would
    otherwise be taken for a namespace package called ``mininet`` when the
    repository root is on ``sys.path``.
    """
    spec = importlib.util.find_spec("mininet")
    if spec is not None and spec.origin not in (None, "namespace"):
        return
    sys.modules.pop("mininet", None)
    if (DEBIAN_DIST_PACKAGES / "mininet" / "__init__.py").exists():
        if str(DEBIAN_DIST_PACKAGES) not in sys.path:
            sys.path.append(str(DEBIAN_DIST_PACKAGES))
        importlib.invalidate_caches()
        spec = importlib.util.find_spec("mininet")
        if spec is not None and spec.origin not in (None, "namespace"):
            return
    raise MininetMissing("Mininet is not installed: apt-get install mininet (make setup)")
