"""The synctcp repository, for the few things that need it rather than the package.

The Python packages need no checkout: an installed wheel carries its
scenarios and C sources as package data.  Booting a platform does
(``scripts/umlrun``, ``scripts/vmrun``, ``uml/build-uml.sh``, ``make
modules``), and so do the modules built in ``kmod/``.  Those find the
checkout here: ``SYNCTCP_REPO`` when it is set, else the checkout these
packages are imported from (``PYTHONPATH=tools:testbed:mininet`` or the
editable install of ``make setup``).
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Optional

ENV = "SYNCTCP_REPO"
#: files only a synctcp checkout has
MARKERS = ("kmod/Kbuild", "scripts/umlrun", "uml/build-uml.sh")


class CheckoutError(RuntimeError):
    """No synctcp checkout where one is needed; the message says how to give one."""


def _missing(path: Path) -> Optional[str]:
    """The first marker ``path`` lacks, None for a checkout."""
    return next((m for m in MARKERS if not (path / m).exists()), None)


def package_checkout() -> Optional[Path]:
    """The checkout this file lies in (tools/synctcp/checkout.py), if it does."""
    top = Path(__file__).resolve().parents[2]
    return top if _missing(top) is None else None


def checkout() -> Optional[Path]:
    """``SYNCTCP_REPO`` if it names a checkout, else the package's own checkout, else None."""
    env = os.environ.get(ENV)
    if env:
        path = Path(env).expanduser().resolve()
        return path if _missing(path) is None else None
    return package_checkout()


def require_checkout(what: str) -> Path:
    """The checkout, or CheckoutError naming ``what`` needs it and how to give it."""
    env = os.environ.get(ENV)
    if env:
        path = Path(env).expanduser().resolve()
        missing = _missing(path)
        if missing:
            raise CheckoutError(f"{what}: {ENV}={env} is not a synctcp checkout (no {missing})")
        return path
    own = package_checkout()
    if own is None:
        raise CheckoutError(f"{what} needs a synctcp checkout (scripts/umlrun, uml/, kmod/); "
                            f"this package is installed outside one: set {ENV} to a clone")
    return own
