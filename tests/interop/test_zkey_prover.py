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
from cuzk.errors import CircuitError, ProofError
from cuzk.groth16.proof import Proof
from cuzk.groth16.verifier import verify
from cuzk.instrument import Timeline
from cuzk.interop.prover import load_proving_key, prove, public_signals
from cuzk.interop.setup import odd_lagrange, setup_zkey
from cuzk.interop.zkey import UnboundInputsWarning, read_zkey

SPANS = ["synthesis", "ntt_h", "msm_h", "msm_a", "msm_b_g1", "msm_l", "msm_b_g2", "epilogue", "verify"]


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
    (proof,), (public,) = prove(pk, [toy_files.wtns_path], timeline=tl)
    assert public == toy_files.witness[1:3]  # outputs first, then public inputs
    assert [s.name for s in tl.spans] == SPANS
    vk = pk.zkey.verifying_key()
    assert verify(vk, public, proof)
    assert not verify(vk, [public[0], public[1] + 1], proof)
    assert not verify(vk, [public[0] + 1, public[1]], proof)
    tampered = Proof(a=proof.a, b=proof.b, c=G1.neg(proof.c))
    assert not verify(vk, public, tampered)


def test_proofs_are_randomized(toy_files, cpu: Backend) -> None:
    pk = load_proving_key(read_zkey(toy_files.zkey_path), cpu)
    (p1, p2), _ = prove(pk, [toy_files.witness_mont, toy_files.witness_mont])
    assert not np.array_equal(p1.a, p2.a) and not np.array_equal(p1.c, p2.c)


def test_bad_witness_is_refused(toy_files, cpu: Backend) -> None:
    pk = load_proving_key(read_zkey(toy_files.zkey_path), cpu)
    w = list(toy_files.witness)
    w[4] = (w[4] + 1) % C.R  # x^2 wrong
    with pytest.raises(ProofError, match="does not satisfy"):
        prove(pk, [witness_array(w)])
    with pytest.raises(CircuitError, match="signals"):
        prove(pk, [witness_array(w[:-1])])
    w = list(toy_files.witness)
    w[0] = 2
    with pytest.raises(CircuitError, match="ONE"):
        prove(pk, [witness_array(w)])


@pytest.mark.parametrize("seed", [1, 2])
def test_random_circuits(seed: int, cpu: Backend) -> None:
    r1cs, w = random_circuit(seed, n_internal=150 + 40 * seed)
    zk = setup_zkey(r1cs, cpu)
    assert zk.domain_size == 1 << (r1cs.n_constraints + r1cs.n_public).bit_length()
    pk = load_proving_key(zk, cpu)
    (proof,), (public,) = prove(pk, [witness_array(w)])
    assert public == w[1 : 1 + r1cs.n_public]
    assert verify(zk.verifying_key(), public, proof)
    bad = list(public)
    bad[-1] = (bad[-1] + 1) % C.R
    assert not verify(zk.verifying_key(), bad, proof)


def test_the_generator_7_root_gives_invalid_proofs(toy_files, cpu: Backend) -> None:
    """snarkjs keys need the generator-5 domain: bellperson's root must not silently work."""
    pk = load_proving_key(read_zkey(toy_files.zkey_path), cpu)
    log_n = pk.zkey.log_n
    wrong = dataclasses.replace(
        pk, omega=C.root_of_unity(log_n, C.BELLPERSON_GENERATOR), coset=C.root_of_unity(log_n + 1, 7)
    )
    with pytest.raises(ProofError):
        prove(wrong, [toy_files.wtns_path])


def test_public_signals_are_canonical_ints(toy_files) -> None:
    assert public_signals(toy_files.witness_mont, 2) == toy_files.witness[1:3]


def test_unbound_inputs_warn_loudly(toy_files, cpu: Backend) -> None:
    zk = read_zkey(toy_files.zkey_path)
    ic = zk.ic.copy()
    ic[2] = 0  # public input 2 bound by nothing
    with pytest.warns(UnboundInputsWarning, match=r"1 of 2 public signals \(2;"):
        load_proving_key(dataclasses.replace(zk, ic=ic), cpu)
