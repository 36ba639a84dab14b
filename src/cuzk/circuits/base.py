"""The workload-circuit protocol: schema, synthesis, instances, and the cached recording.

A circuit declares the arrays an instance holds (`schema`), writes its
constraints once with the bellman-style API (`synthesize`, reading instance
values through a view), and generates valid instances natively (`random_instance`).
Everything per proof then goes through the recorded witness program:

    topo = c.topology()          # recorded once, cached on disk
    wit = c.witness(inst)        # the program, vectorized
    topo.check(wit, backend)

`c.direct(inst)` runs the same synthesis with concrete values instead (the
bellman path); tests hold the two to bit-for-bit equality.
"""

from __future__ import annotations

import hashlib
import logging
import threading
import time
from abc import ABC, abstractmethod
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from functools import cache
from pathlib import Path
from typing import Any

import numpy as np

from cuzk.algebra.fields import FR
from cuzk.errors import CircuitError
from cuzk.r1cs import ConstraintSystem, Recording, SourceRef, Topology, Witness, WitnessProgram
from cuzk.r1cs import cache as rcache

Schema = dict[str, tuple[str, tuple[int, ...]]]

log = logging.getLogger(__name__)


@dataclass
class Instance(Mapping[str, np.ndarray]):
    """One statement and its private data: named arrays (bits uint8, Fr (..., 4) Montgomery)."""

    circuit: str
    arrays: dict[str, np.ndarray]
    seed: int | None = None

    def __getitem__(self, key: str) -> np.ndarray:
        return self.arrays[key]

    def __iter__(self) -> Iterator[str]:
        return iter(self.arrays)

    def __len__(self) -> int:
        return len(self.arrays)

    def copy(self) -> Instance:
        return Instance(self.circuit, {k: v.copy() for k, v in self.arrays.items()}, self.seed)


class SourceView:
    """What `synthesize` reads while recording: references, not values."""

    def bits(self, name: str, *index: int) -> SourceRef:
        return SourceRef(name, tuple(index))

    def field(self, name: str, *index: int) -> SourceRef:
        return SourceRef(name, tuple(index))


class ValuesView:
    """What `synthesize` reads on the direct path: the instance's values, one lane."""

    def __init__(self, inst: Mapping[str, np.ndarray]) -> None:
        self.inst = inst

    def bits(self, name: str, *index: int) -> np.ndarray:
        return np.asarray(self.inst[name][index], dtype=np.uint8)[None]

    def field(self, name: str, *index: int) -> np.ndarray:
        return np.asarray(self.inst[name][index], dtype=np.uint64).reshape(1, 4)


@cache
def code_version() -> str:
    """A hash of the r1cs, gadgets and circuits sources: any change there re-records cached shapes."""
    root = Path(__file__).resolve().parent.parent
    h = hashlib.blake2b(digest_size=8)
    for sub in ("r1cs", "gadgets", "circuits"):
        for p in sorted((root / sub).glob("*.py")):
            h.update(p.name.encode())
            h.update(p.read_bytes())
    return h.hexdigest()


@dataclass
class Circuit(ABC):
    """A registered workload circuit at one scale."""

    name: str
    description: str
    scale: str
    params: dict[str, Any]
    _recording: tuple[Topology, WitnessProgram] | None = field(default=None, repr=False)
    cache_status: str = field(default="", repr=False)
    record_seconds: float | None = field(default=None, repr=False)
    # Guards _recording: threads asking for one circuit's topology at once record it once (the disk
    # cache's file lock does the same between processes). Not pickled: see __getstate__.
    _lock: threading.Lock = field(default_factory=threading.Lock, repr=False, compare=False)

    def __getstate__(self) -> dict[str, Any]:
        state = dict(self.__dict__)
        del state["_lock"]
        return state

    def __setstate__(self, state: dict[str, Any]) -> None:
        self.__dict__.update(state)
        self._lock = threading.Lock()

    @property
    def family(self) -> str:
        return self.name.rsplit("-", 1)[0]

    # --- what each circuit provides ---------------------------------------------------
    @abstractmethod
    def schema(self) -> Schema:
        """name -> (kind 'bits' | 'field', shape without the limb axis) of every instance array."""

    @abstractmethod
    def synthesize(self, cs: Any, inst: Any) -> None:
        """Write the constraints; read instance data only through inst.bits / inst.field."""

    @abstractmethod
    def _generate(self, rng: np.random.Generator) -> dict[str, np.ndarray]:
        """A valid instance's arrays."""

    @abstractmethod
    def estimate_constraints(self) -> int:
        """A close estimate of the constraint count, without recording (for listings)."""

    # --- recording and the per-proof path ---------------------------------------------
    def spec(self) -> dict[str, Any]:
        return {"circuit": self.name, "params": self.params, "code": code_version()}

    def cache_path(self) -> Path:
        return rcache.cache_dir() / f"{self.name}-{rcache.spec_key(self.spec())}.npz"

    def record(self) -> tuple[Topology, WitnessProgram]:
        """Record the topology and witness program (no cache)."""
        cs = ConstraintSystem(values=False)
        self.synthesize(cs, SourceView())
        rec = cs.finish(self.schema())
        return rec.topology, rec.program

    def _load(self, use_cache: bool = True) -> tuple[Topology, WitnessProgram]:
        recording = self._recording
        if recording is not None:
            return recording
        with self._lock:
            if self._recording is None:  # another thread may have recorded while we waited
                t0 = time.perf_counter()
                if use_cache:
                    topo, program, status = rcache.load_or_record(self.cache_path(), self.spec(), self.record)
                else:
                    (topo, program), status = self.record(), "recorded (cache off)"
                self.record_seconds = time.perf_counter() - t0
                self.cache_status = status
                self._recording = (topo, program)
            return self._recording

    def topology(self, *, use_cache: bool = True) -> Topology:
        return self._load(use_cache)[0]

    def program(self, *, use_cache: bool = True) -> WitnessProgram:
        return self._load(use_cache)[1]

    def forget(self) -> None:
        """Drop the in-memory recording (the disk cache stays)."""
        with self._lock:
            self._recording = None
            self.cache_status = ""

    def random_instance(self, seed: int = 0) -> Instance:
        """A valid instance, reproducible from the seed."""
        arrays = self._generate(np.random.default_rng(seed))
        self._check_schema(arrays)
        return Instance(self.name, arrays, seed)

    def _check_schema(self, arrays: Mapping[str, np.ndarray]) -> None:
        for name, (kind, shape) in self.schema().items():
            a = arrays.get(name)
            want = shape if kind == "bits" else (*shape, 4)
            if a is None or a.shape != want:
                raise CircuitError(f"{self.name}: instance[{name!r}] should have shape {want}")

    def witness(self, inst: Mapping[str, np.ndarray], *, out: np.ndarray | None = None) -> Witness:
        """The full assignment, computed by the recorded witness program (into `out`: see its `run`)."""
        self._check_instance(inst)
        return self.program().run(inst, out=out)

    def public_inputs(self, inst: Mapping[str, np.ndarray]) -> list[int]:
        """Canonical public inputs in input order, without ONE (== FR.to_ints(witness.inputs[1:]))."""
        self._check_instance(inst)
        program = self.program()
        ni = program.num_inputs
        inputs = np.zeros((ni, 4), dtype=np.uint64)
        inputs[0] = FR.one()
        for s in program.sources:
            if s.kind == "field" and (s.cols < ni).all():
                inputs[s.cols.reshape(-1)] = np.asarray(inst[s.name]).reshape(-1, 4)
        return FR.to_ints(inputs[1:])

    def direct(self, inst: Mapping[str, np.ndarray]) -> Recording:
        """Synthesize with concrete values through the plain bellman-style API (slow; for tests)."""
        self._check_instance(inst)
        cs = ConstraintSystem()
        self.synthesize(cs, ValuesView(inst))
        return cs.finish()

    def _check_instance(self, inst: Mapping[str, np.ndarray]) -> None:
        if isinstance(inst, Instance) and inst.circuit != self.name:
            raise CircuitError(f"an instance of {inst.circuit} was given to {self.name}")

    @property
    @abstractmethod
    def root_inputs(self) -> tuple[int, ...]:
        """Positions in instance["public"] of the committed roots (each checked by one equality)."""

    def corrupt(self, inst: Instance, seed: int = 0, *, private: bool = False) -> Instance:
        """A copy that no witness satisfies (for tests): a committed root changed by one.

        With private=True one private value changes instead (a bit flipped, or an Fr value
        plus one). That breaks every full-round circuit, but in the 2-round SHA-256 of the
        -tiny circuits some message bits do not reach the digest, so use the default there.
        """
        rng = np.random.default_rng(seed)
        out = inst.copy()
        if not private:
            roots = self.root_inputs
            i = roots[int(rng.integers(len(roots)))]
            pub = out.arrays["public"]
            pub[i] = FR.add(pub[i : i + 1], FR.one()[None])[0]
            return out
        names = sorted(k for k in out.arrays if k != "public")
        name = names[int(rng.integers(len(names)))]
        a = out.arrays[name]
        if self.schema()[name][0] == "bits":
            flat = a.reshape(-1)
            flat[int(rng.integers(flat.size))] ^= 1
        else:
            rows = a.reshape(-1, 4)
            i = int(rng.integers(rows.shape[0]))
            rows[i] = FR.add(rows[i : i + 1], FR.one()[None])[0]
        return out

    def describe(self) -> dict[str, Any]:
        return {"name": self.name, "scale": self.scale, "description": self.description, **self.params}


class ReplicatedCircuit(Circuit):
    """A circuit made of a shared head and `copies` copies of one block (cuzk.r1cs.replicate).

    `synthesize` is the head followed by each copy in the namespace `copy_prefix k`; recording
    synthesizes only the head and copy 0 and replicates them, so a 130M-constraint partition is
    recorded at the cost of one challenge. `record_direct` records every copy the plain way
    (tests compare the two, matrix for matrix).
    """

    copy_prefix = "challenge"

    @property
    @abstractmethod
    def copies(self) -> int:
        """How many copies of the block the circuit holds."""

    @abstractmethod
    def synthesize_shared(self, cs: Any, inst: Any) -> Any:
        """The head: everything every copy reads; returns what synthesize_copy needs of it."""

    @abstractmethod
    def synthesize_copy(self, cs: Any, inst: Any, shared: Any, k: int) -> None:
        """Copy k: its public inputs first-allocated here, its instance data at index k."""

    def position_stride(self, name: str, layout: Any) -> int:
        """How far copy k's references into instance[name] move (first axis) per copy: one row
        of the copy axis, except "public", where each copy's inputs are consecutive entries."""
        return layout.unit_inputs if name == "public" else 1

    def synthesize(self, cs: Any, inst: Any) -> None:
        shared = self.synthesize_shared(cs, inst)
        for k in range(self.copies):
            with cs.namespace(f"{self.copy_prefix} {k}"):
                self.synthesize_copy(cs, inst, shared, k)

    def record(self) -> tuple[Topology, WitnessProgram]:
        from cuzk.r1cs.replicate import mark, replicate

        def say(msg: str) -> None:
            log.info("cuzk: %s: %s", self.name, msg)

        t0 = time.perf_counter()
        cs = ConstraintSystem(values=False)
        view = SourceView()
        shared = self.synthesize_shared(cs, view)
        m0 = mark(cs)
        with cs.namespace(f"{self.copy_prefix} 0"):
            self.synthesize_copy(cs, view, shared, 0)
        m1 = mark(cs)
        t_unit = time.perf_counter() - t0
        say(f"recorded the head and {self.copy_prefix} 0 ({m1.rows:,} rows) in {t_unit:.1f} s")
        topo, program = replicate(
            cs, m0, m1, self.copies, self.schema(), self.copy_prefix, self.position_stride, say
        )
        topo.setup_seconds = {"record_one_copy": t_unit, **topo.setup_seconds}
        say(f"{topo.num_constraints:,} constraints ({self.copies} x {topo.layout.unit_rows:,} + "
            f"{topo.layout.shared_rows:,} + {topo.num_inputs} input rows) in {time.perf_counter() - t0:.1f} s")  # fmt: skip
        return topo, program

    def record_direct(self) -> tuple[Topology, WitnessProgram]:
        """Every copy synthesized and stamped (the plain recording; small scales, for tests)."""
        return Circuit.record(self)
