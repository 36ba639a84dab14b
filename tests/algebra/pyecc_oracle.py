"""py_ecc and plain Python ints as the oracle for the algebra tests.

Conversions go through canonical integers only (Field.to_ints / Curve.from_ints,
which test_fields checks against Python ints), and the curve math on the oracle
side is py_ecc's optimized_bls12_381 (homogeneous projective coordinates).
Square roots here are written independently of cuzk's kernels: Fq by the
p = 3 mod 4 exponent, Fq2 by the norm ("complex") method.
"""

from __future__ import annotations

import numpy as np
import py_ecc.optimized_bls12_381 as O

from cuzk.algebra import G1, G2, Curve
from cuzk.algebra import constants as C

P = C.Q
R = C.R
#: Cofactors: #E1(Fq) = H1 r and #E2(Fq2) = H2 r (the standard formulas in the BLS parameter z).
Z = C.Z
H1 = (Z - 1) ** 2 // 3
H2 = (Z**8 - 4 * Z**7 + 5 * Z**6 - 4 * Z**4 + 6 * Z**3 - 4 * Z**2 - 4 * Z + 13) // 9


def _fq2(c: tuple[int, int]) -> O.FQ2:
    return O.FQ2([c[0], c[1]])


def to_pyecc(curve: Curve, points: np.ndarray) -> list:
    """Our affine points -> py_ecc projective points (infinity -> py_ecc's zero)."""
    return ints_to_pyecc(curve, curve.to_ints(points))


def jac_to_ints(curve: Curve, jac: np.ndarray) -> list:
    """Our Jacobian points -> canonical affine ints (None at infinity), in Python arithmetic."""
    field = curve.field
    coords = field.to_ints(np.ascontiguousarray(jac).reshape(-1, *field.elem_shape))
    out = []
    for i in range(0, len(coords), 3):
        X, Y, Zc = coords[i : i + 3]
        if curve is G1:
            if Zc == 0:
                out.append(None)
                continue
            zi = pow(Zc, -1, P)
            out.append((X * zi * zi % P, Y * zi * zi * zi % P))
        else:
            z = _fq2(Zc)
            if z == O.FQ2.zero():
                out.append(None)
                continue
            zi = O.FQ2.one() / z
            x, y = _fq2(X) * zi * zi, _fq2(Y) * zi * zi * zi
            out.append((tuple(x.coeffs), tuple(y.coeffs)))
    return out


def pyecc_to_ints(curve: Curve, points: list) -> list:
    """py_ecc projective points -> canonical affine ints (None at infinity)."""
    out = []
    for pt in points:
        if O.is_inf(pt):
            out.append(None)
            continue
        x, y = O.normalize(pt)
        if curve is G1:
            out.append((int(x), int(y)))
        else:
            out.append((tuple(int(c) for c in x.coeffs), tuple(int(c) for c in y.coeffs)))
    return out


def ints_to_pyecc(curve: Curve, points: list) -> list:
    out = []
    for p in points:
        if curve is G1:
            out.append(O.Z1 if p is None else (O.FQ(p[0]), O.FQ(p[1]), O.FQ.one()))
        else:
            out.append(O.Z2 if p is None else (_fq2(p[0]), _fq2(p[1]), O.FQ2.one()))
    return out


# --- square roots and points off the subgroup ---------------------------------------------


def sqrt_fq(a: int) -> int | None:
    y = pow(a, (P + 1) // 4, P)
    return y if y * y % P == a % P else None


def sqrt_fq2(a: tuple[int, int]) -> tuple[int, int] | None:
    """sqrt(a0 + a1 i) with i^2 = -1: from n = sqrt(a0^2 + a1^2) and x0^2 = (a0 +- n)/2."""
    a0, a1 = a[0] % P, a[1] % P
    if a0 == 0 and a1 == 0:
        return (0, 0)
    n = sqrt_fq((a0 * a0 + a1 * a1) % P)
    if n is None:
        return None
    half = pow(2, -1, P)
    for s in (n, P - n):
        x0 = sqrt_fq((a0 + s) * half % P)
        if x0 is None:
            continue
        if x0 == 0:  # then a1 == 0 and a0 = -x1^2
            x1 = sqrt_fq((P - a0) % P)
            if x1 is None:
                continue
            cand = (0, x1)
        else:
            cand = (x0, a1 * pow(2 * x0, -1, P) % P)
        sq = _fq2(cand) * _fq2(cand)
        if tuple(int(c) for c in sq.coeffs) == (a0, a1):
            return cand
    return None


def curve_rhs(curve: Curve, x):
    """x^3 + b as an int (G1) or an (c0, c1) pair (G2)."""
    if curve is G1:
        return (x * x * x + 4) % P
    v = _fq2(x) * _fq2(x) * _fq2(x) + O.b2
    return tuple(int(c) for c in v.coeffs)


def random_curve_points(curve: Curve, n: int, rng: np.random.Generator) -> list:
    """n points on the curve with random x (almost surely outside the prime-order subgroup)."""
    out = []
    while len(out) < n:
        if curve is G1:
            x = int.from_bytes(rng.bytes(48), "big") % P
            y = sqrt_fq(curve_rhs(G1, x))
        else:
            x = tuple(int.from_bytes(rng.bytes(48), "big") % P for _ in range(2))
            y = sqrt_fq2(curve_rhs(G2, x))
        if y is not None:
            out.append((x, y))
    return out


def in_subgroup_slow(curve: Curve, point) -> bool:
    """The definition: [r] P == O (py_ecc arithmetic)."""
    (pt,) = ints_to_pyecc(curve, [point])
    return O.is_inf(O.multiply(pt, R))
