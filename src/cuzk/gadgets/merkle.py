"""Merkle inclusion paths: SHA-256 binary trees and Poseidon arity-2/8 trees.

Index bits are little-endian: bit l (or the l-th group of log2(arity) bits)
is the position of the current node among its siblings at level l, so the
leaf index is the path read from the leaf up. SHA-256 nodes are Filecoin's
fr32 digests: sha256(left || right) with the top two bits of the last byte
cleared, so that every node (and the root) is an Fr element when read
little-endian.

The native twins build *sparse* trees for instances: only the nodes on the
challenged paths are computed; every other child is a random node, which is
indistinguishable from the root of an unknown subtree. That makes any depth
cheap while every path is a valid opening of the one root.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from cuzk.algebra.constants import R
from cuzk.algebra.fields import FR
from cuzk.errors import CircuitError
from cuzk.gadgets import _fr
from cuzk.gadgets.bits import Bits, select
from cuzk.gadgets.num import Num
from cuzk.gadgets.poseidon import _hash_lcs, poseidon_native
from cuzk.gadgets.sha256 import sha256, sha256_native
from cuzk.r1cs.gadget import gadget
from cuzk.r1cs.lc import ONE

#: Message-order positions of the two bits fr32 clears (bits 7 and 6 of byte 31).
FR32_CLEARED = [248, 249]


def fr32(bits: Bits) -> Bits:
    return bits.with_zeros(FR32_CLEARED)


@gadget
def sha256_merkle_root(cs: Any, leaf: Bits, siblings: list[Bits], index: Bits, *, rounds: int = 64) -> Bits:
    """The root reached from leaf through siblings (one per level), index bits choosing left/right."""
    if index.n != len(siblings):
        raise CircuitError(f"{len(siblings)} levels need {len(siblings)} index bits, got {index.n}")
    cur = leaf
    for level, sib in enumerate(siblings):
        with cs.namespace(f"level {level}"):
            b = index[level : level + 1]
            left = select(cs, b, sib, cur)
            right = select(cs, b, cur, sib)
            cur = fr32(sha256(cs, Bits.concat([left, right]), rounds=rounds))
    return cur


def _one_hot(cs: Any, bits: Bits) -> tuple[list[dict[int, int]], list[np.ndarray] | None]:
    """Indicators e_k = [position == k] as LCs (and 0/1 values, when cs has them), k = sum_j 2^j bit_j."""
    lcs: list[dict[int, int]] = []
    vals: list[np.ndarray] | None = None
    for j in range(bits.n):
        bj = bits[j : j + 1]
        bv = bj.require_value()[:, 0] if cs.values else None
        blc = bj.lc(0) if cs.constraints else {}
        if j == 0:
            lcs = [_lc_sub({ONE: 1}, blc), blc] if cs.constraints else [{}, {}]
            vals = None if bv is None else [1 - bv, bv]
            continue
        new_lcs: list[dict[int, int]] = []
        hi_lcs: list[dict[int, int]] = []
        new_vals: list[np.ndarray] = []
        hi_vals: list[np.ndarray] = []
        for k, e in enumerate(lcs):
            pv = None
            if vals is not None and bv is not None:
                pv = vals[k] & bv
                new_vals.append(vals[k] & (1 - bv))
                hi_vals.append(pv)
            p = cs.alloc(None if pv is None else _bit_fr(pv))
            if cs.constraints:
                cs.enforce(e, blc, {p: 1}, f"one-hot {j}")
            new_lcs.append(_lc_sub(e, {p: 1}) if cs.constraints else {})
            hi_lcs.append({p: 1} if cs.constraints else {})
        lcs = new_lcs + hi_lcs
        vals = None if vals is None else new_vals + hi_vals
    return lcs, vals


def _bit_fr(bits: np.ndarray) -> np.ndarray:
    out = np.zeros((bits.shape[0], 4), dtype=np.uint64)
    out[bits != 0] = FR.one()
    return out


def _lc_sub(a: dict[int, int], b: dict[int, int]) -> dict[int, int]:
    out = dict(a)
    for v, k in b.items():
        out[v] = (out.get(v, 0) - k) % R
    return {v: k for v, k in out.items() if k}


def _insert(cs: Any, cur: Num, sibs: list[Num], bits: Bits) -> tuple[list[dict[int, int]], np.ndarray | None]:
    """The arity children with cur at the position the bits name and the siblings around it, in order."""
    a = len(sibs) + 1
    e_lcs, e_vals = _one_hot(cs, bits)
    children: list[dict[int, int]] = []
    values = np.empty((cur.require_value().shape[0], a, 4), dtype=np.uint64) if cs.values else None
    for j in range(a):
        base = sibs[j - 1] if j > 0 else sibs[0]
        lc = base.lc() if cs.constraints else {}
        val = base.require_value().copy() if cs.values else None
        # child_j = base + [pos == j](cur - base) + [pos > j](sibs[j] - sibs[j-1]) (middle positions)
        terms = [(e_lcs[j], None if e_vals is None else e_vals[j], cur)]
        if 0 < j < a - 1:
            gt_lc: dict[int, int] = {}
            for k in range(j + 1, a):
                for v, w in e_lcs[k].items():
                    gt_lc[v] = (gt_lc.get(v, 0) + w) % R
            gt_val = None if e_vals is None else np.bitwise_or.reduce(np.stack(e_vals[j + 1 :]), axis=0)
            terms.append(({v: w for v, w in gt_lc.items() if w}, gt_val, sibs[j]))
        for sel_lc, sel_val, target in terms:
            pv = None
            if val is not None and sel_val is not None:
                diff = _fr.sub(target.require_value(), base.require_value())
                pv = np.where((sel_val != 0)[:, None], diff, np.uint64(0))
                val = _fr.add(val, pv)
            p = cs.alloc(pv)
            if cs.constraints:
                d = _lc_sub(target.lc(), base.lc())
                cs.enforce(sel_lc, d, {p: 1}, f"insert {j}")
                lc = dict(lc)
                lc[p] = (lc.get(p, 0) + 1) % R
        children.append(lc)
        if values is not None and val is not None:
            values[:, j] = val
    return children, values


@gadget
def poseidon_merkle_root(cs: Any, leaf: Num, siblings: list[list[Num]], index: Bits, *, arity: int) -> Num:
    """The root of a Poseidon arity-2^h tree reached from leaf; index has h bits per level."""
    h = arity.bit_length() - 1
    if arity < 2 or 1 << h != arity:
        raise CircuitError(f"Poseidon Merkle trees need a power-of-two arity, got {arity}")
    if index.n != h * len(siblings):
        raise CircuitError(
            f"{len(siblings)} levels of arity {arity} need {h * len(siblings)} index bits, got {index.n}"
        )
    cur = leaf
    for level, sibs in enumerate(siblings):
        if len(sibs) != arity - 1:
            raise CircuitError(f"level {level} has {len(sibs)} siblings; arity {arity} needs {arity - 1}")
        with cs.namespace(f"level {level}"):
            children, values = _insert(cs, cur, sibs, index[h * level : h * (level + 1)])
            cur = _hash_lcs(cs, arity, children, values)
    return cur


# --- native sparse trees ----------------------------------------------------------------


def fr32_truncate(digests: np.ndarray) -> np.ndarray:
    out = np.array(digests, dtype=np.uint8, copy=True)
    out[..., 31] &= 0x3F
    return out


def random_fr32(rng: np.random.Generator, n: int) -> np.ndarray:
    return fr32_truncate(rng.integers(0, 256, size=(n, 32), dtype=np.uint8))


def sha256_sparse_tree(
    rng: np.random.Generator, leaves: np.ndarray, indices: np.ndarray, depth: int, rounds: int = 64
) -> tuple[np.ndarray, np.ndarray]:
    """(root (32,) uint8, siblings (C, depth, 32) uint8) for leaves (C, 32) at indices (C,)."""
    return _sparse_tree(
        leaves,
        indices,
        depth,
        2,
        lambda n: random_fr32(rng, n),
        lambda kids: fr32_truncate(sha256_native(kids.reshape(kids.shape[0], 64), rounds)),
    )


def poseidon_sparse_tree(
    rng: np.random.Generator, leaves: np.ndarray, indices: np.ndarray, depth: int, arity: int
) -> tuple[np.ndarray, np.ndarray]:
    """(root (4,), siblings (C, depth, arity - 1, 4)) for Fr leaves (C, 4) at indices (C,), Montgomery."""
    return _sparse_tree(
        leaves, indices, depth, arity, lambda n: FR.random(n, rng), lambda kids: poseidon_native(arity, kids)
    )


def _sparse_tree(
    leaves: np.ndarray, indices: np.ndarray, depth: int, arity: int, rand: Any, hash_many: Any
) -> tuple[np.ndarray, np.ndarray]:
    idx = np.asarray(indices, dtype=np.int64)
    if idx.size and (idx.min() < 0 or idx.max() >= arity**depth):
        raise CircuitError(f"leaf indices must be in [0, {arity}^{depth})")
    known = dict(zip(idx.tolist(), np.asarray(leaves), strict=True))
    sib_shape = leaves.shape[1:]
    siblings = np.empty((idx.size, depth, arity - 1, *sib_shape), dtype=leaves.dtype)
    cur_idx = idx.copy()
    for level in range(depth):
        parents = sorted({k // arity for k in known})
        kids = np.empty((len(parents), arity, *sib_shape), dtype=leaves.dtype)
        fresh = rand(len(parents) * arity)
        for n, p in enumerate(parents):
            for j in range(arity):
                node = known.get(p * arity + j)
                kids[n, j] = fresh[n * arity + j] if node is None else node
        hashed = hash_many(kids) if parents else kids[:, 0]
        row = {p: n for n, p in enumerate(parents)}
        for c, k in enumerate(cur_idx.tolist()):
            n, pos = row[k // arity], k % arity
            siblings[c, level] = np.delete(kids[n], pos, axis=0)
        known = {p: hashed[n] for n, p in enumerate(parents)}
        cur_idx //= arity
    (root,) = known.values()
    if arity == 2:
        siblings = siblings[:, :, 0]
    return root, siblings


@gadget
def select_num(cs: Any, items: list[Num], index: Bits) -> Num:
    """items[k] for k = the little-endian index bits, as a new variable (one-hot, products, sum).

    Costs 2^h - 2 one-hot products, one product per item and the output: 255 constraints for
    the 128 apex leaves of a SnapDeals partition.
    """
    if len(items) != 1 << index.n:
        raise CircuitError(f"{index.n} index bits select among {1 << index.n} items, got {len(items)}")
    e_lcs, e_vals = _one_hot(cs, index)
    total: dict[int, int] = {}
    acc = None
    for k, item in enumerate(items):
        pv = None
        if cs.values and e_vals is not None:
            pv = np.where((e_vals[k] != 0)[:, None], item.require_value(), np.uint64(0))
            acc = pv if acc is None else _fr.add(acc, pv)
        p = cs.alloc(pv)
        if cs.constraints:
            cs.enforce(e_lcs[k], item.lc(), {p: 1}, f"pick {k}")
            total[p] = 1
    out = cs.alloc(acc)
    if cs.constraints:
        cs.enforce(total, {ONE: 1}, {out: 1}, "selected")
    return Num(out, acc)
