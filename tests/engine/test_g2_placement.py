"""msm.g2_on=auto (the default): the G2 query on the device where the model fits the set with it
beside one unit and the other staged units, streamed from host memory where it does not, on the
CPU off a GPU; and whatever it picks, the proofs verify."""

from __future__ import annotations

import pytest

from cuzk.algebra.curves import G1
from cuzk.backends.cpu import CpuBackend
from cuzk.backends.cuda._emulator import EmulatorRuntime, host_compiler
from cuzk.engine import EngineConfig, work
from cuzk.engine.loader import g2_placement, resolve_g2, srs_footprint
from cuzk.errors import UnsatisfiedError, UsageError
from cuzk.groth16 import verify
from cuzk.groth16.proof import Proof

CIRCUIT = "porep-tiny"
needs_cxx = pytest.mark.skipif(host_compiler() is None, reason="the CUDA emulator needs a C++ compiler")


def _card_for_device(others: int) -> int:
    """The smallest emulated card on which auto keeps CIRCUIT's G2 query on the device."""
    from cuzk.backends.cuda import CudaBackend

    probe = CudaBackend(runtime=EmulatorRuntime())
    dev = work.srs_split(CIRCUIT, work.srs_bytes(CIRCUIT), on_device=True, g2_on="device")[1]
    ws = work.working_set(CIRCUIT, on_device=True, abc_on_worker=False, g2_on="device", backend=probe)
    return work.DEVICE_MARGIN_BYTES + dev + ws.device_peak + others * ws.device_staged


def test_auto_is_the_default_and_means_the_cpu_off_a_gpu() -> None:
    assert EngineConfig().g2_on == "auto"
    assert resolve_g2("auto", CIRCUIT, CpuBackend()) == "cpu"
    assert g2_placement(EngineConfig(backend="cpu"), CIRCUIT, CpuBackend()) == "cpu"
    for fixed in ("cpu", "device", "stream"):
        assert resolve_g2(fixed, CIRCUIT, CpuBackend()) == fixed
    with pytest.raises(UsageError, match="auto resolved"):
        work.g2_backend("auto", CpuBackend())


@needs_cxx
def test_auto_streams_exactly_when_the_set_with_its_g2_query_does_not_fit() -> None:
    from cuzk.backends.cuda import CudaBackend

    cfg = EngineConfig(backend="cuda", gpu_workers_per_device=2)  # 1 other worker + the urgent lane
    card = _card_for_device(others=2)
    fits = CudaBackend(runtime=EmulatorRuntime(memory_budget=card))
    short = CudaBackend(runtime=EmulatorRuntime(memory_budget=card - 1))
    assert g2_placement(cfg, CIRCUIT, fits) == "device"
    assert g2_placement(cfg, CIRCUIT, short) == "stream"
    # the reservation follows the placement: streamed, the G2 query's bytes are the host's
    g2 = work.Densities.of(work.topology(CIRCUIT)).b_size * work.G2_BYTES
    assert srs_footprint(cfg, CIRCUIT, fits)[0] == 0
    assert srs_footprint(cfg, CIRCUIT, short)[0] == g2
    # fewer staged units beside the unit: the smaller card fits again
    one = EngineConfig(backend="cuda", gpu_workers_per_device=1, urgent_lane=False)
    assert g2_placement(
        one, CIRCUIT, CudaBackend(runtime=EmulatorRuntime(memory_budget=_card_for_device(0)))
    ) == ("device")


@needs_cxx
def test_a_streamed_placement_proves_and_rejects_bad_input() -> None:
    from cuzk.backends.cuda import CudaBackend
    from cuzk.engine import LocalProver, ProofRequest

    emu = CudaBackend(runtime=EmulatorRuntime(memory_budget=_card_for_device(0) - 1))
    place = resolve_g2("auto", CIRCUIT, emu, False, 0)
    assert place == "stream"
    local = LocalProver(emu, g2_backend=work.g2_backend(place, emu))
    result = local.prove(ProofRequest(circuit=CIRCUIT, seed=9))  # every proof verified by the prover
    key = local.resident(ProofRequest(circuit=CIRCUIT, seed=9))
    assert type(key.b_g2).__name__ == "HostRowBases"  # the G2 query stayed in host memory
    proof, public = result.proofs[0], result.public_inputs[0]
    assert verify(key.vk, public, proof)
    assert not verify(key.vk, public, Proof(a=G1.neg(proof.a), b=proof.b, c=proof.c))
    circuit = work.circuit(CIRCUIT)
    with pytest.raises(UnsatisfiedError):
        local.prove(
            ProofRequest(circuit=CIRCUIT, instances=[circuit.corrupt(circuit.random_instance(seed=9))])
        )
