#!/usr/bin/env python3
"""Regenerate the sample captures the docs use (deterministic: no randomness).

    python3 docs/samples/make-samples.py [OUTDIR]     (default: docs/samples)

* ``ts-sawtooth.pcap``: one bulk flow seen at its sender, RFC 7323 timestamps
  at 1000 Hz, a forward queue that fills for 0.4 s and drains (20 ms base
  OTT, up to +40 ms of queue), a loss at each queue peak.  For
  ``synctcp trace`` and ``synctcp correlate`` (docs/trace.md, docs/correlate.md).
* ``owts.pcap``: the same kind of flow with the one-way-timestamp option of
  tcp_option/ on every segment: 20 ms forward plus a 10 ms queue ramp, 5 ms
  reverse.  For ``synctcp owts`` (docs/owts-decoder.md).

The captures come from the synthetic flow generator of the unit tests
(tests/unit/pcapgen.py); tests/unit/test_docs_commands.py checks that the
shipped files are what this script writes.
"""

from __future__ import annotations

import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
sys.path[:0] = [str(REPO / "tests/unit"), str(REPO / "tools")]

from pcapgen import FlowSpec, simulate, write_capture  # noqa: E402

PERIOD = 0.5          # s: queue builds for 0.4 s, drains in 0.1 s


def sawtooth(t: float) -> float:
    phase = (t % PERIOD) / PERIOD
    q = 0.040 * (phase / 0.8 if phase < 0.8 else (1 - phase) / 0.2)
    return 0.020 + q


def ramp(t: float) -> float:
    return 0.020 + 0.010 * min(t, 0.5)


def samples() -> dict[str, tuple[FlowSpec, str]]:
    # a loss near each queue peak: segment sent at t = k*PERIOD + 0.39 s
    spec = FlowSpec(n_segs=2500, interval=0.001, fwd=sawtooth,
                    lost={round((k * PERIOD + 0.39 - 0.05) / 0.001) for k in range(5)})
    return {
        "ts-sawtooth.pcap": (spec, "ethernet"),
        "owts.pcap": (FlowSpec(n_segs=600, fwd=ramp, rev=lambda k, t: 0.005, owts=True), "ethernet"),
    }


def main(argv: list[str]) -> int:
    out = Path(argv[1]) if len(argv) > 1 else Path(__file__).resolve().parent
    out.mkdir(parents=True, exist_ok=True)
    for name, (spec, link) in samples().items():
        frames, _ = simulate(spec)
        write_capture(frames, out / name, link=link)
        print(f"{out / name}: {len(frames)} frames")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
