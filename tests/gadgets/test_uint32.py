"""UInt32 gadgets against Python integer arithmetic mod 2^32."""

from __future__ import annotations

import numpy as np
import pytest
from gadget_harness import both

from cuzk.gadgets.bits import Bits, xor
from cuzk.gadgets.uint32 import add_many, constant, rotr, shr, words
from cuzk.r1cs import gadget


def _word_bits(x: int) -> np.ndarray:
    return np.array([(x >> i) & 1 for i in range(32)], dtype=np.uint8)


@gadget(name="test.uint32.mix")
def _mix(cs, a, b, c, *, k, consts):
    s = add_many(cs, [a, b, c, *[constant(x) for x in consts]])
    return s, xor(cs, rotr(a, k), shr(b, k)), add_many(cs, [rotr(s, k), constant(consts[0])])


@pytest.mark.parametrize("n_const", [0, 1, 3])
def test_add_many_rotations_and_shifts(n_const, rng):
    for _ in range(4):
        vals = [int(v) for v in rng.integers(0, 1 << 32, size=3, dtype=np.uint64)]
        consts = [int(v) for v in rng.integers(0, 1 << 32, size=max(1, n_const), dtype=np.uint64)][
            : max(1, n_const)
        ]
        k = int(rng.integers(1, 32))
        arrays = {n: _word_bits(v) for n, v in zip("abc", vals, strict=True)}

        def body(cs, view, consts=consts, k=k):
            a, b, c = (Bits.alloc(cs, 32, view.bits(n)) for n in "abc")
            return _mix(cs, a, b, c, k=k, consts=consts if n_const else consts[:1])

        (s, x, t), _ = both(body, arrays, {n: ("bits", (32,)) for n in "abc"})
        used = consts if n_const else consts[:1]
        want_s = (sum(vals) + sum(used)) % (1 << 32)
        rot = lambda v, k=k: ((v >> k) | (v << (32 - k))) % (1 << 32)  # noqa: E731
        assert int(words(s)[0]) == want_s
        assert int(words(x)[0]) == rot(vals[0]) ^ (vals[1] >> k)
        assert int(words(t)[0]) == (rot(want_s) + used[0]) % (1 << 32)


def test_add_many_of_constants_is_constant():
    out = add_many(None, [constant(0xFFFFFFFF), constant(2)])
    assert out.vmask == 0 and out.cbits == 1
