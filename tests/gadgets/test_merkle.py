"""Merkle paths: native sparse trees re-checked with hashlib / the Python Poseidon reference,
and the path gadgets (SHA-256 binary, Poseidon arity 2 and 8) reaching the same roots."""

from __future__ import annotations

import hashlib

import numpy as np
import pytest
from gadget_harness import CPU, both
from test_poseidon import reference_permutation

from cuzk.algebra.fields import FR
from cuzk.errors import UnsatisfiedError
from cuzk.gadgets.bits import Bits
from cuzk.gadgets.merkle import (
    poseidon_merkle_root,
    poseidon_sparse_tree,
    random_fr32,
    select_num,
    sha256_merkle_root,
    sha256_sparse_tree,
)
from cuzk.gadgets.num import Num, num_to_bits
from cuzk.gadgets.poseidon_params import params
from cuzk.gadgets.sha256 import bytes_to_bits
from cuzk.r1cs import Witness


def _fr32_node(left: bytes, right: bytes) -> bytes:
    d = bytearray(hashlib.sha256(left + right).digest())
    d[31] &= 0x3F
    return bytes(d)


def test_sha256_sparse_tree_paths_open_the_root(rng):
    depth = 6
    idx = np.array([0, 5, 17, 63])
    leaves = random_fr32(rng, idx.size)
    root, sibs = sha256_sparse_tree(rng, leaves, idx, depth)
    for c, x in enumerate(idx.tolist()):
        cur = leaves[c].tobytes()
        for lv in range(depth):
            s = sibs[c, lv].tobytes()
            cur = _fr32_node(s, cur) if (x >> lv) & 1 else _fr32_node(cur, s)
        assert cur == root.tobytes()


@pytest.mark.parametrize("arity", [2, 8])
def test_poseidon_sparse_tree_paths_open_the_root(arity, rng):
    depth = 3
    idx = np.array([1, arity**depth - 1])
    leaves = FR.random(2, rng)
    root, sibs = poseidon_sparse_tree(rng, leaves, idx, depth, arity)
    sibs = sibs.reshape(2, depth, arity - 1, 4)
    tag = params(arity).domain_tag
    for c, x in enumerate(idx.tolist()):
        cur = FR.to_ints(leaves[c : c + 1])[0]
        for lv in range(depth):
            pos = (x // arity**lv) % arity
            kids = FR.to_ints(sibs[c, lv])
            kids.insert(pos, cur)
            cur = reference_permutation([tag, *kids], arity)[1]
        assert cur == FR.to_ints(root[None])[0]


def test_sha256_merkle_gadget(rng):
    depth, x = 2, 2
    leaves = random_fr32(rng, 1)
    root, sibs = sha256_sparse_tree(rng, leaves, np.array([x]), depth, rounds=3)
    arrays = {"leaf": bytes_to_bits(leaves[0]), "sibs": bytes_to_bits(sibs[0]), "x": FR.from_ints([x])}

    def body(cs, view):
        xv = Num.alloc(cs, view.field("x", 0))
        bits = num_to_bits(cs, xv, n=depth)
        leaf = Bits.alloc(cs, 256, view.bits("leaf"))
        ss = [Bits.alloc(cs, 256, view.bits("sibs", lv)) for lv in range(depth)]
        return sha256_merkle_root(cs, leaf, ss, bits, rounds=3)

    schema = {"leaf": ("bits", (256,)), "sibs": ("bits", (depth, 256)), "x": ("field", (1,))}
    out, _ = both(body, arrays, schema)
    assert np.packbits(out.value[0]).tobytes() == root.tobytes()


@pytest.mark.parametrize("arity", [2, 8])
def test_poseidon_merkle_gadget_every_position(arity, rng):
    depth = 2
    for x in range(0, arity**depth, max(1, arity**depth // 9)):
        leaves = FR.random(1, rng)
        root, sibs = poseidon_sparse_tree(rng, leaves, np.array([x]), depth, arity)
        sibs = sibs.reshape(1, depth, arity - 1, 4)
        arrays = {"leaf": leaves, "sibs": sibs[0], "x": FR.from_ints([x])}

        def body(cs, view):
            xv = Num.alloc(cs, view.field("x", 0))
            bits = num_to_bits(cs, xv, n=(arity.bit_length() - 1) * depth)
            leaf = Num.alloc(cs, view.field("leaf", 0))
            ss = [[Num.alloc(cs, view.field("sibs", lv, j)) for j in range(arity - 1)] for lv in range(depth)]
            return poseidon_merkle_root(cs, leaf, ss, bits, arity=arity)

        schema = {"leaf": ("field", (1,)), "sibs": ("field", (depth, arity - 1)), "x": ("field", (1,))}
        out, _ = both(body, arrays, schema)
        assert np.array_equal(out.value[0], root)


def test_select_num_picks_every_position_and_a_wrong_pick_fails(rng):
    """The apex-leaf pick of snap-32g: items[index] by one-hot products; recorded == direct."""
    n_bits = 3
    items = FR.random(1 << n_bits, rng)
    for x in range(1 << n_bits):
        arrays = {"items": items, "x": FR.from_ints([x])}

        def body(cs, view):
            xv = Num.alloc(cs, view.field("x", 0))
            bits = num_to_bits(cs, xv, n=n_bits)
            its = [Num.alloc(cs, view.field("items", i)) for i in range(1 << n_bits)]
            return select_num(cs, its, bits)

        out, rec = both(body, arrays, {"items": ("field", (1 << n_bits,)), "x": ("field", (1,))})
        assert np.array_equal(out.value[0], items[x])
        # a claimed output other than items[x] breaks the last ("selected") row
        wit = rec.program.run(arrays)
        bad_aux = wit.aux.copy()
        bad_aux[-1] = items[(x + 1) % (1 << n_bits)]
        with pytest.raises(UnsatisfiedError, match="selected"):
            rec.topology.check(Witness(wit.inputs, bad_aux), CPU)
