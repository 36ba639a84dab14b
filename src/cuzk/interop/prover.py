"""The Groth16 prover for snarkjs keys, in the native prover's phases and span names.

    load_proving_key(zkey, backend)  -> ZkeyProvingKey  CSR A, B from section 4; sections 5-9 as Bases
    synthesize(pk, witnesses)        -> Assignment      A_T = A.w, B_T = B.w, C_T = A_T * B_T
    start(assignment, pk)            -> Pending         H; G1 MSMs over H, A, B1, C
    finalize(pending, pk)            -> [Proof]         G2 MSM over B2; assembly with random r, s
    prove(pk, witnesses)                                all of the above, then each proof is verified

snarkjs's H convention (FORMATS.md section 2), which differs from bellperson's:
the evaluation domain has n = domainSize points with the generator-5 root w_n;
A_T, B_T, C_T are interpolated (iNTT), multiplied coefficient-wise by w_2n^i
and evaluated again (NTT), which gives their values at the odd 2n-th roots
w_2n^(2j+1); h_j = a_j b_j - c_j with no division by Z, because the key's H
points already hold L^(2n)_(2j+1)(tau) / delta. C_T is A_T * B_T pointwise: the
key has no C matrix, so a witness that breaks a constraint is not detected in
synthesis; it yields a proof that fails the final verification (ProofError).

Paper symbols: A = alpha + sum w_i A_i(tau) + r delta; B = beta + sum w_i B_i(tau)
+ s delta (G2, and its G1 twin B1); C = sum_(private i) w_i C_i + H + s A + r B1
- r s delta. Spans: synthesis, ntt_h, msm_h, msm_a, msm_b_g1, msm_l (the C
section), msm_b_g2, epilogue, verify.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from cuzk.algebra import constants as C
from cuzk.algebra.curves import G1
from cuzk.algebra.fields import FR
from cuzk.backends.base import Backend, Bases, CsrMatrix
from cuzk.errors import CircuitError, ProofError
from cuzk.groth16.proof import Proof
from cuzk.groth16.prover import assemble
from cuzk.groth16.verifier import PreparedVerifyingKey, prepare, verify
from cuzk.instrument import Timeline
from cuzk.interop.wtns import read_wtns
from cuzk.interop.zkey import Zkey, warn_if_unbound

WitnessSource = np.ndarray | str | os.PathLike[str]


@dataclass
class ZkeyProvingKey:
    """A zkey made resident on a backend (the G2 query may live on another, e.g. the CPU)."""

    zkey: Zkey
    backend: Backend
    g2_backend: Backend
    A: CsrMatrix  # (domainSize, nVars), Montgomery
    B: CsrMatrix
    a: Bases  # section 5
    b1: Bases  # section 6
    b2: Bases  # section 7, on g2_backend
    c: Bases  # section 8
    h: Bases  # section 9
    omega: int  # w_n, generator-5 root
    coset: int  # w_2n: its powers shift the domain to the odd 2n-th roots
    pvk: PreparedVerifyingKey

    @property
    def n_public(self) -> int:
        return self.zkey.n_public


def load_proving_key(zkey: Zkey, backend: Backend, *, g2_backend: Backend | None = None) -> ZkeyProvingKey:
    warn_if_unbound(zkey.ic, str(zkey.path or "zkey"))
    g2_be = g2_backend or backend
    a_mat, b_mat = zkey.matrices()
    log_n = zkey.log_n
    return ZkeyProvingKey(
        zkey=zkey,
        backend=backend,
        g2_backend=g2_be,
        A=a_mat,
        B=b_mat,
        a=backend.load_bases(zkey.a, "g1"),
        b1=backend.load_bases(zkey.b1, "g1"),
        b2=g2_be.load_bases(zkey.b2, "g2"),
        c=backend.load_bases(zkey.c, "g1"),
        h=backend.load_bases(zkey.h, "g1"),
        omega=C.root_of_unity(log_n, C.SNARKJS_GENERATOR),
        coset=C.root_of_unity(log_n + 1, C.SNARKJS_GENERATOR),
        pvk=prepare(zkey.verifying_key()),
    )


@dataclass
class Assignment:
    witness: np.ndarray  # (k, nVars, 4) host, Montgomery
    abc: list[tuple[Any, Any, Any]]  # per circuit A_T, B_T, C_T (domainSize, 4) backend arrays
    timeline: Timeline

    @property
    def k(self) -> int:
        return int(self.witness.shape[0])


@dataclass
class Pending:
    witness: np.ndarray
    h: np.ndarray  # (k, 3, 6) Jacobian MSM results
    a: np.ndarray
    b1: np.ndarray
    c: np.ndarray
    timeline: Timeline


def _load_witness(pk: ZkeyProvingKey, source: WitnessSource, index: int) -> np.ndarray:
    w = read_wtns(source) if isinstance(source, str | os.PathLike) else source
    who = f"witness {index}" if not isinstance(source, str | os.PathLike) else str(source)
    if w.dtype != np.uint64 or w.ndim != 2 or w.shape[1] != 4:
        raise CircuitError(f"{who}: expected (nVars, 4) uint64 Fr limbs, got {w.shape} {w.dtype}")
    if w.shape[0] != pk.zkey.n_vars:
        raise CircuitError(
            f"{who} has {w.shape[0]} values but the key's circuit has {pk.zkey.n_vars} signals"
        )
    if not np.array_equal(w[0], FR.one()):
        raise CircuitError(f"{who}: value 0 must be ONE")
    return w


def synthesize(
    pk: ZkeyProvingKey, witnesses: Sequence[WitnessSource], *, timeline: Timeline | None = None
) -> Assignment:
    """Load the witnesses and evaluate A_T = A.w, B_T = B.w and C_T = A_T * B_T on the domain."""
    tl = timeline or Timeline()
    if not witnesses:
        raise CircuitError("nothing to prove: no witnesses given")
    be = pk.backend
    with tl.span("synthesis", circuits=len(witnesses)):
        ws = np.stack([_load_witness(pk, w, j) for j, w in enumerate(witnesses)])
        abc = []
        for w in ws:
            dev = be.to_device(w)
            a_t, b_t = be.spmv(pk.A, dev), be.spmv(pk.B, dev)
            abc.append((a_t, b_t, be.fr_mul(a_t, b_t)))
    return Assignment(witness=ws, abc=abc, timeline=tl)


def _h_odd(be: Backend, pk: ZkeyProvingKey, a: Any, b: Any, c: Any) -> Any:
    """a b - c at the odd 2n-th roots: each vector is interpolated and re-evaluated on w_2n * <w_n>."""
    odd = [be.ntt(be.intt(v, pk.omega), pk.omega, coset=pk.coset) for v in (a, b, c)]
    return be.fr_sub(be.fr_mul(odd[0], odd[1]), odd[2])


def start(assignment: Assignment, pk: ZkeyProvingKey) -> Pending:
    """H and the G1 MSMs (H, A, B1, C): the part that belongs on the accelerator."""
    tl, be, xp = assignment.timeline, pk.backend, pk.backend.xp
    with tl.span("ntt_h"):
        hs = [_h_odd(be, pk, a, b, c) for a, b, c in assignment.abc]
        assignment.abc.clear()  # release the evaluations before the MSMs
        h_scalars = xp.stack(hs)
        be.synchronize()  # queued device work belongs to this span, not to msm_h
    with tl.span("msm_h"):
        h = be.msm(pk.h, h_scalars)
    w = be.to_device(assignment.witness)
    with tl.span("msm_a"):
        a = be.msm(pk.a, w)
    with tl.span("msm_b_g1"):
        b1 = be.msm(pk.b1, w)
    with tl.span("msm_l"):
        c = be.msm(pk.c, xp.ascontiguousarray(w[:, pk.n_public + 1 :]))
    return Pending(witness=assignment.witness, h=h, a=a, b1=b1, c=c, timeline=tl)


def finalize(pending: Pending, pk: ZkeyProvingKey) -> list[Proof]:
    """The G2 MSM and the assembly with fresh r, s from the OS CSPRNG."""
    tl, zk = pending.timeline, pk.zkey
    with tl.span("msm_b_g2"):
        b2 = pk.g2_backend.msm(pk.b2, pk.g2_backend.to_device(pending.witness))
    with tl.span("epilogue"):
        proofs = assemble(
            zk,
            sum_a=pending.a,
            sum_b_g1=pending.b1,
            sum_b_g2=b2,
            sum_c=G1.add(pending.h, pending.c),
        )
    return proofs


def public_signals(witness: np.ndarray, n_public: int) -> list[int]:
    """Witness values 1..nPublic as canonical ints: outputs first, then public inputs (public.json)."""
    return FR.to_ints(witness[1 : n_public + 1])


def prove(
    pk: ZkeyProvingKey,
    witnesses: Sequence[WitnessSource],
    *,
    timeline: Timeline | None = None,
    check: bool = True,
) -> tuple[list[Proof], list[list[int]]]:
    """Proofs and public signals per witness; with `check`, each proof is verified before it is returned."""
    tl = timeline or Timeline()
    assignment = synthesize(pk, witnesses, timeline=tl)
    ws = assignment.witness
    proofs = finalize(start(assignment, pk), pk)
    publics = [public_signals(w, pk.n_public) for w in ws]
    if check:
        with tl.span("verify"):
            for j, (proof, pub) in enumerate(zip(proofs, publics, strict=True)):
                if not verify(pk.pvk, pub, proof):
                    who = f"witness {j}: " if len(proofs) > 1 else ""
                    raise ProofError(
                        f"{who}the proof does not verify: the witness does not satisfy the circuit "
                        "(or the key is damaged)"
                    )
    return proofs, publics
