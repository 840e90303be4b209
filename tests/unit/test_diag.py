"""The inet_diag decoder agrees with kmod/core/synctcp_info.h."""

import shutil
import struct
import subprocess
from pathlib import Path

import pytest

from synctcp import diag
from synctcp.diag import (HDR_FORMAT, LAYOUTS, SYNCTCP_DIAG_ATTR, DiagError, decode_record,
                          iter_attrs)

ROOT = Path(__file__).resolve().parents[2]

LAYOUT_PROBE = r"""
#include <stddef.h>
#include <stdio.h>
#include "synctcp_info.h"
#define F(s, m) printf(#s " " #m " %zu %zu\n", offsetof(struct s, m), sizeof(((struct s *)0)->m))
int main(void)
{
	printf("attr %d\n", SYNCTCP_DIAG_ATTR);
	printf("flag LOSS_SEEN %d\nflag CONGESTED %d\nflag RATE_KNOWN %d\n",
	       SYNCTCP_F_LOSS_SEEN, SYNCTCP_F_CONGESTED, SYNCTCP_F_RATE_KNOWN);
	printf("flag TS_UNFIT %d\nflag NO_STATE %d\nflag COMPETING %d\n", SYNCTCP_F_TS_UNFIT,
	       SYNCTCP_F_NO_STATE, SYNCTCP_F_COMPETING);
	printf("clock 1 %d\nclock 2 %d\nclock 3 %d\nclock 4 %d\n", SYNCTCP_CLOCK_2HZ,
	       SYNCTCP_CLOCK_10HZ, SYNCTCP_CLOCK_100HZ, SYNCTCP_CLOCK_250HZ);
	printf("clock 5 %d\nclock 6 %d\nclock 7 %d\nclock 255 %d\n", SYNCTCP_CLOCK_1KHZ,
	       SYNCTCP_CLOCK_1MHZ, SYNCTCP_CLOCK_300HZ, SYNCTCP_CLOCK_OTHER);
	printf("size synctcp_sync_info %zu\n", sizeof(struct synctcp_sync_info));
	F(synctcp_sync_info, min_ott_us);
	F(synctcp_sync_info, qdelay_us);
	F(synctcp_sync_info, max_qdelay_us);
	F(synctcp_sync_info, signals);
	F(synctcp_sync_info, reductions);
	printf("size synctcp_etcp_info %zu\n", sizeof(struct synctcp_etcp_info));
	F(synctcp_etcp_info, w_x256);
	F(synctcp_etcp_info, losses);
	F(synctcp_etcp_info, ecn_events);
	F(synctcp_etcp_info, undos);
	F(synctcp_etcp_info, phase);
	printf("size synctcp_mixreact_info %zu\n", sizeof(struct synctcp_mixreact_info));
	F(synctcp_mixreact_info, qdelay_avg_us);
	F(synctcp_mixreact_info, max_qdelay_us);
	F(synctcp_mixreact_info, trend);
	F(synctcp_mixreact_info, region);
	F(synctcp_mixreact_info, action);
	F(synctcp_mixreact_info, mix_flags);
	F(synctcp_mixreact_info, increases);
	F(synctcp_mixreact_info, decreases);
	return 0;
}
"""


@pytest.fixture(scope="module")
def c_layout(tmp_path_factory: pytest.TempPathFactory) -> dict:
    cc = shutil.which("cc") or shutil.which("gcc")
    if cc is None:
        pytest.fail("no C compiler: make setup installs build-essential")
    d = tmp_path_factory.mktemp("layout")
    (d / "probe.c").write_text(LAYOUT_PROBE)
    subprocess.run([cc, "-I", str(ROOT / "kmod/core"), "-o", str(d / "probe"), str(d / "probe.c")],
                   check=True)
    out = subprocess.run([str(d / "probe")], capture_output=True, text=True, check=True).stdout
    layout: dict = {"size": {}, "fields": {}, "flag": {}, "clock": {}}
    for ln in (line.split() for line in out.splitlines()):
        if ln[0] == "attr":
            layout["attr"] = int(ln[1])
        elif ln[0] in ("flag", "clock"):
            layout[ln[0]][ln[1]] = int(ln[2])
        elif ln[0] == "size":
            layout["size"][ln[1]] = int(ln[2])
        else:
            layout["fields"][(ln[0], ln[1])] = (int(ln[2]), int(ln[3]))
    return layout


def test_attribute_type_matches_header(c_layout: dict) -> None:
    assert c_layout["attr"] == SYNCTCP_DIAG_ATTR


@pytest.mark.parametrize("module", ["sync", "etcp", "mixreact"])
def test_record_layout_matches_header(c_layout: dict, module: str) -> None:
    cstruct = f"synctcp_{module}_info"
    fmt, names = LAYOUTS[module]
    hdr = struct.calcsize(HDR_FORMAT)
    assert hdr + struct.calcsize(fmt) == c_layout["size"][cstruct] <= 20
    codes = [c for c in fmt[1:] if not c.isdigit() and c != "x"]
    off = hdr
    for name, code in zip(names, codes):
        size = struct.calcsize("<" + code)
        assert c_layout["fields"][(cstruct, name)] == (off, size), name
        off += size


def test_flags_and_clock_codes_match_header(c_layout: dict) -> None:
    assert c_layout["flag"] == {"LOSS_SEEN": diag.F_LOSS_SEEN, "CONGESTED": diag.F_CONGESTED,
                                "RATE_KNOWN": diag.F_RATE_KNOWN, "TS_UNFIT": diag.F_TS_UNFIT,
                                "NO_STATE": diag.F_NO_STATE, "COMPETING": diag.F_COMPETING}
    hz = {"1": 2, "2": 10, "3": 100, "4": 250, "5": 1000, "6": 1000000, "7": 300, "255": "other"}
    assert {code: diag.CLOCKS[value] for code, value in c_layout["clock"].items()} == hz


def test_decode_sync_record() -> None:
    raw = struct.pack("<BBBB", 1, 2, 0x05, 5) + struct.pack("<iIIHH", -2000, 19000, 60000, 7, 3)
    rec = decode_record(raw)
    assert rec == {"module": "sync", "source": "ts", "loss_seen": True, "congested": False,
                   "rate_known": True, "ts_unfit": False, "no_state": False,
                   "competing": False, "peer_clock_hz": 1000, "min_ott_us": -2000,
                   "qdelay_us": 19000, "max_qdelay_us": 60000, "signals": 7, "reductions": 3}


def test_decode_unfit_peer_and_missing_state() -> None:
    rec = decode_record(struct.pack("<BBBB", 1, 1, 0x08, 0) + bytes(16))
    assert rec["source"] == "rtt" and rec["ts_unfit"] and not rec["no_state"]
    rec = decode_record(struct.pack("<BBBB", 2, 0, 0x10, 0) + bytes(16))
    assert rec["module"] == "mixreact" and rec["no_state"]
    assert decode_record(struct.pack("<BBBB", 1, 2, 0x04, 7) + bytes(16))["peer_clock_hz"] == 300
    rec = decode_record(struct.pack("<BBBB", 1, 2, 0x21, 5) + bytes(16))
    assert rec["competing"] and rec["loss_seen"] and not rec["congested"]


def test_decode_etcp_record() -> None:
    raw = struct.pack("<BBBB", 3, 0, 0x01, 0) + struct.pack("<IIHHB3x", 220 * 256, 1234, 2, 1, 2)
    rec = decode_record(raw)
    assert rec["module"] == "etcp" and rec["source"] == "none" and rec["loss_seen"]
    assert (rec["w_x256"], rec["losses"], rec["ecn_events"], rec["undos"], rec["phase"]) == \
        (220 * 256, 1234, 2, 1, 2)


def test_decode_rejects_short_and_unknown_records() -> None:
    with pytest.raises(DiagError):
        decode_record(b"\x01\x02")
    with pytest.raises(DiagError):
        decode_record(struct.pack("<BBBB", 1, 2, 0, 5) + b"\0" * 4)
    with pytest.raises(DiagError, match="unknown"):
        decode_record(struct.pack("<BBBB", 99, 0, 0, 0) + b"\0" * 16)


def test_attribute_walk_handles_padding_and_masks_flags() -> None:
    a = struct.pack("<HH", 5, 4) + b"x" + b"\0" * 3          # 1-byte payload, padded
    b = struct.pack("<HH", 8, SYNCTCP_DIAG_ATTR | 0x8000) + b"abcd"
    assert list(iter_attrs(a + b, 0, len(a + b))) == [(4, b"x"), (SYNCTCP_DIAG_ATTR, b"abcd")]


def test_attribute_walk_rejects_overrun() -> None:
    bad = struct.pack("<HH", 40, 1) + b"\0" * 4
    with pytest.raises(DiagError):
        list(iter_attrs(bad, 0, len(bad)))


def test_connected_states_are_the_full_sockets_of_a_connection() -> None:
    # kernel numbering (include/net/tcp_states.h)
    est, syn_sent, syn_recv, fw1, fw2, tw, close, cw, la, listen, closing = range(1, 12)
    want = {est, fw1, fw2, cw, la, closing}
    got = {st for st in range(1, 13) if diag.TCP_STATES_CONNECTED & (1 << st)}
    assert got == want
    # no TIME_WAIT (mini-sockets without tcp_info: thousands on a web server), no LISTEN
    assert not {tw, close, listen, syn_sent, syn_recv} & got
