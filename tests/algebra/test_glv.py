"""The GLV constants and scalar split of G1 (cuzk.algebra.glv) against Python big ints and the
curve: the split is exact with both halves below 2^128 on edge and random scalars, the
device's Barrett arithmetic equals it, and phi(P) = (BETA x, y) is LAMBDA P."""

from __future__ import annotations

import random

import pytest

from cuzk.algebra import constants as C
from cuzk.algebra import glv
from cuzk.algebra.curves import G1
from cuzk.algebra.fields import FR

EDGES = [
    0,
    1,
    2,
    C.R - 1,
    C.R - 2,
    glv.LAMBDA - 1,
    glv.LAMBDA,
    glv.LAMBDA + 1,
    2 * glv.LAMBDA,
    glv.LAMBDA * glv.LAMBDA,
    glv.LAMBDA * (glv.LAMBDA + 1),
    (1 << 128) - 1,
    1 << 128,
    (1 << 254),
]


def test_lambda_is_a_cube_root_of_unity_mod_r():
    assert (glv.LAMBDA**2 + glv.LAMBDA + 1) % C.R == 0
    assert glv.LAMBDA < 1 << 128
    assert pow(glv.BETA, 3, C.Q) == 1 and glv.BETA != 1


@pytest.mark.parametrize("k", EDGES + [random.Random(7).randrange(C.R) for _ in range(200)])
def test_split_is_exact_with_128_bit_halves(k):
    k1, k2 = glv.split(k)
    assert k1 + glv.LAMBDA * k2 == k
    assert 0 <= k1 < 1 << 128 and 0 <= k2 < 1 << 128
    assert glv.barrett_split(k) == (k1, k2)


def test_barrett_needs_few_corrections():
    rnd = random.Random(11)
    for k in EDGES + [rnd.randrange(C.R) for _ in range(2000)]:
        assert 0 <= k // glv.LAMBDA - ((k * glv.MU) >> 256) <= 2


def test_split_rejects_unreduced_scalars():
    with pytest.raises(ValueError, match="reduced"):
        glv.split(C.R)
    with pytest.raises(ValueError, match="reduced"):
        glv.split(-1)


def test_phi_is_lambda_times_the_point(rng):
    pts = G1.random(4, rng)
    pts[1] = 0  # the identity stays the identity
    ints = G1.to_ints(pts)
    phi = []
    for p in ints:
        phi.append(None if p is None else (p[0] * glv.BETA % C.Q, p[1]))
    mapped = G1.from_ints(phi)
    lam = FR.from_ints([glv.LAMBDA % C.R] * 4)
    want = G1.scalar_mul(pts, lam)
    assert G1.eq(G1.to_jacobian(mapped), want).all()
