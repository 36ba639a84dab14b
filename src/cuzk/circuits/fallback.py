"""wpost-32g and winning-32g: Filecoin's fallback PoSt circuit at the real sizes.

Per sector (rust-fil-proofs storage-proofs-post, fallback circuit): comm_r
(public) = Poseidon-2(comm_c, comm_r_last), both private; per challenge (its
index public) the challenged leaf's Poseidon arity-8 inclusion in tree_r_last,
whose root must be comm_r_last. Public inputs per sector: comm_r, then its
challenges' indices (WindowPoSt: 2,349 sectors x 10 challenges, 25,840 inputs
with ONE; WinningPoSt: 66 sectors x 1 challenge, 133).

Shape-alike, not Filecoin's circuit: a path here has 13 levels, not the
reference's 10 (8-8-0 over 2^30 leaves), because our Poseidon arity-8 level
costs 408 constraints against the reference's ~530 (its per-challenge cost,
~5,302, is derived in docs/CIRCUITS.md from the two PoSt counts); 13 levels
give 5,304 + 41, so a partition's count and its Poseidon-heavy density match.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from cuzk.algebra.fields import FR
from cuzk.circuits.base import ReplicatedCircuit, Schema
from cuzk.circuits.stacked import MERKLE8_LEVEL, POSEIDON
from cuzk.gadgets.merkle import poseidon_merkle_root, poseidon_sparse_tree
from cuzk.gadgets.num import Num, enforce_equal, num_to_bits
from cuzk.gadgets.poseidon import poseidon_hash, poseidon_native

ARITY = 8


@dataclass
class FallbackPost(ReplicatedCircuit):
    copy_prefix = "sector"

    def _p(self) -> tuple[int, int, int]:
        p = self.params
        return p["sectors"], p["challenges"], p["depth"]

    @property
    def copies(self) -> int:
        return int(self.params["sectors"])

    @property
    def root_inputs(self) -> tuple[int, ...]:
        s, k, _ = self._p()
        return tuple(i * (1 + k) for i in range(s))

    def schema(self) -> Schema:
        s, k, d = self._p()
        return {
            "public": ("field", (s * (1 + k),)),
            "comm_c": ("field", (s,)),
            "comm_r_last": ("field", (s,)),
            "leaves": ("field", (s, k)),
            "siblings": ("field", (s, k, d, ARITY - 1)),
        }

    def synthesize_shared(self, cs: Any, inst: Any) -> Any:
        return None

    def synthesize_copy(self, cs: Any, inst: Any, shared: Any, sec: int) -> None:
        _, k, d = self._p()
        first = sec * (1 + k)
        comm_r = Num.alloc_input(cs, inst.field("public", first))
        xs = [Num.alloc_input(cs, inst.field("public", first + 1 + ch)) for ch in range(k)]
        comm_c = Num.alloc(cs, inst.field("comm_c", sec))
        comm_r_last = Num.alloc(cs, inst.field("comm_r_last", sec))
        h = poseidon_hash(cs, [comm_c, comm_r_last], arity=2)
        enforce_equal(cs, h.lc(), comm_r.lc(), "comm_r == H(comm_c, comm_r_last)")
        for ch, x in enumerate(xs):
            with cs.namespace(f"challenge {ch}"):
                xb = num_to_bits(cs, x, n=3 * d)
                leaf = Num.alloc(cs, inst.field("leaves", sec, ch))
                sibs = [[Num.alloc(cs, inst.field("siblings", sec, ch, lv, j)) for j in range(ARITY - 1)]
                        for lv in range(d)]  # fmt: skip
                root = poseidon_merkle_root(cs, leaf, sibs, xb, arity=ARITY)
                enforce_equal(cs, root.lc(), comm_r_last.lc(), "root == comm_r_last")

    def _generate(self, rng: np.random.Generator) -> dict[str, np.ndarray]:
        s, k, d = self._p()
        span = min(ARITY**d, 1 << 62)
        xs = np.stack([np.sort(rng.choice(span, size=k, replace=False)) for _ in range(s)]).astype(np.int64)
        leaves = FR.random(s * k, rng).reshape(s, k, 4)
        comm_c = FR.random(s, rng)
        sibs = np.empty((s, k, d, ARITY - 1, 4), dtype=np.uint64)
        roots = np.empty((s, 4), dtype=np.uint64)
        for sec in range(s):
            roots[sec], sibs[sec] = poseidon_sparse_tree(rng, leaves[sec], xs[sec], d, ARITY)
        comm_r = poseidon_native(2, np.stack([comm_c, roots], axis=1))
        public = np.concatenate(
            [comm_r[:, None], FR.from_ints(xs.reshape(-1).tolist()).reshape(s, k, 4)], axis=1
        )
        return {
            "public": public.reshape(-1, 4),
            "comm_c": comm_c,
            "comm_r_last": roots,
            "leaves": leaves,
            "siblings": sibs,
        }

    def estimate_constraints(self) -> int:
        s, k, d = self._p()
        per_challenge = (3 * d + 1) + d * MERKLE8_LEVEL + 1
        return s * (POSEIDON[2] + 1 + k * per_challenge) + s * (1 + k) + 1
