"""Pairing sanity through py_arkworks: our points and scalar multiples behave bilinearly."""

from __future__ import annotations

import numpy as np
import py_arkworks_bls12381 as ark

from cuzk.algebra import FR, G1, G2
from cuzk.algebra import encoding as E


def gt_pow(x: ark.GT, k: int) -> ark.GT:
    """x^k by square-and-multiply (py_arkworks' GT has multiplication but no power)."""
    acc = ark.GT.one()
    for bit in bin(k)[2:]:
        acc = acc * acc
        if bit == "1":
            acc = acc * x
    return acc


def test_bilinearity_of_our_points(rng: np.random.Generator) -> None:
    p, q = G1.random(1, rng), G2.random(1, rng)
    s = FR.random(2, rng)
    a, b = FR.to_ints(s)
    ap = G1.to_affine(G1.scalar_mul(p, s[:1]))
    bq = G2.to_affine(G2.scalar_mul(q, s[1:]))
    (pa,) = E.to_arkworks_g1(ap, check=True)
    (qb,) = E.to_arkworks_g2(bq, check=True)
    (p0,), (q0,) = E.to_arkworks_g1(p), E.to_arkworks_g2(q)
    ab = ark.Scalar(a * b % FR.modulus)
    lhs = ark.GT.pairing(pa, qb)
    assert lhs == gt_pow(ark.GT.pairing(p0, q0), a * b % FR.modulus)
    assert lhs == ark.GT.pairing(p0 * ab, q0)
    assert lhs != ark.GT.pairing(p0, q0)
    # e(aP, bQ) e(-abP, Q) == 1, through our own negation and the compressed encoding.
    abp = G1.to_affine(G1.scalar_mul(p, FR.from_ints([a * b % FR.modulus])))
    (neg,) = [ark.G1Point.from_compressed_bytes(bytes(r)) for r in E.encode_g1(G1.neg(abp))]
    assert ark.GT.pairing_check([pa, neg], [qb, q0])
