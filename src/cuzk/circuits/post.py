"""wpost and winning: Poseidon arity-8 Merkle inclusions of challenged sector leaves.

Per sector s: comm_r[s] (public) = Poseidon-2(comm_c, root) where comm_c is
private and root is the sector's replica-tree root. Per challenge (index x, a
public input): the inclusion of the challenged leaf at x in that tree.
WindowPoSt proves many sectors and challenges per partition, WinningPoSt few;
the two differ here only in their scales. Shape-alike, not Filecoin's circuits.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from cuzk.algebra.fields import FR
from cuzk.circuits.base import Circuit, Schema
from cuzk.gadgets.merkle import poseidon_merkle_root, poseidon_sparse_tree
from cuzk.gadgets.num import Num, enforce_equal, num_to_bits
from cuzk.gadgets.poseidon import poseidon_hash, poseidon_native

ARITY = 8


@dataclass
class Post(Circuit):
    def _p(self) -> tuple[int, int, int]:
        p = self.params
        return p["sectors"], p["challenges"], p["depth"]

    @property
    def root_inputs(self) -> tuple[int, ...]:
        return tuple(range(self.params["sectors"]))

    def schema(self) -> Schema:
        s, k, d = self._p()
        return {
            "public": ("field", (s + s * k,)),
            "comm_c": ("field", (s,)),
            "leaves": ("field", (s, k)),
            "siblings": ("field", (s, k, d, ARITY - 1)),
        }

    def synthesize(self, cs: Any, inst: Any) -> None:
        s, k, d = self._p()
        comm_rs = [Num.alloc_input(cs, inst.field("public", i)) for i in range(s)]
        for sec in range(s):
            with cs.namespace(f"sector {sec}"):
                comm_c = Num.alloc(cs, inst.field("comm_c", sec))
                roots = []
                for ch in range(k):
                    with cs.namespace(f"challenge {ch}"):
                        x = Num.alloc_input(cs, inst.field("public", s + sec * k + ch))
                        xb = num_to_bits(cs, x, n=3 * d)
                        leaf = Num.alloc(cs, inst.field("leaves", sec, ch))
                        sibs = [
                            [Num.alloc(cs, inst.field("siblings", sec, ch, lv, j)) for j in range(ARITY - 1)]
                            for lv in range(d)
                        ]
                        roots.append(poseidon_merkle_root(cs, leaf, sibs, xb, arity=ARITY))
                for ch in range(1, k):
                    enforce_equal(
                        cs, roots[ch].lc(), roots[0].lc(), f"challenge {ch} root == challenge 0 root"
                    )
                comm_r = poseidon_hash(cs, [comm_c, roots[0]], arity=2)
                enforce_equal(cs, comm_r.lc(), comm_rs[sec].lc(), "comm_r == H(comm_c, root)")

    def _generate(self, rng: np.random.Generator) -> dict[str, np.ndarray]:
        s, k, d = self._p()
        span = ARITY**d
        xs = np.stack([np.sort(rng.choice(min(span, 1 << 62), size=k, replace=False)) for _ in range(s)])
        leaves = FR.random(s * k, rng).reshape(s, k, 4)
        comm_c = FR.random(s, rng)
        sibs = np.empty((s, k, d, ARITY - 1, 4), dtype=np.uint64)
        roots = np.empty((s, 4), dtype=np.uint64)
        for sec in range(s):
            roots[sec], sibs[sec] = poseidon_sparse_tree(rng, leaves[sec], xs[sec], d, ARITY)
        comm_r = poseidon_native(2, np.stack([comm_c, roots], axis=1))
        public = np.concatenate([comm_r, FR.from_ints(xs.reshape(-1).tolist())])
        return {"public": public, "comm_c": comm_c, "leaves": leaves, "siblings": sibs}

    def estimate_constraints(self) -> int:
        s, k, d = self._p()
        return s * (k * (d * 410 + 3 * d + 1) + (k - 1) + 244) + s + s * k + 1
