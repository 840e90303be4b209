"""The kernel side of a case: its algorithms loaded and allowed, their variant set.

Where the case runs (this host when it loads modules, else inside a UML
instance or a VM): :func:`ensure_cc` loads an algorithm's module if needed
(:func:`synctcp.modctl.ensure_cc`), :func:`set_variant` sets the "variant"
parameter of sync and mixreact for the case, :func:`module_info` records
what was loaded (meta.json, host.json).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, Dict, Optional

from synctcp import modctl

from .errors import RunError


def ensure_cc(cc: str) -> None:
    """Make ``cc`` available and allowed (:func:`synctcp.modctl.ensure_cc`), or raise RunError."""
    try:
        modctl.ensure_cc(cc)
    except modctl.ModError as exc:
        raise RunError(str(exc)) from exc


#: the project's algorithms that have a "variant" parameter
VARIANT_CCS = ("sync", "mixreact")


def set_variant(cc: str, variant: str, sys_root: Path = Path("/sys")) -> Optional[str]:
    """Set ``cc``'s "variant" module parameter; return the value it had (None: no such cc).

    The parameter is read when a connection starts, so it holds for every
    connection of the case.  RunError when the loaded module has none (a
    build older than the parameter) or refuses the value.
    """
    if cc not in VARIANT_CCS:
        return None
    mod = modctl.module_of(cc)
    path = sys_root / "module" / str(mod) / "parameters" / "variant"
    try:
        before = path.read_text().strip()
        path.write_text(variant)
    except FileNotFoundError:
        raise RunError(f"variant {variant}: the loaded {mod} has no variant parameter "
                       f"(an older build: make modules)") from None
    except OSError as exc:
        raise RunError(f"variant {variant}: {mod} refused it ({exc.strerror})") from None
    return before


def module_info() -> Dict[str, Any]:
    """Version and parameters of the loaded synctcp modules (meta.json)."""
    return modctl.loaded_modules()
