"""The commands of README.md and docs/*.md run as written (tests/doccmds.py).

Host commands run here; the ones that need a kernel that loads the modules
run in tests/kernel/test_docs_commands.py.  Placeholder captures (FILE.pcap,
CAP.pcap) are the samples shipped in docs/samples/, which must be exactly
what docs/samples/make-samples.py writes.
"""

from __future__ import annotations

import itertools
import os
import re
import subprocess
import sys
from collections import Counter
from pathlib import Path
from typing import List

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from doccmds import REPO, RULES, Command, commands, substitute  # noqa: E402

ALL = commands()
HOST = [c for c in ALL if c.rule and c.rule.where == "host"]
SYNOPSIS = [c for c in ALL if c.rule and c.rule.where == "synopsis"]


def test_every_documented_command_has_a_rule() -> None:
    loose = [str(c) for c in ALL if c.rule is None]
    assert not loose, ("commands in the docs that tests/doccmds.py neither runs nor skips with a reason "
                       "(add a rule): " + "; ".join(loose))


def test_every_rule_matches_a_documented_command() -> None:
    used = {c.rule for c in ALL if c.rule}
    stale = [r.pattern for r in RULES if r not in used]
    assert not stale, f"rules for commands no document shows any more: {stale}"


def test_the_extractor_sees_the_quick_start() -> None:
    readme = [c.text for c in ALL if c.doc == "README.md"]
    assert readme[:2] == ["make demo", "make test"]
    assert len(ALL) >= 80 and len(HOST) >= 15


def test_skips_say_why() -> None:
    for c in ALL:
        if c.rule and c.rule.where == "skip":
            assert len(c.rule.expect) > 15, f"{c}: a skip needs its reason"


def _run(c: Command, cwd: Path) -> subprocess.CompletedProcess:
    text = substitute(c.text)
    # this checkout's commands and code, whichever Python runs the tests (its
    # .venv's under make, or another with PYTHONPATH): never another clone's
    env = dict(os.environ, COLUMNS="200", MPLBACKEND="Agg",
               PATH=f"{Path(sys.executable).parent}{os.pathsep}{os.environ.get('PATH', '')}",
               PYTHONPATH=os.pathsep.join(str(REPO / d) for d in ("tools", "testbed", "mininet")))
    # from the repository where the command names its files, else where output may go
    here = REPO if re.match(r"^(make|scripts/|uml/|kmod/)", text) else cwd
    return subprocess.run(["bash", "-c", text], cwd=here,
                          capture_output=True, text=True, timeout=300, env=env)


@pytest.mark.parametrize("cmd", HOST, ids=[f"{c.doc}:{c.line}" for c in HOST])
def test_host_command_runs_as_documented(cmd: Command, tmp_path: Path) -> None:
    assert cmd.rule is not None
    if cmd.rule.needs and not Path(cmd.rule.needs).expanduser().exists():
        pytest.skip(f"needs {cmd.rule.needs}")
    r = _run(cmd, tmp_path)
    out = r.stdout + r.stderr
    assert r.returncode in cmd.rule.exit, f"{cmd}: exit {r.returncode}\n{out[-2000:]}"
    assert "Traceback (most recent call last)" not in out, f"{cmd}: a traceback\n{out[-2000:]}"
    if cmd.rule.expect:
        assert re.search(cmd.rule.expect, out, re.M), f"{cmd}: no line like {cmd.rule.expect!r}\n{out[-2000:]}"


def _options(text: str) -> List[str]:
    return re.findall(r"\[(--[a-z][a-z0-9-]*)", text)


@pytest.mark.parametrize("cmd", SYNOPSIS, ids=[f"{c.doc}:{c.line}" for c in SYNOPSIS])
def test_synopsis_options_are_in_the_help(cmd: Command) -> None:
    # a continuation line belongs to the synopsis above it in the same block
    head = next(c for c in reversed(ALL) if c.doc == cmd.doc and c.block == cmd.block
                and c.line <= cmd.line and not c.text.startswith("["))
    # the program and its subcommands: the lower-case words before the first
    # argument or option ("synctcp-testbed hosts check hosts.toml ...")
    words = head.text.split()
    argv = words[:1] + [w for w in itertools.takewhile(
        lambda w: re.fullmatch(r"[a-z][a-z0-9_-]*", w) is not None, words[1:3])]
    r = subprocess.run([*argv, "--help"], capture_output=True, text=True, timeout=60,
                       env=dict(os.environ, PATH=f"{Path(sys.executable).parent}{os.pathsep}"
                                                 f"{os.environ.get('PATH', '')}"))
    assert r.returncode == 0, r.stderr
    missing = [o for o in _options(cmd.text) if o not in r.stdout]
    assert _options(cmd.text) and not missing, f"{cmd}: not in `{' '.join(argv)} --help`: {missing}"


def test_shipped_samples_are_what_the_generator_writes(tmp_path: Path) -> None:
    subprocess.run([sys.executable, str(REPO / "docs/samples/make-samples.py"), str(tmp_path)],
                   check=True, capture_output=True)
    for f in sorted(tmp_path.glob("*.pcap")):
        assert f.read_bytes() == (REPO / "docs/samples" / f.name).read_bytes(), \
            f"docs/samples/{f.name} differs from what make-samples.py writes: regenerate it"


def summary() -> str:
    """How many commands run where, and the skip reasons (printed at the end of the run)."""
    n = Counter(c.rule.where if c.rule else "no rule" for c in ALL)
    reasons = Counter(c.rule.expect for c in ALL if c.rule and c.rule.where == "skip")
    lines = [f"docs commands: {len(ALL)} in {len({c.doc for c in ALL})} files: {n['host']} run on the host, "
             f"{n['vm']} in a kernel that loads the modules (tests/kernel), {n['synopsis']} usage lines "
             f"checked against --help, {n['skip']} skipped:"]
    lines += [f"  {k:2} {why}" for why, k in reasons.most_common()]
    return "\n".join(lines)

