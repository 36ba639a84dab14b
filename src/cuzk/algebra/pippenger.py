"""The parts of Pippenger's MSM that every backend shares: the digit convention and the
combination of window sums.

Scalars (canonical, below r < 2^255) are cut into W = floor(255 / c) + 1 signed base-2^c
digits in [-2^(c-1), 2^(c-1)]: a digit above 2^(c-1) becomes digit - 2^c with a carry into
the next window, and the top window keeps its carry, so buckets halve to 2^(c-1). A backend
sums digit * base per window (its own kernels: the bucket work); `combine_windows` then
finishes on the host with Horner's rule, W points and about 255 doublings, so the CPU and
CUDA backends share one reference for the convention.
"""

from __future__ import annotations

import numpy as np
from numba import njit

from cuzk.algebra._jit_curves import jac_add, jac_dbl, jac_inf, load_jac, store_jac
from cuzk.algebra.curves import Curve

#: Bits of a canonical Fr scalar (r < 2^255).
SCALAR_BITS = 255


def signed_windows(c: int) -> int:
    """W = floor(255 / c) + 1 signed windows: every bit, plus room for the last carry."""
    return SCALAR_BITS // c + 1


@njit(cache=True)
def _signed_digits(scalars, c, windows, out):
    mask = np.uint64((1 << c) - 1)
    half = 1 << (c - 1)
    full = 1 << c
    for i in range(scalars.shape[0]):
        carry = 0
        for w in range(windows):
            bit = w * c
            limb = bit // 64
            off = bit % 64
            v = np.uint64(0)
            if limb < 4:
                v = scalars[i, limb] >> np.uint64(off)
                if off + c > 64 and limb + 1 < 4:
                    v |= scalars[i, limb + 1] << np.uint64(64 - off)
            d = np.int64(v & mask) + carry
            if d > half and w < windows - 1:
                d -= full
                carry = 1
            else:
                carry = 0
            out[i, w] = d


def signed_digits(canon: np.ndarray, c: int) -> np.ndarray:
    """(n, W) int64 signed digits of canonical (n, 4) scalars: sum_w d[w] 2^(w c) = scalar."""
    windows = signed_windows(c)
    out = np.empty((canon.shape[0], windows), dtype=np.int64)
    _signed_digits(np.ascontiguousarray(canon, dtype=np.uint64), c, windows, out)
    return out


@njit(cache=True)
def _horner(F, sums, c, out):
    acc = jac_inf(F)
    for w in range(sums.shape[0] - 1, -1, -1):
        for _ in range(c):
            acc = jac_dbl(F, acc)
        acc = jac_add(F, acc, load_jac(F, sums, w))
    store_jac(F, out, 0, acc)


def combine_windows(curve: Curve, sums: np.ndarray, c: int) -> np.ndarray:
    """sum_w 2^(w c) sums[w] for Jacobian window sums (W, 3 width): one Jacobian point."""
    out = np.empty((1, 3 * curve.field.width), dtype=np.uint64)
    rows = np.ascontiguousarray(sums, dtype=np.uint64).reshape(sums.shape[0], 3 * curve.field.width)
    _horner(curve.tag, rows, c, out)
    return out.reshape(curve.jac_shape)
