"""What produced a run's figures, and whether two runs' figures may be compared.

A run's *build* is a set of facts, each a name and a value taken from its
``meta.json``: the platform, the kernel, the source of this project's
modules (the ``kmod/`` tree of the commit that built them) and each loaded
module's version and parameters.  A figure of Reno depends on the platform
and the kernel only; a figure of one of this project's algorithms also on
its module (:func:`cc_build`).

A check compares figures of several runs (an algorithm at 10 Mbit/s in one
run with the same algorithm at 1 Gbit/s in another, or with Reno of a
third): it is decided only when every fact the runs' builds share has the
same value (:func:`differences`); otherwise the ledger says how they differ
and leaves the check undecided.  A new fact (a kernel image's hash, say) is
one more function in :data:`RUN_FACTS` or :data:`MODULE_FACTS`.
"""

from __future__ import annotations

import functools
import subprocess
from pathlib import Path
from typing import Callable, Dict, Iterable, List, Optional, Sequence, Tuple

from synctcp.checkout import package_checkout
from synctcp.modctl import module_of

from ..rundir import Run

#: one run's facts: name -> value (a fact not recorded is absent, not compared)
Build = Dict[str, str]


def base_cc(label: str) -> str:
    """``sync`` of the ledger's label ``sync (paper)``."""
    return label.split(" ")[0]


@functools.lru_cache(maxsize=None)
def _kmod_tree(where: str, commit: str) -> Optional[str]:
    """The ``kmod/`` tree of ``commit`` in the repository ``where`` lies in, if git knows it."""
    try:
        res = subprocess.run(["git", "-C", where, "rev-parse", "--verify", "-q",
                              f"{commit}:kmod"], capture_output=True, text=True, timeout=10)
    except (OSError, subprocess.SubprocessError):
        return None
    out = res.stdout.strip()
    return out[:12] if res.returncode == 0 and out else None


def kmod_source(run: Run) -> Tuple[Optional[str], str]:
    """The source of the run's modules: (its identity, how it was found).

    ``meta.json``'s ``kmod_tree`` (recorded since the ledger compares
    builds), else the ``kmod/`` tree of the run's commit looked up with git
    in the repository the run directory or this package lies in, else the
    commit itself (a run of a commit with uncommitted changes is only that).
    """
    recorded = run.meta.get("kmod_tree")
    if recorded:
        if str(recorded).endswith("-dirty"):      # uncommitted changes: like no other run's
            return f"kmod/ tree {recorded} of `{run.path.name}`", "recorded"
        return f"kmod/ tree {recorded}", "recorded"
    commit = str(run.meta.get("git") or "")
    if not commit:
        return None, "no commit recorded"
    if not commit.endswith("-dirty"):
        for where in (run.path, package_checkout()):
            if where is not None and Path(where).is_dir():
                tree = _kmod_tree(str(Path(where).resolve()), commit)
                if tree:
                    return f"kmod/ tree {tree}", f"of commit {commit}"
    return f"commit {commit}", "its kmod/ tree unknown here"


def _platform(run: Run) -> Build:
    out = {}
    if run.meta.get("platform"):
        out["platform"] = str(run.meta["platform"])
    kernel = run.meta.get("kernel")
    if kernel:
        out["kernel"] = ", ".join(kernel) if isinstance(kernel, list) else str(kernel)
    return out


def _modules_source(run: Run, module: str) -> Build:
    source, _ = kmod_source(run)
    return {"modules' source": source} if source else {}


def _module_record(run: Run, module: str) -> Build:
    """The module's version and parameters as the run recorded them (not its
    ``variant``: a case sets it, and the ledger names it in the algorithm's label)."""
    rec = (run.meta.get("modules") or {}).get(module)
    if not isinstance(rec, dict):
        return {}
    out = {f"{module} version": str(rec["version"])} if rec.get("version") else {}
    for key, value in sorted((rec.get("params") or {}).items()):
        if key != "variant":
            out[f"{module} {key}"] = str(value)
    return out


#: the facts of a run every figure of it depends on
RUN_FACTS: List[Callable[[Run], Build]] = [_platform]
#: the facts a figure of one of this project's modules depends on as well
MODULE_FACTS: List[Callable[[Run, str], Build]] = [_modules_source, _module_record]


def cc_build(run: Run, cc: str) -> Build:
    """The facts the figures of algorithm ``cc`` (a ledger label) in ``run`` depend on."""
    out: Build = {}
    for fact in RUN_FACTS:
        out.update(fact(run))
    module = module_of(base_cc(cc))
    if module:
        for mfact in MODULE_FACTS:
            out.update(mfact(run, module))
    return out


def differences(sources: Iterable[Tuple[str, Run]], name: Callable[[Run], str]) -> List[str]:
    """How the builds of ``sources`` (algorithm, run) differ, one line per fact
    two of them record differently (empty: they may be compared)."""
    builds: Dict[Tuple[str, Path], Tuple[str, Run, Build]] = {}
    for cc, run in sources:
        builds.setdefault((cc, run.path), (cc, run, cc_build(run, cc)))
    out: List[str] = []
    items = list(builds.values())
    for key in sorted({k for _, _, b in items for k in b}):
        having = [(cc, run, b[key]) for cc, run, b in items if key in b]
        if len({v for _, _, v in having}) > 1:
            by_value: Dict[str, List[str]] = {}
            for cc, run, v in having:
                label = f"{cc} in `{name(run)}`"
                if label not in by_value.setdefault(v, []):
                    by_value[v].append(label)
            out.append(f"{key}: " + "; ".join(f"{v} ({', '.join(who)})"
                                              for v, who in by_value.items()))
    return out


def describe(run: Run, modules: Sequence[str]) -> str:
    """The run's modules for its provenance line: versions and source."""
    if not modules:
        return ""
    source, how = kmod_source(run)
    recs = run.meta.get("modules") or {}
    named = [f"{m} {recs[m]['version']}" if isinstance(recs.get(m), dict) and recs[m].get("version")
             else f"{m} (version not recorded)" for m in modules]
    return (f"modules {', '.join(named)} from {source or 'an unknown source'}"
            + (f" ({how})" if how != "recorded" else ""))
