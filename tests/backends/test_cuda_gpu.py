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


def test_msm_g1(be, rng):
    K.check_msm(be, rng, "g1", 1 << 13, windows=(None, 7, 13), chunks=(None, 3))


def test_msm_g2(be, rng):
    K.check_msm(be, rng, "g2", 1 << 10)


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


def test_memory_budget(rng):
    from cuzk.backends.cuda import CudaBackend

    small = CudaBackend(memory_budget=1 << 20)
    with pytest.raises(DeviceMemoryError, match="budget"):
        small.load_bases(np.zeros((1 << 14, 2, 6), np.uint64), "g1")
