"""Web-like HTTP/1.0 workload, in the spirit of PackMime (Weigle 2003, App. A;
docs/http-workload.md): one TCP connection per request/response pair,
heavy-tailed request and response sizes, connection arrivals at a rate
calibrated to an offered load in % of the bottleneck capacity, and one
timing row per response.

* :mod:`.model`: the size distributions, the load calibration and the
  arrival plan (what a client will ask for, from its seed);
* :mod:`.wire`: HTTP/1.0 heads, built and parsed;
* :mod:`.sockets`: congestion control and open-files limit of the sockets;
* :mod:`.server`, :mod:`.client`: the asyncio server and load generator;
* :mod:`.records`: the row the client writes per response (``http.csv``);
* :mod:`.cli`: ``python -m synctcp_testbed.traffic.http server|client|metrics``.

The response-time metrics are :mod:`synctcp_testbed.analysis.http`.
"""
