"""From a run directory to figures, tables, plots, reports and the ledger.

* :mod:`.rundir`: the one reader of each file of a run directory;
* :mod:`.metrics`: each metric of a case, one function with its definition;
* :mod:`.stats`: repetitions (mean, 95% interval) and ratios to a reference;
* :mod:`.report`: summary.csv, plots and report.html;
* :mod:`.ledger`: the seed papers' claims against run directories.
"""
