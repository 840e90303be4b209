"""What a newcomer's first scenario file meets (issue 31, item 4): every problem at
once, unknown algorithms refused before anything is built, messages that say what
is wrong with what the user wrote."""

from __future__ import annotations

from pathlib import Path
from typing import Any, List

import pytest

from synctcp_testbed import cli
from synctcp_testbed.case.errors import RunError
from synctcp_testbed.case.kernel import check_ccs, loadable_ccs
from synctcp_testbed.platform import run
from synctcp_testbed.scenario import ScenarioError, load

BROKEN = """\
name = "mine"
duration_s = 30
foo = 1
[topology]
rate_mbit = -3
queue_pkts = 0
rtts_ms = "40"
[traffic]
flows_per_pair = 0
http_server = "apache"
"""


def test_every_problem_of_a_file_is_reported_at_once(tmp_path: Path) -> None:
    f = tmp_path / "mine.toml"
    f.write_text(BROKEN)
    with pytest.raises(ScenarioError) as err:
        load(f)
    lines = str(err.value).splitlines()
    assert all(line.startswith(f"{f}: ") for line in lines), lines
    text = "\n".join(lines)
    for key in ("topology.rate_mbit", "topology.queue_pkts", "topology.rtts_ms",
                "traffic.flows_per_pair", "unknown key(s) foo", "traffic.http_server 'apache'"):
        assert key in text, key
    assert len(lines) == 6


def test_a_cross_key_problem_does_not_blame_a_refused_value(tmp_path: Path) -> None:
    # duration_s refused: the warm-up is not compared with its default in its place
    f = tmp_path / "d.toml"
    f.write_text('name = "d"\nduration_s = 0\nwarmup_s = 20\n')
    with pytest.raises(ScenarioError) as err:
        load(f)
    assert str(err.value).splitlines() == [
        f"{f}: duration_s must be a number from 1 to 86400 (s), not 0"]


def test_a_short_duration_without_warmup_gets_a_short_warmup(tmp_path: Path,
                                                              capsys: pytest.CaptureFixture) -> None:
    f = tmp_path / "short.toml"
    f.write_text('name = "short"\nduration_s = 5\n')
    sc = load(f)
    assert sc.duration_s == 5 and sc.warmup_s == 1.0
    f.write_text('name = "long"\nduration_s = 300\n')
    assert load(f).warmup_s == 10.0                         # the default, as documented
    # a warm-up the file does write is held to the duration, naming both
    f.write_text('name = "w"\nduration_s = 5\nwarmup_s = 10\n')
    with pytest.raises(ScenarioError, match=r"warmup_s must be below duration_s \(5 s\), not 10"):
        load(f)
    assert cli.main(["show", str(f)]) == 2
    assert "warmup_s must be below duration_s" in capsys.readouterr().err


def test_show_of_a_missing_file_says_it_does_not_exist(tmp_path: Path,
                                                        capsys: pytest.CaptureFixture) -> None:
    assert cli.main(["show", str(tmp_path / "nosuch.toml")]) == 2
    err = capsys.readouterr().err.strip()
    assert err == f"synctcp-testbed: {tmp_path / 'nosuch.toml'}: no such file"
    assert cli.main(["show", "nosuch"]) == 2
    assert "no file of that name and not a preset; presets: " in capsys.readouterr().err
    other = tmp_path / "notes.txt"
    other.write_text("x")
    assert cli.main(["show", str(other)]) == 2
    assert "not a scenario file (they end in .toml)" in capsys.readouterr().err


def test_unknown_algorithms_are_refused_before_anything_is_built(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture) -> None:
    built: List[Any] = []
    monkeypatch.setattr(run, "prepare", lambda *a, **k: built.append(a) or {})
    f = tmp_path / "typo.toml"
    f.write_text('name = "typo"\ncc = ["reno", "sycn"]\nduration_s = 5\n')
    assert cli.main(["run", str(f), "--platform", "uml", "--out", str(tmp_path / "r")]) == 2
    err = capsys.readouterr().err.strip()
    assert err.startswith("synctcp-testbed: unknown congestion control 'sycn' (did you mean "
                          "'sync'?)") and len(err.splitlines()) == 1
    assert not built and not (tmp_path / "r").exists()
    # run_scenario itself refuses them too, before preparing the platform
    monkeypatch.setenv("SYNCTCP_PLATFORM", "uml")
    with pytest.raises(RunError, match="unknown congestion control 'etcpp'"):
        run.run_scenario(load("gu-smallbuffer"), tmp_path / "r2", ["etcpp"], log=lambda m: None)
    assert not built


def test_the_known_algorithms_are_linuxs_and_ours_and_what_this_host_loads(
        tmp_path: Path) -> None:
    known = loadable_ccs(here=False)
    assert {"reno", "cubic", "bbr", "vegas", "highspeed", "sync", "mixreact", "etcp"} <= set(known)
    check_ccs(["reno", "sync", "vegas"], here=False)
    with pytest.raises(RunError, match="'myown'"):
        check_ccs(["myown"], here=False)
    # BBRv3 is not carried (docs/bbr3.md): refused, never run as the kernel's bbr
    with pytest.raises(RunError, match=r"'bbr3' \(did you mean 'bbr'\?\)"):
        check_ccs(["bbr3"], here=False)
    # natively, an algorithm this host's kernel offers counts
    (tmp_path / "proc/sys/net/ipv4").mkdir(parents=True)
    (tmp_path / "proc/sys/net/ipv4/tcp_available_congestion_control").write_text("reno myown\n")
    assert "myown" in loadable_ccs(here=True, root=tmp_path)
