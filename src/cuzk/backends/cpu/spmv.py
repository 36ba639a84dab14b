"""Sparse matrix-vector products over Fr (a = A.w) on the CPU, rows in chunks on the kernel threads.

Coefficients of +1 and -1 (most of a bit-decomposed circuit) skip the
Montgomery multiplication.
"""

from __future__ import annotations

import numpy as np
from numba import njit

from cuzk.algebra._jit_fields import FR_ONE, FR_TAG, f_add, f_load, f_mul, f_store, f_sub, f_zero
from cuzk.algebra._parallel import run_ranges
from cuzk.backends.base import CsrMatrix
from cuzk.errors import BackendError


@njit(nogil=True, cache=True)
def _spmv(F, indptr, indices, data, w, out, minus_one, lo, hi):
    m1 = f_load(F, minus_one, 0, 0)
    for r in range(lo, hi):
        acc = f_zero(F)
        for k in range(indptr[r], indptr[r + 1]):
            coeff = f_load(F, data, k, 0)
            x = f_load(F, w, indices[k], 0)
            if coeff == FR_ONE:
                acc = f_add(F, acc, x)
            elif coeff == m1:
                acc = f_sub(F, acc, x)
            else:
                acc = f_add(F, acc, f_mul(F, coeff, x))
        f_store(F, out, r, 0, acc)


def spmv(m: CsrMatrix, w: np.ndarray) -> np.ndarray:
    if w.shape[0] != m.shape[1]:
        raise BackendError(f"matrix has {m.shape[1]} columns but the vector has {w.shape[0]} entries")
    out = np.empty((m.shape[0], 4), dtype=np.uint64)
    args = (FR_TAG, m.indptr, m.indices, m.data, np.ascontiguousarray(w), out, _MINUS_ONE)
    run_ranges(_spmv, args, m.shape[0], m.nnz)
    return out


def _minus_one() -> np.ndarray:
    from cuzk.algebra.fields import FR

    return FR.neg(FR.ones(1))


_MINUS_ONE = _minus_one()
