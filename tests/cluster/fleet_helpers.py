"""Helpers of the fleet tests (a module of its own name: every test folder has a conftest)."""

from __future__ import annotations

#: every engine: the CPU backend, one synthesis worker, one GPU worker (small on a 2-core machine)
ENGINE = {"backend": "cpu", "synthesis_workers": 1, "gpu_workers_per_device": 1, "finalizer_workers": 1,
          "memory_budget": "2GiB"}  # fmt: skip


def verify_proofs(circuit_name: str, seed: int, proofs: bytes, public_inputs: list[list[int]]) -> int:
    """Every proof verifies for the instance of its seed; a wrong public input is rejected."""
    from cuzk.backends import get_backend
    from cuzk.circuits import get_circuit
    from cuzk.groth16 import proofs_from_bytes
    from cuzk.groth16 import verify as groth16_verify
    from cuzk.groth16.api import load_or_create_parameters

    circuit = get_circuit(circuit_name)
    topo = circuit.topology()
    _, params = load_or_create_parameters(circuit.name, topo, topo.hash, get_backend("cpu"))
    parsed = proofs_from_bytes(proofs)
    assert len(parsed) == len(public_inputs) > 0
    for j, (proof, pub) in enumerate(zip(parsed, public_inputs, strict=True)):
        assert [int(x) for x in pub] == circuit.public_inputs(circuit.random_instance(seed=seed + j))
        assert groth16_verify(params.vk, [int(x) for x in pub], proof)
        bad = [int(x) for x in pub]
        bad[0] = (bad[0] + 1) % 2**64
        assert not groth16_verify(params.vk, bad, proof)
    return len(parsed)
