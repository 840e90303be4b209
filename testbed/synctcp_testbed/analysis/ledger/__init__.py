"""``synctcp-testbed ledger RUNDIR...``: the seeds' claims against our runs.

Writes ``docs/results.md`` (``--out``): one section per claim of the seed
papers, with the paper's own figures, ours from the run directories given
(mean and 95% confidence interval over the seeds, with the platform, kernel
and commit they came from), the checks that decide the verdict and the
verdicts, per algorithm and for the claim: **holds** (every check passes),
**fails** (one fails), **undecided** (none fails, one could not be decided)
or **not measured** (no run directory of the claim was given).  A check
passes only when the whole 95% interval is past its bound, and is decided
only from runs of the same build (:mod:`.builds`).  Runs are named by their
directories; two runs holding the same case and seed are refused.  The plots it cites go to
``--figures`` (default: ``results/`` next to the output).

Each run directory belongs to the claim its scenario's name starts with
(``weigle-ftp``, ``weigle-http``, ``gu-``, ``holl``, ``martin``,
``reverse-path``); several directories of one claim are read together (e.g.
``gu-etcp-full`` and ``gu-etcp-1g``).  The checks are the rules written in
each claim's section; every figure is computed from ``summary.json``, so
the file can be regenerated from the same directories at any time.

The package's parts: :mod:`.model` (checks, sections, verdicts),
:mod:`.builds` (what produced a run's figures), :mod:`.cases` (the figures
of a claim's cases and how a check compares them), one module per seed paper with its claims' evaluation
(:mod:`.weigle`, :mod:`.gu`, :mod:`.holl`, :mod:`.martin`,
:mod:`.reverse`), :mod:`.claims` (the list of claims and the runs each
one reads), :mod:`.plots` and :mod:`.markdown` (the file), :mod:`.cli`.
A new claim is a function ``evaluate(section, figures_dir)`` in its paper's
module and an entry of :data:`.claims.CLAIMS`.
"""

from .claims import CLAIMS, build
from .cli import main
from .model import FAILS, HOLDS, UNDECIDED, UNMEASURED, Check, Claim, LedgerError, Section

__all__ = ["CLAIMS", "Check", "Claim", "FAILS", "HOLDS", "LedgerError", "Section", "UNDECIDED",
           "UNMEASURED", "build", "main"]
