"""CPU fixed-base batch multiplication against per-point scalar_mul."""

from __future__ import annotations

import numpy as np
import pytest

from cuzk.algebra import FR, G1, G2, Curve
from cuzk.algebra import constants as C
from cuzk.backends.cpu import CpuBackend
from cuzk.backends.cpu.msm import fixed_base_window

CURVES = [pytest.param(G1, id="g1"), pytest.param(G2, id="g2")]


def scalars_with_edges(n: int, rng: np.random.Generator) -> np.ndarray:
    s = FR.random(n, rng)
    s[:6] = FR.from_ints([0, 1, 2, C.R - 1, C.R - 2, (1 << 128) + 3])
    return s


# n = 4100 crosses into the 12-bit window table (8 bits below 4096); G2 stays small to be quick.
@pytest.mark.parametrize(
    ("curve", "n"),
    [(G1, 1), (G1, 50), (G1, 4100), (G2, 1), (G2, 300)],
    ids=["g1-1", "g1-50", "g1-4100", "g2-1", "g2-300"],
)
def test_fixed_base_matches_scalar_mul(curve: Curve, n: int, rng: np.random.Generator) -> None:
    assert fixed_base_window(4100) != fixed_base_window(50)
    base = curve.random(1, rng)  # not the standard generator, as parameter generation uses
    s = scalars_with_edges(max(n, 6), rng)[:n]
    got = CpuBackend().fixed_base_mul(base, s, "g1" if curve is G1 else "g2")
    assert got.shape == (n, *curve.affine_shape)
    want = curve.to_affine(curve.scalar_mul(np.repeat(base, n, axis=0), s))
    assert np.array_equal(got, want)


@pytest.mark.parametrize("curve", CURVES)
def test_fixed_base_of_infinity(curve: Curve, rng: np.random.Generator) -> None:
    got = CpuBackend().fixed_base_mul(curve.identity(1), FR.random(5, rng), "g1" if curve is G1 else "g2")
    assert curve.is_identity(got).all()
