"""Golden figures: the same commit and seed give the same figures on any machine (issue 34).

``make golden-test`` (and ``make platform-test``, and ``make
fresh-check-short`` in a pristine Debian 12 root).  The cases of each
``tests/platform/golden/NAME.toml`` run on User-Mode Linux on simulated time
(the default series, on the pinned user-space image of uml/build-rootfs.sh),
and every field of every case's summary (its ``cost``, the wall time it
took, aside) must equal ``NAME.json`` beside it, to the last digit.  That
file names the image (key and content hash) and the kernel binary (SHA256)
it was made with; a machine whose image or kernel differs fails too, saying
which (the figures are only promised for the same ones: docs/platform.md,
"Determinism").

After a change that moves the figures on purpose (the image's lock, the
kernel, the testbed's code), regenerate the files on a machine with that
image and kernel and commit them:

    SYNCTCP_GOLDEN_UPDATE=1 .venv/bin/python3 -m pytest -q -p no:cacheprovider tests/platform/test_golden.py
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from pathlib import Path
from typing import Any, Dict, Iterator, List, Tuple

import pytest

from synctcp_testbed.platform.run import run_scenario
from synctcp_testbed.scenario import load

REPO = Path(__file__).resolve().parents[2]
GOLDEN = Path(__file__).resolve().parent / "golden"
OUT = REPO / "results" / "golden-test"
SCENARIOS = sorted(GOLDEN.glob("*.toml"))
#: differing fields listed in a failure (the count is always given)
SHOW = 25


def figures(cases: List[Dict[str, Any]]) -> List[Dict[str, Any]]:
    """Everything a case measured (not what it cost)."""
    return [{k: v for k, v in c.items() if k != "cost"} for c in cases]


def made_with(rundir: Path) -> Dict[str, Any]:
    """The platform a run's instances had: the runner's meta.json, and the
    UML builds of kmod/ from its cases' umlrun meta.json."""
    meta = json.loads((rundir / "meta.json").read_text())
    kmods = sorted({json.loads(p.read_text()).get("kmod_sha256") or "-"
                    for p in rundir.glob("*/uml/meta.json")})
    return {"release": (meta.get("wall_cost") or {}).get("uml_release"),
            "uml_image": meta.get("uml_image"), "uml_kernel_sha256": meta.get("uml_kernel_sha256"),
            "kmod_sha256": kmods[0] if len(kmods) == 1 else kmods}


def differences(want: Any, got: Any, path: str = "") -> Iterator[Tuple[str, Any, Any]]:
    """(field, golden value, this run's) for every field that differs."""
    if isinstance(want, dict) and isinstance(got, dict):
        for k in sorted(set(want) | set(got), key=str):
            yield from differences(want.get(k, "<absent>"), got.get(k, "<absent>"),
                                   f"{path}.{k}" if path else str(k))
    elif isinstance(want, list) and isinstance(got, list) and len(want) == len(got):
        for i, (w, g) in enumerate(zip(want, got)):
            yield from differences(w, g, f"{path}[{i}]")
    elif want != got or type(want) is not type(got):
        yield path, want, got


def case_differences(want: List[Dict[str, Any]], got: List[Dict[str, Any]]
                     ) -> List[Tuple[str, Any, Any]]:
    """The differing fields, each named by its case id."""
    w = {c.get("id"): c for c in want}
    g = {c.get("id"): c for c in got}
    out: List[Tuple[str, Any, Any]] = []
    for cid in sorted(set(w) | set(g), key=str):
        if cid not in g or cid not in w:
            out.append((str(cid), "<case>" if cid in w else "<absent>",
                        "<case>" if cid in g else "<absent>"))
            continue
        out += [(f"{cid}: {p}", a, b) for p, a, b in differences(w[cid], g[cid])]
    return out


def report(name: str, diffs: List[Tuple[str, Any, Any]], want: Dict[str, Any],
           mine: Dict[str, Any]) -> str:
    lines = [f"{name}: {len(diffs)} field(s) differ from tests/platform/golden/{name}.json"]
    lines += [f"  {p}: golden {a!r}, this run {b!r}" for p, a, b in diffs[:SHOW]]
    if len(diffs) > SHOW:
        lines.append(f"  ... and {len(diffs) - SHOW} more")
    return "\n".join(lines)


def _git() -> str:
    res = subprocess.run(["git", "-C", str(REPO), "describe", "--always", "--dirty"],
                         capture_output=True, text=True)
    return res.stdout.strip() or "?"


@pytest.mark.parametrize("toml", SCENARIOS, ids=[p.stem for p in SCENARIOS])
def test_golden_figures(toml: Path) -> None:
    if os.environ.get("SYNCTCP_UML_ROOT", "image") != "image":
        pytest.fail(f"SYNCTCP_UML_ROOT={os.environ['SYNCTCP_UML_ROOT']}: the golden figures "
                    "are the pinned image's (unset it)")
    out = OUT / toml.stem
    shutil.rmtree(out, ignore_errors=True)
    run_scenario(load(str(toml)), out, log=lambda m: print(f"{toml.stem}: {m}"),
                 platform="uml", jobs=1)
    got = figures(json.loads((out / "summary.json").read_text())["cases"])
    mine = made_with(out)
    gold = toml.with_suffix(".json")
    if os.environ.get("SYNCTCP_GOLDEN_UPDATE") == "1":
        gold.write_text(json.dumps({"made_with": mine, "commit": _git(), "cases": got},
                                   indent=1) + "\n")
    assert gold.is_file(), f"no {gold.relative_to(REPO)}: SYNCTCP_GOLDEN_UPDATE=1 makes it"
    want = json.loads(gold.read_text())
    problems = []
    # the image by its content: a new key with the same content (an edit of
    # uml/build-rootfs.sh that builds the same tree) is the same image
    for m in (want["made_with"], mine):
        if isinstance(m.get("uml_image"), str):
            m["uml_image_content"] = m["uml_image"].split()[-1]
    for key, what in (("uml_image_content", "user-space image's content (uml/build-rootfs.sh)"),
                      ("uml_kernel_sha256", "kernel binary (uml/build-uml.sh)"),
                      ("kmod_sha256", "UML builds of kmod/ (uml/build-uml.sh)"),
                      ("release", "kernel release")):
        if want["made_with"].get(key) != mine.get(key):
            problems.append(f"the {what} differs: golden {want['made_with'].get(key)!r}, "
                            f"this run {mine.get(key)!r}")
    diffs = case_differences(want["cases"], got)
    if diffs:
        problems.append(report(toml.stem, diffs, want, mine))
    assert not problems, "\n".join(problems)


def test_differences_name_each_field() -> None:
    """The comparison finds a change in the last digit, a field gone, a case gone."""
    a = [{"id": "x", "goodput_mbit": 1.0, "bottlenecks": [{"drops": 3}], "flows": [1, 2]},
         {"id": "y", "goodput_mbit": 2.0}]
    b = [{"id": "x", "goodput_mbit": 1.0000000000000002, "bottlenecks": [{"drops": 3.0}],
          "flows": [1, 2, 3]}]
    got = case_differences(a, b)
    assert ("x: goodput_mbit", 1.0, 1.0000000000000002) in got
    assert ("x: bottlenecks[0].drops", 3, 3.0) in got          # an int is not a float
    assert ("x: flows", [1, 2], [1, 2, 3]) in got
    assert ("y", "<case>", "<absent>") in got
    assert case_differences(a, [dict(c) for c in a]) == []
    assert figures([{"id": "x", "cost": {"wall_s": 3}}]) == [{"id": "x"}]
