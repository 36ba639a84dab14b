"""The zkey prover and setup on the CUDA backend: the host emulator in CI, the device on a GPU machine."""

from __future__ import annotations

import pytest
from circom_toy import random_circuit, toy, witness_array

from cuzk.algebra import constants as C
from cuzk.backends import get_backend
from cuzk.backends.base import Backend
from cuzk.errors import ProofError
from cuzk.groth16.proof import Proof
from cuzk.groth16.prover import prove
from cuzk.groth16.verifier import verify
from cuzk.interop.prover import load_proving_key
from cuzk.interop.setup import setup_zkey
from cuzk.toggles import FULL_COPIES


def _round_trip(be: Backend, r1cs, w: list[int], *, g2_on: str, precompute: int = 1) -> None:
    zk = setup_zkey(r1cs, be)
    g2 = {"cpu": get_backend("cpu"), "device": None, "stream": be.streamed()}[g2_on]
    pk = load_proving_key(zk, be, g2_backend=g2, precompute=precompute)
    assert (g2_on == "stream") is (type(pk.b_g2).__name__ == "HostRowBases")
    if precompute > 1:
        assert all(q.copies > 1 for q in (pk.a, pk.b_g1, pk.l, pk.h))
    res = prove(pk, [witness_array(w)])
    (proof,), (public,) = res.proofs, res.public_inputs
    assert "msm_c" in res.timeline.totals() and "msm_l" not in res.timeline.totals()
    vk = zk.verifying_key()
    assert verify(vk, public, proof)
    assert not verify(vk, [*public[:-1], public[-1] + 1], proof)
    assert not verify(vk, public, Proof(a=proof.c, b=proof.b, c=proof.a))
    bad = list(w)
    first_internal = 1 + r1cs.n_public + r1cs.n_prv_in  # the output of the first constraint
    bad[first_internal] = (bad[first_internal] + 1) % C.R
    with pytest.raises(ProofError, match="failed verification"):
        prove(pk, [witness_array(bad)])


@pytest.mark.parametrize(
    ("g2_on", "precompute"), [("device", 1), ("cpu", 1), ("cpu", FULL_COPIES), ("stream", 1)]
)
def test_emulated_cuda_backend(g2_on: str, precompute: int) -> None:
    from cuzk.backends.cuda._emulator import EmulatorRuntime, host_compiler

    if host_compiler() is None:
        pytest.skip("the CUDA emulator needs a C++ compiler")
    from cuzk.backends.cuda import CudaBackend

    r1cs, w = toy()
    _round_trip(CudaBackend(runtime=EmulatorRuntime()), r1cs, w, g2_on=g2_on, precompute=precompute)


@pytest.mark.gpu
@pytest.mark.parametrize(("g2_on", "precompute"), [("device", 1), ("cpu", 1), ("cpu", 4), ("stream", 1)])
def test_cuda_device(g2_on: str, precompute: int) -> None:
    r1cs, w = random_circuit(11, n_internal=3000)
    _round_trip(get_backend("cuda"), r1cs, w, g2_on=g2_on, precompute=precompute)
