"""porep: one partition of a PoRep-like proof (the seal commit's shape).

Per challenge (index x, a public input):

1. data tree: the SHA-256 (fr32) Merkle inclusion of the data leaf at x in
   comm_d (binary, `data_depth` levels);
2. labelling: label = fr32(SHA-256(replica_id || x as 32 LE bytes || parent
   labels)) over `label_blocks` 64-byte blocks (plus the padding block);
3. column: Poseidon arity 11 over the node's 11 layer labels, the last of
   which must equal the computed label;
4. replica tree: the Poseidon arity-8 Merkle inclusion of the column hash at
   x in comm_r (`replica_depth` levels).

Public inputs: comm_d, comm_r, then each challenge index. A sector is 10
partitions. Shape-alike, not Filecoin's circuit: see docs/CIRCUITS.md.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from cuzk.algebra.fields import FR
from cuzk.circuits.base import Circuit, Schema
from cuzk.gadgets.bits import Bits
from cuzk.gadgets.merkle import (
    fr32,
    fr32_truncate,
    poseidon_merkle_root,
    poseidon_sparse_tree,
    random_fr32,
    sha256_merkle_root,
    sha256_sparse_tree,
)
from cuzk.gadgets.num import Num, enforce_equal, fr32_lc, num_to_bits
from cuzk.gadgets.poseidon import poseidon_hash, poseidon_native
from cuzk.gadgets.sha256 import bytes_to_bits, sha256, sha256_native

LAYERS = 11  # the column hash's arity: one label per layer
REPLICA_ARITY = 8


def fr_from_le32(b: np.ndarray) -> np.ndarray:
    """(n, 32) little-endian bytes (below r) -> (n, 4) Fr, Montgomery form."""
    limbs = np.ascontiguousarray(b, dtype=np.uint8).view("<u8").reshape(-1, 4).astype(np.uint64)
    return FR.from_canonical(limbs)


def fr_to_le32(x: np.ndarray) -> np.ndarray:
    return FR.to_canonical(x).astype("<u8").view(np.uint8).reshape(-1, 32)


def le_index_bits(xb: Bits) -> Bits:
    """Index bits (little-endian integer) as a 32-byte little-endian string in message bit order."""
    src: list[int | None] = []
    for j in range(256):
        k = 8 * (j // 8) + 7 - (j % 8)
        src.append(k if k < xb.n else None)
    return xb.take(src)


def index_bits_count(data_depth: int, replica_depth: int) -> int:
    return max(data_depth, 3 * replica_depth)


@dataclass
class Porep(Circuit):
    def _p(self) -> tuple[int, int, int, int, int]:
        p = self.params
        return p["challenges"], p["data_depth"], p["label_blocks"], p["replica_depth"], p["sha_rounds"]

    @property
    def parents(self) -> int:
        return 2 * self.params["label_blocks"] - 2

    @property
    def root_inputs(self) -> tuple[int, ...]:
        return (0, 1)

    def schema(self) -> Schema:
        c, d, _, rd, _ = self._p()
        s: Schema = {
            "public": ("field", (2 + c,)),
            "replica_id": ("bits", (256,)),
            "data_leaf": ("bits", (c, 256)),
            "data_siblings": ("bits", (c, d, 256)),
            "columns": ("field", (c, LAYERS)),
            "replica_siblings": ("field", (c, rd, REPLICA_ARITY - 1)),
        }
        if self.parents:
            s["parents"] = ("bits", (c, self.parents, 256))
        return s

    def synthesize(self, cs: Any, inst: Any) -> None:
        c, d, _, rd, rounds = self._p()
        nbits = index_bits_count(d, rd)
        comm_d = Num.alloc_input(cs, inst.field("public", 0))
        comm_r = Num.alloc_input(cs, inst.field("public", 1))
        with cs.namespace("replica_id"):
            rid = Bits.alloc(cs, 256, inst.bits("replica_id"))
        for ch in range(c):
            with cs.namespace(f"challenge {ch}"):
                x = Num.alloc_input(cs, inst.field("public", 2 + ch))
                xb = num_to_bits(cs, x, n=nbits)
                with cs.namespace("data"):
                    leaf = Bits.alloc(cs, 256, inst.bits("data_leaf", ch))
                    sibs = [Bits.alloc(cs, 256, inst.bits("data_siblings", ch, lv)) for lv in range(d)]
                    root = sha256_merkle_root(cs, leaf, sibs, xb[:d], rounds=rounds)
                    enforce_equal(cs, fr32_lc(root), comm_d.lc(), "data root == comm_d")
                with cs.namespace("label"):
                    parents = [Bits.alloc(cs, 256, inst.bits("parents", ch, k)) for k in range(self.parents)]
                    message = Bits.concat([rid, le_index_bits(xb), *parents])
                    label = fr32(sha256(cs, message, rounds=rounds))
                with cs.namespace("column"):
                    column = [Num.alloc(cs, inst.field("columns", ch, i)) for i in range(LAYERS)]
                    enforce_equal(cs, fr32_lc(label), column[-1].lc(), "label == column[last]")
                    leaf_c = poseidon_hash(cs, column, arity=LAYERS)
                with cs.namespace("replica"):
                    rsibs = [
                        [
                            Num.alloc(cs, inst.field("replica_siblings", ch, lv, j))
                            for j in range(REPLICA_ARITY - 1)
                        ]
                        for lv in range(rd)
                    ]
                    root_c = poseidon_merkle_root(cs, leaf_c, rsibs, xb[: 3 * rd], arity=REPLICA_ARITY)
                    enforce_equal(cs, root_c.lc(), comm_r.lc(), "replica root == comm_r")

    def _generate(self, rng: np.random.Generator) -> dict[str, np.ndarray]:
        c, d, _, rd, rounds = self._p()
        span = 1 << min(d, 3 * rd)
        xs = np.sort(rng.choice(span, size=c, replace=False)).astype(np.int64)
        rid = random_fr32(rng, 1)[0]
        leaves = random_fr32(rng, c)
        comm_d, data_sibs = sha256_sparse_tree(rng, leaves, xs, d, rounds)
        parents = random_fr32(rng, c * self.parents).reshape(c, self.parents, 32)
        x_le = np.zeros((c, 32), dtype=np.uint8)
        x_le[:, :8] = xs.astype("<u8").view(np.uint8).reshape(c, 8)
        msgs = np.concatenate([np.broadcast_to(rid, (c, 32)), x_le, parents.reshape(c, -1)], axis=1)
        labels = fr32_truncate(sha256_native(msgs, rounds))
        columns = FR.random(c * LAYERS, rng).reshape(c, LAYERS, 4)
        columns[:, -1] = fr_from_le32(labels)
        leaf_c = poseidon_native(LAYERS, columns)
        comm_r, rsibs = poseidon_sparse_tree(rng, leaf_c, xs, rd, REPLICA_ARITY)
        public = np.concatenate([fr_from_le32(comm_d[None]), comm_r[None], FR.from_ints(xs.tolist())])
        arrays = {
            "public": public,
            "replica_id": bytes_to_bits(rid),
            "data_leaf": bytes_to_bits(leaves),
            "data_siblings": bytes_to_bits(data_sibs),
            "columns": columns,
            "replica_siblings": rsibs,
        }
        if self.parents:
            arrays["parents"] = bytes_to_bits(parents)
        return arrays

    def estimate_constraints(self) -> int:
        c, d, blocks, rd, rounds = self._p()
        comp_var, comp_const = compression_cost(rounds)
        node = comp_var + comp_const + 512 + 256  # two compressions, the swap, the sibling's booleanity
        label = blocks * comp_var + comp_const + 256 * self.parents
        per = node * d + 256 + label + 466 + rd * 410 + index_bits_count(d, rd) + 1
        return c * per + 256 + 3 + c


def compression_cost(rounds: int) -> tuple[int, int]:
    """Approximate constraints of one compression with a variable and with a constant block."""
    per_round = 296
    schedule = max(0, rounds - 16) * 157
    return rounds * per_round + schedule + 272, rounds * per_round + 272
