"""``synctcp load`` / ``unload`` / ``list`` / ``clock`` in a kernel that loads
modules (the unit tests run them against a fake /proc and /sys)."""

from __future__ import annotations

import json
import socket
import time
from pathlib import Path
from typing import Any, Iterator, Optional, Tuple

import pytest

import synctcp

from conftest import AVAILABLE_CC, KMOD, SYSCTL_CC, TCP_CONGESTION, is_loaded, unload_when_idle
from synctcp.cli import main
from synctcp.modctl import CC_MODULES

ALLOWED = Path("/proc/sys/net/ipv4/tcp_allowed_congestion_control")
MODS = tuple(CC_MODULES.values())
CCS = tuple(CC_MODULES)


def unload_all() -> None:
    if SYSCTL_CC.read_text().strip() in CCS:
        SYSCTL_CC.write_text("cubic")
    for m in MODS:
        if is_loaded(m):
            assert unload_when_idle(m), f"{m} stays in use"


@pytest.fixture
def clean() -> Iterator[None]:
    """No synctcp module loaded before and after; the sysctls as they were."""
    unload_all()
    default, allowed = SYSCTL_CC.read_text().strip(), ALLOWED.read_text().split()
    yield
    SYSCTL_CC.write_text(default)
    unload_all()
    avail = AVAILABLE_CC.read_text().split()
    ALLOWED.write_text(" ".join(c for c in allowed if c in avail))


def cli(capsys: pytest.CaptureFixture, *argv: str) -> Tuple[int, Optional[Any], str]:
    rc = main(list(argv))
    out = capsys.readouterr()
    return rc, json.loads(out.out) if "--json" in argv and out.out.strip() else None, out.err


def test_load_with_a_parameter_allow_and_list(clean: None, capsys: pytest.CaptureFixture) -> None:
    rc, res, err = cli(capsys, "load", "sync", "--param", "thresh_pct=60", "--allow", "--json")
    assert rc == 0, (res, err)
    assert res["modules"]["sync"]["action"] in ("insmod", "modprobe")
    assert res["modules"]["sync"]["params"]["thresh_pct"] == "60"
    assert is_loaded("tcp_sync")
    assert Path("/sys/module/tcp_sync/parameters/thresh_pct").read_text().strip() == "60"
    assert "sync" in ALLOWED.read_text().split() and "sync" in res["allowed"]

    for cmd in ("list", "status"):
        rc, st, _ = cli(capsys, cmd, "--json")
        assert rc == 0 and st["module_support"]["ok"]
        m = st["modules"]["sync"]
        assert m["loaded"] and m["version"] == synctcp.__version__ and m["refcnt"] == 0
        assert m["params"] == {"alloc_failures": "0", "best_thresh_pct": "25", "compete": "N",
                               "source": "auto",
                               "thresh_pct": "60", "variant": "best"}
        assert m["available"] and m["allowed"] and not m["default"]
        assert not st["modules"]["etcp"]["loaded"]

    rc, res, err = cli(capsys, "unload", "sync", "--json")
    assert rc == 0 and res["modules"]["sync"]["action"] == "unloaded", err
    assert not is_loaded("tcp_sync") and "sync" not in AVAILABLE_CC.read_text().split()


def test_load_from_a_given_ko_and_set_default(clean: None, capsys: pytest.CaptureFixture) -> None:
    rc, res, err = cli(capsys, "load", "etcp", "--ko", str(KMOD / "tcp_etcp.ko"), "--param", "b=40",
                       "--default", "--json")
    assert rc == 0, err
    assert res["modules"]["etcp"]["command"] == ["insmod", str(KMOD / "tcp_etcp.ko"), "b=40"]
    assert SYSCTL_CC.read_text().strip() == "etcp" and res["default"] == "etcp"
    with socket.socket() as s:
        assert s.getsockopt(socket.IPPROTO_TCP, TCP_CONGESTION, 16).rstrip(b"\0") == b"etcp"


def test_unknown_parameter_is_refused_before_loading(clean: None, capsys: pytest.CaptureFixture) -> None:
    rc, res, err = cli(capsys, "load", "sync", "--param", "nope=1", "--json")
    assert rc == 2 and res["reason"] == "bad-param"
    assert "unknown parameter nope" in res["error"] and "thresh_pct" in res["error"]
    assert "synctcp load: unknown parameter nope" in err
    assert not is_loaded("tcp_sync")


def test_out_of_range_value_is_refused_by_the_module(clean: None, capsys: pytest.CaptureFixture) -> None:
    rc, res, _ = cli(capsys, "load", "sync", "--param", "thresh_pct=0", "--json")
    assert rc == 2 and res["reason"] == "bad-param", res
    assert "Invalid" in res["error"]          # insmod: "Invalid parameters", modprobe: "Invalid argument"
    assert not is_loaded("tcp_sync")


def test_unload_refused_while_a_socket_uses_it(clean: None, capsys: pytest.CaptureFixture) -> None:
    assert cli(capsys, "load", "sync")[0] == 0
    s = socket.socket()
    try:
        s.setsockopt(socket.IPPROTO_TCP, TCP_CONGESTION, b"sync")
        rc, res, err = cli(capsys, "unload", "sync", "--json")
        assert rc == 2 and res["reason"] == "in-use" and "refcount 1" in res["error"], res
        assert "synctcp ss --cc sync" in err
        assert is_loaded("tcp_sync")
    finally:
        s.close()
    deadline = time.monotonic() + 10
    while (rc := cli(capsys, "unload", "sync")[0]) != 0 and time.monotonic() < deadline:
        time.sleep(0.2)
    assert rc == 0 and not is_loaded("tcp_sync")


def test_unload_of_the_default_needs_reset_default(clean: None, capsys: pytest.CaptureFixture) -> None:
    assert cli(capsys, "load", "mixreact", "--default")[0] == 0
    assert SYSCTL_CC.read_text().strip() == "mixreact"
    rc, res, _ = cli(capsys, "unload", "mixreact", "--json")
    assert rc == 2 and res["reason"] == "in-use" and "default" in res["error"]
    assert is_loaded("tcp_mixreact")
    rc, res, err = cli(capsys, "unload", "mixreact", "--reset-default", "--json")
    assert rc == 0, err
    assert SYSCTL_CC.read_text().strip() == "cubic" and not is_loaded("tcp_mixreact")


def test_load_and_unload_all(clean: None, capsys: pytest.CaptureFixture) -> None:
    rc, res, err = cli(capsys, "load", "all", "--param", "source=rtt", "--json")
    assert rc == 0, err
    assert set(res["modules"]) == set(CCS)
    rc, st, _ = cli(capsys, "list", "--json")
    assert all(st["modules"][cc]["loaded"] for cc in CCS)
    assert st["modules"]["sync"]["params"]["source"] == "rtt"
    assert st["modules"]["mixreact"]["params"]["source"] == "rtt"
    assert "source" not in st["modules"]["etcp"]["params"]
    rc, st, _ = cli(capsys, "load", "all", "--json")               # again: already loaded
    assert rc == 0 and {m["action"] for m in st["modules"].values()} == {"already loaded"}
    rc, res, err = cli(capsys, "unload", "--json")                   # all is the default
    assert rc == 0, err
    assert not any(is_loaded(m) for m in MODS)


def test_list_with_nothing_loaded(clean: None, capsys: pytest.CaptureFixture) -> None:
    rc, st, _ = cli(capsys, "list", "--json")
    assert rc == 0 and st["module_support"]["ok"] and st["headers"] in (True, False)
    for cc in CCS:
        assert not st["modules"][cc]["loaded"] and not st["modules"][cc]["available"]
        built = st["modules"][cc]["built"]
        assert built and built["kernel"] == st["kernel"], built
    rc, _, _ = cli(capsys, "list")
    assert rc == 0


def test_clock_reads_this_kernel(capsys: pytest.CaptureFixture) -> None:
    rc, r, _ = cli(capsys, "clock", "--json", "--gpsd", "none")
    assert rc in (0, 1)
    assert r["kernel"]["state"] in ("TIME_OK", "TIME_INS", "TIME_DEL", "TIME_OOP", "TIME_WAIT", "TIME_ERROR")
    assert r["verdict"]["fit"] == (rc == 0) and r["verdict"]["summary"]
