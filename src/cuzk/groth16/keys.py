"""Groth16 key material, named as in the paper and in bellperson.

Paper symbols -> fields: alpha, beta, gamma, delta are the toxic-waste scalars;
g1, g2 the (random) group generators used by the setup. Every point is an
affine limb array (G1 (k,2,6), G2 (k,2,2,6), Montgomery form).
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np


@dataclass
class VerifyingKey:
    alpha_g1: np.ndarray  # alpha * g1, (1,2,6)
    beta_g1: (
        np.ndarray | None
    )  # beta * g1 (bellperson keeps it; snarkjs JSON lacks it; the verifier never reads it)
    beta_g2: np.ndarray  # beta * g2, (1,2,2,6)
    gamma_g2: np.ndarray  # gamma * g2
    delta_g1: np.ndarray | None  # delta * g1 (the prover needs it; snarkjs JSON lacks it)
    delta_g2: np.ndarray  # delta * g2
    ic: np.ndarray  # (beta A_i(tau) + alpha B_i(tau) + C_i(tau)) / gamma * g1 per input (ONE first)

    @property
    def num_inputs(self) -> int:
        """Public inputs including ONE."""
        return int(self.ic.shape[0])


@dataclass
class Parameters:
    """The proving key: the vk plus the five SRS queries in bellperson's order."""

    vk: VerifyingKey
    h: np.ndarray  # tau^i (tau^m - 1) / delta * g1, i < m - 1
    l: np.ndarray  # (beta A_j + alpha B_j + C_j)(tau) / delta * g1 per aux variable
    a: np.ndarray  # A_j(tau) * g1: all inputs, then aux with a_aux_density set
    b_g1: np.ndarray  # B_j(tau) * g1: inputs with b_input_density, then aux with b_aux_density
    b_g2: np.ndarray  # B_j(tau) * g2: the same selection as b_g1
    meta: dict = field(default_factory=dict)
