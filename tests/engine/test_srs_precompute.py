"""msm.precompute: the SRS's reservation counts the copies the backend keeps, proofs over them verify,
and a load whose copies do not fit leaves nothing behind."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from cuzk.algebra.curves import G1
from cuzk.backends.cpu import CpuBackend
from cuzk.backends.cuda._emulator import EmulatorRuntime, host_compiler
from cuzk.engine import EngineConfig, work
from cuzk.engine.loader import auto_copies, copies_plan, srs_footprint, srs_size
from cuzk.errors import DeviceMemoryError, UnsatisfiedError, UsageError
from cuzk.groth16 import make_resident, prove, verify
from cuzk.groth16.keys import Parameters
from cuzk.groth16.proof import Proof
from cuzk.toggles import AUTO_COPIES, FULL_COPIES

CIRCUIT = "porep-tiny"
needs_cxx = pytest.mark.skipif(host_compiler() is None, reason="the CUDA emulator needs a C++ compiler")


@pytest.fixture(scope="module")
def params(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Parameters]:
    from cuzk import config
    from cuzk.groth16.api import load_or_create_parameters

    with pytest.MonkeyPatch.context() as mp:  # parameters made in a private cache root
        mp.setenv("CUZK_CACHE_DIR", str(tmp_path_factory.mktemp("cache")))
        config.reload()
        topo = work.topology(CIRCUIT)
        yield load_or_create_parameters(CIRCUIT, topo, topo.hash, CpuBackend())[1]
    config.reload()


def test_the_toggle_sets_the_engine_field() -> None:
    assert EngineConfig().msm_precompute == 1
    assert EngineConfig().with_settings({"msm.precompute": "full"}).msm_precompute == FULL_COPIES
    assert EngineConfig().with_settings({"msm.precompute": "3"}).msm_precompute == 3
    assert EngineConfig().with_settings({"msm.precompute": "off"}).msm_precompute == 1
    assert EngineConfig().with_settings({"msm.precompute": "auto"}).msm_precompute == AUTO_COPIES
    with pytest.raises(UsageError, match="off, auto, full or a number"):
        EngineConfig().with_settings({"msm.precompute": "0"})
    with pytest.raises(UsageError, match="msm_precompute must be an integer >= 0"):
        EngineConfig(msm_precompute=-1)


def test_without_a_table_backend_the_size_is_the_plain_srs() -> None:
    cfg = EngineConfig(backend="cpu", msm_precompute=FULL_COPIES)
    assert srs_size(cfg, CIRCUIT, 0) == work.srs_bytes(CIRCUIT)
    assert work.srs_bytes(CIRCUIT, precompute=FULL_COPIES, backend=CpuBackend()) == work.srs_bytes(CIRCUIT)


@needs_cxx
def test_the_reservation_is_what_the_copies_take_and_proofs_verify(
    params: Parameters, monkeypatch: pytest.MonkeyPatch
) -> None:
    from cuzk.backends.cuda import CudaBackend
    from cuzk.backends.cuda import msm as M

    copies: list[int] = []
    real = M.pippenger
    monkeypatch.setattr(
        M,
        "pippenger",
        lambda rt, c, r, s, plan, index=None: (copies.append(plan.copies), real(rt, c, r, s, plan, index))[1],
    )

    emu = CudaBackend(runtime=EmulatorRuntime(), msm_split=True)
    topo = work.topology(CIRCUIT)
    srs = make_resident(params, topo, emu, g2_backend=CpuBackend(), precompute=2)
    queries = (srs.h, srs.l, srs.a, srs.b_g1)
    assert all(q.copies == 2 for q in queries)
    extra = sum(q.extra_bytes for q in queries)
    assert extra == sum(q.nbytes for q in queries)  # one copy more of each
    assert work.srs_bytes(CIRCUIT, precompute=2, backend=emu) == work.srs_bytes(CIRCUIT) + extra
    circuit = work.circuit(CIRCUIT)
    inst = circuit.random_instance(seed=3)
    res = prove(srs, [circuit.witness(inst)])
    proof, public = res.proofs[0], res.public_inputs[0]
    assert verify(srs.vk, public, proof)
    # h over its table; the 0/1 split leaves l, a and b_g1 tails of a few full scalars, which the
    # cost model may run plain over copy 0 (a table's window suits its full n)
    assert copies[0] == 2 and len(copies) == 4
    emu.msm_split, copies[:] = False, []
    res = prove(srs, [circuit.witness(inst)])
    assert verify(srs.vk, res.public_inputs[0], res.proofs[0])
    assert copies.count(2) == 4  # unsplit: h, l, a and b_g1 over their tables
    assert not verify(srs.vk, public, Proof(a=proof.a, b=proof.b, c=G1.neg(proof.c)))
    with pytest.raises(UnsatisfiedError):  # a witness that breaks a constraint: no proof comes back
        prove(srs, [circuit.witness(circuit.corrupt(inst))])


@needs_cxx
def test_a_load_whose_copies_do_not_fit_leaves_nothing(params: Parameters) -> None:
    from cuzk.backends.cuda import CudaBackend

    plain = (params.h.shape[0] + params.l.shape[0] + params.a.shape[0] + params.b_g1.shape[0]) * 96
    # room for the bases and the first query's copies, not for every query's
    emu = CudaBackend(runtime=EmulatorRuntime(memory_budget=plain + params.h.shape[0] * 96 * 3))
    with pytest.raises(DeviceMemoryError, match="precomputed copies"):
        make_resident(params, work.topology(CIRCUIT), emu, g2_backend=CpuBackend(), precompute=4)
    assert emu.memory_info()["resident"] == 0


@needs_cxx
def test_the_local_prover_keeps_the_copies_it_is_given(params: Parameters) -> None:
    # the job layer behind `bench single` / `bench ab` takes the toggle too, not only the engine
    from cuzk.backends.cuda import CudaBackend
    from cuzk.engine import LocalProver, ProofRequest

    emu = CudaBackend(runtime=EmulatorRuntime())
    local = LocalProver(emu, g2_backend=CpuBackend(), precompute=3)
    request = ProofRequest(circuit=CIRCUIT, seed=2)
    result = local.prove(request)  # every proof verified by the prover
    key = local.resident(request)
    assert all(q.copies == 3 for q in (key.h, key.l, key.a, key.b_g1))
    assert verify(key.vk, result.public_inputs[0], result.proofs[0])
    resident = emu.memory_info()["resident"]
    assert resident == sum(q.nbytes + q.extra_bytes for q in (key.h, key.l, key.a, key.b_g1))
    assert local.release(CIRCUIT) == 1
    assert emu.memory_info()["resident"] == 0


@needs_cxx
def test_evicting_an_entry_frees_its_tables_at_once(params: Parameters) -> None:
    from cuzk.backends.cuda import CudaBackend
    from cuzk.engine.loader import Loader as _Loader
    from cuzk.groth16.verifier import prepare

    emu = CudaBackend(runtime=EmulatorRuntime())
    srs = make_resident(params, work.topology(CIRCUIT), emu, g2_backend=CpuBackend(), precompute=2)
    assert emu.memory_info()["resident"] > 0
    resident = work.Resident(srs=srs, pvk=prepare(srs.vk), circuit=CIRCUIT, device=0)
    _Loader(EngineConfig(backend="cpu")).unload((CIRCUIT, 0), resident)
    assert emu.memory_info()["resident"] == 0
    assert srs.h.table is None and srs.h.rows is None


def _room_for(emu_copies: int, *, others: int) -> tuple[int, int]:
    """(the budget an emulated card needs so that auto plans exactly `emu_copies` copies of H with
    `others` staged units beside the unit, the bytes of those copies)."""
    from cuzk.backends.cuda import CudaBackend

    probe = CudaBackend(runtime=EmulatorRuntime())
    h = work.g1_query_points(CIRCUIT)["h"]
    dev = work.srs_split(CIRCUIT, work.srs_bytes(CIRCUIT), on_device=True, g2_on="cpu")[1]
    ws = work.working_set(CIRCUIT, on_device=True, abc_on_worker=False, g2_on="cpu", backend=probe)
    need = work.DEVICE_MARGIN_BYTES + dev + ws.device_peak + others * ws.device_staged
    extra = probe.precompute_cost(h, "g1", emu_copies)
    return need + extra, extra


@needs_cxx
@pytest.mark.parametrize("copies", [1, 2, 3])
def test_auto_plans_copies_of_h_within_the_room_the_model_leaves(copies: int) -> None:
    from cuzk.backends.cuda import CudaBackend

    # the engine's shape: 2 GPU workers and the urgent lane, so 2 other staged units
    cfg = EngineConfig(backend="cuda", msm_precompute=AUTO_COPIES, gpu_workers_per_device=2, g2_on="cpu")
    budget, extra = _room_for(copies, others=2)
    emu = CudaBackend(runtime=EmulatorRuntime(memory_budget=budget))
    plan = copies_plan(cfg, CIRCUIT, emu)
    assert plan == {"h": copies}
    assert srs_footprint(cfg, CIRCUIT, emu)[1] == srs_footprint(cfg.with_settings({"msm.precompute": "off"}),
                                                               CIRCUIT, emu)[1] + extra  # fmt: skip
    # one byte less and the largest count no longer fits
    short = CudaBackend(runtime=EmulatorRuntime(memory_budget=budget - 1))
    assert copies_plan(cfg, CIRCUIT, short) == {"h": max(1, copies - 1)}


def test_auto_keeps_no_copies_on_the_cpu_and_fixed_counts_pass_through() -> None:
    assert copies_plan(EngineConfig(backend="cpu", msm_precompute=AUTO_COPIES), CIRCUIT, CpuBackend()) == 1
    assert copies_plan(EngineConfig(backend="cpu", msm_precompute=4), CIRCUIT, CpuBackend()) == 4


@needs_cxx
def test_a_local_prover_on_auto_loads_h_with_its_copies_and_proofs_verify() -> None:
    from cuzk.backends.cuda import CudaBackend
    from cuzk.engine import LocalProver, ProofRequest

    budget, _ = _room_for(3, others=0)
    emu = CudaBackend(runtime=EmulatorRuntime(memory_budget=budget), msm_split=True)
    auto_copies.cache_clear()
    local = LocalProver(emu, g2_backend=CpuBackend(), precompute=AUTO_COPIES)
    request = ProofRequest(circuit=CIRCUIT, seed=5)
    result = local.prove(request)  # every proof verified by the prover
    key = local.resident(request)
    assert (key.h.copies, key.l.copies, key.a.copies, key.b_g1.copies) == (3, 1, 1, 1)
    assert verify(key.vk, result.public_inputs[0], result.proofs[0])
    proof = result.proofs[0]
    assert not verify(key.vk, result.public_inputs[0], Proof(a=proof.a, b=proof.b, c=G1.neg(proof.c)))
    circuit = work.circuit(CIRCUIT)
    with pytest.raises(UnsatisfiedError):
        local.prove(
            ProofRequest(circuit=CIRCUIT, instances=[circuit.corrupt(circuit.random_instance(seed=5))])
        )


def test_an_unresolved_auto_count_is_refused_before_any_load() -> None:
    from cuzk.groth16.srs import copies_for

    with pytest.raises(ValueError, match="auto unresolved"):
        copies_for(AUTO_COPIES, "h")
    assert copies_for({"h": 3}, "h") == 3 and copies_for({"h": 3}, "l") == 1


@needs_cxx
def test_a_local_prover_with_a_streamed_g2_plans_its_copies_for_stream() -> None:
    """With the G2 query streamed from host memory the set on the card is smaller, so auto plans
    for that placement, not for the G2 query on the device."""
    from cuzk.backends.cuda import CudaBackend
    from cuzk.engine import LocalProver

    probe = CudaBackend(runtime=EmulatorRuntime())
    h = work.g1_query_points(CIRCUIT)["h"]
    dev = work.srs_split(CIRCUIT, work.srs_bytes(CIRCUIT), on_device=True, g2_on="stream")[1]
    ws = work.working_set(CIRCUIT, on_device=True, abc_on_worker=False, g2_on="stream", backend=probe)
    budget = work.DEVICE_MARGIN_BYTES + dev + ws.device_peak + probe.precompute_cost(h, "g1", 2)
    emu = CudaBackend(runtime=EmulatorRuntime(memory_budget=budget))
    local = LocalProver(emu, g2_backend=emu.streamed(), precompute=AUTO_COPIES)
    assert local._copies(CIRCUIT) == {"h": 2}
