"""Parameters made resident on a backend: the bellperson `ProvingKey` of the one prover.

Loading once and proving many times is the point of the engine (the reference
saved 30-90 s per proof this way); the key also records which circuit shape
the parameters fit, so a mismatch is caught before any MSM runs.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

import numpy as np

from cuzk.backends.base import Backend, Bases, CsrMatrix
from cuzk.errors import CircuitError, ParamsError
from cuzk.groth16.conventions import BellpersonQap, DensityScalars, QapConvention, QueryScalars
from cuzk.groth16.keys import Parameters, VerifyingKey
from cuzk.groth16.qap import ConstraintMatrices, Densities, Domain
from cuzk.groth16.verifier import PreparedVerifyingKey, prepare

#: Precomputed copies per G1 query: one count for all four, or a count per query name (h, l, a,
#: b_g1; a name left out gets none), as the engine's msm.precompute=auto plans them.
Copies = int | Mapping[str, int]


def copies_for(precompute: Copies, query: str) -> int:
    """The copies `precompute` gives G1 query `query` (>= 1: an "auto" count is the engine's to
    resolve, cuzk.engine.loader.copies_plan)."""
    n = precompute.get(query, 1) if isinstance(precompute, Mapping) else precompute
    if n < 1:
        raise ValueError(f"precomputed copies of {query} must be at least 1, got {n} (auto unresolved?)")
    return n


@dataclass
class ResidentParameters:
    """bellperson parameters as backend handles, with the constraint system they were made for."""

    cs: ConstraintMatrices
    backend: Backend
    g2_backend: Backend  # where the B query on G2 lives (the CPU, to keep finalize off the GPU)
    vk: VerifyingKey
    pvk: PreparedVerifyingKey
    h: Bases
    l: Bases
    a: Bases
    b_g1: Bases
    b_g2: Bases
    domain: Domain
    densities: Densities
    qap: QapConvention  # BellpersonQap
    scalars: QueryScalars  # DensityScalars: the density bitmaps as index arrays on the backend

    @property
    def A(self) -> CsrMatrix:
        return self.cs.A

    @property
    def B(self) -> CsrMatrix:
        return self.cs.B

    @property
    def C(self) -> CsrMatrix:
        return self.cs.C

    @property
    def num_inputs(self) -> int:
        return self.cs.num_inputs

    @property
    def num_vars(self) -> int:
        return self.cs.num_inputs + self.cs.num_aux

    def constraint_name(self, i: int) -> str:
        return self.cs.constraint_name(i)

    def witness_vector(self, source: Any, who: str) -> np.ndarray:
        """[inputs | aux] from a bellperson witness (inputs, aux), or a full (num_vars, 4) array."""
        if isinstance(source, np.ndarray):
            return source
        want = {"inputs": (self.cs.num_inputs, 4), "aux": (self.cs.num_aux, 4)}
        for name, shape in want.items():
            arr = getattr(source, name, None)
            if not isinstance(arr, np.ndarray) or arr.shape != shape or arr.dtype != np.uint64:
                got = getattr(arr, "shape", None)
                raise CircuitError(f"{who}: {name} has shape {got}, circuit needs {shape} uint64")
        return np.concatenate([source.inputs, source.aux])


def check_shape(params: Parameters, cs: ConstraintMatrices) -> tuple[Domain, Densities]:
    """Raise ParamsError unless the parameters' query sizes match this constraint system."""
    counts = {k: int(getattr(params, k).shape[0]) for k in ("h", "l", "a", "b_g1", "b_g2")}
    return check_counts(counts, params.vk.ic.shape[0], cs)


def check_counts(counts: dict[str, int], num_ic: int, cs: ConstraintMatrices) -> tuple[Domain, Densities]:
    """Raise ParamsError unless the query sizes (points per query, ic points) fit this system."""
    dom = Domain.for_constraints(cs.num_constraints)
    dens = Densities.of(cs)
    expected = {
        "ic": cs.num_inputs,
        "h": dom.m - 1,
        "l": cs.num_aux,
        "a": dens.a_size,
        "b_g1": dens.b_size,
        "b_g2": dens.b_size,
    }
    actual = {"ic": num_ic, **counts}
    wrong = [f"{k}: {actual[k]} points, circuit needs {v}" for k, v in expected.items() if actual[k] != v]
    if wrong:
        raise ParamsError("parameters do not fit this circuit (" + "; ".join(wrong) + ")")
    return dom, dens


def load_queries(
    backend: Backend,
    g2_backend: Backend,
    g1: dict[str, np.ndarray],
    g2: dict[str, np.ndarray],
    *,
    precompute: Copies = 1,
    progress: Callable[[str], None] | None = None,
) -> dict[str, Bases]:
    """Resident handles for the G1 queries on `backend` (each precomputed to its `precompute`
    copies, Backend.precompute) and the G2 ones on `g2_backend`. All or nothing: if one load or table
    does not fit, the handles made so far are released before the error propagates."""
    done: list[tuple[Backend, Bases]] = []
    try:
        for name, points in g1.items():
            done.append((backend, backend.load_bases(points, "g1")))
            if (copies := copies_for(precompute, name)) > 1:
                extra = backend.precompute(done[-1][1], copies, progress=progress)
                if progress is not None and extra:
                    progress(f"{name}: {points.shape[0]} bases precomputed, {extra / 2**30:.2f} GiB more")
        for points in g2.values():
            done.append((g2_backend, g2_backend.load_bases(points, "g2")))
    except BaseException:
        for be, bases in done:
            be.release(bases)
        raise
    return dict(zip([*g1, *g2], [b for _, b in done], strict=True))


def release_queries(key: Any) -> None:
    """Free a proving key's resident bases now (a ResidentParameters or a zkey proving key: the
    G1 queries on `key.backend`, b_g2 on `key.g2_backend`); releasing twice is a no-op."""
    for backend, bases in ((key.backend, (key.h, key.l, key.a, key.b_g1)), (key.g2_backend, (key.b_g2,))):
        for b in bases:
            backend.release(b)


def make_resident(
    params: Parameters,
    cs: ConstraintMatrices,
    backend: Backend,
    *,
    g2_backend: Backend | None = None,
    precompute: Copies = 1,
    progress: Callable[[str], None] | None = None,
) -> ResidentParameters:
    """The parameters' queries as handles on `backend` (b_g2 on `g2_backend`), after check_shape;
    with precompute > 1 the G1 queries keep that many shifted copies (Backend.precompute; a
    mapping gives each query its own count)."""
    check_shape(params, cs)
    g2_be = g2_backend or backend
    q = load_queries(
        backend,
        g2_be,
        {"h": params.h, "l": params.l, "a": params.a, "b_g1": params.b_g1},
        {"b_g2": params.b_g2},
        precompute=precompute,
        progress=progress,
    )
    return _assemble(params.vk, q, cs, backend, g2_be)


def resident_from_rows(
    vk: VerifyingKey,
    rows: dict[str, Any],
    cs: ConstraintMatrices,
    backend: Backend,
    *,
    g2_backend: Backend | None = None,
    precompute: Copies = 1,
    progress: Callable[[str], None] | None = None,
) -> ResidentParameters:
    """The resident key over query rows already in `backend`'s memory ((n, 2 width) affine rows,
    as setup.generate_queries and params_io.load_rows make them): the G1 queries become handles
    without a copy; b_g2 moves to `g2_backend` when that is another backend. All or nothing."""
    g2_be = g2_backend or backend
    counts = {k: int(v.shape[0]) for k, v in rows.items()}
    check_counts(counts, vk.num_inputs, cs)
    done: list[tuple[Backend, Bases]] = []
    try:
        for name in ("h", "l", "a", "b_g1"):
            done.append((backend, backend.bases_from_device(rows[name], "g1")))
            if (copies := copies_for(precompute, name)) > 1:
                extra = backend.precompute(done[-1][1], copies, progress=progress)
                if progress is not None and extra:
                    progress(f"{name}: {counts[name]} bases precomputed, {extra / 2**30:.2f} GiB more")
        if g2_be is backend:
            done.append((backend, backend.bases_from_device(rows["b_g2"], "g2")))
        else:
            pts = np.asarray(backend.to_host(rows["b_g2"]))
            done.append((g2_be, g2_be.load_bases(pts.reshape(pts.shape[0], 2, 2, 6), "g2")))
    except BaseException:
        for be, bases in done:
            be.release(bases)
        raise
    q = dict(zip(["h", "l", "a", "b_g1", "b_g2"], [b for _, b in done], strict=True))
    return _assemble(vk, q, cs, backend, g2_be)


def _assemble(
    vk: VerifyingKey, q: dict[str, Bases], cs: ConstraintMatrices, backend: Backend, g2_be: Backend
) -> ResidentParameters:
    dom = Domain.for_constraints(cs.num_constraints)
    dens = Densities.of(cs)
    ni = cs.num_inputs
    a_idx = np.concatenate([np.arange(ni), ni + np.flatnonzero(dens.a_aux)])
    b_idx = np.concatenate([np.flatnonzero(dens.b_input), ni + np.flatnonzero(dens.b_aux)])
    return ResidentParameters(
        cs=cs,
        backend=backend,
        g2_backend=g2_be,
        vk=vk,
        pvk=prepare(vk),
        h=q["h"],
        l=q["l"],
        a=q["a"],
        b_g1=q["b_g1"],
        b_g2=q["b_g2"],
        domain=dom,
        densities=dens,
        qap=BellpersonQap(dom),
        scalars=DensityScalars(ni, backend.to_device(a_idx), backend.to_device(b_idx)),
    )
