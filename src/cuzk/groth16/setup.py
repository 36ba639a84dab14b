"""A local Groth16 setup with bellperson's generate_random_parameters semantics.

The toxic waste (tau, alpha, beta, gamma, delta, and the random generators g1,
g2) comes from the OS CSPRNG and is dropped when the function returns. This is
a test setup for one machine, not a ceremony: whoever ran it could forge proofs.
"""

from __future__ import annotations

import secrets
from collections.abc import Callable

import numpy as np

from cuzk.algebra import constants as C
from cuzk.algebra.curves import G1, G2
from cuzk.algebra.domain import powers
from cuzk.algebra.fields import FR, fr_mont
from cuzk.backends.base import Backend
from cuzk.errors import SetupError
from cuzk.groth16.keys import Parameters, VerifyingKey
from cuzk.groth16.qap import ConstraintMatrices, Densities, Domain, transpose
from cuzk.instrument import Timeline

Progress = Callable[[str], None]


def _nonzero_scalar() -> int:
    return secrets.randbelow(C.R - 1) + 1


def _first_zero(a: np.ndarray) -> int:
    zero = FR.is_zero(a)
    return int(np.argmax(zero)) if zero.any() else -1


def generate_parameters(
    cs: ConstraintMatrices,
    backend: Backend,
    *,
    timeline: Timeline | None = None,
    progress: Progress | None = None,
) -> Parameters:
    """Random parameters for the circuit; raises SetupError for degenerate circuits."""
    tl = timeline or Timeline("setup")
    say = progress or (lambda _msg: None)
    dom = Domain.for_constraints(cs.num_constraints)
    dens = Densities.of(cs)
    ni, n = cs.num_inputs, cs.num_constraints
    tau, alpha, beta, gamma, delta = (_nonzero_scalar() for _ in range(5))
    g1 = G1.to_affine(G1.scalar_mul(G1.generator(), FR.from_ints([_nonzero_scalar()])))
    g2 = G2.to_affine(G2.scalar_mul(G2.generator(), FR.from_ints([_nonzero_scalar()])))

    with tl.span("lagrange"):
        say(f"evaluating the QAP at tau over a domain of 2^{dom.log_m}")
        tau_powers = powers(tau, dom.m)
        lagrange = backend.to_host(backend.intt(backend.to_device(tau_powers), dom.omega))[:n]
        at, bt, ct = (backend.to_host(backend.spmv(transpose(m), lagrange)) for m in (cs.A, cs.B, cs.C))

    with tl.span("scalars"):
        z_tau = (pow(tau, dom.m, C.R) - 1) % C.R
        h_scalars = FR.scale(tau_powers[: dom.m - 1], fr_mont(z_tau * pow(delta, -1, C.R)))
        combo = FR.add(FR.add(FR.scale(at, fr_mont(beta)), FR.scale(bt, fr_mont(alpha))), ct)
        ic_scalars = FR.scale(combo[:ni], fr_mont(pow(gamma, -1, C.R)))
        l_scalars = FR.scale(combo[ni:], fr_mont(pow(delta, -1, C.R)))
        bad = _first_zero(ic_scalars)
        if bad >= 0:
            raise SetupError(
                f"public input {bad} is bound by no constraint (its ic point would be infinity, "
                "so a proof would verify for any value of it)"
            )
        bad = _first_zero(l_scalars)
        if bad >= 0:
            raise SetupError(f"aux variable {bad} is unconstrained (its l point would be infinity)")
        a_scalars = np.concatenate([at[:ni], at[ni:][dens.a_aux]])
        b_scalars = np.concatenate([bt[:ni][dens.b_input], bt[ni:][dens.b_aux]])
        if _first_zero(a_scalars) >= 0 or _first_zero(b_scalars) >= 0:
            raise SetupError(
                "a used variable evaluated to zero at tau (probability ~2^-250); run setup again"
            )

    def mul(name: str, base: np.ndarray, scalars: np.ndarray, group: str) -> np.ndarray:
        with tl.span(f"fixed_base_{name}", points=scalars.shape[0]):
            say(f"{name}: {scalars.shape[0]} {group.upper()} points")
            return backend.fixed_base_mul(base, scalars, group)  # type: ignore[arg-type]

    h = mul("h", g1, h_scalars, "g1")
    l_q = mul("l", g1, l_scalars, "g1")
    a_q = mul("a", g1, a_scalars, "g1")
    b_g1 = mul("b_g1", g1, b_scalars, "g1")
    b_g2 = mul("b_g2", g2, b_scalars, "g2")
    ic = mul("ic", g1, ic_scalars, "g1")
    singles = FR.from_ints([alpha, beta, delta])
    g1s = backend.fixed_base_mul(g1, singles, "g1")
    g2s = backend.fixed_base_mul(g2, FR.from_ints([beta, gamma, delta]), "g2")
    vk = VerifyingKey(
        alpha_g1=g1s[0:1],
        beta_g1=g1s[1:2],
        beta_g2=g2s[0:1],
        gamma_g2=g2s[1:2],
        delta_g1=g1s[2:3],
        delta_g2=g2s[2:3],
        ic=ic,
    )
    return Parameters(vk=vk, h=h, l=l_q, a=a_q, b_g1=b_g1, b_g2=b_g2)
