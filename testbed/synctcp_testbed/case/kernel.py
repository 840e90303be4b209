"""The kernel side of a case: its algorithms loaded and allowed, their variant set.

Where the case runs (this host when it loads modules, else inside a UML
instance or a VM): :func:`ensure_cc` loads an algorithm's module if needed
(:func:`synctcp.modctl.ensure_cc`), :func:`set_variant` sets the "variant"
parameter of sync and mixreact for the case, :func:`set_module_params`
the scenario's other module parameters, :func:`module_info` records what
was loaded (meta.json, host.json).
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


def set_module_params(cc: str, params: Dict[str, Any],
                      sys_root: Path = Path("/sys")) -> Dict[str, str]:
    """Set module parameters of ``cc``'s module (scenario ``module_params``);
    return the values they had, for :func:`restore_module_params`.  RunError
    naming the parameter when the loaded module has none of that name or
    refuses the value."""
    mod = modctl.module_of(cc)
    if mod is None:
        raise RunError(f"module_params.{cc}: {cc} is not one of this project's modules")
    before: Dict[str, str] = {}
    try:
        for name, value in params.items():
            path = sys_root / "module" / mod / "parameters" / name
            try:
                old = path.read_text().strip()
                path.write_text(str(value))
            except FileNotFoundError:
                raise RunError(f"module_params.{cc}.{name}: the loaded {mod} has no such "
                               f"parameter (modinfo {mod} lists them)") from None
            except OSError as exc:
                raise RunError(f"module_params.{cc}.{name}: {mod} refused {value!r} "
                               f"({exc.strerror})") from None
            before[name] = old
    except RunError:
        restore_module_params(cc, before, sys_root)
        raise
    return before


def restore_module_params(cc: str, before: Dict[str, str],
                          sys_root: Path = Path("/sys")) -> None:
    """Give ``cc``'s module the parameter values :func:`set_module_params` found."""
    mod = modctl.module_of(cc)
    for name, value in before.items():
        try:
            (sys_root / "module" / str(mod) / "parameters" / name).write_text(value)
        except OSError:
            pass        # the module went away meanwhile: nothing to restore


def module_info() -> Dict[str, Any]:
    """Version and parameters of the loaded synctcp modules (meta.json)."""
    return modctl.loaded_modules()
