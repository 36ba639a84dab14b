"""LocalProver and the Engine hand back proofs as one type (issue 29 item 6): a list of Proof, one
per partition, with `proof_bytes()` for the wire form (192 bytes each)."""

from __future__ import annotations

from engine_helpers import WAIT, assert_proofs, seeded

from cuzk.backends import get_backend
from cuzk.engine import Engine, EngineConfig, LocalProver, ProofRequest
from cuzk.groth16 import Proof, proofs_from_bytes, verify

CIRCUIT = "winning-tiny"


def test_local_and_engine_results_have_the_same_proofs_type() -> None:
    request = ProofRequest(circuit=CIRCUIT, seed=11, partitions=2)
    prover = LocalProver(get_backend("cpu"))
    local = prover.prove(request)
    with Engine(EngineConfig(backend="cpu", synthesis_workers=1)) as engine:
        piped = engine.submit(request).result(WAIT)
    assert_proofs(piped, CIRCUIT, seeded(CIRCUIT, 11, 2))
    for result in (local, piped):
        assert isinstance(result.proofs, list) and len(result.proofs) == 2
        assert all(isinstance(p, Proof) for p in result.proofs)
        assert len(result.proof_bytes()) == 2 * 192
        assert [p.to_bytes() for p in proofs_from_bytes(result.proof_bytes())] == [
            p.to_bytes() for p in result.proofs
        ]
    vk = prover.resident(request).vk
    assert local.public_inputs == piped.public_inputs
    for proof, public in zip(piped.proofs, piped.public_inputs, strict=True):
        assert verify(vk, public, proof)  # the engine's proofs check against the local key's vk too
    assert not verify(vk, piped.public_inputs[1], piped.proofs[0])
