"""Serial Fr kernels for the small arrays of witness mode (a few lanes).

FR's batch kernels are parallel; for arrays of a few rows their thread
start-up costs milliseconds, far more than the arithmetic, and a witness
program makes hundreds of such calls. These run on the calling thread.
"""

from __future__ import annotations

import numpy as np
from numba import njit

from cuzk.algebra._jit_fields import FR_TAG, f_add, f_load, f_store, f_sub, f_to_canon


@njit(cache=True)
def _k_add(F, a, b, out):
    for i in range(a.shape[0]):
        f_store(F, out, i, 0, f_add(F, f_load(F, a, i, 0), f_load(F, b, i, 0)))


@njit(cache=True)
def _k_sub(F, a, b, out):
    for i in range(a.shape[0]):
        f_store(F, out, i, 0, f_sub(F, f_load(F, a, i, 0), f_load(F, b, i, 0)))


@njit(cache=True)
def _k_to_canon(F, a, out):
    for i in range(a.shape[0]):
        f_store(F, out, i, 0, f_to_canon(F, f_load(F, a, i, 0)))


def _prep(a: np.ndarray) -> np.ndarray:
    return np.ascontiguousarray(a, dtype=np.uint64).reshape(-1, 4)


def add(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    a, b = _prep(a), _prep(b)
    out = np.empty_like(a)
    _k_add(FR_TAG, a, b, out)
    return out


def sub(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    a, b = _prep(a), _prep(b)
    out = np.empty_like(a)
    _k_sub(FR_TAG, a, b, out)
    return out


def to_canonical(a: np.ndarray) -> np.ndarray:
    a = _prep(a)
    out = np.empty_like(a)
    _k_to_canon(FR_TAG, a, out)
    return out
