"""Every ``--help`` of synctcp, synctcp-testbed and synctcp-mininet is plain text.

Each parser and subparser is walked and its ``--help`` printed through the
command's own ``main()``: a usage line, a help string for every argument,
no reST markup (the module docstrings have it, the help must not).
"""

from __future__ import annotations

import argparse
import re
from pathlib import Path
from typing import Callable, Iterator, List, Optional, Sequence, Tuple

import pytest

from synctcp import cli as synctcp_cli
from synctcp_mininet import cli as mininet_cli
from synctcp_mininet import demo as mininet_demo
from synctcp_testbed import cli as testbed_cli
from synctcp_testbed import demo as testbed_demo
from synctcp_testbed.network.qdisc import AQMS

Main = Callable[[Optional[Sequence[str]]], int]
COMMANDS: List[Tuple[str, Callable[[], argparse.ArgumentParser], Main]] = [
    ("synctcp", synctcp_cli.build_parser, synctcp_cli.main),
    ("synctcp-testbed", testbed_cli.build_parser, testbed_cli.main),
    ("synctcp-mininet", mininet_cli.build_parser, mininet_cli.main),
    # make demo's (DEMO_ARGS) and make demo MININET=1's
    ("python3 -m synctcp_testbed.demo",
     lambda: testbed_demo.parser(testbed_demo.__doc__ or "", Path("results/demo")), testbed_demo.main),
    ("python3 -m synctcp_mininet.demo",
     lambda: testbed_demo.parser(mininet_demo.__doc__ or "", Path("results/demo-mininet"),
                                 "synctcp_mininet.demo"), mininet_demo.main),
]
REST = re.compile(r"``|:(func|class|mod|meth|attr|data|exc|obj|ref|doc):`")


def walk(parser: argparse.ArgumentParser,
         path: Tuple[str, ...] = ()) -> Iterator[Tuple[Tuple[str, ...], argparse.ArgumentParser]]:
    yield path, parser
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for name, sub in action.choices.items():
                yield from walk(sub, path + (name,))


def every_parser() -> Iterator[Tuple[str, Tuple[str, ...], argparse.ArgumentParser, Main]]:
    for prog, build, main in COMMANDS:
        for path, parser in walk(build()):
            yield prog, path, parser, main


CASES = list(every_parser())


def help_of(main: Main, path: Sequence[str], capsys: pytest.CaptureFixture) -> str:
    with pytest.raises(SystemExit) as exc:
        main([*path, "--help"])
    assert exc.value.code == 0
    out, err = capsys.readouterr()
    assert err == ""
    return out


def test_every_command_and_subcommand_is_walked() -> None:
    paths = {(prog, path) for prog, path, _, _ in CASES}
    assert ("synctcp", ("ss",)) in paths and ("synctcp", ("owts",)) in paths
    for prog in ("synctcp-testbed", "synctcp-mininet"):
        assert {(prog, (c,)) for c in ("list", "show", "run", "report")} <= paths


@pytest.mark.parametrize("prog,path,parser,main", CASES,
                         ids=[" ".join((c[0], *c[1])) for c in CASES])
def test_help_is_plain_text_with_a_help_string_for_every_argument(
        prog: str, path: Tuple[str, ...], parser: argparse.ArgumentParser, main: Main,
        capsys: pytest.CaptureFixture) -> None:
    out = help_of(main, path, capsys)
    assert out.startswith(f"usage: {' '.join((prog, *path))} "), out[:200]
    bad = REST.search(out)
    assert bad is None, f"reST markup {bad.group(0)!r} in {prog} {' '.join(path)} --help:\n{out}"
    assert parser.description, f"{prog} {' '.join(path)} has no description"
    for action in parser._actions:
        assert action.help and action.help.strip(), \
            f"{prog} {' '.join(path)}: {action.option_strings or action.dest} has no help"


@pytest.mark.parametrize("prog,main", [(c[0], c[2]) for c in COMMANDS[1:3]])
def test_run_help_lists_the_queue_disciplines_and_says_where_cases_run(
        prog: str, main: Main, capsys: pytest.CaptureFixture) -> None:
    out = " ".join(help_of(main, ["run"], capsys).split())
    assert ", ".join(AQMS) in out
    assert "where it can load the modules, else User-Mode Linux on simulated time" in out
    assert "--platform {native,kvm,uml,tcg}" in out and "--jobs N" in out
    assert "--seed SEED seed of the cases' random elements" in out
    assert "--repeat N run each case N times" in out
    assert "Exit codes: 0 done, 1 a case failed, 2 bad input." in out


def test_synctcp_mininet_help_is_its_parser_not_its_docstring(capsys: pytest.CaptureFixture) -> None:
    out = help_of(mininet_cli.main, [], capsys)
    assert out.startswith("usage: synctcp-mininet [-h] COMMAND ...")
    assert "The testbed's scenarios on Mininet" in out
    assert "(default: mininet)" in help_of(mininet_cli.main, ["run"], capsys)
    assert mininet_cli.main([]) == 0
    assert capsys.readouterr().out.startswith("usage: synctcp-mininet")


def test_synctcp_mininet_usage_errors_name_synctcp_mininet(capsys: pytest.CaptureFixture) -> None:
    with pytest.raises(SystemExit) as exc:
        mininet_cli.main(["run", "gu-smallbuffer", "--bogus"])
    assert exc.value.code == 2
    assert capsys.readouterr().err.startswith("usage: synctcp-mininet ")


def test_python_m_synctcp_testbed_is_the_command() -> None:
    """``python3 -m synctcp_testbed`` runs synctcp-testbed (no console script needed)."""
    import os
    import subprocess
    import sys

    root = Path(__file__).resolve().parents[2]
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(
        str(root / d) for d in ("tools", "testbed", "mininet"))}
    res = subprocess.run([sys.executable, "-m", "synctcp_testbed", "show", "weigle-ftp"],
                         capture_output=True, text=True, env=env, timeout=120)
    assert res.returncode == 0 and res.stdout.startswith("weigle-ftp: "), res.stderr
    res = subprocess.run([sys.executable, "-m", "synctcp_testbed", "show", "nosuch"],
                         capture_output=True, text=True, env=env, timeout=120)
    assert res.returncode == 2 and res.stderr.startswith("synctcp-testbed: no scenario 'nosuch'")
