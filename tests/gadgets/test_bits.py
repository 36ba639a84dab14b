"""Boolean gadgets (xor, and, or, not, select, maj) against numpy truth tables.

Operands mix the three bit kinds (constant, Is, Not) at random, so every
folding rule is exercised; both synthesis paths must agree and satisfy.
"""

from __future__ import annotations

import numpy as np
import pytest
from gadget_harness import both

from cuzk.algebra.fields import FR
from cuzk.backends import get_backend
from cuzk.errors import UnsatisfiedError
from cuzk.gadgets.bits import Bits, and_, maj, not_, or_, select, xor
from cuzk.r1cs import ConstraintSystem, Witness, gadget

CPU = get_backend("cpu")

N = 24


def _mixed(cs, view, name, kinds):
    """Bits whose element i is constant, a variable, or a negated variable, per kinds[i]."""
    var = Bits.alloc(cs, N, view.bits(name))
    const_val = int(sum(1 << i for i, k in enumerate(kinds) if k == "1"))
    c = Bits.constant(N, const_val)
    n = not_(var)
    vm = sum(1 << i for i, k in enumerate(kinds) if k == "v")
    nm = sum(1 << i for i, k in enumerate(kinds) if k == "n")
    src = []
    for i, k in enumerate(kinds):
        src.append((var, i) if k == "v" else (n, i) if k == "n" else (c, i))
    parts = [b[i : i + 1] for b, i in src]
    out = Bits.concat(parts)
    assert out.vmask == vm | nm and out.nmask == nm
    return out


@gadget(name="test.bits.op")
def _op(cs, a, b, c, *, op):
    if op == "xor":
        return xor(cs, a, b)
    if op == "and":
        return and_(cs, a, b)
    if op == "or":
        return or_(cs, a, b)
    if op == "select":
        return select(cs, a, b, c)
    return maj(cs, a, b, c)


TRUTH = {
    "xor": lambda a, b, c: a ^ b,
    "and": lambda a, b, c: a & b,
    "or": lambda a, b, c: a | b,
    "select": lambda a, b, c: np.where(a == 1, b, c),
    "maj": lambda a, b, c: (a & b) ^ (a & c) ^ (b & c),
}


@pytest.mark.parametrize("op", sorted(TRUTH))
def test_ops_match_truth_tables(op, rng):
    for _ in range(3):
        kinds = [rng.choice(list("01vn"), size=N).tolist() for _ in range(3)]
        arrays = {k: rng.integers(0, 2, size=N, dtype=np.uint8) for k in "abc"}

        def body(cs, view, kinds=kinds):
            x, y, z = (_mixed(cs, view, k, kk) for k, kk in zip("abc", kinds, strict=True))
            return _op(cs, x, y, z, op=op), (x, y, z)

        arrays_schema = {k: ("bits", (N,)) for k in "abc"}
        (out, (x, y, z)), _ = both(body, arrays, arrays_schema)
        want = TRUTH[op](x.value[0], y.value[0], z.value[0])
        assert np.array_equal(out.value[0], want)


def test_xor_allocates_only_where_both_are_variables(rng):
    cs = ConstraintSystem()
    a = Bits.alloc(cs, 8, rng.integers(0, 2, (1, 8), dtype=np.uint8))
    before = cs.num_aux
    out = xor(cs, a, Bits.constant(8, 0b10110010))
    assert cs.num_aux == before  # a constant operand folds: x xor 1 = not x, x xor 0 = x
    assert out.nmask == 0b10110010 & 0xFF
    xor(cs, a, not_(a))
    assert cs.num_aux == before + 8


def test_not_is_free_and_involutive(rng):
    cs = ConstraintSystem()
    a = Bits.alloc(cs, 8, rng.integers(0, 2, (1, 8), dtype=np.uint8))
    rows = len(cs._pend_ns)
    b = not_(not_(a))
    assert len(cs._pend_ns) == rows
    assert (b.vmask, b.nmask, b.cbits) == (a.vmask, a.nmask, a.cbits)
    assert np.array_equal(b.value, a.value)


def test_a_non_bit_witness_value_is_rejected():
    cs = ConstraintSystem()
    with cs.namespace("bits"):
        Bits.alloc(cs, 2, np.array([[1, 0]], dtype=np.uint8))
    rec = cs.finish()
    rec.topology.check(rec.witness, CPU)
    aux = rec.witness.aux.copy()
    aux[1] = FR.from_ints([2])[0]  # 2 is not a bit
    with pytest.raises(UnsatisfiedError, match="bits/boolean") as err:
        rec.topology.check(Witness(rec.witness.inputs, aux), CPU)
    assert err.value.index == 1
