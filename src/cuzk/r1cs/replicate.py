"""Replicated recording: a circuit made of many copies of one block, recorded once.

A real-size partition repeats one structure: 18 PoRep challenges, 86 SnapDeals
challenges, 2,349 WindowPoSt sectors. Recording it by running the gadgets for
every copy would cost 130M Python-side constraint stamps and ~26 GiB of
matrices; instead the circuit is split into

- a *shared head* (public commitments, values every copy reads: replica id,
  comm_c, the apex tree), synthesized once, and
- a *copy* (one challenge or sector), synthesized once for copy 0,

and the partition is the head followed by `copies` copies of the block, each
with its variables moved by a fixed offset per copy: copy k's public inputs are
copy 0's plus k * `unit_inputs`, its aux variables copy 0's plus k *
`unit_aux`; variables of the head are shared. The rows are ordered head, copy
0, ..., copy C-1, then bellperson's one input row per public input, exactly as
a direct recording of the same `synthesize` would order them (tests hold the
two equal, matrix for matrix).

`ReplicatedTopology` keeps only the head's and one copy's rows and offers the
`Topology` interface: `evaluate` / `check` run the copy's matrix once per copy
over that copy's slice of the witness (no full matrix is built), the density
bitmaps and sizes come from the layout, and `A`, `B`, `C` materialize the
full matrices only when a caller asks for them (parameter generation, or a
prover that takes a whole matrix). The witness program is replicated at the
level of its ops (a few calls per copy), so it runs every copy's gadget
calls as lanes of one vectorized call.
"""

from __future__ import annotations

import hashlib
import logging
import time
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass, field
from functools import cached_property
from typing import Any

import numpy as np

from cuzk.algebra.fields import FR
from cuzk.backends.base import Backend, CsrMatrix
from cuzk.errors import CircuitError, UnsatisfiedError
from cuzk.r1cs.program import Source, WitnessProgram, build_program
from cuzk.r1cs.topology import ConstraintNames, Topology, Witness

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class Layout:
    """Where the head and the copies sit among the variables and rows."""

    copies: int
    shared_inputs: int  # inputs of the head, ONE included
    unit_inputs: int  # inputs per copy
    shared_aux: int
    unit_aux: int
    shared_rows: int  # rows of the head (the input rows come after all copies)
    unit_rows: int

    @property
    def num_inputs(self) -> int:
        return self.shared_inputs + self.copies * self.unit_inputs

    @property
    def num_aux(self) -> int:
        return self.shared_aux + self.copies * self.unit_aux

    @property
    def num_constraints(self) -> int:
        return self.shared_rows + self.copies * self.unit_rows + self.num_inputs

    def column_strides(self, cols: np.ndarray) -> np.ndarray:
        """Per copy-0 column: how far it moves per copy (0 for ONE and the head's columns)."""
        ni = self.num_inputs
        per_input = (cols >= self.shared_inputs) & (cols < self.shared_inputs + self.unit_inputs)
        per_aux = cols >= ni + self.shared_aux
        return np.where(per_input, self.unit_inputs, np.where(per_aux, self.unit_aux, 0)).astype(np.int64)

    def var_map(self, v: np.ndarray, k: int) -> np.ndarray:
        """Copy 0's variables (aux j >= 0, input i as -1 - i) as copy k's."""
        v = np.asarray(v, dtype=np.int64)
        aux = v >= self.shared_aux
        inp = -1 - v >= self.shared_inputs
        return v + np.where(aux, k * self.unit_aux, 0) - np.where(inp, k * self.unit_inputs, 0)

    def as_json(self) -> dict[str, int]:
        return {k: int(getattr(self, k)) for k in self.__dataclass_fields__}


class ReplicatedNames:
    """Constraint names of a replicated topology: copy k's rows are copy 0's, renamed.

    The circuit wraps each copy in the namespace `prefix k` (e.g. "challenge 7"), so a copy-0
    name "challenge 0/data/..." becomes "challenge 7/data/..." for copy 7.
    """

    def __init__(self, head: ConstraintNames, unit: ConstraintNames, layout: Layout, prefix: str) -> None:
        self.head, self.unit, self.layout, self.prefix = head, unit, layout, prefix

    def name(self, i: int) -> str:
        lay = self.layout
        if i < lay.shared_rows:
            return self.head.name(i)
        j = i - lay.shared_rows
        if j < lay.copies * lay.unit_rows:
            k, local = divmod(j, lay.unit_rows)
            base = self.unit.name(local)
            p0 = f"{self.prefix} 0"
            if base == p0 or base.startswith(p0 + "/"):
                return f"{self.prefix} {k}" + base[len(p0) :]
            return base
        return f"input {j - lay.copies * lay.unit_rows} * 0 = 0"


def _rows(m: CsrMatrix, lo: int, hi: int, ncols: int) -> CsrMatrix:
    """Rows lo..hi of m as their own matrix."""
    s, e = int(m.indptr[lo]), int(m.indptr[hi])
    return CsrMatrix(m.indptr[lo : hi + 1] - s, m.indices[s:e], m.data[s:e], (hi - lo, ncols))


@dataclass
class _Local:
    """A copy's rows over its own columns: the matrix is the same for every copy; only the
    columns it reads move (`cols + k * strides`)."""

    matrix: CsrMatrix
    cols: np.ndarray  # (u,) copy-0 columns, sorted
    strides: np.ndarray  # (u,) per-copy offsets of those columns


class ReplicatedTopology(Topology):
    """A `Topology` of a head plus `copies` copies of one block (see the module docstring).

    `A`, `B`, `C` exist but are built (the full matrices, GiBs at real size) on first access;
    `evaluate`, `check`, the densities, `stats` and `constraint_name` never build them.
    """

    def __init__(
        self,
        layout: Layout,
        coefs: np.ndarray,
        head: tuple[CsrMatrix, CsrMatrix, CsrMatrix],
        unit: tuple[CsrMatrix, CsrMatrix, CsrMatrix],
        names: ReplicatedNames,
        hash: str = "",
    ) -> None:
        """`coefs`: the distinct coefficients (n, 4) Montgomery; the matrices' `data` hold, per
        entry, its index into them (int32 codes, (nnz,)); the Fr values are built here."""
        # Topology's dataclass __init__ is not called: A, B and C are built on demand (__getattr__).
        self.layout = layout
        self.num_inputs = layout.num_inputs
        self.num_aux = layout.num_aux
        self.coefs = coefs
        self.head_codes = tuple(m.data for m in head)
        self.unit_codes = tuple(m.data for m in unit)
        h = [CsrMatrix(m.indptr, m.indices, coefs[m.data], m.shape) for m in head]
        u = [CsrMatrix(m.indptr, m.indices, coefs[m.data], m.shape) for m in unit]
        self.head = (h[0], h[1], h[2])
        self.unit = (u[0], u[1], u[2])
        self.names = names  # type: ignore[assignment]  # same `name(i)` interface
        self.setup_seconds: dict[str, float] = {}
        self._on_backend: dict[int, tuple[list[Any], list[tuple[Any, Any]]]] = {}
        self.hash = hash or replicated_hash(self)

    def __getattr__(self, name: str) -> Any:
        if name in ("A", "B", "C"):
            m = self._materialize("ABC".index(name))
            self.__dict__[name] = m
            return m
        raise AttributeError(name)

    # --- sizes ---------------------------------------------------------------------------
    @property
    def num_constraints(self) -> int:
        return self.layout.num_constraints

    def nnz(self, which: int) -> int:
        lay = self.layout
        extra = lay.num_inputs if which == 0 else 0  # the input rows: input i in A
        return self.head[which].nnz + lay.copies * self.unit[which].nnz + extra

    def stats(self) -> dict[str, Any]:
        n = max(1, self.num_constraints)
        na = max(1, self.num_aux)
        return {
            "constraints": self.num_constraints,
            "inputs": self.num_inputs,
            "aux": self.num_aux,
            "nnz_a": self.nnz(0) / n,
            "nnz_b": self.nnz(1) / n,
            "nnz_c": self.nnz(2) / n,
            "a_aux_density": float(self.a_aux_density.sum()) / na,
            "b_aux_density": float(self.b_aux_density.sum()) / na,
            "b_input_density": float(self.b_input_density.sum()) / max(1, self.num_inputs),
        }

    # --- per-copy matrices ----------------------------------------------------------------
    @cached_property
    def _local(self) -> tuple[_Local, _Local, _Local]:
        out = [self._localize(m, moving=True) for m in self.unit]
        return out[0], out[1], out[2]

    @cached_property
    def _head_local(self) -> tuple[_Local, _Local, _Local]:
        out = [self._localize(m, moving=False) for m in self.head]
        return out[0], out[1], out[2]

    def _localize(self, m: CsrMatrix, moving: bool) -> _Local:
        cols = np.unique(np.asarray(m.indices, dtype=np.int64))
        local = np.searchsorted(cols, m.indices).astype(np.int32)
        mat = CsrMatrix(m.indptr, local, m.data, (m.shape[0], int(cols.shape[0])))
        strides = self.layout.column_strides(cols) if moving else np.zeros_like(cols)
        return _Local(mat, cols, strides)

    def block_indices(self, which: int, k: int) -> np.ndarray:
        """Copy k's column indices of matrix `which` (0, 1, 2 for A, B, C), in full columns."""
        m = self.unit[which]
        idx = np.asarray(m.indices, dtype=np.int64)
        return (idx + k * self.layout.column_strides(idx)).astype(m.indices.dtype)

    def _materialize(self, which: int) -> CsrMatrix:
        lay = self.layout
        t0 = time.perf_counter()
        head, unit = self.head[which], self.unit[which]
        ni, rows = lay.num_inputs, lay.num_constraints
        loc = self._local[which]
        in_rows = ni if which == 0 else 0
        nnz = self.nnz(which)
        idx_dtype = np.int32 if self.num_columns < 2**31 else np.int64
        indptr = np.empty(rows + 1, dtype=np.int64)
        indices = np.empty(nnz, dtype=idx_dtype)
        data = np.empty((nnz, 4), dtype=np.uint64)
        r0, e0 = lay.shared_rows, head.nnz
        indptr[: r0 + 1] = head.indptr
        indices[:e0] = head.indices
        data[:e0] = head.data
        un = unit.nnz
        base_cols = loc.cols[loc.matrix.indices]
        strides = loc.strides[loc.matrix.indices]
        for k in range(lay.copies):
            r, e = r0 + k * lay.unit_rows, e0 + k * un
            indptr[r + 1 : r + lay.unit_rows + 1] = unit.indptr[1:] + e
            indices[e : e + un] = base_cols + k * strides
            data[e : e + un] = unit.data
        r, e = r0 + lay.copies * lay.unit_rows, e0 + lay.copies * un
        if in_rows:
            indptr[r + 1 :] = e + np.arange(1, ni + 1)
            indices[e:] = np.arange(ni)
            data[e:] = FR.one()
        else:
            indptr[r + 1 :] = e
        log.info("cuzk: built the full %s matrix (%d rows, %d nonzeros) in %.1f s",
                 "ABC"[which], rows, nnz, time.perf_counter() - t0)  # fmt: skip
        return CsrMatrix(indptr, indices, data, (rows, self.num_columns))

    # --- densities --------------------------------------------------------------------------
    def _used(self, which: int) -> np.ndarray:
        used = np.zeros(self.num_columns, dtype=np.bool_)
        used[self.head[which].indices] = True
        loc = self._local[which]
        for k in range(self.layout.copies):
            used[loc.cols + k * loc.strides] = True
        if which == 0:
            used[: self.num_inputs] = True
        return used

    @cached_property
    def _a_used(self) -> np.ndarray:
        return self._used(0)

    @cached_property
    def _b_used(self) -> np.ndarray:
        return self._used(1)

    # --- evaluation --------------------------------------------------------------------
    def _parts(self, wit: Witness) -> tuple[np.ndarray, np.ndarray]:
        """The witness's inputs and aux, checked as `Topology._vector` does, without joining them
        (at real size the joined vector would be another 4 GiB)."""
        if wit.inputs.shape != (self.num_inputs, 4) or wit.aux.shape != (self.num_aux, 4):
            raise CircuitError(
                f"witness has {wit.inputs.shape[0]} inputs and {wit.aux.shape[0]} aux values; "
                f"the circuit has {self.num_inputs} and {self.num_aux}"
            )
        if not np.array_equal(wit.inputs[0], FR.one()):
            raise UnsatisfiedError("input 0 of the witness is not ONE", constraint="ONE", index=None)
        return wit.inputs, wit.aux

    def evaluate(self, wit: Witness, backend: Backend) -> tuple[Any, Any, Any]:
        """(A.w, B.w, C.w) as backend arrays for a witness held as inputs and aux apart (never
        joined: at real size the joined vector is another 4 GiB); see `_products`."""
        inputs, aux = self._parts(wit)
        xp = backend.xp
        ni = self.layout.num_inputs
        d_in, d_aux = backend.to_device(np.ascontiguousarray(inputs)), backend.to_device(aux)

        def gather(cols: Any) -> Any:
            is_in = cols < ni
            w = xp.empty((cols.shape[0], 4), dtype=xp.uint64)
            w[is_in] = d_in[cols[is_in]]
            w[~is_in] = d_aux[cols[~is_in] - ni]
            return w

        return self._products(backend, gather, d_in)

    def evaluate_vector(self, w: Any, backend: Backend, rows: int | None = None) -> tuple[Any, Any, Any]:
        """(A.w, B.w, C.w) for the whole witness [inputs | aux] already on the backend (the
        engine's staged upload): each copy's columns are gathered from it there, so nothing
        crosses the bus but the first row's ONE check. `rows` (at least the constraints): the
        vectors' length, zero past the last constraint (the QAP domain's, see prover.evaluate)."""
        if tuple(w.shape) != (self.num_columns, 4):
            raise CircuitError(f"witness has {w.shape[0]} values; the circuit has {self.num_columns}")
        if not np.array_equal(backend.to_host(w[:1])[0], FR.one()):
            raise UnsatisfiedError("input 0 of the witness is not ONE", constraint="ONE", index=None)
        xp = backend.xp
        return self._products(
            backend, lambda cols: xp.take(w, cols, axis=0), w[: self.layout.num_inputs], whole=w, rows=rows
        )

    def _products(
        self,
        backend: Backend,
        gather: Callable[[Any], Any],
        d_in: Any,
        whole: Any | None = None,
        rows: int | None = None,
    ) -> tuple[Any, Any, Any]:
        """The products block by block on the backend: the head's columns (and, without the
        `whole` witness, each copy's: copy 0's plus k times their strides, computed there from
        index arrays uploaded once per backend) are gathered by `gather` and the one copy-sized
        matrix per A, B, C (cached by the backend) applied. With `whole`, the copies go through
        `Backend.spmv_copies`, which reads each copy's columns where they lie. No full matrix is
        built and nothing comes back to the host. The `xp` work runs in the backend's device
        region, so its arrays count in the backend's memory."""
        xp = backend.xp
        lay = self.layout
        n, r0 = lay.num_constraints, lay.shared_rows
        tail = r0 + lay.copies * lay.unit_rows
        if rows is not None and rows < n:
            raise ValueError(f"{rows} rows cannot hold {n} constraints")
        head, local = self._backend_cols(backend)
        out = []
        with backend.activate():
            for which in range(3):
                res = xp.empty((n if rows is None else rows, 4), dtype=xp.uint64)  # every row written below
                if r0:
                    res[:r0] = backend.spmv(self._head_local[which].matrix, gather(head[which]))
                cols, strides = local[which]
                mat = self._local[which].matrix
                if whole is not None:
                    backend.spmv_copies(mat, whole, cols, strides, lay.copies, res[r0:tail])
                else:
                    for k in range(lay.copies):
                        r = r0 + k * lay.unit_rows
                        res[r : r + lay.unit_rows] = backend.spmv(mat, gather(cols + k * strides))
                res[tail:n] = d_in if which == 0 else 0
                res[n:] = 0
                out.append(res)
        return out[0], out[1], out[2]

    def _backend_cols(self, backend: Backend) -> tuple[list[Any], list[tuple[Any, Any]]]:
        """The head's and copy 0's column indices and per-copy strides on `backend`, uploaded once
        (about 350 MB at porep-32g; keyed by the backend object, which lives as long as the process)."""
        key = id(backend)
        got = self._on_backend.get(key)
        if got is None:
            head = [backend.to_device(loc.cols) for loc in self._head_local]
            local = [(backend.to_device(loc.cols), backend.to_device(loc.strides)) for loc in self._local]
            got = self._on_backend[key] = (head, local)
        return got

    def evaluate_host(
        self, inputs: np.ndarray, aux: np.ndarray, backend: Backend
    ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """Host (rows, 4) arrays of A.w, B.w, C.w for the witness [inputs | aux]."""
        n = self.layout.num_constraints
        out = [np.zeros((n, 4), dtype=np.uint64) for _ in range(3)]
        for r, abc in self.blocks(inputs, aux, backend):
            for o, x in zip(out, abc, strict=True):
                o[r : r + x.shape[0]] = x
        return out[0], out[1], out[2]

    def blocks(
        self, inputs: np.ndarray, aux: np.ndarray, backend: Backend
    ) -> Iterator[tuple[int, tuple[np.ndarray, ...]]]:
        """(first row, (A.w, B.w, C.w) of its rows) for the head, each copy, then the input rows:
        the product a block at a time over the columns the block reads, gathered from the witness,
        so that a check holds one copy's rows and columns, not the partition's."""
        lay = self.layout
        ni = lay.num_inputs

        def product(loc: _Local, k: int) -> np.ndarray:
            cols = loc.cols + k * loc.strides
            w = np.empty((cols.shape[0], 4), dtype=np.uint64)
            is_in = cols < ni
            w[is_in] = inputs[cols[is_in]]
            w[~is_in] = aux[cols[~is_in] - ni]
            return backend.to_host(backend.spmv(loc.matrix, backend.to_device(w)))

        r0 = lay.shared_rows
        if r0:
            yield 0, tuple(product(loc, 0) for loc in self._head_local)
        for k in range(lay.copies):
            yield r0 + k * lay.unit_rows, tuple(product(loc, k) for loc in self._local)
        zero = np.zeros((ni, 4), dtype=np.uint64)
        yield r0 + lay.copies * lay.unit_rows, (np.ascontiguousarray(inputs), zero, zero)

    def check(self, wit: Witness, backend: Backend) -> None:
        """Raise UnsatisfiedError naming the first failing row; evaluated one block at a time."""
        for r, (a, b, c) in self.blocks(*self._parts(wit), backend=backend):
            bad = ~FR.eq(FR.mul(a, b), c)
            if bad.any():
                i = r + int(np.argmax(bad))
                name = self.constraint_name(i)
                raise UnsatisfiedError(
                    f"constraint {i} ({name}) is not satisfied ({int(bad.sum())} of {bad.size} rows of its block fail)",
                    constraint=name,
                    index=i,
                )


def replicated_hash(t: ReplicatedTopology) -> str:
    """blake2b over the layout and the head's and copy 0's matrices: the shape's identity.

    Not equal to `topology_hash` of the materialized matrices (that would hash ~26 GiB at real
    size); a replicated circuit is only ever recorded this way, so its identity is this one.
    """
    h = hashlib.blake2b(digest_size=32)
    h.update(b"replicated-v1")
    h.update(np.array(list(t.layout.as_json().values()), dtype="<i8").tobytes())
    h.update(np.ascontiguousarray(t.coefs, dtype="<u8").data)
    for m, codes in zip((*t.head, *t.unit), (*t.head_codes, *t.unit_codes), strict=True):
        h.update(np.array(m.shape, dtype="<i8").tobytes())
        h.update(np.ascontiguousarray(m.indptr, dtype="<i8").data)
        h.update(np.ascontiguousarray(m.indices, dtype="<i4").data)
        h.update(np.ascontiguousarray(codes, dtype="<i4").data)
    return h.hexdigest()


# --- recording ------------------------------------------------------------------------


@dataclass
class _Mark:
    inputs: int
    aux: int
    rows: int
    calls: int
    sources: dict[str, int] = field(default_factory=dict)


def mark(cs: Any) -> _Mark:
    """Where a recording system stands: its variable, row, call and source-reference counts."""
    return _Mark(cs.num_inputs, cs.num_aux, cs.num_rows(), len(cs._calls),
                 {k: len(v) for k, v in cs._sources.items()})  # fmt: skip


@dataclass
class _ProgramLog:
    """What `build_program` reads from a recording system, for the whole replicated circuit."""

    num_inputs: int
    num_aux: int
    _sources: dict[str, list[tuple[tuple[int, ...], int, int]]]
    _calls: list[tuple[str, np.ndarray, int, int]]


def replicate(
    cs: Any,
    m0: _Mark,
    m1: _Mark,
    copies: int,
    schema: Mapping[str, tuple[str, tuple[int, ...]]],
    prefix: str,
    position_stride: Callable[[str, Layout], int],
    say: Callable[[str], None] | None = None,
) -> tuple[ReplicatedTopology, WitnessProgram]:
    """Build the replicated topology and program from a system holding the head (up to m0) and
    copy 0 (m0..m1) and nothing after. `position_stride(name, layout)`: how far copy k's
    reference into instance[name] moves along its first axis per copy."""
    if cs.num_rows() != m1.rows or cs.num_inputs != m1.inputs or cs.num_aux != m1.aux:
        raise CircuitError("internal: a replicated circuit wrote after its copy 0")
    lay = Layout(
        copies=copies,
        shared_inputs=m0.inputs,
        unit_inputs=m1.inputs - m0.inputs,
        shared_aux=m0.aux,
        unit_aux=m1.aux - m0.aux,
        shared_rows=m0.rows,
        unit_rows=m1.rows - m0.rows,
    )
    say = say or (lambda s: log.info("cuzk: %s", s))
    t0 = time.perf_counter()
    ni, ncols = lay.num_inputs, lay.num_inputs + lay.num_aux
    mats, row_ns, row_tmpl, row_local = cs._gather()
    from cuzk.r1cs.system import _coef_table

    # The distinct coefficients (interned ids, a few hundred) and each id's code: a table, not a sort.
    seen = np.zeros(max((int(m[1].max(initial=-1)) for m in mats), default=-1) + 1, dtype=np.bool_)
    for m in mats:
        seen[m[1]] = True
    used = np.flatnonzero(seen)
    code_of = np.zeros(seen.shape[0], dtype=np.int32)
    code_of[used] = np.arange(used.shape[0], dtype=np.int32)
    coefs = _coef_table()[used]
    head, unit = [], []
    for cols, cids, lens in mats:
        indptr = np.zeros(m1.rows + 1, dtype=np.int64)
        np.cumsum(lens, out=indptr[1:])
        col = np.where(cols < 0, -1 - cols, cols + ni).astype(np.int32 if ncols < 2**31 else np.int64)
        codes = code_of[cids]
        full = CsrMatrix(indptr=indptr, indices=col, data=codes, shape=(m1.rows, ncols))
        head.append(_rows(full, 0, m0.rows, ncols))
        unit.append(_rows(full, m0.rows, m1.rows, ncols))

    def names(lo: int, hi: int) -> ConstraintNames:
        return ConstraintNames(
            ns_paths=list(cs._ns_paths),
            direct_names=list(cs._names),
            template_names=[t.names for t in cs._tmpl_list],
            row_ns=row_ns[lo:hi],
            row_tmpl=row_tmpl[lo:hi],
            row_local=row_local[lo:hi],
        )

    rnames = ReplicatedNames(names(0, m0.rows), names(m0.rows, m1.rows), lay, prefix)
    topo = ReplicatedTopology(lay, coefs, (head[0], head[1], head[2]), (unit[0], unit[1], unit[2]), rnames)
    topo.setup_seconds["matrices"] = time.perf_counter() - t0
    say(f"matrices of the head and one copy ({m1.rows:,} rows) in {topo.setup_seconds['matrices']:.1f} s")

    t1 = time.perf_counter()
    plog, sources = _replicated_log(cs, m0, lay, schema, position_stride)
    program = build_program(plog, schema, sources)
    topo.setup_seconds["program"] = time.perf_counter() - t1
    say(f"witness program for {copies} copies ({len(program.groups)} call groups) in "
        f"{topo.setup_seconds['program']:.1f} s")  # fmt: skip
    return topo, program


def _replicated_log(
    cs: Any,
    m0: _Mark,
    lay: Layout,
    schema: Mapping[str, tuple[str, tuple[int, ...]]],
    position_stride: Callable[[str, Layout], int],
) -> tuple[_ProgramLog, list[Source]]:
    """The whole circuit's calls (copy 0's repeated with moved variables) and its sources
    (instance columns), built per copy with array arithmetic, not per reference."""
    ni = lay.num_inputs

    def col(v: np.ndarray) -> np.ndarray:
        return np.where(v < 0, -1 - v, v + ni)

    sources = []
    for name, refs in cs._sources.items():
        if name not in schema:
            raise CircuitError(f"the circuit reads instance[{name!r}] but its schema does not declare it")
        kind, shape = schema[name]
        cols = np.full(int(np.prod(shape)), -1, dtype=np.int64)
        strides = np.array([int(np.prod(shape[i + 1 :])) for i in range(len(shape))], dtype=np.int64)
        n0 = m0.sources.get(name, 0)
        for part, copies in ((refs[:n0], 1), (refs[n0:], lay.copies)):
            if not part:
                continue
            flat, var = [], []
            for pos, v, count in part:
                want = int(np.prod(shape[len(pos) :])) if kind == "bits" else 1
                if count != want:
                    raise CircuitError(
                        f"instance[{name!r}][{pos}] is read as {count} values, its shape gives {want}"
                    )
                at = int(np.dot(pos, strides[: len(pos)])) if pos else 0
                flat.append(np.arange(at, at + count, dtype=np.int64))
                var.append(
                    np.arange(v, v + count, dtype=np.int64) if v >= 0 else np.array([v], dtype=np.int64)
                )
            f0, c0 = np.concatenate(flat), col(np.concatenate(var))
            step = position_stride(name, lay) * (int(strides[0]) if shape else 0)
            cstride = lay.column_strides(c0)
            for k in range(copies):
                cols[f0 + k * step] = c0 + k * cstride
        sources.append(Source(name=name, kind=kind, cols=cols.reshape(shape)))
    calls = list(cs._calls[: m0.calls])
    for k in range(lay.copies):
        for tkey, ports, base, n in cs._calls[m0.calls :]:
            calls.append((tkey, lay.var_map(ports, k), base + k * lay.unit_aux, n))
    return _ProgramLog(lay.num_inputs, lay.num_aux, {}, calls), sources
