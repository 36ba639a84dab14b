"""The witness program runs a call group's lanes in slices bounded by LANE_BYTES; once a template
has run, its slices are sized by the bytes a lane of it held. Slicing never changes a value."""

from __future__ import annotations

import numpy as np

import cuzk.r1cs.program as P
from cuzk.circuits import get_circuit


def test_learned_slices_take_fewer_passes_and_change_no_value(monkeypatch):
    c = get_circuit("porep-medium")  # its SHA-256 groups have two lanes
    inst = c.random_instance(3)
    want = c.witness(inst).full().copy()  # the default budget
    prog = c.program()
    group = next(g for g in prog.groups if "sha256.sha256" in prog.templates[g.template])
    assert group.bases.shape[0] == 2
    # a budget of one lane at 32 bytes per value: the first run takes that group a lane at a time
    monkeypatch.setattr(P, "LANE_BYTES", 32 * group.n_aux)
    prog._held.clear()
    passes: list[int] = []
    run_calls = P.WitnessProgram._run_calls

    def counting(self, w, g, lo, hi):  # type: ignore[no-untyped-def]
        passes[-1] += 1
        return run_calls(self, w, g, lo, hi)

    monkeypatch.setattr(P.WitnessProgram, "_run_calls", counting)
    for _ in range(2):
        passes.append(0)
        got = c.witness(inst).full()
        assert np.array_equal(got, want)
    assert passes[1] < passes[0]  # the bit-valued group (a hash) now runs in fewer slices
    assert prog._held and all(v > 0 for v in prog._held.values())
