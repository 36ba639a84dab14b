"""Replicated recording (cuzk.r1cs.replicate) at small scale: the code path the -32g circuits take.

Each case records a circuit both ways, head + copy 0 replicated and every copy stamped, and
holds them equal constraint for constraint (matrices, names, densities, witness program); the
replicated topology then checks witnesses, rejects corrupted instances, survives the disk
cache, and proves and verifies with Groth16.
"""

from __future__ import annotations

import numpy as np
import pytest

from cuzk import config
from cuzk.backends import get_backend
from cuzk.backends.cuda import CudaBackend
from cuzk.backends.cuda._emulator import EmulatorRuntime, host_compiler
from cuzk.circuits.base import ReplicatedCircuit
from cuzk.circuits.fallback import FallbackPost
from cuzk.circuits.stacked import StackedPorep
from cuzk.circuits.update import SnapUpdate
from cuzk.errors import CircuitError, UnsatisfiedError
from cuzk.groth16 import generate_parameters, make_resident, prove, verify
from cuzk.r1cs.replicate import Layout, ReplicatedTopology

CPU = get_backend("cpu")


def _porep(c: int, d: int, drg: int, exp: int, slots: int, td: int) -> StackedPorep:
    params = {"challenges": c, "layers": 2, "data_depth": d, "drg_parents": drg, "exp_parents": exp,
              "parent_slots": slots, "tree_depth": td, "sha_rounds": 2}  # fmt: skip
    return StackedPorep(name=f"porep-r{c}", description="test", scale="r", params=params)


def _post(s: int, k: int, d: int) -> FallbackPost:
    return FallbackPost(name=f"wpost-r{s}{k}{d}", description="test", scale="r",
                        params={"sectors": s, "challenges": k, "depth": d})  # fmt: skip


def _snap(c: int, d: int, apex: int) -> SnapUpdate:
    params = {"challenges": c, "data_depth": d, "apex_leaves": apex, "tree_depth": 2, "sha_rounds": 2}
    return SnapUpdate(name=f"snap-r{c}", description="test", scale="r", params=params)


#: One family over scales (PoSt: the cheapest to prove), and the other two shapes at one or two.
POST_SCALES = [(1, 1, 1), (2, 2, 2), (4, 3, 2)]
CASES = [
    *(_post(*s) for s in POST_SCALES),
    _porep(1, 3, 1, 1, 3, 1),
    _porep(3, 4, 1, 1, 3, 2),
    _snap(3, 2, 4),
]


@pytest.fixture(autouse=True)
def _cache_dir(tmp_path, monkeypatch):
    monkeypatch.setenv("CUZK_CACHE_DIR", str(tmp_path / "cache"))
    config.reload()


def _equal(rep: ReplicatedTopology, direct) -> None:
    assert (rep.num_inputs, rep.num_aux, rep.num_constraints) == (
        direct.num_inputs,
        direct.num_aux,
        direct.num_constraints,
    )
    for m in "ABC":
        a, b = getattr(direct, m), getattr(rep, m)
        assert np.array_equal(a.indptr, b.indptr), m
        assert np.array_equal(a.indices, b.indices), m
        assert np.array_equal(a.data, b.data), m
    assert [rep.constraint_name(i) for i in range(rep.num_constraints)] == [
        direct.constraint_name(i) for i in range(direct.num_constraints)
    ]
    assert np.array_equal(rep.a_aux_density, direct.a_aux_density)
    assert np.array_equal(rep.b_aux_density, direct.b_aux_density)
    assert np.array_equal(rep.b_input_density, direct.b_input_density)
    assert rep.stats() == direct.stats()


@pytest.mark.parametrize("circuit", CASES, ids=lambda c: f"{c.name}-{c.copies}")
def test_replicated_equals_direct(circuit: ReplicatedCircuit):
    rep, rprog = circuit.record()
    direct, dprog = circuit.record_direct()
    assert isinstance(rep, ReplicatedTopology) and not isinstance(direct, ReplicatedTopology)
    assert rep.layout.copies == circuit.copies
    assert circuit.estimate_constraints() > 0
    inst = circuit.random_instance(seed=5)
    w_rep, w_dir = rprog.run(inst), dprog.run(inst)
    assert np.array_equal(w_rep.inputs, w_dir.inputs) and np.array_equal(w_rep.aux, w_dir.aux)
    bellman = circuit.direct(inst)  # the plain path with values: same witness again
    assert np.array_equal(bellman.witness.aux, w_rep.aux)
    rep.check(w_rep, CPU)
    a, b, c = rep.evaluate(w_rep, CPU)
    da, db, dc = direct.evaluate(w_dir, CPU)
    assert np.array_equal(a, da) and np.array_equal(b, db) and np.array_equal(c, dc)
    full = np.concatenate([w_rep.inputs, w_rep.aux])  # the engine's staged form: one vector
    va, vb, vc = rep.evaluate_vector(full, CPU)
    assert np.array_equal(va, da) and np.array_equal(vb, db) and np.array_equal(vc, dc)
    # the full matrices are built last: everything above used the head and one copy only
    _equal(rep, direct)


@pytest.mark.parametrize("circuit", CASES, ids=lambda c: f"{c.name}-{c.copies}")
def test_corrupted_instances_are_rejected(circuit: ReplicatedCircuit):
    topo = circuit.topology()
    inst = circuit.random_instance(seed=2)
    for seed in range(3):
        with pytest.raises(UnsatisfiedError) as err:
            topo.check(circuit.witness(circuit.corrupt(inst, seed=seed)), CPU)
        assert err.value.constraint == topo.constraint_name(err.value.index)
    # a private value changed in the last copy is caught in that copy's block
    bad = inst.copy()
    last = circuit.copies - 1
    key = {"wpost": "leaves", "porep": "replica_leaf", "snap": "key_leaf"}[circuit.family]
    bad.arrays[key].reshape(circuit.copies, -1, 4)[last, 0, 0] ^= 1
    with pytest.raises(UnsatisfiedError) as err:
        topo.check(circuit.witness(bad), CPU)
    assert err.value.constraint.startswith(f"{circuit.copy_prefix} {last}/")


def test_cache_round_trip_keeps_the_replicated_form():
    circuit = _porep(3, 4, 1, 1, 3, 2)
    first = circuit.topology()
    assert circuit.cache_status == "recorded"
    circuit.forget()
    again = circuit.topology()
    assert circuit.cache_status == "hit" and isinstance(again, ReplicatedTopology)
    assert again.hash == first.hash and again.layout == first.layout
    assert circuit.cache_path().stat().st_size < 32 * again.nnz(0)  # codes, not full Fr values
    again.check(circuit.witness(circuit.random_instance(seed=1)), CPU)


@pytest.mark.parametrize("scale", POST_SCALES)
def test_proofs_verify_with_a_replicated_topology(scale):
    circuit = _post(*scale)
    topo = circuit.topology()
    assert isinstance(topo, ReplicatedTopology)
    srs = make_resident(generate_parameters(topo, CPU), topo, CPU)
    inst = circuit.random_instance(seed=9)
    res = prove(srs, [circuit.witness(inst)])
    assert res.public_inputs[0] == circuit.public_inputs(inst)
    assert verify(srs.vk, res.public_inputs[0], res.proofs[0])
    other = circuit.public_inputs(circuit.random_instance(seed=10))
    assert not verify(srs.vk, other, res.proofs[0])
    with pytest.raises(UnsatisfiedError):
        prove(srs, [circuit.witness(circuit.corrupt(inst))])


def test_layout_moves_copy_variables_only():
    lay = Layout(
        copies=3, shared_inputs=2, unit_inputs=2, shared_aux=5, unit_aux=10, shared_rows=1, unit_rows=4
    )
    v = np.array([-1, -2, -3, -4, 0, 4, 5, 14])  # ONE, a shared input, copy inputs, shared aux, copy aux
    assert lay.var_map(v, 2).tolist() == [-1, -2, -7, -8, 0, 4, 25, 34]
    assert (lay.num_inputs, lay.num_aux, lay.num_constraints) == (8, 35, 1 + 12 + 8)
    cols = np.array([0, 1, 2, 3, 8, 8 + 4, 8 + 5, 8 + 14])  # copy 0's columns
    assert lay.column_strides(cols).tolist() == [0, 0, 2, 2, 0, 0, 10, 10]


@pytest.mark.skipif(host_compiler() is None, reason="the CUDA emulator needs a C++ compiler")
def test_evaluate_on_the_cuda_backend_gathers_on_the_device():
    """The device path (gathers through backend.xp, the copy matrix cached by the backend) gives
    the CPU's a, b, c, on the emulator here and on the GPU where the device tests run."""
    circuit = _porep(3, 4, 1, 1, 3, 2)
    topo = circuit.topology()
    wit = circuit.witness(circuit.random_instance(seed=4))
    be = CudaBackend(runtime=EmulatorRuntime())
    got = [be.to_host(x) for x in topo.evaluate(wit, be)]
    want = topo.evaluate_host(wit.inputs, wit.aux, CPU)
    assert all(np.array_equal(g, w) for g, w in zip(got, want, strict=True))
    full = be.to_device(np.concatenate([wit.inputs, wit.aux]))  # the staged witness, never downloaded
    got = [be.to_host(x) for x in topo.evaluate_vector(full, be)]
    assert all(np.array_equal(g, w) for g, w in zip(got, want, strict=True))
    with pytest.raises(CircuitError):
        topo.evaluate_vector(full[1:], be)
    bad = np.concatenate([wit.inputs, wit.aux])
    bad[0] = 0
    with pytest.raises(UnsatisfiedError):
        topo.evaluate_vector(be.to_device(bad), be)
    n = topo.num_constraints  # at the QAP domain's length: the same rows, then zeros
    longer = [be.to_host(x) for x in topo.evaluate_vector(full, be, rows=n + 5)]
    assert all(np.array_equal(g[:n], w) and not g[n:].any() for g, w in zip(longer, want, strict=True))
    with pytest.raises(ValueError, match="cannot hold"):
        topo.evaluate_vector(full, be, rows=n - 1)


@pytest.mark.slow
@pytest.mark.skipif(host_compiler() is None, reason="the CUDA emulator needs a C++ compiler")
def test_a_replicated_proof_on_the_cuda_backend_verifies():
    """The device path end to end on the emulator: products at the domain's length, the H
    transforms in their memory (overwrite), the proof verified; a bad witness is refused."""
    circuit = _post(2, 2, 2)
    topo = circuit.topology()
    assert isinstance(topo, ReplicatedTopology) and topo.layout.copies > 1
    be = CudaBackend(runtime=EmulatorRuntime())
    srs = make_resident(generate_parameters(topo, be), topo, be)
    inst = circuit.random_instance(seed=6)
    res = prove(srs, [circuit.witness(inst)])
    assert verify(srs.vk, res.public_inputs[0], res.proofs[0])
    assert not verify(srs.vk, circuit.public_inputs(circuit.random_instance(seed=7)), res.proofs[0])
    with pytest.raises(UnsatisfiedError):
        prove(srs, [circuit.witness(circuit.corrupt(inst))])


@pytest.mark.parametrize("circuit", [CASES[2], CASES[4]], ids=lambda c: c.name)
def test_call_groups_run_in_lane_slices_with_the_same_witness(circuit, monkeypatch):
    """Real-size groups run a slice of their lanes at a time (bounded memory); one lane per slice
    must give the witness that all lanes at once give."""
    from cuzk.r1cs import program as program_mod

    prog = circuit.program()
    inst = circuit.random_instance(seed=6)
    whole = prog.run(inst)
    monkeypatch.setattr(program_mod, "LANE_BYTES", 1)
    sliced = prog.run(inst)
    assert np.array_equal(whole.aux, sliced.aux) and np.array_equal(whole.inputs, sliced.inputs)
