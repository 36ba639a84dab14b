"""The session's count of proofs daemons returned to the tests, valid and invalid (RELIABILITY.md row 6)."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from cuzk import config


@pytest.fixture
def cache(tmp_path: Path) -> Iterator[Path]:
    """A fresh parameter cache for one test's daemon, also this process's (verify() reads it)."""
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("CUZK_CACHE_DIR", str(tmp_path / "cache"))
        config.reload()
        yield tmp_path / "cache"
    config.reload()


def pytest_terminal_summary(terminalreporter: Any) -> None:
    import sys

    helper = sys.modules.get("daemon_proc")
    if helper is not None and helper.PROOFS:
        terminalreporter.write_line(
            f"daemon proofs verified: {helper.PROOFS['valid']} valid, {helper.PROOFS['invalid']} invalid"
        )
