"""The square roots and "lexicographically largest" tests behind point decompression.

fq_sqrt / fq2_sqrt / fq_is_lex_largest / fq2_is_lex_largest are numba functions
on single elements; small kernels here run them over arrays and the results
are checked against Python-int square roots written independently
(pyecc_oracle: the p = 3 mod 4 exponent, and the norm method for Fq2).
"""

from __future__ import annotations

import numpy as np
from numba import njit
from pyecc_oracle import P, sqrt_fq, sqrt_fq2

from cuzk.algebra import FQ, FQ2
from cuzk.algebra._jit_fields import (
    FQ2_TAG,
    FQ_TAG,
    f_load,
    f_store,
    fq2_is_lex_largest,
    fq2_sqrt,
    fq_is_lex_largest,
    fq_sqrt,
)


@njit(cache=True)
def _fq_sqrt_rows(a, out, ok, largest):
    for i in range(a.shape[0]):
        x = f_load(FQ_TAG, a, i, 0)
        ok[i], r = fq_sqrt(x)
        f_store(FQ_TAG, out, i, 0, r)
        largest[i] = fq_is_lex_largest(x)


@njit(cache=True)
def _fq2_sqrt_rows(a, out, ok, largest):
    for i in range(a.shape[0]):
        x = f_load(FQ2_TAG, a, i, 0)
        ok[i], r = fq2_sqrt(x)
        f_store(FQ2_TAG, out, i, 0, r)
        largest[i] = fq2_is_lex_largest(x)


def run(kernel, field, values: list) -> tuple[list, list[bool], list[bool]]:
    a = field.from_ints(values)
    rows = a.reshape(a.shape[0], field.width)
    out = np.empty_like(rows)
    ok = np.empty(a.shape[0], dtype=np.bool_)
    largest = np.empty(a.shape[0], dtype=np.bool_)
    kernel(rows, out, ok, largest)
    return field.to_ints(out.reshape(a.shape)), ok.tolist(), largest.tolist()


def test_fq_sqrt_and_lex_largest(rng: np.random.Generator) -> None:
    half = (P - 1) // 2
    vals = [0, 1, 2, 3, 4, half, half + 1, P - 1] + [
        int.from_bytes(rng.bytes(56), "big") % P for _ in range(60)
    ]
    roots, ok, largest = run(_fq_sqrt_rows, FQ, vals)
    for v, r, good in zip(vals, roots, ok, strict=True):
        assert good == (sqrt_fq(v) is not None), v
        if good:
            assert r * r % P == v
    assert largest == [v > half for v in vals]
    assert any(ok) and not all(ok)  # both residues and non-residues were exercised


def test_fq2_sqrt_and_lex_largest(rng: np.random.Generator) -> None:
    half = (P - 1) // 2

    def rand() -> int:
        return int.from_bytes(rng.bytes(56), "big") % P

    nonres = next(c for c in (rand() for _ in range(100)) if sqrt_fq(c) is None)
    res = rand() ** 2 % P
    vals = [
        (0, 0),
        (1, 0),
        (P - 1, 0),  # -1 = i^2: the alpha = -1 branch
        (res, 0),
        (nonres, 0),  # a square in Fq2 whose root is purely imaginary
        (0, res),
        (0, nonres),
        (half, 0),
        (half + 1, 0),
        (0, half + 1),
        (half + 1, half),
    ]
    vals += [(rand(), rand()) for _ in range(40)]
    squares = [tuple(int(c) for c in sq) for sq in FQ2.to_ints(FQ2.square(FQ2.from_ints(vals[-20:])))]
    vals += squares
    roots, ok, largest = run(_fq2_sqrt_rows, FQ2, vals)
    for v, r, good in zip(vals, roots, ok, strict=True):
        assert good == (sqrt_fq2(v) is not None), v
        if good:
            sq = FQ2.to_ints(FQ2.square(FQ2.from_ints([r])))[0]
            assert sq == v, v
    assert all(ok[-20:])
    assert largest == [(c1 > half) if c1 else (c0 > half) for c0, c1 in vals]
