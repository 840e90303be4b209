"""The one-way-timestamp (OWTS) TCP option: wire layout, encoder, tolerant decoder.

This module is the one place where the option's layout is written down for
the Python tools (trace, correlate, the ``synctcp owts`` decoder, the fake
peer of owts_peer.py); the kernel side is the ``tcp_option/`` patch.

Layout (final), an RFC 6994 experimental option with an experiment ID::

    0        1        2                 4                          8                          12
    +--------+--------+-----------------+--------------------------+--------------------------+
    | kind   | len=12 | ExID 0x5354     | tsval_us  (u32)          | ott_us  (s32)            |
    | 253    |        | "ST"            |                          | 0x80000000 = none        |
    +--------+--------+-----------------+--------------------------+--------------------------+

All fields are in network byte order.

- ``tsval_us``: the sender's send time of this segment, CLOCK_REALTIME in
  microseconds modulo 2^32.  It wraps every 2^32 µs ≈ 71.6 min, so every
  difference of two such values is taken modulo 2^32 and read as a signed
  32-bit number (:func:`diff_us`): valid for |difference| < 35.8 min.
- ``ott_us``: the OTT (µs) that the sender of THIS segment measured for
  the LAST segment carrying the option that it received from its peer:
  its receive time minus that segment's ``tsval_us`` (mod 2^32, signed).
  ``0x80000000`` (:data:`OTT_NONE`) means "none": on SYN and SYN-ACK, before
  the first option was received, or when the value was rejected.

So in a bulk transfer A→B the ACKs from B carry in ``ott_us`` the *forward*
OTT of A's data (the "echoed OTT"), and A's data segments carry the
*reverse* OTT of the last ACK (B→A).  With GPS/PPS-disciplined clocks on
both hosts these are exact one-way transit times, with no clock-rate
estimate, no offset and no delayed-ACK hold (the receive time is stamped
when the segment is parsed, not when the ACK leaves).  The dissertation's
third field (an echo of the peer's send time) is gone: RFC 7323 TSecr
already matches segments and times the RTT.

Why 12 bytes.  TCP has 40 bytes of option space.  RFC 7323 timestamps take
12 (10 + 2 NOPs for alignment) on every segment; OWTS takes 12 more, which
leaves 16: room for one SACK block (2 + 8, padded to 12) but not two.
Without OWTS three SACK blocks fit.  The option therefore yields to SACK:
an ACK that needs two or more SACK blocks next to timestamps is sent
without OWTS.  The option is negotiated on SYN/SYN-ACK, which carry
``tsval_us`` and ``ott_us`` = none.

Decoding a capture must never raise: :func:`scan_options` walks a raw TCP
option list and reports what is wrong with the OWTS option(s) in it (see
:data:`PROBLEMS`) next to the first well-formed one.
"""

from __future__ import annotations

import struct
from dataclasses import dataclass
from typing import List, Optional, Sequence, Tuple

KIND = 253                  #: RFC 6994 experimental option kind (254 is the other one)
EXID = 0x5354               #: experiment ID, "ST" (Sync-TCP)
LENGTH = 12                 #: whole option: kind, len, ExID, tsval_us, ott_us
BODY = "!HIi"               #: ExID, tsval_us, ott_us (after kind and length)
OTT_NONE_RAW = 0x80000000   #: ott_us on the wire when there is no value
MOD = 1 << 32
#: |ott_us| above this is absurd (no path is two minutes long): flagged, not believed.
MAX_ABS_OTT_US = 120_000_000
#: |capture time - tsval_us| above this is an absurd send time (flagged by the decoder).
MAX_ABS_TSVAL_AGE_US = 120_000_000

#: What :func:`scan_options` can find wrong with the OWTS option(s) of one segment.
PROBLEMS = {
    "bad-length": "kind 253 with ExID 0x5354 but a length other than 12",
    "truncated": "a kind 253 option whose length runs past the end of the option list",
    "repeated": "more than one OWTS option in one segment (the first well-formed one is used)",
    "absurd-ott": "|ott_us| > 120 s",
    "absurd-tsval": "tsval_us more than 120 s from the capture time (decoder only)",
}


def diff_us(a: int, b: int) -> int:
    """``a - b`` for two µs stamps modulo 2^32, read as a signed 32-bit number."""
    d = (a - b) % MOD
    return d - MOD if d >= 1 << 31 else d


def tsval_of(t_s: float) -> int:
    """``tsval_us`` of an absolute time in seconds (CLOCK_REALTIME µs mod 2^32)."""
    return int(round(t_s * 1e6)) % MOD


def encode(tsval_us: int, ott_us: Optional[int] = None) -> bytes:
    """The whole 12-byte option; ``ott_us=None`` is written as 0x80000000 (none).

    Raises ValueError for values that cannot be put on the wire (use
    :func:`encode_raw` to write arbitrary, e.g. absurd, field values).
    """
    if not 0 <= tsval_us < MOD:
        raise ValueError(f"tsval_us {tsval_us} is not a u32")
    if ott_us is not None and not -(1 << 31) < ott_us < 1 << 31:
        raise ValueError(f"ott_us {ott_us} is not an s32 (and -2^31 means none)")
    return encode_raw(tsval_us, OTT_NONE_RAW if ott_us is None else ott_us % MOD)


def encode_raw(tsval_raw: int, ott_raw: int, kind: int = KIND, exid: int = EXID,
               length: Optional[int] = None) -> bytes:
    """Kind, length byte, ExID and the two fields as given (u32 each), no checks.

    ``length`` only changes the length *byte* (the body is always 10 bytes):
    for building malformed options.
    """
    body = struct.pack("!HII", exid, tsval_raw % MOD, ott_raw % MOD)
    return bytes((kind, LENGTH if length is None else length)) + body


@dataclass(frozen=True)
class Owts:
    """One decoded OWTS option: ``tsval_us`` (u32) and ``ott_us`` (µs, None = none)."""

    tsval_us: int
    ott_us: Optional[int] = None

    @property
    def ott_ns(self) -> Optional[int]:
        return None if self.ott_us is None else self.ott_us * 1000

    def pack(self) -> bytes:
        """The whole option, kind and length included."""
        return encode(self.tsval_us, self.ott_us)

    @classmethod
    def unpack(cls, kind: int, data: bytes) -> Optional["Owts"]:
        """Decode an option's body (the bytes after kind and length).

        None if it is not a well-formed OWTS option: another kind, another
        experiment ID (kinds 253/254 are shared by all RFC 6994
        experiments) or a wrong length.
        """
        if kind != KIND or len(data) != LENGTH - 2:
            return None
        exid, tsval, ott = struct.unpack(BODY, data)
        if exid != EXID:
            return None
        return cls(tsval, None if ott == -(1 << 31) else ott)

    def absurd(self) -> bool:
        """``ott_us`` present and larger than :data:`MAX_ABS_OTT_US` in magnitude."""
        return self.ott_us is not None and abs(self.ott_us) > MAX_ABS_OTT_US


@dataclass(frozen=True)
class OwtsScan:
    """The OWTS option(s) of one segment's option list, as found."""

    option: Optional[Owts] = None       #: the first well-formed OWTS option
    count: int = 0                      #: OWTS options seen (well-formed or not)
    problems: Tuple[str, ...] = ()      #: keys of :data:`PROBLEMS`, in the order found

    @property
    def malformed(self) -> bool:
        return bool(self.problems)


def _is_ours(buf: bytes, i: int, olen: int, fits: bool) -> Optional[bool]:
    """Whether the kind-253 option at ``i`` carries our ExID; None if the ExID is cut off."""
    end = i + olen if fits else len(buf)
    if i + 4 > end:
        return False if fits else None      # a whole option too short for an ExID is not ours
    return struct.unpack_from("!H", buf, i + 2)[0] == EXID


def scan_options(buf: bytes) -> OwtsScan:
    """Find the OWTS option(s) in a raw TCP option list; never raises.

    Walks the list with RFC 9293 framing (EOL ends it, NOP is one byte,
    everything else has a length byte).  A kind-253 option whose ExID is
    another experiment's is ignored.  Problems found:

    - ``bad-length``: our ExID with a length byte other than 12;
    - ``truncated``: a kind-253 option (ours, or with the ExID cut off)
      whose length byte runs past the list, or a list that ends after the
      kind byte;
    - ``repeated``: a second OWTS option in the same segment;
    - ``absurd-ott``: |ott_us| > 120 s in the option used.
    """
    found: Optional[Owts] = None
    count = 0
    problems: List[str] = []
    i, n = 0, len(buf)
    while i < n:                       # bounded: i grows by >= 1 per round
        kind = buf[i]
        if kind == 0:
            break
        if kind == 1:
            i += 1
            continue
        if i + 1 >= n:
            if kind == KIND:
                count += 1
                problems.append("truncated")
            break
        olen = buf[i + 1]
        fits = olen >= 2 and i + olen <= n
        if kind == KIND and _is_ours(buf, i, olen, fits) is not False:
            count += 1
            if not fits:
                problems.append("truncated")
                break
            if olen != LENGTH:
                problems.append("bad-length")
            elif found is None:
                found = Owts.unpack(kind, buf[i + 2:i + LENGTH])
        if not fits:
            break                       # another option's framing is broken: stop, as Linux does
        i += olen
    if count > 1:
        problems.append("repeated")
    if found is not None and found.absurd():
        problems.append("absurd-ott")
    return OwtsScan(found, count, tuple(problems))


def stats_ms(values_us: Sequence[int]) -> Optional[dict]:
    """n, min, median, p90, p99, max (ms) of µs values; None for no values."""
    if not values_us:
        return None
    v = sorted(values_us)

    def pct(p: float) -> float:
        # nearest-rank percentile: a value that was seen
        k = max(0, min(len(v) - 1, -(-len(v) * p // 100) - 1))
        return v[int(k)] / 1000.0

    mid = len(v) // 2
    median = v[mid] if len(v) % 2 else (v[mid - 1] + v[mid]) / 2
    return {"n": len(v), "min": v[0] / 1000.0, "median": median / 1000.0, "p90": pct(90),
            "p99": pct(99), "max": v[-1] / 1000.0}
