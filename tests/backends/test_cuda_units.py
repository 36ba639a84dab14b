"""Pure-Python parts of the CUDA backend: plans, window choice, budgets, sources, constants."""

from __future__ import annotations

import re

import numpy as np
import pytest

from cuzk.algebra import constants as C
from cuzk.algebra.curves import G1
from cuzk.backends.cuda import _source
from cuzk.backends.cuda import msm as M
from cuzk.backends.cuda import ntt as N
from cuzk.backends.cuda._runtime import device_budget
from cuzk.errors import UsageError


@pytest.mark.parametrize("log_n", range(0, 29))
def test_ntt_plan_covers_the_size_within_the_tile(log_n):
    logs = N.plan_passes(log_n)
    assert sum(logs) == log_n and all(k <= N.MAX_PASS_LOG for k in logs)
    assert len(logs) == (1 if log_n <= 11 else 2 if log_n < N.THREE_PASS_LOG else 3)
    geo = N.pass_geometry(log_n)
    for p, g in enumerate(geo):
        assert g.log_N + g.log_T <= N.TILE_LOG
        assert g.blocks << (g.log_N + g.log_T) == 1 << log_n  # every element in exactly one tile
        if p < len(geo) - 1:
            assert g.log_T <= g.log_S - g.log_N  # columns of one block share a sub-problem
        assert g.shared == 32 << (g.log_N + g.log_T) <= 64 * 1024


def test_ntt_small_passes_get_small_tiles():
    # measured on the H200 (GPU_NOTES v12): 2^9 tiles of 128 threads for passes of <= 2^9 points
    assert [(g.log_N, g.log_T, g.threads, g.shared) for g in N.pass_geometry(24)] == [(8, 1, 128, 16384)] * 3
    assert [(g.log_N, g.log_T, g.threads) for g in N.pass_geometry(27)] == [(9, 0, 64)] * 3
    # three passes from 2^19 (GPU_NOTES v13), all on small tiles
    assert [(g.log_N, g.log_T, g.threads) for g in N.pass_geometry(22)] == [
        (8, 1, 128),
        (7, 2, 128),
        (7, 2, 128),
    ]
    # 2^20's fixed plan: the small pass first (GPU_NOTES v22)
    assert [(g.log_N, g.log_T, g.threads) for g in N.pass_geometry(20)] == [
        (6, 3, 128),
        (7, 2, 128),
        (7, 2, 128),
    ]
    assert [(g.log_N, g.log_T, g.threads, g.shared) for g in N.pass_geometry(18)] == [(9, 0, 64, 16384)] * 2
    assert [(g.log_N, g.log_T, g.threads, g.shared) for g in N.pass_geometry(11)] == [(11, 0, 256, 65536)]


@pytest.mark.parametrize("log_n", [3, 9, 14, 17])
def test_ntt_product_model_counts_the_kernels_twiddles(log_n, monkeypatch):
    """products_per_element against a count of the products the kernel's index math performs:
    a radix-2 butterfly multiplies unless its offset j is 0, an inter-pass twiddle unless
    i2 k1 = 0, with one more product where the pass reads the two-level table."""
    monkeypatch.setattr(N, "FULL_TABLE_LOG", 12)  # 2^14 and 2^17 exercise both tables
    count = 0
    for g in N.pass_geometry(log_n):
        blocks_per_dft = 1 << (log_n - g.log_N)
        for log_h in range(g.log_N):
            count += blocks_per_dft * sum(1 for beta in range(1 << (g.log_N - 1)) if beta % (1 << log_h))
        if g.log_S != g.log_N:
            m = 1 << (g.log_S - g.log_N)
            nonzero = sum(1 for i2 in range(m) for k1 in range(1 << g.log_N) if i2 * k1)
            count += (1 << (log_n - g.log_S)) * nonzero * (1 if g.log_S <= N.FULL_TABLE_LOG else 2)
    assert N.products_per_element(log_n) * (1 << log_n) == pytest.approx(count)


def test_full_table_bytes_follow_the_toggle(monkeypatch):
    monkeypatch.setattr(N, "FULL_TABLE_LOG", 24)
    assert N.full_table_bytes(24) == 32 * ((1 << 24) + (1 << 16))  # passes 8 + 8 + 8
    monkeypatch.setattr(N, "FULL_TABLE_LOG", 20)
    assert N.full_table_bytes(24) == 32 << 16
    assert N.full_table_bytes(11) == 0  # one pass: no inter-pass twiddles


def test_ntt_plan_rejects_oversize():
    with pytest.raises(ValueError):
        N.plan_passes(4 * N.MAX_PASS_LOG + 1)


def test_ntt_fixed_plan_is_checked(monkeypatch):
    monkeypatch.setattr(N, "PLANS", {20: (7, 7, 6), 21: (7, 7), 22: (12, 10)})
    assert N.plan_passes(20) == (7, 7, 6)
    for log_n in (21, 22):
        with pytest.raises(ValueError, match="plan"):
            N.plan_passes(log_n)


def test_window_choice_grows_with_n_and_stays_in_range():
    ws = [M.default_window(1 << k) for k in range(4, 27)]
    assert ws == sorted(ws) and ws[0] >= 4 and ws[-1] <= 22
    assert M.default_window(1 << 24) >= 16  # large windows pay at scale


def test_plan_windows_cover_the_scalar():
    for c in range(2, 25):
        w = M.windows_for(c)
        assert (w - 1) * c <= 255  # the top window starts inside the scalar
        assert w * c >= 256  # room for the top window's carry
    plan = M.make_plan(1 << 20, window=18, chunks=2)
    assert plan.c == 18 and plan.windows == 15 and plan.buckets == 1 << 17
    assert [hi - lo for lo, hi in plan.chunks] == [1 << 19, 1 << 19]
    assert plan.buckets % plan.seg == 0
    with pytest.raises(ValueError, match="window"):
        M.make_plan(100, window=30)


def test_span_pieces_cover_each_run_in_order():
    starts = np.array([5, 100, 300])
    lens = np.array([1, 70, 32])
    lo, hi, pieces = M.span_pieces(starts, lens, 32)
    assert pieces.tolist() == [1, 3, 1]
    assert list(zip(lo.tolist(), hi.tolist(), strict=True)) == [
        (5, 6),
        (100, 132),
        (132, 164),
        (164, 170),
        (300, 332),
    ]


def test_plan_chunks_only_host_scalars_at_scale():
    dev, host = M.make_plan(1 << 24), M.make_plan(1 << 24, host_scalars=True)
    assert len(dev.chunks) == 1 and len(host.chunks) > 1  # chunking hides uploads, costs merges
    assert len(M.make_plan(1 << 14, host_scalars=True).chunks) == 1
    assert M.make_plan(1 << 24, window=18, chunks=3).c == 18
    for k in range(4, 27):
        c, chunks = M.choose(1 << k, host_scalars=True)
        assert 4 <= c <= 22 and chunks in M.CHUNK_CHOICES


def test_chunk_count():
    assert M.chunk_count(1000) == 1
    assert M.chunk_count(1 << 22) == 2
    assert M.chunk_count(1 << 26) == 4


def test_the_measured_window_plans_the_h_msm_at_real_size():
    """2^27 over device scalars: window 20 measured 0.937 of the model's 22 (H200, 2026-12-06);
    host scalars and other sizes keep the model's plans."""
    for n in ((1 << 27) - 1, 1 << 27, (1 << 26) + 1):
        assert M.choose(n, host_scalars=False) == (20, 1)
    assert M.choose((1 << 27) - 1, host_scalars=True) == (20, 8)
    assert M.choose(1 << 26, host_scalars=False) == min(
        ((c, 1) for c in range(4, 23)), key=lambda ck: M.msm_cost(1 << 26, ck[0], 1)
    )


def test_chunks_hold_at_most_max_chunk_points():
    """One chunk of device scalars where it fits MAX_CHUNK points; porep-32g's 2^27 H MSM in
    one chunk needed ~31 GB of scratch and did not fit beside its set on an 80 GB card (H100,
    2026-12-07), so it comes in 4; a request for fewer, larger chunks is cut to the cap too."""
    n = (1 << 27) - 1
    assert len(M.make_plan(1 << 25, 20, host_scalars=False).chunks) == 1
    assert len(M.make_plan(n, 20, host_scalars=False).chunks) == 4
    assert len(M.make_plan(n, 20, host_scalars=True).chunks) == 4
    assert len(M.make_plan(n, 20, 8, host_scalars=False).chunks) == 8
    assert all(hi - lo <= M.MAX_CHUNK for lo, hi in M.make_plan(n, 20, 2).chunks)


def test_the_chunk_cap_is_the_backends_setting_and_its_model_follows_it():
    """msm.chunk_cap: on a card with the room (the H200 beside the real set) the 2^27 H MSM may
    run in one chunk; the plan, and the scratch the engine's memory model asks the backend for,
    follow the setting; a cap outside 20..28 is refused when the backend is made."""
    from cuzk.backends.cuda import CudaBackend
    from cuzk.backends.cuda._emulator import EmulatorRuntime
    from cuzk.toggles import parse_settings

    n = (1 << 27) - 1
    assert len(M.make_plan(n, 20, max_chunk=1 << 27).chunks) == 1
    assert len(M.make_plan(n, 20, max_chunk=1 << 24).chunks) == 8
    wide = CudaBackend(runtime=EmulatorRuntime(), msm_chunk_cap=27)
    default = CudaBackend(runtime=EmulatorRuntime())
    assert default.msm_max_chunk == M.MAX_CHUNK and wide.msm_max_chunk == 1 << 27
    assert wide.msm_scratch_bytes(n) > 25 * 10**9 > 15 * 10**9 > default.msm_scratch_bytes(n)
    with pytest.raises(ValueError, match=r"20\.\.28"):
        CudaBackend(runtime=EmulatorRuntime(), msm_chunk_cap=29)
    assert parse_settings(["msm.chunk_cap=27"]) == {"msm.chunk_cap": 27}
    for bad in ("19", "29"):  # refused where the setting is read, with the range
        with pytest.raises(UsageError, match=r"msm\.chunk_cap.*20\.\.28"):
            parse_settings([f"msm.chunk_cap={bad}"])


def test_the_largest_msm_scratch_is_bounded_by_its_chunks():
    """The 2^27 H MSM's scratch (what `pippenger` reserves) near 10 GB in chunks, ~31 GB in one."""
    from dataclasses import replace

    plan = M.make_plan((1 << 27) - 1)
    words = M.xyzz_words(G1)
    assert M.scratch_bytes(plan, words) < 10e9 < 30e9 < M.scratch_bytes(replace(plan, chunk=plan.n), words)


@pytest.mark.parametrize(
    ("text", "value"),
    [
        ("80GiB", 80 << 30),
        ("512MiB", 512 << 20),
        ("4096", 4096),
        ("2gb", 2 * 10**9),
        (None, None),
        ("", None),
    ],
)
def test_device_budget(text, value):
    assert device_budget(text) == value


@pytest.mark.parametrize("text", ["lots", "-1G", "0", "80G", "1.5TiB"])
def test_device_budget_rejects(text):
    with pytest.raises(UsageError):
        device_budget(text)


def test_module_sources_inline_each_header_once():
    for name in _source.MODULES:
        src = _source.module_source(name)
        assert '#include "' not in src and "#pragma once" not in src
        assert src.count("// ---- field.cuh") == 1
    with pytest.raises(KeyError):
        _source.module_source("nope")


def _header_words(name: str) -> int:
    text = (_source.KERNEL_DIR / "field.cuh").read_text()
    block = re.search(name + r"\[\d+\] = \{([^}]*)\}", text).group(1)
    words = [int(w.strip().rstrip("u"), 16) for w in block.split(",")]
    return sum(w << (32 * i) for i, w in enumerate(words))


def test_field_constants_match_constants_py():
    text = (_source.KERNEL_DIR / "field.cuh").read_text()
    blocks = re.findall(r"constexpr uint32_t (\w)\[(\d+)\] = \{([^}]*)\}", text)
    values = [
        (kind, sum(int(w.strip().rstrip("u"), 16) << (32 * i) for i, w in enumerate(b.split(","))))
        for kind, _, b in blocks
    ]
    assert values == [
        ("P", C.R),
        ("O", (1 << 256) % C.R),
        ("P", C.Q),
        ("O", (1 << 384) % C.Q),
    ]
    invs = [int(v, 16) for v in re.findall(r"INV = 0x([0-9a-f]+)u", text)]
    assert invs == [(-pow(C.R, -1, 1 << 32)) % (1 << 32), (-pow(C.Q, -1, 1 << 32)) % (1 << 32)]
