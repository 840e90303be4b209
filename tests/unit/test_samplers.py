"""A sampler that fails before it is ready stops the case at once, with its message."""

from __future__ import annotations

import json
import socket
import subprocess
import sys
import time
from pathlib import Path

import pytest

from synctcp_testbed.case import scripts
from synctcp_testbed.case.errors import RunError
from synctcp_testbed.case.lifecycle import CaseRun
from synctcp_testbed.scenario import from_dict


def case_run(tmp_path: Path) -> CaseRun:
    sc = from_dict({"name": "t", "cc": ["reno"], "duration_s": 6, "warmup_s": 2})
    return CaseRun(sc.cases()[0], tmp_path)


def samplers(cr: CaseRun, command: str) -> None:
    """samplers.sh as the runner writes it, qsampler replaced by ``command``."""
    cr._spawn(scripts.qsampler_line(["sh", "-c", command], cr.dir) + "\nwait\n", "samplers.sh")


def test_a_qsampler_that_fails_is_reported_at_once_with_its_last_line(tmp_path: Path) -> None:
    cr = case_run(tmp_path)
    samplers(cr, "echo 'qsampler: starting' >&2; echo 'qsampler: no device eth1 in st-r0' >&2;"
                 " exit 1")
    t0 = time.monotonic()
    try:
        with pytest.raises(RunError) as exc:
            cr._wait_ready([tmp_path / ".ready-q"], timeout=20)
    finally:
        cr._stop_all()
    assert str(exc.value) == ("reno-droptail: qsampler exited with status 1 before it was ready: "
                              "qsampler: no device eth1 in st-r0")
    assert time.monotonic() - t0 < 10
    assert (tmp_path / scripts.QSAMPLER_STATUS).read_text().strip() == "1"


def test_a_qsampler_that_is_ready_is_waited_for_and_its_status_not_yet_written(
        tmp_path: Path) -> None:
    cr = case_run(tmp_path)
    samplers(cr, "sleep 0.5; echo ready; exec sleep 60")
    try:
        cr._wait_ready([tmp_path / ".ready-q"], timeout=20)
        assert not (tmp_path / scripts.QSAMPLER_STATUS).exists()
    finally:
        cr._stop_all()


def test_an_inet_diag_sampler_that_fails_is_reported_with_its_message(tmp_path: Path) -> None:
    cr = case_run(tmp_path)
    cr.diag = subprocess.Popen(["sh", "-c", "echo 'sampler: no namespace st-s1' >&2; exit 3"],
                               stderr=subprocess.PIPE, text=True)
    cr.procs.append(cr.diag)
    try:
        with pytest.raises(RunError) as exc:
            cr._wait_ready([tmp_path / ".ready-diag"], timeout=20)
    finally:
        cr._stop_all()
    assert str(exc.value) == ("reno-droptail: the inet_diag sampler exited with status 3 before "
                              "it was ready: sampler: no namespace st-s1")


def test_the_inet_diag_sampler_in_its_own_namespace(tmp_path: Path) -> None:
    """``--diag=-:CC:FILE`` (a real host, issue 30): no setns, this process's own sockets.
    (``--diag -:...`` would read as an option: the runner writes ``--diag=``.)"""
    out = tmp_path / "tcp-own.jsonl"
    with socket.socket() as lst, socket.socket() as cli:
        lst.bind(("127.0.0.1", 0))
        lst.listen()
        cli.setsockopt(socket.IPPROTO_TCP, socket.TCP_CONGESTION, b"reno")
        cli.connect(lst.getsockname())
        srv, _ = lst.accept()
        with srv:
            res = subprocess.run([sys.executable, "-m", "synctcp_testbed.measure.sampler",
                                  f"--diag=-:reno:{out}", "--hz", "10", "--max-seconds", "0.3"],
                                 capture_output=True, text=True, timeout=60)
            port = cli.getsockname()[1]
    assert res.returncode == 0 and res.stdout.splitlines()[0] == "ready", res.stderr
    first = json.loads(out.read_text().splitlines()[0])
    assert [(s["sport"], s["cc"]) for s in first["sockets"]] == [(port, "reno")]
