"""A Groth16 verifier on py_ecc alone: independent of our algebra and of arkworks."""

from __future__ import annotations

from py_ecc.optimized_bls12_381 import FQ, FQ2, FQ12, add, final_exponentiate, multiply, pairing
from py_ecc.optimized_bls12_381 import Z1 as INF1

from cuzk.algebra.curves import G1, G2


def _g1(points) -> list:
    out = []
    for p in G1.to_ints(points):
        out.append(INF1 if p is None else (FQ(p[0]), FQ(p[1]), FQ(1)))
    return out


def _g2(points) -> list:
    out = []
    for p in G2.to_ints(points):
        (x0, x1), (y0, y1) = p
        out.append((FQ2([x0, x1]), FQ2([y0, y1]), FQ2([1, 0])))
    return out


def verify_pyecc(vk, public_inputs: list[int], proof) -> bool:
    """e(A, B) == e(alpha, beta) e(vk_x, gamma) e(C, delta), each side computed separately."""
    ic = _g1(vk.ic)
    vk_x = ic[0]
    for x, p in zip(public_inputs, ic[1:], strict=True):
        vk_x = add(vk_x, multiply(p, x))
    (a,), (c,), (alpha,) = _g1(proof.a), _g1(proof.c), _g1(vk.alpha_g1)
    (b,), (beta,), (gamma,), (delta,) = _g2(proof.b), _g2(vk.beta_g2), _g2(vk.gamma_g2), _g2(vk.delta_g2)
    lhs = pairing(b, a, final_exponentiate=False)
    rhs = (
        pairing(beta, alpha, final_exponentiate=False)
        * pairing(gamma, vk_x, final_exponentiate=False)
        * pairing(delta, c, final_exponentiate=False)
    )
    return final_exponentiate(lhs * rhs.inv()) == FQ12.one()
