"""The emulated network of a case: topologies, queue disciplines, backends.

* :mod:`.qdisc`: a link's egress stages (delay, rate, queue) as tc
  commands; the queue disciplines (AQMs) a scenario can name;
* :mod:`.topology`: namespaces joined by veth pairs, and the seed papers'
  shapes (dumbbell, parking lot, chain);
* :mod:`.backends`: who builds a case's topology (``netns`` here,
  ``mininet`` from :mod:`synctcp_mininet`).
"""
