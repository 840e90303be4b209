"""The testbed's one native helper, built on first use.

``qsampler.c`` samples a qdisc at >= 100 Hz, which a Python loop cannot do
inside an emulated VM.  It ships as source in the package and is compiled
into ``~/.cache/synctcp/bin/`` (keyed by the source's hash, so an edited
source is rebuilt) the first time a run needs it.
"""

from __future__ import annotations

import hashlib
import os
import shutil
import subprocess
from pathlib import Path

SOURCE = Path(__file__).with_name("qsampler.c")


class BuildError(RuntimeError):
    """The native helper could not be compiled."""


def cache_dir() -> Path:
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "synctcp" / "bin"


def qsampler_path() -> str:
    """Path of the compiled qsampler, compiling it if needed."""
    src = SOURCE.read_bytes()
    digest = hashlib.sha256(src).hexdigest()[:12]
    out = cache_dir() / f"qsampler-{digest}"
    if out.exists():
        return str(out)
    cc = shutil.which(os.environ.get("CC", "cc")) or shutil.which("gcc")
    if cc is None:
        raise BuildError("no C compiler to build qsampler (make setup installs build-essential)")
    out.parent.mkdir(parents=True, exist_ok=True)
    tmp = out.with_suffix(f".tmp{os.getpid()}")
    res = subprocess.run([cc, "-O2", "-Wall", "-o", str(tmp), str(SOURCE)],
                         capture_output=True, text=True)
    if res.returncode != 0:
        raise BuildError(f"compiling {SOURCE} failed:\n{res.stderr.strip()}")
    tmp.replace(out)
    return str(out)
