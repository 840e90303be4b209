"""The User-Mode Linux platform: uml/uml.config, uml/build-uml.sh, scripts/umlrun.

Without a UML build only the fragment, the runner's argument errors and its
host-side sandbox planning are checked; with a build in the cache
(``nice -n 19 uml/build-uml.sh``) the built .config is checked against the
fragment and the runner boots it a few times (about a second each).
"""

from __future__ import annotations

import importlib.machinery
import importlib.util
import json
import os
import re
import shutil
import subprocess
import tempfile
import sys
from pathlib import Path
from typing import Dict, List, Optional

import pytest

from synctcp.modctl import CC_MODULES

REPO = Path(__file__).resolve().parents[2]
FRAGMENT = REPO / "uml" / "uml.config"
UMLRUN = REPO / "scripts" / "umlrun"
BUILD = REPO / "uml" / "build-uml.sh"
ROOTFS = REPO / "uml" / "build-rootfs.sh"
SERIES = os.environ.get("SYNCTCP_UML_SERIES", "7.2")

# what the platform needs from the kernel (the list)
REQUIRED = (
    "UML_TIME_TRAVEL_SUPPORT HOSTFS NET_NS VETH MODULES MODULE_UNLOAD DEVTMPFS "
    "DEVTMPFS_MOUNT IPV6 IP_ADVANCED_ROUTER IP_MULTIPLE_TABLES INET_DIAG INET_TCP_DIAG "
    "NET_SCHED NET_SCH_HTB NET_SCH_NETEM NET_SCH_RED NET_SCH_TBF NET_SCH_FQ NET_SCH_FQ_CODEL "
    "NET_SCH_PIE NET_SCH_PRIO NET_SCH_INGRESS TCP_CONG_CUBIC TCP_CONG_BBR TCP_CONG_VEGAS "
    "TCP_CONG_SCALABLE TCP_CONG_LP TCP_CONG_CDG TCP_CONG_DCTCP TCP_CONG_HTCP HZ_250"
).split()


def fragment() -> Dict[str, Optional[str]]:
    """CONFIG name -> value (None for "is not set")."""
    out: Dict[str, Optional[str]] = {}
    for line in FRAGMENT.read_text().splitlines():
        m = re.fullmatch(r"(CONFIG_\w+)=(.*)", line)
        if m:
            out[m.group(1)] = m.group(2)
        m = re.fullmatch(r"# (CONFIG_\w+) is not set", line)
        if m:
            out[m.group(1)] = None
    return out


def build_dir() -> Optional[Path]:
    r = subprocess.run([str(BUILD), "--series", SERIES, "--print"], capture_output=True, text=True)
    return Path(r.stdout.strip()) if r.returncode == 0 and r.stdout.strip() else None


def umlrun(*args: str, env: Optional[Dict[str, str]] = None, timeout: int = 120
           ) -> subprocess.CompletedProcess:
    return subprocess.run([str(UMLRUN), *args], capture_output=True, text=True,
                          timeout=timeout, env={**os.environ, **(env or {})}, cwd=REPO)


def load_umlrun():
    loader = importlib.machinery.SourceFileLoader("umlrun_under_test", str(UMLRUN))
    spec = importlib.util.spec_from_loader("umlrun_under_test", loader)
    mod = importlib.util.module_from_spec(spec)
    loader.exec_module(mod)
    return mod


# ---- without a build -----------------------------------------------------------

def test_fragment_has_what_the_platform_needs() -> None:
    frag = fragment()
    missing = [o for o in REQUIRED if frag.get(f"CONFIG_{o}") not in ("y", "m")]
    assert not missing, f"uml/uml.config lacks: {missing}"
    assert frag.get("CONFIG_HZ") == "250", "HZ must be Debian's 250"
    assert frag.get("CONFIG_NETFILTER", "unset") is None, "NETFILTER is to stay off"


def test_every_series_has_the_hz_patch() -> None:
    """HZ=250 needs arch/um/Kconfig patched (UML hard-codes HZ=100)."""
    for series_dir in sorted((REPO / "uml").glob("linux-*")):
        patches = list(series_dir.glob("*.patch"))
        assert any("Kconfig.hz" in p.read_text() for p in patches), series_dir


def test_series_fragments_add_what_only_that_series_has() -> None:
    """uml/linux-SERIES/series.config (uml/build-uml.sh adds it to uml/uml.config):
    7.2's DualPI2 (the testbed's --aqm dualpi2), which 6.1 lacks."""
    assert "CONFIG_NET_SCH_DUALPI2=y" in \
        (REPO / "uml" / "linux-7.2" / "series.config").read_text().splitlines()
    assert not (REPO / "uml" / "linux-6.1" / "series.config").exists()
    assert "series.config" in BUILD.read_text()


@pytest.mark.parametrize("args, message", [
    ([], "usage: scripts/umlrun"),
    (["--bogus", "true"], "unknown option --bogus"),
    (["--mem"], "--mem needs a value"),
    (["--series", "x", "true"], "is not a kernel series"),
    (["--mem", "lots", "true"], "is not a size"),
])
def test_argument_errors_are_one_line_and_exit_2(args: List[str], message: str) -> None:
    r = umlrun(*args)
    assert r.returncode == 2, r
    assert r.stdout == ""
    lines = r.stderr.splitlines()
    assert len(lines) == 1 and lines[0].startswith("umlrun: ") and message in lines[0], r.stderr


def test_bad_time_mode_and_missing_kernel_exit_2(tmp_path: Path) -> None:
    r = umlrun("true", env={"SYNCTCP_UML_TIME": "warp"})
    assert r.returncode == 2 and len(r.stderr.splitlines()) == 1 and "warp" in r.stderr
    r = umlrun("true", env={"SYNCTCP_CACHE": str(tmp_path)})
    assert r.returncode == 2, r
    assert r.stderr.splitlines() == [r.stderr.strip()] and "uml/build-uml.sh" in r.stderr


def _fake_kernel(cache: Path, name: str) -> Path:
    d = cache / "kernel" / name
    (d / "build").mkdir(parents=True)
    (d / "build" / "linux").write_bytes(b"Linux version 9.9.9-uml (x) #1\n")
    (d / "build" / "linux").chmod(0o755)
    (d / ".done").write_text("built\n")
    return d


def test_a_checkout_runs_its_own_kernel_not_the_series_last_build(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Another clone's build of other patches re-points the shared uml-SERIES link; a
    checkout whose uml/build-uml.sh named its kernel keeps running that one."""
    mod = load_umlrun()
    cache, checkout = tmp_path / "cache", tmp_path / "clone"
    mine = _fake_kernel(cache, "uml-7.2-aaaaaaaaaaaa")
    theirs = _fake_kernel(cache, "uml-7.2-bbbbbbbbbbbb")
    (cache / "kernel" / "uml-7.2").symlink_to(theirs)
    monkeypatch.setattr(mod, "REPO", checkout)
    monkeypatch.delenv("SYNCTCP_UML_KERNEL", raising=False)
    assert mod.find_kernel("7.2", cache)["linux"] == theirs / "build" / "linux"   # no own build
    own = checkout / "kmod" / "build" / "uml-7.2" / ".kernel"
    own.parent.mkdir(parents=True)
    own.write_text("uml-7.2-aaaaaaaaaaaa\n")
    assert mod.find_kernel("7.2", cache)["linux"] == mine / "build" / "linux"
    shutil.rmtree(mine)
    with pytest.raises(SystemExit) as exc:
        mod.find_kernel("7.2", cache)
    assert exc.value.code == 2


def test_a_build_keeps_the_other_keys_recently_used(tmp_path: Path) -> None:
    """uml/build-uml.sh's pruning: the two most recently used other builds of the series
    stay (a clone may be running one), older ones and interrupted builds go, other
    series are not touched, nor the build being made."""
    src = BUILD.read_text()
    fn = re.search(r"^KEEP_BUILDS=\d+\nprune_builds\(\) \{\n.*?^\}\n", src, re.S | re.M)
    assert fn, "prune_builds() not found in uml/build-uml.sh"
    kern = tmp_path / "kernel"
    ages = {"uml-7.2-000000000001": 50, "uml-7.2-000000000002": 40, "uml-7.2-000000000003": 30,
            "uml-7.2-000000000004": 20, "uml-6.1-000000000005": 99}
    for name, age in ages.items():
        d = _fake_kernel(tmp_path, name)
        (d / ".used").write_text("")
        os.utime(d / ".used", (1_000_000 - age, 1_000_000 - age))
    (kern / "uml-7.2-00000000000f").mkdir()            # an interrupted build
    current = kern / "uml-7.2-000000000009"
    current.mkdir()
    script = (fn.group(0) + f'cache={tmp_path}\nseries=7.2\ndir={current}\nprune_builds\n')
    r = subprocess.run(["bash", "-c", script], capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    assert sorted(p.name for p in kern.iterdir()) == [
        "uml-6.1-000000000005", "uml-7.2-000000000003", "uml-7.2-000000000004",
        "uml-7.2-000000000009"]


def test_build_script_usage_errors_exit_2() -> None:
    for args in (["--bogus"], ["--series"], ["--series", "six"]):
        r = subprocess.run([str(BUILD), *args], capture_output=True, text=True)
        assert r.returncode == 2 and "usage" in r.stderr, (args, r)
    for args in (["--bogus"], ["--key", "--print"]):
        r = subprocess.run([str(ROOTFS), *args], capture_output=True, text=True)
        assert r.returncode == 2 and "usage" in r.stderr, (args, r)


def test_image_key_is_the_build_scripts() -> None:
    """umlrun looks for the image under the key uml/build-rootfs.sh builds it by."""
    r = subprocess.run([str(ROOTFS), "--key"], capture_output=True, text=True)
    assert r.returncode == 0 and re.fullmatch(r"[0-9a-f]{12}\n", r.stdout), r
    assert load_umlrun().image_key() == r.stdout.strip()


@pytest.mark.parametrize("root, message", [
    ("/nonexistent", "SYNCTCP_UML_ROOT='/nonexistent'"),
    ("relative/dir", "absolute path"),
])
def test_bad_root_is_one_line_and_exit_2(root: str, message: str) -> None:
    r = umlrun("true", env={"SYNCTCP_UML_ROOT": root})
    if r.returncode == 2 and "no UML" in r.stderr:
        pytest.skip("no UML kernel to get that far")
    assert r.returncode == 2 and len(r.stderr.splitlines()) == 1 and message in r.stderr, r


def test_image_environment_is_the_images_whatever_the_callers() -> None:
    m = load_umlrun()
    env = {"PATH": f"/root/.pyenv/shims:{REPO}/scripts:/usr/bin:/usr/local/bin",
           "PYTHONPATH": f"tools:/opt/elsewhere:{REPO}/tests", "LANG": "de_DE.UTF-8",
           "LC_ALL": "de_DE.UTF-8", "HOME": "/home/someone"}
    rootfs = {"mode": "image", "path": "/nonexistent-image", "key": "0" * 12}
    old = dict(os.environ)
    try:
        os.environ.update(env)
        got = m.image_env(dict(env), rootfs, [str(REPO), "/cache"])
    finally:
        os.environ.clear()
        os.environ.update(old)
    assert got["PATH"] == m.IMAGE_PATH + f":{REPO}/.venv/bin:{REPO}/scripts"
    own = [str(REPO / d) for d in ("tools", "testbed", "mininet")]
    assert got["PYTHONPATH"].split(":") == [own[0], f"{REPO}/tests", *own[1:]]
    assert (got["LANG"], got["HOME"], "LC_ALL" in got) == ("C.UTF-8", "/root", False)
    assert got["SYNCTCP_UML_ROOTFS"] == "image " + "0" * 12
    assert got["PYTHONSAFEPATH"] == "1"

    # a Python named by any path, a venv's in the repository too, is the
    # image's python3; another program of the repository stays itself
    root = Path(tempfile.mkdtemp())
    try:
        (root / "usr" / "bin").mkdir(parents=True)
        (root / "usr" / "bin" / "python3").touch()
        (root / "usr" / "bin" / "ip").touch()
        for asked, got_ in ((f"{REPO}/.venv/bin/python3.11", "/usr/bin/python3"),
                            (".venv/bin/python3", "/usr/bin/python3"),
                            ("/root/.pyenv/versions/3.11.7/bin/python3", "/usr/bin/python3"),
                            ("/sbin/ip", "/usr/bin/ip"),
                            (f"{REPO}/scripts/vmrun", f"{REPO}/scripts/vmrun"),
                            ("python3", "python3")):
            assert m.image_program([asked, "-m", "x"], str(root), [str(REPO)]) == \
                [got_, "-m", "x"], asked
    finally:
        shutil.rmtree(root)


def test_job_script_names_the_repository_at_one_path_on_every_machine() -> None:
    """On an image, the command, its working directory and its environment
    name the repository at INSIDE_REPO, whatever the checkout's path (its
    length moved an HTTP case's figures: docs/platform.md); a path that only
    starts with the repository's is not the repository."""
    m = load_umlrun()
    rootfs = {"mode": "image", "path": "/nonexistent-image", "key": "0" * 12}
    kernel = {"kmod": REPO / "kmod" / "build" / "uml-7.2"}
    old, cwd = dict(os.environ), os.getcwd()
    try:
        os.environ.clear()
        os.environ.update({"PATH": f"{REPO}/.venv/bin:/usr/bin", "HOME": "/root",
                           "PYTHONPATH": f"{REPO}/testbed",
                           "SYNCTCP_X": f"{REPO}x/y:{REPO}/z"})
        os.chdir(REPO)
        script = m.job_script([f"{REPO}/.venv/bin/tool", f"{REPO}/kmod", f"{REPO}2"], kernel,
                              Path("/stage/run"), Path("/root/.cache/synctcp"), "inf-cpu",
                              rootfs, [str(REPO)])
        host = m.job_script(["true"], kernel, Path("/stage/run"), Path("/c"), "inf-cpu",
                            {"mode": "host", "path": "/"}, [str(REPO)])
    finally:
        os.chdir(cwd)
        os.environ.clear()
        os.environ.update(old)
    at = m.INSIDE_REPO
    lines = script.splitlines()
    assert lines[0] == f"cd {at} || exit 125"
    assert f"SYNCTCP_UML_KMOD={at}/kmod/build/uml-7.2" in lines[1]
    pp = re.search(r"PYTHONPATH=(\S+)", lines[1])
    assert pp and pp.group(1).split(":") == [f"{at}/testbed", f"{at}/tools", f"{at}/mininet"]
    assert f":{at}/.venv/bin" in lines[1]
    assert f"SYNCTCP_X={REPO}x/y:{at}/z" in lines[1]
    assert lines[2] == f"exec {at}/.venv/bin/tool {at}/kmod {REPO}2"
    assert str(REPO) + "/" not in script.replace(f"{REPO}x/", "")
    # the host's user space (development only) keeps the host's paths
    assert host.splitlines()[0] == f"cd {REPO} || exit 125"


def test_sandbox_plan_hides_unenterable_dirs_and_shows_path_entries() -> None:
    """Directories the UML user cannot enter become empty ones that show only
    the writable directories and the PATH entries behind them."""
    m = load_umlrun()
    base = Path(tempfile.mkdtemp(dir="/tmp"))     # pytest's tmp_path is in a 0700 dir
    base.chmod(0o755)
    try:
        _check_plan(m, base)
    finally:
        shutil.rmtree(base)


def _check_plan(m, tmp_path: Path) -> None:
    home = tmp_path / "home"
    (home / ".cache" / "synctcp").mkdir(parents=True)
    (home / ".pyenv" / "shims").mkdir(parents=True)
    (home / "secret").mkdir()
    home.chmod(0o700)
    repo = tmp_path / "repo"
    repo.mkdir()
    uid = 65534 if os.geteuid() != 65534 else 65533
    try:
        masks, ro = m.exposures([str(repo), str(home / ".cache" / "synctcp")],
                                [str(home / ".pyenv" / "shims"), "/usr/bin", "relative"], uid, uid)
    finally:
        home.chmod(0o755)
    assert masks == [str(home)]
    assert ro == [str(home / ".pyenv")]


# ---- with a build --------------------------------------------------------------

@pytest.fixture(scope="module")
def build() -> Path:
    b = build_dir()
    if b is None:
        pytest.skip(f"no UML {SERIES} build in the cache (nice -n 19 uml/build-uml.sh)")
    if os.environ.get("SYNCTCP_UML_ROOT", "image") == "image" and subprocess.run(
            [str(ROOTFS), "--print"], capture_output=True).returncode != 0:
        pytest.skip("no user-space image for the instances (uml/build-rootfs.sh)")
    return b


def test_built_config_has_every_fragment_setting(build: Path) -> None:
    config = (build / ".config").read_text().splitlines()
    lost = []
    for name, value in fragment().items():
        if value is None:
            if any(line.startswith(f"{name}=") for line in config):
                lost.append(f"{name} is set")
        elif f"{name}={value}" not in config:
            lost.append(f"{name}={value}")
    assert not lost, f"{build}/.config: {lost}"


def test_kmod_is_built_for_uml(build: Path) -> None:
    # this checkout's build for the cached kernel (uml/build-uml.sh: KMOD/build/uml-SERIES)
    kmod = REPO / "kmod" / "build" / f"uml-{SERIES}"
    for name in CC_MODULES.values():
        ko = kmod / f"{name}.ko"
        assert ko.is_file(), ko
        r = subprocess.run(["modinfo", "-F", "vermagic", str(ko)], capture_output=True, text=True)
        release = (build / "include" / "config" / "kernel.release").read_text().strip()
        assert r.stdout.split()[:1] == [release], (ko, r.stdout)


@pytest.mark.parametrize("cmd, status", [
    (["true"], 0), (["false"], 1), (["sh", "-c", "exit 7"], 7),
])
def test_exit_status_is_the_commands(build: Path, cmd: List[str], status: int) -> None:
    r = umlrun("--", *cmd)
    assert r.returncode == status, r.stderr
    assert re.search(r"^umlrun: uml \S+ time-travel=inf-cpu", r.stderr, re.M), r.stderr


def test_streams_cwd_environment_and_devices(build: Path) -> None:
    script = ('echo out; echo err >&2; pwd; echo "$SYNCTCP_PLATFORM $SYNCTCP_PROBE"; '
              'bash -c "cat <(echo procsubst)"; test -d /dev/shm && test -d /run/netns && echo dirs; '
              'test -t 1 || echo piped')
    r = umlrun("sh", "-c", script, env={"SYNCTCP_PROBE": "forwarded"})
    assert r.returncode == 0, r.stderr
    # no \r (raw ttys); a pipe inside, as umlrun's stdout is one here
    # on an image the working directory (the repository) is named at INSIDE_REPO
    cwd = load_umlrun().INSIDE_REPO if os.environ.get("SYNCTCP_UML_ROOT", "image") != "host" \
        else str(REPO)
    assert r.stdout == f"out\n{cwd}\numl forwarded\nprocsubst\ndirs\npiped\n"
    assert "err\n" in r.stderr


def test_host_is_read_only_and_the_repo_writable(build: Path, tmp_path: Path) -> None:
    run = REPO / "results" / "uml-test-probe"
    probe = run / "written-in-uml"
    outside = Path("/etc/synctcp-uml-probe")
    r = umlrun("sh", "-c", f"touch {probe}; touch {outside}; "
               f"mount -o remount,rw / && touch {outside}; true",
               env={"SYNCTCP_UML_RUNDIR": str(run)})
    try:
        assert r.returncode == 0, r.stderr
        assert probe.is_file()
        assert probe.stat().st_uid == os.geteuid()     # stored as the invoking user
        assert not outside.exists(), "the UML instance wrote to the host's /etc"
        meta = json.loads((run / "meta.json").read_text())
        assert meta["status"] == 0 and meta["platform"] == "uml"
        assert (run / "dmesg.txt").read_text().count("Linux version") == 1
    finally:
        if outside.exists():
            outside.unlink()
        subprocess.run(["rm", "-rf", str(run)])


def test_a_bound_directory_is_seen_at_its_target_and_bad_binds_exit_2(
        build: Path, tmp_path: Path) -> None:
    base = REPO / "results" / "uml-test-bind"
    src, dst = base / "src", base / "dst"
    subprocess.run(["rm", "-rf", str(base)])
    src.mkdir(parents=True)
    dst.mkdir()
    (src / "seen").write_text("from src\n")
    try:
        r = umlrun("sh", "-c", f"cat {dst}/seen && echo new > {dst}/made",
                   env={"SYNCTCP_UML_BIND": f"{src}={dst}"})
        if os.geteuid() != 0:
            assert r.returncode == 2 and "needs root" in r.stderr, r
            return
        assert r.returncode == 0 and "from src" in r.stdout, r
        assert (src / "made").read_text() == "new\n" and not (dst / "made").exists()
        for spec, message in ((f"{src}", "is not SRC=DST"), (f"{base}/no={dst}", "is not a directory"),
                              (f"{tmp_path}={dst}", "not inside a writable directory")):
            r = umlrun("true", env={"SYNCTCP_UML_BIND": spec})
            assert r.returncode == 2 and len(r.stderr.splitlines()) == 1, r
            assert message in r.stderr, r
    finally:
        subprocess.run(["rm", "-rf", str(base)])


def test_uml_runs_as_an_unprivileged_host_user(build: Path) -> None:
    """The owner of the UML process's host /proc entry, read through hostfs."""
    script = ('p=$(cat "$SYNCTCP_UML_RUNDIR/uml/pid") && mkdir -p /tmp/hp && '
              'mount -t hostfs -o "/proc/$p" hostfs /tmp/hp && stat -c %u /tmp/hp')
    r = umlrun("sh", "-c", script)
    assert r.returncode == 0, r.stderr
    uid = int(r.stdout.strip())
    if os.geteuid() == 0:
        import pwd
        expected = pwd.getpwnam(os.environ.get("SYNCTCP_UML_USER", "nobody")).pw_uid
        assert uid == expected != 0
    else:
        assert uid == os.geteuid()


def test_simulated_time_and_netem_rtt(build: Path) -> None:
    """ping through netem (50 ms each way) measures 100 ms of simulated time."""
    script = ("ip netns add a && ip netns add b && "
              "ip link add va netns a type veth peer name vb netns b && "
              "ip -n a addr add 10.9.0.1/24 dev va && ip -n b addr add 10.9.0.2/24 dev vb && "
              "ip -n a link set va up && ip -n b link set vb up && "
              "tc -n a qdisc add dev va root netem delay 50ms && "
              "tc -n b qdisc add dev vb root netem delay 50ms && "
              "ip netns exec a ping -c 3 10.9.0.2")
    r = umlrun("sh", "-c", script)
    assert r.returncode == 0, r.stdout + r.stderr
    rtts = [float(x) for x in re.findall(r"icmp_seq=[23] .*time=([\d.]+) ms", r.stdout)]
    assert len(rtts) == 2 and all(abs(t - 100.0) < 0.01 for t in rtts), r.stdout


@pytest.fixture(scope="module")
def image() -> Path:
    if os.environ.get("SYNCTCP_UML_ROOT", "image") != "image":
        pytest.skip("SYNCTCP_UML_ROOT is not image")
    r = subprocess.run([str(ROOTFS), "--print"], capture_output=True, text=True)
    if r.returncode != 0:
        pytest.skip("no user-space image (uml/build-rootfs.sh)")
    return Path(r.stdout.strip())


def test_the_image_is_the_user_space_and_meta_names_it(build: Path, image: Path) -> None:
    run = REPO / "results" / "uml-test-image"
    script = ('test -x /usr/lib/synctcp/boot && echo image; echo "$PATH|$LANG|$HOME"; '
              'python3 -c "import sys; print(sys.executable, sys.version_info[:2])"')
    r = umlrun(sys.executable, "-c", "import sys, subprocess; print(sys.executable); "
               f"sys.stdout.flush(); subprocess.run(['sh', '-c', {script!r}])",
               env={"SYNCTCP_UML_RUNDIR": str(run), "LANG": "de_DE.UTF-8",
                    # not the caller's PATH (make test puts .venv/bin on it):
                    # an entry outside the instance is dropped, one inside kept
                    "PATH": f"/nowhere/bin:{REPO}/.venv/bin:/usr/bin:/bin"})
    try:
        assert r.returncode == 0, r.stderr
        m = load_umlrun()
        assert r.stdout.splitlines() == ["/usr/bin/python3", "image",
                                         f"{m.IMAGE_PATH}:{m.INSIDE_REPO}/.venv/bin|C.UTF-8|/root",
                                         "/usr/bin/python3 (3, 11)"], r.stdout
        meta = json.loads((run / "meta.json").read_text())
        top = image.resolve().parent
        assert meta["rootfs"] == {"mode": "image", "path": str(top / "root"), "key": top.name,
                                  "content_sha256": (top / "content.sha256").read_text().strip()}
        linux = Path(meta["kernel"])
        import hashlib
        assert meta["kernel_sha256"] == hashlib.sha256(linux.read_bytes()).hexdigest()
        if sys.executable != "/usr/bin/python3":
            assert meta["command_asked"][0] == sys.executable
            assert meta["command"][0] == "/usr/bin/python3"
    finally:
        subprocess.run(["rm", "-rf", str(run)])


def test_host_user_space_on_request(build: Path) -> None:
    r = umlrun("sh", "-c", "test -e /usr/lib/synctcp/boot && echo image || echo host",
               env={"SYNCTCP_UML_ROOT": "host"})
    assert r.returncode == 0 and r.stdout == "host\n", r
    assert "the host's user space" in r.stderr


def test_same_instance_from_any_repository_path(build: Path, image: Path) -> None:
    """A copy of the repository deeper down (its scripts and packages, without
    kmod/*.ko) boots an instance whose clock and random numbers after a
    Python start are this one's: nothing of the host's paths reaches them."""
    copy = REPO / "results" / "uml-test-path" / "a" / "much" / "deeper" / "copy"
    subprocess.run(["rm", "-rf", str(copy.parents[3])])
    try:
        for rel in ("scripts/umlrun", "uml/init.sh", "uml/build-rootfs.sh",
                    "uml/rootfs/debs.lock", "uml/rootfs/wheels.lock", "kmod/Kbuild"):
            (copy / rel).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(REPO / rel, copy / rel)
        for rel in ("tools", "testbed", "mininet"):     # on the instance's PYTHONPATH
            shutil.copytree(REPO / rel, copy / rel,
                            ignore=shutil.ignore_patterns("__pycache__", "*.egg-info"))
        probe = ["sh", "-c", "cat /proc/sys/kernel/random/uuid; python3 -c "
                 "'import time; print(time.clock_gettime_ns(time.CLOCK_MONOTONIC))'"]
        here = umlrun(*probe)
        there = subprocess.run([str(copy / "scripts" / "umlrun"), *probe], capture_output=True,
                               text=True, timeout=120, cwd=copy)
        assert here.returncode == 0 and there.returncode == 0, (here.stderr, there.stderr)
        assert here.stdout == there.stdout, (here.stdout, there.stdout)
        assert int(here.stdout.split()[1]) - 1_000_000_000 < 10_000_000, here.stdout
    finally:
        subprocess.run(["rm", "-rf", str(copy.parents[3])])


def test_uml_build_of_tcp_sync_loads(build: Path) -> None:
    r = umlrun("sh", "-c", "insmod kmod/tcp_sync.ko && "
               "cat /proc/sys/net/ipv4/tcp_available_congestion_control")
    assert r.returncode == 0, r.stderr
    assert "sync" in r.stdout.split(), r.stdout


if __name__ == "__main__":
    sys.exit(pytest.main([__file__, "-q"]))
