"""synctcp: user-space tools for the synctcp congestion-control modules."""

__version__ = "0.1.0"
