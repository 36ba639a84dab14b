"""benchmarks/replicated_products.py end to end on the CPU: both paths give the same a, b, c
(its exit status says so), so the device run it is made for does not find it broken."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
SCRIPT = str(ROOT / "benchmarks" / "replicated_products.py")


def test_both_paths_agree_on_a_replicated_circuit() -> None:
    proc = subprocess.run([sys.executable, SCRIPT, "--circuit", "winning-32g", "--runs", "1"],
                          capture_output=True, text=True, check=False, timeout=600)  # fmt: skip
    assert proc.returncode == 0, proc.stdout[-2000:] + proc.stderr[-2000:]
    assert "same a, b, c: True" in proc.stdout
    assert [line.split(":")[0] for line in proc.stdout.splitlines()[-3:]] == ["A", "B", "C"]


def test_a_circuit_that_is_not_replicated_is_refused_by_name() -> None:
    proc = subprocess.run([sys.executable, SCRIPT, "--circuit", "porep-tiny"],
                          capture_output=True, text=True, check=False, timeout=300)  # fmt: skip
    assert proc.returncode == 2 and "porep-tiny is not a replicated circuit" in proc.stderr
