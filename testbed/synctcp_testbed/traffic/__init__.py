"""What a case sends: bulk and CBR flows (flowgen), web traffic (HTTP).

* :mod:`.flowgen`: every bulk and CBR flow of a case in one C process
  (``flowgen.c``, package data), its configuration and its result;
* :mod:`.http`: the PackMime-like web workload: size model, wire format,
  server and load generator (``python -m synctcp_testbed.traffic.http``);
* :mod:`.nginx`: nginx as the web server of the HTTP cases.
"""
