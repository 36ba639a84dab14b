"""Point formulas for E1 (over Fq) and E2 (over Fq2), generic over the field tag.

Both curves are y^2 = x^3 + b with a = 0, so one set of formulas, written
against `f_mul(F, ...)` and friends, serves G1 (F = FQ_TAG) and G2 (F = FQ2_TAG).
Coordinates inside kernels:

- affine (x, y); in arrays the point at infinity is x = y = 0;
- Jacobian (X, Y, Z): x = X/Z^2, y = Y/Z^3, infinity when Z = 0;
- XYZZ (X, Y, ZZ, ZZZ): x = X/ZZ, y = Y/ZZZ, infinity when ZZ = 0. Bucket
  accumulation uses XYZZ because its mixed addition is the cheapest
  (8M + 2S) and needs no doubling special case unless the points coincide.

Formula names follow the Explicit-Formulas Database (hyperelliptic.org/EFD).
Every addition handles the exceptional cases (equal points, opposite points,
infinity), because an MSM over user data can contain repeated bases.
"""

from __future__ import annotations

import numpy as np
from numba.extending import overload, register_jitable

from cuzk.algebra import constants as C
from cuzk.algebra._jit_fields import _kind as _field_kind
from cuzk.algebra._jit_fields import (
    _mont,
    f_add,
    f_conj,
    f_dbl,
    f_eq,
    f_is_zero,
    f_load,
    f_mul,
    f_neg,
    f_one,
    f_sqr,
    f_store,
    f_sub,
    f_zero,
)

G1_B_M = _mont(C.G1_B, C.Q, C.FQ_LIMBS)
G2_B_M = (_mont(C.G2_B[0], C.Q, C.FQ_LIMBS), _mont(C.G2_B[1], C.Q, C.FQ_LIMBS))
G1_BETA_M = _mont(C.G1_BETA, C.Q, C.FQ_LIMBS)
G2_PSI_X_M = (_mont(C.G2_PSI_X[0], C.Q, C.FQ_LIMBS), _mont(C.G2_PSI_X[1], C.Q, C.FQ_LIMBS))
G2_PSI_Y_M = (_mont(C.G2_PSI_Y[0], C.Q, C.FQ_LIMBS), _mont(C.G2_PSI_Y[1], C.Q, C.FQ_LIMBS))
Z_ABS = np.uint64(-C.Z)


def f_curve_b(F):
    raise NotImplementedError


@overload(f_curve_b)
def _ol_curve_b(F):
    k = _field_kind(F)
    if k == "fq":
        return lambda F: G1_B_M
    if k == "fq2":
        return lambda F: G2_B_M
    return None


# --- loads and stores of points from rows -------------------------------------------------


@register_jitable
def load_affine(F, arr, i):
    w = arr.shape[1] // 2
    return f_load(F, arr, i, 0), f_load(F, arr, i, w)


@register_jitable
def store_affine(F, arr, i, x, y):
    w = arr.shape[1] // 2
    f_store(F, arr, i, 0, x)
    f_store(F, arr, i, w, y)


@register_jitable
def load_jac(F, arr, i):
    w = arr.shape[1] // 3
    return f_load(F, arr, i, 0), f_load(F, arr, i, w), f_load(F, arr, i, 2 * w)


@register_jitable
def store_jac(F, arr, i, p):
    w = arr.shape[1] // 3
    f_store(F, arr, i, 0, p[0])
    f_store(F, arr, i, w, p[1])
    f_store(F, arr, i, 2 * w, p[2])


@register_jitable
def affine_is_inf(F, x, y):
    return f_is_zero(F, x) and f_is_zero(F, y)


# --- Jacobian ------------------------------------------------------------------------------


@register_jitable
def jac_inf(F):
    return (f_one(F), f_one(F), f_zero(F))


@register_jitable
def jac_from_affine(F, x, y):
    if affine_is_inf(F, x, y):
        return jac_inf(F)
    return (x, y, f_one(F))


@register_jitable
def jac_neg(F, p):
    return (p[0], f_neg(F, p[1]), p[2])


@register_jitable
def jac_dbl(F, p):
    """dbl-2009-l (a = 0): 2M + 5S."""
    X, Y, Z = p
    if f_is_zero(F, Z):
        return p
    A = f_sqr(F, X)
    B = f_sqr(F, Y)
    Cc = f_sqr(F, B)
    t = f_sub(F, f_sub(F, f_sqr(F, f_add(F, X, B)), A), Cc)
    D = f_dbl(F, t)
    E = f_add(F, f_dbl(F, A), A)
    Fv = f_sqr(F, E)
    X3 = f_sub(F, Fv, f_dbl(F, D))
    C8 = f_dbl(F, f_dbl(F, f_dbl(F, Cc)))
    Y3 = f_sub(F, f_mul(F, E, f_sub(F, D, X3)), C8)
    Z3 = f_dbl(F, f_mul(F, Y, Z))
    return (X3, Y3, Z3)


@register_jitable
def jac_add(F, p, q):
    """add-2007-bl: 11M + 5S, with the exceptional cases."""
    X1, Y1, Z1 = p
    X2, Y2, Z2 = q
    if f_is_zero(F, Z1):
        return q
    if f_is_zero(F, Z2):
        return p
    Z1Z1 = f_sqr(F, Z1)
    Z2Z2 = f_sqr(F, Z2)
    U1 = f_mul(F, X1, Z2Z2)
    U2 = f_mul(F, X2, Z1Z1)
    S1 = f_mul(F, f_mul(F, Y1, Z2), Z2Z2)
    S2 = f_mul(F, f_mul(F, Y2, Z1), Z1Z1)
    H = f_sub(F, U2, U1)
    r = f_dbl(F, f_sub(F, S2, S1))
    if f_is_zero(F, H):
        if f_is_zero(F, r):
            return jac_dbl(F, p)
        return jac_inf(F)
    I = f_sqr(F, f_dbl(F, H))
    J = f_mul(F, H, I)
    V = f_mul(F, U1, I)
    X3 = f_sub(F, f_sub(F, f_sqr(F, r), J), f_dbl(F, V))
    Y3 = f_sub(F, f_mul(F, r, f_sub(F, V, X3)), f_dbl(F, f_mul(F, S1, J)))
    Z3 = f_mul(F, f_sub(F, f_sub(F, f_sqr(F, f_add(F, Z1, Z2)), Z1Z1), Z2Z2), H)
    return (X3, Y3, Z3)


@register_jitable
def jac_madd(F, p, x2, y2):
    """madd-2007-bl: Jacobian + affine, 7M + 4S, with the exceptional cases."""
    if affine_is_inf(F, x2, y2):
        return p
    X1, Y1, Z1 = p
    if f_is_zero(F, Z1):
        return (x2, y2, f_one(F))
    Z1Z1 = f_sqr(F, Z1)
    U2 = f_mul(F, x2, Z1Z1)
    S2 = f_mul(F, f_mul(F, y2, Z1), Z1Z1)
    H = f_sub(F, U2, X1)
    r = f_dbl(F, f_sub(F, S2, Y1))
    if f_is_zero(F, H):
        if f_is_zero(F, r):
            return jac_dbl(F, p)
        return jac_inf(F)
    HH = f_sqr(F, H)
    I = f_dbl(F, f_dbl(F, HH))
    J = f_mul(F, H, I)
    V = f_mul(F, X1, I)
    X3 = f_sub(F, f_sub(F, f_sqr(F, r), J), f_dbl(F, V))
    Y3 = f_sub(F, f_mul(F, r, f_sub(F, V, X3)), f_dbl(F, f_mul(F, Y1, J)))
    Z3 = f_sub(F, f_sub(F, f_sqr(F, f_add(F, Z1, H)), Z1Z1), HH)
    return (X3, Y3, Z3)


@register_jitable
def jac_eq_affine(F, p, x, y):
    """Whether Jacobian p equals affine (x, y) (infinity encoded as (0, 0))."""
    X, Y, Z = p
    if f_is_zero(F, Z):
        return affine_is_inf(F, x, y)
    if affine_is_inf(F, x, y):
        return False
    ZZ = f_sqr(F, Z)
    return f_eq(F, f_mul(F, x, ZZ), X) and f_eq(F, f_mul(F, y, f_mul(F, ZZ, Z)), Y)


@register_jitable
def jac_mul_u64(F, x, y, k):
    """[k] (x, y) for an affine point and a 64-bit unsigned k (left-to-right)."""
    acc = jac_inf(F)
    for b in range(63, -1, -1):
        acc = jac_dbl(F, acc)
        if (k >> np.uint64(b)) & np.uint64(1):
            acc = jac_madd(F, acc, x, y)
    return acc


@register_jitable
def jac_mul_u64_jac(F, p, k):
    acc = jac_inf(F)
    for b in range(63, -1, -1):
        acc = jac_dbl(F, acc)
        if (k >> np.uint64(b)) & np.uint64(1):
            acc = jac_add(F, acc, p)
    return acc


# --- XYZZ (bucket accumulators) -----------------------------------------------------------


@register_jitable
def xyzz_inf(F):
    return (f_one(F), f_one(F), f_zero(F), f_zero(F))


@register_jitable
def xyzz_mdbl(F, x, y):
    """mdbl-2008-s-1: double an affine point into XYZZ."""
    U = f_dbl(F, y)
    V = f_sqr(F, U)
    W = f_mul(F, U, V)
    S = f_mul(F, x, V)
    xx = f_sqr(F, x)
    M = f_add(F, f_dbl(F, xx), xx)
    X3 = f_sub(F, f_sqr(F, M), f_dbl(F, S))
    Y3 = f_sub(F, f_mul(F, M, f_sub(F, S, X3)), f_mul(F, W, y))
    return (X3, Y3, V, W)


@register_jitable
def xyzz_dbl(F, p):
    """dbl-2008-s-1 (a = 0): 6M + 3S."""
    X1, Y1, ZZ1, ZZZ1 = p
    if f_is_zero(F, ZZ1):
        return p
    U = f_dbl(F, Y1)
    V = f_sqr(F, U)
    W = f_mul(F, U, V)
    S = f_mul(F, X1, V)
    xx = f_sqr(F, X1)
    M = f_add(F, f_dbl(F, xx), xx)
    X3 = f_sub(F, f_sqr(F, M), f_dbl(F, S))
    Y3 = f_sub(F, f_mul(F, M, f_sub(F, S, X3)), f_mul(F, W, Y1))
    return (X3, Y3, f_mul(F, V, ZZ1), f_mul(F, W, ZZZ1))


@register_jitable
def xyzz_madd(F, p, x2, y2):
    """madd-2008-s: XYZZ + affine (not infinity), 8M + 2S, with the exceptional cases."""
    X1, Y1, ZZ1, ZZZ1 = p
    if f_is_zero(F, ZZ1):
        return (x2, y2, f_one(F), f_one(F))
    U2 = f_mul(F, x2, ZZ1)
    S2 = f_mul(F, y2, ZZZ1)
    P = f_sub(F, U2, X1)
    R = f_sub(F, S2, Y1)
    if f_is_zero(F, P):
        if f_is_zero(F, R):
            return xyzz_mdbl(F, x2, y2)
        return xyzz_inf(F)
    PP = f_sqr(F, P)
    PPP = f_mul(F, P, PP)
    Q = f_mul(F, X1, PP)
    X3 = f_sub(F, f_sub(F, f_sqr(F, R), PPP), f_dbl(F, Q))
    Y3 = f_sub(F, f_mul(F, R, f_sub(F, Q, X3)), f_mul(F, Y1, PPP))
    return (X3, Y3, f_mul(F, ZZ1, PP), f_mul(F, ZZZ1, PPP))


@register_jitable
def xyzz_add(F, p, q):
    """add-2008-s: 12M + 2S, with the exceptional cases."""
    X1, Y1, ZZ1, ZZZ1 = p
    X2, Y2, ZZ2, ZZZ2 = q
    if f_is_zero(F, ZZ1):
        return q
    if f_is_zero(F, ZZ2):
        return p
    U1 = f_mul(F, X1, ZZ2)
    U2 = f_mul(F, X2, ZZ1)
    S1 = f_mul(F, Y1, ZZZ2)
    S2 = f_mul(F, Y2, ZZZ1)
    P = f_sub(F, U2, U1)
    R = f_sub(F, S2, S1)
    if f_is_zero(F, P):
        if f_is_zero(F, R):
            return xyzz_dbl(F, p)
        return xyzz_inf(F)
    PP = f_sqr(F, P)
    PPP = f_mul(F, P, PP)
    Q = f_mul(F, U1, PP)
    X3 = f_sub(F, f_sub(F, f_sqr(F, R), PPP), f_dbl(F, Q))
    Y3 = f_sub(F, f_mul(F, R, f_sub(F, Q, X3)), f_mul(F, S1, PPP))
    ZZ3 = f_mul(F, f_mul(F, ZZ1, ZZ2), PP)
    ZZZ3 = f_mul(F, f_mul(F, ZZZ1, ZZZ2), PPP)
    return (X3, Y3, ZZ3, ZZZ3)


@register_jitable
def xyzz_to_jac(F, p):
    """Z = ZZ * ZZZ gives X = X ZZ ZZZ^2 and Y = Y ZZ^3 ZZZ^2 (no inversion)."""
    X, Y, ZZ, ZZZ = p
    if f_is_zero(F, ZZ):
        return jac_inf(F)
    ZZZ2 = f_sqr(F, ZZZ)
    Xj = f_mul(F, f_mul(F, X, ZZ), ZZZ2)
    Yj = f_mul(F, f_mul(F, Y, f_mul(F, f_sqr(F, ZZ), ZZ)), ZZZ2)
    return (Xj, Yj, f_mul(F, ZZ, ZZZ))


# --- membership ---------------------------------------------------------------------------


@register_jitable
def on_curve(F, x, y):
    """y^2 == x^3 + b for an affine point; the encoded infinity (0, 0) counts as on the curve."""
    if affine_is_inf(F, x, y):
        return True
    return f_eq(F, f_sqr(F, y), f_add(F, f_mul(F, f_sqr(F, x), x), f_curve_b(F)))


def in_subgroup(F, x, y):
    raise NotImplementedError


@overload(in_subgroup)
def _ol_in_subgroup(F, x, y):
    k = _field_kind(F)
    if k == "fq":

        def g1(F, x, y):
            # Scott: P in G1 iff sigma(P) == [-z^2] P, with sigma(x, y) = (beta x, y).
            if affine_is_inf(F, x, y):
                return True
            q = jac_mul_u64_jac(F, jac_mul_u64(F, x, y, Z_ABS), Z_ABS)
            return jac_eq_affine(F, jac_neg(F, q), f_mul(F, x, G1_BETA_M), y)

        return g1
    if k == "fq2":

        def g2(F, x, y):
            # Scott: P in G2 iff psi(P) == [z] P; z < 0 so [z] P = -[|z|] P.
            if affine_is_inf(F, x, y):
                return True
            q = jac_neg(F, jac_mul_u64(F, x, y, Z_ABS))
            px = f_mul(F, f_conj(F, x), G2_PSI_X_M)
            py = f_mul(F, f_conj(F, y), G2_PSI_Y_M)
            return jac_eq_affine(F, q, px, py)

        return g2
    return None
