"""The testbed's experiments on Mininet: topologies, a backend for the runner.

Debian's ``mininet`` package installs the ``mininet`` Python package for
the system interpreter only (``/usr/lib/python3/dist-packages``).
:func:`ensure_mininet` makes it importable from another interpreter of the
same minor version (pyenv, a venv): it puts a directory holding only a link
to Debian's ``mininet`` at the end of ``sys.path``.  Appending all of
dist-packages would also mix Debian's copies of other packages into the
interpreter's (e.g. the ``mpl_toolkits`` namespace of two matplotlibs).
"""

from __future__ import annotations

import importlib.util
import os
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
    debian = DEBIAN_DIST_PACKAGES / "mininet"
    if (debian / "__init__.py").exists():
        cache = Path(os.environ.get("XDG_CACHE_HOME", Path.home() / ".cache"))
        only = cache / "synctcp" / "python-mininet"
        link = only / "mininet"
        if not link.exists():
            only.mkdir(parents=True, exist_ok=True)
            tmp = only / f".mininet.{os.getpid()}"
            tmp.unlink(missing_ok=True)
            tmp.symlink_to(debian)
            os.replace(tmp, link)
        if str(only) not in sys.path:
            sys.path.append(str(only))
        importlib.invalidate_caches()
        spec = importlib.util.find_spec("mininet")
        if spec is not None and spec.origin not in (None, "namespace"):
            return
    raise MininetMissing("Mininet is not installed: apt-get install mininet (make setup)")
