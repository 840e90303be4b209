"""The tcp_option/ patch series, its build script and the Python decoder agree.

Host-only: the series is read as text (the kernel tests in tests/owts run
it).  The wire constants of both series must be those the decoder
(tools/synctcp/owts.py) reads, and both series must make the same change.
"""

from __future__ import annotations

import re
import subprocess
from pathlib import Path
from typing import Dict, List

import pytest

from synctcp import owts

ROOT = Path(__file__).resolve().parents[2]
OPT = ROOT / "tcp_option"
SERIES = ("6.1", "7.2")


def patches(series: str) -> List[Path]:
    return sorted((OPT / f"linux-{series}").glob("*.patch"))


def added(series: str) -> str:
    """Every line the series adds, without the leading '+'."""
    out = []
    for p in patches(series):
        for ln in p.read_text().splitlines():
            if ln.startswith("+") and not ln.startswith("+++"):
                out.append(ln[1:])
    return "\n".join(out)


def constants(text: str) -> Dict[str, int]:
    found = dict(re.findall(r"#define\s+(TCPOPT_OWTS\w*|TCPOLEN_OWTS|TCP_OWTS_NONE)\s+\(?"
                            r"(?:\(s32\))?(0x[0-9A-Fa-f]+|\d+)", text))
    return {k: int(v, 0) for k, v in found.items()}


@pytest.mark.parametrize("series", SERIES)
def test_series_is_four_signed_patches(series: str) -> None:
    ps = patches(series)
    assert len(ps) == 4
    for i, p in enumerate(ps, 1):
        text = p.read_text()
        assert p.name.startswith(f"000{i}-tcp-one-way-timestamp-option")
        assert re.search(r"^Subject: \[PATCH \d/4\] tcp: one-way timestamp option", text, re.M)
        assert re.search(r"^Signed-off-by: .+ <.+>$", text, re.M), p.name


@pytest.mark.parametrize("series", SERIES)
def test_wire_constants_are_the_decoders(series: str) -> None:
    c = constants(added(series))
    assert c == {"TCPOPT_OWTS": owts.KIND, "TCPOPT_OWTS_MAGIC": owts.EXID,
                 "TCPOLEN_OWTS": owts.LENGTH, "TCP_OWTS_NONE": owts.OTT_NONE_RAW}, c
    m = re.search(r"#define TCP_OWTS_MAX_OTT_US\s+\((\d+) \* USEC_PER_SEC\)", added(series))
    assert m and int(m.group(1)) * 1_000_000 == owts.MAX_ABS_OTT_US


def test_both_series_add_the_same_code() -> None:
    """The port differs in context and placement only: the same helpers,
    counters, sysctl and accessors, word for word."""
    def pieces(series: str) -> List[str]:
        text = added(series)
        names = re.findall(r"^(?:static (?:inline )?\w+ \*?|#define )(\w*owts\w*)", text,
                           re.M | re.I)
        return sorted(set(names))
    assert pieces("6.1") == pieces("7.2")
    for needle in ('"tcp_owts"', '"TCPOWTSIn"', '"TCPOWTSOut"', '"TCPOWTSRejected"',
                   "TCP_OWTS_API", "tcp_owts_fwd_ott", "tcp_owts_rev_ott",
                   "tcp_owts_set_option", "tcp_parse_owts_option", "tcp_owts_reject",
                   "tcp_owts_wanted", "syn_owts", "owts_asked"):
        for series in SERIES:
            assert needle in added(series), (series, needle)


def test_socket_option_number_is_the_one_the_tests_use() -> None:
    """TCP_OWTS has the same number in both series (user space passes it as a
    number) and tests/owts passes that number."""
    numbers = {s: re.findall(r"^#define TCP_OWTS\s+(\d+)", added(s), re.M) for s in SERIES}
    assert numbers["6.1"] == numbers["7.2"] and len(numbers["6.1"]) == 1, numbers
    test = (ROOT / "tests" / "owts" / "test_owts_negotiation.py").read_text()
    assert re.search(rf"^TCP_OWTS = {numbers['6.1'][0]}$", test, re.M)


def test_the_modules_use_the_accessors_the_series_defines() -> None:
    glue = (ROOT / "kmod" / "glue" / "glue.c").read_text()
    assert "#ifdef TCP_OWTS_API" in glue
    for fn in re.findall(r"\b(tcp_owts_\w+)\(", glue):
        assert f"{fn}(" in added("6.1") and f"{fn}(" in added("7.2"), fn


def test_config_fragment_has_what_the_tests_use() -> None:
    frag = (OPT / "kernel.config").read_text()
    for opt in ("MODULES", "NET_NS", "VETH", "NET_SCH_NETEM", "NET_SCH_RED", "NET_SCH_HTB",
                "PACKET", "INET_DIAG", "TCP_CONG_BBR", "TCP_CONG_VEGAS", "BRIDGE"):
        assert f"CONFIG_{opt}=y" in frag, opt


def test_build_script_refuses_an_unknown_series() -> None:
    res = subprocess.run([str(OPT / "build-kernel.sh"), "--series", "9.9"],
                         capture_output=True, text=True, timeout=30)
    assert res.returncode == 1
    assert "no patch series tcp_option/linux-9.9/" in res.stderr
    bad = subprocess.run([str(OPT / "build-kernel.sh"), "--bogus"], capture_output=True,
                         text=True, timeout=30)
    assert bad.returncode == 2 and "usage" in bad.stderr
