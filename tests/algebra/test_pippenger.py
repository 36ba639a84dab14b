"""The shared Pippenger pieces: signed digits reconstruct the scalar; Horner combines windows."""

from __future__ import annotations

import numpy as np
import pytest

from cuzk.algebra import FR, G1, G2, Curve
from cuzk.algebra import constants as C
from cuzk.algebra.fields import ints_to_limbs
from cuzk.algebra.pippenger import SCALAR_BITS, combine_windows, signed_digits, signed_windows

EDGE = [0, 1, 2, C.R - 1, C.R - 2, (1 << 254) - 1, 1 << 254, (1 << 255) - 1]


@pytest.mark.parametrize("c", [1, 2, 3, 5, 8, 13, 16, 20, 22])
def test_signed_digits_reconstruct(c: int, rng: np.random.Generator) -> None:
    values = EDGE + [int(x) for x in FR.to_ints(FR.random(40, rng))]
    digits = signed_digits(ints_to_limbs(values, 4), c)
    assert digits.shape == (len(values), signed_windows(c)) == (len(values), SCALAR_BITS // c + 1)
    half = 1 << (c - 1)
    assert (np.abs(digits[:, :-1]) <= half).all()
    for v, row in zip(values, digits, strict=True):
        assert sum(int(d) << (w * c) for w, d in enumerate(row)) == v


@pytest.mark.parametrize("curve", [pytest.param(G1, id="G1"), pytest.param(G2, id="G2")])
def test_combine_windows_is_horner(curve: Curve, rng: np.random.Generator) -> None:
    c = 7
    pts = curve.random(5, rng)
    pts[2] = curve.identity(1)[0]  # an empty window
    sums = curve.to_jacobian(pts)
    got = combine_windows(curve, sums, c)
    weights = FR.from_ints([pow(2, w * c, C.R) for w in range(5)])
    want = curve.sum_jacobian(curve.scalar_mul(pts, weights))
    assert curve.eq(got[None], want[None]).all()
    empty = combine_windows(curve, curve.to_jacobian(curve.identity(3)), c)
    assert curve.is_identity(curve.to_affine(empty[None])).all()
