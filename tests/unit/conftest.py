"""Shared hooks of the host tests."""

from __future__ import annotations

import pytest


def pytest_terminal_summary(terminalreporter: pytest.TerminalReporter) -> None:
    """Where the documented commands ran (tests/unit/test_docs_commands.py)."""
    ran = [r for rs in terminalreporter.stats.values() for r in rs
           if getattr(r, "nodeid", "").startswith("tests/unit/test_docs_commands.py")]
    if ran:
        from test_docs_commands import summary
        terminalreporter.write_line(summary())
