"""Scenarios: what a run compares, as TOML files a researcher can diff.

* :mod:`.model`: the typed model (topology, queues, traffic, sweep) and its
  expansion into cases;
* :mod:`.keys`: each key's range and unit, and the one-line error for a
  value outside it;
* :mod:`.files`: scenario files and the presets (package data, ``presets/``).

The names below are the package's public API.
"""

from .files import bulk_dumbbell, from_dict, load, presets, updated
from .model import (HTTP_SERVERS, KINDS, MSS_BYTES, RATE_COUNTS, SEED_MAX, SWEEPABLE, VARIANTS,
                    AqmSpec, Case, CbrSpec, Scenario, ScenarioError, TopologySpec, TrafficSpec)

__all__ = ["AqmSpec", "Case", "CbrSpec", "HTTP_SERVERS", "KINDS", "MSS_BYTES", "RATE_COUNTS",
           "SEED_MAX", "SWEEPABLE", "Scenario", "ScenarioError", "TopologySpec", "TrafficSpec",
           "VARIANTS", "bulk_dumbbell", "from_dict", "load", "presets", "updated"]
