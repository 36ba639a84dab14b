"""Every .cu kernel file compiles with the local nvcc for sm_90 (skipped where nvcc is missing)."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest

from cuzk.backends.cuda._source import KERNEL_DIR, kernel_files

NVCC = shutil.which("nvcc")


def _compile(files: list[Path], out_dir: Path, *flags: str) -> dict[str, str]:
    """Build each file to a cubin in parallel; the failures (a nonzero exit or a warning) by name."""
    procs = {
        f.name: subprocess.Popen(
            [
                *(NVCC or "nvcc", "-arch=sm_90", "-std=c++17", "--cubin", "-Xptxas", "-v", *flags),
                *("-I", str(KERNEL_DIR), "-o", str(out_dir / f"{f.stem}.cubin"), str(f)),
            ],
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            text=True,
        )
        for f in files
    }
    failures = {}
    for name, proc in procs.items():
        out, _ = proc.communicate(timeout=1200)
        if proc.returncode != 0 or "warning" in out.lower():
            failures[name] = out[-3000:]
    return failures


@pytest.mark.skipif(NVCC is None, reason="nvcc is not installed")
def test_every_kernel_file_compiles_for_sm90(tmp_path):
    files = kernel_files()
    assert {f.stem for f in files} >= {"fr", "ntt", "curve_g1", "curve_g2"}
    failures = _compile(files, tmp_path)
    assert not failures, failures
    assert all((tmp_path / f"{f.stem}.cubin").stat().st_size > 0 for f in files)


@pytest.mark.skipif(NVCC is None, reason="nvcc is not installed")
def test_fr_kernels_compile_with_the_folded_multiplier(tmp_path):
    # CUZK_OPAQUE_INV (field.cuh) is on by default; the folded build must stay clean for the A/B
    failures = _compile([KERNEL_DIR / "fr.cu", KERNEL_DIR / "ntt.cu"], tmp_path, "-DCUZK_OPAQUE_INV=0")
    assert not failures, failures
