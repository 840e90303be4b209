"""Command-line and configuration errors are clear, never tracebacks."""

import pytest

from synctcp import cli
from synctcp.cli import format_socket, main
from synctcp.diag import SocketState


def test_watch_needs_a_positive_interval(capsys: pytest.CaptureFixture) -> None:
    assert main(["ss", "--watch", "0"]) == 2
    assert "positive" in capsys.readouterr().err


def _sock(cc: str = "sync") -> SocketState:
    return SocketState(family=2, src="10.0.0.1", sport=1, dst="10.0.0.2", dport=2, state=1, cc=cc,
                       tcp_info={"cwnd": 10, "rtt_us": 40000, "retrans": 0})


@pytest.mark.parametrize("json_out", [False, True])
def test_ss_without_sockets_says_so_on_stderr_and_exits_3(
        monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture, json_out: bool) -> None:
    seen = []
    monkeypatch.setattr(cli, "list_sockets", lambda cc: seen.append(cc) or [])
    assert main(["ss"] + (["--json"] if json_out else [])) == cli.EXIT_NO_SOCKETS == 3
    out, err = capsys.readouterr()
    assert out == ""
    assert err == "synctcp ss: no sync, mixreact or etcp sockets\n"
    assert seen == [["sync", "mixreact", "etcp"]]


def test_ss_without_sockets_names_the_cc_filter(
        monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture) -> None:
    monkeypatch.setattr(cli, "list_sockets", lambda cc: [])
    assert main(["ss", "--cc", "reno,sync"]) == 3
    assert capsys.readouterr().err == "synctcp ss: no reno or sync sockets (--cc reno,sync)\n"


def test_ss_with_sockets_exits_0(monkeypatch: pytest.MonkeyPatch,
                                 capsys: pytest.CaptureFixture) -> None:
    monkeypatch.setattr(cli, "list_sockets", lambda cc: [_sock()])
    assert main(["ss"]) == 0
    out, err = capsys.readouterr()
    assert out.startswith("10.0.0.1:1 -> 10.0.0.2:2 sync") and err == ""
    assert main(["ss", "--json"]) == 0
    assert '"sockets": [{' in capsys.readouterr().out


def test_ss_watch_reports_an_empty_round(monkeypatch: pytest.MonkeyPatch,
                                         capsys: pytest.CaptureFixture) -> None:
    rounds = iter([[], [_sock()], []])
    monkeypatch.setattr(cli, "list_sockets", lambda cc: next(rounds))
    monkeypatch.setattr(cli.time, "sleep", lambda s: None)
    assert main(["ss", "--watch", "0.5", "--count", "2"]) == 0
    out, err = capsys.readouterr()
    assert err == "synctcp ss: no sync, mixreact or etcp sockets\n"
    assert "sync cwnd:10" in out
    assert main(["ss", "--json", "--watch", "0.5", "--count", "1"]) == 3   # the last round's
    out, err = capsys.readouterr()
    assert out == "" and err.count("no sync, mixreact or etcp sockets") == 1


def test_ss_help_documents_the_exit_codes(capsys: pytest.CaptureFixture) -> None:
    with pytest.raises(SystemExit):
        main(["ss", "--help"])
    out = " ".join(capsys.readouterr().out.split())
    assert "Exit 0 sockets shown, 3 no matching socket" in out and "2 error" in out


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
    assert "src:ts" in line and "qdelay:1.5ms\u00b11.00ms" in line
    assert "max_qdelay:60.0ms\u00b11.00ms" in line and "min_ott:0.0ms\u00b1?" in line
    assert "[loss_seen]" in line


def test_format_socket_bounds_follow_the_source() -> None:
    """Timestamps: the queuing delay to the peer's tick, no bound on min OTT; the
    option: min OTT within the pair's clock bound, the queuing delay within twice it
    (unknown without one); RTT-sourced: no one-way figure, no bound."""
    def line(source: str, bound: "float | None" = None, hz: int = 1000) -> str:
        st = SocketState(family=2, src="10.0.0.1", sport=1, dst="10.0.0.2", dport=2, state=1,
                         cc="sync", tcp_info={}, synctcp={"source": source, "peer_clock_hz": hz,
                                                          "min_ott_us": 20000, "qdelay_us": 2500})
        return format_socket(st, bound)

    assert "qdelay:2.5ms\u00b10.10ms" in line("ts", hz=10000)
    assert "min_ott:20.0ms\u00b10.25ms" in line("option", 0.25)
    assert "qdelay:2.5ms\u00b10.50ms" in line("option", 0.25)
    assert "min_ott:20.0ms\u00b1?" in line("option") and "qdelay:2.5ms\u00b1?" in line("option")
    assert "min_ott:20.0ms " in line("rtt") + " " and "\u00b1" not in line("rtt")
