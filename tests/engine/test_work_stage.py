"""The GPU worker's pre-staging (`work.stage`): the hand-over goes through Backend.stage, and the
prover's result does not depend on the shared-memory block it came from."""

from __future__ import annotations

from collections.abc import Iterator
from types import SimpleNamespace
from typing import Any

import numpy as np
import pytest

from cuzk.engine import work
from cuzk.groth16 import prover, verify
from cuzk.instrument import Timeline

CIRCUIT = "porep-tiny"


@pytest.fixture(scope="module", params=["cpu", pytest.param("cuda", marks=pytest.mark.gpu)])
def resident(
    request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[work.Resident]:
    from cuzk import config

    with pytest.MonkeyPatch.context() as mp:  # parameters made in a private cache root
        mp.setenv("CUZK_CACHE_DIR", str(tmp_path_factory.mktemp("cache")))
        config.reload()
        yield work.load_resident(CIRCUIT, request.param, 0, g2_on="cpu", params_dir=None)
    config.reload()


def _part(seed: int, with_abc: bool, resident: work.Resident) -> SimpleNamespace:
    circuit = work.circuit(CIRCUIT)
    w = circuit.witness(circuit.random_instance(seed=seed))
    abc = None
    if with_abc:
        full = np.concatenate([w.inputs, w.aux])
        be = resident.srs.backend
        abc = tuple(np.ascontiguousarray(be.to_host(v)) for v in prover.evaluate(resident.srs, be, full))
    return SimpleNamespace(inputs=w.inputs.copy(), aux=w.aux.copy(), abc=abc)


@pytest.mark.parametrize("with_abc", [False, True], ids=["witness-only", "abc-from-workers"])
def test_the_hand_over_is_staged_and_its_block_may_go(
    resident: work.Resident, with_abc: bool, monkeypatch: pytest.MonkeyPatch
) -> None:
    staged: list[tuple[tuple[int, ...], ...]] = []
    kind = type(resident.srs.backend)
    real = kind.stage

    def recording(self: Any, *pieces: np.ndarray, times: dict[str, float] | None = None) -> Any:
        staged.append(tuple(a.shape for a in pieces))
        return real(self, *pieces, times=times)

    monkeypatch.setattr(kind, "stage", recording)
    part = _part(7, with_abc, resident)
    assign = work.stage(resident, [part], Timeline())
    # a/b/c one array each; a witness as its inputs and aux, joined on the backend, not the host
    expected = [(part.abc[0].shape,)] * 3 if with_abc else [(part.inputs.shape, part.aux.shape)]
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


def test_two_witnesses_staged_as_one_batch_both_verify(resident: work.Resident) -> None:
    parts = [_part(s, False, resident) for s in (11, 12)]
    assign = work.stage(resident, parts, Timeline())
    for p in parts:
        p.inputs[:] = 0
        p.aux[:] = 0
    pending = work.start(assign(), resident)
    proofs = work.finalize(pending, resident, Timeline())
    inputs = work.public_inputs(pending, resident)
    assert len(proofs) == 2 and inputs[0] != inputs[1]
    assert all(verify(resident.srs.vk, inputs[j], proofs[j]) for j in range(2))
    assert not verify(resident.srs.vk, inputs[1], proofs[0])  # a proof does not pass for another's inputs


def test_a_staged_witness_that_breaks_a_constraint_is_refused(resident: work.Resident) -> None:
    from cuzk.errors import UnsatisfiedError

    part = _part(13, False, resident)
    part.aux[5] = part.aux[6] if not np.array_equal(part.aux[5], part.aux[6]) else part.aux[7]
    assign = work.stage(resident, [part], Timeline())
    with pytest.raises(UnsatisfiedError):
        assign()


def test_staged_witnesses_of_the_wrong_shape_are_refused_before_any_product(resident: work.Resident) -> None:
    from cuzk.algebra.fields import FR
    from cuzk.errors import CircuitError

    key, be = resident.srs, resident.srs.backend
    part = _part(14, False, resident)
    w = np.concatenate([part.inputs, part.aux])
    good_inputs = part.inputs[None]
    with pytest.raises(CircuitError, match="public inputs"):
        prover.synthesize_staged(key, part.inputs, be.stage(w)[None], be)  # not stacked
    with pytest.raises(CircuitError, match="staged witnesses have shape"):
        prover.synthesize_staged(key, good_inputs, be.stage(w[:-1])[None], be)
    bad_one = good_inputs.copy()
    bad_one[0, 0] = FR.from_ints([2])[0]
    with pytest.raises(CircuitError, match="input 0 must be ONE"):
        prover.synthesize_staged(key, bad_one, be.stage(w)[None], be)
    with pytest.raises(CircuitError, match="witness 1 has"):
        short = SimpleNamespace(inputs=part.inputs, aux=part.aux[:-1], abc=None)
        work.stage(resident, [part, short], Timeline())
