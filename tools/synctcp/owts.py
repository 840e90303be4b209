"""The one-way-timestamp (OWTS) TCP option, as the trace tools read it.

PROVISIONAL.  The option itself is being designed in the ``tcp_option``
issue; this module is the one place where its wire layout is written down
for the Python tools, so that a change of layout is a change here only.

Layout (RFC 6994 experimental option with an experiment ID)::

    0        1        2        4                12               20               28
    +--------+--------+--------+----------------+----------------+----------------+
    | kind   | len=28 | ExID   | tx_ns          | echo_tx_ns     | echo_rx_ns     |
    | 253    |        | 0x5354 | u64            | u64            | u64            |
    +--------+--------+--------+----------------+----------------+----------------+

All fields are in network byte order and in nanoseconds of the host's
disciplined (GPS/PPS) clock; 0 means "not present".

- ``tx_ns``: the time this segment was sent, by its sender.
- ``echo_tx_ns``: the ``tx_ns`` of the peer's segment this segment
  acknowledges (the one that last advanced ``rcv_nxt``, like TSecr).
- ``echo_rx_ns``: the time that same peer segment was *received*.

So an ACK carries, for the data segment it acknowledges, both its send time
and its receive time, and the data sender reads the exact forward OTT
``echo_rx_ns - echo_tx_ns``: no clock-rate estimate, no offset, and no
delayed-ACK hold time (the receive time is stamped on arrival, not when the
ACK leaves).  ``tx_ns`` on the ACK itself gives the reverse OTT to whoever
receives it.  A pure data segment of a one-way transfer carries ``tx_ns``
only; a pure ACK may leave ``tx_ns`` at 0.

28 bytes is a lot of option space: with RFC 7323 timestamps (12 bytes with
padding) nothing is left for SACK blocks.  A stack that uses OWTS is
expected to drop the TS option; the layout may also shrink (e.g. 32-bit
offsets) once the kernel patch settles.
"""

from __future__ import annotations

import struct
from dataclasses import dataclass
from typing import Optional


@dataclass(frozen=True)
class OwtsLayout:
    """Wire constants of the option (kind, length, experiment ID, body format)."""

    kind: int = 253          #: RFC 6994 experimental option kind (254 is the other one)
    exid: int = 0x5354       #: experiment ID, "ST" (Sync-TCP)
    body: str = "!HQQQ"      #: ExID, tx_ns, echo_tx_ns, echo_rx_ns

    @property
    def length(self) -> int:
        """Total option length in bytes, kind and length byte included."""
        return 2 + struct.calcsize(self.body)


LAYOUT = OwtsLayout()


@dataclass(frozen=True)
class Owts:
    """The three timestamps of one OWTS option (ns; 0 = not present)."""

    tx_ns: int = 0
    echo_tx_ns: int = 0
    echo_rx_ns: int = 0

    def forward_ott_ns(self) -> Optional[int]:
        """Exact OTT of the acknowledged peer segment: ``echo_rx_ns - echo_tx_ns``."""
        if not self.echo_tx_ns or not self.echo_rx_ns:
            return None
        return self.echo_rx_ns - self.echo_tx_ns

    def pack(self, layout: OwtsLayout = LAYOUT) -> bytes:
        """The whole option, kind and length included."""
        return bytes((layout.kind, layout.length)) + struct.pack(
            layout.body, layout.exid, self.tx_ns, self.echo_tx_ns, self.echo_rx_ns)

    @classmethod
    def unpack(cls, kind: int, data: bytes, layout: OwtsLayout = LAYOUT) -> Optional["Owts"]:
        """Decode an option's body (the bytes after kind and length).

        Returns None if it is not an OWTS option: another kind, another
        experiment ID (kind 253/254 are shared by all RFC 6994 experiments)
        or a wrong length.
        """
        if kind != layout.kind or len(data) != layout.length - 2:
            return None
        exid, tx_ns, echo_tx_ns, echo_rx_ns = struct.unpack(layout.body, data)
        if exid != layout.exid:
            return None
        return cls(tx_ns, echo_tx_ns, echo_rx_ns)
