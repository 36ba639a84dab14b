"""The GPU worker's pre-staging (`work.stage`): the hand-over goes through Backend.stage, and the
prover's result does not depend on the shared-memory block it came from."""

from __future__ import annotations

from collections.abc import Iterator
from types import SimpleNamespace
from typing import Any

import numpy as np
import pytest

from cuzk.backends.cpu import CpuBackend
from cuzk.engine import work
from cuzk.groth16 import prover, verify
from cuzk.instrument import Timeline

CIRCUIT = "porep-tiny"


@pytest.fixture(scope="module")
def resident(tmp_path_factory: pytest.TempPathFactory) -> Iterator[work.Resident]:
    from cuzk import config

    with pytest.MonkeyPatch.context() as mp:  # parameters made in a private cache root
        mp.setenv("CUZK_CACHE_DIR", str(tmp_path_factory.mktemp("cache")))
        config.reload()
        yield work.load_resident(CIRCUIT, "cpu", 0, g2_on_cpu=True, params_dir=None)
    config.reload()


def _part(seed: int, with_abc: bool, resident: work.Resident) -> SimpleNamespace:
    circuit = work.circuit(CIRCUIT)
    w = circuit.witness(circuit.random_instance(seed=seed))
    abc = None
    if with_abc:
        full = np.concatenate([w.inputs, w.aux])
        abc = tuple(
            np.ascontiguousarray(v) for v in prover.evaluate(resident.srs, resident.srs.backend, full)
        )
    return SimpleNamespace(inputs=w.inputs.copy(), aux=w.aux.copy(), abc=abc)


@pytest.mark.parametrize("with_abc", [False, True], ids=["witness-only", "abc-from-workers"])
def test_the_hand_over_is_staged_and_its_block_may_go(
    resident: work.Resident, with_abc: bool, monkeypatch: pytest.MonkeyPatch
) -> None:
    staged: list[tuple[int, ...]] = []
    real = CpuBackend.stage

    def recording(self: CpuBackend, a: np.ndarray) -> Any:
        staged.append(a.shape)
        return real(self, a)

    monkeypatch.setattr(CpuBackend, "stage", recording)
    part = _part(7, with_abc, resident)
    assign = work.stage(resident, [part], Timeline())
    n_vars = part.inputs.shape[0] + part.aux.shape[0]
    expected = [part.abc[0].shape] * 3 if with_abc else [(1, n_vars, 4)]
    assert staged == expected
    for v in (part.inputs, part.aux, *(part.abc or ())):
        v[:] = 0  # the shared-memory block is closed after stage returns: nothing may refer to it
    pending = work.start(assign(), resident)
    proofs = work.finalize(pending, resident, Timeline())
    inputs = work.public_inputs(pending, resident)
    assert verify(resident.srs.vk, inputs[0], proofs[0])
    bad = list(inputs[0])
    bad[0] = (bad[0] + 1) % (1 << 250)
    assert not verify(resident.srs.vk, bad, proofs[0])  # a changed public input is refused
