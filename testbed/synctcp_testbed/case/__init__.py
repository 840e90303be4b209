"""One case, start to finish, where it runs (this host, or inside an instance).

Topology up, samplers and servers started, every client released at once
from a start barrier, the samplers stopped, the figures collected, the
topology torn down.
"""
