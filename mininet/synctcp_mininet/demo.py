"""``make demo MININET=1``: the demo's two parts on Mininet.

The same comparison as :mod:`synctcp_testbed.demo`, by the same code, on
the runner's Mininet backend (each algorithm gets a freshly built Mininet
network and the testbed's measurements):

1. Delay-based: reno, cubic, sync and mixreact, each alone (3 bulk flows)
   through one dumbbell: 20 Mbit/s, 40 ms base RTT, 100-packet drop-tail.
2. Small buffer: etcp, reno and cubic, one flow each: 50 Mbit/s, 100 ms,
   a 20-packet drop-tail buffer (``--no-small-buffer`` skips it).

Prints a table per part and writes a run directory per part (``delay/``,
``small-buffer/``: summary.json/.csv, samples, report.html), the queue
plots and the demo's summary.json/.csv into ``--out``.

    python -m synctcp_mininet.demo --out results/demo-mininet [--seconds 10]
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Optional, Sequence

from synctcp_testbed import demo

OUT = Path("results/demo-mininet")


def main(argv: Optional[Sequence[str]] = None) -> int:
    return demo.main(argv, backend="mininet", prog="synctcp_mininet.demo", out=OUT,
                     description=__doc__)


if __name__ == "__main__":
    sys.exit(main())
