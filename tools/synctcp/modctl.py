"""``synctcp load`` / ``unload`` / ``list``: the modules and their sysctls.

    synctcp list [--json]                          what is built, installed, loaded, allowed
    synctcp load [sync|mixreact|etcp|all] [--param NAME=VALUE ...] [--allow] [--default]
                 [--ko PATH] [--json]
    synctcp unload [sync|mixreact|etcp|all] [--reset-default] [--json]

``load`` uses modprobe when the module is installed for the running kernel
(``make install``, ``make dkms-install``), else insmod of the repository's
``kmod/NAME.ko`` (or ``--ko PATH``).  Before trying it says why it cannot
work where it cannot: a kernel without module support or with loading
disabled, missing headers (nothing built and nothing installed), a module
built for another kernel, an unknown parameter, an unsigned module under
Secure Boot.

Exit codes: 0 done, 2 refused or failed (the message says why).

:func:`ensure_cc` is the one way the testbed, the demo and the tests make an
algorithm usable: available (loaded) and allowed for non-initial network
namespaces.  An algorithm that cannot be made available is an error.

Everything the commands read or write on the host goes through a
:class:`Host`, so the tests run them against a fake ``/proc`` and ``/sys``.
"""

from __future__ import annotations

import argparse
import json
import os
import struct
import subprocess
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, Dict, List, Optional, Sequence, Tuple

from .checkout import checkout

#: The one algorithm -> module map of the project: every tool, the testbed and
#: the tests take it (or :func:`module_of` / :func:`cc_of`) from here.
CC_MODULES: Dict[str, str] = {"sync": "tcp_sync", "mixreact": "tcp_mixreact", "etcp": "tcp_etcp"}
#: EFI variable whose last byte is 1 when Secure Boot is on (EFI_GLOBAL_VARIABLE GUID).
EFI_SECUREBOOT = "SecureBoot-8be4df61-93ca-11d2-aa0d-00e098032b8c"
#: What scripts/sign-file appends to a signed module (MODULE_SIG_STRING).
MODULE_SIG_MAGIC = b"~Module signature appended~\n"
KO_SUFFIXES = (".ko", ".ko.xz", ".ko.zst", ".ko.gz")

Runner = Callable[[Sequence[str]], "subprocess.CompletedProcess[str]"]


def _run(cmd: Sequence[str]) -> "subprocess.CompletedProcess[str]":
    try:
        return subprocess.run(list(cmd), capture_output=True, text=True, timeout=60, check=False)
    except FileNotFoundError:
        return subprocess.CompletedProcess(list(cmd), 127, "", f"{cmd[0]}: command not found")
    except subprocess.TimeoutExpired:
        return subprocess.CompletedProcess(list(cmd), 124, "", f"{cmd[0]}: timed out after 60 s")


class ModError(RuntimeError):
    """A refusal or failure, with a short machine-readable reason."""

    def __init__(self, message: str, reason: str = "error") -> None:
        super().__init__(message)
        self.reason = reason


def _kmod_dir() -> Optional[Path]:
    """kmod/ of the checkout (synctcp.checkout), None outside one."""
    repo = checkout()
    return repo / "kmod" if repo is not None else None


@dataclass
class Host:
    """The parts of the system the commands use (real ones by default)."""

    proc: Path = Path("/proc")
    sys: Path = Path("/sys")
    lib_modules: Path = Path("/lib/modules")
    release: str = field(default_factory=lambda: os.uname().release)
    #: the modules built in the checkout; None outside one (no built modules)
    kmod_dir: Optional[Path] = field(default_factory=_kmod_dir)
    euid: int = field(default_factory=os.geteuid)
    run: Runner = _run

    @property
    def ipv4(self) -> Path:
        return self.proc / "sys" / "net" / "ipv4"

    def sysmod(self, module: str) -> Path:
        return self.sys / "module" / module


def _read(path: Path) -> Optional[str]:
    try:
        return path.read_text().strip()
    except OSError:
        return None


def module_of(cc: str) -> Optional[str]:
    """The module of one of this project's algorithms (``sync`` -> ``tcp_sync``), else None."""
    return CC_MODULES.get(cc)


def cc_of(module: str) -> Optional[str]:
    """The algorithm a module of this project registers (``tcp_sync`` -> ``sync``), else None."""
    return next((cc for cc, mod in CC_MODULES.items() if mod == module), None)


# --------------------------------------------------------------------------
# Module files: ELF .modinfo, signatures, modules.dep

@dataclass
class ModInfo:
    """What ``modinfo`` would say about one module file."""

    path: str
    fields: Dict[str, List[str]]
    params: Dict[str, str]          # name -> description
    param_types: Dict[str, str]     # name -> type (module_param only)
    signed: bool

    def first(self, key: str) -> Optional[str]:
        vals = self.fields.get(key)
        return vals[0] if vals else None

    @property
    def version(self) -> Optional[str]:
        return self.first("version")

    @property
    def vermagic_release(self) -> Optional[str]:
        vm = self.first("vermagic")
        return vm.split()[0] if vm else None

    def as_dict(self) -> Dict[str, Any]:
        return {"path": self.path, "version": self.version, "vermagic": self.first("vermagic"),
                "srcversion": self.first("srcversion"), "signed": self.signed,
                "params": self.params}


def elf_section(data: bytes, name: str) -> Optional[bytes]:
    """The contents of section ``name`` of an ELF64 file, None if absent."""
    if data[:4] != b"\x7fELF":
        raise ModError("not an ELF file", "bad-module")
    if data[4] != 2:
        raise ModError("not a 64-bit ELF file", "bad-module")
    e = "<" if data[5] == 1 else ">"
    try:
        shoff = struct.unpack_from(e + "Q", data, 0x28)[0]
        shentsize, shnum, shstrndx = struct.unpack_from(e + "HHH", data, 0x3A)

        def shdr(i: int) -> Tuple[int, ...]:
            return struct.unpack_from(e + "IIQQQQIIQQ", data, shoff + i * shentsize)

        stroff = shdr(shstrndx)[4]
        want = name.encode()
        for i in range(shnum):
            sh = shdr(i)
            start = stroff + sh[0]
            end = data.index(b"\0", start)
            if data[start:end] == want:
                if sh[4] + sh[5] > len(data):
                    raise ModError(f"section {name} runs past the end of the file", "bad-module")
                return data[sh[4]:sh[4] + sh[5]]
    except (struct.error, ValueError) as exc:
        raise ModError(f"malformed ELF file: {exc}", "bad-module") from exc
    return None


def parse_modinfo_section(raw: bytes) -> Dict[str, List[str]]:
    """``key=value`` strings separated by NULs, as the .modinfo section holds them."""
    out: Dict[str, List[str]] = {}
    for item in raw.split(b"\0"):
        text = item.decode("utf-8", "replace")
        if "=" in text:
            key, val = text.split("=", 1)
            out.setdefault(key, []).append(val)
    return out


def parse_modinfo_text(text: str) -> Dict[str, List[str]]:
    """The output of ``modinfo FILE`` (``key:   value`` lines)."""
    out: Dict[str, List[str]] = {}
    for line in text.splitlines():
        if ":" not in line or line.startswith((" ", "\t")):
            continue
        key, val = line.split(":", 1)
        out.setdefault(key.strip(), []).append(val.strip())
    return out


def _modinfo(path: str, fields: Dict[str, List[str]], signed: bool) -> ModInfo:
    params: Dict[str, str] = {}
    types: Dict[str, str] = {}
    for p in fields.get("parm", []):
        name, _, desc = p.partition(":")
        params[name] = desc
    for p in fields.get("parmtype", []):
        name, _, typ = p.partition(":")
        types[name] = typ
        params.setdefault(name, "")
    return ModInfo(path=path, fields=fields, params=params, param_types=types, signed=signed)


def read_modinfo(path: Path, host: Optional[Host] = None) -> ModInfo:
    """modinfo of a .ko: read from its ELF .modinfo section directly, or
    through ``modinfo`` for compressed modules."""
    if path.name.endswith(".ko"):
        try:
            data = path.read_bytes()
        except OSError as exc:
            raise ModError(f"cannot read {path}: {exc.strerror}", "bad-module") from exc
        sec = elf_section(data, ".modinfo")
        if sec is None:
            raise ModError(f"{path} has no .modinfo section: not a kernel module", "bad-module")
        return _modinfo(str(path), parse_modinfo_section(sec), data.endswith(MODULE_SIG_MAGIC))
    res = (host.run if host else _run)(["modinfo", str(path)])
    if res.returncode != 0:
        raise ModError(f"modinfo {path}: {res.stderr.strip()}", "bad-module")
    fields = parse_modinfo_text(res.stdout)
    return _modinfo(str(path), fields, "sig_id" in fields or "signer" in fields)


def parse_modules_dep(text: str) -> Dict[str, str]:
    """module name -> path relative to /lib/modules/RELEASE, from modules.dep."""
    out: Dict[str, str] = {}
    for line in text.splitlines():
        rel = line.split(":", 1)[0].strip()
        if not rel:
            continue
        base = rel.rsplit("/", 1)[-1]
        for suf in KO_SUFFIXES:
            if base.endswith(suf):
                out.setdefault(base[:-len(suf)].replace("-", "_"), rel)
                break
    return out


def installed_module(host: Host, module: str) -> Optional[Path]:
    """The file modprobe would load for ``module`` on the running kernel."""
    dep = _read(host.lib_modules / host.release / "modules.dep")
    rel = parse_modules_dep(dep or "").get(module)
    return host.lib_modules / host.release / rel if rel else None


def built_module(host: Host, module: str) -> Optional[Path]:
    if host.kmod_dir is None:
        return None
    p = host.kmod_dir / f"{module}.ko"
    return p if p.is_file() else None


# --------------------------------------------------------------------------
# What the kernel allows

def module_support(host: Host) -> Optional[ModError]:
    """Why this kernel cannot load modules at all, None if it can."""
    if not (host.proc / "modules").exists():
        return ModError(f"no module support: /proc/modules is absent, the running kernel "
                        f"{host.release} was built without CONFIG_MODULES (run the modules in a VM: "
                        f"make kernel-test)", "no-module-support")
    if _read(host.proc / "sys" / "kernel" / "modules_disabled") == "1":
        return ModError("module loading disabled: kernel.modules_disabled=1, which stays until "
                        "the next reboot", "modules-disabled")
    return None


def parse_mokutil_sb_state(text: str) -> Optional[bool]:
    """``mokutil --sb-state``: "SecureBoot enabled" / "SecureBoot disabled"."""
    low = text.lower()
    if "secureboot enabled" in low:
        return True
    if "secureboot disabled" in low or "not supported" in low:
        return False
    return None


def parse_efi_secureboot(data: bytes) -> Optional[bool]:
    """The efivarfs file: 4 bytes of attributes, then the 1-byte value."""
    if len(data) < 5:
        return None
    return data[-1] == 1


def secure_boot(host: Host) -> Optional[bool]:
    """True/False when known; None when it cannot be told."""
    efi = host.sys / "firmware" / "efi"
    if not efi.exists():
        return False        # legacy BIOS boot: no Secure Boot
    try:
        state = parse_efi_secureboot((efi / "efivars" / EFI_SECUREBOOT).read_bytes())
        if state is not None:
            return state
    except OSError:
        pass
    res = host.run(["mokutil", "--sb-state"])
    return parse_mokutil_sb_state(res.stdout + res.stderr) if res.returncode in (0, 1) else None


def signatures_required(host: Host) -> Tuple[bool, str]:
    """Whether the kernel refuses unsigned modules, and why."""
    if _read(host.sys / "module" / "module" / "parameters" / "sig_enforce") == "Y":
        return True, "module.sig_enforce=1"
    if secure_boot(host):
        return True, "Secure Boot is enabled"
    lock = _read(host.sys / "kernel" / "security" / "lockdown")
    if lock and "[none]" not in lock:
        return True, f"kernel lockdown ({lock})"
    return False, ""


# --------------------------------------------------------------------------
# sysctls

def _split(host: Host, name: str) -> List[str]:
    return (_read(host.ipv4 / name) or "").split()


def _write_sysctl(host: Host, name: str, value: str) -> None:
    try:
        (host.ipv4 / name).write_text(value + "\n")
    except OSError as exc:
        raise ModError(f"cannot set net.ipv4.{name}={value!r}: {exc.strerror}", "sysctl") from exc


def allow(host: Host, ccs: Sequence[str]) -> List[str]:
    """Add ``ccs`` to net.ipv4.tcp_allowed_congestion_control."""
    allowed = _split(host, "tcp_allowed_congestion_control")
    new = allowed + [c for c in ccs if c not in allowed]
    if new != allowed:
        _write_sysctl(host, "tcp_allowed_congestion_control", " ".join(new))
    return _split(host, "tcp_allowed_congestion_control")


def is_loaded(host: Host, module: str) -> bool:
    mods = _read(host.proc / "modules")
    if mods is not None and any(line.split()[:1] == [module] for line in mods.splitlines()):
        return True
    return host.sysmod(module).joinpath("initstate").exists()


def loaded_params(host: Host, module: str) -> Dict[str, Optional[str]]:
    d = host.sysmod(module) / "parameters"
    return {p.name: _read(p) for p in sorted(d.iterdir())} if d.is_dir() else {}


# --------------------------------------------------------------------------
# list

def list_state(host: Optional[Host] = None) -> Dict[str, Any]:
    """Everything about the three modules on this host."""
    host = host or Host()
    default = _read(host.ipv4 / "tcp_congestion_control")
    available = _split(host, "tcp_available_congestion_control")
    allowed = _split(host, "tcp_allowed_congestion_control")
    err = module_support(host)
    mods: Dict[str, Any] = {}
    for cc, mod in CC_MODULES.items():
        loaded = is_loaded(host, mod)
        refcnt = _read(host.sysmod(mod) / "refcnt")
        entry: Dict[str, Any] = {
            "module": mod,
            "loaded": loaded,
            "version": _read(host.sysmod(mod) / "version"),
            "refcnt": int(refcnt) if refcnt and refcnt.isdigit() else None,
            "params": loaded_params(host, mod),
            "available": cc in available,
            "allowed": cc in allowed,
            "default": cc == default,
            "installed": None,
            "built": None,
        }
        inst = installed_module(host, mod)
        if inst is not None:
            entry["installed"] = str(inst)
        ko = built_module(host, mod)
        if ko is not None:
            try:
                info = read_modinfo(ko, host)
                entry["built"] = {"path": str(ko), "version": info.version,
                                  "kernel": info.vermagic_release, "signed": info.signed,
                                  "params": sorted(info.params)}
            except ModError as exc:
                entry["built"] = {"path": str(ko), "error": str(exc)}
        mods[cc] = entry
    return {
        "kernel": host.release,
        "module_support": {"ok": err is None, "reason": err.reason if err else None,
                           "message": str(err) if err else None},
        "headers": (host.lib_modules / host.release / "build").exists(),
        "modules": mods,
        "default": default,
        "available": available,
        "allowed": allowed,
    }


def format_list(st: Dict[str, Any]) -> List[str]:
    lines = []
    ms = st["module_support"]
    lines.append(f"kernel {st['kernel']}: " + ("can load modules" if ms["ok"] else ms["message"]))
    lines.append(f"default: {st['default']}   available: {' '.join(st['available'])}   "
                 f"allowed: {' '.join(st['allowed'])}")
    for cc, m in st["modules"].items():
        flags = [f for f in ("available", "allowed", "default") if m[f]]
        if m["loaded"]:
            params = " ".join(f"{k}={v}" for k, v in m["params"].items())
            head = f"{cc:9} loaded     {m['module']} {m['version'] or ''} refcnt {m['refcnt']} {params}"
        else:
            head = f"{cc:9} not loaded"
        where = []
        if m["installed"]:
            where.append(f"installed {m['installed']}")
        b = m["built"]
        if b:
            where.append(f"built {b['path']}" + (f" ({b['kernel']})" if b.get("kernel") else ""))
        lines.append(" ".join([head] + ([f"[{','.join(flags)}]"] if flags else []) + where).rstrip())
    return lines


# --------------------------------------------------------------------------
# load

def parse_params(items: Sequence[str]) -> Dict[str, str]:
    out: Dict[str, str] = {}
    for it in items:
        name, sep, val = it.partition("=")
        if not sep or not name or not val or any(c.isspace() for c in it):
            raise ModError(f"bad --param {it!r}: expected NAME=VALUE", "bad-param")
        out[name] = val
    return out


def _targets(which: str) -> List[str]:
    if which == "all":
        return list(CC_MODULES)
    if which not in CC_MODULES:
        raise ModError(f"unknown module {which!r}: choose from {', '.join(CC_MODULES)} or all",
                       "bad-module")
    return [which]


_LOAD_ERRORS = (
    ("Key was rejected by service", "the kernel rejected the module's signature (Secure Boot or "
     "module.sig_enforce): sign it with a key the kernel trusts (docs/dkms.md)", "unsigned"),
    ("Required key not available", "the kernel requires a signed module (Secure Boot or "
     "module.sig_enforce): sign it with an enrolled key (docs/dkms.md)", "unsigned"),
    ("Invalid module format", "the module was built for another kernel: rebuild it "
     "(make, or make dkms-install)", "wrong-kernel"),
    ("Unknown symbol", "the module needs symbols this kernel lacks (see dmesg)", "unknown-symbol"),
    ("Invalid parameters", "the module refused a parameter value (see dmesg for which)", "bad-param"),
    ("Invalid argument", "the module refused a parameter value (see dmesg for which)", "bad-param"),
    ("Operation not permitted", "not permitted (root is needed; kernel lockdown may forbid it)",
     "not-permitted"),
)


def _explain(stderr: str) -> Tuple[str, str]:
    for needle, msg, reason in _LOAD_ERRORS:
        if needle.lower() in stderr.lower():
            return msg, reason
    return "", "load-failed"


@dataclass
class LoadPlan:
    cc: str
    module: str
    how: str                        # "loaded" (already), "modprobe", "insmod"
    path: Optional[str]
    params: Dict[str, str]
    info: Optional[ModInfo] = None


def plan_load(host: Host, which: str, params: Dict[str, str], ko: Optional[Path] = None) -> List[LoadPlan]:
    """Everything that can be checked before loading, for each module; raises
    ModError with the reason when the load cannot work."""
    err = module_support(host)
    if err:
        raise err
    ccs = _targets(which)
    if ko is not None and len(ccs) != 1:
        raise ModError("--ko names one file: give one module (sync, mixreact or etcp)", "bad-param")
    plans: List[LoadPlan] = []
    known: Dict[str, List[str]] = {}
    for cc in ccs:
        mod = CC_MODULES[cc]
        if is_loaded(host, mod):
            have = sorted(loaded_params(host, mod))
            known[cc] = have
            plans.append(LoadPlan(cc, mod, "loaded", None, {k: v for k, v in params.items() if k in have}))
            continue
        if ko is not None:
            if not ko.is_file():
                raise ModError(f"--ko {ko}: no such file", "not-built")
            path, how = ko, "insmod"
        else:
            inst = installed_module(host, mod)
            if inst is not None:
                path, how = inst, "modprobe"
            else:
                b = built_module(host, mod)
                if b is None:
                    if not (host.lib_modules / host.release / "build").exists():
                        raise ModError(f"missing headers: {mod} is not installed for kernel {host.release} "
                                       f"and cannot be built here: install linux-headers-{host.release}, "
                                       f"then make (or make dkms-install)", "missing-headers")
                    raise ModError(f"{mod} is neither installed for kernel {host.release} nor built: "
                                   f"run make (kmod/{mod}.ko) or make dkms-install", "not-built")
                path, how = b, "insmod"
        info = read_modinfo(path, host)
        if info.first("name") not in (None, mod):
            raise ModError(f"{path} is {info.first('name')}, not {mod}", "bad-module")
        kr = info.vermagic_release
        if how == "insmod" and kr and kr != host.release:
            raise ModError(f"{path} was built for kernel {kr}, not the running {host.release}: rebuild "
                           f"it (make -C kmod KVER={host.release}) or make dkms-install", "wrong-kernel")
        known[cc] = sorted(info.params)
        plans.append(LoadPlan(cc, mod, how, str(path), {k: v for k, v in params.items() if k in info.params},
                              info))
    unknown = [p for p in params if not any(p in names for names in known.values())]
    if unknown:
        where = "; ".join(f"{cc}: {', '.join(n) or 'none'}" for cc, n in known.items())
        raise ModError(f"unknown parameter{'s' if len(unknown) > 1 else ''} {', '.join(unknown)} "
                       f"(parameters: {where})", "bad-param")
    need, why = signatures_required(host)
    if need:
        for p in plans:
            if p.info is not None and not p.info.signed:
                raise ModError(f"{why} and {p.path} is unsigned: the kernel will refuse it. Sign it "
                               f"with an enrolled key (DKMS does: docs/dkms.md) or disable Secure Boot",
                               "unsigned")
    return plans


def load(host: Host, which: str, params: Dict[str, str], set_default: bool = False,
         allow_cc: bool = False, ko: Optional[Path] = None) -> Dict[str, Any]:
    if set_default and which == "all":
        raise ModError("--default needs one module: sync, mixreact or etcp", "bad-param")
    plans = plan_load(host, which, params, ko)
    if host.euid != 0:
        raise ModError("loading modules needs root", "not-root")
    done: Dict[str, Any] = {}
    for p in plans:
        if p.how == "loaded":
            for k, v in p.params.items():
                f = host.sysmod(p.module) / "parameters" / k
                try:
                    f.write_text(v + "\n")
                except OSError as exc:
                    raise ModError(f"{p.module} is loaded; setting {k}={v} live failed: {exc.strerror}",
                                   "bad-param") from exc
            done[p.cc] = {"module": p.module, "action": "already loaded", "params_set": p.params}
            continue
        kv = [f"{k}={v}" for k, v in p.params.items()]
        cmd = ["modprobe", p.module, *kv] if p.how == "modprobe" else ["insmod", str(p.path), *kv]
        res = host.run(cmd)
        if res.returncode != 0 and "File exists" not in res.stderr:
            msg, reason = _explain(res.stderr)
            raise ModError(f"{' '.join(cmd)} failed: {res.stderr.strip()}" + (f" ({msg})" if msg else ""),
                           reason)
        done[p.cc] = {"module": p.module, "action": p.how, "command": cmd, "path": p.path,
                      "params": loaded_params(host, p.module)}
    ccs = [p.cc for p in plans]
    missing = [cc for cc in ccs if cc not in _split(host, "tcp_available_congestion_control")]
    if missing:
        raise ModError(f"loaded, but {', '.join(missing)} is not in "
                       f"net.ipv4.tcp_available_congestion_control", "load-failed")
    if allow_cc:
        allow(host, ccs)
    if set_default:
        _write_sysctl(host, "tcp_congestion_control", ccs[0])
    return {"ok": True, "modules": done, "default": _read(host.ipv4 / "tcp_congestion_control"),
            "allowed": _split(host, "tcp_allowed_congestion_control")}


# --------------------------------------------------------------------------
# make an algorithm usable (the testbed, the demo, the tests)

def available(host: Optional[Host] = None) -> List[str]:
    """net.ipv4.tcp_available_congestion_control."""
    return _split(host or Host(), "tcp_available_congestion_control")


def _valid_cc_name(cc: str) -> bool:
    # the kernel's TCP_CA_NAME_MAX is 16 including the NUL
    return 0 < len(cc) < 16 and all(c.isalnum() or c in "_-" for c in cc)


def _built_for_running(host: Host, ko: Path) -> bool:
    try:
        return read_modinfo(ko, host).vermagic_release in (None, host.release)
    except ModError:
        return False


def ensure_cc(cc: str, host: Optional[Host] = None) -> Dict[str, Any]:
    """Make ``cc`` available and allowed, or raise :class:`ModError` saying why not.

    * Already available: nothing is loaded.
    * One of this project's algorithms: the repository's ``kmod/MODULE.ko``
      when it is built for the running kernel (inside User-Mode Linux these
      are the UML builds), else the module installed for it (modprobe), with
      every check of ``synctcp load`` first.
    * Any other name: ``modprobe tcp_CC`` (the kernel's own algorithms).

    Then ``cc`` is added to ``net.ipv4.tcp_allowed_congestion_control``: a
    network namespace other than the initial one may make only an allowed
    algorithm its default.  Returns what was done: ``{"cc", "action",
    "allowed"}``, action one of ``available``, ``insmod``, ``modprobe``.
    """
    host = host or Host()
    if not _valid_cc_name(cc):
        raise ModError(f"{cc!r} is not a congestion-control name", "not-available")
    action = "available"
    if cc not in _split(host, "tcp_available_congestion_control"):
        mod = module_of(cc)
        if mod is not None:
            ko = built_module(host, mod)
            if ko is not None and not _built_for_running(host, ko) \
                    and installed_module(host, mod) is not None:
                ko = None       # built for another kernel: the installed one, by modprobe
            try:
                res = load(host, cc, {}, ko=ko)
            except ModError as exc:
                raise ModError(f"congestion control {cc!r} is not available: {exc}",
                               exc.reason) from exc
            action = res["modules"][cc]["action"]
        else:
            if host.euid != 0:
                raise ModError(f"congestion control {cc!r} is not available in kernel "
                               f"{host.release}, and loading tcp_{cc} needs root", "not-root")
            res_run = host.run(["modprobe", f"tcp_{cc}"])
            if cc not in _split(host, "tcp_available_congestion_control"):
                why = res_run.stderr.strip() or "no such module"
                raise ModError(f"congestion control {cc!r} is not available in kernel "
                               f"{host.release}: modprobe tcp_{cc}: {why}", "not-available")
            action = "modprobe"
    return {"cc": cc, "action": action, "allowed": allow(host, [cc])}


def loaded_modules(host: Optional[Host] = None) -> Dict[str, Any]:
    """Version and parameters of this project's loaded modules, by module name."""
    host = host or Host()
    out: Dict[str, Any] = {}
    for mod in CC_MODULES.values():
        base = host.sysmod(mod)
        if base.is_dir():
            out[mod] = {"version": _read(base / "version"), "params": loaded_params(host, mod)}
    return out


# --------------------------------------------------------------------------
# unload

def unload(host: Host, which: str, reset_default: bool = False) -> Dict[str, Any]:
    err = module_support(host)
    if err:
        raise err
    ccs = _targets(which)
    if host.euid != 0:
        raise ModError("unloading modules needs root", "not-root")
    default = _read(host.ipv4 / "tcp_congestion_control")
    todo = [cc for cc in ccs if is_loaded(host, CC_MODULES[cc])]
    if default in todo:
        if not reset_default:
            raise ModError(f"{default} is the default congestion control (net.ipv4.tcp_congestion_control), "
                           f"which holds a reference on {CC_MODULES[default]}: set another default first "
                           f"or pass --reset-default", "in-use")
        avail = _split(host, "tcp_available_congestion_control")
        _write_sysctl(host, "tcp_congestion_control", "cubic" if "cubic" in avail else "reno")
    for cc in todo:
        mod = CC_MODULES[cc]
        ref = _read(host.sysmod(mod) / "refcnt")
        if ref and ref.isdigit() and int(ref) > 0:
            raise ModError(f"{mod} is in use (refcount {ref}): sockets use {cc} (some may be closing, in "
                           f"FIN or TIME-WAIT states) or a route has congctl {cc}; close them or wait "
                           f"(synctcp ss --cc {cc} lists them)", "in-use")
    done: Dict[str, Any] = {}
    for cc in ccs:
        mod = CC_MODULES[cc]
        if cc not in todo:
            done[cc] = {"module": mod, "action": "not loaded"}
            continue
        res = host.run(["rmmod", mod])
        if res.returncode != 0:
            if "in use" in res.stderr or "Resource temporarily unavailable" in res.stderr:
                raise ModError(f"{mod} is in use: {res.stderr.strip()} (sockets still use {cc}; "
                               f"synctcp ss --cc {cc} lists them)", "in-use")
            raise ModError(f"rmmod {mod} failed: {res.stderr.strip()}", "unload-failed")
        done[cc] = {"module": mod, "action": "unloaded"}
    return {"ok": True, "modules": done, "default": _read(host.ipv4 / "tcp_congestion_control")}


# --------------------------------------------------------------------------
# command line

def _fail(args: argparse.Namespace, exc: ModError) -> int:
    if getattr(args, "json", False):
        print(json.dumps({"ok": False, "error": str(exc), "reason": exc.reason}, indent=2))
    print(f"synctcp {args.command}: {exc}", file=sys.stderr)
    return 2


def cmd_list(args: argparse.Namespace) -> int:
    st = list_state(getattr(args, "host", None))
    if args.json:
        print(json.dumps(st, indent=2))
    else:
        print("\n".join(format_list(st)))
    return 0


def cmd_load(args: argparse.Namespace) -> int:
    host = getattr(args, "host", None) or Host()
    try:
        res = load(host, args.module, parse_params(args.param or []), args.default, args.allow,
                   Path(args.ko) if args.ko else None)
    except ModError as exc:
        return _fail(args, exc)
    if args.json:
        print(json.dumps(res, indent=2))
    else:
        for cc, d in res["modules"].items():
            params = d.get("params") or d.get("params_set") or {}
            print(f"{cc:9} {d['action']:15} " + " ".join(f"{k}={v}" for k, v in params.items()))
        print(f"default: {res['default']}   allowed: {' '.join(res['allowed'])}")
    return 0


def cmd_unload(args: argparse.Namespace) -> int:
    host = getattr(args, "host", None) or Host()
    try:
        res = unload(host, args.module, args.reset_default)
    except ModError as exc:
        return _fail(args, exc)
    if args.json:
        print(json.dumps(res, indent=2))
    else:
        for cc, d in res["modules"].items():
            print(f"{cc:9} {d['action']}")
    return 0


def add_parsers(sub: "argparse._SubParsersAction[argparse.ArgumentParser]") -> None:
    choices = [*CC_MODULES, "all"]
    s = sub.add_parser("list", help="modules built/installed/loaded, parameters, sysctls",
                       description="What is built, installed and loaded of sync, mixreact and etcp, "
                       "with parameters, and the congestion-control sysctls.")
    s.add_argument("--json", action="store_true", help="JSON output")
    s.set_defaults(func=cmd_list)

    s = sub.add_parser("load", help="load modules (modprobe, else insmod of kmod/*.ko)",
                       description="Load synctcp modules: modprobe when installed for the running "
                       "kernel, else insmod of kmod/NAME.ko. Exit 0 loaded, 2 refused/failed.")
    s.add_argument("module", nargs="?", default="all", choices=choices, help="default: all")
    s.add_argument("--param", action="append", metavar="NAME=VALUE",
                   help="module parameter (repeatable); with all, given to the modules that have it")
    s.add_argument("--allow", action="store_true",
                   help="add to net.ipv4.tcp_allowed_congestion_control (unprivileged sockets)")
    s.add_argument("--default", action="store_true", help="make it net.ipv4.tcp_congestion_control")
    s.add_argument("--ko", metavar="PATH", help="insmod this .ko file (one module)")
    s.add_argument("--json", action="store_true", help="JSON output")
    s.set_defaults(func=cmd_load)

    s = sub.add_parser("unload", help="unload modules (refused while in use)",
                       description="rmmod synctcp modules; refused while sockets or the default use "
                       "them. Exit 0 done, 2 refused/failed.")
    s.add_argument("module", nargs="?", default="all", choices=choices, help="default: all")
    s.add_argument("--reset-default", action="store_true",
                   help="if the module is the default, switch the default to cubic (or reno) first")
    s.add_argument("--json", action="store_true", help="JSON output")
    s.set_defaults(func=cmd_unload)
