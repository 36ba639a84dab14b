"""mypy passes on all of src/ with the configuration in pyproject.toml ([tool.mypy]).

The test runs mypy as CI would and fails with its error lines when any file has an error.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

pytest.importorskip("mypy")

ROOT = Path(__file__).resolve().parents[1]


@pytest.mark.slow
def test_mypy_on_src() -> None:
    proc = subprocess.run(
        [sys.executable, "-m", "mypy", "--no-error-summary", "--no-pretty"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        check=False,
    )
    assert proc.returncode != 2, proc.stderr  # 2: mypy itself failed (bad configuration)
    assert proc.returncode == 0, "mypy errors on src/:\n" + proc.stdout
