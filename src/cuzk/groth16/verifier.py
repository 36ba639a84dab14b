"""Groth16 verification through py-arkworks-bls12381's pairings.

The check is e(A, B) = e(alpha, beta) e(vk_x, gamma) e(C, delta) with
vk_x = ic_0 + sum_i x_i ic_i, done as one multi-pairing
e(A, B) e(alpha, -beta) e(vk_x, -gamma) e(C, -delta) == 1. snarkjs uses the same
equation, so one verifier serves native and circom proofs. A batch of proofs
for one key is checked with a random linear combination: k + 3 pairings
instead of 4k. A malformed key or input is an error; a bad proof is False.

The two multi-scalar multiplications here (vk_x over the IC points, and the batch's
sum z_j C_j) are arkworks' host multiexp, not a backend: verification needs no
prover machinery, and it stays independent of the kernels that made the proof.
"""

from __future__ import annotations

import secrets
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import py_arkworks_bls12381 as ark

from cuzk.algebra.curves import G1, G2
from cuzk.algebra.encoding import to_arkworks_g1, to_arkworks_g2, to_arkworks_scalars
from cuzk.algebra.fields import FR
from cuzk.errors import FormatError, NonCanonicalError
from cuzk.groth16.keys import VerifyingKey
from cuzk.groth16.proof import Proof

_CHALLENGE_BITS = 128


@dataclass
class PreparedVerifyingKey:
    """The vk with the G2 side negated and everything converted to arkworks points once."""

    vk: VerifyingKey
    alpha_g1: ark.G1Point
    neg_beta_g2: ark.G2Point
    neg_gamma_g2: ark.G2Point
    neg_delta_g2: ark.G2Point
    ic: list[ark.G1Point]  # infinity (an unbound input's IC point) is arkworks' identity


def prepare(vk: VerifyingKey) -> PreparedVerifyingKey:
    neg = G2.neg(np.concatenate([vk.beta_g2, vk.gamma_g2, vk.delta_g2]))
    beta, gamma, delta = to_arkworks_g2(neg)
    return PreparedVerifyingKey(vk, to_arkworks_g1(vk.alpha_g1)[0], beta, gamma, delta, to_arkworks_g1(vk.ic))


def _input_scalars(vk: VerifyingKey, public_inputs: Sequence[int]) -> np.ndarray:
    """[1, x_1, ..., x_l] as Fr; wrong counts and values >= r are errors, not False."""
    if len(public_inputs) != vk.num_inputs - 1:
        raise FormatError(f"the key expects {vk.num_inputs - 1} public inputs, got {len(public_inputs)}")
    for i, x in enumerate(public_inputs):
        if not 0 <= int(x) < FR.modulus:
            raise NonCanonicalError(f"public input {i} is not a canonical scalar (0 <= x < r)")
    return FR.from_ints([1, *(int(x) for x in public_inputs)])


def msm_g1(points: list[ark.G1Point], scalars: np.ndarray) -> ark.G1Point:
    """sum scalars[i] points[i] for Fr scalars (Montgomery (n, 4)), by arkworks' host multiexp."""
    return ark.G1Point.multiexp_unchecked(points, to_arkworks_scalars(scalars))


def _on_curve(proofs: Sequence[Proof]) -> bool:
    """Whether every point of the proofs is on its curve. A decoded proof always is (decoding
    checks); one just computed may not be (a faulty device or upload), and is then invalid,
    where arkworks' conversion would raise ValueError."""
    return bool(
        G1.is_on_curve(np.concatenate([p.a for p in proofs] + [p.c for p in proofs])).all()
        and G2.is_on_curve(np.concatenate([p.b for p in proofs])).all()
    )


def verify(vk: VerifyingKey | PreparedVerifyingKey, public_inputs: Sequence[int], proof: Proof) -> bool:
    pvk = vk if isinstance(vk, PreparedVerifyingKey) else prepare(vk)
    vx = msm_g1(pvk.ic, _input_scalars(pvk.vk, public_inputs))
    if not _on_curve([proof]):
        return False
    a, c = to_arkworks_g1(np.concatenate([proof.a, proof.c]))
    (b,) = to_arkworks_g2(proof.b)
    return bool(
        ark.GT.pairing_check(
            [a, pvk.alpha_g1, vx, c], [b, pvk.neg_beta_g2, pvk.neg_gamma_g2, pvk.neg_delta_g2]
        )
    )


def verify_batch(
    vk: VerifyingKey | PreparedVerifyingKey,
    public_inputs: Sequence[Sequence[int]],
    proofs: Sequence[Proof],
) -> bool:
    """All proofs valid (with overwhelming probability), via one random linear combination."""
    if len(public_inputs) != len(proofs):
        raise FormatError(f"{len(proofs)} proofs but {len(public_inputs)} public input lists")
    if not proofs:
        return True
    pvk = vk if isinstance(vk, PreparedVerifyingKey) else prepare(vk)
    inputs = np.stack([_input_scalars(pvk.vk, x) for x in public_inputs])  # (k, l+1, 4)
    if not _on_curve(proofs):
        return False
    k = len(proofs)
    z = FR.from_ints([secrets.randbits(_CHALLENGE_BITS) | 1 for _ in range(k)])
    # sum_j z_j vk_x_j = sum_i (sum_j z_j x_ji) ic_i
    combined = FR.zeros(inputs.shape[1])
    for j in range(k):
        combined = FR.add(combined, FR.scale(inputs[j], z[j]))
    vk_x = msm_g1(pvk.ic, combined)
    a_z = G1.to_affine(G1.scalar_mul(np.concatenate([p.a for p in proofs]), z))
    c_z = msm_g1(to_arkworks_g1(np.concatenate([p.c for p in proofs])), z)
    z_sum = FR.zeros(1)
    for j in range(k):
        z_sum = FR.add(z_sum, z[j : j + 1])
    alpha_z = G1.to_affine(G1.scalar_mul(pvk.vk.alpha_g1, z_sum))
    g1s = [*to_arkworks_g1(np.concatenate([a_z, alpha_z])), vk_x, c_z]
    g2s = [*to_arkworks_g2(np.concatenate([p.b for p in proofs])), pvk.neg_beta_g2]
    g2s += [pvk.neg_gamma_g2, pvk.neg_delta_g2]
    return bool(ark.GT.pairing_check(g1s, g2s))
