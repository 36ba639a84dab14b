"""The device side of the memory model (issue 34): what a partition holds on a GPU, and a job
that cannot fit the card refused at once with the numbers, before any work starts."""

from __future__ import annotations

from typing import Any

import pytest

from cuzk.engine import Engine, EngineConfig, JobStatus, ProofRequest, work


def test_the_gpu_model_keeps_the_transforms_off_the_host():
    cpu = work.working_set("porep-tiny")
    gpu = work.working_set("porep-tiny", on_device=True, abc_on_worker=False, g2_on_cpu=False)
    handed = work.working_set("porep-tiny", on_device=True, abc_on_worker=True, g2_on_cpu=True)
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
    from cuzk.backends.cuda.msm import make_plan, scratch_bytes

    transforms = (cols + 4 * m) * work.FR_BYTES
    msm = (cols + m) * work.FR_BYTES + scratch_bytes(make_plan(max(m, cols)), 24)
    assert gpu.device_peak == max(transforms, msm) + work._FIXED_BYTES


def test_the_largest_msm_scratch_is_bounded_by_its_chunks():
    """porep-32g's H MSM (2^27 - 1 device scalars): in one chunk its scratch (~31 GB) did not fit
    beside the resident set on an 80 GB card; chunks of at most MAX_CHUNK points keep it near
    10 GB, and the model counts what the MSM reserves."""
    from dataclasses import replace

    from cuzk.backends.cuda.msm import MAX_CHUNK, make_plan, scratch_bytes

    plan = make_plan((1 << 27) - 1)
    assert plan.chunk <= MAX_CHUNK and len(plan.chunks) == 4
    assert scratch_bytes(plan, 24) < 10e9 < 30e9 < scratch_bytes(replace(plan, chunk=plan.n), 24)
    assert make_plan(1 << 20).chunks == [(0, 1 << 20)]  # small MSMs keep one chunk


class FakeCard:
    name = "fake"

    def __init__(self, total: int) -> None:
        self.total = total

    def memory_info(self) -> dict[str, Any]:
        return {"total": self.total, "budget": None}


@pytest.mark.parametrize("workers", [1, 2])
def test_a_job_that_cannot_fit_the_card_fails_at_once_naming_the_numbers(monkeypatch, workers):
    cfg = EngineConfig(
        backend="cpu", synthesis_workers=1, gpu_workers_per_device=workers, memory_budget="1GiB"
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
        reason = stage.device_refusal("porep-tiny", 0, 1, ws, 0)
        assert reason is not None
        monkeypatch.setitem(engine.backends, 0, FakeCard(card + 1))
        assert stage.device_refusal("porep-tiny", 0, 1, ws, 0) is None  # exactly fits
