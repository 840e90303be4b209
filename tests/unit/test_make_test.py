"""make test runs every part and counts skips (scripts/make-test, tests/skiplog.py,
tests/skips.toml; issue 33 item 3, issue 31 item 2)."""

from __future__ import annotations

import subprocess
import sys
import tomllib
from importlib.machinery import SourceFileLoader
from importlib.util import module_from_spec, spec_from_loader
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
_loader = SourceFileLoader("make_test", str(REPO / "scripts" / "make-test"))
make_test = module_from_spec(spec_from_loader("make_test", _loader))   # type: ignore[arg-type]
sys.modules["make_test"] = make_test         # its dataclasses look their module up
_loader.exec_module(make_test)

MAKEFILE = """\
ok:
\t@echo fine
broken:
\t@exit 3
skipping:
\t@{python} -m pytest -q -p no:cacheprovider -c {ini} {tests}
"""
TESTS = """\
import pytest

def test_runs():
    pass

def test_excused():
    pytest.skip("needs a GPS receiver here")

def test_loose():
    pytest.skip("the host was busy")
"""


def _tree(tmp_path: Path) -> Path:
    (tmp_path / "t").mkdir()
    (tmp_path / "t" / "test_s.py").write_text(TESTS)
    # the repository's own pytest settings: the skiplog plugin on its pythonpath
    ini = tmp_path / "pytest.ini"
    ini.write_text(f"[pytest]\npythonpath = {REPO / 'tests'}\naddopts = -p skiplog\n")
    (tmp_path / "Makefile").write_text(MAKEFILE.format(python=sys.executable, ini=ini,
                                                       tests=tmp_path / "t"))
    (tmp_path / "skips.toml").write_text(
        '[[skip]]\ntest = "*test_s.py::test_excused"\nreason = "needs a GPS receiver"\n'
        'why = "no GPS on a CI host: tests/unit/test_clock.py covers the decoding"\n')
    return tmp_path


def _run(tmp_path: Path, *parts: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, str(REPO / "scripts" / "make-test"), "-C",
                           str(tmp_path), "--allow", str(tmp_path / "skips.toml"), *parts],
                          capture_output=True, text=True, timeout=300)


def test_every_part_runs_and_the_failed_ones_are_named(tmp_path: Path) -> None:
    r = _run(_tree(tmp_path), "broken", "ok", "broken-too")
    assert r.returncode == 1
    out = r.stdout
    # the part after the failing one ran; the table has every part, with its wall time
    assert "make-test: ok" in out and "fine" in out
    lines = {ln.split()[0]: ln.split() for ln in out.splitlines() if ln.startswith("  ")
             and len(ln.split()) >= 3}
    assert lines["broken"][1] == "FAIL" and lines["ok"][1] == "pass"
    assert lines["broken-too"][1] == "FAIL" and "(exit" in " ".join(lines["broken-too"])
    assert out.rstrip().splitlines()[-1].startswith("make test: FAILED: broken, broken-too in ")


def test_a_skip_not_on_the_allow_list_fails_and_an_excused_one_is_printed(tmp_path: Path) -> None:
    r = _run(_tree(tmp_path), "ok", "skipping")
    assert r.returncode == 1, r.stdout + r.stderr
    out = r.stdout
    assert "Skips the allow-list excuses (tests/skips.toml), 1:" in out
    assert "[skipping] " in out and "test_s.py::test_excused: needs a GPS receiver here" in out
    assert "excused: no GPS on a CI host" in out
    assert "Skips NOT on the allow-list, 1" in out and "test_loose: the host was busy" in out
    assert out.rstrip().splitlines()[-1].startswith("make test: FAILED: skips in ")
    # excused, it passes
    allow = (tmp_path / "skips.toml").read_text()
    (tmp_path / "skips.toml").write_text(allow + '[[skip]]\ntest = "*::test_loose"\nreason = '
                                         '"busy"\nwhy = "a made-up excuse for this test"\n')
    r = _run(tmp_path, "ok", "skipping")
    assert r.returncode == 0, r.stdout
    assert r.stdout.rstrip().splitlines()[-1].startswith("make test: all passed in ")


def test_the_same_excused_skip_in_many_runs_is_one_line_with_its_count() -> None:
    allow = [make_test.Excuse(test="*::test_x", reason="no kmemleak", part="", why="debug kernel only")]
    skip = {"test": "t.py::test_x", "reason": "this kernel has no kmemleak"}
    other = {"test": "u.py::test_x", "reason": "this kernel has no kmemleak"}
    failed, text = make_test.report([("kernel-test", 0, 1.0)],
                                    {"kernel-test": [skip, skip, skip, other]}, allow)
    assert not failed
    assert "excuses (tests/skips.toml), 4:" in text
    assert text.count("t.py::test_x: this kernel has no kmemleak (x3)") == 1
    assert "u.py::test_x: this kernel has no kmemleak\n" in text
    assert text.count("excused: debug kernel only") == 2


def test_the_allow_list_is_short_and_every_entry_says_why() -> None:
    entries = tomllib.loads((REPO / "tests" / "skips.toml").read_text())["skip"]
    assert 0 < len(entries) <= 12
    parts = set((REPO / "Makefile").read_text().split("TEST_PARTS := ")[1].split("\n\n")[0]
                .replace("\\", " ").split())
    for e in entries:
        assert len(e["why"]) > 30 and e["reason"] and e["test"], e
        assert e.get("part", "") in parts | {""}, e
    excuses = make_test.load_allow_list(REPO / "tests" / "skips.toml")
    assert len(excuses) == len(entries)


def test_make_test_runs_the_parts_through_the_script() -> None:
    text = (REPO / "Makefile").read_text()
    recipe = text.split("\ntest: setup\n")[1].split("\n\n")[0]
    assert "scripts/make-test $(TEST_PARTS)" in recipe and "&&" not in recipe
    parts = text.split("TEST_PARTS := ")[1].split("\n\n")[0].replace("\\", " ").split()
    assert parts.index("uml-kernels") < parts.index("pytest-unit")      # build tests need them
    for p in ("modules", "unit", "pytest-unit", "kernel-test", "kernel-smoke", "platform-test",
              "dist-test", "owts-test"):
        assert p in parts
