"""The CUDA backend's kernels and orchestration against the CPU backend, on the host emulator.

The emulator builds the very .cu sources as host C++ (sequential, PTX carries emulated), so
these tests run in CI without a GPU; tests/backends/test_cuda_gpu.py runs the same checks on a
device.
"""

from __future__ import annotations

import cuda_checks as K
import numpy as np
import pytest

from cuzk.algebra import constants as C
from cuzk.algebra.curves import G1
from cuzk.algebra.fields import FR
from cuzk.backends.cuda import CudaBackend
from cuzk.backends.cuda import msm as cuda_msm
from cuzk.backends.cuda import ntt as cuda_ntt
from cuzk.backends.cuda._emulator import EmulatorRuntime, host_compiler
from cuzk.backends.cuda.spmv import rows_longest_first
from cuzk.errors import BackendError, DeviceMemoryError
from cuzk.toggles import FULL_COPIES

pytestmark = pytest.mark.skipif(host_compiler() is None, reason="the CUDA emulator needs a C++ compiler")


@pytest.fixture(scope="module")
def be() -> CudaBackend:
    return CudaBackend(runtime=EmulatorRuntime())


def test_fr_ops(be, rng):
    K.check_fr_ops(be, rng)


def test_base_fields(be, rng):
    K.check_base_fields(be, rng)


def test_ntt_one_and_two_passes(be, rng):
    K.check_ntt(be, rng, [0, 1, 2, 5, 11, 12, 14])


def test_ntt_three_passes(be, rng, monkeypatch):
    # shrink the pass and tile limits so the 3-pass plan (used from 2^23 up) runs at small sizes
    monkeypatch.setattr(cuda_ntt, "MAX_PASS_LOG", 3)
    monkeypatch.setattr(cuda_ntt, "TILE_LOG", 4)
    fresh = CudaBackend(runtime=be.rt)
    assert len(cuda_ntt.plan_passes(8)) == 3
    K.check_ntt(fresh, rng, [7, 8, 9])


def test_ntt_four_passes(be, rng, monkeypatch):
    monkeypatch.setattr(cuda_ntt, "MAX_PASS_LOG", 3)
    assert cuda_ntt.plan_passes(11) == (3, 3, 3, 2)
    with pytest.raises(ValueError, match="beyond"):
        cuda_ntt.plan_passes(13)
    K.check_ntt(CudaBackend(runtime=be.rt), rng, [10, 11])
    monkeypatch.setattr(cuda_ntt, "FULL_TABLE_LOG", 0)  # the two-level table in every pass
    K.check_ntt(CudaBackend(runtime=be.rt), rng, [11])


def test_ntt_fixed_uneven_plans(be, rng, monkeypatch):
    # PLANS: uneven and small-first splits, on small and large tiles
    monkeypatch.setattr(cuda_ntt, "SMALL_PASS_LOG", 4)
    monkeypatch.setattr(cuda_ntt, "SMALL_THREADS", 4)
    monkeypatch.setattr(cuda_ntt, "PLANS", {10: (2, 5, 3), 12: (6, 6), 13: (3, 10)})
    assert [g.log_N for g in cuda_ntt.pass_geometry(10)] == [2, 5, 3]
    K.check_ntt(CudaBackend(runtime=be.rt), rng, [10, 12, 13])


def test_ntt_radix2_entry_point(be, rng, monkeypatch):
    # ntt_pass_r2: the radix-2 network under the four-block register cap (a device variant)
    monkeypatch.setattr(cuda_ntt, "KERNEL", "ntt_pass_r2")
    monkeypatch.setattr(cuda_ntt, "RADIX4", False)
    K.check_ntt(CudaBackend(runtime=be.rt), rng, [5, 11, 12, 14])


def test_ntt_two_level_twiddles(be, rng, monkeypatch):
    monkeypatch.setattr(cuda_ntt, "FULL_TABLE_LOG", 0)  # every pass through the two-level table
    K.check_ntt(CudaBackend(runtime=be.rt), rng, [12, 13])


def test_ntt_tile_smaller_than_a_pass(be, rng, monkeypatch):
    # TILE_LOG below MAX_PASS_LOG: passes up to the tile share blocks among columns, larger
    # passes get one column per block
    monkeypatch.setattr(cuda_ntt, "TILE_LOG", 9)
    monkeypatch.setattr(cuda_ntt, "THREADS", 128)
    monkeypatch.setattr(cuda_ntt, "THREE_PASS_LOG", 99)  # two passes of 2^11 and 2^10 at 2^21
    assert [(g.log_N, g.log_T, g.threads) for g in cuda_ntt.pass_geometry(21)] == [(11, 0, 128), (10, 0, 128)]
    assert [(g.log_N, g.log_T) for g in cuda_ntt.pass_geometry(16)] == [(8, 1), (8, 1)]
    K.check_ntt(CudaBackend(runtime=be.rt), rng, [9, 10, 11, 13, 16])


def test_ntt_small_passes_on_the_large_tile(be, rng, monkeypatch):
    # the geometry before small tiles (SMALL_PASS_LOG = 0): every pass on 2^11 tiles, 256 threads
    monkeypatch.setattr(cuda_ntt, "SMALL_PASS_LOG", 0)
    assert cuda_ntt.pass_geometry(14)[0].threads == 256
    K.check_ntt(CudaBackend(runtime=be.rt), rng, [12, 14])


def test_ntt_pass_buffer_is_shared_safely_between_threads(be, rng, monkeypatch):
    # small transforms keep their between-pass buffer with the tables; concurrent callers take
    # turns queueing their passes, so none reads another's half-done data
    import threading

    log_n = 12
    w = C.root_of_unity(log_n)
    xs = [FR.random(1 << log_n, rng) for _ in range(4)]
    refs = [K.CPU.ntt(x, w) for x in xs]
    fresh = CudaBackend(runtime=be.rt)
    errors: list[str] = []

    def work(k: int) -> None:
        for _ in range(6):
            if not np.array_equal(K.host(fresh, fresh.ntt(fresh.to_device(xs[k]), w)), refs[k]):
                errors.append(f"thread {k}")

    threads = [threading.Thread(target=work, args=(k,)) for k in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors
    assert fresh._ntt.tables(w, log_n).scratch is not None
    monkeypatch.setattr(cuda_ntt, "SCRATCH_MAX_LOG", 0)  # off: a buffer per call, same results
    off = CudaBackend(runtime=be.rt)
    assert np.array_equal(K.host(off, off.ntt(off.to_device(xs[0]), w)), refs[0])
    assert off._ntt.tables(w, log_n).scratch is None


def test_ntt_rejects_bad_input(be):
    with pytest.raises(ValueError, match="power of two"):
        be.ntt(FR.zeros(3), 1)
    with pytest.raises(ValueError, match="primitive"):
        be.ntt(FR.zeros(4), 1)
    with pytest.raises(ValueError, match="shape"):
        be.ntt(np.zeros((4, 3), np.uint64), 1)


def test_msm_g1(be, rng):
    K.check_msm(be, rng, "g1", 300, windows=(None, 5), chunks=(None, 3))


def test_msm_g2(be, rng):
    K.check_msm(be, rng, "g2", 64)


def test_msm_skewed_scalars_take_the_tree_merge(be, rng, monkeypatch):
    monkeypatch.setattr(be, "msm_split", False)  # the plain Pippenger's path: the split sums ones apart
    calls = []
    real = cuda_msm._merge_big
    monkeypatch.setattr(cuda_msm, "_merge_big", lambda *a: (calls.append(a[2].index.size), real(*a))[1])
    K.check_msm_skewed(be, rng, 4500)
    assert calls  # the 2250 ones share one bucket: more than BIG_ENTRIES
    monkeypatch.setattr(cuda_msm, "BIG_ENTRIES", 40)  # many big buckets, several tree levels
    calls.clear()
    K.check_msm_skewed(be, rng, 3000)
    assert calls and max(calls) > 10


def test_big_buckets_cost_no_second_host_wait_per_chunk(be, rng, monkeypatch):
    # A second wait, for the chunk's accumulate before its big buckets' merge, held the next
    # chunk's upload back (window 19 at 2^26 on the H200: 856 ms against 633 for window 20).
    monkeypatch.setattr(cuda_msm, "BIG_ENTRIES", 40)
    monkeypatch.setattr(be, "msm_chunks", 3)
    monkeypatch.setattr(be, "msm_split", False)  # the plain Pippenger's waits (the split adds the ones' sum)
    waits = []
    real = be.rt.to_host
    monkeypatch.setattr(be.rt, "to_host", lambda a: (waits.append(1), real(a))[1])
    merged = []
    real_merge = cuda_msm._merge_big
    monkeypatch.setattr(cuda_msm, "_merge_big", lambda *a: (merged.append(1), real_merge(*a))[1])
    K.check_msm_skewed(be, rng, 3000)
    assert len(merged) == 3  # every chunk had big buckets
    assert len(waits) == 3 + 1  # one wait per chunk, one for the window sums


def test_msm_precomputed(be, rng):
    K.check_msm_precomputed(be, rng, "g1", 300)


def test_msm_precomputed_g2(be, rng):
    K.check_msm_precomputed(be, rng, "g2", 40, copies=(3,))


def test_precompute_rejects_bad_requests(be, rng):
    pts = G1.random(50, rng)
    bases = be.load_bases(pts, "g1")
    with pytest.raises(ValueError, match="at least 1"):
        be.precompute(bases, 0)
    with pytest.raises(TypeError, match="not loaded by this"):
        CudaBackend(runtime=be.rt).precompute(bases, 2)
    with pytest.raises(ValueError, match="window"):
        cuda_msm.make_plan(50, None, copies=2, stride=50)
    with pytest.raises(ValueError, match="does not fit"):
        cuda_msm.make_plan(50, 5, copies=2, stride=40)
    be.release(bases)
    with pytest.raises(ValueError, match="released"):
        be.precompute(bases, 2)


def test_precompute_over_budget_changes_nothing(rng):
    small = CudaBackend(runtime=EmulatorRuntime(memory_budget=332_000))
    pts = G1.random(100, rng)
    bases = small.load_bases(pts, "g1")  # 9600 bytes; the MSM scratch fits, 31 copies more do not
    assert small.precompute_cost(100, "g1", FULL_COPIES) > 250_000
    with pytest.raises(DeviceMemoryError, match="precomputed copies"):
        small.precompute(bases, FULL_COPIES)
    assert bases.table is None and bases.copies == 1
    assert small.memory_info()["resident"] == bases.nbytes
    assert small.precompute(bases, 2) == bases.nbytes  # one copy more fits
    s = FR.random(100, rng)
    assert G1.eq(small.msm(bases, s)[None], K.CPU.msm(K.CPU.load_bases(pts, "g1"), s)[None])[0]


def test_precompute_shape_follows_the_cost_model():
    # the windows share bucket sets, so the window grows with the copies, and rows stay 31-bit
    plain = cuda_msm.choose(1 << 24, True)[0]
    c, m = cuda_msm.precompute_shape(1 << 24, FULL_COPIES)
    assert m == cuda_msm.windows_for(c) and c > plain
    assert cuda_msm.precompute_shape(1 << 24, 1)[1] == 1
    c2, m2 = cuda_msm.precompute_shape(1 << 24, 2)
    assert m2 == 2 and c2 >= plain
    big = cuda_msm.precompute_shape(1 << 28, FULL_COPIES)
    assert big[1] * (1 << 28) < cuda_msm.MAX_TABLE_ROWS


def test_sum_bases(be, rng):
    K.check_sum_bases(be, rng, "g1", 500)
    K.check_sum_bases(be, rng, "g2", 100)


def test_fixed_base(be, rng):
    K.check_fixed_base(be, rng, "g1", 40)
    K.check_fixed_base(be, rng, "g2", 12)


def test_spmv(be, rng):
    K.check_spmv(be, rng, 300, 200)


def test_rows_go_longest_first_with_ties_in_row_order() -> None:
    indptr = np.array([0, 2, 2, 7, 9, 14, 15], dtype=np.int64)  # lengths 2 0 5 2 5 1
    order = rows_longest_first(np, indptr)
    assert order.dtype == np.int32 and order.tolist() == [2, 4, 0, 3, 5, 1]
    long = np.array([0, 3, 3 + 40000, 40005], dtype=np.int64)  # a row past int16's range
    assert rows_longest_first(np, long).tolist() == [1, 0, 2]  # lengths 3, 40000, 2


def test_spmv_copies(be, rng):
    K.check_spmv_copies(be, rng, 300, 200, 3)


def test_spmv_rejects_wrong_width(be, rng):
    m = K.random_csr(rng, 10, 8)
    with pytest.raises(BackendError, match="8 columns"):
        be.spmv(m, FR.zeros(9))


def test_bases_are_checked(be, rng):
    pts = G1.random(8, rng)
    bases = be.load_bases(pts, "g1")
    with pytest.raises(ValueError, match="out of range"):
        be.msm(bases, FR.zeros(9))
    with pytest.raises(TypeError, match="not loaded by this"):
        CudaBackend(runtime=be.rt).msm(bases, FR.zeros(2))
    with pytest.raises(ValueError, match="unknown group"):
        be.load_bases(pts, "g3")


def test_memory_budget(rng):
    small = CudaBackend(runtime=EmulatorRuntime(memory_budget=10_000))
    small.load_bases(G1.random(40, rng), "g1")  # 3840 bytes fit
    with pytest.raises(DeviceMemoryError, match="budget"):
        small.load_bases(G1.random(80, rng), "g1")


@pytest.mark.slow
def test_groth16_proof_through_the_cuda_backend_verifies(be):
    """Setup and proving of porep-tiny on the (emulated) CUDA backend; the proof verifies and a
    tampered proof or a corrupted witness is rejected."""
    from cuzk.circuits import get_circuit
    from cuzk.errors import UnsatisfiedError
    from cuzk.groth16 import generate_parameters, make_resident, prove, verify
    from cuzk.groth16.proof import Proof

    circuit = get_circuit("porep-tiny")
    topo = circuit.topology()
    srs = make_resident(generate_parameters(topo, be), topo, be)
    inst = circuit.random_instance(seed=4)
    res = prove(srs, [circuit.witness(inst)])
    proof, public = res.proofs[0], res.public_inputs[0]
    assert verify(srs.vk, public, proof)
    tampered = Proof(a=proof.a, b=proof.b, c=G1.neg(proof.c))
    assert not verify(srs.vk, public, tampered)
    with pytest.raises(UnsatisfiedError):
        prove(srs, [circuit.witness(circuit.corrupt(inst))])


def test_glv_split_on_the_device_equals_the_reference(be, rng):
    K.check_glv_split(be, rng, 40)


def test_msm_glv(be, rng):
    K.check_msm_glv(be, rng, 300)


def test_scalar_classes_equal_the_cpu_twin(be, rng):
    K.check_scalar_classes(be, rng, 500)


def test_msm_split_g1(be, rng):
    K.check_msm_split(be, rng, "g1", 300, windows=(None, 5))


def test_msm_split_over_a_table_and_with_glv(be, rng):
    K.check_msm_split(be, rng, "g1", 120, copies=(1, 3), glv=(False, True))


def test_msm_split_g2(be, rng):
    K.check_msm_split(be, rng, "g2", 40)


def test_glv_plan_shares_the_sets_of_one_half():
    plain = cuda_msm.make_plan(1 << 20, 16)
    split = cuda_msm.make_plan(1 << 20, 16, stride=1 << 20, halves=2)
    assert (plain.windows, plain.sets) == (16, 16)
    assert (split.windows, split.sets) == (9, 9)
    with pytest.raises(ValueError, match="GLV table"):
        cuda_msm.make_plan(100, 5, stride=50, halves=2)
    with pytest.raises(ValueError, match="halves"):
        cuda_msm.make_plan(100, 5, halves=3)


def test_the_msm_scratch_the_engine_models_is_the_plans(be):
    """Backend.msm_scratch_bytes, which the engine's device model counts, is what `pippenger`
    reserves for the plan `msm` makes (device scalars, the configured chunks)."""
    from cuzk.algebra.curves import G1
    from cuzk.backends.cuda import msm as M

    for n in (1 << 10, (1 << 27) - 1):
        assert be.msm_scratch_bytes(n) == M.scratch_bytes(
            M.make_plan(n, None, be.msm_chunks), M.xyzz_words(G1)
        )
    assert be.msm_scratch_bytes((1 << 27) - 1) < 10e9
