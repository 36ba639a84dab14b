"""porep-32g: a PoRep partition at the real size, following rust-fil-proofs' stacked circuit.

One 32 GiB partition (storage-proofs-porep's stacked circuit, 18 challenges,
11 layers; /work/shared/docs/CONTEXT.md) is, per challenge x:

1. **comm_d**: the SHA-256 (fr32) inclusion of the data leaf at x, 30 binary levels;
2. **columns**: the tree_c openings of the challenged node and its 14 parents
   (6 DRG + 8 expander): Poseidon arity 11 over the node's 11 layer labels, then a
   Poseidon arity-8 path of 10 levels (8-8-0 over 2^30 leaves) to comm_c;
3. **labelling**: for each layer l = 1..11, label = fr32(SHA-256(replica_id ||
   node block || 37 parent slots)), 1,248 bytes (20 compressions); layer 1 fills
   the slots with its 6 DRG parents' layer-1 labels, repeated; layer l > 1 with
   the 6 DRG parents' layer-l labels and the 8 expander parents' layer-(l-1)
   labels, repeated. Parent labels enter as bits tied to their column entry by
   one packing equality; the computed label must equal the node's column entry;
4. **tree_r_last**: the replica leaf (layer-11 label + data, the encoding) by a
   Poseidon arity-8 path of 10 levels to comm_r_last.

Shared by the challenges: replica_id (public, and its 256 bits), comm_d, comm_r
= Poseidon-2(comm_c, comm_r_last) (public), comm_c and comm_r_last (private).
Public inputs: ONE, replica_id, comm_d, comm_r, then per challenge 18 indices
(the node for comm_d, labelling, tree_r_last and tree_c, then its 14 parents),
328 in all. Shape-alike, not Filecoin's circuit (docs/CIRCUITS.md): our own
node block, Poseidon constants and index packing.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from cuzk.algebra.fields import FR
from cuzk.circuits.base import ReplicatedCircuit, Schema
from cuzk.circuits.porep import fr_from_le32, le_index_bits
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
from cuzk.gadgets.sha256 import bytes_to_bits, constant_bits, sha256, sha256_native

TREE_ARITY = 8
#: Public entries per challenge before the parents: the node for comm_d, labelling, tree_r, tree_c.
NODE_INPUTS = 4


def slot_sources(layer: int, drg: int, exp: int, slots: int) -> list[tuple[str, int, int]]:
    """Per parent slot of layer `layer` (1-based): (kind 'drg' | 'exp', parent, label layer index)."""
    if layer == 1:
        return [("drg", s % drg, 0) for s in range(slots)]
    out = []
    for s in range(slots):
        q = s % (drg + exp)
        out.append(("drg", q, layer - 1) if q < drg else ("exp", q - drg, layer - 2))
    return out


@dataclass
class StackedPorep(ReplicatedCircuit):
    copy_prefix = "challenge"

    def _p(self) -> tuple[int, int, int, int, int, int, int, int]:
        p = self.params
        return (p["challenges"], p["layers"], p["data_depth"], p["drg_parents"], p["exp_parents"],
                p["parent_slots"], p["tree_depth"], p["sha_rounds"])  # fmt: skip

    @property
    def copies(self) -> int:
        return int(self.params["challenges"])

    @property
    def index_bits(self) -> int:
        _, _, d, _, _, _, td, _ = self._p()
        return max(d, 3 * td)

    @property
    def inputs_per_challenge(self) -> int:
        return NODE_INPUTS + self.params["drg_parents"] + self.params["exp_parents"]

    @property
    def root_inputs(self) -> tuple[int, ...]:
        return (1, 2)  # comm_d, comm_r

    def schema(self) -> Schema:
        c, layers, d, drg, exp, _, td, _ = self._p()
        n = 1 + drg + exp
        return {
            "public": ("field", (3 + c * self.inputs_per_challenge,)),
            "replica_id": ("bits", (256,)),
            "comm_c": ("field", (1,)),
            "comm_r_last": ("field", (1,)),
            "data_leaf": ("bits", (c, 256)),
            "data_siblings": ("bits", (c, d, 256)),
            "columns": ("field", (c, n, layers)),
            "column_siblings": ("field", (c, n, td, TREE_ARITY - 1)),
            "drg_bits": ("bits", (c, drg, layers, 256)),
            "exp_bits": ("bits", (c, exp, layers - 1, 256)),
            "replica_leaf": ("field", (c,)),
            "replica_siblings": ("field", (c, td, TREE_ARITY - 1)),
        }

    def synthesize_shared(self, cs: Any, inst: Any) -> Any:
        rid_in = Num.alloc_input(cs, inst.field("public", 0))
        comm_d = Num.alloc_input(cs, inst.field("public", 1))
        comm_r = Num.alloc_input(cs, inst.field("public", 2))
        with cs.namespace("replica_id"):
            rid = Bits.alloc(cs, 256, inst.bits("replica_id"))
            enforce_equal(cs, fr32_lc(rid), rid_in.lc(), "replica_id bits == replica_id")
        with cs.namespace("comm_r"):
            comm_c = Num.alloc(cs, inst.field("comm_c", 0))
            comm_r_last = Num.alloc(cs, inst.field("comm_r_last", 0))
            h = poseidon_hash(cs, [comm_c, comm_r_last], arity=2)
            enforce_equal(cs, h.lc(), comm_r.lc(), "comm_r == H(comm_c, comm_r_last)")
        return rid, comm_d, comm_c, comm_r_last

    def synthesize_copy(self, cs: Any, inst: Any, shared: Any, k: int) -> None:
        _, layers, d, drg, exp, slots, td, rounds = self._p()
        rid, comm_d, comm_c, comm_r_last = shared
        first = 3 + k * self.inputs_per_challenge
        idx = [Num.alloc_input(cs, inst.field("public", first + j)) for j in range(self.inputs_per_challenge)]
        with cs.namespace("index bits"):
            bits = [num_to_bits(cs, x, n=self.index_bits) for x in idx]
        x_d, x_l, x_r, x_c = bits[:NODE_INPUTS]
        parent_bits = bits[NODE_INPUTS:]
        with cs.namespace("comm_d"):
            leaf = Bits.alloc(cs, 256, inst.bits("data_leaf", k))
            sibs = [Bits.alloc(cs, 256, inst.bits("data_siblings", k, lv)) for lv in range(d)]
            root = sha256_merkle_root(cs, leaf, sibs, x_d[:d], rounds=rounds)
            enforce_equal(cs, fr32_lc(root), comm_d.lc(), "data root == comm_d")
        columns = []
        with cs.namespace("columns"):
            for j, xb in enumerate([x_c, *parent_bits]):
                with cs.namespace(f"column {j}"):
                    col = [Num.alloc(cs, inst.field("columns", k, j, lay)) for lay in range(layers)]
                    leaf_c = poseidon_hash(cs, col, arity=layers)
                    path = [
                        [
                            Num.alloc(cs, inst.field("column_siblings", k, j, lv, s))
                            for s in range(TREE_ARITY - 1)
                        ]
                        for lv in range(td)
                    ]
                    r = poseidon_merkle_root(cs, leaf_c, path, xb[: 3 * td], arity=TREE_ARITY)
                    enforce_equal(cs, r.lc(), comm_c.lc(), "column root == comm_c")
                    columns.append(col)
        labels: dict[tuple[str, int, int], Bits] = {}
        with cs.namespace("parent labels"):
            for kind, count, depth, offset in (("drg", drg, layers, 1), ("exp", exp, layers - 1, 1 + drg)):
                for p in range(count):
                    for lay in range(depth):
                        b = Bits.alloc(cs, 256, inst.bits(f"{kind}_bits", k, p, lay))
                        enforce_equal(
                            cs, fr32_lc(b), columns[offset + p][lay].lc(), f"{kind} {p} layer {lay}"
                        )
                        labels[(kind, p, lay)] = b
        node = le_index_bits(x_l)[:248]
        with cs.namespace("labelling"):
            for lay in range(1, layers + 1):
                with cs.namespace(f"layer {lay}"):
                    block = Bits.concat([node, constant_bits(bytes([lay]))])
                    parents = [labels[s] for s in slot_sources(lay, drg, exp, slots)]
                    label = fr32(sha256(cs, Bits.concat([rid, block, *parents]), rounds=rounds))
                    enforce_equal(cs, fr32_lc(label), columns[0][lay - 1].lc(), "label == column entry")
        with cs.namespace("tree_r_last"):
            rl = Num.alloc(cs, inst.field("replica_leaf", k))
            key = dict(fr32_lc(leaf))
            key.update(columns[0][layers - 1].lc())  # the encoding: replica = key (last label) + data
            enforce_equal(cs, key, rl.lc(), "replica leaf == last label + data")
            path = [
                [Num.alloc(cs, inst.field("replica_siblings", k, lv, s)) for s in range(TREE_ARITY - 1)]
                for lv in range(td)
            ]
            r = poseidon_merkle_root(cs, rl, path, x_r[: 3 * td], arity=TREE_ARITY)
            enforce_equal(cs, r.lc(), comm_r_last.lc(), "replica root == comm_r_last")

    def _generate(self, rng: np.random.Generator) -> dict[str, np.ndarray]:
        c, layers, d, drg, exp, slots, td, rounds = self._p()
        n = 1 + drg + exp
        span = 1 << min(d, 3 * td)
        nodes = rng.choice(span, size=c * n, replace=False).astype(np.int64).reshape(c, n)
        xs = nodes[:, 0]
        rid = random_fr32(rng, 1)[0]
        data = random_fr32(rng, c)
        comm_d, data_sibs = sha256_sparse_tree(rng, data, xs, d, rounds)
        # Parents' labels: random fr32 values; the challenged node's labels: computed per layer.
        plabels = random_fr32(rng, c * (n - 1) * layers).reshape(c, n - 1, layers, 32)
        node_labels = np.zeros((c, layers, 32), dtype=np.uint8)
        block = np.zeros((c, 32), dtype=np.uint8)
        block[:, :8] = xs.astype("<u8").view(np.uint8).reshape(c, 8)
        for lay in range(1, layers + 1):
            block[:, 31] = lay
            parts = [np.broadcast_to(rid, (c, 32)), block]
            for kind, p, li in slot_sources(lay, drg, exp, slots):
                parts.append(plabels[:, p if kind == "drg" else drg + p, li])
            node_labels[:, lay - 1] = fr32_truncate(sha256_native(np.concatenate(parts, axis=1), rounds))
        columns = np.empty((c, n, layers, 4), dtype=np.uint64)
        columns[:, 0] = fr_from_le32(node_labels.reshape(-1, 32)).reshape(c, layers, 4)
        columns[:, 1:] = fr_from_le32(plabels.reshape(-1, 32)).reshape(c, n - 1, layers, 4)
        leaves_c = poseidon_native(layers, columns.reshape(c * n, layers, 4))
        comm_c, csibs = poseidon_sparse_tree(rng, leaves_c, nodes.reshape(-1), td, TREE_ARITY)
        replica = FR.add(columns[:, 0, layers - 1], fr_from_le32(data))
        comm_r_last, rsibs = poseidon_sparse_tree(rng, replica, xs, td, TREE_ARITY)
        comm_r = poseidon_native(2, np.stack([comm_c, comm_r_last])[None])
        per = np.concatenate([np.repeat(xs[:, None], NODE_INPUTS, axis=1), nodes[:, 1:]], axis=1)
        public = np.concatenate(
            [
                fr_from_le32(rid[None]),
                fr_from_le32(comm_d[None]),
                comm_r,
                FR.from_ints(per.reshape(-1).tolist()),
            ]
        )
        return {
            "public": public,
            "replica_id": bytes_to_bits(rid),
            "comm_c": comm_c[None],
            "comm_r_last": comm_r_last[None],
            "data_leaf": bytes_to_bits(data),
            "data_siblings": bytes_to_bits(data_sibs),
            "columns": columns,
            "column_siblings": csibs.reshape(c, n, td, TREE_ARITY - 1, 4),
            "drg_bits": bytes_to_bits(plabels[:, :drg]),
            "exp_bits": bytes_to_bits(plabels[:, drg:, : layers - 1]),
            "replica_leaf": replica,
            "replica_siblings": rsibs,
        }

    def estimate_constraints(self) -> int:
        c, layers, d, drg, exp, slots, td, rounds = self._p()
        comp = COMPRESSION if rounds == 64 else _reduced(rounds)
        n = 1 + drg + exp
        msg_bytes = 64 + 32 * slots
        blocks = (msg_bytes + 9 + 63) // 64
        # The 1,248-byte message measured (its first block holds constant node bits, its last the
        # padding); other lengths add or remove full variable blocks.
        label = LABEL_1248 + (blocks - 20) * comp["var"] if rounds == 64 else blocks * comp["var"]
        level = comp["var_iv"] + comp["const"] + 512 + 256  # the node hash, the swap, the sibling bits
        per = (
            self.inputs_per_challenge * (self.index_bits + 1)
            + 256 + d * level + 1
            + n * (POSEIDON[layers] + td * MERKLE8_LEVEL + 1)
            + (drg * layers + exp * (layers - 1)) * 257
            + layers * (label + 1)
            + 1 + td * MERKLE8_LEVEL + 1
        )  # fmt: skip
        return c * per + 256 + 1 + POSEIDON[2] + 1 + 3 + 1 + c * self.inputs_per_challenge


#: Constraints of one 64-round compression, measured by recording the gadget (docs/CIRCUITS.md):
#: var_iv: IV state and 512 variable bits; var: variable state and block (bits not counted);
#: const: variable state, constant (padding) block. bellperson's: 25,840 with allocated bits.
COMPRESSION = {"var_iv": 26128, "var": 26416, "const": 19216}
LABEL_1248 = 526895  # one labelling hash (37 parent slots) as recorded, booleanity of its inputs excluded
POSEIDON = {2: 241, 8: 388, 11: 460}  # constraints per hash, output included
MERKLE8_LEVEL = 408  # one Poseidon arity-8 level: the insert (3 index bits) and the hash


def _reduced(rounds: int) -> dict[str, int]:
    """A rough per-compression cost of the reduced-round variant (listings of CI scales only)."""
    per_round, schedule = 296, max(0, rounds - 16) * 138
    var = rounds * per_round + schedule + 272
    return {"var_iv": var, "var": var, "const": rounds * per_round + 272}
