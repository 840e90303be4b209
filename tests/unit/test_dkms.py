"""DKMS: dkms.conf and scripts/dkms.sh (make dkms-install) with Debian's dkms.

The build test runs the real ``dkms add/build/install`` for the VM kernel's
headers, into temporary source, dkms and install trees (and a temporary
signing key), so /usr/src, /var/lib/dkms and /lib/modules stay untouched.
Building needs no module support, so it runs on this host.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import time
from pathlib import Path
from typing import Dict, List

import pytest

import synctcp
from synctcp.modctl import CC_MODULES, read_modinfo

REPO = Path(__file__).resolve().parents[2]
MODULES = list(CC_MODULES.values())


def headers_kernel() -> str:
    """The kernel to build for: the VM's 6.1 if its headers are there, else
    the newest installed headers (as kmod/Makefile picks)."""
    have = sorted((p.parent.name for p in Path("/lib/modules").glob("*/build") if (p / "include").exists()),
                  key=lambda r: [int(x) if x.isdigit() else 0 for x in re.split(r"[.-]", r)])
    return "6.1.0-56-amd64" if "6.1.0-56-amd64" in have else (have[-1] if have else "")


def test_one_version_everywhere() -> None:
    versions = {f"kmod/{m}_main.c": re.search(r'^MODULE_VERSION\("(.*)"\);$',
                                              (REPO / f"kmod/{m}_main.c").read_text(),
                                         re.M).group(1)  # type: ignore[union-attr]
                for m in MODULES}
    versions["synctcp.__version__"] = synctcp.__version__
    versions["pyproject.toml"] = re.search(r'^version = "(.*)"', (REPO / "pyproject.toml").read_text(),
                                           re.M).group(1)  # type: ignore[union-attr]
    versions["scripts/dkms.sh version"] = subprocess.run(
        [str(REPO / "scripts/dkms.sh"), "version"], capture_output=True, text=True, check=True).stdout.strip()
    # sourced from another directory, as dkms does: the version comes from the file next to it
    conf = subprocess.run(["bash", "-c", f'kernelver=K kernel_source_dir=D; . {REPO}/dkms.conf; '
                           'echo "$PACKAGE_NAME $PACKAGE_VERSION ${BUILT_MODULE_NAME[*]} '
                           '${DEST_MODULE_LOCATION[*]} $AUTOINSTALL|$MAKE"'],
                          cwd="/", capture_output=True, text=True, check=True).stdout.strip()
    name, ver, *rest = conf.split("|")[0].split()
    versions["dkms.conf"] = ver
    assert len(set(versions.values())) == 1, versions
    assert name == "synctcp" and rest == [*MODULES, "/updates", "/updates", "/updates", "yes"]
    assert conf.split("|")[1] == "make -C kmod KVER=K KDIR=D modules"


def test_make_targets() -> None:
    out = subprocess.run(["make", "-n", "-C", str(REPO), "dkms-install", "KVER=9.9.9-x", "dkms-uninstall"],
                         capture_output=True, text=True, check=True).stdout
    assert "scripts/dkms.sh install -k 9.9.9-x" in out and "scripts/dkms.sh uninstall" in out


def test_dkms_sh_refuses_clearly(tmp_path: Path) -> None:
    res = subprocess.run([str(REPO / "scripts/dkms.sh"), "frobnicate"], capture_output=True, text=True)
    assert res.returncode == 2 and "usage" in res.stderr
    if os.geteuid() == 0 and shutil.which("dkms"):
        res = subprocess.run([str(REPO / "scripts/dkms.sh"), "build", "-k", "0.0.0-none"],
                             capture_output=True, text=True,
                             env={**os.environ, "DKMS_SOURCE_TREE": str(tmp_path)})
        assert res.returncode == 2 and "linux-headers-0.0.0-none" in res.stderr
        assert not any(tmp_path.iterdir())


def test_dkms_build_and_install_for_the_vm_kernel(tmp_path: Path) -> None:
    if os.geteuid() != 0:
        pytest.skip("dkms needs root")
    assert shutil.which("dkms"), "dkms is not installed: apt-get install dkms (make setup)"
    kver = headers_kernel()
    if not kver:
        pytest.skip("no kernel headers installed (make setup installs the VM kernel's)")
    trees = {"DKMS_SOURCE_TREE": tmp_path / "src", "DKMS_DKMS_TREE": tmp_path / "dkms",
             "DKMS_INSTALL_TREE": tmp_path / "lib"}
    for p in trees.values():
        p.mkdir()
    (tmp_path / "lib" / kver).mkdir()
    # dkms signs with a key it generates when missing: keep that here too
    env: Dict[str, str] = {**os.environ, **{k: str(v) for k, v in trees.items()}, "DKMS_NO_DEPMOD": "1",
                           "mok_signing_key": str(tmp_path / "mok.key"),
                           "mok_certificate": str(tmp_path / "mok.pub")}
    system_dkms = sorted(os.listdir("/var/lib/dkms")) if os.path.isdir("/var/lib/dkms") else []
    version = synctcp.__version__
    t0 = time.monotonic()
    try:
        res = subprocess.run([str(REPO / "scripts/dkms.sh"), "install", "-k", kver], env=env,
                             capture_output=True, text=True, timeout=600)
        took = time.monotonic() - t0
        print(f"\ndkms add/build/install for {kver}: rc {res.returncode} in {took:.1f} s")
        assert res.returncode == 0, res.stdout[-3000:] + res.stderr[-3000:]
        built = tmp_path / "dkms" / "synctcp" / version / kver / os.uname().machine / "module"
        installed = tmp_path / "lib" / kver / "updates" / "dkms"
        for mod in MODULES:
            for where in (built, installed):
                ko = where / f"{mod}.ko"
                assert ko.is_file(), f"{ko} missing; dkms said:\n{res.stdout[-2000:]}"
            info = read_modinfo(installed / f"{mod}.ko")
            assert info.vermagic_release == kver and info.version == version
            assert info.params, f"{mod}: no parameters in .modinfo"
            sign_file = Path(f"/usr/lib/linux-kbuild-{kver.rsplit('.', 1)[0]}/scripts/sign-file")
            if sign_file.exists() or Path(f"/lib/modules/{kver}/build/scripts/sign-file").exists():
                assert info.signed, f"{mod}: dkms did not sign it"
        status = subprocess.run(["dkms", "status", "--dkmstree", str(trees["DKMS_DKMS_TREE"]),
                                 "--sourcetree", str(trees["DKMS_SOURCE_TREE"]),
                                 "--installtree", str(trees["DKMS_INSTALL_TREE"]), "-m", "synctcp"],
                                capture_output=True, text=True).stdout
        assert f"synctcp/{version}, {kver}" in status and "installed" in status, status
        # the staged source holds dkms.conf and the module sources only
        staged = tmp_path / "src" / f"synctcp-{version}"
        assert (staged / "dkms.conf").is_file() and (staged / "kmod" / "Kbuild").is_file()
        assert not list(staged.rglob("*.ko")) and not (staged / "kmod" / "tests").exists()
    finally:
        res = subprocess.run([str(REPO / "scripts/dkms.sh"), "uninstall"], env=env,
                             capture_output=True, text=True, timeout=120)
    assert res.returncode == 0, res.stderr
    assert not (tmp_path / "src" / f"synctcp-{version}").exists()
    assert not list((tmp_path / "lib" / kver).rglob("*.ko"))
    left: List[str] = sorted(os.listdir("/var/lib/dkms")) if os.path.isdir("/var/lib/dkms") else []
    assert left == system_dkms and "synctcp" not in left
