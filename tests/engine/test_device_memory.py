"""The device side of the memory model (issue 34): what a partition holds on a GPU, and a job
that cannot fit the card refused at once with the numbers, before any work starts."""

from __future__ import annotations

from typing import Any

import pytest

from cuzk.engine import Engine, EngineConfig, JobStatus, ProofRequest, work


def test_the_gpu_model_keeps_the_transforms_off_the_host():
    cpu = work.working_set("porep-tiny")
    gpu = work.working_set("porep-tiny", on_device=True, abc_on_worker=False, g2_on="device")
    handed = work.working_set("porep-tiny", on_device=True, abc_on_worker=True, g2_on="cpu")
    assert (cpu.device_staged, cpu.device_peak) == (0, 0)
    assert gpu.total < handed.total < cpu.total  # a/b/c handed over, then the G2 scalars, add host bytes
    assert 0 < gpu.device_staged < handed.device_staged < gpu.device_peak
    assert gpu.abc < gpu.total and handed.abc < handed.total
    topo = work.topology("porep-tiny")
    cols = topo.num_inputs + topo.num_aux
    # a witness-only hand-over goes to the device from the worker's block: no host stack of it
    assert gpu.abc == cols * work.FR_BYTES == gpu.device_staged
    assert handed.abc == (2 * cols + 3 * topo.num_constraints) * work.FR_BYTES  # the a/b/c path stacks it
    # on the device: products at the domain's length hold H's transforms (4m); handed-over
    # a/b/c stay staged beside their padded copies
    assert handed.device_peak - gpu.device_peak == 3 * topo.num_constraints * work.FR_BYTES
    m = work.Domain.for_constraints(topo.num_constraints).m
    transforms = (cols + 4 * m) * work.FR_BYTES
    assert gpu.device_peak == transforms + work._FIXED_BYTES  # no backend: no MSM scratch counted


class ScratchBackend:
    """A backend that plans its MSM's scratch at 10 kB a point (the model takes its word)."""

    def msm_scratch_bytes(self, n: int) -> int:
        return 10_000 * n


def test_the_device_peak_is_the_larger_phase_with_the_backends_msm_scratch():
    topo = work.topology("porep-tiny")
    cols = topo.num_inputs + topo.num_aux
    m = work.Domain.for_constraints(topo.num_constraints).m
    ws = work.working_set("porep-tiny", on_device=True, abc_on_worker=False, backend=ScratchBackend())  # type: ignore[arg-type]
    msm = (cols + m) * work.FR_BYTES + 10_000 * max(m, cols)
    assert msm > (cols + 4 * m) * work.FR_BYTES  # the MSM phase is the larger here
    assert ws.device_peak == msm + work._FIXED_BYTES


class FakeCard:
    name = "fake"

    def __init__(self, total: int) -> None:
        self.total = total

    def memory_info(self) -> dict[str, Any]:
        return {"total": self.total, "budget": None}

    def msm_scratch_bytes(self, n: int) -> int:
        return 0


@pytest.mark.parametrize("workers", [1, 2])
def test_a_job_that_cannot_fit_the_card_fails_at_once_naming_the_numbers(monkeypatch, workers):
    cfg = EngineConfig(
        backend="cpu",
        synthesis_workers=1,
        gpu_workers_per_device=workers,
        memory_budget="1GiB",
        g2_on="device",
    )
    with Engine(cfg) as engine:
        ws = work.working_set("porep-tiny", on_device=True, abc_on_worker=False)
        card = (
            work.DEVICE_MARGIN_BYTES + ws.device_peak + (workers - 1) * ws.device_staged - 1
        )  # one byte short
        stage = engine.dispatcher  # the stage that admits a batch to a device
        stage.on_device, stage.abc_on_worker = True, False  # as on a GPU, whose card is FakeCard
        monkeypatch.setitem(engine.backends, 0, FakeCard(card))  # the engine's own backend for device 0
        monkeypatch.setattr("cuzk.engine.stages.srs_footprint", lambda cfg, circuit, backend: (0, 0))
        res = engine.submit(ProofRequest(circuit="porep-tiny", seed=1)).result(60)
        assert res.status is JobStatus.FAILED
        assert "BudgetExceededError" in res.error and "device 0's memory" in res.error
        assert f"{workers - 1} other GPU worker(s)" in res.error and "gpu.workers_per_device" in res.error
        assert "msm.chunk_cap" in res.error  # the other setting that moves the unit's peak
        reason = stage.device_refusal("porep-tiny", 0, 1, ws, 0)
        assert reason is not None
        monkeypatch.setitem(engine.backends, 0, FakeCard(card + 1))
        assert stage.device_refusal("porep-tiny", 0, 1, ws, 0) is None  # exactly fits


class StreamBackend:
    """A backend whose streamed twin plans 1 GB for a G2 MSM (chunks and scratch) and no G1 scratch."""

    def streamed(self) -> StreamBackend:
        return self

    def msm_scratch_bytes(self, n: int, group: str = "g1") -> int:
        return 10**9 if group == "g2" else 0


def test_a_streamed_g2_msm_is_a_phase_of_the_device_peak_and_its_query_stays_on_the_host():
    """msm.g2_on=stream: the witness, the B scalars and the twin's chunks are on the card at once
    (the larger phase for a tiny circuit); the G2 query's bytes are the host's, as with cpu."""
    topo = work.topology("porep-tiny")
    cols = topo.num_inputs + topo.num_aux
    b = work.Densities.of(topo).b_size
    be = StreamBackend()
    streamed = work.working_set("porep-tiny", on_device=True, abc_on_worker=False, g2_on="stream", backend=be)  # type: ignore[arg-type]
    device = work.working_set("porep-tiny", on_device=True, abc_on_worker=False, g2_on="device", backend=be)  # type: ignore[arg-type]
    assert streamed.device_peak == (cols + b) * work.FR_BYTES + 10**9 + work._FIXED_BYTES > device.device_peak
    assert streamed.total == device.total  # the B scalars stay on the card: no host copy kept
    total = work.srs_bytes("porep-tiny")
    g2 = b * work.G2_BYTES
    assert work.srs_split("porep-tiny", total, on_device=True, g2_on="stream") == (g2, total - g2)
    assert work.srs_split("porep-tiny", total, on_device=True, g2_on="cpu") == (g2, total - g2)
    assert work.srs_split("porep-tiny", total, on_device=True, g2_on="device") == (0, total)
