"""``synctcp load`` / ``unload`` / ``list`` against a fake /proc, /sys and
/lib/modules (tests/kernel/test_cli_modctl.py runs them for real in the VM)."""

from __future__ import annotations

import json
import re
import struct
import subprocess
from pathlib import Path
from typing import Dict, List, Sequence

import pytest

from synctcp import modctl
from synctcp.cli import main
from synctcp.modctl import (EFI_SECUREBOOT, MODULE_SIG_MAGIC, Host, ModError, elf_section, list_state, load,
                            parse_efi_secureboot, parse_modinfo_text, parse_modules_dep,
                            parse_mokutil_sb_state, read_modinfo, unload)

REPO = Path(__file__).resolve().parents[2]
RELEASE = "6.1.0-56-amd64"
PARAMS = {"tcp_sync": ["thresh_pct", "source"], "tcp_mixreact": ["preloss_max_ms", "source", "alloc_failures"],
          "tcp_etcp": ["b", "p0_ppm"]}


def make_ko(path: Path, name: str, params: Sequence[str], vermagic: str = RELEASE,
            signed: bool = False) -> Path:
    """A minimal ELF64 relocatable with a .modinfo section, as kbuild writes it."""
    info = b"".join(f"{kv}\0".encode() for kv in
                    ["version=0.1.0", "license=GPL", *(f"parm={p}:the {p}" for p in params),
                     "srcversion=ABC", "depends=", f"name={name}",
                     f"vermagic={vermagic} SMP preempt mod_unload modversions "])
    shstr = b"\0.modinfo\0.shstrtab\0"
    body_off = 64
    info_off = body_off
    shstr_off = info_off + len(info)
    shoff = (shstr_off + len(shstr) + 7) & ~7
    ehdr = bytearray(64)
    ehdr[0:4] = b"\x7fELF"
    ehdr[4], ehdr[5], ehdr[6] = 2, 1, 1
    struct.pack_into("<HHIQQQIHHHHHH", ehdr, 16, 1, 62, 1, 0, 0, shoff, 0, 64, 0, 0, 64, 3, 2)
    data = bytearray(ehdr) + info + shstr
    data += b"\0" * (shoff - len(data))
    data += b"\0" * 64                                                  # SHN_UNDEF
    data += struct.pack("<IIQQQQIIQQ", 1, 1, 2, 0, info_off, len(info), 0, 0, 1, 0)
    data += struct.pack("<IIQQQQIIQQ", 10, 3, 0, 0, shstr_off, len(shstr), 0, 0, 1, 0)
    if signed:
        data += b"\0" * 16 + MODULE_SIG_MAGIC
    path.write_bytes(bytes(data))
    return path


class FakeKernel:
    """Runs modprobe/insmod/rmmod/mokutil against the fake tree."""

    def __init__(self, host: "FakeHost") -> None:
        self.host = host
        self.calls: List[List[str]] = []
        self.fail: Dict[str, str] = {}           # command name -> stderr

    def __call__(self, cmd: Sequence[str]) -> subprocess.CompletedProcess:
        cmd = list(cmd)
        self.calls.append(cmd)
        if cmd[0] in self.fail:
            return subprocess.CompletedProcess(cmd, 1, "", self.fail[cmd[0]])
        if cmd[0] in ("insmod", "modprobe"):
            mod = Path(cmd[1]).name.split(".")[0]
            self.host.fake_load(mod, dict(kv.split("=", 1) for kv in cmd[2:]))
            return subprocess.CompletedProcess(cmd, 0, "", "")
        if cmd[0] == "rmmod":
            self.host.fake_unload(cmd[1])
            return subprocess.CompletedProcess(cmd, 0, "", "")
        return subprocess.CompletedProcess(cmd, 127, "", f"{cmd[0]}: command not found")


class FakeHost(Host):
    def fake_load(self, mod: str, params: Dict[str, str]) -> None:
        d = self.sysmod(mod)
        (d / "parameters").mkdir(parents=True)
        (d / "initstate").write_text("live\n")
        (d / "version").write_text("0.1.0\n")
        (d / "refcnt").write_text("0\n")
        for p in PARAMS[mod]:
            (d / "parameters" / p).write_text(params.get(p, "1") + "\n")
        mods = self.proc / "modules"
        mods.write_text(mods.read_text() + f"{mod} 20480 0 - Live 0x0\n")
        av = self.ipv4 / "tcp_available_congestion_control"
        cc = {v: k for k, v in modctl.CC_MODULES.items()}[mod]
        av.write_text(av.read_text().strip() + f" {cc}\n")

    def fake_unload(self, mod: str) -> None:
        import shutil
        shutil.rmtree(self.sysmod(mod))
        mods = self.proc / "modules"
        mods.write_text("".join(ln + "\n" for ln in mods.read_text().splitlines() if not ln.startswith(mod + " ")))
        cc = {v: k for k, v in modctl.CC_MODULES.items()}[mod]
        av = self.ipv4 / "tcp_available_congestion_control"
        av.write_text(" ".join(c for c in av.read_text().split() if c != cc) + "\n")


@pytest.fixture
def host(tmp_path: Path) -> FakeHost:
    h = FakeHost(proc=tmp_path / "proc", sys=tmp_path / "sys", lib_modules=tmp_path / "lib/modules",
                 release=RELEASE, kmod_dir=tmp_path / "kmod", euid=0)
    h.run = FakeKernel(h)
    (h.proc / "sys/kernel").mkdir(parents=True)
    (h.proc / "modules").write_text("")
    (h.proc / "sys/kernel/modules_disabled").write_text("0\n")
    h.ipv4.mkdir(parents=True)
    (h.ipv4 / "tcp_congestion_control").write_text("cubic\n")
    (h.ipv4 / "tcp_available_congestion_control").write_text("reno cubic\n")
    (h.ipv4 / "tcp_allowed_congestion_control").write_text("reno cubic\n")
    (h.sys / "module").mkdir(parents=True)
    (h.lib_modules / RELEASE / "build").mkdir(parents=True)
    (h.lib_modules / RELEASE / "modules.dep").write_text("kernel/net/ipv4/tcp_bbr.ko:\n")
    h.kmod_dir.mkdir()
    for mod, params in PARAMS.items():
        make_ko(h.kmod_dir / f"{mod}.ko", mod, params)
    return h


def calls(h: Host) -> List[List[str]]:
    return h.run.calls  # type: ignore[attr-defined]


def reason(fn, *a, **kw) -> str:  # type: ignore[no-untyped-def]
    with pytest.raises(ModError) as e:
        fn(*a, **kw)
    return e.value.reason


# --- module files -------------------------------------------------------------

def test_synthetic_ko(tmp_path: Path) -> None:
    info = read_modinfo(make_ko(tmp_path / "tcp_sync.ko", "tcp_sync", ["thresh_pct", "source"]))
    assert info.version == "0.1.0" and info.vermagic_release == RELEASE and not info.signed
    assert list(info.params) == ["thresh_pct", "source"] and info.first("name") == "tcp_sync"
    assert read_modinfo(make_ko(tmp_path / "s.ko", "tcp_sync", [], signed=True)).signed


def test_not_a_module(tmp_path: Path) -> None:
    (tmp_path / "x.ko").write_bytes(b"hello")
    with pytest.raises(ModError, match="not an ELF"):
        read_modinfo(tmp_path / "x.ko")
    assert elf_section((make_ko(tmp_path / "y.ko", "y", [])).read_bytes(), ".text") is None


@pytest.mark.parametrize("mod", list(modctl.CC_MODULES.values()))
def test_built_modules_declare_their_source_parameters(mod: str) -> None:
    """The parameters read from the built .ko are those of the C source."""
    ko = REPO / "kmod" / f"{mod}.ko"
    if not ko.exists():
        pytest.skip(f"kmod/{mod}.ko not built (make modules)")
    src = (REPO / "kmod" / f"{mod}_main.c").read_text()
    declared = re.findall(r"^module_param(?:_cb)?\((\w+),", src, re.M)
    info = read_modinfo(ko)
    assert sorted(info.params) == sorted(declared) and declared
    assert info.version == re.search(r'MODULE_VERSION\("(.*)"\)', src).group(1)  # type: ignore[union-attr]


def test_modinfo_text_and_modules_dep() -> None:
    f = parse_modinfo_text("filename:       /x/tcp_sync.ko.xz\nparm:           thresh_pct:the % (uint)\n"
                           "signer:         DKMS module signing key\nsig_id:         PKCS#7\n")
    assert f["parm"] == ["thresh_pct:the % (uint)"] and "sig_id" in f
    dep = parse_modules_dep("updates/dkms/tcp_sync.ko.xz:\nkernel/net/ipv4/tcp_bbr.ko: kernel/x.ko\n"
                            "updates/dkms/tcp-etcp.ko:\n")
    assert dep == {"tcp_sync": "updates/dkms/tcp_sync.ko.xz", "tcp_bbr": "kernel/net/ipv4/tcp_bbr.ko",
                   "tcp_etcp": "updates/dkms/tcp-etcp.ko"}


def test_secure_boot_state_parsers() -> None:
    assert parse_mokutil_sb_state("SecureBoot enabled\n") is True
    assert parse_mokutil_sb_state("SecureBoot disabled\nPlatform is in Setup Mode\n") is False
    assert parse_mokutil_sb_state("EFI variables are not supported on this system\n") is False
    assert parse_mokutil_sb_state("") is None
    assert parse_efi_secureboot(b"\x06\x00\x00\x00\x01") is True
    assert parse_efi_secureboot(b"\x06\x00\x00\x00\x00") is False
    assert parse_efi_secureboot(b"") is None


# --- diagnosis before loading ---------------------------------------------------

def test_no_module_support(host: FakeHost) -> None:
    (host.proc / "modules").unlink()
    assert reason(load, host, "sync", {}) == "no-module-support"
    st = list_state(host)
    assert not st["module_support"]["ok"] and "CONFIG_MODULES" in st["module_support"]["message"]
    assert calls(host) == []


def test_module_loading_disabled(host: FakeHost) -> None:
    (host.proc / "sys/kernel/modules_disabled").write_text("1\n")
    assert reason(load, host, "sync", {}) == "modules-disabled"
    assert reason(unload, host, "sync") == "modules-disabled"


def test_missing_headers(host: FakeHost) -> None:
    (host.kmod_dir / "tcp_sync.ko").unlink()
    (host.lib_modules / RELEASE / "build").rmdir()
    with pytest.raises(ModError, match=f"install linux-headers-{RELEASE}") as e:
        load(host, "sync", {})
    assert e.value.reason == "missing-headers"


def test_not_built(host: FakeHost) -> None:
    (host.kmod_dir / "tcp_etcp.ko").unlink()
    assert reason(load, host, "all", {}) == "not-built"
    assert calls(host) == []


def test_built_for_another_kernel(host: FakeHost) -> None:
    make_ko(host.kmod_dir / "tcp_sync.ko", "tcp_sync", PARAMS["tcp_sync"], vermagic="6.12.0-1-amd64")
    with pytest.raises(ModError, match="built for kernel 6.12.0-1-amd64") as e:
        load(host, "sync", {})
    assert e.value.reason == "wrong-kernel"


def test_unknown_parameter_is_refused_before_loading(host: FakeHost) -> None:
    with pytest.raises(ModError, match="unknown parameter nope.*thresh_pct, source|unknown parameter nope"
                       ".*source, thresh_pct") as e:
        load(host, "sync", {"nope": "1"})
    assert e.value.reason == "bad-param" and calls(host) == []
    assert reason(modctl.parse_params, ["thresh_pct"]) == "bad-param"
    assert reason(modctl.parse_params, ["thresh_pct= 5"]) == "bad-param"
    assert modctl.parse_params(["thresh_pct=60", "source=rtt"]) == {"thresh_pct": "60", "source": "rtt"}


def test_secure_boot_refuses_unsigned(host: FakeHost) -> None:
    efivars = host.sys / "firmware/efi/efivars"
    efivars.mkdir(parents=True)
    (efivars / EFI_SECUREBOOT).write_bytes(b"\x06\x00\x00\x00\x01")
    with pytest.raises(ModError, match="Secure Boot is enabled and .*tcp_sync.ko is unsigned") as e:
        load(host, "sync", {})
    assert e.value.reason == "unsigned" and calls(host) == []
    make_ko(host.kmod_dir / "tcp_sync.ko", "tcp_sync", PARAMS["tcp_sync"], signed=True)
    load(host, "sync", {})
    assert calls(host)[-1][0] == "insmod"


def test_secure_boot_off_and_sig_enforce(host: FakeHost) -> None:
    efivars = host.sys / "firmware/efi/efivars"
    efivars.mkdir(parents=True)
    (efivars / EFI_SECUREBOOT).write_bytes(b"\x06\x00\x00\x00\x00")
    assert modctl.signatures_required(host) == (False, "")
    p = host.sys / "module/module/parameters"
    p.mkdir(parents=True)
    (p / "sig_enforce").write_text("Y\n")
    assert reason(load, host, "sync", {}) == "unsigned"


def test_needs_root(host: FakeHost) -> None:
    host.euid = 1000
    assert reason(load, host, "sync", {}) == "not-root"
    assert reason(unload, host, "sync") == "not-root"


# --- loading ---------------------------------------------------------------------

def test_insmod_with_parameters_allow_and_default(host: FakeHost) -> None:
    res = load(host, "sync", {"thresh_pct": "60"}, set_default=True, allow_cc=True)
    assert calls(host) == [["insmod", str(host.kmod_dir / "tcp_sync.ko"), "thresh_pct=60"]]
    assert res["modules"]["sync"]["params"]["thresh_pct"] == "60"
    assert res["default"] == "sync" and res["allowed"] == ["reno", "cubic", "sync"]
    st = list_state(host)
    m = st["modules"]["sync"]
    assert m["loaded"] and m["version"] == "0.1.0" and m["refcnt"] == 0
    assert m["available"] and m["allowed"] and m["default"] and m["params"]["thresh_pct"] == "60"
    assert not st["modules"]["etcp"]["loaded"] and st["modules"]["etcp"]["built"]["kernel"] == RELEASE


def test_modprobe_when_installed(host: FakeHost) -> None:
    inst = host.lib_modules / RELEASE / "updates/dkms"
    inst.mkdir(parents=True)
    make_ko(inst / "tcp_etcp.ko", "tcp_etcp", PARAMS["tcp_etcp"])
    (host.lib_modules / RELEASE / "modules.dep").write_text("updates/dkms/tcp_etcp.ko:\n")
    load(host, "etcp", {"b": "40"})
    assert calls(host) == [["modprobe", "tcp_etcp", "b=40"]]
    assert list_state(host)["modules"]["etcp"]["installed"].endswith("updates/dkms/tcp_etcp.ko")


def test_all_gives_each_module_its_parameters(host: FakeHost) -> None:
    load(host, "all", {"thresh_pct": "70", "source": "rtt"})
    assert sorted(calls(host)) == sorted([
        ["insmod", str(host.kmod_dir / "tcp_sync.ko"), "thresh_pct=70", "source=rtt"],
        ["insmod", str(host.kmod_dir / "tcp_mixreact.ko"), "source=rtt"],
        ["insmod", str(host.kmod_dir / "tcp_etcp.ko")]])
    assert reason(load, host, "all", {}, set_default=True) == "bad-param"


def test_already_loaded_sets_parameters_live(host: FakeHost) -> None:
    load(host, "sync", {})
    res = load(host, "sync", {"thresh_pct": "80"})
    assert res["modules"]["sync"]["action"] == "already loaded" and len(calls(host)) == 1
    assert (host.sysmod("tcp_sync") / "parameters/thresh_pct").read_text().strip() == "80"
    assert reason(load, host, "sync", {"nope": "1"}) == "bad-param"


@pytest.mark.parametrize("stderr,why", [
    ("insmod: ERROR: could not insert module x.ko: Key was rejected by service", "unsigned"),
    ("insmod: ERROR: could not insert module x.ko: Invalid parameters", "bad-param"),
    ("insmod: ERROR: could not insert module x.ko: Invalid module format", "wrong-kernel"),
    ("insmod: ERROR: could not insert module x.ko: Cannot allocate memory", "load-failed")])
def test_kernel_refusals_are_explained(host: FakeHost, stderr: str, why: str) -> None:
    host.run.fail["insmod"] = stderr  # type: ignore[attr-defined]
    with pytest.raises(ModError, match="insmod .* failed") as e:
        load(host, "sync", {"thresh_pct": "0"})
    assert e.value.reason == why


# --- unloading --------------------------------------------------------------------

def test_unload(host: FakeHost) -> None:
    load(host, "all", {})
    res = unload(host, "sync")
    assert res["modules"]["sync"]["action"] == "unloaded" and calls(host)[-1] == ["rmmod", "tcp_sync"]
    res = unload(host, "all")
    assert res["modules"]["sync"]["action"] == "not loaded"
    assert not any(m["loaded"] for m in list_state(host)["modules"].values())


def test_unload_refused_while_sockets_use_it(host: FakeHost) -> None:
    load(host, "sync", {})
    (host.sysmod("tcp_sync") / "refcnt").write_text("2\n")
    with pytest.raises(ModError, match=r"in use \(refcount 2\).*synctcp ss --cc sync") as e:
        unload(host, "sync")
    assert e.value.reason == "in-use" and calls(host)[-1][0] == "insmod"


def test_unload_refused_while_default(host: FakeHost) -> None:
    load(host, "mixreact", {}, set_default=True)
    assert reason(unload, host, "mixreact") == "in-use"
    unload(host, "mixreact", reset_default=True)
    assert (host.ipv4 / "tcp_congestion_control").read_text().strip() == "cubic"
    assert not modctl.is_loaded(host, "tcp_mixreact")


def test_rmmod_busy(host: FakeHost) -> None:
    load(host, "etcp", {})
    host.run.fail["rmmod"] = "rmmod: ERROR: Module tcp_etcp is in use"  # type: ignore[attr-defined]
    assert reason(unload, host, "etcp") == "in-use"


# --- command line -----------------------------------------------------------------

@pytest.fixture
def cli_host(host: FakeHost, monkeypatch: pytest.MonkeyPatch) -> FakeHost:
    monkeypatch.setattr(modctl, "Host", lambda: host)
    return host


def test_cli_load_list_unload(cli_host: FakeHost, capsys: pytest.CaptureFixture) -> None:
    assert main(["load", "sync", "--param", "thresh_pct=60", "--allow", "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["allowed"] == ["reno", "cubic", "sync"]
    assert main(["list", "--json"]) == 0
    st = json.loads(capsys.readouterr().out)
    assert st["modules"]["sync"]["params"]["thresh_pct"] == "60"
    assert main(["status"]) == 0
    out = capsys.readouterr().out
    assert re.search(r"^sync +loaded +tcp_sync 0.1.0 refcnt 0 .*thresh_pct=60", out, re.M)
    assert main(["unload", "sync"]) == 0
    assert "unloaded" in capsys.readouterr().out


def test_cli_errors(cli_host: FakeHost, capsys: pytest.CaptureFixture) -> None:
    assert main(["load", "sync", "--param", "bogus=1", "--json"]) == 2
    out = capsys.readouterr()
    assert json.loads(out.out) == {"ok": False, "reason": "bad-param",
                                   "error": "unknown parameter bogus (parameters: sync: source, thresh_pct)"}
    assert "synctcp load: unknown parameter bogus" in out.err
    assert main(["load", "sync", "--ko", "/nonexistent.ko"]) == 2
    assert "no such file" in capsys.readouterr().err
    assert main(["load", "all", "--ko", str(cli_host.kmod_dir / "tcp_sync.ko")]) == 2
    with pytest.raises(SystemExit) as e:
        main(["load", "cubic"])
    assert e.value.code == 2


def test_cli_on_this_host(capsys: pytest.CaptureFixture) -> None:
    """list always works; load says why it cannot where it cannot."""
    assert main(["list", "--json"]) == 0
    st = json.loads(capsys.readouterr().out)
    assert set(st["modules"]) == {"sync", "mixreact", "etcp"} and st["kernel"]
    if not Path("/proc/modules").exists():
        assert main(["load", "sync", "--json"]) == 2
        assert json.loads(capsys.readouterr().out)["reason"] == "no-module-support"


def test_help(capsys: pytest.CaptureFixture) -> None:
    for sub in ("load", "unload", "list"):
        with pytest.raises(SystemExit) as e:
            main([sub, "--help"])
        assert e.value.code == 0
    out = capsys.readouterr().out
    assert "--param NAME=VALUE" in out and "--reset-default" in out


# --- ensure_cc: the testbed's, the demo's and the tests' one way to get an algorithm ------

def allowed(h: Host) -> List[str]:
    return (h.ipv4 / "tcp_allowed_congestion_control").read_text().split()


def test_ensure_cc_only_allows_an_available_algorithm(host: FakeHost) -> None:
    assert modctl.ensure_cc("cubic", host)["action"] == "available"
    (host.ipv4 / "tcp_available_congestion_control").write_text("reno cubic bbr\n")
    res = modctl.ensure_cc("bbr", host)
    assert res == {"cc": "bbr", "action": "available", "allowed": ["reno", "cubic", "bbr"]}
    assert calls(host) == [] and allowed(host) == ["reno", "cubic", "bbr"]


def test_ensure_cc_insmods_the_repositorys_build_and_allows_it(host: FakeHost) -> None:
    assert modctl.ensure_cc("mixreact", host)["action"] == "insmod"
    assert calls(host) == [["insmod", str(host.kmod_dir / "tcp_mixreact.ko")]]
    assert "mixreact" in modctl.available(host) and allowed(host) == ["reno", "cubic", "mixreact"]
    modctl.ensure_cc("mixreact", host)              # again: nothing more to do
    assert len(calls(host)) == 1 and allowed(host).count("mixreact") == 1


def test_ensure_cc_prefers_the_build_over_an_installed_module(host: FakeHost) -> None:
    inst = host.lib_modules / RELEASE / "updates/dkms"
    inst.mkdir(parents=True)
    make_ko(inst / "tcp_sync.ko", "tcp_sync", PARAMS["tcp_sync"])
    (host.lib_modules / RELEASE / "modules.dep").write_text("updates/dkms/tcp_sync.ko:\n")
    modctl.ensure_cc("sync", host)
    assert calls(host) == [["insmod", str(host.kmod_dir / "tcp_sync.ko")]]


def test_ensure_cc_takes_the_installed_module_when_the_build_is_for_another_kernel(
        host: FakeHost) -> None:
    make_ko(host.kmod_dir / "tcp_sync.ko", "tcp_sync", PARAMS["tcp_sync"], vermagic="6.12.0-1-amd64")
    inst = host.lib_modules / RELEASE / "updates/dkms"
    inst.mkdir(parents=True)
    make_ko(inst / "tcp_sync.ko", "tcp_sync", PARAMS["tcp_sync"])
    (host.lib_modules / RELEASE / "modules.dep").write_text("updates/dkms/tcp_sync.ko:\n")
    assert modctl.ensure_cc("sync", host)["action"] == "modprobe"
    assert calls(host) == [["modprobe", "tcp_sync"]]


def test_ensure_cc_refuses_what_it_cannot_load_and_says_why(host: FakeHost) -> None:
    make_ko(host.kmod_dir / "tcp_etcp.ko", "tcp_etcp", PARAMS["tcp_etcp"], vermagic="6.12.0-1-amd64")
    with pytest.raises(ModError) as exc:
        modctl.ensure_cc("etcp", host)
    assert exc.value.reason == "wrong-kernel" and "'etcp' is not available" in str(exc.value)
    assert "6.12.0-1-amd64" in str(exc.value) and calls(host) == []
    (host.kmod_dir / "tcp_etcp.ko").unlink()
    assert reason(modctl.ensure_cc, "etcp", host) == "not-built"
    host.run.fail["modprobe"] = "modprobe: FATAL: Module tcp_nosuch not found"  # type: ignore[attr-defined]
    with pytest.raises(ModError) as exc:
        modctl.ensure_cc("nosuch", host)
    assert exc.value.reason == "not-available" and "Module tcp_nosuch not found" in str(exc.value)
    assert allowed(host) == ["reno", "cubic"]
    for bad in ("", "a b", "x" * 16, "../tcp"):
        assert reason(modctl.ensure_cc, bad, host) == "not-available"
    host.euid = 1000
    assert reason(modctl.ensure_cc, "sync", host) == "not-root"
    assert reason(modctl.ensure_cc, "bbr", host) == "not-root"


def test_ensure_cc_modprobes_the_kernels_own_algorithms(host: FakeHost) -> None:
    def run(cmd: Sequence[str]) -> subprocess.CompletedProcess:
        calls_.append(list(cmd))
        av = host.ipv4 / "tcp_available_congestion_control"
        av.write_text(av.read_text().strip() + " vegas\n")
        return subprocess.CompletedProcess(list(cmd), 0, "", "")

    calls_: List[List[str]] = []
    host.run = run
    assert modctl.ensure_cc("vegas", host)["action"] == "modprobe"
    assert calls_ == [["modprobe", "tcp_vegas"]] and allowed(host)[-1] == "vegas"


def test_the_algorithm_module_map_is_modctls_alone() -> None:
    assert modctl.module_of("sync") == "tcp_sync" and modctl.module_of("cubic") is None
    assert modctl.cc_of("tcp_etcp") == "etcp" and modctl.cc_of("tcp_bbr") is None
    # no other copy of the map in the Python sources
    copies = []
    for pkg in ("tools", "testbed", "mininet", "tests"):
        for path in (REPO / pkg).rglob("*.py"):
            text = path.read_text()
            if path.name != "modctl.py" and re.search(r"[\"']sync[\"']\s*:\s*[\"']tcp_sync[\"']|"
                                                      r"[\"']tcp_sync[\"']\s*:\s*[\"']sync[\"']|"
                                                      r"[\"']tcp_sync[\"'],\s*[\"']tcp_mixreact", text):
                copies.append(str(path.relative_to(REPO)))
    assert copies == []


def test_loaded_modules(host: FakeHost) -> None:
    assert modctl.loaded_modules(host) == {}
    modctl.ensure_cc("sync", host)
    assert modctl.loaded_modules(host) == {"tcp_sync": {"version": "0.1.0",
                                                        "params": {"source": "1", "thresh_pct": "1"}}}
