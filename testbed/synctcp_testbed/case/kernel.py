"""The kernel side of a case: its algorithms loaded and allowed, their variant set.

Where the case runs (this host when it loads modules, else inside a UML
instance or a VM): :func:`ensure_cc` loads an algorithm's module if needed
(:func:`synctcp.modctl.ensure_cc`), :func:`set_variant` sets the "variant"
parameter of sync and mixreact for the case, :func:`set_module_params`
the scenario's other module parameters, :func:`module_info` records what
was loaded (meta.json, host.json).
"""

from __future__ import annotations

import difflib
import os
from pathlib import Path
from typing import Any, Dict, List, Optional, Sequence

from synctcp import modctl

from .errors import RunError


#: Linux's own congestion-control algorithms (net/ipv4/Kconfig, as their modules
#: register them): the UML kernel builds them all in (uml/uml.config), Debian's
#: kernel has them as modules
LINUX_CCS = ("reno", "cubic", "bic", "westwood", "htcp", "highspeed", "hybla", "vegas", "nv",
             "scalable", "lp", "veno", "yeah", "illinois", "dctcp", "cdg", "bbr")


def loadable_ccs(here: bool, root: Path = Path("/")) -> List[str]:
    """The algorithms a case can run: Linux's, this project's, and where cases run on
    this host (``here``) also what its kernel has available or installed as a module."""
    out = dict.fromkeys([*LINUX_CCS, *modctl.CC_MODULES])
    if here:
        try:
            out.update(dict.fromkeys((root / "proc/sys/net/ipv4/tcp_available_congestion_control")
                                     .read_text().split()))
        except OSError:
            pass
        mods = root / "lib/modules" / os.uname().release
        for ko in mods.glob("**/tcp_*.ko*") if mods.is_dir() else ():
            out[ko.name.split(".", 1)[0][len("tcp_"):]] = None
    return list(out)


def check_ccs(ccs: Sequence[str], here: bool) -> None:
    """RunError naming every algorithm of ``ccs`` no case could run (before anything
    is built or started), with the closest known name."""
    known = loadable_ccs(here)
    bad = [cc for cc in dict.fromkeys(ccs) if cc not in known]
    if not bad:
        return
    hints = []
    for cc in bad:
        close = difflib.get_close_matches(cc, known, n=1)
        hints.append(f"{cc!r}" + (f" (did you mean {close[0]!r}?)" if close else ""))
    raise RunError(f"unknown congestion control {', '.join(hints)}: not one of Linux's "
                   f"or this project's ({', '.join(known)})")


def check_kernel(sc: Any, release: Optional[str] = None,
                 aqms: Optional[Sequence[str]] = None) -> None:
    """RunError (one line) when the cases of scenario ``sc`` need what a kernel of
    ``release`` (default: this one's) lacks: a queue discipline (dualpi2 on
    6.1) or AccECN (:meth:`~..scenario.model.Scenario.kernel_problems`)."""
    found = sc.kernel_problems(release or os.uname().release, list(aqms) if aqms else None)
    if found:
        raise RunError("; ".join(found))


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
