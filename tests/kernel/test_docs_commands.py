"""The documented commands that need a kernel that loads the modules
(tests/doccmds.py, rule ``vm``), run as a reader types them: the commands of
one code block in order, from the repository's root, each exiting as the
docs say and printing the line they promise.  ``synctcp ss`` runs with a
live sync flow over loopback.  After each block the modules are unloaded and
the sysctls restored.
"""

from __future__ import annotations

import os
import re
import signal
import subprocess
import sys
import threading
from pathlib import Path
from typing import Dict, Iterator, List, Tuple

import pytest

from conftest import ROOT, is_loaded, loopback_transfer, unload_when_idle
from synctcp.modctl import CC_MODULES

sys.path.insert(0, str(ROOT / "tests"))
from doccmds import Command, commands, substitute  # noqa: E402

VM = [c for c in commands() if c.rule and c.rule.where == "vm"]
BLOCKS: Dict[Tuple[str, int], List[Command]] = {}
for _c in VM:
    BLOCKS.setdefault((_c.doc, _c.block), []).append(_c)
SYSCTLS = [Path("/proc/sys/net/ipv4/tcp_congestion_control"),
           Path("/proc/sys/net/ipv4/tcp_allowed_congestion_control")]
MODULES = list(CC_MODULES.values())


@pytest.fixture
def clean_host() -> Iterator[None]:
    saved = [p.read_text() for p in SYSCTLS]
    for m in MODULES:
        if is_loaded(m):
            unload_when_idle(m)
    yield
    for p, v in zip(SYSCTLS, saved):
        p.write_text(v)
    subprocess.run(["mn", "-c"], capture_output=True, timeout=120)
    for m in MODULES:
        if is_loaded(m):
            assert unload_when_idle(m), f"{m} still in use after the block"


def run(c: Command) -> subprocess.CompletedProcess:
    assert c.rule is not None
    env = dict(os.environ, COLUMNS="200")
    if "--watch" in c.text:
        return watch(c, env)
    return subprocess.run(["bash", "-c", substitute(c.text)], cwd=ROOT, input=c.rule.stdin,
                          capture_output=True, text=True, timeout=300, env=env)


def watch(c: Command, env: Dict[str, str], limit: float = 240) -> subprocess.CompletedProcess:
    """A refreshing command as a reader uses it: ^C once its first round has
    shown what the docs promise (or after ``limit`` s: Python starts slowly
    in a busy TCG VM), then the exit status of the interrupted command."""
    assert c.rule is not None
    p = subprocess.Popen(["bash", "-c", f"exec {substitute(c.text)}"], cwd=ROOT, env=env, text=True,
                         stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
    assert p.stdout is not None
    out: List[str] = []
    timer = threading.Timer(limit, p.send_signal, (signal.SIGINT,))
    timer.start()
    try:
        for line in p.stdout:
            out.append(line)
            if re.search(c.rule.expect, line):
                p.send_signal(signal.SIGINT)
                break
        out.append(p.communicate(timeout=60)[0])
    finally:
        timer.cancel()
    return subprocess.CompletedProcess(p.args, p.returncode, "".join(out), "")


@pytest.mark.parametrize("key", list(BLOCKS), ids=[f"{d}#block{b}" for d, b in BLOCKS])
def test_block_runs_as_documented(key: Tuple[str, int], clean_host: None) -> None:
    cmds = BLOCKS[key]
    needs_flow = any(c.text.startswith("synctcp ss") for c in cmds)
    if needs_flow:
        r = subprocess.run(["insmod", str(ROOT / "kmod/tcp_sync.ko")], capture_output=True, text=True)
        assert r.returncode == 0, r.stderr
    flow = loopback_transfer("sync", seconds=400) if needs_flow else None
    try:
        if flow:
            flow.__enter__()
        for c in cmds:
            assert c.rule is not None
            r = run(c)
            out = r.stdout + r.stderr
            ok = r.returncode in c.rule.exit or ("--watch" in c.text and r.returncode == 130)  # ^C
            assert ok, f"{c}: exit {r.returncode}\n{out[-2000:]}"
            assert "Traceback (most recent call last)" not in out, f"{c}: a traceback\n{out[-2000:]}"
            if c.rule.expect:
                assert re.search(c.rule.expect, out, re.M), f"{c}: no line like {c.rule.expect!r}\n{out[-2000:]}"
    finally:
        if flow:
            flow.__exit__(None, None, None)


def test_the_vm_commands_are_there() -> None:
    texts = [c.text for c in VM]
    assert any(t.startswith("mn --custom") and "pingall" in t for t in texts)
    assert "synctcp ss" in texts
