"""The testbed's C helpers, built on first use.

``qsampler.c`` (:mod:`synctcp_testbed.measure`) samples a qdisc at >= 100
Hz, which a Python loop cannot do inside an emulated VM; ``flowgen.c``
(:mod:`synctcp_testbed.traffic`) runs every bulk and CBR flow of a case in
one process (under User-Mode Linux the wall cost is per process and per
system call).  They ship as source in the package (package data, read
through :mod:`importlib.resources`) and are compiled into
``~/.cache/synctcp/bin/`` (keyed by the source's hash, so an edited source
is rebuilt) the first time a run needs them.
"""

from __future__ import annotations

import hashlib
import os
import shutil
import subprocess
from importlib.resources import as_file, files
from importlib.resources.abc import Traversable
from pathlib import Path

#: the helpers' sources: package data of the subpackage that uses each
QSAMPLER_SOURCE = files("synctcp_testbed.measure").joinpath("qsampler.c")
FLOWGEN_SOURCE = files("synctcp_testbed.traffic").joinpath("flowgen.c")
CFLAGS = ["-O2", "-Wall", "-Wextra"]


class BuildError(RuntimeError):
    """The native helper could not be compiled."""


def cache_dir() -> Path:
    """``bin/`` of the project's cache: SYNCTCP_CACHE, as for the kernels
    (uml/build-uml.sh, scripts/umlrun), else ``$XDG_CACHE_HOME/synctcp``."""
    own = os.environ.get("SYNCTCP_CACHE")
    if own:
        return Path(own) / "bin"
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "synctcp" / "bin"


def build(source: Traversable) -> str:
    """Path of the program compiled from ``source``, compiling it if needed.

    In a UML instance on a user-space image (``SYNCTCP_UML_ROOTFS``, set by
    scripts/umlrun) the image's compiler builds it, under a name of its own:
    the image's programs are never the host's builds."""
    name = source.name.rsplit(".", 1)[0]
    src = source.read_bytes()
    toolchain = os.environ.get("SYNCTCP_UML_ROOTFS", "").encode()
    digest = hashlib.sha256(src + " ".join(CFLAGS).encode() + toolchain).hexdigest()[:12]
    out = cache_dir() / f"{name}-{digest}"
    if out.exists():
        return str(out)
    cc = shutil.which(os.environ.get("CC", "cc")) or shutil.which("gcc")
    if cc is None:
        raise BuildError(f"no C compiler to build {name} (make setup installs build-essential)")
    out.parent.mkdir(parents=True, exist_ok=True)
    tmp = out.with_suffix(f".tmp{os.getpid()}")
    with as_file(source) as path:
        res = subprocess.run([cc, *CFLAGS, "-o", str(tmp), str(path)],
                             capture_output=True, text=True)
    if res.returncode != 0:
        raise BuildError(f"compiling {source} failed:\n{res.stderr.strip()}")
    tmp.replace(out)
    return str(out)


def qsampler_path() -> str:
    """Path of the compiled qsampler, compiling it if needed."""
    return build(QSAMPLER_SOURCE)


def flowgen_path() -> str:
    """Path of the compiled flowgen, compiling it if needed."""
    return build(FLOWGEN_SOURCE)
