"""Where a run's cases execute: ``native``, ``kvm``, ``uml`` or ``tcg``.

* ``native``: this host's own kernel (root, module support, the modules
  built for it); cases run one after another in this process.
* ``uml``: User-Mode Linux on simulated time (``scripts/umlrun``,
  docs/platform.md): each case is its own instance, an unprivileged host
  process, so up to ``--jobs`` cases run side by side and give the figures
  they would alone.
* ``kvm`` / ``tcg``: the Debian kernel in a virtme-ng VM (``scripts/vmrun``),
  with or without hardware virtualisation, real time; one VM runs the cases
  one after another.

The default is ``native`` where this host can load modules, else ``uml``
(``--platform``, ``SYNCTCP_PLATFORM``).  Inside an instance the cases run
here (``here()``).
"""

from __future__ import annotations

import os
import subprocess
from dataclasses import dataclass
from pathlib import Path
from typing import Optional

from synctcp.checkout import CheckoutError, require_checkout

PLATFORMS = ("native", "kvm", "uml", "tcg")
#: the UML kernel series umlrun boots (SYNCTCP_UML_SERIES)
UML_SERIES_DEFAULT = "7.2"


class PlatformError(RuntimeError):
    """The platform asked for cannot run here; the message says why."""


@dataclass(frozen=True)
class Platform:
    name: str               # native | kvm | uml | tcg
    why: str                # how it was chosen
    here: bool = False      # the cases run in this process (native, or inside an instance)

    @property
    def real_time(self) -> bool:
        return self.name != "uml"


def inside_instance() -> Optional[str]:
    """The platform this process runs on when it is inside a VM or UML instance."""
    if os.environ.get("SYNCTCP_IN_VM") != "1":
        return None
    return os.environ.get("SYNCTCP_PLATFORM") or os.environ.get("SYNCTCP_ACCEL") or "tcg"


def cannot_load_modules() -> Optional[str]:
    """None if this host's kernel can load the modules, else why not."""
    if os.geteuid() != 0:
        return "not root"
    if not Path("/proc/modules").exists():
        return "this kernel has no module support"
    try:
        if Path("/proc/sys/kernel/modules_disabled").read_text().strip() != "0":
            return "module loading is disabled (kernel.modules_disabled)"
    except OSError:
        return "module loading is disabled"
    if not Path(f"/lib/modules/{os.uname().release}/build").is_dir():
        return f"no headers for {os.uname().release} to build the modules against"
    return None


def uml_series() -> str:
    return os.environ.get("SYNCTCP_UML_SERIES", UML_SERIES_DEFAULT)


def repo(what: str) -> Path:
    """The checkout a platform boots from (:func:`synctcp.checkout.require_checkout`);
    PlatformError when there is none."""
    try:
        return require_checkout(what)
    except CheckoutError as exc:
        raise PlatformError(str(exc)) from None


def vm_accel() -> str:
    """``kvm`` or ``tcg``: what ``scripts/vmrun`` would use (probed once, cached)."""
    try:
        vmrun = repo("the VM platform") / "scripts" / "vmrun"
        res = subprocess.run([str(vmrun), "--vm", "--which"], capture_output=True, text=True,
                             timeout=60)
    except (OSError, subprocess.SubprocessError) as exc:
        raise PlatformError(f"cannot probe the VM: {exc}") from exc
    out = res.stdout.strip()
    if res.returncode != 0 or not out:
        raise PlatformError(f"cannot probe the VM: {res.stderr.strip() or 'no answer'}")
    return out


def choose(requested: Optional[str] = None) -> Platform:
    """The platform of a run: ``requested``, else ``SYNCTCP_PLATFORM``, else the default."""
    inside = inside_instance()
    if inside:
        return Platform(inside, "inside an instance", here=True)
    name = requested or os.environ.get("SYNCTCP_PLATFORM") or None
    how = "asked for" if requested else "SYNCTCP_PLATFORM"
    if name is not None and name not in PLATFORMS:
        raise PlatformError(f"unknown platform {name!r}: one of {', '.join(PLATFORMS)}")
    if name is None:
        why = cannot_load_modules()
        if why is None:
            return Platform("native", "this host loads modules", here=True)
        return Platform("uml", f"default: this host cannot load modules ({why})")
    if name == "native":
        why = cannot_load_modules()
        if why:
            raise PlatformError(f"platform native: {why}; --platform uml runs on simulated time")
        return Platform("native", how, here=True)
    if name == "kvm":
        accel = vm_accel()
        if accel == "native":
            raise PlatformError("platform kvm: this host loads modules itself (--platform native)")
        if accel != "kvm":
            raise PlatformError("platform kvm: qemu cannot use KVM here (the probe boot "
                                "hangs or /dev/kvm is missing); --platform tcg or uml")
        return Platform("kvm", how)
    return Platform(name, how)
