"""Command-line and configuration errors are clear, never tracebacks."""

import argparse

import pytest

from synctcp.cli import format_socket, main
from synctcp.diag import SocketState
from synctcp_testbed.dumbbell import DumbbellConfig
from synctcp_testbed.dumbbell import TestbedError as BedError
from synctcp_testbed.sampler import parse_handle


def test_watch_needs_a_positive_interval(capsys: pytest.CaptureFixture) -> None:
    assert main(["ss", "--watch", "0"]) == 2
    assert "positive" in capsys.readouterr().err


def test_status_reads_sysctls(capsys: pytest.CaptureFixture) -> None:
    assert main(["status", "--json"]) == 0
    assert '"modules"' in capsys.readouterr().out


def test_format_socket_shows_telemetry() -> None:
    st = SocketState(family=2, src="10.0.0.1", sport=1, dst="10.0.0.2", dport=2, state=1, cc="sync",
                     tcp_info={"cwnd": 10, "rtt_us": 40000, "retrans": 0},
                     synctcp={"source": "ts", "peer_clock_hz": 1000, "min_ott_us": 0,
                              "qdelay_us": 1500, "max_qdelay_us": 60000, "signals": 1,
                              "reductions": 1, "loss_seen": True, "congested": False})
    line = format_socket(st)
    assert "src:ts" in line and "qdelay:1.5ms" in line and "max_qdelay:60.0ms" in line
    assert "[loss_seen]" in line


@pytest.mark.parametrize("kw", [{"rate_mbit": 0}, {"rtt_ms": -1}, {"queue_pkts": 0},
                                {"prefix": "bad-prefix"}])
def test_bad_dumbbell_config_is_refused(kw: dict) -> None:
    with pytest.raises(BedError):
        DumbbellConfig(**kw).validate()


def test_tc_handles() -> None:
    assert parse_handle("1:10") == 0x10010
    assert parse_handle("10:") == 0x100000
    with pytest.raises(argparse.ArgumentTypeError):
        parse_handle("x:y")
