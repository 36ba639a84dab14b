"""A short run of every fuzz target (fuzz/run.py): no input may escape the error tree, crash or hang.

The full run (100,000 inputs per decoder) is `python fuzz/run.py`; its figures
are in docs/RELIABILITY.md. This smoke keeps every decoder and its seeds
working in CI.
"""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "fuzz"))

from run import run_target
from targets import targets

SMOKE_INPUTS = 150
TARGETS = {t.name: t for t in targets()}


@pytest.mark.parametrize("name", sorted(TARGETS))
def test_no_input_escapes_the_error_tree(name: str, tmp_path: Path) -> None:
    row = run_target(TARGETS[name], SMOKE_INPUTS, seed=20261202, hang_s=30.0, out=tmp_path)
    found = (tmp_path / f"{name}.json").read_text()[:3000] if row["bugs"] else ""
    assert row["bugs"] == 0, found
    assert row["decoded"] >= 1  # the seeds themselves decode
    assert row["refused"] >= SMOKE_INPUTS // 4  # mutations really reach the checks
