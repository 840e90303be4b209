"""Where a run's cases execute: the platform choice and its checks (no instance started)."""

from __future__ import annotations

import os

import pytest

from synctcp_testbed import cli
from synctcp_testbed.platform import executor
from synctcp_testbed.platform import choose as platforms
from synctcp_testbed.platform.choose import Platform, PlatformError, choose


@pytest.fixture
def outside(monkeypatch: pytest.MonkeyPatch) -> pytest.MonkeyPatch:
    monkeypatch.delenv("SYNCTCP_IN_VM", raising=False)
    monkeypatch.delenv("SYNCTCP_PLATFORM", raising=False)
    return monkeypatch


def test_inside_an_instance_the_cases_run_here(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("SYNCTCP_IN_VM", "1")
    monkeypatch.setenv("SYNCTCP_PLATFORM", "uml")
    p = choose("tcg")
    assert p == Platform("uml", "inside an instance", here=True)


def test_default_is_uml_where_this_host_cannot_load_modules(outside: pytest.MonkeyPatch) -> None:
    outside.setattr(platforms, "cannot_load_modules", lambda: "not root")
    p = choose()
    assert (p.name, p.here) == ("uml", False) and "not root" in p.why


def test_default_is_native_where_this_host_loads_modules(outside: pytest.MonkeyPatch) -> None:
    outside.setattr(platforms, "cannot_load_modules", lambda: None)
    assert choose() == Platform("native", "this host loads modules", here=True)


def test_the_environment_chooses(outside: pytest.MonkeyPatch) -> None:
    outside.setenv("SYNCTCP_PLATFORM", "tcg")
    assert choose().name == "tcg"
    assert choose("uml").name == "uml"          # the option wins


def test_native_where_it_cannot_is_an_error(outside: pytest.MonkeyPatch) -> None:
    outside.setattr(platforms, "cannot_load_modules", lambda: "not root")
    with pytest.raises(PlatformError, match="platform native: not root"):
        choose("native")


def test_an_unknown_platform_is_an_error(outside: pytest.MonkeyPatch) -> None:
    with pytest.raises(PlatformError, match="unknown platform 'xen': one of native, kvm, uml, tcg"):
        choose("xen")
    outside.setenv("SYNCTCP_PLATFORM", "xen")
    with pytest.raises(PlatformError, match="unknown platform 'xen'"):
        choose()


def test_kvm_where_qemu_cannot_use_it_is_an_error(outside: pytest.MonkeyPatch) -> None:
    outside.setattr(platforms, "vm_accel", lambda: "tcg")
    with pytest.raises(PlatformError, match="platform kvm: qemu cannot use KVM"):
        choose("kvm")


def test_the_real_probe_agrees_with_vmrun() -> None:
    assert platforms.vm_accel() in ("native", "kvm", "tcg")


def test_parallel_cases_only_on_simulated_time() -> None:
    uml = Platform("uml", "t")
    assert executor.check_jobs(uml, None) == (os.cpu_count() or 1)
    assert executor.check_jobs(uml, 3) == 3
    for p in (Platform("tcg", "t"), Platform("native", "t", here=True),
              Platform("uml", "inside", here=True)):
        assert executor.check_jobs(p, None) == 1
        with pytest.raises(PlatformError, match="parallel cases need the uml platform"):
            executor.check_jobs(p, 2)
    with pytest.raises(PlatformError, match="at least 1"):
        executor.check_jobs(uml, 0)


def test_run_refuses_bad_platform_options_with_one_line(
        outside: pytest.MonkeyPatch, capsys: pytest.CaptureFixture) -> None:
    from synctcp_testbed.platform import run

    def refuse(*a: object, **kw: object) -> None:
        raise AssertionError("would have run")
    outside.setattr(run, "run_scenario", refuse)
    assert cli.main(["run", "gu-smallbuffer", "--platform", "tcg", "--jobs", "2"]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "--jobs 2: parallel cases need the uml platform" in err
    with pytest.raises(SystemExit) as exc:
        cli.main(["run", "gu-smallbuffer", "--platform", "xen"])
    assert exc.value.code == 2
    assert "invalid choice: 'xen'" in capsys.readouterr().err


def test_bench_platform_refuses_unknown_cases_and_platforms(capsys: pytest.CaptureFixture) -> None:
    from synctcp_testbed import benchplatform

    for argv, msg in ((["--only", "2G-1"], "unknown case 2G-1"),
                      (["--platforms", "xen"], "unknown platform xen")):
        with pytest.raises(SystemExit) as exc:
            benchplatform.main(argv)
        assert exc.value.code == 2 and msg in capsys.readouterr().err


def test_bench_platform_cases_are_what_they_say() -> None:
    from synctcp_testbed import benchplatform

    flows = {}
    for name, (_, make, secs) in benchplatform.CASES.items():
        sc = make(secs)
        case = sc.cases()[0]
        tr = sc.traffic
        n = len(sc.topology.rtts_ms) * tr.flows_per_pair * (1 + int(tr.bulk_rev))
        flows[name] = (case.cc, sc.topology.rate_mbit, n)
    assert flows == {"weigle-ftp": ("reno", 10, 40), "100M-1": ("cubic", 100, 1),
                     "1G-1": ("cubic", 1000, 1), "1G-100": ("cubic", 1000, 100)}
