"""benchmarks/gpu.py on the host emulator: its ntt and msm1 sections (the precomputed-bases rows
included) run end to end and their own checks pass, so the tool the device run depends on is
not first found broken on the device."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from cuzk.backends.cuda._emulator import host_compiler

pytestmark = pytest.mark.skipif(host_compiler() is None, reason="the CUDA emulator needs a C++ compiler")

ROOT = Path(__file__).resolve().parents[2]


def test_the_emulated_benchmark_runs_and_checks(tmp_path: Path) -> None:
    proc = subprocess.run(
        [sys.executable, str(ROOT / "benchmarks" / "gpu.py"), "--emulate", "--out", str(tmp_path),
         "--skip", "checks,rate,msm2,spmv,tune", "--h-copies", "2", "--h-windows", "5,7",
         "--beside-staging", "--h-chunk-caps", "6", "--h-accumulate-l", "4,64"],
        capture_output=True, text=True, check=False, timeout=600,
    )  # fmt: skip
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    results = json.loads((tmp_path / "results.json").read_text())
    assert all(c["ok"] for c in results["checks"].values()), results["checks"]
    kinds = {t["kind"] for t in results["timings"]}
    assert {"ntt", "msm_g1", "msm_g1_precomputed", "msm_g1_glv", "msm_g1_glv_plain", "msm_g1_split"} <= kinds
    split = [t for t in results["timings"] if t["kind"] == "msm_g1_split"]
    assert {t["mix"] for t in split} == {"witness", "30% full", "all full"}
    assert all(t["same_as_plain"] for t in split)
    assert any(k.endswith("witness vs discrete logs") for k in results["checks"])
    pre = [t for t in results["timings"] if t["kind"] == "msm_g1_precomputed"]
    assert all(t["same_as_plain"] and t["copies"] > 1 and t["extra_gib"] >= 0 for t in pre)
    h_rows = [t for t in results["timings"] if t["kind"] in ("msm_g1_h_copies", "msm_g1_h_window")]
    assert {t["kind"] for t in h_rows} == {"msm_g1_h_copies", "msm_g1_h_window"}
    assert sorted(t["window"] for t in h_rows if t["kind"] == "msm_g1_h_window") == [5, 7]
    assert all(t["same_as_plain"] for t in h_rows)
    caps = [t for t in results["timings"] if t["kind"] == "msm_g1_h_chunk_cap"]
    assert [t["chunk_cap"] for t in caps] == [6] and caps[0]["chunks"] > 1 and caps[0]["same_as_plain"]
    acc = [t for t in results["timings"] if t["kind"] == "msm_g1_h_accumulate_l"]
    assert [t["accumulate_l"] for t in acc] == [4, 64] and all(t["same_as_plain"] for t in acc)
    beside = [t for t in results["timings"] if t["kind"] == "msm_g1_beside_staging"]
    assert [t["staging"] for t in beside] == ["none", "pageable", "pinned"]
    glv = [t for t in results["timings"] if t["kind"] == "msm_g1_glv"]
    assert glv and all(t["same_as_plain"] and t["extra_gib"] >= 0 for t in glv)
