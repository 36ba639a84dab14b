"""LocalProver: registry circuits and zkeys through the job layer, keys resident across requests."""

from __future__ import annotations

import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).parents[1] / "interop"))

from circom_toy import toy, witness_array

from cuzk.algebra import constants as C
from cuzk.backends import get_backend
from cuzk.backends.base import Backend
from cuzk.circuits import get_circuit
from cuzk.engine import LocalProver, ProofRequest
from cuzk.errors import ParamsError, ProofError, UnsatisfiedError
from cuzk.groth16 import Proof, verify, verify_batch
from cuzk.groth16.api import params_dir_for
from cuzk.interop.setup import setup_zkey
from cuzk.interop.wtns import write_wtns
from cuzk.interop.zkey import write_zkey

CIRCUIT = "winning-tiny"
LOAD = ["topology", "load_params", "make_resident"]
#: The prover's spans for a bellperson key; a zkey's C-section MSM is msm_c instead of msm_l.
NATIVE = ["synthesis", "witness", "matvec", "ntt_h", "msm_h", "upload_witness", "msm_l", "msm_a", "msm_b_g1"]
NATIVE += ["msm_b_g2", "epilogue", "verify"]
ZKEY = ["msm_c" if s == "msm_l" else s for s in NATIVE]


@pytest.fixture(scope="module")
def cache(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    """A private cache root: the parameters generated here are no other test's."""
    root = tmp_path_factory.mktemp("cache")
    from cuzk import config

    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("CUZK_CACHE_DIR", str(root))
        config.reload()  # settings are read once: read them again with this root
        yield root
    config.reload()


@pytest.fixture(scope="module")
def cpu() -> Backend:
    return get_backend("cpu")


@pytest.fixture(scope="module")
def circuit_prover(cache: Path, cpu: Backend) -> tuple[LocalProver, list[str]]:
    said: list[str] = []
    return LocalProver(cpu, progress=said.append), said


def _top(res) -> list[str]:
    return [s.name for s in res.timeline.spans if s.depth == 0]


def test_circuit_requests_share_one_resident_key(circuit_prover) -> None:
    prover, said = circuit_prover
    first = prover.prove(ProofRequest(circuit=CIRCUIT, seed=4, partitions=2))
    assert any("generating parameters" in m for m in said)  # the empty cache: setup once
    second = prover.prove(ProofRequest(circuit=CIRCUIT, seed=9))
    assert prover.loads == 1 and prover.resident_keys == [CIRCUIT]
    assert _top(first)[:3] == LOAD
    assert [s.name for s in second.timeline.spans] == NATIVE  # nothing loaded the second time
    circuit = get_circuit(CIRCUIT)
    want = [circuit.public_inputs(circuit.random_instance(seed=s)) for s in (4, 5)]
    assert first.public_inputs == want  # partition j proves seed + j
    key = prover.resident(ProofRequest(circuit=CIRCUIT))
    assert verify_batch(key.vk, first.public_inputs, first.proofs)
    (p,) = second.proofs
    assert verify(key.vk, second.public_inputs[0], p)
    assert not verify(key.vk, second.public_inputs[0], Proof(a=p.c, b=p.b, c=p.a))
    assert not verify(key.vk, want[0], p)


def test_bad_instance_is_refused_and_the_key_stays(circuit_prover) -> None:
    prover, _ = circuit_prover
    circuit = get_circuit(CIRCUIT)
    bad = circuit.corrupt(circuit.random_instance(seed=3))
    with pytest.raises(UnsatisfiedError):
        prover.prove(ProofRequest(circuit=CIRCUIT, instances=[bad]))
    assert prover.loads == 1
    good = prover.prove(ProofRequest(circuit=CIRCUIT, instances=[circuit.random_instance(seed=3)]))
    assert good.public_inputs == [circuit.public_inputs(circuit.random_instance(seed=3))]


def test_params_dir_checked_and_release(circuit_prover, cpu: Backend, tmp_path: Path) -> None:
    prover, _ = circuit_prover
    prover.resident(ProofRequest(circuit=CIRCUIT))  # parameters in the cache (generated at most once)
    topo = get_circuit(CIRCUIT).topology()
    folder = params_dir_for(CIRCUIT, topo.hash)
    said: list[str] = []
    other = LocalProver(cpu, checked=True, progress=said.append)
    res = other.prove(ProofRequest(circuit=CIRCUIT, params_dir=folder))
    assert any("loading parameters" in m for m in said) and other.loads == 1
    assert _top(res)[:3] == LOAD
    with pytest.raises(ParamsError, match="no parameters"):
        other.prove(ProofRequest(circuit=CIRCUIT, params_dir=tmp_path))
    assert other.release(CIRCUIT) == 1 and other.resident_keys == []
    other.prove(ProofRequest(circuit=CIRCUIT, params_dir=folder))
    assert other.loads == 2  # released, so loaded again


@pytest.fixture(scope="module")
def zkey_files(tmp_path_factory: pytest.TempPathFactory, cpu: Backend) -> tuple[Path, Path, list[int]]:
    d = tmp_path_factory.mktemp("zkey")
    r1cs, w = toy()
    write_zkey(d / "toy.zkey", setup_zkey(r1cs, cpu))
    write_wtns(d / "toy.wtns", witness_array(w))
    return d / "toy.zkey", d / "toy.wtns", w


def _zkey_round_trip(be: Backend, zkey_files) -> None:
    zkey, wtns, w = zkey_files
    prover = LocalProver(be, g2_backend=get_backend("cpu"))
    first = prover.prove(ProofRequest(zkey=zkey, witnesses=[wtns, witness_array(w)]))
    second = prover.prove(ProofRequest(zkey=zkey, witnesses=[wtns]))
    assert prover.loads == 1
    assert _top(first)[0] == "load_key"
    assert [s.name for s in second.timeline.spans] == ZKEY
    assert first.public_inputs == [w[1:3], w[1:3]] == [*second.public_inputs, w[1:3]]
    key = prover.resident(ProofRequest(zkey=zkey, witnesses=[wtns]))
    (p,) = second.proofs
    assert verify(key.vk, w[1:3], p)
    assert not verify(key.vk, w[1:3], Proof(a=p.c, b=p.b, c=p.a))
    bad = list(w)
    bad[4] = (bad[4] + 1) % C.R  # x^2 wrong: the zkey has no C matrix, so verification catches it
    with pytest.raises(ProofError, match="failed verification"):
        prover.prove(ProofRequest(zkey=zkey, witnesses=[witness_array(bad)]))


def test_zkey_requests_on_the_cpu(zkey_files, cpu: Backend) -> None:
    _zkey_round_trip(cpu, zkey_files)


def test_zkey_requests_on_the_cuda_emulator(zkey_files) -> None:
    from cuzk.backends.cuda._emulator import EmulatorRuntime, host_compiler

    if host_compiler() is None:
        pytest.skip("the CUDA emulator needs a C++ compiler")
    from cuzk.backends.cuda import CudaBackend

    _zkey_round_trip(CudaBackend(runtime=EmulatorRuntime()), zkey_files)
