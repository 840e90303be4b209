"""The error of a case that could not run."""


class RunError(RuntimeError):
    """A case could not be run; the message says why (one line)."""
