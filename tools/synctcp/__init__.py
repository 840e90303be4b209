"""synctcp: user-space tools for the synctcp congestion-control modules."""

__version__ = "0.2.0"
