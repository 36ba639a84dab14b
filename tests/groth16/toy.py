"""Small hand-built R1CS instances for prover tests, independent of the circuits layer.

Each constraint is (A-row, B-row, C-row) as {column: coefficient} with columns
over [inputs (ONE first) | aux]; bellperson's x_i * 0 = 0 rows are appended.
Witness values are plain Python ints, so satisfaction is checked by hand.
"""

from __future__ import annotations

import random
from dataclasses import dataclass, field

import numpy as np

from cuzk.algebra import constants as C
from cuzk.algebra.fields import FR
from cuzk.backends.base import CsrMatrix

Row = dict[int, int]


@dataclass
class ToyCircuit:
    num_inputs: int
    num_aux: int
    num_constraints: int
    A: CsrMatrix
    B: CsrMatrix
    C: CsrMatrix
    names: list[str] = field(default_factory=list)

    def constraint_name(self, i: int) -> str:
        return self.names[i]


@dataclass
class ToyWitness:
    inputs: np.ndarray
    aux: np.ndarray


def build(
    num_inputs: int,
    num_aux: int,
    constraints: list[tuple[Row, Row, Row]],
    names: list[str],
    *,
    input_rows: bool = True,
) -> ToyCircuit:
    """A circuit from explicit rows; `input_rows` appends bellperson's x_i * 0 = 0 per input."""
    extra = range(num_inputs) if input_rows else range(0)
    rows = list(constraints) + [({i: 1}, {}, {}) for i in extra]
    names = list(names) + [f"input {i} * 0 = 0" for i in extra]
    ncols = num_inputs + num_aux
    a, b, c = (CsrMatrix.from_rows([r[k] for r in rows], ncols) for k in range(3))
    return ToyCircuit(num_inputs, num_aux, len(rows), a, b, c, names)


def witness(inputs: list[int], aux: list[int]) -> ToyWitness:
    return ToyWitness(FR.from_ints([1, *inputs]), FR.from_ints(aux))


def cubic(x: int = 3) -> tuple[ToyCircuit, ToyWitness]:
    """x^3 + x + 5 == y with y public: the classic example, worked by hand."""
    # columns: 0 ONE, 1 y | 2 x, 3 t1 = x*x, 4 t2 = t1*x
    cs = build(
        2,
        3,
        [
            ({2: 1}, {2: 1}, {3: 1}),
            ({3: 1}, {2: 1}, {4: 1}),
            ({4: 1, 2: 1, 0: 5}, {0: 1}, {1: 1}),
        ],
        ["cubic/x_squared", "cubic/x_cubed", "cubic/output"],
    )
    y = (x**3 + x + 5) % C.R
    return cs, witness([y], [x, x * x % C.R, x**3 % C.R])


def random_circuit(n: int, num_public: int = 2, seed: int = 0) -> tuple[ToyCircuit, ToyWitness]:
    """n random multiplication gates v_k = (sum of 2 earlier terms) * (earlier var); publics are outputs."""
    rng = random.Random(seed)
    values = [1] + [0] * num_public  # inputs filled in at the end
    aux: list[int] = []
    constraints: list[tuple[Row, Row, Row]] = []
    names: list[str] = []
    ni = 1 + num_public
    aux.append(rng.randrange(C.R))  # a free private input, constrained below
    for k in range(n):
        known = [0, *range(ni, ni + len(aux))]
        col = lambda j: values[j] if j < ni else aux[j - ni]  # noqa: E731
        p, q, r = rng.choice(known), rng.choice(known), rng.choice(known)
        cp, cq = rng.randrange(1, C.R), rng.randrange(1, C.R)
        left = {p: cp} if p != q else {p: (cp + cq) % C.R}
        if p != q:
            left[q] = cq
        lv = sum(coef * col(j) for j, coef in left.items()) % C.R
        out = lv * col(r) % C.R
        aux.append(out)
        constraints.append((left, {r: 1}, {ni + len(aux) - 1: 1}))
        names.append(f"gate[{k}]")
    # bind the first aux (free input) and expose the last outputs as public inputs
    first = ni
    constraints.append(({first: 1}, {first: 1}, {ni + len(aux): 1}))
    aux.append(aux[0] * aux[0] % C.R)
    names.append("bind/free_squared")
    for i in range(num_public):
        src = ni + len(aux) - 1 - i
        values[1 + i] = aux[src - ni]
        constraints.append(({src: 1}, {0: 1}, {1 + i: 1}))
        names.append(f"public[{i}]")
    cs = build(ni, len(aux), constraints, names)
    return cs, witness(values[1:], aux)
