"""The CUDA backend on a real device against the CPU backend (run on the device machine)."""

from __future__ import annotations

import cuda_checks as K
import numpy as np
import pytest

from cuzk.errors import DeviceMemoryError

pytestmark = pytest.mark.gpu


@pytest.fixture(scope="module")
def be():
    from cuzk.backends.cuda import CudaBackend

    return CudaBackend()


def test_fr_ops(be, rng):
    K.check_fr_ops(be, rng, 1 << 16)


def test_base_fields(be, rng):
    K.check_base_fields(be, rng, 1 << 14)


def test_ntt(be, rng):
    K.check_ntt(be, rng, [1, 3, 10, 11, 12, 16, 20, 22, 23])


def test_ntt_from_a_new_thread(rng):
    """A prepared launch from a thread that made no CUDA call before (an engine worker) gets the
    device's context made current first; its result equals the main thread's."""
    import threading

    from cuzk.algebra import constants as C
    from cuzk.algebra.fields import FR
    from cuzk.backends.cuda import CudaBackend

    fresh = CudaBackend()
    x = fresh.to_device(FR.random(1 << 12, rng))
    w = C.root_of_unity(12)
    out: list[object] = []
    worker = threading.Thread(target=lambda: out.append(fresh.to_host(fresh.ntt(x, w))))
    worker.start()
    worker.join()
    assert len(out) == 1 and (out[0] == fresh.to_host(fresh.ntt(x, w))).all()


@pytest.mark.parametrize(
    "knobs",
    [
        {"KERNEL": "ntt_pass_regs"},
        {"SMALL_PASS_LOG": 0},
        {"TILE_LOG": 10},
        {"MAX_PASS_LOG": 7},
        {"SMALL_FULL_THREADS": 128, "SMALL_THREADS": 64},
        {"KERNEL": "ntt_pass_r2", "RADIX4": False},
        {"OVERLAP": False},
        {"SWIZZLE_MAX_LOG": 0},
        {"SWIZZLE_MAX_LOG": 99},
        {"SCRATCH_MAX_LOG": 0},
    ],
)
def test_ntt_variants(be, rng, monkeypatch, knobs):
    from cuzk.backends.cuda import CudaBackend
    from cuzk.backends.cuda import ntt as N

    for k, v in knobs.items():
        monkeypatch.setattr(N, k, v)
    K.check_ntt(CudaBackend(runtime=be.rt), rng, [3, 4, 10, 11, 12, 16, 18, 20, 21, 22, 23])


def test_msm_g1(be, rng):
    K.check_msm(be, rng, "g1", 1 << 13, windows=(None, 7, 13), chunks=(None, 3))


def test_msm_g2(be, rng):
    K.check_msm(be, rng, "g2", 1 << 10)


def test_msm_precomputed(be, rng):
    K.check_msm_precomputed(be, rng, "g1", 1 << 13)
    K.check_msm_precomputed(be, rng, "g2", 1 << 9, copies=(3,))


def test_msm_skewed(be, rng):
    K.check_msm_skewed(be, rng, 1 << 14)


def test_sum_bases(be, rng):
    K.check_sum_bases(be, rng, "g1", 1 << 14)
    K.check_sum_bases(be, rng, "g2", 1 << 10)


def test_fixed_base(be, rng):
    K.check_fixed_base(be, rng, "g1", 1 << 12)
    K.check_fixed_base(be, rng, "g2", 1 << 9)


def test_spmv(be, rng):
    K.check_spmv(be, rng, 1 << 16, 1 << 15)


def test_spmv_copies(be, rng):
    K.check_spmv_copies(be, rng, 1 << 15, 1 << 14, 5)


_SPIN_COPY = r"""
extern "C" __global__ void spin_copy(const unsigned long long* src, unsigned long long* dst,
                                     long long n, long long cycles) {
    const long long t0 = clock64();
    while (clock64() - t0 < cycles) {}
    for (long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x; i < n;
         i += (long long)gridDim.x * blockDim.x)
        dst[i] = src[i];
}
"""


@pytest.mark.parametrize("via", ["upload", "upload_chunks"])
def test_upload_into_a_freed_block_waits_for_the_kernels_reading_it(be, rng, via):
    """A kernel still queued to read x when x is dropped reads x's values, though the next
    upload (pinned, over 1 MiB) is given x's block by the pool. (Copied on the upload stream
    with no wait, the upload overwrote it first: porep-32g's key lost columns, H100 2026-12-07.)"""
    import cupy

    rt = be.rt
    assert rt.pinned_staging
    n = 1 << 20  # 8 MiB: the pinned path
    first = rng.integers(0, 1 << 62, n, dtype=np.uint64)
    second = first ^ np.uint64(0x5555)
    kernel = cupy.RawKernel(_SPIN_COPY, "spin_copy")
    with be.activate():
        x = rt.upload(first)
        dst = cupy.empty_like(x)
        rt.synchronize()
        with rt.compute:
            kernel((64,), (256,), (x, dst, np.int64(n), np.int64(300_000_000)))  # ~0.15 s spin first
        block = x.data.ptr
        del x
        if via == "upload":
            y = rt.upload(second)
        else:
            y = [out for out, _lo, _hi in rt.upload_chunks(second, [(0, n // 2), (n // 2, n)])][-1]
        assert y.data.ptr == block  # the test's premise: the freed block is reused
        rt.synchronize()
        assert (dst.get() == first).all()
        assert (y.get() == second).all()


def test_memory_budget(rng):
    from cuzk.backends.cuda import CudaBackend

    small = CudaBackend(memory_budget=1 << 20)
    with pytest.raises(DeviceMemoryError, match="budget"):
        small.load_bases(np.zeros((1 << 14, 2, 6), np.uint64), "g1")


def test_out_of_memory_in_a_kernel_call_is_a_device_memory_error(be, rng):
    """CuPy's allocation failure inside the guard (here the NTT's 4 MiB twiddle table against a
    4 MiB budget) comes out as DeviceMemoryError naming the budget; the input is untouched."""
    from cuzk.algebra import constants as C
    from cuzk.algebra.fields import FR
    from cuzk.backends.cuda import CudaBackend

    small = CudaBackend(memory_budget=4 << 20)
    host = FR.random(1 << 17, rng)
    x = be.to_device(host)
    with pytest.raises(DeviceMemoryError, match=r"device memory exhausted \(budget 4.00 MiB\)"):
        small.ntt(x, C.root_of_unity(17))
    assert (be.to_host(x) == host).all()


def test_device_interface(be, rng):
    """Identity, resident handles and memory statistics on the device (cf. the CI twin in
    test_backend_interface.py)."""
    import interface_checks as IC

    from cuzk.backends.cuda import CudaBackend

    IC.check_identity(be, "cuda", 0)
    IC.check_resident_lifecycle(be, CudaBackend(), rng, "g1")  # another instance: not its handles
    IC.check_bases_from_device(be, rng, "g2")
    info = be.memory_info()
    assert info["total"] >= info["free"] > 0 and info["used"] >= info["resident"] >= 0


def test_second_device_keeps_to_itself(rng):
    """cuda:1 allocates and computes on GPU 1 and leaves the calling thread's device alone."""
    import cupy

    from cuzk.backends import get_backend

    if cupy.cuda.runtime.getDeviceCount() < 2:
        pytest.skip("needs two CUDA devices")
    b0, b1 = get_backend("cuda", device=0), get_backend("cuda", device=1)
    assert b1 is not b0 and b1.device == 1
    before = cupy.cuda.runtime.getDevice()
    K.check_fr_ops(b1, rng, 1 << 12)
    K.check_ntt(b1, rng, [10, 12])
    K.check_msm(b1, rng, "g1", 1 << 10)
    assert cupy.cuda.runtime.getDevice() == before
    x = b1.fr_add(b1.to_device(np.zeros((8, 4), np.uint64)), b1.to_device(np.zeros((8, 4), np.uint64)))
    assert x.device.id == 1
    assert b0.to_device(x).device.id == 0  # a copy onto device 0, not a foreign pointer
    with b1.activate():
        assert cupy.cuda.runtime.getDevice() == 1
    assert b1.memory_info()["total"] > 0


def test_glv_split(be, rng):
    K.check_glv_split(be, rng, 1 << 12)


def test_msm_glv(be, rng):
    K.check_msm_glv(be, rng, 1 << 13, windows=(None, 7, 13))


def test_scalar_classes(be, rng):
    K.check_scalar_classes(be, rng, 1 << 16)


def test_msm_split(be, rng):
    K.check_msm_split(be, rng, "g1", 1 << 13, windows=(None, 7))


def test_msm_split_over_a_table_and_with_glv(be, rng):
    K.check_msm_split(be, rng, "g1", 1 << 12, copies=(1, 4), glv=(False, True))


def test_msm_split_g2(be, rng):
    K.check_msm_split(be, rng, "g2", 1 << 10)
