"""uml/build-rootfs.sh --renew against a local apt repository (no network).

Debian's mirror keeps one version of a package per suite, so a point
release or a security update drops a locked one, and a new machine cannot
build the instances' image any more (docs/platform.md).  ``--renew``
replaces exactly the lines of debs.lock whose version the mirror no longer
has with the mirror's version of the same package and keeps the others.
"""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path
from typing import Dict, List, Tuple

import pytest

REPO = Path(__file__).resolve().parents[2]

HEADER = ("# uml/build-rootfs.sh --lock, 20261127T033043Z, from file:\n"
          "# the same versions later: snapshot\n"
          "# SOURCE_DATE_EPOCH: 1795737600\n"
          "# package version architecture sha256 filename\n")

# the mirror: alpha still has its locked version, beta only newer ones
# (the candidate is the highest), gamma's locked one is there beside a newer
MIRROR: List[Tuple[str, str, str]] = [
    ("alpha", "1.0-1", "amd64"),
    ("beta", "2.0-2", "all"),
    ("beta", "1:2.0-3", "all"),
    ("gamma", "3.0-1", "amd64"),
    ("gamma", "3.0-1+deb12u1", "amd64"),
]


def lock_line(p: str, v: str, a: str) -> str:
    return f"{p} {v} {a} {'0' * 63}{len(v) % 10} pool/{p}_{v}_{a}.deb"


def setup_tree(tmp: Path, locked: List[Tuple[str, str, str]]) -> Dict[str, str]:
    if shutil.which("apt-get") is None:
        pytest.skip("needs apt (Debian)")
    (tmp / "uml" / "rootfs").mkdir(parents=True)
    shutil.copy(REPO / "uml" / "build-rootfs.sh", tmp / "uml" / "build-rootfs.sh")
    (tmp / "scripts").mkdir()          # the private apt it sources
    shutil.copy(REPO / "scripts" / "private-apt.sh", tmp / "scripts" / "private-apt.sh")
    (tmp / "uml" / "rootfs" / "wheels.lock").write_text("")
    (tmp / "uml" / "rootfs" / "debs.lock").write_text(
        HEADER + "".join(lock_line(*x) + "\n" for x in locked))
    repo = tmp / "repo"
    repo.mkdir()
    (repo / "Packages").write_text("".join(
        f"Package: {p}\nVersion: {v}\nArchitecture: {a}\nFilename: pool/{p}_{v}_{a}.deb\n"
        f"SHA256: {'f' * 63}{len(v) % 10}\nDescription: test\n\n" for p, v, a in MIRROR))
    (tmp / "sources.list").write_text(f"deb [trusted=yes] file:{repo} ./\n")
    return {**os.environ, "SYNCTCP_ROOTFS_SOURCES": str(tmp / "sources.list"),
            "SYNCTCP_CACHE": str(tmp / "cache"), "TMPDIR": str(tmp)}


def renew(tmp: Path, env: Dict[str, str]) -> subprocess.CompletedProcess:
    return subprocess.run([str(tmp / "uml" / "build-rootfs.sh"), "--renew"], env=env,
                          capture_output=True, text=True, timeout=120)


def test_only_the_versions_the_mirror_dropped_are_renewed(tmp_path: Path) -> None:
    env = setup_tree(tmp_path, [("alpha", "1.0-1", "amd64"), ("beta", "2.0-1", "all"),
                                ("gamma", "3.0-1", "amd64")])
    r = renew(tmp_path, env)
    assert r.returncode == 0, r.stderr
    lines = (tmp_path / "uml" / "rootfs" / "debs.lock").read_text().splitlines()
    assert lines[:3] == HEADER.splitlines()[:3]
    assert lines[3].startswith("# uml/build-rootfs.sh --renew, ")
    assert "1 package(s)" in lines[3]
    assert lines[4] == HEADER.splitlines()[3]
    # alpha and gamma as locked (gamma's newer version is not taken), beta
    # at the mirror's candidate, with its SHA256 and path from the mirror
    assert lines[5:] == [lock_line("alpha", "1.0-1", "amd64"),
                         f"beta 1:2.0-3 all {'f' * 63}7 pool/beta_1:2.0-3_all.deb",
                         lock_line("gamma", "3.0-1", "amd64")]
    assert "beta 2.0-1 -> 1:2.0-3" in r.stderr
    # a second renew has nothing to do and keeps the file as it is
    before = (tmp_path / "uml" / "rootfs" / "debs.lock").read_text()
    r = renew(tmp_path, env)
    assert r.returncode == 0, r.stderr
    assert "unchanged" in r.stderr
    assert (tmp_path / "uml" / "rootfs" / "debs.lock").read_text() == before


def test_a_package_gone_from_the_mirror_is_one_line_and_the_lock_is_kept(tmp_path: Path) -> None:
    env = setup_tree(tmp_path, [("alpha", "1.0-1", "amd64"), ("delta", "1.0", "amd64")])
    before = (tmp_path / "uml" / "rootfs" / "debs.lock").read_text()
    r = renew(tmp_path, env)
    assert r.returncode == 1
    assert r.stderr.strip().splitlines()[-1] == \
        "build-rootfs: delta (amd64) is not on the mirror at all: uml/build-rootfs.sh --lock"
    assert (tmp_path / "uml" / "rootfs" / "debs.lock").read_text() == before


def test_a_build_names_the_dropped_versions_before_mmdebstrap(tmp_path: Path) -> None:
    """A new machine (no kept .debs) whose mirror dropped locked versions is
    told which ones and the fix, in one line, not mmdebstrap's apt errors."""
    if os.geteuid() != 0 or shutil.which("mmdebstrap") is None:
        pytest.skip("the build needs root and mmdebstrap (make setup)")
    env = setup_tree(tmp_path, [("alpha", "1.0-1", "amd64"), ("beta", "2.0-1", "all"),
                                ("gamma", "3.0-0", "amd64")])
    r = subprocess.run([str(tmp_path / "uml" / "build-rootfs.sh")], env=env,
                       capture_output=True, text=True, timeout=120)
    assert r.returncode == 1
    assert r.stderr.strip().splitlines()[-1] == (
        "build-rootfs: 2 locked version(s) no longer on the mirror (beta=2.0-1,gamma=3.0-0): "
        "uml/build-rootfs.sh --renew, or SYNCTCP_ROOTFS_SOURCES naming snapshot.debian.org "
        "at the lock's date (docs/platform.md)")
    assert not list((tmp_path / "cache" / "rootfs").glob("*/.done"))
