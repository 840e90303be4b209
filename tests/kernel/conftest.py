"""Fixtures of the kernel tests: they need a kernel that can load modules.

``make kernel-test`` runs them in a virtme-ng VM (scripts/vmrun) or, on a
host that can load modules, natively as root.  Outside such a kernel they
are skipped with the reason, never silently passed.
"""

from __future__ import annotations

import os
import subprocess
from pathlib import Path
from typing import Iterator

import pytest

ROOT = Path(__file__).resolve().parents[2]
KMOD = ROOT / "kmod"
RESULTS = ROOT / "results" / "kernel-tests"
SYSCTL_CC = Path("/proc/sys/net/ipv4/tcp_congestion_control")
AVAILABLE_CC = Path("/proc/sys/net/ipv4/tcp_available_congestion_control")


def pytest_collection_modifyitems(config: pytest.Config, items: list) -> None:
    if os.geteuid() != 0 or not Path("/proc/modules").exists():
        skip = pytest.mark.skip(reason="needs root and a kernel with module support (make kernel-test)")
        for item in items:
            item.add_marker(skip)


def sh(*cmd: str, check: bool = True) -> subprocess.CompletedProcess:
    return subprocess.run(cmd, capture_output=True, text=True, check=check)


def is_loaded(name: str) -> bool:
    return any(line.split()[0] == name for line in Path("/proc/modules").read_text().splitlines())


def load(name: str, *params: str) -> subprocess.CompletedProcess:
    """insmod kmod/NAME.ko (not raising: callers check returncode)."""
    return sh("insmod", str(KMOD / f"{name}.ko"), *params, check=False)


def unload(name: str) -> subprocess.CompletedProcess:
    return sh("rmmod", name, check=False)


@pytest.fixture
def module_loaded(request: pytest.FixtureRequest) -> Iterator[str]:
    """The module named by the test's ``module`` marker, loaded fresh."""
    marker = request.node.get_closest_marker("module")
    name = marker.args[0] if marker else "tcp_sync"
    if is_loaded(name):
        unload(name)
    res = load(name)
    assert res.returncode == 0, f"insmod {name}: {res.stderr}"
    yield name
    old = SYSCTL_CC.read_text().strip()
    if old in ("sync", "mixreact", "etcp"):
        SYSCTL_CC.write_text("cubic")
    unload(name)


@pytest.fixture(scope="session")
def results_dir() -> Path:
    RESULTS.mkdir(parents=True, exist_ok=True)
    return RESULTS


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line("markers", "module(name): kernel module the test loads")
