"""A recorded constraint system: CSR matrices A, B, C, density bitmaps and names.

Columns are ``[inputs | aux]`` with ONE at column 0; the last ``num_inputs``
rows are bellperson's ``x_i * 0 = 0`` constraints (A holds input i, B and C are
empty), which is why inputs are always dense in A. Matrix values are Fr in
Montgomery form, and no stored coefficient is zero, so "a column appears in
the matrix" is exactly bellperson's density bit.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass, field
from functools import cached_property
from typing import Any

import numpy as np

from cuzk.algebra.fields import FR
from cuzk.backends.base import Backend, CsrMatrix
from cuzk.errors import CircuitError, UnsatisfiedError


@dataclass(frozen=True)
class Witness:
    """A full assignment: inputs (num_inputs, 4) with ONE first, aux (num_aux, 4); Montgomery form."""

    inputs: np.ndarray
    aux: np.ndarray

    def full(self) -> np.ndarray:
        """The vector w = [inputs | aux] that the matrices multiply."""
        return np.concatenate([self.inputs, self.aux])


@dataclass(frozen=True)
class ConstraintNames:
    """Namespace paths of constraints, stored compactly (millions of rows share few strings).

    Row i is named ``ns_paths[row_ns[i]]`` joined with its local name: for a row
    written by a direct ``enforce`` that is ``direct_names[row_local[i]]``; for a
    row stamped from a gadget template t it is ``template_names[t][row_local[i]]``.
    """

    ns_paths: list[str]
    direct_names: list[str]
    template_names: list[list[str]]
    row_ns: np.ndarray  # (rows,) int32
    row_tmpl: np.ndarray  # (rows,) int32, -1 for direct rows
    row_local: np.ndarray  # (rows,) int32

    def name(self, i: int) -> str:
        ns = self.ns_paths[int(self.row_ns[i])]
        t = int(self.row_tmpl[i])
        local = (
            self.direct_names[int(self.row_local[i])]
            if t < 0
            else self.template_names[t][int(self.row_local[i])]
        )
        return "/".join(p for p in (ns, local) if p)


@dataclass
class Topology:
    """The R1CS of one circuit shape; shared by every proof of that shape."""

    num_inputs: int
    num_aux: int
    A: CsrMatrix
    B: CsrMatrix
    C: CsrMatrix
    names: ConstraintNames
    hash: str = field(default="")

    def __post_init__(self) -> None:
        if not self.hash:
            self.hash = topology_hash(self)

    @property
    def num_constraints(self) -> int:
        return self.A.shape[0]

    @property
    def num_columns(self) -> int:
        return self.num_inputs + self.num_aux

    def constraint_name(self, i: int) -> str:
        if not 0 <= i < self.num_constraints:
            raise IndexError(f"constraint {i} out of range (0..{self.num_constraints - 1})")
        return self.names.name(i)

    # --- density bitmaps (bellperson's; see FORMATS.md 1.4) ------------------------
    @cached_property
    def _a_used(self) -> np.ndarray:
        return self.A.columns_used()

    @cached_property
    def _b_used(self) -> np.ndarray:
        return self.B.columns_used()

    @property
    def a_aux_density(self) -> np.ndarray:
        return self._a_used[self.num_inputs :]

    @property
    def b_input_density(self) -> np.ndarray:
        return self._b_used[: self.num_inputs]

    @property
    def b_aux_density(self) -> np.ndarray:
        return self._b_used[self.num_inputs :]

    def stats(self) -> dict[str, Any]:
        """The shape figures `cuzk circuits` prints: sizes, nnz per row, densities."""
        n = max(1, self.num_constraints)
        na = max(1, self.num_aux)
        return {
            "constraints": self.num_constraints,
            "inputs": self.num_inputs,
            "aux": self.num_aux,
            "nnz_a": self.A.nnz / n,
            "nnz_b": self.B.nnz / n,
            "nnz_c": self.C.nnz / n,
            "a_aux_density": float(self.a_aux_density.sum()) / na,
            "b_aux_density": float(self.b_aux_density.sum()) / na,
            "b_input_density": float(self.b_input_density.sum()) / max(1, self.num_inputs),
        }

    # --- evaluation ----------------------------------------------------------------
    def _vector(self, wit: Witness) -> np.ndarray:
        if wit.inputs.shape != (self.num_inputs, 4) or wit.aux.shape != (self.num_aux, 4):
            raise CircuitError(
                f"witness has {wit.inputs.shape[0]} inputs and {wit.aux.shape[0]} aux values; "
                f"the circuit has {self.num_inputs} and {self.num_aux}"
            )
        if not np.array_equal(wit.inputs[0], FR.one()):
            raise UnsatisfiedError("input 0 of the witness is not ONE", constraint="ONE", index=None)
        return wit.full()

    def evaluate(self, wit: Witness, backend: Backend) -> tuple[Any, Any, Any]:
        """(A.w, B.w, C.w) through the caller's backend's sparse matrix-vector product."""
        w = backend.to_device(self._vector(wit))
        return backend.spmv(self.A, w), backend.spmv(self.B, w), backend.spmv(self.C, w)

    def check(self, wit: Witness, backend: Backend) -> None:
        """Raise UnsatisfiedError naming the first constraint with (A.w)(B.w) != C.w."""
        a, b, c = (backend.to_host(x) for x in self.evaluate(wit, backend))
        bad = ~FR.eq(FR.mul(a, b), c)
        if bad.any():
            i = int(np.argmax(bad))
            name = self.constraint_name(i)
            raise UnsatisfiedError(
                f"constraint {i} ({name}) is not satisfied ({int(bad.sum())} of {bad.size} fail)",
                constraint=name,
                index=i,
            )


def topology_hash(t: Topology) -> str:
    """blake2b over sizes and the three matrices: the identity an SRS is made for."""
    h = hashlib.blake2b(digest_size=32)
    h.update(np.array([t.num_inputs, t.num_aux, t.A.shape[0]], dtype="<i8").tobytes())
    for m in (t.A, t.B, t.C):  # buffers, not tobytes(): no copy of a multi-GiB matrix
        h.update(np.ascontiguousarray(m.indptr, dtype="<i8").data)
        h.update(np.ascontiguousarray(m.indices, dtype="<i4").data)
        h.update(np.ascontiguousarray(m.data, dtype="<u8").data)
    return h.hexdigest()
