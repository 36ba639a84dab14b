"""The witness program: how a recorded circuit fills its witness vector per proof.

It has two kinds of ops, executed in order, with no Python loop per constraint:

- *sources*: instance arrays copied into their columns in one fancy-index each
  (public inputs, leaves, siblings, ...);
- *call groups*: all top-level gadget calls of one template at one dependency
  level. Their port values are gathered from the vector, the gadget body runs
  once in `WitnessCS` with the calls as lanes (numpy / numba over the lanes),
  and the values it allocates are scattered into each call's aux range.

A call's level is one more than the deepest call that produced one of its
ports, so every group only reads columns already written.
"""

from __future__ import annotations

import contextlib
import importlib
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any

import numpy as np
from numba import njit

from cuzk.algebra.constants import R
from cuzk.algebra.fields import FR, int_to_limbs
from cuzk.errors import CircuitError
from cuzk.r1cs.gadget import GADGETS, parse_template_key, unflatten_values
from cuzk.r1cs.topology import Witness

_R_LIMBS = int_to_limbs(R, 4)


def _bit_table() -> np.ndarray:
    t = np.zeros((2, 4), dtype=np.uint64)
    t[1] = FR.one()
    return t


BIT_TABLE = _bit_table()


class WitnessCS:
    """A constraint system that only computes values, for `lanes` calls at once.

    Gadgets see `constraints = False` and skip building linear combinations;
    allocations return None and record value blocks in order.
    """

    constraints = False
    values = True

    def __init__(self, lanes: int) -> None:
        self.lanes = lanes
        self.num_aux = 0
        self.bit_blocks: list[tuple[int, np.ndarray]] = []  # (offset, (lanes, k) uint8)
        self.field_blocks: list[tuple[int, np.ndarray]] = []  # (offset, (lanes, k, 4) uint64)

    @contextmanager
    def namespace(self, name: str) -> Iterator[WitnessCS]:
        yield self

    def alloc(self, value: Any = None, name: str = "") -> None:
        self.field_blocks.append((self.num_aux, np.asarray(value, dtype=np.uint64).reshape(self.lanes, 1, 4)))
        self.num_aux += 1

    def alloc_many(self, count: int, values: np.ndarray | None = None) -> None:
        self.field_blocks.append(
            (self.num_aux, np.asarray(values, dtype=np.uint64).reshape(self.lanes, count, 4))
        )
        self.num_aux += count

    def alloc_bits(self, count: int, values: Any = None) -> None:
        self.bit_blocks.append((self.num_aux, np.asarray(values, dtype=np.uint8).reshape(self.lanes, count)))
        self.num_aux += count

    def alloc_input(self, value: Any = None, name: str = "") -> None:
        raise CircuitError("public inputs cannot be allocated inside a gadget")

    def enforce(self, a: Any, b: Any, c: Any, name: str = "") -> None:
        return None

    def call_gadget(self, key: str, fn: Any, args: tuple[Any, ...], params: dict[str, Any]) -> Any:
        return fn(self, *args, **params)

    def blocks(self) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
        """(bit offsets, bit values (lanes, nb), field offsets, field values (lanes, nf, 4))."""
        lanes = self.lanes
        if self.bit_blocks:
            boff = np.concatenate([np.arange(o, o + v.shape[1]) for o, v in self.bit_blocks])
            bval = np.concatenate([v for _, v in self.bit_blocks], axis=1)
        else:
            boff, bval = np.zeros(0, np.int64), np.zeros((lanes, 0), np.uint8)
        if self.field_blocks:
            foff = np.concatenate([np.arange(o, o + v.shape[1]) for o, v in self.field_blocks])
            fval = np.concatenate([v for _, v in self.field_blocks], axis=1)
        else:
            foff, fval = np.zeros(0, np.int64), np.zeros((lanes, 0, 4), np.uint64)
        return boff, bval, foff, fval


@dataclass
class Source:
    """instance[name] goes to columns `cols` (same shape, without the trailing limb axis)."""

    name: str
    kind: str  # "bits" or "field"
    cols: np.ndarray  # int64 column indices


@dataclass
class CallGroup:
    template: int  # index into WitnessProgram.templates
    level: int
    n_aux: int
    ports: np.ndarray  # (lanes, n_ports) int64 columns
    bases: np.ndarray  # (lanes,) int64 first aux index of each call


@dataclass
class WitnessProgram:
    num_inputs: int
    num_aux: int
    templates: list[str]
    sources: list[Source]
    groups: list[CallGroup]
    _parsed: dict[int, tuple[Any, dict[str, Any], Any]] = field(default_factory=dict, repr=False)
    _held: dict[int, int] = field(default_factory=dict, repr=False, compare=False)  # lane bytes by template

    def schema(self) -> dict[str, tuple[str, tuple[int, ...]]]:
        return {s.name: (s.kind, tuple(s.cols.shape)) for s in self.sources}

    def _template(self, i: int) -> tuple[Any, dict[str, Any], Any]:
        t = self._parsed.get(i)
        if t is None:
            key, params, sig = parse_template_key(self.templates[i])
            fn = GADGETS.get(key)
            if fn is None and "." in key:  # a fresh process (a worker) may not have imported it yet
                with contextlib.suppress(ImportError):
                    importlib.import_module("cuzk." + key.rsplit(".", 1)[0])
                fn = GADGETS.get(key)
            if fn is None:
                raise CircuitError(f"the witness program needs gadget {key!r}, which is not registered")
            t = self._parsed[i] = (fn, params, sig)
        return t

    def run(self, instance: Mapping[str, np.ndarray], *, out: np.ndarray | None = None) -> Witness:
        """The witness of an instance: sources copied, then every call group executed in level order.

        `out`: a zero-filled (num_inputs + num_aux, 4) uint64 array to fill in place (the synthesis
        worker's shared-memory block, which the OS zero-fills), so that no copy follows; the
        result's inputs and aux are then views of it.
        """
        ni = self.num_inputs
        shape = (ni + self.num_aux, 4)
        if out is None:
            w = np.zeros(shape, dtype=np.uint64)
        elif out.shape != shape or out.dtype != np.uint64 or not out.flags.c_contiguous:
            raise CircuitError(
                f"the witness goes into a contiguous uint64 {shape} array, not {out.dtype} {out.shape}"
            )
        else:
            w = out
        w[0] = FR.one()
        for s in self.sources:
            _fill_source(w, s, instance)
        for g in self.groups:
            lanes = g.bases.shape[0]
            # Lanes in slices of at most ~LANE_BYTES of values: a real-size group (23,490 WindowPoSt
            # paths, 198 labelling hashes) would otherwise hold all its values, and their joined copy,
            # at once. Calls of one group never read each other's values, so slicing changes nothing.
            # A template's first slice assumes 32 bytes per value; later ones are sized by what a
            # lane of it held (a bit is one byte), so a porep-32g SHA-256 group's 18 lanes run in
            # one gadget pass instead of 16 + 2: each pass's cost is mostly per-operation Python,
            # whatever its lanes (the witness 8.5 -> ~5 s, 2026-12-06).
            least = max(1, LANE_BYTES // max(1, 32 * g.n_aux))  # never fewer lanes than this
            lo = 0
            while lo < lanes:
                held = self._held.get(g.template)
                step = least if held is None else max(least, LANE_BYTES // max(1, HELD_FACTOR * held))
                hi = min(lanes, lo + step)
                self._held[g.template] = max(held or 0, self._run_calls(w, g, lo, hi))
                lo = hi
        return Witness(inputs=w[:ni] if out is not None else w[:ni].copy(), aux=w[ni:])

    def _run_calls(self, w: np.ndarray, g: CallGroup, lo: int, hi: int) -> int:
        """Calls lo..hi of group g as lanes of one run of the gadget body; values scattered into w.
        Returns the bytes of values one lane held."""
        ni = self.num_inputs
        fn, params, sig = self._template(g.template)
        args = unflatten_values(sig, w[g.ports[lo:hi]])
        cs = WitnessCS(hi - lo)
        fn(cs, *args, **params)
        if cs.num_aux != g.n_aux:
            raise CircuitError(
                f"gadget {self.templates[g.template][:80]} filled {cs.num_aux} aux values in witness mode "
                f"but recorded {g.n_aux}: its body is not deterministic in shape"
            )
        boff, bval, foff, fval = cs.blocks()
        first = g.bases[lo:hi] + ni
        if boff.size:
            bad = _scatter_bits(w, first.astype(np.int64), boff.astype(np.int64), bval, BIT_TABLE[1])
            if bad:
                raise CircuitError(
                    f"gadget {self.templates[g.template][:80]} produced a bit value other than 0 and 1 "
                    f"(lane {lo + (bad - 1) // bval.shape[1]})"
                )
        if foff.size:
            w[first[:, None] + foff[None, :]] = fval
        return (bval.nbytes + fval.nbytes) // max(1, hi - lo)


#: The most value bytes (32 per aux value) one slice of a call group's lanes computes at once.
LANE_BYTES = 1 << 28
#: What the slice sizing counts per byte of values a lane returned (a gadget pass's temporaries).
#: porep-32g's witness, 2026-12-06: at 8 its merkle-root groups run in one pass and the witness
#: peaks 0.17 GiB above its output (under LANE_BYTES); 4.8-5.1 s against 5.6-5.8 s at 16.
HELD_FACTOR = 8


@njit(cache=True)
def _scatter_bits(w, first, boff, bval, one):
    """w[first[i] + boff[j]] = the Fr bit bval[i, j]: what `w[idx] = BIT_TABLE[bval]` did, without the
    (lanes, k, 4) temporary or fancy indexing (porep-13m: 13M bits, 0.53 s that way on 2 cores).
    Returns 1 + the flat index of a value other than 0 and 1, else 0."""
    zero = np.zeros_like(one)  # (one[limb] if v else 0 would unify uint64 and int64 to float64)
    k = bval.shape[1]
    for i in range(bval.shape[0]):
        base = first[i]
        for j in range(k):
            v = bval[i, j]
            if v > 1:
                return i * k + j + 1
            row = base + boff[j]
            src = one if v else zero
            for limb in range(4):
                w[row, limb] = src[limb]
    return 0


def _fill_source(w: np.ndarray, s: Source, instance: Mapping[str, np.ndarray]) -> None:
    if s.name not in instance:
        raise CircuitError(f"the instance has no {s.name!r} array")
    v = np.asarray(instance[s.name])
    if s.kind == "bits":
        if v.shape != s.cols.shape or v.dtype != np.uint8:
            raise CircuitError(
                f"instance[{s.name!r}] must be uint8 bits of shape {s.cols.shape}; got {v.dtype} {v.shape}"
            )
        if v.size and v.max() > 1:
            raise CircuitError(f"instance[{s.name!r}] holds a value other than 0 and 1")
        w[s.cols.reshape(-1)] = BIT_TABLE[v.reshape(-1)]
    else:
        if v.shape != (*s.cols.shape, 4) or v.dtype != np.uint64:
            raise CircuitError(
                f"instance[{s.name!r}] must be Fr (Montgomery) uint64 of shape {(*s.cols.shape, 4)}; got {v.dtype} {v.shape}"
            )
        flat = v.reshape(-1, 4)
        if not _all_below_r(flat):
            raise CircuitError(f"instance[{s.name!r}] holds a value that is not below the modulus r")
        w[s.cols.reshape(-1)] = flat


def _all_below_r(rows: np.ndarray) -> bool:
    lt = np.zeros(rows.shape[0], dtype=bool)
    eq = np.ones(rows.shape[0], dtype=bool)
    for k in range(3, -1, -1):
        lt |= eq & (rows[:, k] < _R_LIMBS[k])
        eq &= rows[:, k] == _R_LIMBS[k]
    return bool(lt.all())


def build_program(
    cs: Any, schema: Mapping[str, tuple[str, tuple[int, ...]]], sources: list[Source] | None = None
) -> WitnessProgram:
    """Turn a recording system's logged sources and calls into a WitnessProgram.

    `sources`: the instance arrays' columns, already built (a replicated recording builds them
    vectorized); otherwise they come from the system's logged references.
    """
    ni = cs.num_inputs

    def col(v: np.ndarray) -> np.ndarray:
        return np.where(v < 0, -1 - v, v + ni)

    if sources is None:
        sources = _sources_from_log(cs, schema, col)
    else:
        for s in sources:
            if (s.cols < 0).any():
                missing = np.argwhere(s.cols < 0)[0]
                raise CircuitError(
                    f"instance[{s.name!r}] at {tuple(missing.tolist())} is never read by the circuit"
                )
    read = {s.name for s in sources}
    for name in schema:
        if name not in read:
            raise CircuitError(f"the schema declares instance[{name!r}] but the circuit never reads it")
    return _program(cs, ni, sources, col)


def _sources_from_log(cs: Any, schema: Mapping[str, tuple[str, tuple[int, ...]]], col: Any) -> list[Source]:
    """One column array per instance array, fully covered, from the logged references."""
    sources = []
    for name, refs in cs._sources.items():
        if name not in schema:
            raise CircuitError(f"the circuit reads instance[{name!r}] but its schema does not declare it")
        kind, shape = schema[name]
        cols = np.full(shape, -1, dtype=np.int64)
        for index, var, count in refs:
            want = int(np.prod(shape[len(index) :])) if kind == "bits" else 1
            if count != want:
                raise CircuitError(
                    f"instance[{name!r}][{index}] is read as {count} values, its shape gives {want}"
                )
            if kind == "bits":
                cols[index] = col(np.arange(var, var + count, dtype=np.int64)).reshape(shape[len(index) :])
            else:
                cols[index] = col(np.array(var, dtype=np.int64))
        if (cols < 0).any():
            missing = np.argwhere(cols < 0)[0]
            raise CircuitError(
                f"instance[{name!r}] at {tuple(missing.tolist())} is never read by the circuit"
            )
        sources.append(Source(name=name, kind=kind, cols=cols))
    return sources


def _program(cs: Any, ni: int, sources: list[Source], col: Any) -> WitnessProgram:
    # Calls: levels from producers, then groups of (level, template).
    calls = cs._calls
    bases = np.array([c[2] for c in calls], dtype=np.int64)
    ends = bases + np.array([c[3] for c in calls], dtype=np.int64)
    levels = np.zeros(len(calls), dtype=np.int64)
    for i, (_, ports, _, _) in enumerate(calls):
        aux = ports[ports >= 0]
        lvl = 1
        if aux.size:
            p = np.searchsorted(bases, aux, side="right") - 1
            ok = (p >= 0) & (aux < ends[np.maximum(p, 0)])
            if ok.any():
                lvl = int(levels[p[ok]].max()) + 1
        levels[i] = lvl
    tindex: dict[str, int] = {}
    grouped: dict[tuple[int, int], list[int]] = {}
    for i, (tkey, _, _, _) in enumerate(calls):
        t = tindex.setdefault(tkey, len(tindex))
        grouped.setdefault((int(levels[i]), t), []).append(i)
    groups = []
    for (lvl, t), idx in sorted(grouped.items()):
        n_aux = {calls[i][3] for i in idx}
        if len(n_aux) != 1:
            raise CircuitError(
                f"calls of one gadget template allocate different numbers of aux values: {n_aux}"
            )
        ports = (
            np.stack([col(calls[i][1]) for i in idx])
            if calls[idx[0]][1].size
            else np.zeros((len(idx), 0), np.int64)
        )
        groups.append(CallGroup(template=t, level=lvl, n_aux=n_aux.pop(), ports=ports, bases=bases[idx]))
    covered = np.zeros(cs.num_aux, dtype=bool)
    for s in sources:
        c = s.cols.reshape(-1)
        covered[c[c >= ni] - ni] = True
    for b, e in zip(bases.tolist(), ends.tolist(), strict=True):
        covered[b:e] = True
    if not covered.all():
        raise CircuitError(
            f"aux variable {int(np.argmin(covered))} is filled by no source and no gadget call"
        )
    return WitnessProgram(
        num_inputs=ni, num_aux=cs.num_aux, templates=list(tindex), sources=sources, groups=groups
    )
