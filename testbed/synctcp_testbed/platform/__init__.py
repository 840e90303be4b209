"""Where a run's cases execute, and the run itself.

* :mod:`.choose`: the platform of a run (native, uml, kvm, tcg);
* :mod:`.executor`: the cases on that platform (here, UML instances, a VM);
* :mod:`.cluster`: UML instances as tasks of a Dask cluster or Slurm jobs;
* :mod:`.worker`: the part of a run inside an instance;
* :mod:`.helpers`: the C helpers, compiled on first use.
"""
