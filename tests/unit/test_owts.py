"""The OWTS option: byte-exact encoding, tolerant decoding, malformed classification."""

from __future__ import annotations

import struct

import pytest

from synctcp import owts
from synctcp.owts import Owts, diff_us, encode, encode_raw, scan_options, stats_ms, tsval_of
from synctcp.pcap import parse_tcp_options

TS = b"\x01\x01\x08\x0a" + struct.pack("!II", 1000, 2000)      # NOP NOP TS, 12 bytes


def test_encode_is_byte_exact() -> None:
    assert encode(0x01020304, 20_123) == bytes.fromhex("fd0c5354" "01020304" "00004e9b")
    assert encode(0xFFFFFFFF, -1) == bytes.fromhex("fd0c5354" "ffffffff" "ffffffff")
    assert encode(7, None) == bytes.fromhex("fd0c5354" "00000007" "80000000")
    assert len(encode(0, 0)) == owts.LENGTH == 12 and owts.LENGTH % 4 == 0


@pytest.mark.parametrize("tsval,ott", [(0, 0), (1, None), (0xFFFFFFFF, -(1 << 31) + 1),
                                       (123456789, (1 << 31) - 1), (4_000_000_000, -20_333)])
def test_round_trip(tsval: int, ott: int) -> None:
    raw = Owts(tsval, ott).pack()
    assert Owts.unpack(raw[0], raw[2:]) == Owts(tsval, ott)
    assert scan_options(raw).option == Owts(tsval, ott)


@pytest.mark.parametrize("tsval,ott", [(-1, 0), (1 << 32, 0), (0, 1 << 31), (0, -(1 << 31))])
def test_encode_refuses_values_off_the_wire(tsval: int, ott: int) -> None:
    with pytest.raises(ValueError):
        encode(tsval, ott)


def test_wraparound_differences_are_signed_32_bit() -> None:
    assert diff_us(5, 0xFFFFFFFB) == 10                     # across the wrap
    assert diff_us(0xFFFFFFFB, 5) == -10
    assert diff_us(0, 1 << 31) == -(1 << 31)
    t = 1_700_000_000.25
    assert tsval_of(t) == (1_700_000_000_250_000) % (1 << 32)
    assert diff_us(tsval_of(t + 0.020), tsval_of(t)) == 20_000
    # 71.6 minutes later the stamp has wrapped exactly once
    assert tsval_of(t + (1 << 32) / 1e6) == tsval_of(t)


def test_other_experiments_and_kinds_are_ignored() -> None:
    other = encode_raw(1, 2, exid=0x1234)
    assert scan_options(other) == owts.OwtsScan()
    assert scan_options(encode_raw(1, 2, kind=254)).count == 0
    assert Owts.unpack(253, other[2:]) is None


def test_well_formed_next_to_timestamps_and_sack() -> None:
    sack = b"\x01\x01\x05\x0a" + struct.pack("!II", 10, 20)
    scan = scan_options(TS + encode(99, 1500) + sack)
    assert scan.option == Owts(99, 1500) and scan.count == 1 and not scan.problems
    opts = parse_tcp_options(TS + encode(99, 1500) + sack)
    assert opts.ts == (1000, 2000) and opts.sack == ((10, 20),) and opts.owts == Owts(99, 1500)
    assert not opts.malformed and opts.owts_count == 1


@pytest.mark.parametrize("length", [10, 14])
def test_bad_length_is_reported(length: int) -> None:
    body = struct.pack("!HI", owts.EXID, 5) + bytes(length - 6)
    opt = bytes((253, length)) + body
    pad = b"\x01" * (-len(opt) % 4)
    scan = scan_options(TS + pad + opt)
    assert scan.problems == ("bad-length",) and scan.option is None and scan.count == 1
    p = parse_tcp_options(TS + pad + opt)
    assert p.malformed and p.owts is None and p.owts_problems == ("bad-length",)
    assert p.ts == (1000, 2000)                  # the rest of the list still parsed


def test_truncated_option_running_past_the_header() -> None:
    cut = encode(5, 6)[:8]                       # length byte says 12, 8 bytes left
    scan = scan_options(TS + cut)
    assert scan.problems == ("truncated",) and scan.option is None
    assert parse_tcp_options(TS + cut).malformed
    assert scan_options(b"\x01\x01\x01\xfd").problems == ("truncated",)   # kind, then the end
    assert scan_options(b"\xfd\x0c").problems == ("truncated",)           # ExID cut off
    # another experiment's truncated option is not ours
    assert scan_options(b"\xfd\x0c\x12\x34\x00").count == 0


def test_repeated_option_uses_the_first() -> None:
    scan = scan_options(encode(1, 100) + encode(2, 200) + TS)
    assert scan.option == Owts(1, 100) and scan.count == 2 and scan.problems == ("repeated",)
    scan = scan_options(encode_raw(1, 2, length=10)[:10] + b"\x01\x01" + encode(3, 4))
    assert scan.option == Owts(3, 4) and set(scan.problems) == {"bad-length", "repeated"}


def test_absurd_ott_is_flagged_not_dropped() -> None:
    scan = scan_options(encode_raw(1, 0x7FFFFFFF))
    assert scan.option == Owts(1, 0x7FFFFFFF) and scan.problems == ("absurd-ott",)
    assert scan.option.absurd()
    assert not scan_options(encode(1, owts.MAX_ABS_OTT_US)).problems
    assert scan_options(encode(1, -owts.MAX_ABS_OTT_US - 1)).problems == ("absurd-ott",)
    assert not Owts(1, None).absurd()


@pytest.mark.parametrize("junk", [b"", b"\x00", b"\xfd", b"\xfd\x00", b"\xfd\x01\xfd",
                                  b"\x02\x04\x05", b"\xfd\xff" + bytes(38), bytes(range(256))[:40],
                                  b"\x01" * 40])
def test_never_raises(junk: bytes) -> None:
    scan_options(junk)
    parse_tcp_options(junk)


def test_stats_nearest_rank() -> None:
    s = stats_ms(list(range(1000, 101_000, 1000)))       # 1..100 ms
    assert s == {"n": 100, "min": 1.0, "median": 50.5, "p90": 90.0, "p99": 99.0, "max": 100.0}
    assert stats_ms([]) is None
    assert stats_ms([3000])["p99"] == 3.0
