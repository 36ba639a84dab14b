"""Pippenger MSM and fixed-base multiplication on the CPU, for G1 and G2 alike.

The MSM splits scalars by value first: zeros cost nothing, ones (most of a
PoRep witness) are summed directly with mixed additions (the reference's
batch_add), and only the rest go through Pippenger with signed window digits
(buckets halve to 2^(c-1)), XYZZ bucket accumulators, a running-sum window
reduction, and Horner combination of windows (the digit convention and the Horner step are
shared with the CUDA backend: cuzk.algebra.pippenger). Windows run in parallel, on the kernel
threads of cuzk.algebra._parallel.
"""

from __future__ import annotations

import math

import numpy as np
from numba import njit

from cuzk.algebra._curve_kernels import k_jac_to_affine
from cuzk.algebra._jit_curves import (
    affine_is_inf,
    jac_add,
    jac_dbl,
    jac_inf,
    jac_madd,
    load_affine,
    store_jac,
    xyzz_add,
    xyzz_inf,
    xyzz_madd,
    xyzz_to_jac,
)
from cuzk.algebra._jit_fields import f_load, f_neg, f_one, f_store
from cuzk.algebra._parallel import run_ranges
from cuzk.algebra.curves import Curve
from cuzk.algebra.fields import FR
from cuzk.algebra.pippenger import SCALAR_BITS, combine_windows, signed_digits

#: Largest window accepted as an override: at 20 bits every window allocates 2^19 XYZZ buckets
#: (~100 MB for G1, ~200 MB for G2, one set per window in flight); larger ones exhaust memory.
MAX_WINDOW = 20


def default_window(n: int) -> int:
    """Window bits for n non-trivial scalars: about ln(n) + 2 (arkworks' rule), 2..16.

    Cost model: n * ceil(256/c) mixed additions plus 2^c bucket additions per
    window; this minimizes their sum to within a few percent on this machine.
    """
    if n < 32:
        return 3
    return max(2, min(16, int(math.log2(n) * 0.69) + 2))


@njit(nogil=True, cache=True)
def _window_sums(F, bases, idx, digits, c, out, lo, hi):
    """out[w] = sum_i digits[i, w] * bases[idx[i]] as a Jacobian point, for windows w in [lo, hi)."""
    n = digits.shape[0]
    nbuckets = 1 << (c - 1)
    width = bases.shape[1] // 2
    for w in range(lo, hi):
        buckets = np.empty((nbuckets, 4 * width), dtype=np.uint64)
        used = np.zeros(nbuckets, dtype=np.bool_)
        for i in range(n):
            d = digits[i, w]
            if d == 0:
                continue
            x, y = load_affine(F, bases, idx[i])
            if affine_is_inf(F, x, y):
                continue
            if d < 0:
                y = f_neg(F, y)
                d = -d
            b = d - 1
            if used[b]:
                p = xyzz_madd(F, _load_xyzz(F, buckets, b, width), x, y)
                _store_xyzz(F, buckets, b, width, p)
            else:
                _store_xyzz(F, buckets, b, width, (x, y, f_one(F), f_one(F)))
                used[b] = True
        running = xyzz_inf(F)
        total = xyzz_inf(F)
        for b in range(nbuckets - 1, -1, -1):
            if used[b]:
                running = xyzz_add(F, running, _load_xyzz(F, buckets, b, width))
            total = xyzz_add(F, total, running)
        store_jac(F, out, w, xyzz_to_jac(F, total))


@njit(cache=True)
def _load_xyzz(F, arr, i, width):
    return (
        f_load(F, arr, i, 0),
        f_load(F, arr, i, width),
        f_load(F, arr, i, 2 * width),
        f_load(F, arr, i, 3 * width),
    )


@njit(cache=True)
def _store_xyzz(F, arr, i, width, p):
    f_store(F, arr, i, 0, p[0])
    f_store(F, arr, i, width, p[1])
    f_store(F, arr, i, 2 * width, p[2])
    f_store(F, arr, i, 3 * width, p[3])


def pippenger(curve: Curve, bases_rows: np.ndarray, idx: np.ndarray, canon: np.ndarray, c: int) -> np.ndarray:
    """sum canon[i] * bases[idx[i]] (canonical scalars), Jacobian point of shape jac_shape."""
    digits = signed_digits(canon, c)
    windows = digits.shape[1]
    sums = np.empty((windows, 3 * curve.field.width), dtype=np.uint64)
    run_ranges(
        _window_sums,
        (curve.tag, bases_rows, idx, digits, c, sums),
        windows,
        canon.shape[0] * windows * 10 * curve.field.mul_cost,
    )
    return combine_windows(curve, sums, c)


def scalar_classes(scalars: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(ones, fulls): int64 indices of the Montgomery scalars equal to 1 and of those neither 0
    nor 1, in order; compared in Montgomery form, so only the fulls are ever converted (the
    twin of the CUDA backend's msm_classes pass)."""
    s = np.asarray(scalars, dtype=np.uint64).reshape(-1, 4)
    nonzero = s.any(axis=1)
    one = (s == FR.one()).all(axis=1)
    return np.flatnonzero(one), np.flatnonzero(nonzero & ~one)


def msm(curve: Curve, bases_rows: np.ndarray, scalars: np.ndarray, window: int | None = None) -> np.ndarray:
    """sum scalars[i] * bases[i]; bases as (n, 2*width) rows, scalars Fr Montgomery (n, 4)."""
    n = scalars.shape[0]
    if bases_rows.shape[0] < n:
        raise ValueError(f"{n} scalars but only {bases_rows.shape[0]} bases")
    if window is not None and not 1 <= window <= MAX_WINDOW:
        raise ValueError(f"MSM window must be between 1 and {MAX_WINDOW} bits, got {window}")
    ones, rest = scalar_classes(scalars)
    acc = curve.to_jacobian(curve.identity(1))[0]
    if ones.size:
        mask = np.zeros(bases_rows.shape[0], dtype=np.bool_)
        mask[ones] = True
        acc = _masked_sum(curve, bases_rows, mask)
    if rest.size:
        c = window or default_window(rest.size)
        canon = FR.to_canonical(np.ascontiguousarray(scalars[rest]))
        part = pippenger(curve, bases_rows, rest, canon, c)
        acc = curve.add(acc[None], part[None])[0]
    return acc


def _masked_sum(curve: Curve, bases_rows: np.ndarray, mask: np.ndarray) -> np.ndarray:
    chunks = max(1, min(64, int(mask.sum()) // 2048))
    return curve.sum_jacobian(curve.masked_partial_sums(bases_rows, mask, chunks))


def masked_sum(curve: Curve, bases_rows: np.ndarray, mask: np.ndarray) -> np.ndarray:
    full = np.zeros(bases_rows.shape[0], dtype=np.bool_)
    full[: mask.shape[0]] = mask
    return _masked_sum(curve, bases_rows, full)


# --- fixed base -------------------------------------------------------------------------


@njit(cache=True)
def _fill_table(F, base, c, windows, table):
    """table[w * (2^c - 1) + d - 1] = d * 2^(w c) * base (Jacobian), for d in 1..2^c-1."""
    per = (1 << c) - 1
    x, y = load_affine(F, base, 0)
    pw = jac_madd(F, jac_inf(F), x, y)
    for w in range(windows):
        acc = pw
        store_jac(F, table, w * per, acc)
        for d in range(2, per + 1):
            acc = jac_add(F, acc, pw)
            store_jac(F, table, w * per + d - 1, acc)
        for _ in range(c):
            pw = jac_dbl(F, pw)


@njit(nogil=True, cache=True)
def _fixed_base(F, table_aff, scalars, c, windows, out, lo, hi):
    per = (1 << c) - 1
    mask = np.uint64(per)
    for i in range(lo, hi):
        acc = jac_inf(F)
        for w in range(windows):
            bit = w * c
            limb = bit // 64
            off = bit % 64
            v = scalars[i, limb] >> np.uint64(off)
            if off + c > 64 and limb + 1 < 4:
                v |= scalars[i, limb + 1] << np.uint64(64 - off)
            d = np.int64(v & mask)
            if d:
                x, y = load_affine(F, table_aff, w * per + d - 1)
                acc = jac_madd(F, acc, x, y)
        store_jac(F, out, i, acc)


def fixed_base_window(n: int) -> int:
    return 8 if n < 1 << 12 else (12 if n < 1 << 21 else 16)


def fixed_base_mul(curve: Curve, base: np.ndarray, scalars: np.ndarray) -> np.ndarray:
    """[scalars[i]] base for one affine base (shape (1,) + affine_shape); affine results."""
    n = scalars.shape[0]
    canon = FR.to_canonical(scalars)
    c = fixed_base_window(n)
    windows = -(-SCALAR_BITS // c)
    width = curve.field.width
    table_j = np.empty((windows * ((1 << c) - 1), 3 * width), dtype=np.uint64)
    _fill_table(curve.tag, np.ascontiguousarray(base).reshape(1, -1), c, windows, table_j)
    table = np.empty((table_j.shape[0], 2 * width), dtype=np.uint64)
    rows = table_j.shape[0]
    run_ranges(
        k_jac_to_affine,
        (curve.tag, table_j, table),
        rows,
        rows * 6 * curve.field.mul_cost,
        max(1, rows // 4096),
    )
    jac = np.empty((n, 3 * width), dtype=np.uint64)
    run_ranges(
        _fixed_base, (curve.tag, table, canon, c, windows, jac), n, n * windows * 11 * curve.field.mul_cost
    )
    out = np.empty((n, 2 * width), dtype=np.uint64)
    run_ranges(
        k_jac_to_affine, (curve.tag, jac, out), n, n * 6 * curve.field.mul_cost, max(1, min(256, n // 4096))
    )
    return out.reshape(n, *curve.affine_shape)
