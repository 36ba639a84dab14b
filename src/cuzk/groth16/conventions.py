"""The two places where bellperson and snarkjs keys differ, as small strategy objects.

A proving key (`groth16.prover.ProvingKey`) carries one of each:

    qap      how the H query's scalars come from a = A.w, b = B.w, c = C.w
             BellpersonQap: divide by Z on a coset;  SnarkjsQap: the odd-roots trick
    scalars  which witness entries each query's MSM takes
             DensityScalars: gathered by bellperson's density bitmaps, L over aux
             FullScalars:    snarkjs's full witness for A/B1/B2, the C section over the private part

Both read the witness as one (k, num_vars, 4) array [ONE, public inputs | private], so the
prover has a single path and only these objects know whose conventions a key follows.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Protocol

from cuzk.algebra import constants as C
from cuzk.backends.base import Backend
from cuzk.groth16.qap import Domain


def domain_sized(backend: Backend, v: Any, rows: int | None) -> Any:
    """v with zero rows appended up to `rows` (a new array); v itself if it is that long already."""
    if rows is None or v.shape[0] >= rows:
        return v
    with backend.activate():
        out = backend.xp.zeros((rows, 4), dtype=backend.xp.uint64)
        out[: v.shape[0]] = v
    return out


class QapConvention(Protocol):
    @property
    def rows(self) -> int | None:
        """The length a, b, c are transformed at (the domain), if longer than the constraints:
        products made that long from the start (zero past the last constraint) need no padded
        copy. None: the vectors come at the domain's size already."""
        ...

    def h(self, backend: Backend, a: Any, b: Any, c: Any) -> Any:
        """The H query's scalars for one circuit, from its (rows, 4) evaluations a, b, c, which
        it may overwrite: their memory holds the transforms (at 2^27 the H stack needs 4
        domain-sized vectors, not 7 plus the three products)."""
        ...


@dataclass(frozen=True)
class BellpersonQap:
    """h(X) = (A(X) B(X) - C(X)) / Z(X), evaluated on the coset g H and interpolated back.

    a, b, c are padded to the domain of m >= n points (generator 7), interpolated
    (iNTT), evaluated on the coset with shift g (coset NTT), combined as (ab - c) / Z,
    Z = g^m - 1 being constant on g H, and interpolated back; h has m - 1 coefficients.
    """

    domain: Domain

    @property
    def rows(self) -> int:
        return self.domain.m

    def h(self, backend: Backend, a: Any, b: Any, c: Any) -> Any:
        dom = self.domain
        evals = []
        for v in (a, b, c):
            padded = domain_sized(backend, v, dom.m)
            coeffs = backend.intt(padded, dom.omega, overwrite=True)
            del padded
            evals.append(backend.ntt(coeffs, dom.omega, coset=dom.coset, overwrite=True))
            del coeffs
        quotient = backend.fr_mul_sub_scale(evals[0], evals[1], evals[2], dom.z_on_coset_inv, overwrite=True)
        del evals
        return backend.intt(quotient, dom.omega, coset=dom.coset, overwrite=True)[: dom.m - 1]


@dataclass(frozen=True)
class SnarkjsQap:
    """a b - c at the odd 2n-th roots w_2n^(2j+1), with no division by Z (FORMATS.md section 2).

    The domain has n = domainSize points with the generator-5 root w_n; each vector is
    interpolated (iNTT) and evaluated again on w_2n * <w_n> (a coset NTT with shift
    w_2n). The key's H points already hold L^(2n)_(2j+1)(tau) / delta, which is why
    no division by Z is needed.
    """

    omega: int  # w_n
    coset: int  # w_2n
    rows = None  # the zkey's matrices have domainSize rows already

    @classmethod
    def for_domain(cls, log_n: int, generator: int = C.SNARKJS_GENERATOR) -> SnarkjsQap:
        return cls(C.root_of_unity(log_n, generator), C.root_of_unity(log_n + 1, generator))

    def h(self, backend: Backend, a: Any, b: Any, c: Any) -> Any:
        odd = [
            backend.ntt(
                backend.intt(v, self.omega, overwrite=True), self.omega, coset=self.coset, overwrite=True
            )
            for v in (a, b, c)
        ]
        return backend.fr_sub(backend.fr_mul(odd[0], odd[1]), odd[2])


class QueryScalars(Protocol):
    """Views or gathers of the (k, num_vars, 4) witness on the backend, one per query."""

    @property
    def private_span(self) -> str:
        """The span of the private query's MSM: bellperson's L query or snarkjs's C section."""
        ...

    def a(self, w: Any) -> Any: ...
    def b(self, w: Any) -> Any: ...
    def private(self, w: Any) -> Any: ...


@dataclass(frozen=True)
class DensityScalars:
    """bellperson: a and b scalars gathered by the density bitmaps (bases of unset bits are
    not in the key); L over the aux variables."""

    num_inputs: int
    a_idx: Any  # backend int64 indices into the witness: every input, then aux with a_aux set
    b_idx: Any  # inputs with b_input set, then aux with b_aux set

    @property
    def private_span(self) -> str:
        return "msm_l"

    def a(self, w: Any) -> Any:
        return w[:, self.a_idx]

    def b(self, w: Any) -> Any:
        return w[:, self.b_idx]

    def private(self, w: Any) -> Any:
        return w[:, self.num_inputs :]


@dataclass(frozen=True)
class FullScalars:
    """snarkjs: the full witness for A, B1 and B2; the C section over witness[n_public + 1:]."""

    num_inputs: int  # n_public + 1

    @property
    def private_span(self) -> str:
        return "msm_c"

    def a(self, w: Any) -> Any:
        return w

    def b(self, w: Any) -> Any:
        return w

    def private(self, w: Any) -> Any:
        return w[:, self.num_inputs :]
