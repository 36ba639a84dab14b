"""The Groth16 prover in three phases, for bellperson and snarkjs keys alike.

    synthesize(key, witnesses, backend) -> Assignment   the witnesses; a = A.w, b = B.w, c = C.w
    synthesize_staged(key, inputs, w)   -> Assignment   the same for a witness already on the backend
    start(assignment, key)              -> Pending      H; G1 MSMs over h, the private query, a, b_g1
    finalize(pending, key)              -> [Proof]      G2 MSM over b_g2; assembly with random r, s
    prove(key, witnesses)               -> ProveResult  the three in order, then batch verification

Paper symbols: A = alpha + sum w_i A_i(tau) + r delta (in G1), B = beta + sum w_i
B_i(tau) + s delta (in G2, and its G1 twin B1), C = s A + r B1 - r s delta + H + L
with H = h(tau) Z(tau) / delta and L = sum_private w_j (beta A_j + alpha B_j + C_j)(tau)
/ delta (bellperson's L query, snarkjs's C section). A key is a `ProvingKey`: made
by `make_resident` from bellperson parameters, or by `cuzk.interop.prover.load_proving_key`
from a snarkjs zkey. Where their conventions differ (the QAP, the query scalars) the
key carries a strategy object from `conventions.py`. A batch of k witnesses of one
key runs through the same calls; the MSMs take all k scalar vectors at once.

Spans (the output contract, one meaning each): synthesis (with sub-spans witness:
obtaining the witness vectors, and matvec: A.w, B.w, C.w and the satisfaction check),
ntt_h, msm_h, upload_witness (the witness to the backend, once), msm_l (bellperson's L
query) or msm_c (snarkjs's C section), msm_a, msm_b_g1, msm_b_g2, epilogue, verify.
"""

from __future__ import annotations

import os
import secrets
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Protocol

import numpy as np

from cuzk.algebra import constants as C
from cuzk.algebra.curves import G1, G2
from cuzk.algebra.fields import FR
from cuzk.backends.base import Backend, Bases, CsrMatrix
from cuzk.errors import CircuitError, ParamsError, ProofError, UnsatisfiedError
from cuzk.groth16.conventions import QapConvention, QueryScalars, domain_sized
from cuzk.groth16.keys import VerifyingKey
from cuzk.groth16.proof import Proof, proofs_to_bytes
from cuzk.groth16.verifier import PreparedVerifyingKey, verify, verify_batch
from cuzk.instrument import Timeline


class WitnessLike(Protocol):
    """A bellperson-style witness (what `Circuit.witness` returns)."""

    inputs: np.ndarray  # (num_inputs, 4) Fr Montgomery, ONE first
    aux: np.ndarray  # (num_aux, 4)


#: A witness as callers hold it: a (num_vars, 4) Fr array, bellperson inputs/aux, a .wtns
#: path (snarkjs keys), or a callable that computes one of these, so that computing the
#: witness is timed inside synthesis (as the reference counts it).
WitnessSource = np.ndarray | WitnessLike | str | os.PathLike[str] | Callable[[], np.ndarray | WitnessLike]


class ProvingKey(Protocol):
    """What the prover reads from a key. Witness columns are [ONE, public inputs | private]."""

    backend: Backend  # H and the G1 MSMs run here
    g2_backend: Backend  # where the B query on G2 lives (the CPU, to keep finalize off the GPU)
    vk: VerifyingKey  # alpha, beta, delta for assembly; ic for verification
    pvk: PreparedVerifyingKey
    qap: QapConvention
    scalars: QueryScalars
    h: Bases
    l: Bases  # the private query: bellperson's L, snarkjs's C section
    a: Bases
    b_g1: Bases
    b_g2: Bases  # on g2_backend

    @property
    def A(self) -> CsrMatrix: ...
    @property
    def B(self) -> CsrMatrix: ...
    @property
    def C(self) -> CsrMatrix | None: ...  # None: the key has no C matrix (snarkjs); c = a * b
    @property
    def num_inputs(self) -> int: ...  # ONE and the public inputs
    @property
    def num_vars(self) -> int: ...

    def constraint_name(self, i: int) -> str: ...

    def witness_vector(self, source: Any, who: str) -> np.ndarray:
        """A caller's witness as a host (num_vars, 4) Fr array; CircuitError if it cannot be one."""
        ...


@dataclass
class Assignment:
    """One or more witnesses of one key and their A/B/C evaluations."""

    witness: Any  # (k, num_vars, 4) Montgomery: host, or the backend's copy staged ahead
    inputs: np.ndarray  # (k, num_inputs, 4) host: ONE and the public inputs, what finalize keeps
    abc: list[tuple[Any, Any, Any]]  # per circuit: a, b, c as backend arrays (rows, 4)
    timeline: Timeline

    @property
    def k(self) -> int:
        return int(self.inputs.shape[0])


@dataclass
class Pending:
    """Everything finalize needs; the large a/b/c vectors are already released."""

    inputs: np.ndarray  # (k, num_inputs, 4) host: ONE and the public inputs
    b_scalars: Any  # (k, b_size, 4) for the G2 MSM, on the G2 backend's side
    h: np.ndarray  # (k, 3, 6) Jacobian MSM results
    l: np.ndarray
    a: np.ndarray
    b_g1: np.ndarray
    timeline: Timeline
    b_g2: np.ndarray | None = None  # the G2 sum once `msm_b_g2` ran (in `start` with g2=True)


@dataclass
class ProveResult:
    proofs: list[Proof]
    public_inputs: list[list[int]]  # per proof, without ONE (snarkjs: public.json order)
    timeline: Timeline

    def proof_bytes(self) -> bytes:
        return proofs_to_bytes(self.proofs)


def _witness_vector(key: ProvingKey, source: WitnessSource, j: int) -> np.ndarray:
    who = os.fspath(source) if isinstance(source, str | os.PathLike) else f"witness {j}"
    w = key.witness_vector(source() if callable(source) else source, who)
    if w.dtype != np.uint64 or w.ndim != 2 or w.shape[1] != 4:
        raise CircuitError(f"{who}: expected (n, 4) uint64 Fr limbs, got {w.shape} {w.dtype}")
    if w.shape[0] != key.num_vars:
        raise CircuitError(
            f"{who} has {w.shape[0]} values, but the key's circuit has {key.num_vars} variables"
        )
    if not np.array_equal(w[0], FR.one()):
        raise CircuitError(f"{who}: input 0 must be ONE")
    return w


def evaluate(
    key: Any, be: Backend, w: np.ndarray, who: str = "", rows: int | None = None
) -> tuple[Any, Any, Any]:
    """a = A.w, b = B.w, c = C.w for one witness [inputs | aux]; UnsatisfiedError names the first bad row.

    `key` needs only the matrices (A, B, C or None) and `constraint_name`: a proving key, or a
    recorded topology (the engine's synthesis workers, which hold no parameters). `rows`: the
    QAP domain's length (`QapConvention.rows`); the vectors then come that long, zero past the
    last constraint, so the H transforms can run in their memory.
    """
    cs = getattr(key, "cs", key)
    if hasattr(
        cs, "evaluate_vector"
    ):  # a replicated topology: a copy at a time on the backend, no full matrix
        a, b, c = cs.evaluate_vector(be.to_device(w), be, rows=rows)  # a staged witness stays where it is
        return _checked(key, be, a, b, c, who)
    full = be.to_device(w)
    a, b = domain_sized(be, be.spmv(key.A, full), rows), domain_sized(be, be.spmv(key.B, full), rows)
    if key.C is None:
        # snarkjs keys carry no C matrix: c is a * b by construction, so a witness that breaks
        # a constraint cannot be named here; its proof fails the final verification.
        return a, b, be.fr_mul(a, b)
    return _checked(key, be, a, b, domain_sized(be, be.spmv(key.C, full), rows), who)


def _checked(key: Any, be: Backend, a: Any, b: Any, c: Any, who: str) -> tuple[Any, Any, Any]:
    """(a, b, c) once every row has a * b == c; else UnsatisfiedError naming the first bad row."""
    with be.activate():
        bad_rows = be.xp.any(be.fr_mul(a, b) != c, axis=1)
        bad = bool(be.to_host(bad_rows.any()))  # to_host: the read waits by event (Runtime.settle)
        i = int(be.xp.argmax(bad_rows)) if bad else -1
    if bad:
        name = key.constraint_name(i)
        raise UnsatisfiedError(f"{who}constraint {i} ({name}) is not satisfied", name, i)
    return a, b, c


def stack_witnesses(key: ProvingKey, witnesses: Sequence[WitnessSource] | np.ndarray) -> np.ndarray:
    """The witnesses, checked against the key, as one (k, num_vars, 4) host array."""
    if not len(witnesses):
        raise CircuitError("nothing to prove: no witnesses given")
    if isinstance(witnesses, np.ndarray) and witnesses.ndim == 3:
        for j in range(witnesses.shape[0]):  # checks on views: a stacked batch is not copied again
            _witness_vector(key, witnesses[j], j)
        return witnesses
    return np.stack([_witness_vector(key, src, j) for j, src in enumerate(witnesses)])


def synthesize(
    key: ProvingKey,
    witnesses: Sequence[WitnessSource] | np.ndarray,
    backend: Backend | None = None,
    *,
    timeline: Timeline | None = None,
) -> Assignment:
    """Obtain the witnesses, evaluate A.w, B.w, C.w, and refuse the batch if a row fails a b == c."""
    tl = timeline or Timeline()
    be, k = backend or key.backend, len(witnesses)
    with tl.span("synthesis", circuits=k):
        with tl.span("witness"):
            ws = stack_witnesses(key, witnesses)
        with tl.span("matvec"):
            abc = [
                evaluate(key, be, ws[j], f"witness {j}: " if k > 1 else "", key.qap.rows) for j in range(k)
            ]
    inputs = ws[:, : key.num_inputs].copy()  # not a view: the witness can go once it is uploaded
    return Assignment(witness=ws, inputs=inputs, abc=abc, timeline=tl)


def synthesize_staged(
    key: ProvingKey,
    inputs: np.ndarray,
    witness: Any,
    backend: Backend,
    *,
    timeline: Timeline | None = None,
) -> Assignment:
    """`synthesize` for witnesses the engine already put on the backend (`Backend.stage`).

    The host keeps only each witness's public inputs: at porep-32g a host stack of the
    whole witness (4.2 GB, freshly faulted in) was most of the GPU worker's 2.2 s staging.
    """
    tl = timeline or Timeline()
    k = inputs.shape[0] if inputs.ndim == 3 else 0
    if not k or inputs.shape != (k, key.num_inputs, 4) or inputs.dtype != np.uint64:
        raise CircuitError(
            f"expected (k, {key.num_inputs}, 4) uint64 public inputs, got {inputs.shape} {inputs.dtype}"
        )
    if tuple(witness.shape) != (k, key.num_vars, 4):
        raise CircuitError(
            f"staged witnesses have shape {tuple(witness.shape)}, the key needs ({k}, {key.num_vars}, 4)"
        )
    for j in range(k):
        if not np.array_equal(inputs[j, 0], FR.one()):
            raise CircuitError(f"witness {j}: input 0 must be ONE")
    with tl.span("synthesis", circuits=k), tl.span("matvec"):
        abc = [
            evaluate(key, backend, witness[j], f"witness {j}: " if k > 1 else "", key.qap.rows)
            for j in range(k)
        ]
    return Assignment(witness=witness, inputs=inputs, abc=abc, timeline=tl)


def start(
    assignment: Assignment,
    key: ProvingKey,
    *,
    windows: Mapping[str, int] | None = None,
    checkpoint: Callable[[], None] | None = None,
    g2: bool = False,
) -> Pending:
    """The accelerator's part: H, and the G1 MSMs (h, the private query, a, b_g1).

    `windows` overrides the Pippenger window per query (`h`, `l`, `a`, `b_g1`; `l` is
    the private query, the C section of a zkey): the `msm.window.*` toggles. `checkpoint` is
    called between the phases: the engine lets an urgent unit use the device there. `g2`: the
    G2 MSM too (`msm_b_g2`), for a caller that holds the device now and wants no later queueing
    for it (the engine's urgent units).
    """
    with key.backend.activate():  # the H stack and the query gathers count in its memory
        pending = _start(assignment, key, dict(windows or {}), checkpoint or (lambda: None))
    if g2:
        msm_b_g2(pending, key, windows=windows)
    return pending


def _start(
    assignment: Assignment, key: ProvingKey, win: dict[str, int], pause: Callable[[], None]
) -> Pending:
    tl, be, q = assignment.timeline, key.backend, key.scalars
    with tl.span("ntt_h"):
        # The vectors are the transforms' memory (QapConvention.h), so each proof's go as its
        # H is made; one proof's H is used where it lies, not stacked into a copy.
        hs = []
        for a, b, c in assignment.abc:
            hs.append(key.qap.h(be, a, b, c))
            del a, b, c
        h_scalars = hs[0][None] if len(hs) == 1 else be.xp.stack(hs)
        del hs
        be.synchronize()  # queued device work belongs to this span, not to msm_h
        # Released early (memory backpressure), but only once no queued kernel reads them: a
        # pre-staged array's block returns to the upload stream's arena (Backend.stage), whose
        # next copy does not wait for the compute stream.
        assignment.abc.clear()
    pause()
    with tl.span("msm_h"):
        h = be.msm(key.h, h_scalars, window=win.get("h"))
    del h_scalars
    pause()
    # The witness goes to the backend once; the query scalars are views or gathers of it
    # there (on the GPU a host-side gather of a 13M-variable witness cost more than the MSM).
    # Its own span: at real size the upload (4.2 GB) was most of what msm_l reported.
    with tl.span("upload_witness"):
        w = be.to_device(assignment.witness)  # a staged witness stays where it is
        be.synchronize()  # the copy belongs to this span, not to the first MSM's
    with tl.span(q.private_span):
        l_pt = be.msm(key.l, q.private(w), window=win.get("l"))
    pause()
    with tl.span("msm_a"):
        a_pt = be.msm(key.a, q.a(w), window=win.get("a"))
    with tl.span("msm_b_g1"):
        b_scalars = q.b(w)
        b1_pt = be.msm(key.b_g1, b_scalars, window=win.get("b_g1"))
    if key.g2_backend.xp is not be.xp:  # the CPU's G2 MSM (a streamed one reads them where they are)
        b_scalars = be.to_host(b_scalars)
    return Pending(
        inputs=assignment.inputs, b_scalars=b_scalars, h=h, l=l_pt, a=a_pt, b_g1=b1_pt, timeline=tl
    )


def finalize(pending: Pending, key: ProvingKey, *, windows: Mapping[str, int] | None = None) -> list[Proof]:
    """The CPU part: the G2 MSM and the assembly of A, B, C with fresh r, s (`windows`: see start)."""
    if pending.b_g2 is None:
        msm_b_g2(pending, key, windows=windows)
    assert pending.b_g2 is not None
    with pending.timeline.span("epilogue"):
        proofs = assemble(
            key.vk,
            sum_a=pending.a,
            sum_b_g1=pending.b_g1,
            sum_b_g2=pending.b_g2,
            sum_c=G1.add(pending.h, pending.l),
        )
    return proofs


def msm_b_g2(pending: Pending, key: ProvingKey, *, windows: Mapping[str, int] | None = None) -> None:
    """The G2 MSM into `pending.b_g2`; the B scalars are dropped once it is made."""
    g2 = key.g2_backend
    with pending.timeline.span("msm_b_g2"):
        pending.b_g2 = g2.msm(key.b_g2, g2.to_device(pending.b_scalars), window=(windows or {}).get("b_g2"))
    pending.b_scalars = None


def _random_scalars(k: int) -> np.ndarray:
    return FR.from_ints([secrets.randbelow(C.R) for _ in range(k)])


def assemble(
    vk: VerifyingKey,
    *,
    sum_a: np.ndarray,
    sum_b_g1: np.ndarray,
    sum_b_g2: np.ndarray,
    sum_c: np.ndarray,
) -> list[Proof]:
    """A, B, C for k proofs from their MSM sums, with fresh r, s from the OS CSPRNG.

    A = alpha + sum_a + r delta; B = beta + sum_b + s delta (G2, and B1 in G1);
    C = s A + r B1 - r s delta + sum_c, where sum_c is H + L. Key points are affine
    (1, ...); sums Jacobian (k, ...).
    """
    if vk.beta_g1 is None or vk.delta_g1 is None:
        raise ParamsError("this verifying key lacks beta_g1 or delta_g1: it can verify but not prove")
    k = sum_a.shape[0]
    r, s = _random_scalars(k), _random_scalars(k)
    rep = lambda p: np.repeat(p, k, axis=0)  # noqa: E731 - one key point, k copies
    delta1 = rep(vk.delta_g1)
    a_jac = G1.add_mixed(G1.add(G1.scalar_mul(delta1, r), sum_a), rep(vk.alpha_g1))
    b_jac = G2.add_mixed(G2.add(G2.scalar_mul(rep(vk.delta_g2), s), sum_b_g2), rep(vk.beta_g2))
    b1_jac = G1.add_mixed(G1.add(G1.scalar_mul(delta1, s), sum_b_g1), rep(vk.beta_g1))
    a_aff, b1_aff = G1.to_affine(a_jac), G1.to_affine(b1_jac)
    c_jac = G1.add(G1.scalar_mul(a_aff, s), G1.scalar_mul(b1_aff, r))
    c_jac = G1.add_mixed(c_jac, G1.neg(G1.to_affine(G1.scalar_mul(delta1, FR.mul(r, s)))))
    c_aff = G1.to_affine(G1.add(c_jac, sum_c))
    b_aff = G2.to_affine(b_jac)
    return [Proof(a=a_aff[j : j + 1], b=b_aff[j : j + 1], c=c_aff[j : j + 1]) for j in range(k)]


def public_inputs(pending: Pending) -> list[list[int]]:
    """Per circuit: the public inputs as canonical ints, without ONE."""
    return [FR.to_ints(x[1:]) for x in pending.inputs]


def prove(
    key: ProvingKey,
    witnesses: Sequence[WitnessSource],
    *,
    synthesis_backend: Backend | None = None,
    timeline: Timeline | None = None,
    windows: Mapping[str, int] | None = None,
) -> ProveResult:
    """Prove a batch of witnesses of one key; every proof is verified before it is returned.

    One random linear combination checks the whole batch (verify_batch); only when it
    fails are the proofs checked one by one, to name the bad ones in the ProofError. A
    bellperson witness that breaks a constraint raises UnsatisfiedError before any MSM.
    """
    tl = timeline or Timeline("prove")
    pending = start(synthesize(key, witnesses, synthesis_backend, timeline=tl), key, windows=windows)
    proofs = finalize(pending, key, windows=windows)
    inputs = public_inputs(pending)
    with tl.span("verify", proofs=len(proofs)):
        if not verify_batch(key.pvk, inputs, proofs):
            bad = [j for j, p in enumerate(proofs) if not verify(key.pvk, inputs[j], p)]
            raise ProofError(
                f"proof(s) {bad or list(range(len(proofs)))} failed verification (a witness that does "
                "not satisfy the circuit, or a damaged key); refusing to return them"
            )
    return ProveResult(proofs=proofs, public_inputs=inputs, timeline=tl)
