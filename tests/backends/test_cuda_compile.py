"""Every .cu kernel file compiles with the local nvcc for sm_90 (skipped where nvcc is missing)."""

from __future__ import annotations

import shutil
import subprocess

import pytest

from cuzk.backends.cuda._source import KERNEL_DIR, kernel_files

NVCC = shutil.which("nvcc")


@pytest.mark.skipif(NVCC is None, reason="nvcc is not installed")
def test_every_kernel_file_compiles_for_sm90(tmp_path):
    files = kernel_files()
    assert {f.stem for f in files} >= {"fr", "ntt", "curve_g1", "curve_g2"}
    procs = {
        f.name: subprocess.Popen(
            [
                NVCC,
                "-arch=sm_90",
                "-std=c++17",
                "--cubin",
                "-Xptxas",
                "-v",
                "-I",
                str(KERNEL_DIR),
                "-o",
                str(tmp_path / f"{f.stem}.cubin"),
                str(f),
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
    assert not failures, failures
    assert all((tmp_path / f"{f.stem}.cubin").stat().st_size > 0 for f in files)


@pytest.mark.skipif(NVCC is None, reason="nvcc is not installed")
def test_fr_kernels_compile_with_the_opaque_multiplier(tmp_path):
    # CUZK_OPAQUE_INV (field.cuh) is off by default; its build must stay clean for the A/B
    for f in ("fr.cu", "ntt.cu"):
        out = subprocess.run(
            [
                NVCC,
                "-arch=sm_90",
                "-std=c++17",
                "--cubin",
                "-DCUZK_OPAQUE_INV=1",
                "-I",
                str(KERNEL_DIR),
                "-o",
                str(tmp_path / f"{f}.cubin"),
                str(KERNEL_DIR / f),
            ],
            capture_output=True,
            text=True,
            timeout=1200,
            check=False,
        )
        assert out.returncode == 0 and "warning" not in (out.stdout + out.stderr).lower(), out.stderr[-3000:]
