"""CPU sparse matrix-vector products over Fr against a Python-int reference."""

from __future__ import annotations

import numpy as np
import pytest

from cuzk.algebra import FR
from cuzk.algebra import constants as C
from cuzk.backends import CsrMatrix
from cuzk.backends.cpu import CpuBackend
from cuzk.errors import BackendError

R = C.R


def random_csr(rows: int, cols: int, rng: np.random.Generator, index_dtype=np.int64):
    """A CSR matrix with empty rows, repeated columns, and coefficients 0, 1, -1, 2 and random."""
    entries: list[list[tuple[int, int]]] = []
    for r in range(rows):
        k = 0 if r % 7 == 3 else int(rng.integers(1, 9))
        row = []
        for _ in range(k):
            col = int(rng.integers(0, cols))
            kind = rng.integers(0, 5)
            coeff = [0, 1, R - 1, 2, int(FR.to_ints(FR.random(1, rng))[0])][kind]
            row.append((col, coeff))
        entries.append(row)
    indptr = np.zeros(rows + 1, dtype=np.int64)
    indptr[1:] = np.cumsum([len(r) for r in entries])
    indices = np.array([c for r in entries for c, _ in r], dtype=index_dtype)
    data = FR.from_ints([v for r in entries for _, v in r])
    return CsrMatrix(indptr, indices, data, (rows, cols)), entries


@pytest.mark.parametrize("index_dtype", [np.int32, np.int64])
def test_spmv_matches_python(index_dtype, rng: np.random.Generator) -> None:
    m, entries = random_csr(200, 50, rng, index_dtype)
    w = FR.to_ints(FR.random(50, rng))
    w[0], w[1] = 0, 1
    got = FR.to_ints(CpuBackend().spmv(m, FR.from_ints(w)))
    assert got == [sum(v * w[c] for c, v in row) % R for row in entries]
    assert m.nnz == sum(len(r) for r in entries)


def test_spmv_shape_errors(rng: np.random.Generator) -> None:
    m, _ = random_csr(5, 4, rng)
    with pytest.raises(BackendError, match="4 columns but the vector has 3"):
        CpuBackend().spmv(m, FR.random(3, rng))


def test_spmv_empty_matrix(rng: np.random.Generator) -> None:
    m = CsrMatrix(np.zeros(4, np.int64), np.zeros(0, np.int64), FR.zeros(0), (3, 2))
    assert FR.to_ints(CpuBackend().spmv(m, FR.random(2, rng))) == [0, 0, 0]
