"""From R1CS matrices to the QAP: evaluation domain, density bitmaps, transposes.

The prover and the setup read a constraint system only through this protocol:
matrices A, B, C over columns [inputs (ONE first) | aux], with bellperson's
x_i * 0 = 0 row per input already appended (so inputs are dense in A).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Protocol

import numpy as np

from cuzk.algebra import constants as C
from cuzk.algebra.domain import MAX_LOG_N
from cuzk.backends.base import CsrMatrix
from cuzk.errors import CircuitTooLargeError


class ConstraintMatrices(Protocol):
    """An R1CS as the QAP reads it; read-only, so a recorded system and a Topology both fit."""

    @property
    def num_inputs(self) -> int: ...
    @property
    def num_aux(self) -> int: ...
    @property
    def num_constraints(self) -> int: ...
    @property
    def A(self) -> CsrMatrix: ...
    @property
    def B(self) -> CsrMatrix: ...
    @property
    def C(self) -> CsrMatrix: ...

    def constraint_name(self, i: int) -> str: ...


@dataclass(frozen=True)
class Domain:
    """The radix-2 evaluation domain of size m >= n with bellperson's root (generator 7)."""

    log_m: int
    omega: int
    coset: int = C.BELLPERSON_GENERATOR

    @property
    def m(self) -> int:
        return 1 << self.log_m

    @classmethod
    def for_constraints(cls, n: int, generator: int = C.BELLPERSON_GENERATOR) -> Domain:
        log_m = max(1, (n - 1).bit_length())
        if log_m > MAX_LOG_N:
            raise CircuitTooLargeError(
                f"{n} constraints need a domain of 2^{log_m}, above the supported 2^{MAX_LOG_N}"
            )
        return cls(log_m, C.root_of_unity(log_m, generator), generator)

    @property
    def z_on_coset_inv(self) -> int:
        """1 / Z(g x) for x in the domain: Z(X) = X^m - 1 is the constant g^m - 1 on the coset g H."""
        return pow((pow(self.coset, self.m, C.R) - 1) % C.R, -1, C.R)


@dataclass(frozen=True)
class Densities:
    """bellperson's bitmaps: a variable's bit is set when it appears in the matrix."""

    a_aux: np.ndarray  # (num_aux,) bool; inputs are always dense in A
    b_input: np.ndarray  # (num_inputs,) bool
    b_aux: np.ndarray  # (num_aux,) bool

    @classmethod
    def of(cls, cs: ConstraintMatrices) -> Densities:
        if hasattr(cs, "a_aux_density"):  # a recorded topology keeps them (a replicated one
            # from its layout, without building the GiBs of full matrices at real size)
            t: Any = cs
            return cls(a_aux=t.a_aux_density, b_input=t.b_input_density, b_aux=t.b_aux_density)
        a, b = cs.A.columns_used(), cs.B.columns_used()
        return cls(a_aux=a[cs.num_inputs :], b_input=b[: cs.num_inputs], b_aux=b[cs.num_inputs :])

    @property
    def a_size(self) -> int:
        """Bases in the a query: every input, then the aux variables A uses."""
        return self.b_input.shape[0] + int(self.a_aux.sum())

    @property
    def b_size(self) -> int:
        """Bases in each b query (G1 and G2)."""
        return int(self.b_input.sum()) + int(self.b_aux.sum())


def transpose(m: CsrMatrix) -> CsrMatrix:
    """CSR of m^T (CsrMatrix.transposed: a stable counting sort on the column indices)."""
    return m.transposed()
