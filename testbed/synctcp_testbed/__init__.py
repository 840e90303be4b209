"""synctcp_testbed: netns + netem experiments for the synctcp modules."""

__version__ = "0.1.0"
