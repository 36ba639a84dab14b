"""The session's count of proofs daemons returned to the tests, valid and invalid (RELIABILITY.md row 6)."""

from __future__ import annotations

from typing import Any


def pytest_terminal_summary(terminalreporter: Any) -> None:
    import sys

    helper = sys.modules.get("daemon_proc")
    if helper is not None and helper.PROOFS:
        terminalreporter.write_line(
            f"daemon proofs verified: {helper.PROOFS['valid']} valid, {helper.PROOFS['invalid']} invalid"
        )
