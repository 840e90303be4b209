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

import argparse
import sys
from typing import Optional, Sequence

from synctcp_testbed import cli as testbed_cli

DESCRIPTION = ("The testbed's scenarios on Mininet: the same as 'synctcp-testbed ... "
               "--backend mininet'. The scenario files, cases, traffic, samplers, metrics, "
               "run directory and report are the testbed's; only the topology is built by "
               "Mininet (docs/mininet.md).")


def build_parser() -> argparse.ArgumentParser:
    """The testbed's parser as ``synctcp-mininet``: ``run --backend`` defaults to mininet."""
    return testbed_cli.build_parser(prog="synctcp-mininet", backend="mininet",
                                    description=DESCRIPTION)


def main(argv: Optional[Sequence[str]] = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    parser = build_parser()
    if not argv:
        parser.print_help()
        return 0
    parser.parse_args(argv)     # --help and usage errors as synctcp-mininet
    if argv[:1] == ["run"] and not any(a == "--backend" or a.startswith("--backend=")
                                       for a in argv):
        argv += ["--backend", "mininet"]
    return testbed_cli.main(argv, prog="synctcp-mininet")


if __name__ == "__main__":
    sys.exit(main())
