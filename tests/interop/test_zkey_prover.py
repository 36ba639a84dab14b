"""The zkey prover and the development setup, checked by pairings and by hand-worked polynomials."""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest
from circom_toy import random_circuit, witness_array

from cuzk.algebra import constants as C
from cuzk.algebra.curves import G1
from cuzk.algebra.fields import FR
from cuzk.backends.base import Backend
from cuzk.errors import CircuitError, InteropError, ProofError
from cuzk.groth16.conventions import SnarkjsQap
from cuzk.groth16.proof import Proof
from cuzk.groth16.prover import finalize, prove, start, synthesize
from cuzk.groth16.verifier import verify
from cuzk.instrument import Timeline
from cuzk.interop.prover import load_proving_key
from cuzk.interop.setup import odd_lagrange, setup_zkey
from cuzk.interop.zkey import UnboundInputsWarning, read_zkey

#: The span contract of a zkey proof: the C-section MSM is msm_c (msm_l is bellperson's L query).
SPANS = ["synthesis", "witness", "matvec", "ntt_h", "msm_h", "upload_witness", "msm_c", "msm_a", "msm_b_g1"]
SPANS += ["msm_b_g2", "epilogue", "verify"]


def _lagrange_direct(tau: int, big_n: int, k: int) -> int:
    """prod_(j != k) (tau - w^j) / (w^k - w^j) over the generator-5 domain of size big_n."""
    w = C.root_of_unity(big_n.bit_length() - 1, C.SNARKJS_GENERATOR)
    num, den = 1, 1
    for j in range(big_n):
        if j != k:
            num = num * (tau - pow(w, j, C.R)) % C.R
            den = den * (pow(w, k, C.R) - pow(w, j, C.R)) % C.R
    return num * pow(den, -1, C.R) % C.R


def test_odd_lagrange_matches_the_doubled_domain(cpu: Backend) -> None:
    tau = 0x1234567890ABCDEF1234567890ABCDEF
    got = FR.to_ints(odd_lagrange(cpu, tau, 3))
    assert got == [_lagrange_direct(tau, 16, 2 * j + 1) for j in range(8)]


def test_toy_proof_verifies_and_binds_its_inputs(toy_files, cpu: Backend) -> None:
    pk = load_proving_key(read_zkey(toy_files.zkey_path), cpu)
    tl = Timeline()
    res = prove(pk, [toy_files.wtns_path], timeline=tl)
    (proof,), (public,) = res.proofs, res.public_inputs
    assert res.timeline is tl
    assert public == toy_files.witness[1:3]  # outputs first, then public inputs
    assert [s.name for s in tl.spans] == SPANS
    assert [s.depth for s in tl.spans[:3]] == [0, 1, 1]  # reading the .wtns is part of synthesis
    vk = pk.zkey.verifying_key()
    assert verify(vk, public, proof)
    assert not verify(vk, [public[0], public[1] + 1], proof)
    assert not verify(vk, [public[0] + 1, public[1]], proof)
    tampered = Proof(a=proof.a, b=proof.b, c=G1.neg(proof.c))
    assert not verify(vk, public, tampered)


def test_proofs_are_randomized(toy_files, cpu: Backend) -> None:
    pk = load_proving_key(read_zkey(toy_files.zkey_path), cpu)
    p1, p2 = prove(pk, [toy_files.witness_mont, toy_files.witness_mont]).proofs
    assert not np.array_equal(p1.a, p2.a) and not np.array_equal(p1.c, p2.c)


def test_phases_called_separately(toy_files, cpu: Backend) -> None:
    pk = load_proving_key(read_zkey(toy_files.zkey_path), cpu)
    tl = Timeline()
    (proof,) = finalize(start(synthesize(pk, [toy_files.witness_mont], timeline=tl), pk), pk)
    assert verify(pk.vk, toy_files.witness[1:3], proof)
    assert list(tl.totals()) == SPANS[:-1]


def test_bad_witness_is_refused(toy_files, cpu: Backend) -> None:
    pk = load_proving_key(read_zkey(toy_files.zkey_path), cpu)
    w = list(toy_files.witness)
    w[4] = (w[4] + 1) % C.R  # x^2 wrong
    with pytest.raises(ProofError, match=r"proof\(s\) \[0\] failed verification"):
        prove(pk, [witness_array(w)])
    with pytest.raises(ProofError, match=r"proof\(s\) \[1\] failed verification"):
        prove(pk, [toy_files.witness_mont, witness_array(w)])  # the batch check fails; the bad one named
    with pytest.raises(CircuitError, match="has 7 values, but the key's circuit has 8 variables"):
        prove(pk, [witness_array(w[:-1])])
    w = list(toy_files.witness)
    w[0] = 2
    with pytest.raises(CircuitError, match="input 0 must be ONE"):
        prove(pk, [witness_array(w)])


def test_tampered_proof_is_rejected(toy_files, cpu: Backend) -> None:
    pk = load_proving_key(read_zkey(toy_files.zkey_path), cpu)
    res = prove(pk, [toy_files.wtns_path])
    (proof,), (public,) = res.proofs, res.public_inputs
    assert not verify(pk.vk, public, Proof(a=proof.c, b=proof.b, c=proof.a))
    assert not verify(pk.vk, public, Proof(a=proof.a, b=proof.b, c=G1.neg(proof.c)))


def test_damaged_wtns_is_refused_in_synthesis(toy_files, cpu: Backend, tmp_path) -> None:
    pk = load_proving_key(read_zkey(toy_files.zkey_path), cpu)
    bad = tmp_path / "bad.wtns"
    bad.write_bytes(toy_files.wtns_path.read_bytes()[:-8])
    with pytest.raises(InteropError):
        prove(pk, [bad])


@pytest.mark.parametrize("seed", [1, 2])
def test_random_circuits(seed: int, cpu: Backend) -> None:
    r1cs, w = random_circuit(seed, n_internal=150 + 40 * seed)
    zk = setup_zkey(r1cs, cpu)
    assert zk.domain_size == 1 << (r1cs.n_constraints + r1cs.n_public).bit_length()
    pk = load_proving_key(zk, cpu)
    res = prove(pk, [witness_array(w)])
    (proof,), (public,) = res.proofs, res.public_inputs
    assert public == w[1 : 1 + r1cs.n_public]
    assert verify(zk.verifying_key(), public, proof)
    bad = list(public)
    bad[-1] = (bad[-1] + 1) % C.R
    assert not verify(zk.verifying_key(), bad, proof)


def test_the_generator_7_root_gives_invalid_proofs(toy_files, cpu: Backend) -> None:
    """snarkjs keys need the generator-5 domain: bellperson's root must not silently work."""
    pk = load_proving_key(read_zkey(toy_files.zkey_path), cpu)
    wrong = dataclasses.replace(pk, qap=SnarkjsQap.for_domain(pk.zkey.log_n, C.BELLPERSON_GENERATOR))
    with pytest.raises(ProofError):
        prove(wrong, [toy_files.wtns_path])


def test_unbound_inputs_warn_loudly(toy_files, cpu: Backend) -> None:
    zk = read_zkey(toy_files.zkey_path)
    ic = zk.ic.copy()
    ic[2] = 0  # public input 2 bound by nothing
    with pytest.warns(UnboundInputsWarning, match=r"1 of 2 public signals \(2;"):
        load_proving_key(dataclasses.replace(zk, ic=ic), cpu)
