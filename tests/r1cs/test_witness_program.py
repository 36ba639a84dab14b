"""The witness program's fast paths: the bit scatter against numpy, and filling a caller's block in place."""

from __future__ import annotations

import numpy as np
import pytest

from cuzk.engine import work
from cuzk.errors import CircuitError
from cuzk.r1cs.program import BIT_TABLE, _scatter_bits


def test_the_bit_scatter_writes_what_fancy_indexing_wrote() -> None:
    rng = np.random.default_rng(5)
    lanes, k, rows = 7, 13, 400
    first = rng.choice(rows - 2 * k, size=lanes, replace=False).astype(np.int64)
    boff = rng.permutation(k).astype(np.int64)
    bval = rng.integers(0, 2, size=(lanes, k), dtype=np.uint8)
    got = rng.integers(0, 2**63, size=(rows, 4), dtype=np.uint64)  # stale values everywhere
    want = got.copy()
    want[first[:, None] + boff[None, :]] = BIT_TABLE[bval]
    assert _scatter_bits(got, first, boff, bval, BIT_TABLE[1]) == 0
    assert np.array_equal(got, want)  # zeros written as zeros (no float round trip), ones as Montgomery one
    bval[3, 5] = 2
    assert _scatter_bits(got, first, boff, bval, BIT_TABLE[1]) == 3 * k + 5 + 1


def test_the_program_fills_a_given_block_in_place() -> None:
    c = work.circuit("porep-tiny")
    inst = c.random_instance(seed=3)
    fresh = c.witness(inst)
    prog = c.program()
    block = np.zeros((prog.num_inputs + prog.num_aux, 4), dtype=np.uint64)
    into = c.witness(inst, out=block)
    assert np.shares_memory(into.aux, block) and np.array_equal(into.full(), fresh.full())
    with pytest.raises(CircuitError, match="contiguous uint64"):
        c.witness(inst, out=np.zeros((3, 4), dtype=np.uint64))
