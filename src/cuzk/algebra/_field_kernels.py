"""Batch field kernels over (n, width) uint64 arrays, generic over the field tag.

Each kernel works on the rows [lo, hi) and releases the GIL: cuzk.algebra._parallel runs one call
per chunk on its thread pool (no numba parfor: it multiplied the first run's compile time).
"""

from __future__ import annotations

from numba import njit

from cuzk.algebra._jit_fields import (
    f_add,
    f_from_canon,
    f_inv,
    f_is_canon,
    f_is_zero,
    f_load,
    f_mul,
    f_neg,
    f_one,
    f_pow,
    f_sqr,
    f_store,
    f_sub,
    f_to_canon,
)

# Elementwise kernels: one per operation so each compiles to a tight loop.


@njit(nogil=True, cache=True)
def k_add(F, a, b, out, lo, hi):
    for i in range(lo, hi):
        f_store(F, out, i, 0, f_add(F, f_load(F, a, i, 0), f_load(F, b, i, 0)))


@njit(nogil=True, cache=True)
def k_sub(F, a, b, out, lo, hi):
    for i in range(lo, hi):
        f_store(F, out, i, 0, f_sub(F, f_load(F, a, i, 0), f_load(F, b, i, 0)))


@njit(nogil=True, cache=True)
def k_mul(F, a, b, out, lo, hi):
    for i in range(lo, hi):
        f_store(F, out, i, 0, f_mul(F, f_load(F, a, i, 0), f_load(F, b, i, 0)))


@njit(nogil=True, cache=True)
def k_scale(F, a, s, out, lo, hi):
    """out[i] = a[i] * s[0] (s is a one-row array)."""
    c = f_load(F, s, 0, 0)
    for i in range(lo, hi):
        f_store(F, out, i, 0, f_mul(F, f_load(F, a, i, 0), c))


@njit(nogil=True, cache=True)
def k_sqr(F, a, out, lo, hi):
    for i in range(lo, hi):
        f_store(F, out, i, 0, f_sqr(F, f_load(F, a, i, 0)))


@njit(nogil=True, cache=True)
def k_neg(F, a, out, lo, hi):
    for i in range(lo, hi):
        f_store(F, out, i, 0, f_neg(F, f_load(F, a, i, 0)))


@njit(nogil=True, cache=True)
def k_pow(F, a, e, out, lo, hi):
    for i in range(lo, hi):
        f_store(F, out, i, 0, f_pow(F, f_load(F, a, i, 0), e))


@njit(nogil=True, cache=True)
def k_to_canon(F, a, out, lo, hi):
    for i in range(lo, hi):
        f_store(F, out, i, 0, f_to_canon(F, f_load(F, a, i, 0)))


@njit(cache=True)
def k_first_noncanonical(F, a):
    """Index of the first row not below the modulus, or -1."""
    for i in range(a.shape[0]):
        if not f_is_canon(F, f_load(F, a, i, 0)):
            return i
    return -1


@njit(nogil=True, cache=True)
def k_from_canon(F, a, out, lo, hi):
    for i in range(lo, hi):
        f_store(F, out, i, 0, f_from_canon(F, f_load(F, a, i, 0)))


@njit(nogil=True, cache=True)
def k_batch_inv(F, a, out, lo, hi):
    """out[i] = 1/a[i] (0 -> 0) for i in [lo, hi): Montgomery's trick, one inversion per call."""
    acc = f_one(F)
    for i in range(lo, hi):
        x = f_load(F, a, i, 0)
        f_store(F, out, i, 0, acc)  # prefix product before i
        if not f_is_zero(F, x):
            acc = f_mul(F, acc, x)
    inv = f_inv(F, acc)
    for i in range(hi - 1, lo - 1, -1):
        x = f_load(F, a, i, 0)
        if f_is_zero(F, x):
            f_store(F, out, i, 0, x)
            continue
        f_store(F, out, i, 0, f_mul(F, inv, f_load(F, out, i, 0)))
        inv = f_mul(F, inv, x)


@njit(cache=True)
def k_powers(F, base, start, out):
    """out[i] = start * base^i (sequential: the chunk starts of Field.powers)."""
    acc = f_load(F, start, 0, 0)
    b = f_load(F, base, 0, 0)
    for i in range(out.shape[0]):
        f_store(F, out, i, 0, acc)
        acc = f_mul(F, acc, b)


@njit(nogil=True, cache=True)
def k_powers_chunked(F, starts, base, out, step, lo, hi):
    """out[k*step + j] = starts[k] * base^j for j < step, for the chunks k in [lo, hi)."""
    n = out.shape[0]
    b = f_load(F, base, 0, 0)
    for k in range(lo, hi):
        acc = f_load(F, starts, k, 0)
        for j in range(k * step, min(n, (k + 1) * step)):
            f_store(F, out, j, 0, acc)
            acc = f_mul(F, acc, b)


@njit(nogil=True, cache=True)
def k_eq_rows(F, a, b, out, lo, hi):
    for i in range(lo, hi):
        out[i] = f_load(F, a, i, 0) == f_load(F, b, i, 0)
