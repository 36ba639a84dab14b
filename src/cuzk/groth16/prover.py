"""The Groth16 prover in three phases, density-aware exactly as bellperson.

    synthesize(cs, witnesses)  -> Assignment   a = A.w, b = B.w, c = C.w; refuses a bad witness
    start(assignment, srs)     -> Pending      NTTs and H; G1 MSMs over h, l, a, b_g1
    finalize(pending, srs)     -> [Proof]      G2 MSM over b_g2; assembly with random r, s

Paper symbols: A = alpha + sum a_i A_i(tau) + r delta (in G1), B = beta + sum a_i
B_i(tau) + s delta (in G2, and its G1 twin B1), C = s A + r B1 - r s delta + H + L
with H = h(tau) Z(tau) / delta and L = sum_aux a_j (beta A_j + alpha B_j + C_j) / delta.
A batch of k witnesses of one topology runs through the same calls; the MSMs
take all k scalar vectors at once. Each phase records spans (names are part of
the output contract): synthesis, ntt_h, msm_h, msm_l, msm_a, msm_b_g1,
msm_b_g2, epilogue.
"""

from __future__ import annotations

import secrets
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Protocol

import numpy as np

from cuzk.algebra import constants as C
from cuzk.algebra.curves import G1, G2
from cuzk.algebra.fields import FR
from cuzk.backends.base import Backend
from cuzk.errors import CircuitError, UnsatisfiedError
from cuzk.groth16.proof import Proof
from cuzk.groth16.qap import ConstraintMatrices
from cuzk.groth16.srs import ResidentParameters
from cuzk.instrument import Timeline


class WitnessLike(Protocol):
    inputs: np.ndarray  # (num_inputs, 4) Fr Montgomery, ONE first
    aux: np.ndarray  # (num_aux, 4)


@dataclass
class Assignment:
    """One or more satisfied witnesses of one topology and their A/B/C evaluations."""

    inputs: np.ndarray  # (k, num_inputs, 4) host
    aux: np.ndarray  # (k, num_aux, 4) host
    abc: list[tuple[Any, Any, Any]]  # per circuit: a, b, c as backend arrays (num_constraints, 4)
    timeline: Timeline

    @property
    def k(self) -> int:
        return int(self.inputs.shape[0])


@dataclass
class Pending:
    """Everything finalize needs; the large a/b/c vectors are already released."""

    inputs: np.ndarray
    b_scalars: Any  # (k, b_size, 4) for the G2 MSM, on the G2 backend's side
    h: np.ndarray  # (k, 3, 6) Jacobian MSM results
    l: np.ndarray
    a: np.ndarray
    b_g1: np.ndarray
    timeline: Timeline


def _check_witness(cs: ConstraintMatrices, w: WitnessLike, index: int) -> None:
    want = {"inputs": (cs.num_inputs, 4), "aux": (cs.num_aux, 4)}
    for name, shape in want.items():
        arr = getattr(w, name)
        if arr.shape != shape or arr.dtype != np.uint64:
            raise CircuitError(f"witness {index}: {name} has shape {arr.shape}, circuit needs {shape} uint64")
    if not np.array_equal(w.inputs[0], FR.one()):
        raise CircuitError(f"witness {index}: input 0 must be ONE")


def synthesize(
    cs: ConstraintMatrices,
    witnesses: Sequence[WitnessLike],
    backend: Backend,
    *,
    timeline: Timeline | None = None,
) -> Assignment:
    """Evaluate A.w, B.w, C.w and refuse the batch if any row fails a_i * b_i == c_i."""
    tl = timeline or Timeline()
    if not witnesses:
        raise CircuitError("nothing to prove: no witnesses given")
    xp = backend.xp
    abc = []
    with tl.span("synthesis", circuits=len(witnesses)):
        for j, w in enumerate(witnesses):
            _check_witness(cs, w, j)
            full = backend.to_device(np.concatenate([w.inputs, w.aux]))
            a, b, c = (backend.spmv(m, full) for m in (cs.A, cs.B, cs.C))
            bad_rows = xp.any(backend.fr_mul(a, b) != c, axis=1)
            if bool(bad_rows.any()):
                i = int(xp.argmax(bad_rows))
                name = cs.constraint_name(i)
                who = f"witness {j}: " if len(witnesses) > 1 else ""
                raise UnsatisfiedError(f"{who}constraint {i} ({name}) is not satisfied", name, i)
            abc.append((a, b, c))
    inputs = np.stack([w.inputs for w in witnesses])
    aux = np.stack([w.aux for w in witnesses])
    return Assignment(inputs=inputs, aux=aux, abc=abc, timeline=tl)


def _h_coefficients(backend: Backend, srs: ResidentParameters, a: Any, b: Any, c: Any) -> Any:
    """h(X) = (A(X) B(X) - C(X)) / Z(X), evaluated on the coset g H and interpolated back."""
    xp, dom = backend.xp, srs.domain
    evals = []
    for v in (a, b, c):
        padded = xp.zeros((dom.m, 4), dtype=xp.uint64)
        padded[: v.shape[0]] = v
        evals.append(backend.ntt(backend.intt(padded, dom.omega), dom.omega, coset=dom.coset))
    quotient = backend.fr_mul_sub_scale(evals[0], evals[1], evals[2], dom.z_on_coset_inv)
    return backend.intt(quotient, dom.omega, coset=dom.coset)[: dom.m - 1]


def start(assignment: Assignment, srs: ResidentParameters) -> Pending:
    """The GPU part: NTTs, H, and the G1 MSMs (h, l, a, b_g1)."""
    tl, be = assignment.timeline, srs.backend
    with tl.span("ntt_h"):
        hs = [_h_coefficients(be, srs, a, b, c) for a, b, c in assignment.abc]
        assignment.abc.clear()  # release a/b/c early: memory backpressure
        h_scalars = be.xp.stack(hs)
        be.synchronize()  # queued device work belongs to this span, not to msm_h
    with tl.span("msm_h"):
        h = be.msm(srs.h, h_scalars)
    # The witness goes to the backend once; the a and b scalar vectors are gathered
    # there by the density indices (on the GPU a host-side gather of a 13M-variable
    # witness cost more than the MSM it feeds).
    xp = be.xp
    with tl.span("msm_l"):
        aux = be.to_device(assignment.aux)
        inputs = be.to_device(assignment.inputs)
        l_pt = be.msm(srs.l, aux)
    with tl.span("msm_a"):
        a_pt = be.msm(srs.a, xp.concatenate([inputs, aux[:, srs.a_aux_idx]], axis=1))
    with tl.span("msm_b_g1"):
        b_scalars = xp.concatenate([inputs[:, srs.b_input_idx], aux[:, srs.b_aux_idx]], axis=1)
        b1_pt = be.msm(srs.b_g1, b_scalars)
    if srs.g2_backend is not be:
        b_scalars = be.to_host(b_scalars)
    return Pending(
        inputs=assignment.inputs, b_scalars=b_scalars, h=h, l=l_pt, a=a_pt, b_g1=b1_pt, timeline=tl
    )


def _random_scalars(k: int) -> np.ndarray:
    return FR.from_ints([secrets.randbelow(C.R) for _ in range(k)])


def finalize(pending: Pending, srs: ResidentParameters) -> list[Proof]:
    """The CPU part: the G2 MSM and the assembly of A, B, C with fresh r, s."""
    tl, vk = pending.timeline, srs.vk
    with tl.span("msm_b_g2"):
        b2_pt = srs.g2_backend.msm(srs.b_g2, srs.g2_backend.to_device(pending.b_scalars))
    with tl.span("epilogue"):
        proofs = assemble(
            vk,
            sum_a=pending.a,
            sum_b_g1=pending.b_g1,
            sum_b_g2=b2_pt,
            sum_c=G1.add(pending.h, pending.l),
        )
    return proofs


class AssemblyKey(Protocol):
    """The key points assembly needs: a VerifyingKey, or a snarkjs Zkey."""

    alpha_g1: np.ndarray
    beta_g1: np.ndarray
    beta_g2: np.ndarray
    delta_g1: np.ndarray
    delta_g2: np.ndarray


def assemble(
    key: AssemblyKey,
    *,
    sum_a: np.ndarray,
    sum_b_g1: np.ndarray,
    sum_b_g2: np.ndarray,
    sum_c: np.ndarray,
) -> list[Proof]:
    """A, B, C for k proofs from their MSM sums, with fresh r, s from the OS CSPRNG.

    A = alpha + sum_a + r delta; B = beta + sum_b + s delta (G2, and B1 in G1);
    C = s A + r B1 - r s delta + sum_c, where sum_c is H + L (bellperson) or
    H + the C section (snarkjs). Key points are affine (1, ...); sums Jacobian (k, ...).
    """
    alpha_g1, beta_g1, beta_g2 = key.alpha_g1, key.beta_g1, key.beta_g2
    delta_g1, delta_g2 = key.delta_g1, key.delta_g2
    k = sum_a.shape[0]
    r, s = _random_scalars(k), _random_scalars(k)
    rep = lambda p: np.repeat(p, k, axis=0)  # noqa: E731 - one key point, k copies
    delta1 = rep(delta_g1)
    a_jac = G1.add_mixed(G1.add(G1.scalar_mul(delta1, r), sum_a), rep(alpha_g1))
    b_jac = G2.add_mixed(G2.add(G2.scalar_mul(rep(delta_g2), s), sum_b_g2), rep(beta_g2))
    b1_jac = G1.add_mixed(G1.add(G1.scalar_mul(delta1, s), sum_b_g1), rep(beta_g1))
    a_aff, b1_aff = G1.to_affine(a_jac), G1.to_affine(b1_jac)
    c_jac = G1.add(G1.scalar_mul(a_aff, s), G1.scalar_mul(b1_aff, r))
    c_jac = G1.add_mixed(c_jac, G1.neg(G1.to_affine(G1.scalar_mul(delta1, FR.mul(r, s)))))
    c_aff = G1.to_affine(G1.add(c_jac, sum_c))
    b_aff = G2.to_affine(b_jac)
    return [Proof(a=a_aff[j : j + 1], b=b_aff[j : j + 1], c=c_aff[j : j + 1]) for j in range(k)]


def public_inputs(pending_or_assignment: Assignment | Pending) -> list[list[int]]:
    """Per circuit: the public inputs as canonical ints, without ONE."""
    return [FR.to_ints(x[1:]) for x in pending_or_assignment.inputs]
