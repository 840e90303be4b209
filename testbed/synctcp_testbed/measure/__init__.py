"""What a case samples while it runs.

* ``qsampler.c`` (package data, compiled by :mod:`synctcp_testbed.platform.helpers`):
  the bottleneck queues at >= 100 Hz, one CSV per link;
* :mod:`.sampler`: the senders' sockets over inet_diag, one JSON line per
  sample (``python -m synctcp_testbed.measure.sampler``).
"""
