"""What a platform's instances need before the first case, and where they import this code.

:func:`prepare` compiles the C helpers and byte-compiles the packages here
(every instance then loads the same ``.pyc`` files and none writes any:
docs/platform.md, "Determinism"), then checks the UML kernel
(``uml/build-uml.sh``) and builds the C helpers again in an instance, by the
user-space image's compiler, or builds the modules (``make modules``) of the
checkout.  :func:`pythonpath` is the ``PYTHONPATH`` an instance gets: the
directories this process imported the packages from, so an instance runs
the same code whether it comes from a checkout or an installed wheel.
"""

from __future__ import annotations

import importlib.util
import os
import subprocess
import sys
import threading
from pathlib import Path
from typing import Any, Callable, Dict, List

from .choose import Platform, PlatformError, repo, uml_series
from .helpers import flowgen_path, qsampler_path

Log = Callable[[str], None]

#: the packages an instance imports, as this process does
PACKAGES = ("synctcp", "synctcp_testbed", "synctcp_mininet")


def package_dirs() -> List[Path]:
    """The directory of each of :data:`PACKAGES` this process imports (or would)."""
    dirs = []
    for name in PACKAGES:
        spec = importlib.util.find_spec(name)
        if spec is not None and spec.submodule_search_locations:
            dirs.append(Path(list(spec.submodule_search_locations)[0]).resolve())
    return dirs


def pythonpath() -> str:
    """PYTHONPATH of an instance: where this process found the packages, then the caller's."""
    own = [str(d.parent) for d in package_dirs()]
    own = list(dict.fromkeys(own))
    old = [p for p in os.environ.get("PYTHONPATH", "").split(":") if p and p not in own]
    return ":".join(own + old)


def prepare(plat: Platform, log: Log) -> Dict[str, Any]:
    """Build what the platform's instances need; what they will run on."""
    qsampler_path()                 # compiled here: fast, and the instances share them
    flowgen_path()
    # Byte-compile the packages here, so that every instance loads the same
    # .pyc files and none writes them (PYTHONDONTWRITEBYTECODE inside): a
    # process's own work moves simulated time by microseconds (each clock read
    # costs 256 ns), so an instance that compiled while another loaded would
    # not repeat it (docs/platform.md, "Determinism").
    compileall = subprocess.run([sys.executable, "-m", "compileall", "-q",
                                 *(str(d) for d in package_dirs())],
                                capture_output=True, text=True)
    if compileall.returncode != 0:
        raise PlatformError(f"python -m compileall: {compileall.stdout.strip()[-300:]}")
    if plat.here:
        return {}
    if plat.name == "uml":
        if _PREPARED.get("uml"):
            return {"series": uml_series()}
        series = uml_series()
        log(f"UML {series}: checking the kernel and the modules built for it "
            f"(uml/build-uml.sh; the first build takes 10-15 minutes)")
        top = repo("the uml platform")
        res = subprocess.run(["nice", "-n", "10", str(top / "uml" / "build-uml.sh"),
                              "--series", series], stdout=subprocess.DEVNULL,
                             stderr=subprocess.PIPE, text=True)
        if res.returncode != 0:
            # the cause (build-rootfs's or the kernel build's own line) comes
            # before build-uml's last one, which only names the stage
            raise PlatformError(f"UML {series} kernel: "
                                + " | ".join(res.stderr.strip().splitlines()[-2:]))
        if os.environ.get("SYNCTCP_UML_ROOT", "image") != "host":
            # the C helpers for the instances' user-space image, built by its
            # compiler in an instance of their own (helpers.build)
            res = subprocess.run(
                [str(top / "scripts" / "umlrun"), "--", "python3", "-c",
                 "from synctcp_testbed.platform.helpers import flowgen_path, qsampler_path; "
                 "qsampler_path(); flowgen_path()"],
                stdin=subprocess.DEVNULL, capture_output=True, text=True, cwd=str(top),
                env=dict(os.environ, PYTHONPATH=pythonpath()))
            if res.returncode != 0:
                raise PlatformError("the C helpers in the UML image: "
                                    + " | ".join(res.stderr.strip().splitlines()[-3:]))
        _PREPARED["uml"] = True
        return {"series": series}
    res = subprocess.run(["make", "-s", "-C", str(repo(f"the {plat.name} platform")), "modules"],
                         capture_output=True,
                         text=True)
    if res.returncode != 0:
        raise PlatformError(f"make modules: {res.stderr.strip()[-300:]}")
    return {}


_prepared = threading.Lock()
_PREPARED: Dict[str, bool] = {}


def prepare_once() -> None:
    """What a case needs on this host (a Dask worker's first case): :func:`prepare`, once."""
    with _prepared:
        if not _PREPARED.get("uml"):
            prepare(Platform("uml", "a worker"), lambda m: None)
