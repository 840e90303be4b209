"""Queue disciplines that the ``tc`` of the instances cannot configure, over netlink.

The user space the testbed runs on (Debian 12's iproute2 6.1, pinned in the
UML image) predates DualPI2 (Linux 6.17, tc-dualpi2(8) in iproute2 6.17):
its ``tc`` adds a ``dualpi2`` qdisc only with the kernel's defaults and
refuses every option.  This module adds one itself, with the options of
tc-dualpi2(8) in the same words, as one RTM_NEWQDISC request::

    python3 -m synctcp_testbed.network.tcnl [-n NETNS] qdisc add dev DEV \\
        parent PARENT handle HANDLE dualpi2 [limit PACKETS] [target TIME] ...

so that a topology's script (``topology.sh`` of a case) stays a script
that replays by hand.  :func:`dualpi2_attrs` parses the options,
:func:`newqdisc_request` builds the message (both pure: unit-tested
without a kernel), :func:`add_qdisc` sends it and reads the kernel's
answer; an error is one line naming the option or the kernel's reason.
"""

from __future__ import annotations

import ctypes
import errno
import os
import re
import socket
import struct
import sys
from typing import Dict, List, Optional, Sequence, Tuple

from .qdisc import NETLINK_KINDS

#: the qdiscs this module adds (``Egress.tc_commands`` lines of these kinds
#: are run through it, not through ``tc -batch``)
KINDS = NETLINK_KINDS

# netlink and rtnetlink constants (linux/netlink.h, linux/rtnetlink.h)
NETLINK_ROUTE = 0
NLM_F_REQUEST, NLM_F_ACK, NLM_F_EXCL, NLM_F_CREATE = 0x1, 0x4, 0x200, 0x400
NLMSG_ERROR = 2
RTM_NEWQDISC = 36
TCA_KIND, TCA_OPTIONS = 1, 2
NLA_F_NESTED = 0x8000
TC_H_ROOT = 0xFFFFFFFF
CLONE_NEWNET = 0x40000000     # linux/sched.h

# TCA_DUALPI2_* (linux/pkt_sched.h, Linux 6.17+) and each one's C type
DUALPI2_ATTRS: Dict[str, Tuple[int, str]] = {
    "limit": (1, "I"), "memlimit": (2, "I"), "target": (3, "I"), "tupdate": (4, "I"),
    "alpha": (5, "I"), "beta": (6, "I"), "step_pkts": (7, "I"), "step_us": (8, "I"),
    "min_qlen_step": (9, "I"), "coupling_factor": (10, "B"), "drop_overload": (11, "B"),
    "drop_early": (12, "B"), "classic_protection": (13, "B"), "ecn_mask": (14, "B"),
    "split_gso": (15, "B"),
}
#: flag words of tc-dualpi2(8): the attribute each sets and its value
DUALPI2_FLAGS: Dict[str, Tuple[str, int]] = {
    "drop_on_overload": ("drop_overload", 1), "overflow": ("drop_overload", 0),
    "drop_enqueue": ("drop_early", 1), "drop_dequeue": ("drop_early", 0),
    "l4s_ect": ("ecn_mask", 1), "cla_ect": ("ecn_mask", 2), "any_ect": ("ecn_mask", 3),
    "split_gso": ("split_gso", 1), "no_split_gso": ("split_gso", 0),
}
#: the kernel's range of alpha and beta (Hz, scaled by 256 on the wire)
ALPHA_BETA_MAX = 60.0

USAGE = ("usage: python3 -m synctcp_testbed.network.tcnl [-n NETNS] qdisc add dev DEV "
         "parent PARENT handle HANDLE dualpi2 [OPTION...]")


class TcnlError(ValueError):
    """A request this module cannot make, or one the kernel refused (one line)."""


def parse_time_us(word: str, what: str) -> int:
    """A tc time (``15ms``, ``1000us``, ``0.5s``; a bare number is µs) in microseconds."""
    m = re.fullmatch(r"(\d+(?:\.\d+)?)(s|sec|ms|msec|us|usec)?", word)
    if not m:
        raise TcnlError(f"dualpi2 {what}: {word!r} is not a time (e.g. 15ms, 1000us)")
    scale = {"s": 1e6, "sec": 1e6, "ms": 1e3, "msec": 1e3, "us": 1, "usec": 1, None: 1}
    value = float(m.group(1)) * scale[m.group(2)]
    if not 0 <= value <= 0xFFFFFFFF:
        raise TcnlError(f"dualpi2 {what}: {word} is out of range")
    return int(round(value))


def parse_uint(word: str, what: str, lo: int, hi: int) -> int:
    """A whole number from ``lo`` to ``hi``."""
    if not word.isdigit() or not lo <= int(word) <= hi:
        raise TcnlError(f"dualpi2 {what}: {word!r} is not a whole number from {lo} to {hi}")
    return int(word)


def dualpi2_attrs(args: Sequence[str]) -> Dict[str, int]:
    """The TCA_DUALPI2_* values of tc-dualpi2(8) options, by attribute name."""
    out: Dict[str, int] = {}
    words = list(args)
    i = 0
    while i < len(words):
        w = words[i]
        if w in DUALPI2_FLAGS:
            name, value = DUALPI2_FLAGS[w]
            out[name] = value
            i += 1
            continue
        if i + 1 >= len(words):
            raise TcnlError(f"dualpi2 {w}: a value must follow"
                            if w in _VALUED else f"dualpi2: unknown option {w!r}")
        v = words[i + 1]
        if w == "limit":
            out["limit"] = parse_uint(v, w, 1, 0xFFFFFFFF)
        elif w == "memlimit":
            out["memlimit"] = parse_uint(v, w, 1, 0xFFFFFFFF)
        elif w in ("target", "tupdate"):
            out[w] = parse_time_us(v, w)
            if w == "tupdate" and out[w] < 1:
                raise TcnlError("dualpi2 tupdate: must be above 0")
        elif w in ("alpha", "beta"):
            try:
                f = float(v)
            except ValueError:
                f = -1.0
            if not 0 <= f <= ALPHA_BETA_MAX:
                raise TcnlError(f"dualpi2 {w}: {v!r} is not a number from 0 to "
                                f"{ALPHA_BETA_MAX:g} (Hz)")
            out[w] = int(round(f * 256))
        elif w == "step_thresh":
            if v.endswith("packets") or v.endswith("pkts"):
                out["step_pkts"] = parse_uint(re.sub(r"(packets|pkts)$", "", v), w, 0,
                                              0xFFFFFFFF)
                out.pop("step_us", None)
            else:
                out["step_us"] = parse_time_us(v, w)
                out.pop("step_pkts", None)
        elif w == "min_qlen_step":
            out["min_qlen_step"] = parse_uint(v, w, 0, 0xFFFFFFFF)
        elif w == "coupling_factor":
            out["coupling_factor"] = parse_uint(v, w, 1, 255)
        elif w == "classic_protection":
            out["classic_protection"] = parse_uint(v, w, 0, 100)
        else:
            raise TcnlError(f"dualpi2: unknown option {w!r}")
        i += 2
    return out


_VALUED = ("limit", "memlimit", "target", "tupdate", "alpha", "beta", "step_thresh",
           "min_qlen_step", "coupling_factor", "classic_protection")


def parse_handle(word: str, what: str) -> int:
    """A tc handle or parent: ``root``, ``MAJ:``, ``MAJ:MIN`` (hex)."""
    if word == "root":
        return TC_H_ROOT
    m = re.fullmatch(r"([0-9a-fA-F]{1,4}):([0-9a-fA-F]{0,4})", word)
    if not m:
        raise TcnlError(f"{what} {word!r}: want MAJOR:MINOR in hex, or root")
    return (int(m.group(1), 16) << 16) | int(m.group(2) or "0", 16)


def _attr(kind: int, payload: bytes) -> bytes:
    length = 4 + len(payload)
    return struct.pack("=HH", length, kind) + payload + b"\0" * (-length % 4)


def newqdisc_request(ifindex: int, parent: int, handle: int, kind: str,
                     attrs: Dict[str, int], seq: int = 1) -> bytes:
    """The RTM_NEWQDISC message (create, exclusive, acknowledged) for a dualpi2."""
    if kind not in KINDS:
        raise TcnlError(f"qdisc kind {kind!r}: this module adds only {', '.join(KINDS)}")
    opts = b"".join(_attr(DUALPI2_ATTRS[name][0],
                          struct.pack("=" + DUALPI2_ATTRS[name][1], value))
                    for name, value in sorted(attrs.items(),
                                              key=lambda kv: DUALPI2_ATTRS[kv[0]][0]))
    body = (struct.pack("=BxxxiIII", socket.AF_UNSPEC, ifindex, handle, parent, 0)
            + _attr(TCA_KIND, kind.encode() + b"\0")
            + _attr(TCA_OPTIONS | NLA_F_NESTED, opts))
    flags = NLM_F_REQUEST | NLM_F_ACK | NLM_F_CREATE | NLM_F_EXCL
    return struct.pack("=IHHII", 16 + len(body), RTM_NEWQDISC, flags, seq, 0) + body


def parse_command(argv: Sequence[str]) -> Tuple[Optional[str], str, int, int, str, List[str]]:
    """``[-n NS] qdisc add dev D parent P handle H KIND OPTS...`` as
    (netns, dev, parent, handle, kind, options)."""
    words = list(argv)
    ns = None
    if words[:1] == ["-n"]:
        if len(words) < 2:
            raise TcnlError(USAGE)
        ns, words = words[1], words[2:]
    if words[:2] != ["qdisc", "add"] or len(words) < 9:
        raise TcnlError(USAGE)
    keys = {words[i]: words[i + 1] for i in (2, 4, 6)}
    if sorted(keys) != ["dev", "handle", "parent"]:
        raise TcnlError(USAGE)
    kind = words[8]
    if kind not in KINDS:
        raise TcnlError(f"qdisc kind {kind!r}: this module adds only {', '.join(KINDS)}")
    return (ns, keys["dev"], parse_handle(keys["parent"], "parent"),
            parse_handle(keys["handle"], "handle"), kind, words[9:])


def _enter_netns(name: str) -> None:
    path = f"/var/run/netns/{name}"
    try:
        fd = os.open(path, os.O_RDONLY)
    except OSError as exc:
        raise TcnlError(f"netns {name}: {exc.strerror}") from None
    try:
        if hasattr(os, "setns"):
            os.setns(fd, os.CLONE_NEWNET)
        else:       # Python < 3.12 (the image's bookworm 3.11): libc's setns(2)
            libc = ctypes.CDLL(None, use_errno=True)
            if libc.setns(fd, CLONE_NEWNET) != 0:
                err = ctypes.get_errno()
                raise TcnlError(f"netns {name}: {os.strerror(err)}")
    finally:
        os.close(fd)


def add_qdisc(dev: str, parent: int, handle: int, kind: str, attrs: Dict[str, int],
              netns: Optional[str] = None) -> None:
    """Send the request (in ``netns`` if given) and raise TcnlError if the kernel refuses."""
    if netns:
        _enter_netns(netns)
    try:
        ifindex = socket.if_nametoindex(dev)
    except OSError:
        raise TcnlError(f"no device {dev}" + (f" in netns {netns}" if netns else "")) from None
    msg = newqdisc_request(ifindex, parent, handle, kind, attrs)
    with socket.socket(socket.AF_NETLINK, socket.SOCK_RAW, NETLINK_ROUTE) as sk:
        sk.bind((0, 0))
        sk.send(msg)
        reply = sk.recv(65536)
    if len(reply) < 20:
        raise TcnlError(f"{kind} on {dev}: a short answer from the kernel")
    mtype = struct.unpack_from("=H", reply, 4)[0]
    err = struct.unpack_from("=i", reply, 16)[0] if mtype == NLMSG_ERROR else 0
    if err:
        why = os.strerror(-err)
        if -err == errno.ENOENT:
            why += f" (no parent {parent >> 16:x}:{parent & 0xFFFF:x}?)"
        elif -err in (errno.EINVAL, errno.EOPNOTSUPP) and kind == "dualpi2":
            why += " (this kernel has no dualpi2: Linux 6.17+, CONFIG_NET_SCH_DUALPI2)"
        raise TcnlError(f"{kind} on {dev}: the kernel refused it: {why}")


def main(argv: Optional[Sequence[str]] = None) -> int:
    args = list(sys.argv[1:] if argv is None else argv)
    try:
        ns, dev, parent, handle, kind, opts = parse_command(args)
        add_qdisc(dev, parent, handle, kind, dualpi2_attrs(opts), ns)
    except TcnlError as exc:
        print(f"tcnl: {exc}", file=sys.stderr)
        return 2 if str(exc) == USAGE else 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
