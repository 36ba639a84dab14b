"""Run a gadget both ways: direct (bellman path, concrete values) and recorded + witness program.

`both(body, arrays, schema)` builds a one-gadget circuit whose private inputs are
instance arrays, checks that the two paths give the same matrices and witness
bit for bit and that the witness satisfies them, and returns the direct path's
output object (with values) and the recording.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from cuzk.backends import get_backend
from cuzk.circuits.base import SourceView, ValuesView
from cuzk.r1cs import ConstraintSystem, Recording

CPU = get_backend("cpu")


def same_recordings(a: Recording, b_topo: Any, b_wit: Any) -> None:
    ta = a.topology
    assert ta.hash == b_topo.hash
    for m in "ABC":
        x, y = getattr(ta, m), getattr(b_topo, m)
        assert np.array_equal(x.indptr, y.indptr) and np.array_equal(x.indices, y.indices)
        assert np.array_equal(x.data, y.data)
    assert np.array_equal(a.witness.inputs, b_wit.inputs)
    assert np.array_equal(a.witness.aux, b_wit.aux)
    assert [ta.constraint_name(i) for i in range(ta.num_constraints)] == [
        b_topo.constraint_name(i) for i in range(b_topo.num_constraints)
    ]


def both(
    body: Any, arrays: dict[str, np.ndarray], schema: dict[str, tuple[str, tuple[int, ...]]]
) -> tuple[Any, Recording]:
    cs = ConstraintSystem()
    out = body(cs, ValuesView(arrays))
    direct = cs.finish()
    direct.topology.check(direct.witness, CPU)
    rec_cs = ConstraintSystem(values=False)
    body(rec_cs, SourceView())
    rec = rec_cs.finish(schema)
    wit = rec.program.run(arrays)
    same_recordings(direct, rec.topology, wit)
    return out, rec
