"""Per-socket telemetry of the synctcp modules, read through inet_diag.

The modules' ``get_info()`` exports a record of at most 20 bytes (the size
of the kernel's ``union tcp_cc_info``) under the private netlink attribute
type :data:`SYNCTCP_DIAG_ATTR`.  The layouts here mirror
``kmod/core/synctcp_info.h``; ``tests/unit/test_diag_layout.py`` compiles
that header and checks that both agree.

pyroute2's ``DiagSocket`` does the netlink dump.  It names an attribute it
does not know ``UNKNOWN`` and drops its type, so the attributes of each
reply are walked here from the raw message.
"""

from __future__ import annotations

import socket
import struct
from dataclasses import dataclass, field
from typing import Any, Dict, Iterator, List, Optional, Tuple

SYNCTCP_DIAG_ATTR = 0x3A5C

INET_DIAG_INFO = 2
INET_DIAG_VEGASINFO = 3
INET_DIAG_CONG = 4

#: inet_diag_msg follows the 16-byte nlmsghdr and is 72 bytes long.
_NLMSGHDR_LEN = 16
_INET_DIAG_MSG_LEN = 72
_NLA_TYPE_MASK = 0x3FFF

MODULES = {1: "sync", 2: "mixreact", 3: "etcp"}
SOURCES = {0: "none", 1: "rtt", 2: "ts", 3: "option"}
CLOCKS = {0: None, 1: 2, 2: 10, 3: 100, 4: 250, 5: 1000, 6: 1000000, 7: 300, 255: "other"}

F_LOSS_SEEN = 0x01
F_CONGESTED = 0x02
F_RATE_KNOWN = 0x04
#: the peer's TS clock fits no known rate: the connection is RTT-sourced since
F_TS_UNFIT = 0x08
#: the module could not allocate the connection's state: it runs as Reno
F_NO_STATE = 0x10
#: variant best competes with loss-based flows (kmod/core/mode.h)
F_COMPETING = 0x20

#: struct synctcp_info_hdr
HDR_FORMAT = "<BBBB"
HDR_FIELDS = ("module", "source", "flags", "peer_clock")

#: Module-specific part of each record: (struct format, field names).
LAYOUTS: Dict[str, Tuple[str, Tuple[str, ...]]] = {
    "sync": ("<iIIHH", ("min_ott_us", "qdelay_us", "max_qdelay_us", "signals", "reductions")),
    "etcp": ("<IIHHB3x", ("w_x256", "losses", "ecn_events", "undos", "phase")),
    "mixreact": ("<IIBBBBHH", ("qdelay_avg_us", "max_qdelay_us", "trend", "region", "action",
                               "mix_flags", "increases", "decreases")),
}

#: enum synctcp_mix_trend / _region (kmod/core/syncmix.h), enum synctcp_mixreact_action
MIX_TRENDS = {0: "none", 1: "increasing", 2: "decreasing"}
MIX_REGIONS = {0: "0-25%", 1: "25-50%", 2: "50-75%", 3: "75-100%"}
MIX_ACTIONS = {0: "reno", 1: "+1/rtt", 2: "x0.9", 3: "x0.75", 4: "x0.5", 5: "+50%/rtt",
               6: "+25%/rtt", 7: "+10%/rtt", 8: "keep"}

#: enum etcp_phase (kmod/core/etcp.h)
ETCP_PHASES = {0: "slow_start", 1: "hold", 2: "etcp"}


class DiagError(RuntimeError):
    """inet_diag could not be queried or returned something malformed."""


def decode_record(raw: bytes) -> Dict[str, Any]:
    """Decode one synctcp telemetry record (header + module part)."""
    hdr_len = struct.calcsize(HDR_FORMAT)
    if len(raw) < hdr_len:
        raise DiagError(f"synctcp record too short: {len(raw)} bytes")
    hdr = dict(zip(HDR_FIELDS, struct.unpack_from(HDR_FORMAT, raw)))
    name = MODULES.get(hdr["module"])
    if name is None:
        raise DiagError(f"unknown synctcp module id {hdr['module']}")
    out: Dict[str, Any] = {
        "module": name,
        "source": SOURCES.get(hdr["source"], f"unknown({hdr['source']})"),
        "loss_seen": bool(hdr["flags"] & F_LOSS_SEEN),
        "congested": bool(hdr["flags"] & F_CONGESTED),
        "rate_known": bool(hdr["flags"] & F_RATE_KNOWN),
        "ts_unfit": bool(hdr["flags"] & F_TS_UNFIT),
        "no_state": bool(hdr["flags"] & F_NO_STATE),
        "competing": bool(hdr["flags"] & F_COMPETING),
        "peer_clock_hz": CLOCKS.get(hdr["peer_clock"], "other"),
    }
    layout = LAYOUTS.get(name)
    if layout is not None:
        fmt, names = layout
        need = hdr_len + struct.calcsize(fmt)
        if len(raw) < need:
            raise DiagError(f"{name} record is {len(raw)} bytes, expected {need}")
        out.update(zip(names, struct.unpack_from(fmt, raw, hdr_len)))
    return out


def iter_attrs(buf: bytes, offset: int, end: int) -> Iterator[Tuple[int, bytes]]:
    """Yield (type, payload) of the netlink attributes in buf[offset:end]."""
    while offset + 4 <= end:
        length, kind = struct.unpack_from("<HH", buf, offset)
        if length < 4 or offset + length > end:
            raise DiagError(f"malformed netlink attribute at {offset}")
        yield kind & _NLA_TYPE_MASK, bytes(buf[offset + 4 : offset + length])
        offset += (length + 3) & ~3


@dataclass
class SocketState:
    """One TCP socket as inet_diag reports it."""

    family: int
    src: str
    sport: int
    dst: str
    dport: int
    state: int
    cc: Optional[str] = None
    tcp_info: Dict[str, int] = field(default_factory=dict)
    synctcp: Optional[Dict[str, Any]] = None

    def as_dict(self) -> Dict[str, Any]:
        return {
            "src": self.src,
            "sport": self.sport,
            "dst": self.dst,
            "dport": self.dport,
            "cc": self.cc,
            "tcp_info": self.tcp_info,
            "synctcp": self.synctcp,
        }


_TCP_INFO_KEYS = {
    "tcpi_snd_cwnd": "cwnd",
    "tcpi_snd_ssthresh": "ssthresh",
    "tcpi_rtt": "rtt_us",
    "tcpi_min_rtt": "min_rtt_us",
    "tcpi_total_retrans": "retrans",
    "tcpi_delivery_rate": "delivery_rate",
    "tcpi_bytes_acked": "bytes_acked",
}


def _parse_message(msg: Any) -> SocketState:
    family = msg["idiag_family"]
    start = msg.offset
    end = msg.offset + msg["header"]["length"]
    st = SocketState(
        family=family,
        src=str(msg["idiag_src"]),
        sport=int(msg["idiag_sport"]),
        dst=str(msg["idiag_dst"]),
        dport=int(msg["idiag_dport"]),
        state=int(msg["idiag_state"]),
    )
    cong = msg.get_attr("INET_DIAG_CONG")
    if cong:
        st.cc = str(cong)
    info = msg.get_attr("INET_DIAG_INFO")
    if info is not None:
        for key, name in _TCP_INFO_KEYS.items():
            try:
                st.tcp_info[name] = int(info[key])
            except (KeyError, TypeError):
                continue
    for kind, payload in iter_attrs(msg.data, start + _NLMSGHDR_LEN + _INET_DIAG_MSG_LEN, end):
        if kind == SYNCTCP_DIAG_ATTR:
            st.synctcp = decode_record(payload)
    return st


def open_diag_socket() -> Any:
    """A bound pyroute2 DiagSocket of the current network namespace."""
    try:
        from pyroute2 import DiagSocket
    except ImportError as exc:  # pragma: no cover - dependency missing
        raise DiagError("pyroute2 is not installed (make setup)") from exc
    ds = DiagSocket()
    ds.bind()
    return ds


#: Socket states worth reporting: the full sockets of a connection, ESTABLISHED
#: through CLOSING.  Not LISTEN, nor TIME_WAIT and CLOSE: a TIME_WAIT socket is a
#: mini-socket with no tcp_info or congestion control, and a busy web server has
#: thousands (60 s of its connections), which a sampler would dump for nothing.
TCP_STATES_CONNECTED = sum(1 << st for st in (1, 4, 5, 8, 9, 11))


def list_sockets(
    cc: Optional[List[str]] = None,
    families: Tuple[int, ...] = (socket.AF_INET, socket.AF_INET6),
    ds: Any = None,
    states: int = TCP_STATES_CONNECTED,
) -> List[SocketState]:
    """TCP sockets of a network namespace, optionally only those using ``cc``.

    ``ds`` is an open DiagSocket (its namespace is the one it was opened
    in); without it one is opened in the current namespace for this call.
    """
    ext = (1 << (INET_DIAG_INFO - 1)) | (1 << (INET_DIAG_VEGASINFO - 1)) | (1 << (INET_DIAG_CONG - 1))
    out: List[SocketState] = []
    own = ds is None
    try:
        if own:
            ds = open_diag_socket()
        for family in families:
            for msg in ds.get_sock_stats(family=family, states=states, extensions=ext):
                st = _parse_message(msg)
                if cc is None or st.cc in cc:
                    out.append(st)
    except OSError as exc:
        raise DiagError(f"inet_diag query failed: {exc}") from exc
    finally:
        if own and ds is not None:
            ds.close()
    return out
