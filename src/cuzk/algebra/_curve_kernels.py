"""Batch point kernels over row views: affine rows hold 2 coordinates, Jacobian rows 3.

Each kernel works on the rows [lo, hi) and releases the GIL; cuzk.algebra._parallel runs one call
per chunk on its thread pool (no numba parfor: it multiplied the first run's compile time).
"""

from __future__ import annotations

import numpy as np
from numba import njit

from cuzk.algebra._jit_curves import (
    affine_is_inf,
    in_subgroup,
    jac_add,
    jac_dbl,
    jac_from_affine,
    jac_inf,
    jac_madd,
    load_affine,
    load_jac,
    on_curve,
    store_affine,
    store_jac,
    xyzz_inf,
    xyzz_madd,
    xyzz_to_jac,
)
from cuzk.algebra._jit_fields import (
    f_add,
    f_dbl,
    f_inv,
    f_is_zero,
    f_mul,
    f_neg,
    f_one,
    f_sqr,
    f_sub,
    f_zero,
)


@njit(nogil=True, cache=True)
def k_on_curve(F, aff, out, lo, hi):
    for i in range(lo, hi):
        x, y = load_affine(F, aff, i)
        out[i] = on_curve(F, x, y)


@njit(nogil=True, cache=True)
def k_in_subgroup(F, aff, out, lo, hi):
    for i in range(lo, hi):
        x, y = load_affine(F, aff, i)
        out[i] = in_subgroup(F, x, y)


@njit(nogil=True, cache=True)
def k_affine_to_jac(F, aff, out, lo, hi):
    for i in range(lo, hi):
        x, y = load_affine(F, aff, i)
        store_jac(F, out, i, jac_from_affine(F, x, y))


@njit(nogil=True, cache=True)
def k_jac_to_affine(F, jac, out, lo, hi):
    """Rows [lo, hi) to affine, Montgomery's trick over the Z coordinates (one inversion per
    call); infinity rows become (0, 0)."""
    acc = f_one(F)
    for i in range(lo, hi):
        X, Y, Z = load_jac(F, jac, i)
        store_affine(F, out, i, acc, f_zero(F))  # stash the prefix product in x
        if not f_is_zero(F, Z):
            acc = f_mul(F, acc, Z)
    inv = f_inv(F, acc)
    for i in range(hi - 1, lo - 1, -1):
        X, Y, Z = load_jac(F, jac, i)
        if f_is_zero(F, Z):
            store_affine(F, out, i, f_zero(F), f_zero(F))
            continue
        prefix, _ = load_affine(F, out, i)
        zinv = f_mul(F, inv, prefix)
        inv = f_mul(F, inv, Z)
        zinv2 = f_sqr(F, zinv)
        store_affine(F, out, i, f_mul(F, X, zinv2), f_mul(F, Y, f_mul(F, zinv2, zinv)))


@njit(nogil=True, cache=True)
def k_jac_add(F, a, b, out, lo, hi):
    for i in range(lo, hi):
        store_jac(F, out, i, jac_add(F, load_jac(F, a, i), load_jac(F, b, i)))


@njit(nogil=True, cache=True)
def k_jac_madd(F, a, b, out, lo, hi):
    for i in range(lo, hi):
        x, y = load_affine(F, b, i)
        store_jac(F, out, i, jac_madd(F, load_jac(F, a, i), x, y))


@njit(nogil=True, cache=True)
def k_jac_dbl(F, a, out, lo, hi):
    for i in range(lo, hi):
        store_jac(F, out, i, jac_dbl(F, load_jac(F, a, i)))


@njit(nogil=True, cache=True)
def k_affine_neg(F, a, out, lo, hi):
    for i in range(lo, hi):
        x, y = load_affine(F, a, i)
        store_affine(F, out, i, x, y if affine_is_inf(F, x, y) else f_neg(F, y))


@njit(nogil=True, cache=True)
def k_scalar_mul(F, aff, scalars, out, lo, hi):
    """out[i] = [scalars[i]] aff[i]; scalars are canonical (n, 4) limbs; left-to-right."""
    for i in range(lo, hi):
        x, y = load_affine(F, aff, i)
        acc = jac_inf(F)
        for k in range(scalars.shape[1] - 1, -1, -1):
            w = scalars[i, k]
            for b in range(63, -1, -1):
                acc = jac_dbl(F, acc)
                if (w >> np.uint64(b)) & np.uint64(1):
                    acc = jac_madd(F, acc, x, y)
        store_jac(F, out, i, acc)


@njit(nogil=True, cache=True)
def k_masked_sum(F, aff, mask, partial, c, lo, hi):
    """partial[c] = sum of aff[i] with mask[i], i in [lo, hi) (XYZZ mixed additions)."""
    acc = xyzz_inf(F)
    for i in range(lo, hi):
        if mask[i]:
            x, y = load_affine(F, aff, i)
            if not affine_is_inf(F, x, y):
                acc = xyzz_madd(F, acc, x, y)
    store_jac(F, partial, c, xyzz_to_jac(F, acc))


@njit(nogil=True, cache=True)
def k_affine_add(F, p, q, out, lo, hi):
    # Rows [lo, hi); slopes share one inversion (Montgomery's trick). Exceptional rows: infinity
    # operands, P == Q (tangent slope), P == -Q (result infinity).
    acc = f_one(F)
    for i in range(lo, hi):
        x1, y1 = load_affine(F, p, i)
        x2, y2 = load_affine(F, q, i)
        den = f_zero(F)
        if not (affine_is_inf(F, x1, y1) or affine_is_inf(F, x2, y2)):
            dx = f_sub(F, x2, x1)
            den = dx if not f_is_zero(F, dx) else f_dbl(F, y1)
        store_affine(F, out, i, acc, den)
        if not f_is_zero(F, den):
            acc = f_mul(F, acc, den)
    inv = f_inv(F, acc)
    for i in range(hi - 1, lo - 1, -1):
        prefix, den = load_affine(F, out, i)
        x1, y1 = load_affine(F, p, i)
        x2, y2 = load_affine(F, q, i)
        if affine_is_inf(F, x1, y1):
            store_affine(F, out, i, x2, y2)
            continue
        if affine_is_inf(F, x2, y2):
            store_affine(F, out, i, x1, y1)
            continue
        if f_is_zero(F, den):  # x1 == x2 and y1 == -y2 (or y = 0): the sum is infinity
            store_affine(F, out, i, f_zero(F), f_zero(F))
            continue
        dinv = f_mul(F, inv, prefix)
        inv = f_mul(F, inv, den)
        if f_is_zero(F, f_sub(F, x2, x1)):
            if not f_is_zero(F, f_sub(F, y2, y1)):
                store_affine(F, out, i, f_zero(F), f_zero(F))
                continue
            xx = f_sqr(F, x1)
            lam = f_mul(F, f_add(F, f_dbl(F, xx), xx), dinv)
        else:
            lam = f_mul(F, f_sub(F, y2, y1), dinv)
        x3 = f_sub(F, f_sub(F, f_sqr(F, lam), x1), x2)
        y3 = f_sub(F, f_mul(F, lam, f_sub(F, x1, x3)), y1)
        store_affine(F, out, i, x3, y3)
