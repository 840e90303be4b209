"""make bench-ack's harnesses build and every row runs (kmod/tests/bench; issue 32 item 4).

A benchmark, not a test of the figures: no ratio is asserted, only that
the kernel's files and our modules build against kshim/, that every row
runs through its hooks and callgrind counts instructions inside its loop,
that a missing kernel tarball is fetched into the cache, and that one that
cannot be fetched is one line.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
from importlib.machinery import SourceFileLoader
from importlib.util import module_from_spec, spec_from_loader
from pathlib import Path
from types import ModuleType
from typing import Dict

import pytest

REPO = Path(__file__).resolve().parents[2]
BENCH = REPO / "kmod" / "tests" / "bench"
TARBALL = (Path(os.environ.get("SYNCTCP_CACHE") or
                Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache") / "synctcp")
           / "kernel" / "linux-source-7.2.tar.xz")


def _report() -> ModuleType:
    loader = SourceFileLoader("bench_report", str(BENCH / "report.py"))
    mod = module_from_spec(spec_from_loader("bench_report", loader))  # type: ignore[arg-type]
    loader.exec_module(mod)
    return mod


def _make(build: Path, *targets: str, env: Dict[str, str] | None = None) -> subprocess.CompletedProcess:
    return subprocess.run(["nice", "-n", "10", "make", "-s", "--no-print-directory", "-C", str(BENCH),
                           f"BUILD={build}", *targets],
                          capture_output=True, text=True, env={**os.environ, **(env or {})})


@pytest.fixture(scope="module")
def built(tmp_path_factory: pytest.TempPathFactory) -> Path:
    if shutil.which("cc") is None:
        pytest.skip("no C compiler")
    if not TARBALL.exists():
        pytest.skip(f"no kernel source tarball {TARBALL} (make uml-kernel gets it)")
    build = tmp_path_factory.mktemp("bench")
    r = _make(build, f"{build}/bench_kernel", f"{build}/bench_ack")
    assert r.returncode == 0, r.stdout + r.stderr
    return build


def test_every_row_runs_through_its_hooks(built: Path) -> None:
    rows = subprocess.run([built / "bench_kernel", "--list"], check=True, capture_output=True,
                          text=True).stdout.split()
    report = _report()
    assert rows == ["stack"] + report.ROWS
    for row in rows:
        out = subprocess.run([built / "bench_kernel", "--only", row], check=True,
                             capture_output=True, text=True).stdout
        m = re.match(rf"{row}: 1000000 ACKs, (\d+) cwnd reductions, cwnd (\d+)", out)
        assert m and int(m.group(1)) > 0 and int(m.group(2)) >= 2, out


@pytest.mark.skipif(shutil.which("valgrind") is None, reason="no valgrind (make setup installs it)")
def test_report_counts_instructions_in_every_row(built: Path,
                                                 capsys: pytest.CaptureFixture) -> None:
    report = _report()
    assert report.main([str(built / "bench_kernel"), str(built / "bench_ack")]) == 0
    out = capsys.readouterr().out
    for row in report.ROWS:
        line = next(ln for ln in out.splitlines() if ln.startswith(f"{row} "))
        fields = line.split()
        # ... ns best, median, worst, ns net, x bbr, x cubic, instr, net, x bbr, x cubic
        assert float(fields[-4]) > 0 and float(fields[-3]) > 0, line
    for ours, ref in report.GOALS:
        assert re.search(rf"^  {ours} <= {ref}: instructions (yes|no) .* ns (yes|no) ", out, re.M), out
    assert "The cores alone" in out


def test_a_missing_tarball_is_fetched_into_the_cache(tmp_path: Path) -> None:
    """A machine that has not built a UML kernel (make test runs the unit tests first)
    gets the tarball as uml/build-uml.sh does: sid's linux-source-7.2 through the private
    apt configuration, into SYNCTCP_CACHE."""
    cache = tmp_path / "cache"
    r = _make(tmp_path / "build", f"{tmp_path}/build/ksrc/.extracted",
              env={"SYNCTCP_CACHE": str(cache)})
    assert r.returncode == 0, r.stdout + r.stderr
    assert (cache / "kernel" / "linux-source-7.2.tar.xz").stat().st_size > 10_000_000
    assert (tmp_path / "build" / "ksrc" / "net" / "ipv4" / "tcp_cubic.c").is_file()


def test_a_tarball_that_cannot_be_fetched_is_one_line(tmp_path: Path) -> None:
    r = _make(tmp_path / "build", f"{tmp_path}/build/bench_kernel", "SERIES=0.0",
              env={"SYNCTCP_CACHE": str(tmp_path / "nothing")})
    assert r.returncode != 0
    ours = [ln for ln in r.stderr.splitlines() if ln.startswith("bench-ack:")]
    assert len(ours) == 1 and "fetching it failed" in ours[0], r.stderr
    assert "linux-source-0.0.tar.xz" in ours[0]
    assert "Traceback" not in r.stdout + r.stderr
    assert not (tmp_path / "build" / "ksrc" / "net").exists()
