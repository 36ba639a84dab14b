"""snarkjs keys through the engine: a circom witness per partition, the same stages after synthesis.

The toy circuit of the interop tests (tests/interop/circom_toy.py), its key made
with our own setup. A zkey partition needs no synthesis process (the witness is
loaded and multiplied on the device, under its lock), so no worker is started.
"""

from __future__ import annotations

import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
from engine_helpers import WAIT, in_flight_beyond_srs, spans

from cuzk.algebra import constants as C
from cuzk.backends import get_backend
from cuzk.engine import Engine, EngineConfig, JobStatus, ProofRequest
from cuzk.groth16 import verify
from cuzk.interop.setup import setup_zkey
from cuzk.interop.wtns import write_wtns
from cuzk.interop.zkey import read_zkey, write_zkey

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "interop"))
from circom_toy import toy, witness_array


@pytest.fixture(scope="module")
def files(tmp_path_factory) -> dict:
    d = tmp_path_factory.mktemp("zkey")
    r1cs, w = toy()
    write_zkey(d / "toy.zkey", setup_zkey(r1cs, get_backend("cpu")))
    write_wtns(d / "toy.wtns", witness_array(w))
    return {"zkey": d / "toy.zkey", "wtns": d / "toy.wtns", "witness": w}


@pytest.fixture(scope="module")
def engine() -> Iterator[Engine]:
    with Engine(EngineConfig(backend="cpu", memory_budget="256MiB")) as e:
        yield e
        assert e.wait_idle(WAIT) and in_flight_beyond_srs(e) == 0
        assert e.status().synthesis_workers.pids == []  # no process was needed


def test_a_zkey_job_proves_each_witness_in_partition_order(engine, files):
    other = list(files["witness"])
    other[2] = 5  # y = 5: out = 3^3 + 3*3 + 5 + 7*5
    other[1] = 27 + 9 + 5 + 35
    other[6] = (5 + 2) * (3 - 1)
    witnesses = [files["wtns"], witness_array(other)]
    r = engine.submit(ProofRequest(zkey=files["zkey"], witnesses=witnesses)).result(WAIT)
    assert r.status is JobStatus.COMPLETED, r.error
    assert r.public_inputs == [files["witness"][1:3], other[1:3]]
    vk = read_zkey(files["zkey"]).verifying_key()
    proofs = r.proofs
    assert len(proofs) == 2
    for proof, public in zip(proofs, r.public_inputs, strict=True):
        assert verify(vk, public, proof)
    assert not verify(vk, r.public_inputs[1], proofs[0])
    locks = spans(r, "device_lock")  # one per partition, in the order two GPU workers took them
    assert {"ntt_h", "msm_h", "finalize", "msm_b_g2", "verify", "srs_load"} <= {
        s.name for s in r.timeline.spans
    }
    assert sorted(s.attrs["partition"] for s in locks) == [0, 1]


def test_a_zkey_witness_that_breaks_a_constraint_fails_its_job(engine, files):
    w = list(files["witness"])
    w[4] = (w[4] + 1) % C.R  # x^2 wrong: only the final check can see it (the key has no C matrix)
    r = engine.submit(ProofRequest(zkey=files["zkey"], witnesses=[files["wtns"], witness_array(w)])).result(
        WAIT
    )
    assert r.status is JobStatus.FAILED and r.proofs == []
    assert r.error == "partition 1 proof failed verification; refusing to return it"
    short = engine.submit(ProofRequest(zkey=files["zkey"], witnesses=[witness_array(w[:-1])])).result(WAIT)
    assert short.status is JobStatus.FAILED
    assert short.error.startswith("partition 0 GPU prove failed: CircuitError: witness 0 has 7 values")
