"""``synctcp-testbed ledger RUNDIR...``: write docs/results.md and print each verdict."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Optional, Sequence

from .claims import build
from .markdown import render
from .model import LedgerError

def main(argv: Optional[Sequence[str]] = None) -> int:
    ap = argparse.ArgumentParser(prog="synctcp-testbed ledger",
                                 description="The seeds' claims against our runs.")
    ap.add_argument("rundirs", nargs="+", type=Path, metavar="RUNDIR")
    ap.add_argument("--out", type=Path, default=Path("docs/results.md"))
    ap.add_argument("--figures", type=Path, help="directory of the plots (default: results/ "
                    "next to --out)")
    args = ap.parse_args(argv)
    figs = args.figures or args.out.parent / "results"
    try:
        sections = build(args.rundirs, figs)
    except LedgerError as exc:
        print(f"ledger: {exc}", file=sys.stderr)
        return 2
    command = "synctcp-testbed ledger " + " ".join(str(d) for d in args.rundirs)
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(render(sections, args.out, command))
    for s in sections:
        per = "; ".join(f"{a or 'the claim'} {v}" for a, v, _ in s.verdicts())
        print(f"{s.title}: {s.verdict}" + (f" ({per})" if per else ""))
    print(args.out)
    return 0
