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


def test_the_natural_order_baseline_gives_the_sorted_kernels_result() -> None:
    """The v36 baseline (rows in natural order) on the emulated kernel, on rows of uneven length."""
    import importlib.util

    import numpy as np
    from cuda_checks import random_csr

    from cuzk.algebra.fields import FR
    from cuzk.backends.cuda import CudaBackend
    from cuzk.backends.cuda._emulator import EmulatorRuntime

    spec = importlib.util.spec_from_file_location("replicated_products", SCRIPT)
    assert spec is not None and spec.loader is not None
    bench = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(bench)
    rng = np.random.default_rng(5)
    be = CudaBackend(runtime=EmulatorRuntime())
    m = random_csr(rng, 50, 20)
    cols, strides = np.arange(20, dtype=np.int64), np.full(20, 20, dtype=np.int64)
    w = FR.random(60, rng)
    want = np.zeros((150, 4), dtype=np.uint64)
    be.spmv_copies(m, w, cols, strides, 3, want)
    got = np.zeros_like(want)
    assert bench.natural_order_ms(be, m, w, cols, strides, 3, got, 1) >= 0
    assert np.array_equal(got, want) and want.any()


def test_a_circuit_that_is_not_replicated_is_refused_by_name() -> None:
    proc = subprocess.run([sys.executable, SCRIPT, "--circuit", "porep-tiny"],
                          capture_output=True, text=True, check=False, timeout=300)  # fmt: skip
    assert proc.returncode == 2 and "porep-tiny is not a replicated circuit" in proc.stderr
