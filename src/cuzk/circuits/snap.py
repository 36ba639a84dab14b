"""snap: a SnapDeals-like update partition (SHA-256 and Poseidon inclusions, an encoding step).

Per challenge (index x, a public input):

1. the new data leaf's SHA-256 (fr32) inclusion in comm_d_new;
2. the sector-key leaf's Poseidon arity-8 inclusion in comm_r_old;
3. the new replica leaf's Poseidon arity-8 inclusion in comm_r_new;
4. encoding: new_replica = sector_key + data * rho, where
   rho = Poseidon-2(phi, x) and phi = Poseidon-2(comm_d_new, comm_r_old).

Public inputs: comm_d_new, comm_r_old, comm_r_new, then the challenge indices.
Shape-alike, not Filecoin's circuit.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from cuzk.algebra.fields import FR
from cuzk.circuits.base import Circuit, Schema
from cuzk.circuits.porep import compression_cost, fr_from_le32
from cuzk.gadgets.bits import Bits
from cuzk.gadgets.merkle import (
    poseidon_merkle_root,
    poseidon_sparse_tree,
    random_fr32,
    sha256_merkle_root,
    sha256_sparse_tree,
)
from cuzk.gadgets.num import Num, enforce_equal, fr32_lc, num_to_bits
from cuzk.gadgets.poseidon import poseidon_hash, poseidon_native
from cuzk.gadgets.sha256 import bytes_to_bits

ARITY = 8


def encode_challenge(
    cs: Any, inst: Any, k: int, leaf: Any, x: Num, xb: Any, phi: Num, comms: tuple[Num, Num], depth: int
) -> None:
    """Challenge k's key and replica leaves (Poseidon arity-8 paths to comm_r_old and comm_r_new)
    and the encoding replica == key + data * rho, rho = Poseidon(phi, x): shared by snap-* and
    snap-32g (cuzk.circuits.update)."""
    trees = {}
    for tree, comm in zip(("key", "replica"), comms, strict=True):
        with cs.namespace(tree):
            lf = Num.alloc(cs, inst.field(f"{tree}_leaf", k))
            path = [[Num.alloc(cs, inst.field(f"{tree}_siblings", k, lv, j)) for j in range(ARITY - 1)]
                    for lv in range(depth)]  # fmt: skip
            r = poseidon_merkle_root(cs, lf, path, xb[: 3 * depth], arity=ARITY)
            enforce_equal(cs, r.lc(), comm.lc(), f"{tree} root")
            trees[tree] = lf
    with cs.namespace("encoding"):
        rho = poseidon_hash(cs, [phi, x], arity=2)
        if cs.constraints:
            rhs = {trees["replica"].var: 1, trees["key"].var: -1}
            cs.enforce(fr32_lc(leaf), rho.lc(), rhs, "replica == key + data * rho")


@dataclass
class Snap(Circuit):
    def _p(self) -> tuple[int, int, int, int]:
        p = self.params
        return p["challenges"], p["data_depth"], p["replica_depth"], p["sha_rounds"]

    @property
    def root_inputs(self) -> tuple[int, ...]:
        return (0, 1, 2)

    def schema(self) -> Schema:
        c, d, rd, _ = self._p()
        return {
            "public": ("field", (3 + c,)),
            "data_leaf": ("bits", (c, 256)),
            "data_siblings": ("bits", (c, d, 256)),
            "key_leaf": ("field", (c,)),
            "key_siblings": ("field", (c, rd, ARITY - 1)),
            "replica_leaf": ("field", (c,)),
            "replica_siblings": ("field", (c, rd, ARITY - 1)),
        }

    def synthesize(self, cs: Any, inst: Any) -> None:
        c, d, rd, rounds = self._p()
        comm_d = Num.alloc_input(cs, inst.field("public", 0))
        comm_r_old = Num.alloc_input(cs, inst.field("public", 1))
        comm_r_new = Num.alloc_input(cs, inst.field("public", 2))
        with cs.namespace("phi"):
            phi = poseidon_hash(cs, [comm_d, comm_r_old], arity=2)
        for ch in range(c):
            with cs.namespace(f"challenge {ch}"):
                x = Num.alloc_input(cs, inst.field("public", 3 + ch))
                xb = num_to_bits(cs, x, n=max(d, 3 * rd))
                with cs.namespace("data"):
                    leaf = Bits.alloc(cs, 256, inst.bits("data_leaf", ch))
                    sibs = [Bits.alloc(cs, 256, inst.bits("data_siblings", ch, lv)) for lv in range(d)]
                    root = sha256_merkle_root(cs, leaf, sibs, xb[:d], rounds=rounds)
                    enforce_equal(cs, fr32_lc(root), comm_d.lc(), "data root == comm_d_new")
                encode_challenge(cs, inst, ch, leaf, x, xb, phi, (comm_r_old, comm_r_new), rd)

    def _generate(self, rng: np.random.Generator) -> dict[str, np.ndarray]:
        c, d, rd, rounds = self._p()
        span = 1 << min(d, 3 * rd)
        xs = np.sort(rng.choice(span, size=c, replace=False)).astype(np.int64)
        data = random_fr32(rng, c)
        comm_d, dsibs = sha256_sparse_tree(rng, data, xs, d, rounds)
        comm_d_fr = fr_from_le32(comm_d[None])
        key = FR.random(c, rng)
        comm_r_old, ksibs = poseidon_sparse_tree(rng, key, xs, rd, ARITY)
        phi = poseidon_native(2, np.stack([comm_d_fr, comm_r_old[None]], axis=1))
        x_fr = FR.from_ints(xs.tolist())
        rho = poseidon_native(2, np.stack([np.repeat(phi, c, axis=0), x_fr], axis=1))
        replica = FR.add(key, FR.mul(fr_from_le32(data), rho))
        comm_r_new, rsibs = poseidon_sparse_tree(rng, replica, xs, rd, ARITY)
        public = np.concatenate([comm_d_fr, comm_r_old[None], comm_r_new[None], x_fr])
        return {
            "public": public,
            "data_leaf": bytes_to_bits(data),
            "data_siblings": bytes_to_bits(dsibs),
            "key_leaf": key,
            "key_siblings": ksibs,
            "replica_leaf": replica,
            "replica_siblings": rsibs,
        }

    def estimate_constraints(self) -> int:
        c, d, rd, rounds = self._p()
        comp_var, comp_const = compression_cost(rounds)
        node = comp_var + comp_const + 512 + 256
        per = node * d + 256 + 2 * rd * 410 + 244 + max(d, 3 * rd) + 4
        return c * per + 244 + 4 + c
