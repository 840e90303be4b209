"""Egress stages of an emulated link: delay, rate limit and the queue.

Each interface's egress is built as up to three stages, outermost first::

    netem (delay/jitter/loss, limit far above any window)   handle 1:
      └─ htb (rate limit)                                    handle 2:, class 2:10
           └─ queue discipline (the bottleneck queue)        handle 10:

netem sits *before* the rate limiter: packets wait out their delay in
netem's time-sorted queue and then join the bottleneck queue, so netem's
own queue never drops or limits anything.  The bottleneck queue is the
leaf under the HTB class ``2:10`` (or under netem's class ``1:1`` when an
interface has a queue but no rate, which never builds a queue and is
only useful for tests).

Queue disciplines (``QueueSpec.kind``):

========== ================================================================
droptail   ``pfifo limit N``: drop-tail in packets
red        ``red``: Floyd/Jacobson RED, fixed thresholds, drops
red-ecn    the same, marking ECN-capable packets instead of dropping them
ared       ``red adaptive``: Adaptive RED (Floyd, Gummadi, Shenker 2001)
ared-ecn   Adaptive RED with ECN marking
fq_codel   ``fq_codel``, ECN off (drops)
pie        ``pie``, ECN off
pie-ecn    ``pie ecn``
dualpi2    ``dualpi2``: the DualQ Coupled AQM of L4S (RFC 9332, Linux 6.17+):
           an L queue with an ECN step at ``step_ms`` (1 ms) for the
           packets its classifier picks (``l4s_classify``: ``l4s_ect``,
           ECT(1) and CE as RFC 9332 says; ``any_ect``, ECT(0) too, for
           DCTCP), a classic queue under PI2 (``classic_target_ms``, 15 ms),
           coupled; senders use ECN.  Added over netlink (:mod:`.tcnl`):
           the pinned ``tc`` predates it
cake       ``cake unlimited besteffort``: CAKE's flow queueing and COBALT
           AQM (its defaults: 5 ms target, 100 ms interval) under the
           link's HTB rate; senders without ECN (CAKE drops)
cake-ecn   the same with ECN-capable senders (CAKE marks)
========== ================================================================

Differences of Linux ``tc red`` from the papers' RED are documented in
``docs/testbed.md`` (no gentle mode: above max_th every packet is dropped
or marked; thresholds are in bytes; the average is updated at enqueue
only; ARED adapts max_p every 500 ms between 1% and 50%).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Dict, List, Optional, Sequence

#: kinds the image's tc (iproute2 6.1) cannot configure: :mod:`.tcnl` adds
#: them over netlink (not imported here: a run without one never loads it)
NETLINK_KINDS = ("dualpi2",)

#: queue kinds and whether they mark ECN (so senders must enable it)
AQMS: Dict[str, bool] = {
    "droptail": False, "red": False, "red-ecn": True, "ared": False, "ared-ecn": True,
    "fq_codel": False, "pie": False, "pie-ecn": True, "dualpi2": True, "cake": False,
    "cake-ecn": True,
}
#: queue kinds that not every supported kernel has: the first Linux with each
KERNEL_QDISCS: Dict[str, tuple] = {"dualpi2": (6, 17)}
#: DualPI2's L4S classifiers: the ECN codepoints whose packets go to its L queue
L4S_CLASSIFIERS = ("l4s_ect", "any_ect")
#: bytes of skb memory (truesize) per packet of CAKE's memlimit, whose
#: limit is in memory: a 1500-byte packet's buffer takes up to 4 KiB
CAKE_PKT_MEMORY = 4096
#: bytes per packet the RED byte thresholds are computed with
AVPKT = 1500
#: netem's own limit: never the bottleneck
NETEM_LIMIT = 100000
#: handles of the stages (see the module docstring)
NETEM_HANDLE, HTB_HANDLE, LEAF_HANDLE = "1:", "2:", "10:"
HTB_CLASS = "2:10"


class QdiscError(ValueError):
    """A queue or link specification that cannot be built."""


@dataclass
class QueueSpec:
    """The bottleneck queue: its discipline and its limit in packets.

    RED parameters are in packets; ``None`` picks the papers' defaults:
    RED min/max 5/15 packets, max_p 10%; w_q is not settable in Linux:
    tc derives it from ``burst``, which we set to tc's recommended
    (2 min_th + max_th) / 3 packets;
    Adaptive RED derives min_th from ``target_ms`` as in Floyd et al.
    (min_th = max(5, target * C / 2), max_th = 3 min_th).
    """

    kind: str = "droptail"
    limit_pkts: int = 100
    min_pkts: Optional[float] = None
    max_pkts: Optional[float] = None
    max_p: float = 0.10
    target_ms: float = 5.0
    #: packet size (bytes) for RED's byte thresholds: the path MTU
    avpkt: int = AVPKT
    #: DualPI2: its L queue's ECN step threshold, its classic queue's PI2
    #: target, its coupling factor and which ECN codepoints it classifies L4S
    step_ms: float = 1.0
    classic_target_ms: float = 15.0
    coupling: int = 2
    l4s_classify: str = "l4s_ect"
    extra: List[str] = field(default_factory=list)

    def validate(self) -> None:
        if self.kind not in AQMS:
            raise QdiscError(f"unknown queue kind {self.kind!r}; one of {', '.join(AQMS)}")
        if not 1 <= self.limit_pkts <= 1_000_000:
            raise QdiscError(f"queue limit {self.limit_pkts} out of range 1..1000000 packets")
        if not 0 < self.max_p <= 1:
            raise QdiscError("RED max_p must be in (0, 1]")
        if not 0 < self.target_ms <= 10000:
            raise QdiscError("target_ms must be in (0, 10000]")
        if not 0 < self.step_ms <= 10000 or not 0 < self.classic_target_ms <= 10000:
            raise QdiscError("DualPI2's step and classic target must be in (0, 10000] ms")
        if not 1 <= self.coupling <= 255:
            raise QdiscError(f"DualPI2's coupling factor {self.coupling} out of range 1..255")
        if self.l4s_classify not in L4S_CLASSIFIERS:
            raise QdiscError(f"DualPI2 classifier {self.l4s_classify!r}: one of "
                             f"{', '.join(L4S_CLASSIFIERS)}")

    @property
    def ecn(self) -> bool:
        return AQMS[self.kind]

    def red_thresholds(self, rate_mbit: float) -> tuple[float, float]:
        """(min_th, max_th) in packets."""
        if self.kind.startswith("ared") and self.min_pkts is None:
            pkts_per_s = rate_mbit * 1e6 / 8 / self.avpkt
            lo = max(5.0, self.target_ms / 1e3 * pkts_per_s / 2)
            hi = 3 * lo
        else:
            lo = 5.0 if self.min_pkts is None else self.min_pkts
            hi = 3 * lo if self.max_pkts is None else self.max_pkts
        if not 0 < lo < hi:
            raise QdiscError(f"RED thresholds must satisfy 0 < min ({lo}) < max ({hi})")
        if hi > self.limit_pkts:
            raise QdiscError(f"RED max threshold {hi:g} exceeds the queue limit {self.limit_pkts}")
        return lo, hi

    def tc_args(self, rate_mbit: float) -> List[str]:
        """The leaf qdisc's tc arguments after ``qdisc add dev D parent P handle H``."""
        self.validate()
        k = self.kind
        if k == "droptail":
            args = ["pfifo", "limit", str(self.limit_pkts)]
        elif k.startswith(("red", "ared")):
            lo, hi = self.red_thresholds(rate_mbit)
            # tc derives w_q from burst; tc-red(8) recommends this burst
            burst = max(1, math.ceil((2 * lo + hi) / 3))
            pk = self.avpkt
            args = ["red", "limit", str(self.limit_pkts * pk),
                    "min", str(int(lo * pk)), "max", str(int(hi * pk)),
                    "avpkt", str(pk), "burst", str(burst),
                    "probability", f"{self.max_p:g}", "bandwidth", f"{rate_mbit:g}mbit"]
            if k.startswith("ared"):
                args.append("adaptive")
            if self.ecn:
                args += ["ecn", "harddrop"]
        elif k == "fq_codel":
            args = ["fq_codel", "limit", str(self.limit_pkts), "noecn"]
        elif k == "dualpi2":
            # tc-dualpi2(8)'s words (.tcnl parses them)
            args = ["dualpi2", "limit", str(self.limit_pkts),
                    "target", f"{self.classic_target_ms * 1000:.0f}us",
                    "step_thresh", f"{self.step_ms * 1000:.0f}us",
                    "coupling_factor", str(self.coupling), self.l4s_classify]
        elif k.startswith("cake"):
            args = ["cake", "unlimited", "besteffort",
                    "memlimit", str(self.limit_pkts * CAKE_PKT_MEMORY)]
        else:
            args = ["pie", "limit", str(self.limit_pkts),
                    "target", f"{self.target_ms:g}ms", "ecn" if self.ecn else "noecn"]
        return args + list(self.extra)


@dataclass
class Egress:
    """What one interface does to the packets it sends."""

    rate_mbit: Optional[float] = None
    queue: Optional[QueueSpec] = None
    delay_ms: float = 0.0
    jitter_ms: float = 0.0
    loss_pct: float = 0.0
    #: bytes added to each packet's length where the rate is counted (a tc
    #: size table, ``stab overhead N``, on the egress's root qdisc): -14
    #: counts IP bytes, as ns-2's links do, instead of Ethernet frames
    size_overhead: int = 0

    def validate(self) -> None:
        if self.rate_mbit is not None and not 0.01 <= self.rate_mbit <= 100000:
            raise QdiscError(f"rate {self.rate_mbit} Mbit/s out of range 0.01..100000")
        if not -64 <= self.size_overhead <= 256:
            raise QdiscError(f"size overhead {self.size_overhead} bytes out of range -64..256")
        if self.size_overhead and self.rate_mbit is None:
            raise QdiscError("a size overhead needs a rate: it changes only how the rate counts")
        if not 0 <= self.delay_ms <= 60000 or not 0 <= self.jitter_ms <= self.delay_ms + 1e-9:
            raise QdiscError("delay must be 0..60000 ms and jitter 0..delay")
        if not 0 <= self.loss_pct <= 100:
            raise QdiscError("loss must be 0..100 %")
        if self.queue is not None:
            self.queue.validate()
            if self.queue.kind.startswith(("red", "ared")):
                self.queue.red_thresholds(self.rate_mbit or 10000.0)

    @property
    def has_netem(self) -> bool:
        return self.delay_ms > 0 or self.loss_pct > 0

    def leaf_parent(self) -> Optional[str]:
        """The tc parent of the bottleneck queue (what a sampler watches)."""
        if self.rate_mbit is not None:
            return HTB_CLASS
        if self.queue is not None:
            return "1:1" if self.has_netem else "root"
        return None

    def tc_commands(self, dev: str) -> List[List[str]]:
        """``tc`` argument lists (without the leading ``tc``) that build this egress;
        a qdisc of :data:`.tcnl.KINDS` (:func:`via_netlink`) is added by
        :mod:`.tcnl` with the same words instead."""
        self.validate()
        cmds: List[List[str]] = []
        parent = ["root"]
        # the size table sits on the root qdisc: the kernel sizes each packet
        # once, on entry to the root, and every qdisc below (HTB's rate, the
        # queue's byte counts) sees that size
        stab = ["stab", "overhead", str(self.size_overhead)] if self.size_overhead else []
        if self.has_netem:
            netem = ["netem", "limit", str(NETEM_LIMIT)]
            if self.delay_ms > 0:
                netem += ["delay", f"{self.delay_ms:g}ms"]
                if self.jitter_ms > 0:
                    netem += [f"{self.jitter_ms:g}ms", "distribution", "normal"]
            if self.loss_pct > 0:
                netem += ["loss", f"{self.loss_pct:g}%"]
            cmds.append(["qdisc", "add", "dev", dev, "root", "handle", NETEM_HANDLE, *stab,
                         *netem])
            parent, stab = ["parent", "1:1"], []
        if self.rate_mbit is not None:
            rate = f"{self.rate_mbit:g}mbit"
            cmds.append(["qdisc", "add", "dev", dev, *parent, "handle", HTB_HANDLE, *stab, "htb",
                         "default", "10"])
            cmds.append(["class", "add", "dev", dev, "parent", HTB_HANDLE, "classid", HTB_CLASS,
                         "htb", "rate", rate, "ceil", rate])
            parent = ["parent", HTB_CLASS]
        if self.queue is not None:
            cmds.append(["qdisc", "add", "dev", dev, *parent, "handle", LEAF_HANDLE,
                         *self.queue.tc_args(self.rate_mbit or 10000.0)])
        return cmds


def via_netlink(cmd: Sequence[str]) -> bool:
    """Whether a ``tc_commands`` line adds a qdisc that :mod:`.tcnl` adds (not ``tc``)."""
    return cmd[:2] == ["qdisc", "add"] and any(k in cmd for k in NETLINK_KINDS)
