"""Every -tiny workload circuit proved and verified, single and batched; corrupted instances refused."""

from __future__ import annotations

import pytest

from cuzk.circuits import get_circuit, list_circuits
from cuzk.errors import UnsatisfiedError
from cuzk.groth16 import generate_parameters, make_resident, prove, verify, verify_batch

TINY = sorted(c.name for c in list_circuits() if c.name.endswith("-tiny"))


@pytest.fixture(scope="module", params=TINY)
def tiny(request, cpu):
    circuit = get_circuit(request.param)
    topo = circuit.topology()
    params = generate_parameters(topo, cpu)
    return circuit, topo, make_resident(params, topo, cpu)


def test_there_are_tiny_circuits_of_every_kind():
    assert {n.split("-")[0] for n in TINY} >= {"porep", "wpost", "winning", "snap"}


def test_single_and_batched(tiny):
    circuit, _, srs = tiny
    insts = [circuit.random_instance(seed=s) for s in (1, 2)]
    single = prove(srs, [circuit.witness(insts[0])])
    assert single.public_inputs[0] == circuit.public_inputs(insts[0])
    assert verify(srs.vk, single.public_inputs[0], single.proofs[0])
    batch = prove(srs, [circuit.witness(i) for i in insts])
    assert verify_batch(srs.vk, batch.public_inputs, batch.proofs)
    # a proof checked against the other instance's public inputs fails
    assert batch.public_inputs[0] != batch.public_inputs[1]
    assert not verify(srs.vk, batch.public_inputs[1], batch.proofs[0])


def test_corrupted_instance_is_refused_with_the_constraint_named(tiny):
    circuit, topo, srs = tiny
    bad = circuit.corrupt(circuit.random_instance(seed=3))
    with pytest.raises(UnsatisfiedError) as err:
        prove(srs, [circuit.witness(bad)])
    assert err.value.constraint and err.value.constraint in str(err.value)
    assert err.value.constraint == topo.constraint_name(err.value.index)
