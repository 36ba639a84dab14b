"""The split prover on hand-built circuits: every proof verified, every bad one rejected."""

from __future__ import annotations

import numpy as np
import pytest
from pyecc_verifier import verify_pyecc
from toy import build, witness

from cuzk.algebra.fields import FR
from cuzk.errors import (
    CircuitError,
    FormatError,
    NonCanonicalError,
    ProofError,
    UnsatisfiedError,
)
from cuzk.groth16 import (
    Proof,
    finalize,
    generate_parameters,
    make_resident,
    proofs_from_bytes,
    prove,
    start,
    synthesize,
    verify,
    verify_batch,
)
from cuzk.groth16 import prover as prover_mod
from cuzk.instrument import Timeline

#: The span contract of a bellperson proof (synthesis holds witness and matvec).
PHASES = ["synthesis", "witness", "matvec", "ntt_h", "msm_h", "upload_witness", "msm_l", "msm_a", "msm_b_g1"]
PHASES += ["msm_b_g2", "epilogue", "verify"]


def test_cubic_proof_verifies_and_wrong_inputs_fail(cubic_setup):
    _, w, _, srs = cubic_setup
    res = prove(srs, [w])
    (proof,) = res.proofs
    assert res.public_inputs == [[35]]  # 3^3 + 3 + 5
    assert verify(srs.vk, [35], proof)
    assert not verify(srs.vk, [36], proof)
    assert list(res.timeline.totals()) == PHASES


def test_batch_in_one_pass(random_setup):
    _, w, _, srs = random_setup
    res = prove(srs, [w, w])
    assert len(res.proofs) == 2
    assert res.proofs[0].to_bytes() != res.proofs[1].to_bytes()  # fresh r, s per proof
    assert verify_batch(srs.vk, res.public_inputs, res.proofs)
    for x, p in zip(res.public_inputs, res.proofs, strict=True):
        assert verify(srs.vk, x, p)


def test_batch_verify_catches_one_bad_proof(random_setup):
    _, w, _, srs = random_setup
    res = prove(srs, [w, w, w])
    bad = res.proofs[1]
    res.proofs[1] = Proof(a=bad.c, b=bad.b, c=bad.a)
    assert not verify_batch(srs.vk, res.public_inputs, res.proofs)
    assert verify_batch(srs.vk, [res.public_inputs[0]], [res.proofs[0]])


def test_independent_pyecc_verifier_agrees(cubic_setup):
    _, w, _, srs = cubic_setup
    (proof,) = prove(srs, [w]).proofs
    assert verify_pyecc(srs.vk, [35], proof)
    assert not verify_pyecc(srs.vk, [34], proof)


def test_unsatisfied_witness_names_constraint_before_any_msm(cubic_setup, monkeypatch):
    _, _, _, srs = cubic_setup
    bad = witness([35], [3, 9, 28])  # t2 should be 27
    called = []
    monkeypatch.setattr(prover_mod, "start", lambda *a, **k: called.append(1))
    with pytest.raises(UnsatisfiedError) as err:
        prove(srs, [bad])
    assert err.value.index == 1 and err.value.constraint == "cubic/x_cubed"
    assert "cubic/x_cubed" in str(err.value)
    assert called == []


def test_wrong_public_input_value_in_witness_is_refused(cubic_setup):
    _, _, _, srs = cubic_setup
    with pytest.raises(UnsatisfiedError, match="cubic/output"):
        prove(srs, [witness([36], [3, 9, 27])])


def test_witness_shape_and_one_checked(cubic_setup):
    _, w, _, srs = cubic_setup
    with pytest.raises(CircuitError, match="aux has shape"):
        prove(srs, [witness([35], [3, 9])])
    no_one = type(w)(inputs=FR.from_ints([2, 35]), aux=w.aux)
    with pytest.raises(CircuitError, match="input 0 must be ONE"):
        prove(srs, [no_one])


def test_tampered_proof_bytes_are_rejected(cubic_setup):
    _, w, _, srs = cubic_setup
    data = bytearray(prove(srs, [w]).proof_bytes())
    assert len(data) == 192
    rejected = 0
    for pos in (5, 47, 60, 143, 150, 191):
        t = bytearray(data)
        t[pos] ^= 0x01
        try:
            (p,) = proofs_from_bytes(bytes(t))
        except FormatError:
            rejected += 1  # no longer a valid curve point
            continue
        assert not verify(srs.vk, [35], p)
        rejected += 1
    assert rejected == 6


def test_proof_for_another_vk_is_rejected(cpu, cubic_setup):
    cs, w, _, srs = cubic_setup
    (proof,) = prove(srs, [w]).proofs
    other = generate_parameters(cs, cpu)
    assert not verify(other.vk, [35], proof)


def test_verifier_input_errors(cubic_setup):
    _, w, _, srs = cubic_setup
    (proof,) = prove(srs, [w]).proofs
    with pytest.raises(FormatError, match="expects 1 public inputs, got 2"):
        verify(srs.vk, [35, 1], proof)
    with pytest.raises(NonCanonicalError):
        verify(srs.vk, [35 + FR.modulus], proof)


def test_phases_called_separately_match_prove(random_setup):
    _, w, _, srs = random_setup
    tl = Timeline()
    pending = start(synthesize(srs, [w], srs.backend, timeline=tl), srs)
    (proof,) = finalize(pending, srs)
    assert verify(srs.vk, FR.to_ints(w.inputs[1:]), proof)
    assert list(tl.totals()) == PHASES[:-1]  # verify is prove's own step
    assert [s.depth for s in tl.spans[:3]] == [0, 1, 1]  # witness and matvec inside synthesis


def test_the_g2_msm_in_start_gives_the_same_proof_and_finalize_does_not_repeat_it(random_setup, monkeypatch):
    _, w, _, srs = random_setup
    tl = Timeline()
    pending = start(synthesize(srs, [w], srs.backend, timeline=tl), srs, g2=True)
    assert pending.b_g2 is not None and pending.b_scalars is None  # the scalars go once used
    assert list(tl.totals())[-1] == "msm_b_g2"  # in the accelerator's part
    monkeypatch.setattr(srs.g2_backend, "msm", lambda *a, **k: pytest.fail("G2 MSM run twice"))
    (proof,) = finalize(pending, srs)
    inputs = FR.to_ints(w.inputs[1:])
    assert verify(srs.vk, inputs, proof)
    assert not verify(srs.vk, inputs, Proof(a=proof.a, b=proof.b, c=proof.a))  # tampered: rejected


def test_never_returns_a_failing_proof(cubic_setup, monkeypatch):
    _, w, _, srs = cubic_setup
    real_finalize = prover_mod.finalize

    def broken(pending, srs_, **kw):
        proofs = real_finalize(pending, srs_, **kw)
        return [Proof(a=p.c, b=p.b, c=p.a) for p in proofs]

    monkeypatch.setattr(prover_mod, "finalize", broken)
    with pytest.raises(ProofError, match="failed verification"):
        prove(srs, [w])


def test_g2_msm_on_a_separate_backend(cpu, cubic_setup):
    cs, w, params, _ = cubic_setup
    srs = make_resident(params, cs, cpu, g2_backend=cpu)
    assert verify(srs.vk, [35], prove(srs, [w]).proofs[0])


def test_density_skips_unused_bases(cpu):
    # v (aux 1) appears only in C, never in A or B: bellperson drops it from a and b queries.
    cs = build(2, 2, [({2: 1}, {2: 1}, {3: 1}), ({3: 1}, {0: 1}, {1: 1})], ["sq", "out"])
    params = generate_parameters(cs, cpu)
    assert params.a.shape[0] == 2 + 2  # inputs always dense in A; x and v both in A
    assert params.b_g1.shape[0] == 2 and params.b_g2.shape[0] == 2  # ONE and x in B
    srs = make_resident(params, cs, cpu)
    proof = prove(srs, [witness([16], [4, 16])]).proofs[0]
    assert verify(srs.vk, [16], proof)
    assert np.array_equal(params.vk.ic.shape, (2, 2, 6))


def test_witness_sources_full_array_and_callable(cubic_setup):
    _, w, _, srs = cubic_setup
    full = np.concatenate([w.inputs, w.aux])
    res = prove(srs, [full, lambda: w])  # computed inside the witness span
    assert res.public_inputs == [[35], [35]]
    assert verify_batch(srs.vk, res.public_inputs, res.proofs)


def test_bad_witness_in_a_batch_is_named(cubic_setup):
    _, w, _, srs = cubic_setup
    with pytest.raises(UnsatisfiedError, match=r"witness 1: constraint 1 \(cubic/x_cubed\)"):
        prove(srs, [w, witness([35], [3, 9, 28])])


def _off_curve(p: np.ndarray) -> np.ndarray:
    q = p.copy()
    q[..., 1, 0] ^= 1  # y changed by one bit: (x, y) is no longer on the curve
    return q


def test_a_computed_proof_off_the_curve_is_invalid_not_an_exception(random_setup, monkeypatch):
    # What a faulty upload did on the H200: a proof point off the curve. Decoding refuses such
    # points; one just computed must count as an invalid proof (False), and the prover refuses it.
    _, w, _, srs = random_setup
    res = prove(srs, [w, w])
    good, x = res.proofs[0], res.public_inputs[0]
    for bad in (Proof(a=_off_curve(good.a), b=good.b, c=good.c), Proof(a=good.a, b=_off_curve(good.b), c=good.c),
                Proof(a=good.a, b=good.b, c=_off_curve(good.c))):  # fmt: skip
        assert not verify(srs.vk, x, bad)
        assert not verify_batch(srs.vk, res.public_inputs, [res.proofs[1], bad][::-1])
    real_finalize = prover_mod.finalize

    def faulty(pending, srs_, **kw):
        return [Proof(a=_off_curve(p.a), b=p.b, c=p.c) for p in real_finalize(pending, srs_, **kw)]

    monkeypatch.setattr(prover_mod, "finalize", faulty)
    with pytest.raises(ProofError, match="failed verification"):
        prove(srs, [w])
