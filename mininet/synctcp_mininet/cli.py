"""``synctcp-mininet``: the testbed's scenarios on Mininet.

    synctcp-mininet list                              the testbed's presets
    synctcp-mininet show holl-geo                     a scenario and its cases
    synctcp-mininet run gu-smallbuffer --cc etcp,reno --duration 20
    synctcp-mininet run my.toml --aqm droptail,red-ecn --out results/my-mn
    synctcp-mininet report RUNDIR

The same as ``synctcp-testbed ... --backend mininet``: the same scenario
files, cases, traffic, samplers, metrics, run directory and report; only
the topology is built by Mininet (docs/mininet.md).  Like the testbed it
runs itself inside the VM of ``make test`` where this host cannot load
modules.
"""

from __future__ import annotations

import sys
from typing import Optional, Sequence

from synctcp_testbed import cli as testbed_cli


def main(argv: Optional[Sequence[str]] = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    if argv[:1] == ["run"] and "--backend" not in argv:
        argv += ["--backend", "mininet"]
    if not argv or argv[0] in ("-h", "--help"):
        print(__doc__)
        return 0
    return testbed_cli.main(argv)


if __name__ == "__main__":
    sys.exit(main())
