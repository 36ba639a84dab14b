"""The verifier's host MSM (arkworks' multiexp) against the CPU backend's Pippenger, which it
replaced for the IC combination vk_x = ic_0 + sum x_i ic_i and the batch's sum z_j C_j."""

from __future__ import annotations

import numpy as np
import pytest

from cuzk.algebra import FR, G1
from cuzk.algebra import constants as C
from cuzk.algebra.encoding import from_arkworks_g1, to_arkworks_g1
from cuzk.backends.cpu import CpuBackend
from cuzk.groth16.verifier import msm_g1


@pytest.mark.parametrize("n", [1, 2, 9, 130])
def test_ic_combination_matches_the_cpu_backend(n: int, rng: np.random.Generator) -> None:
    cpu = CpuBackend()
    ic = G1.random(n, rng)
    scalars = FR.random(n, rng)
    scalars[0] = FR.one()  # the ONE input
    if n > 2:
        ic[2] = G1.identity(1)[0]  # an unbound input's IC point at infinity
        scalars[1:3] = FR.from_ints([0, C.R - 1])
    want = G1.to_affine(cpu.msm(cpu.load_bases(ic, "g1"), scalars)[None])
    got = from_arkworks_g1([msm_g1(to_arkworks_g1(ic), scalars)])
    assert np.array_equal(got, want)


def test_all_zero_scalars_give_infinity(rng: np.random.Generator) -> None:
    got = from_arkworks_g1([msm_g1(to_arkworks_g1(G1.random(4, rng)), FR.zeros(4))])
    assert G1.is_identity(got).all()
