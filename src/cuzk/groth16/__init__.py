"""Groth16 over BLS12-381 with bellperson's conventions: setup, files, the split prover, verification.

generate_parameters(cs, backend)               a local (non-ceremony) setup
make_resident(params, cs, backend)              the bellperson ProvingKey: SRS queries as backend handles
synthesize -> start -> finalize                 the prover's phases (see prover.py)
prove(key, witnesses)                           the phases in order, every proof verified
verify(vk, public_inputs, proof), verify_batch  pairing checks via py-arkworks-bls12381
"""

from cuzk.groth16.api import ProveResult, load_or_create_parameters, prove
from cuzk.groth16.keys import Parameters, VerifyingKey
from cuzk.groth16.proof import Proof, proofs_from_bytes, proofs_to_bytes
from cuzk.groth16.prover import ProvingKey, finalize, start, synthesize
from cuzk.groth16.setup import generate_parameters
from cuzk.groth16.srs import ResidentParameters, make_resident
from cuzk.groth16.verifier import prepare, verify, verify_batch

__all__ = [
    "Parameters",
    "Proof",
    "ProveResult",
    "ProvingKey",
    "ResidentParameters",
    "VerifyingKey",
    "finalize",
    "generate_parameters",
    "load_or_create_parameters",
    "make_resident",
    "prepare",
    "proofs_from_bytes",
    "proofs_to_bytes",
    "prove",
    "start",
    "synthesize",
    "verify",
    "verify_batch",
]
