"""Every external command the project invokes comes from a package that
``make setup`` installs (or that every Debian root has).

A newcomer's first ``make demo`` once failed because virtme-ng needed a
static busybox and the kernel tests ``ping``, which no setup step
installed: the machines the project was developed on had them from
earlier work.  These tests catch the next such command before a newcomer
meets it:

* the sources are scanned for the commands they run (argv lists and shell
  strings handed to the runners in Python, command positions in the shell
  scripts and Makefile recipes); each must be listed in ``COMMANDS`` with
  its Debian package, or in ``NOT_COMMANDS`` with the reason it is not one;
* each listed package is one ``scripts/setup.sh`` installs, one of the
  README's prerequisites, or part of a minimal Debian root;
* after setup (``make test`` runs it first; ``make fresh-check-short`` runs
  this file inside a pristine root) every command resolves, and the file it
  resolves to belongs to the named package (``dpkg -S``).
"""

from __future__ import annotations

import ast
import os
import re
import shutil
import subprocess
from pathlib import Path
from typing import Dict, Iterator, Set, Tuple

import pytest

REPO = Path(__file__).resolve().parents[2]

# command -> the Debian package that provides it
COMMANDS: Dict[str, str] = {
    # a minimal root (mmdebstrap --variant=minbase) has these
    "awk": "mawk", "bash": "bash", "cat": "coreutils", "cp": "coreutils", "cut": "coreutils",
    "date": "coreutils", "dirname": "coreutils", "basename": "coreutils", "echo": "coreutils",
    "env": "coreutils", "id": "coreutils", "ln": "coreutils", "ls": "coreutils",
    "mkdir": "coreutils", "mktemp": "coreutils", "mv": "coreutils", "nproc": "coreutils",
    "rm": "coreutils", "sha256sum": "coreutils", "sleep": "coreutils", "sort": "coreutils",
    "tail": "coreutils", "head": "coreutils", "tee": "coreutils", "timeout": "coreutils",
    "wc": "coreutils", "tr": "coreutils", "touch": "coreutils", "chmod": "coreutils",
    "install": "coreutils", "realpath": "coreutils", "readlink": "coreutils", "stat": "coreutils",
    "dpkg": "dpkg", "dpkg-deb": "dpkg", "dpkg-query": "dpkg", "find": "findutils",
    "xargs": "findutils", "grep": "grep", "gzip": "gzip", "sed": "sed", "tar": "tar",
    "sh": "dash", "apt-get": "apt", "flock": "util-linux", "unshare": "util-linux",
    "pivot_root": "util-linux", "rmdir": "coreutils",
    "mount": "mount", "umount": "mount", "mountpoint": "util-linux", "du": "coreutils",
    "printf": "coreutils", "true": "coreutils", "uname": "coreutils", "diff": "diffutils",
    "paste": "coreutils", "od": "coreutils", "chroot": "coreutils", "apt-cache": "apt",
    "stty": "coreutils", "sync": "coreutils",
    # the README's prerequisites (apt-get install git make)
    "git": "git", "make": "make",
    # scripts/setup.sh
    "gcc": "gcc", "cc": "gcc", "patch": "patch", "bc": "bc", "flex": "flex", "bison": "bison",
    "ccache": "ccache", "pahole": "pahole", "clang": "clang", "xz": "xz-utils", "readelf": "binutils-x86-64-linux-gnu",
    "valgrind": "valgrind",
    "ld": "binutils-x86-64-linux-gnu",
    "insmod": "kmod", "rmmod": "kmod", "modprobe": "kmod", "modinfo": "kmod", "depmod": "kmod",
    "lsmod": "kmod",
    "qemu-system-x86_64": "qemu-system-x86", "busybox": "busybox-static",
    "ip": "iproute2", "tc": "iproute2", "ss": "iproute2",
    "nginx": "nginx", "ping": "iputils-ping", "iperf3": "iperf3", "stress-ng": "stress-ng", "nice": "coreutils", "seq": "coreutils", "tcpdump": "tcpdump", "ethtool": "ethtool",
    "sysctl": "procps", "ps": "procps", "pkill": "procps", "pgrep": "procps",
    # remote/ (docs/real-hosts.md): the orchestrator's OpenSSH; sshd is the UML image's
    "ssh": "openssh-client", "ssh-keygen": "openssh-client",
    "ipcrm": "util-linux", "dmesg": "util-linux",
    "python3": "python3-minimal", "pip3": "python3-pip",
    "dkms": "dkms", "mokutil": "mokutil", "openssl": "openssl",
    "chronyd": "chrony", "chronyc": "chrony", "gpsd": "gpsd", "gpsfake": "gpsd-clients",
    "ppstest": "pps-tools", "mn": "mininet",
    # --slurm (dask-jobqueue runs sbatch, squeue, scancel) and its test's one-node Slurm
    "sbatch": "slurm-client", "squeue": "slurm-client", "scancel": "slurm-client",
    "sinfo": "slurm-client", "slurmctld": "slurmctld", "slurmd": "slurmd",
    "munged": "munge", "munge": "munge",
    # virtme-ng runs these on the host (virtme/commands/run.py: `file -L` on
    # busybox to see that it is static; mkinitramfs.py: busybox-static)
    "file": "file",
    # pip (scripts/setup.sh installs virtme-ng with pip, not apt)
    "vng": "pip:virtme-ng", "virtme-configkernel": "pip:virtme-ng",
    # the project's own console scripts (pyproject.toml)
    "synctcp": "pip:synctcp", "synctcp-testbed": "pip:synctcp", "synctcp-mininet": "pip:synctcp",
    # uml/build-rootfs.sh (and scripts/fresh-check.sh, which installs it when missing)
    "mmdebstrap": "mmdebstrap",
}

# words in a command position that are not external commands, and why
NOT_COMMANDS: Dict[str, str] = {
    **{w: "bash keyword or builtin" for w in (
        "if then else elif fi for while until do done case esac in function return exit set "
        "shift local export read cd exec command trap wait source . eval declare readonly "
        "unset test [ [[ ]] { } ! break continue type hash compgen pwd let umask builtin "
        "caller getopts mapfile").split()},
    "pyenv": "run only where it is installed (command -v pyenv), to rehash pip's new scripts",
}
# not from any package: paths of this tree or of a kernel build
LOCAL = re.compile(r"^(\.|/|\$|scripts/|kmod/|tcp_option/|tests/)")

# packages a minbase root has before anything is installed
MINBASE = {"bash", "coreutils", "dash", "dpkg", "apt", "findutils", "grep", "gzip", "sed", "tar",
           "util-linux", "mount", "mawk", "diffutils"}
# the README's prerequisite line, which fresh-check runs first
PREREQ = {"git", "make"}
# packages a listed package brings along (dpkg -S names them, not the listed one)
VIA = {"gcc": "build-essential", "patch": "build-essential", "make": "build-essential",
       "xz-utils": "build-essential", "binutils-x86-64-linux-gnu": "build-essential", "python3-minimal": "python3-pip", "openssl": "libssl-dev",
       "pahole": "dwarves",
       "slurm-client": "slurm-wlm", "slurmctld": "slurm-wlm", "slurmd": "slurm-wlm"}
# dpkg -S names the real owner of an alternative or a versioned package
OWNER_ALSO = {"gcc": {"gcc-12", "cpp-12"}, "clang": {"clang-14"}, "python3-minimal": {"python3.11-minimal"}}


def setup_packages() -> Set[str]:
    # comments first: one may hold a ")" (valgrind's "(callgrind)")
    text = re.sub(r"#[^\n]*", "", (REPO / "scripts/setup.sh").read_text())
    m = re.search(r"^pkgs=\((.*?)\)", text, re.S | re.M)
    assert m, "scripts/setup.sh has no pkgs=(...) list"
    return set(m.group(1).split())


# ---- finding the commands the sources run -----------------------------------

RUNNERS = {"run", "sh", "Popen", "check_output", "check_call", "call", "_q", "_run", "system", "which"}
WORD = re.compile(r"^[a-z][a-z0-9_.+-]*$")


def _first_word(s: str) -> str:
    """The command of a shell string, past ``ip netns exec NS`` and env assignments."""
    words = s.split()
    while words and "=" in words[0]:
        words.pop(0)
    if words[:3] == ["ip", "netns", "exec"] and len(words) > 4:
        return words[4]
    return words[0] if words else ""


def python_commands() -> Iterator[Tuple[str, str]]:
    paths = [p for d in ("tools", "testbed", "mininet", "tests", "scripts") for p in (REPO / d).rglob("*.py")]
    for path in paths:
        tree = ast.parse(path.read_text(), str(path))
        for node in ast.walk(tree):
            if not isinstance(node, ast.Call) or not node.args:
                continue
            f = node.func
            name = f.attr if isinstance(f, ast.Attribute) else f.id if isinstance(f, ast.Name) else ""
            if name not in RUNNERS:
                continue
            arg = node.args[0]
            where = f"{path.relative_to(REPO)}:{node.lineno}"
            if isinstance(arg, (ast.List, ast.Tuple)) and arg.elts:
                first = arg.elts[0]
                if isinstance(first, ast.Constant) and isinstance(first.value, str):
                    yield first.value, where
                    # sh -c "..." / bash -c "...": the command inside
                    if first.value in ("sh", "bash") and len(arg.elts) > 2:
                        inner = arg.elts[2]
                        if isinstance(inner, ast.Constant) and isinstance(inner.value, str):
                            yield _first_word(inner.value), where
            elif isinstance(arg, ast.Constant) and isinstance(arg.value, str) and name != "run":
                yield _first_word(arg.value), where
            elif isinstance(arg, ast.JoinedStr) and arg.values and isinstance(arg.values[0], ast.Constant):
                lead = str(arg.values[0].value)
                if " " in lead.strip() or lead.endswith(" "):
                    yield _first_word(lead), where


SPLIT = re.compile(r"\|\||&&|[|;(`{]|\$\(|\bthen\b|\bdo\b|\belse\b|!|\bexec\b|\btimeout\s+\d+\S*|"
                   r"\bcommand -v\b|\bxargs\b")


def shell_files() -> Iterator[Path]:
    for p in sorted(REPO.rglob("*")):
        if ".git" in p.parts or not p.is_file() or "results" in p.parts:
            continue
        if p.suffix == ".sh" or p.name in ("vmrun", "run", "Makefile"):     # .ci/run, scripts/vmrun
            yield p


def _shell_code(line: str, is_make: bool) -> str:
    """A line's code: comments, quoted text, arithmetic and case labels removed;
    command substitutions (also those inside double quotes) kept as segments."""
    if is_make:
        line = re.sub(r"(?<!\$)\$\([^)]*\)", "MAKEVAR", line.lstrip("\t@-")).replace("$$", "$")
    code = re.sub(r"\$\(\(.*?\)\)", "0", line)          # $(( arithmetic ))
    code = re.sub(r"'[^']*'", "''", code)                # quoted text is data
    subst = " ; ".join(re.findall(r"\$\(\s*([a-z][\w.+-]*[^)]*)", code))
    code = re.sub(r'"(\\.|[^"\\])*"', '""', code)
    code = re.sub(r"(^|\s)#.*", "", code)
    code = re.sub(r"^\s*[\w*.|\- \"'=]+\)(\s|$)", " ", code)   # case labels
    code = re.sub(r"\w+\+?=\([^)]*\)?", " ", code)                # array assignments
    return code + (" ; " + subst if subst else "")


def shell_commands() -> Iterator[Tuple[str, str]]:
    files = list(shell_files())
    # functions of every script (sourced helpers such as private_apt_init)
    functions = {f for p in files for f in re.findall(r"^\s*([a-z_][a-z0-9_]*)\s*\(\)\s*\{",
                                                     p.read_text(), re.M)}
    for path in files:
        is_make = path.name == "Makefile"
        heredoc = None
        in_array = False
        make_cont = False     # Makefile: in the continuation of a non-recipe line
        for no, line in enumerate(path.read_text().splitlines(), 1):
            if heredoc:
                if line.strip() == heredoc:
                    heredoc = None
                continue
            if in_array:
                in_array = ")" not in re.sub(r"#.*", "", line)
                continue
            if re.match(r"^\s*\w+\+?=\((?!.*\))", line):
                in_array = True
                continue
            m = re.search(r"<<-?\s*['\"]?(\w+)['\"]?", line.replace("<<<", ""))
            if m:
                heredoc = m.group(1)
            if is_make:
                if make_cont or not line.startswith("\t"):     # not a recipe line
                    make_cont = line.rstrip().endswith("\\")
                    continue
            for seg in SPLIT.split(_shell_code(line, is_make)):
                words = seg.split()
                while words and re.match(r"^[A-Za-z_][A-Za-z0-9_]*=", words[0]):
                    words.pop(0)
                while words and words[0] in ("sudo", "then", "do", "else", "}", ")", "nice", "ionice"):
                    words.pop(0)
                if not words:
                    continue
                w = words[0].rstrip(";)")
                if w in functions or not WORD.match(w):
                    continue
                yield w, f"{path.relative_to(REPO)}:{no}"


def all_invoked() -> Dict[str, str]:
    seen: Dict[str, str] = {}
    for cmd, where in list(python_commands()) + list(shell_commands()):
        if cmd and not LOCAL.match(cmd) and cmd not in NOT_COMMANDS:
            seen.setdefault(cmd, where)
    return seen


# ---- the tests --------------------------------------------------------------

def test_every_invoked_command_is_listed_with_its_package() -> None:
    unknown = {c: w for c, w in all_invoked().items() if c not in COMMANDS}
    assert not unknown, ("commands run by the sources with no package in COMMANDS (add the package to "
                         "scripts/setup.sh and the command here): "
                         + ", ".join(f"{c} ({w})" for c, w in sorted(unknown.items())))


def test_the_scan_finds_the_commands_it_must() -> None:
    """The scanner itself: commands known to be run from Python and shell."""
    seen = all_invoked()
    for cmd in ("ip", "tc", "ping", "stress-ng", "insmod", "flock", "vng", "virtme-configkernel", "patch"):
        assert cmd in seen, f"the scan lost {cmd}"


def test_every_listed_package_is_installed_by_setup() -> None:
    installed = setup_packages()
    missing = {}
    for cmd, pkg in COMMANDS.items():
        if pkg.startswith("pip:") or pkg in installed or pkg in MINBASE or pkg in PREREQ:
            continue
        if VIA.get(pkg) in installed or VIA.get(pkg) == "scripts/fresh-check.sh":
            continue
        missing[cmd] = pkg
    assert not missing, f"packages that scripts/setup.sh does not install: {missing}"


def test_setup_installs_what_a_fresh_root_lacked() -> None:
    """What a pristine bookworm root showed missing (issue 13)."""
    assert {"busybox-static", "file", "iputils-ping"} <= setup_packages()


def _owner(path: str) -> str:
    real = os.path.realpath(path)
    # usrmerge: /usr/bin/x may be packaged as /bin/x and the other way round
    for p in (real, path, re.sub(r"^/usr/", "/", real), re.sub(r"^/usr/", "/", path)):
        r = subprocess.run(["dpkg", "-S", p], capture_output=True, text=True)
        owners = [ln.split(":")[0].split(",")[0].strip() for ln in r.stdout.splitlines()
                  if not ln.startswith("diversion ")]
        if r.returncode == 0 and owners:
            return owners[-1]
    return ""


@pytest.mark.skipif(shutil.which("dpkg") is None, reason="not a Debian system")
def test_after_setup_every_command_resolves_to_its_package() -> None:
    """Run after ``make setup`` (make test, and in the pristine root by
    fresh-check): each command is on PATH, from the named package."""
    if not os.environ.get("SYNCTCP_FRESH_ROOT") and not shutil.which("vng"):
        pytest.skip("make setup has not run here (no vng); fresh-check runs this in a pristine root")
    absent, wrong = [], []
    for cmd, pkg in sorted(COMMANDS.items()):
        if VIA.get(pkg) == "scripts/fresh-check.sh":
            continue  # the check's own tool, installed when fresh-check first runs
        path = shutil.which(cmd, path="/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin")
        path = path or shutil.which(cmd)
        if path is None:
            absent.append(f"{cmd} ({pkg})")
            continue
        if pkg.startswith("pip:") or path.startswith("/usr/local/") or "/.pyenv/" in path:
            continue
        owner = _owner(path)
        if owner != pkg and owner not in OWNER_ALSO.get(pkg, set()):
            wrong.append(f"{cmd}: {path} is from {owner or 'no package'}, not {pkg}")
    assert not absent, "not installed after make setup: " + ", ".join(absent)
    assert not wrong, "; ".join(wrong)
