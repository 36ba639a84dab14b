"""The bellman-style ConstraintSystem: layout, satisfiability, errors, and recording.

The oracle for the matrices is a Python-int evaluation of each row from the
CSR arrays; the toy circuit is bellman's x^3 + x + 5 = 35, worked by hand.
"""

from __future__ import annotations

import numpy as np
import pytest

from cuzk.algebra.constants import R
from cuzk.algebra.fields import FR
from cuzk.backends import get_backend
from cuzk.errors import CircuitError, UnsatisfiedError
from cuzk.r1cs import LC, ONE, ConstraintSystem, SourceRef, Witness, gadget

CPU = get_backend("cpu")


def _cubic(x: int, out: int | None = None) -> ConstraintSystem:
    """x^3 + x + 5 = out with out public (bellman's classic example)."""
    cs = ConstraintSystem()
    y = x**3 + x + 5 if out is None else out
    o = cs.alloc_input(y)
    xv = cs.alloc(x)
    x2 = cs.alloc(x * x)
    x3 = cs.alloc(x**3)
    with cs.namespace("cube"):
        cs.enforce(xv, xv, x2, "x*x")
        cs.enforce(x2, xv, x3, "x2*x")
    with cs.namespace("sum"):
        cs.enforce(LC.var(x3) + LC.var(xv) + LC.const(5), LC.const(1), o, "x3 + x + 5 = out")
    return cs


def _rows_ints(m, w: list[int]) -> list[int]:
    data = FR.to_ints(m.data) if m.nnz else []
    out = []
    for r in range(m.shape[0]):
        s = 0
        for k in range(m.indptr[r], m.indptr[r + 1]):
            s += data[k] * w[m.indices[k]]
        out.append(s % R)
    return out


def test_layout_and_satisfaction():
    rec = _cubic(3).finish()
    t, wit = rec.topology, rec.witness
    assert (t.num_inputs, t.num_aux, t.num_constraints) == (2, 3, 3 + 2)
    assert FR.to_ints(wit.inputs) == [1, 35] and FR.to_ints(wit.aux) == [3, 9, 27]
    # bellperson's trailing input rows: A holds input i, B and C are empty
    for i in range(2):
        r = 3 + i
        assert t.A.indices[t.A.indptr[r] : t.A.indptr[r + 1]].tolist() == [i]
        assert t.B.indptr[r + 1] == t.B.indptr[r] and t.C.indptr[r + 1] == t.C.indptr[r]
    w = FR.to_ints(wit.full())
    a, b, c = (_rows_ints(m, w) for m in (t.A, t.B, t.C))
    assert all((x * y - z) % R == 0 for x, y, z in zip(a, b, c, strict=True))
    ea, eb, ec = (FR.to_ints(v) for v in t.evaluate(wit, CPU))
    assert (ea, eb, ec) == (a, b, c)
    t.check(wit, CPU)
    assert [t.constraint_name(i) for i in range(3)] == ["cube/x*x", "cube/x2*x", "sum/x3 + x + 5 = out"]
    assert t.a_aux_density.all() and t.b_input_density.tolist() == [True, False]


def test_unsatisfied_names_the_first_failing_constraint():
    rec = _cubic(3, out=36).finish()
    with pytest.raises(UnsatisfiedError) as err:
        rec.topology.check(rec.witness, CPU)
    assert err.value.index == 2 and err.value.constraint == "sum/x3 + x + 5 = out"
    assert "sum/x3 + x + 5 = out" in str(err.value)


def test_check_rejects_a_witness_of_another_shape_and_a_bad_one():
    rec = _cubic(2).finish()
    t = rec.topology
    with pytest.raises(CircuitError, match="aux values"):
        t.check(Witness(rec.witness.inputs, rec.witness.aux[:2]), CPU)
    with pytest.raises(UnsatisfiedError, match="ONE"):
        t.check(Witness(FR.from_ints([2, 15]), rec.witness.aux), CPU)


def test_random_systems_against_int_oracle(rng):
    cs = ConstraintSystem()
    vals = [int(v) for v in rng.integers(0, 1 << 62, 12)]
    ins = [cs.alloc_input(v) for v in vals[:3]]
    aux = [cs.alloc(v) for v in vals[3:]]
    vars_ = ins + aux
    for k in range(20):
        lcs = []
        for _ in range(3):
            pick = rng.choice(len(vars_), size=int(rng.integers(0, 5)), replace=False)
            lcs.append({vars_[p]: int(rng.integers(-3, 1 << 40)) for p in pick} | {ONE: k})
        cs.enforce(*lcs, name=f"row {k}")
    rec = cs.finish()
    t = rec.topology
    w = FR.to_ints(rec.witness.full())
    for m, got in zip((t.A, t.B, t.C), t.evaluate(rec.witness, CPU), strict=True):
        assert FR.to_ints(got) == _rows_ints(m, w)
        assert not FR.is_zero(m.data).any()  # no stored zero: a column in the matrix is a density bit
    # the first row the oracle finds unsatisfied is the one named (a row whose A and C are both
    # empty but for ONE x 0 holds by chance, so it is not always row 0)
    a, b, c = (_rows_ints(m, w) for m in (t.A, t.B, t.C))
    first = next(k for k in range(20) if (a[k] * b[k] - c[k]) % R)
    with pytest.raises(UnsatisfiedError, match=rf"\(row {first}\)"):
        t.check(rec.witness, CPU)


def test_lc_arithmetic():
    a = LC.var(3, 2) + LC.var(4) - LC.var(3, 2)
    assert {k: v for k, v in a.items() if v} == {4: 1}
    assert (LC.var(1) * -1)[1] == R - 1
    assert (-LC.const(2))[ONE] == R - 2


@gadget(name="test.r1cs.double")
def _double(cs, x, *, times):
    """x * times as a new variable (a tiny gadget for the recording tests)."""
    from cuzk.gadgets.num import Num

    val = FR.scale(x.value, FR.from_ints([times])[0]) if cs.values else None
    y = Num(cs.alloc(val), val)
    if cs.constraints:
        cs.enforce({x.var: times}, {ONE: 1}, {y.var: 1}, "double")
    return y


def _record(body, schema):
    cs = ConstraintSystem(values=False)
    body(cs)
    return cs.finish(schema)


def test_recording_requires_sources_and_gadgets():
    from cuzk.gadgets.num import Num

    cs = ConstraintSystem(values=False)
    with pytest.raises(CircuitError, match="must come from the instance"):
        cs.alloc(None)
    cs = ConstraintSystem(values=False)
    x = Num(cs.alloc(SourceRef("x", (0,))), None)
    _double(cs, x, times=3)
    with pytest.raises(CircuitError, match="never read"):
        cs.finish({"x": ("field", (2,))})
    with pytest.raises(CircuitError, match="does not declare"):
        _record(lambda c: c.alloc(SourceRef("y", (0,))), {})


def test_stamped_and_inline_calls_match_direct(rng):
    """Template stamping, and the inline fallback for a variable passed twice, give direct's rows."""
    from cuzk.gadgets.num import Num
    from cuzk.gadgets.poseidon import poseidon_hash

    vals = FR.random(3, rng)

    def body(cs, get):
        xs = [Num.alloc(cs, get(i)) for i in range(3)]
        a = poseidon_hash(cs, [xs[0], xs[1]], arity=2)
        b = poseidon_hash(cs, [xs[2], a], arity=2)  # stamped from the same template
        c = poseidon_hash(cs, [b, b], arity=2)  # duplicate port: inline
        return _double(cs, c, times=5)

    cs = ConstraintSystem()
    body(cs, lambda i: vals[i : i + 1])
    direct = cs.finish()
    rec = _record(lambda c: body(c, lambda i: SourceRef("x", (i,))), {"x": ("field", (3,))})
    wit = rec.program.run({"x": vals})
    assert rec.topology.hash == direct.topology.hash
    assert np.array_equal(wit.aux, direct.witness.aux)
    rec.topology.check(wit, CPU)
    levels = sorted(g.level for g in rec.program.groups)
    assert levels == [1, 2, 3, 4]


def test_program_rejects_bad_instances(rng):
    rec = _record(lambda c: c.alloc(SourceRef("x", (0,))), {"x": ("field", (1,))})
    with pytest.raises(CircuitError, match="has no 'x'"):
        rec.program.run({})
    with pytest.raises(CircuitError, match="shape"):
        rec.program.run({"x": FR.random(2, rng)})
    bad = np.full((1, 4), np.iinfo(np.uint64).max, dtype=np.uint64)
    with pytest.raises(CircuitError, match="below the modulus"):
        rec.program.run({"x": bad})
    from cuzk.gadgets.bits import Bits

    rb = _record(lambda c: Bits.alloc(c, 4, SourceRef("b", ())), {"b": ("bits", (4,))})
    with pytest.raises(CircuitError, match="other than 0 and 1"):
        rb.program.run({"b": np.array([0, 1, 2, 1], dtype=np.uint8)})
