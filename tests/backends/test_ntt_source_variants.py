"""The NTT kernel's source variants (kernels/ntt.cuh's CUZK_NTT_SWIZZLE and CUZK_NTT_FUSED_LAST,
the product's and the entry points' edits), as benchmarks/gpu.py builds them for its same-run
A/Bs, against the CPU backend on the host emulator: every variant the device times must compute
the same NTT."""

from __future__ import annotations

import importlib.util
from pathlib import Path

import cuda_checks as K
import pytest

from cuzk.backends.cuda import CudaBackend, _emulator
from cuzk.backends.cuda import ntt as cuda_ntt
from cuzk.backends.cuda._emulator import EmulatorRuntime, host_compiler
from cuzk.backends.cuda._source import module_source

pytestmark = pytest.mark.skipif(host_compiler() is None, reason="the CUDA emulator needs a C++ compiler")

ROOT = Path(__file__).resolve().parents[2]


def _bench() -> object:
    spec = importlib.util.spec_from_file_location("cuzk_bench_gpu", ROOT / "benchmarks" / "gpu.py")
    assert spec is not None and spec.loader is not None
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


BENCH = _bench()
NTT_VARIANTS = sorted(
    name for name, edits in BENCH.SOURCE_VARIANTS.items() if BENCH.edited_source("ntt", edits) is not None
)


def test_every_source_variant_applies():
    # an edit that stopped matching would make its A/B time the default under another name
    for name, edits in BENCH.SOURCE_VARIANTS.items():
        assert any(BENCH.edited_source(m, edits) is not None for m in ("fr", "ntt")), name
    assert {"swizzle-shifts", "unfused-last", "v22-layout"} <= set(NTT_VARIANTS)


@pytest.mark.parametrize("name", NTT_VARIANTS)
def test_ntt_source_variant_matches_cpu(name, rng, monkeypatch, tmp_path):
    edited = BENCH.edited_source("ntt", BENCH.SOURCE_VARIANTS[name])
    monkeypatch.setattr(
        _emulator, "module_source", lambda module: edited if module == "ntt" else module_source(module)
    )
    be = CudaBackend(runtime=EmulatorRuntime(cache_dir=tmp_path))
    # one and two passes on the large and small tiles, odd and even pass sizes (the fused store
    # applies to odd ones), radix-4 and radix-2 networks
    K.check_ntt(be, rng, [1, 2, 3, 9, 11, 12, 13])


@pytest.mark.parametrize("swizzle_max_log", [0, 6, 99])
def test_ntt_tile_layout_per_pass(swizzle_max_log, rng, monkeypatch):
    # every pass contiguous, the small passes swizzled and the large not, every pass swizzled
    monkeypatch.setattr(cuda_ntt, "SWIZZLE_MAX_LOG", swizzle_max_log)
    K.check_ntt(CudaBackend(runtime=EmulatorRuntime()), rng, [9, 11, 12, 13])
