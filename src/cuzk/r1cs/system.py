"""The bellman-style ConstraintSystem: alloc, alloc_input, enforce, namespace.

One class, two modes:

- ``ConstraintSystem()`` (values=True): the direct path. Every alloc carries a
  concrete value (lanes = 1: a value is an array with one row), gadget bodies
  run inline, and `finish()` returns the matrices and the witness.
- ``ConstraintSystem(values=False)``: recording. No values; gadget calls are
  stamped from templates and logged, and aux variables allocated outside a
  gadget must come from the instance (a `SourceRef`), so that `finish()` can
  return a witness program that fills every aux slot without running the
  circuit again.

Rows are appended to array buffers (direct enforce) or as numpy chunks
(stamped templates), never kept as Python objects, so a 13M-row circuit fits.
"""

from __future__ import annotations

from array import array
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any, NamedTuple

import numpy as np

from cuzk.algebra.constants import R
from cuzk.algebra.fields import FR
from cuzk.backends.base import CsrMatrix
from cuzk.errors import CircuitError
from cuzk.r1cs.gadget import PORT, flatten, map_vars, template_key, unflatten_vars
from cuzk.r1cs.lc import ONE, input_var
from cuzk.r1cs.topology import ConstraintNames, Topology, Witness


class SourceRef(NamedTuple):
    """A value that the instance provides: ``instance[name][position]`` (a field element or a bit row)."""

    name: str
    position: tuple[int, ...]  # not `index`: a field of that name would hide tuple.index


# --- coefficient interning (shared by all systems in the process) ---------------------

_COEF_ID: dict[int, int] = {}
_COEFS: list[int] = []


def _intern(k: int) -> int:
    i = _COEF_ID.get(k)
    if i is None:
        i = len(_COEFS)
        _COEF_ID[k] = i
        _COEFS.append(k)
    return i


_MONT_TABLE: list[np.ndarray] = [np.zeros((0, 4), dtype=np.uint64)]


def _coef_table() -> np.ndarray:
    """Montgomery forms of every interned coefficient, index = coefficient id."""
    have = _MONT_TABLE[0].shape[0]
    if have < len(_COEFS):
        _MONT_TABLE[0] = np.concatenate([_MONT_TABLE[0], FR.from_ints(_COEFS[have:])])
    return _MONT_TABLE[0]


# --- templates ---------------------------------------------------------------------------


@dataclass
class _Mat:
    """One matrix of a template: local columns (ONE = -1, aux k = k, port k = PORT + k)."""

    cols: np.ndarray  # int64
    cids: np.ndarray  # int32 coefficient ids
    lens: np.ndarray  # int32 entries per row
    aux_mask: np.ndarray
    port_mask: np.ndarray
    port_idx: np.ndarray


@dataclass
class Template:
    """The recorded rows of one gadget shape, ready to be stamped with new columns."""

    key: str
    n_aux: int
    n_ports: int
    n_rows: int
    mats: tuple[_Mat, _Mat, _Mat]
    names: list[str]
    row_name: np.ndarray  # int32 index into names
    outputs: Any


TEMPLATES: dict[str, Template] = {}


def _join(*parts: str) -> str:
    return "/".join(p for p in parts if p)


# --- the constraint system ----------------------------------------------------------------


class ConstraintSystem:
    """bellman's ConstraintSystem: see the module docstring for the two modes."""

    constraints = True

    def __init__(self, values: bool = True, *, _scratch: bool = False) -> None:
        self.values = values
        self.lanes = 1 if values else 0
        self._scratch = _scratch
        self._record = not values and not _scratch
        self.num_inputs = 1  # ONE
        self.num_aux = 0
        self._depth = 0
        self._ns_stack: list[str] = []
        self._ns_index: dict[str, int] = {"": 0}
        self._ns_paths: list[str] = [""]
        self._ns_cur = 0
        self._name_index: dict[str, int] = {"": 0}
        self._names: list[str] = [""]
        self._pend = [(array("q"), array("i"), array("i")) for _ in range(3)]
        self._pend_ns = array("i")
        self._pend_local = array("i")
        self._chunks: list[
            tuple[list[tuple[np.ndarray, np.ndarray, np.ndarray]], np.ndarray, np.ndarray, np.ndarray]
        ] = []
        self._tmpl_ids: dict[str, int] = {}
        self._tmpl_list: list[Template] = []
        self._input_vals: list[np.ndarray] = [FR.one()[None]]
        self._aux_blocks: list[tuple[int, bool, np.ndarray]] = []
        self._sources: dict[str, list[tuple[tuple[int, ...], int, int]]] = {}
        self._calls: list[tuple[str, np.ndarray, int, int]] = []

    # --- namespaces ------------------------------------------------------------------
    @contextmanager
    def namespace(self, name: str) -> Iterator[ConstraintSystem]:
        """Constraints enforced inside are named ``outer/name/...`` in errors."""
        prev = self._ns_cur
        self._ns_stack.append(str(name))
        path = "/".join(self._ns_stack)
        i = self._ns_index.get(path)
        if i is None:
            i = self._ns_index[path] = len(self._ns_paths)
            self._ns_paths.append(path)
        self._ns_cur = i
        try:
            yield self
        finally:
            self._ns_stack.pop()
            self._ns_cur = prev

    # --- values --------------------------------------------------------------------------
    def _field_value(self, value: Any) -> np.ndarray:
        if callable(value):
            value = value()
        if isinstance(value, (int, np.integer)):
            return FR.from_ints([int(value) % R])
        arr = np.asarray(value, dtype=np.uint64)
        if arr.shape == (4,):
            arr = arr[None]
        if arr.shape != (1, 4):
            raise CircuitError(f"a field value must be an int or one Fr row (1, 4); got shape {arr.shape}")
        return arr

    def _check_source(self, value: Any, what: str) -> None:
        if self._scratch and value is not None:
            raise CircuitError(f"a gadget body cannot take {what} values from the instance")
        if self._record and self._depth == 0 and not isinstance(value, SourceRef):
            raise CircuitError(
                f"{what} allocated at circuit level must come from the instance (a SourceRef); "
                "otherwise the witness program could not fill it: compute it inside a gadget"
            )

    def _note_source(self, ref: SourceRef, var: int, count: int) -> None:
        self._sources.setdefault(ref.name, []).append((tuple(ref.position), var, count))

    # --- allocation ----------------------------------------------------------------------
    def alloc(self, value: Any = None, name: str = "") -> int:
        """A new aux variable; its value (direct mode) is an int, one Fr row, or a callable giving one."""
        v = self.num_aux
        self.num_aux += 1
        if self.values:
            self._aux_blocks.append((v, False, self._field_value(value)[:, None, :]))
        else:
            self._check_source(value, "an aux variable")
            if isinstance(value, SourceRef):
                self._note_source(value, v, 1)
        return v

    def alloc_input(self, value: Any = None, name: str = "") -> int:
        """A new public input (ONE is input 0)."""
        if self._scratch or self._depth > 0:
            raise CircuitError("public inputs can only be allocated at circuit level, not inside a gadget")
        v = input_var(self.num_inputs)
        self.num_inputs += 1
        if self.values:
            self._input_vals.append(self._field_value(value))
        else:
            self._check_source(value, "a public input")
            self._note_source(value, v, 1)
        return v

    def alloc_many(self, count: int, values: np.ndarray | None = None) -> list[int]:
        """count aux field variables at once; values (lanes, count, 4) Montgomery form."""
        start = self.num_aux
        self.num_aux += count
        if self.values:
            vals = np.asarray(values, dtype=np.uint64)
            if vals.shape != (1, count, 4):
                raise CircuitError(
                    f"alloc_many({count}) needs values of shape (1, {count}, 4); got {vals.shape}"
                )
            self._aux_blocks.append((start, False, vals))
        else:
            self._check_source(values, "aux variables")
        return list(range(start, start + count))

    def alloc_bits(self, count: int, values: Any = None) -> list[int]:
        """count aux variables meant to hold bits (the caller enforces booleanity); values (lanes, count) 0/1."""
        start = self.num_aux
        self.num_aux += count
        if self.values:
            vals = np.asarray(values, dtype=np.uint8)
            if vals.shape != (1, count):
                raise CircuitError(
                    f"alloc_bits({count}) needs values of shape (1, {count}); got {vals.shape}"
                )
            self._aux_blocks.append((start, True, vals))
        else:
            self._check_source(values, "bit variables")
            if isinstance(values, SourceRef):
                self._note_source(values, start, count)
        return list(range(start, start + count))

    # --- constraints ---------------------------------------------------------------------
    def enforce(
        self,
        a: Mapping[int, int] | int,
        b: Mapping[int, int] | int,
        c: Mapping[int, int] | int,
        name: str = "",
    ) -> None:
        """Require <a, w> * <b, w> = <c, w>; name (with the namespace path) identifies it in errors."""
        intern = _COEF_ID.get
        for lc, (cols, ids, lens) in zip((a, b, c), self._pend, strict=True):
            if isinstance(lc, int):
                lc = {lc: 1}
            n0 = len(cols)
            for v, k in lc.items():
                k %= R
                if k:
                    cols.append(v)
                    i = intern(k)
                    ids.append(_intern(k) if i is None else i)
            lens.append(len(cols) - n0)
        self._pend_ns.append(self._ns_cur)
        nid = self._name_index.get(name)
        if nid is None:
            nid = self._name_index[name] = len(self._names)
            self._names.append(name)
        self._pend_local.append(nid)

    def _flush(self) -> None:
        if not len(self._pend_ns):
            return
        mats = [
            (
                np.frombuffer(cols, dtype=np.int64).copy(),
                np.frombuffer(ids, dtype=np.int32).copy(),
                np.frombuffer(lens, dtype=np.int32).copy(),
            )
            for cols, ids, lens in self._pend
        ]
        rows = len(self._pend_ns)
        self._chunks.append(
            (
                mats,
                np.frombuffer(self._pend_ns, dtype=np.int32).copy(),
                np.full(rows, -1, dtype=np.int32),
                np.frombuffer(self._pend_local, dtype=np.int32).copy(),
            )
        )
        self._pend = [(array("q"), array("i"), array("i")) for _ in range(3)]
        self._pend_ns = array("i")
        self._pend_local = array("i")

    def num_rows(self) -> int:
        """Rows enforced so far (the input rows `finish` appends are not counted)."""
        return sum(int(ch[1].shape[0]) for ch in self._chunks) + len(self._pend_ns)

    # --- gadget calls --------------------------------------------------------------------
    def call_gadget(
        self, key: str, fn: Callable[..., Any], args: tuple[Any, ...], params: dict[str, Any]
    ) -> Any:
        if self.values:
            return fn(self, *args, **params)
        sig, ports = flatten(args)
        tkey = template_key(key, params, sig)
        parr = np.asarray(ports, dtype=np.int64)
        base = self.num_aux
        if parr.size == np.unique(parr).size and not (parr == ONE).any():
            t = TEMPLATES.get(tkey)
            if t is None:
                t = TEMPLATES[tkey] = _build_template(tkey, fn, sig, params, len(ports))
            out = self._stamp(t, parr)
        else:  # a variable passed twice (or ONE): stamping would leave duplicate columns; run inline
            self._depth += 1
            try:
                out = fn(self, *args, **params)
            finally:
                self._depth -= 1
        if self._record and self._depth == 0:
            self._calls.append((tkey, parr, base, self.num_aux - base))
        return out

    def _stamp(self, t: Template, ports: np.ndarray) -> Any:
        self._flush()
        base = self.num_aux
        self.num_aux += t.n_aux
        mats = []
        for m in t.mats:
            cols = m.cols.copy()
            cols[m.aux_mask] += base
            cols[m.port_mask] = ports[m.port_idx]
            mats.append((cols, m.cids, m.lens))
        tid = self._tmpl_ids.get(t.key)
        if tid is None:
            tid = self._tmpl_ids[t.key] = len(self._tmpl_list)
            self._tmpl_list.append(t)
        self._chunks.append(
            (
                mats,
                np.full(t.n_rows, self._ns_cur, dtype=np.int32),
                np.full(t.n_rows, tid, dtype=np.int32),
                t.row_name,
            )
        )

        def remap(v: int) -> int:
            if v >= PORT:
                return int(ports[v - PORT])
            return v + base if v >= 0 else v

        return map_vars(t.outputs, remap)

    # --- results -------------------------------------------------------------------------
    def _gather(self) -> tuple[list[tuple[np.ndarray, ...]], np.ndarray, np.ndarray, np.ndarray]:
        """Per matrix A, B, C its (columns, coefficient ids, lengths); then per row ns, template, local."""
        self._flush()
        mats = []
        for k in range(3):
            parts = [ch[0][k] for ch in self._chunks]
            mats.append(
                tuple(np.concatenate([p[j] for p in parts]) if parts else _empty(j) for j in range(3))
            )
        row_ns = np.concatenate([ch[1] for ch in self._chunks]) if self._chunks else np.zeros(0, np.int32)
        row_tmpl = np.concatenate([ch[2] for ch in self._chunks]) if self._chunks else np.zeros(0, np.int32)
        row_local = np.concatenate([ch[3] for ch in self._chunks]) if self._chunks else np.zeros(0, np.int32)
        return mats, row_ns, row_tmpl, row_local

    def finish(self, schema: Mapping[str, tuple[str, tuple[int, ...]]] | None = None) -> Recording:
        """Close the system: append the input constraints and build the matrices (and witness/program)."""
        if self._scratch:
            raise CircuitError("a template's scratch system is not finished this way")
        prev, self._ns_cur = self._ns_cur, 0
        for i in range(self.num_inputs):
            self.enforce({input_var(i): 1}, {}, {}, name=f"input {i} * 0 = 0")
        self._ns_cur = prev
        mats, row_ns, row_tmpl, row_local = self._gather()
        ni, na = self.num_inputs, self.num_aux
        table = _coef_table()
        csr = []
        rows = row_ns.shape[0]
        for cols, cids, lens in mats:
            if cols.size and cols.max(initial=-1) >= PORT:
                raise CircuitError("internal: a template port leaked into the matrices")
            indptr = np.zeros(rows + 1, dtype=np.int64)
            np.cumsum(lens, out=indptr[1:])
            col = np.where(cols < 0, -1 - cols, cols + ni).astype(np.int32)
            csr.append(CsrMatrix(indptr=indptr, indices=col, data=table[cids], shape=(rows, ni + na)))
        names = ConstraintNames(
            ns_paths=list(self._ns_paths),
            direct_names=list(self._names),
            template_names=[t.names for t in self._tmpl_list],
            row_ns=row_ns,
            row_tmpl=row_tmpl,
            row_local=row_local,
        )
        topo = Topology(num_inputs=ni, num_aux=na, A=csr[0], B=csr[1], C=csr[2], names=names)
        witness = self._witness() if self.values else None
        program = None
        if self._record:
            from cuzk.r1cs.program import build_program

            program = build_program(self, schema or {})
        return Recording(topology=topo, program=program, witness=witness)

    def _witness(self) -> Witness:
        inputs = np.concatenate(self._input_vals)
        aux = np.zeros((self.num_aux, 4), dtype=np.uint64)
        one = FR.one()
        for start, is_bits, vals in self._aux_blocks:
            k = vals.shape[1]
            if is_bits:
                aux[start : start + k] = np.where(vals[0][:, None] != 0, one[None], 0)
            else:
                aux[start : start + k] = vals[0]
        return Witness(inputs=inputs, aux=aux)

    def column(self, var: int) -> int:
        """The matrix column of a variable (valid once all inputs are allocated)."""
        return -1 - var if var < 0 else var + self.num_inputs


def _empty(j: int) -> np.ndarray:
    return np.zeros(0, dtype=np.int64 if j == 0 else np.int32)


@dataclass
class Recording:
    """What `ConstraintSystem.finish` returns: the topology, plus the witness program or the witness."""

    topology: Topology
    program: Any = None  # cuzk.r1cs.program.WitnessProgram when recording
    witness: Witness | None = None  # when values were given


def _build_template(
    tkey: str, fn: Callable[..., Any], sig: Any, params: dict[str, Any], n_ports: int
) -> Template:
    """Run a gadget body once on placeholder ports and keep its rows."""
    scratch = ConstraintSystem(values=False, _scratch=True)
    args = unflatten_vars(sig, [PORT + k for k in range(n_ports)])
    outputs = fn(scratch, *args, **params)
    mats, row_ns, row_tmpl, row_local = scratch._gather()
    built = []
    for cols, cids, lens in mats:
        stray = (cols < ONE) | ((cols >= scratch.num_aux) & (cols < PORT))
        if stray.any():
            raise CircuitError(f"gadget {tkey[:80]} uses a variable that was not passed to it as an argument")
        port_mask = cols >= PORT
        built.append(
            _Mat(
                cols=cols,
                cids=cids,
                lens=lens,
                aux_mask=(cols >= 0) & ~port_mask,
                port_mask=port_mask,
                port_idx=cols[port_mask] - PORT,
            )
        )
    # Resolve each row's name relative to the gadget, once per distinct (namespace, template, local).
    keys = np.stack([row_ns, row_tmpl, row_local], axis=1) if row_ns.size else np.zeros((0, 3), np.int32)
    uniq, inverse = np.unique(keys, axis=0, return_inverse=True)
    names = []
    for ns, t, loc in uniq.tolist():
        local = scratch._names[loc] if t < 0 else scratch._tmpl_list[t].names[loc]
        names.append(_join(scratch._ns_paths[ns], local))
    return Template(
        key=tkey,
        n_aux=scratch.num_aux,
        n_ports=n_ports,
        n_rows=int(row_ns.shape[0]),
        mats=(built[0], built[1], built[2]),
        names=names,
        row_name=inverse.reshape(-1).astype(np.int32),
        outputs=outputs,
    )
