"""snap-32g: a SnapDeals update partition at the real size (storage-proofs-update's shape).

A 32 GiB sector's update proof is 16 partitions; per partition (constants.rs
there: 86 challenges, 128 apex leaves):

- shared: the 128 apex leaves of the partition's subtree of tree_d_new (private,
  as bits and as Fr), hashed into the apex tree (127 SHA-256 fr32 nodes) whose
  root must be comm_d_new; phi = Poseidon-2(comm_d_new, comm_r_old);
- per challenge x (public): the new data leaf's 19-level SHA-256 path up to the
  apex level, equal to the apex leaf that x's next 7 bits select; the sector-key
  leaf's Poseidon arity-8 path (10 levels, 8-8-0) to comm_r_old and the new
  replica leaf's to comm_r_new; the encoding new = key + data * rho with
  rho = Poseidon-2(phi, x).

Public inputs: comm_d_new, comm_r_old, comm_r_new, then each challenge index.
Shape-alike, not Filecoin's circuit: rho is hashed from the whole index, the
apex leaf is picked by a one-hot product, Poseidon constants are ours.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from cuzk.algebra.fields import FR
from cuzk.circuits.base import ReplicatedCircuit, Schema
from cuzk.circuits.porep import fr_from_le32
from cuzk.circuits.snap import ARITY, encode_challenge
from cuzk.circuits.stacked import COMPRESSION, MERKLE8_LEVEL, POSEIDON, _reduced
from cuzk.gadgets.bits import Bits
from cuzk.gadgets.merkle import (
    fr32,
    fr32_truncate,
    poseidon_sparse_tree,
    random_fr32,
    select_num,
    sha256_merkle_root,
    sha256_sparse_tree,
)
from cuzk.gadgets.num import Num, enforce_equal, fr32_lc, num_to_bits
from cuzk.gadgets.poseidon import poseidon_hash, poseidon_native
from cuzk.gadgets.sha256 import bytes_to_bits, sha256, sha256_native


@dataclass
class SnapUpdate(ReplicatedCircuit):
    copy_prefix = "challenge"

    def _p(self) -> tuple[int, int, int, int, int]:
        p = self.params
        return p["challenges"], p["data_depth"], p["apex_leaves"], p["tree_depth"], p["sha_rounds"]

    @property
    def copies(self) -> int:
        return int(self.params["challenges"])

    @property
    def apex_bits(self) -> int:
        return int(self.params["apex_leaves"]).bit_length() - 1

    @property
    def index_bits(self) -> int:
        _, d, _, td, _ = self._p()
        return max(d + self.apex_bits, 3 * td)

    @property
    def root_inputs(self) -> tuple[int, ...]:
        return (0, 1, 2)

    def schema(self) -> Schema:
        c, d, apex, td, _ = self._p()
        return {
            "public": ("field", (3 + c,)),
            "apex_bits": ("bits", (apex, 256)),
            "apex_values": ("field", (apex,)),
            "data_leaf": ("bits", (c, 256)),
            "data_siblings": ("bits", (c, d, 256)),
            "key_leaf": ("field", (c,)),
            "key_siblings": ("field", (c, td, ARITY - 1)),
            "replica_leaf": ("field", (c,)),
            "replica_siblings": ("field", (c, td, ARITY - 1)),
        }

    def synthesize_shared(self, cs: Any, inst: Any) -> Any:
        _, _, apex, _, rounds = self._p()
        comm_d = Num.alloc_input(cs, inst.field("public", 0))
        comm_r_old = Num.alloc_input(cs, inst.field("public", 1))
        comm_r_new = Num.alloc_input(cs, inst.field("public", 2))
        with cs.namespace("phi"):
            phi = poseidon_hash(cs, [comm_d, comm_r_old], arity=2)
        with cs.namespace("apex"):
            leaves, values = [], []
            for i in range(apex):
                b = Bits.alloc(cs, 256, inst.bits("apex_bits", i))
                v = Num.alloc(cs, inst.field("apex_values", i))
                enforce_equal(cs, fr32_lc(b), v.lc(), f"apex leaf {i} bits == value")
                leaves.append(b)
                values.append(v)
            level, h = leaves, 0
            while len(level) > 1:
                with cs.namespace(f"level {h}"):
                    level = [fr32(sha256(cs, Bits.concat([level[2 * j], level[2 * j + 1]]), rounds=rounds))
                             for j in range(len(level) // 2)]  # fmt: skip
                h += 1
            enforce_equal(cs, fr32_lc(level[0]), comm_d.lc(), "apex root == comm_d_new")
        return comm_d, comm_r_old, comm_r_new, phi, values

    def synthesize_copy(self, cs: Any, inst: Any, shared: Any, k: int) -> None:
        _, d, _, td, rounds = self._p()
        _, comm_r_old, comm_r_new, phi, apex_values = shared
        x = Num.alloc_input(cs, inst.field("public", 3 + k))
        xb = num_to_bits(cs, x, n=self.index_bits)
        with cs.namespace("data"):
            leaf = Bits.alloc(cs, 256, inst.bits("data_leaf", k))
            sibs = [Bits.alloc(cs, 256, inst.bits("data_siblings", k, lv)) for lv in range(d)]
            node = sha256_merkle_root(cs, leaf, sibs, xb[:d], rounds=rounds)
            apex_leaf = select_num(cs, apex_values, xb[d : d + self.apex_bits])
            enforce_equal(cs, fr32_lc(node), apex_leaf.lc(), "path top == the indexed apex leaf")
        encode_challenge(cs, inst, k, leaf, x, xb, phi, (comm_r_old, comm_r_new), td)

    def _generate(self, rng: np.random.Generator) -> dict[str, np.ndarray]:
        c, d, apex, td, rounds = self._p()
        ab = self.apex_bits
        span = min(1 << (d + ab), ARITY**td)
        xs = np.sort(rng.choice(span, size=c, replace=False)).astype(np.int64)
        data = random_fr32(rng, c)
        apex_leaves = random_fr32(rng, apex)
        dsibs = np.empty((c, d, 32), dtype=np.uint8)
        for a in np.unique(xs >> d).tolist():
            sel = np.nonzero((xs >> d) == a)[0]
            apex_leaves[a], dsibs[sel] = sha256_sparse_tree(
                rng, data[sel], xs[sel] & ((1 << d) - 1), d, rounds
            )
        level = apex_leaves
        while level.shape[0] > 1:
            level = fr32_truncate(sha256_native(level.reshape(-1, 64), rounds))
        comm_d = fr_from_le32(level)
        key = FR.random(c, rng)
        comm_r_old, ksibs = poseidon_sparse_tree(rng, key, xs, td, ARITY)
        phi = poseidon_native(2, np.stack([comm_d, comm_r_old[None]], axis=1))
        x_fr = FR.from_ints(xs.tolist())
        rho = poseidon_native(2, np.stack([np.repeat(phi, c, axis=0), x_fr], axis=1))
        replica = FR.add(key, FR.mul(fr_from_le32(data), rho))
        comm_r_new, rsibs = poseidon_sparse_tree(rng, replica, xs, td, ARITY)
        return {
            "public": np.concatenate([comm_d, comm_r_old[None], comm_r_new[None], x_fr]),
            "apex_bits": bytes_to_bits(apex_leaves),
            "apex_values": fr_from_le32(apex_leaves),
            "data_leaf": bytes_to_bits(data),
            "data_siblings": bytes_to_bits(dsibs),
            "key_leaf": key,
            "key_siblings": ksibs,
            "replica_leaf": replica,
            "replica_siblings": rsibs,
        }

    def estimate_constraints(self) -> int:
        c, d, apex, td, rounds = self._p()
        comp = COMPRESSION if rounds == 64 else _reduced(rounds)
        node = comp["var_iv"] + comp["const"]
        head = POSEIDON[2] + apex * 257 + (apex - 1) * node + 1
        select = (apex - 2) + apex + 1
        per = (
            self.index_bits + 1 + 256 + d * (node + 512 + 256) + select + 1
            + 2 * (td * MERKLE8_LEVEL + 1) + POSEIDON[2] + 1
        )  # fmt: skip
        return head + c * per + 3 + c + 1
