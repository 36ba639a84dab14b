"""Hand-built circom-style circuits (wire order ONE, outputs, public inputs, private inputs, internal).

Values are Python ints, so every witness is worked out (and checked) outside
the code under test.
"""

from __future__ import annotations

import random

import numpy as np

from cuzk.algebra import constants as C
from cuzk.algebra.fields import FR
from cuzk.backends.base import CsrMatrix
from cuzk.interop.r1cs import R1cs

Lc = dict[int, int]


def csr(rows: list[Lc], n_wires: int) -> CsrMatrix:
    return CsrMatrix.from_rows(rows, n_wires, index_dtype=np.int32)


def make_r1cs(n_wires: int, n_out: int, n_pub: int, n_prv: int, constraints: list[tuple[Lc, Lc, Lc]]) -> R1cs:
    a, b, c = (csr([con[k] for con in constraints], n_wires) for k in range(3))
    return R1cs(n_wires, n_out, n_pub, n_prv, n_wires, a, b, c)


def lc_value(lc: Lc, w: list[int]) -> int:
    return sum(coef * w[i] for i, coef in lc.items()) % C.R


def satisfied(constraints: list[tuple[Lc, Lc, Lc]], w: list[int]) -> bool:
    return all(lc_value(a, w) * lc_value(b, w) % C.R == lc_value(c, w) for a, b, c in constraints)


def toy(x: int = 3, y: int = 11) -> tuple[R1cs, list[int]]:
    r1cs, w, _ = toy_constraints(x, y)
    return r1cs, w


def toy_constraints(x: int = 3, y: int = 11) -> tuple[R1cs, list[int], list[tuple[Lc, Lc, Lc]]]:
    """out = x^3 + 3x + 5 + 7y (public output), y public input, x private; wire 7 is in no constraint.

    Wires: 0 ONE, 1 out, 2 y, 3 x, 4 x^2, 5 x^3, 6 t = (y + 2)(x - 1), 7 unused.
    """
    constraints = [
        ({3: 1}, {3: 1}, {4: 1}),
        ({4: 1}, {3: 1}, {5: 1}),
        ({5: 1, 3: 3, 0: 5, 2: 7}, {0: 1}, {1: 1}),
        ({2: 1, 0: 2}, {3: 1, 0: C.R - 1}, {6: 1}),
    ]
    out = (x**3 + 3 * x + 5 + 7 * y) % C.R
    w = [1, out, y, x, x * x % C.R, x**3 % C.R, (y + 2) * (x - 1) % C.R, 12345]
    assert satisfied(constraints, w)
    return make_r1cs(8, 1, 1, 1, constraints), w, constraints


def random_circuit(
    seed: int, n_internal: int, n_out: int = 2, n_pub: int = 2, n_prv: int = 3
) -> tuple[R1cs, list[int]]:
    """Random products of random linear combinations (random coefficients, some +-1), satisfied."""
    rnd = random.Random(seed)
    n_in = n_pub + n_prv
    first_internal = 1 + n_out + n_in
    n_wires = first_internal + n_internal
    w = [0] * n_wires
    w[0] = 1
    for i in range(1 + n_out, first_internal):
        w[i] = rnd.randrange(C.R)
    known = [0, *range(1 + n_out, first_internal)]

    def rand_lc() -> Lc:
        lc: Lc = {}
        for _ in range(rnd.randint(1, 3)):
            lc[rnd.choice(known)] = rnd.choice([1, C.R - 1, rnd.randrange(1, C.R)])
        return lc

    constraints: list[tuple[Lc, Lc, Lc]] = []
    for j in range(first_internal, n_wires):
        a, b = rand_lc(), rand_lc()
        w[j] = lc_value(a, w) * lc_value(b, w) % C.R
        constraints.append((a, b, {j: 1}))
        known.append(j)
    for k in range(1, 1 + n_out):
        a = rand_lc()
        w[k] = lc_value(a, w)
        constraints.append((a, {0: 1}, {k: 1}))
    assert satisfied(constraints, w)
    return make_r1cs(n_wires, n_out, n_pub, n_prv, constraints), w


def witness_array(w: list[int]) -> np.ndarray:
    return FR.from_ints(w)


class NativeSystem:
    """A circom R1CS in the native prover's shape: inputs = ONE and the public signals, plus
    bellperson's x_i * 0 = 0 row per input (so the native key binds every input)."""

    def __init__(self, n_wires: int, n_public: int, constraints: list[tuple[Lc, Lc, Lc]]) -> None:
        self.num_inputs = 1 + n_public
        self.num_aux = n_wires - self.num_inputs
        rows = constraints + [({i: 1}, {}, {}) for i in range(self.num_inputs)]
        self.num_constraints = len(rows)
        self.A, self.B, self.C = (csr([row[k] for row in rows], n_wires) for k in range(3))

    def constraint_name(self, i: int) -> str:
        return f"constraint {i}"

    def witness(self, w: list[int]) -> NativeWitness:
        full = witness_array(w)
        return NativeWitness(full[: self.num_inputs], full[self.num_inputs :])


class NativeWitness:
    def __init__(self, inputs: np.ndarray, aux: np.ndarray) -> None:
        self.inputs, self.aux = inputs, aux
