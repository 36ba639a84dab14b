"""Shared pieces of the engine tests: a fake clock, event recorders, worker holds, proof checks."""

from __future__ import annotations

import os
import threading
from collections import defaultdict
from pathlib import Path

from cuzk.circuits import get_circuit
from cuzk.engine import JobStatus
from cuzk.groth16 import params_io, proofs_from_bytes, verify
from cuzk.groth16.api import params_dir_for

WAIT = 600.0  # seconds before a hang fails a test (first runs load kernels and make parameters)


class FakeClock:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now

    def advance(self, seconds: float) -> None:
        self.now += seconds


class Events:
    """One threading.Event per (point, job, partition), and the order the calls came in."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._events: dict[tuple, threading.Event] = defaultdict(threading.Event)
        self.calls: dict[str, list[tuple[str, int]]] = defaultdict(list)

    def hook(self, point: str):
        def record(job_id: str, partition: int) -> None:
            with self._lock:
                self.calls[point].append((job_id, partition))
                ev = self._events[(point, job_id, partition)]
            ev.set()

        return record

    def wait(self, point: str, job_id: str, partition: int = 0) -> None:
        with self._lock:
            ev = self._events[(point, job_id, partition)]
        assert ev.wait(WAIT), f"{point} never happened for {job_id}/{partition}"

    def jobs(self, point: str) -> list[str]:
        return [j for j, _ in self.calls[point]]

    def partitions(self, point: str, job_id: str) -> list[int]:
        return [p for j, p in self.calls[point] if j == job_id]


class Gate:
    """A hook that blocks the first `count` calls (or those matching `match`) until opened."""

    def __init__(self, match=None, *, count: int = 1) -> None:
        self.opened = threading.Event()
        self.entered = threading.Event()
        self._left = count
        self._match = match
        self._cond = threading.Condition()
        self.held: list[tuple[str, int]] = []

    def __call__(self, job_id: str, partition: int) -> None:
        with self._cond:
            hit = self._left > 0 and (self._match is None or self._match(job_id, partition))
            if hit:
                self._left -= 1
                self.held.append((job_id, partition))
                self._cond.notify_all()
        if hit:
            self.entered.set()
            assert self.opened.wait(WAIT)

    def wait_held(self, n: int) -> None:
        with self._cond:
            assert self._cond.wait_for(lambda: len(self.held) >= n, WAIT), f"{len(self.held)} of {n} held"

    def open(self) -> None:
        self.opened.set()


def chain(*fns):
    """One hook that calls several in order."""

    def call(job_id: str, partition: int):
        out = None
        for fn in fns:
            out = fn(job_id, partition) if out is None else out
        return out

    return call


class Hold:
    """A synthesis task's hold folder (SynthTask.hold): two FIFOs; pid() waits until the worker is inside."""

    def __init__(self, folder: Path) -> None:
        folder.mkdir()
        self.folder = str(folder)
        os.mkfifo(folder / "started")
        os.mkfifo(folder / "release")

    def pid(self) -> int:
        box: list[str] = []
        t = threading.Thread(target=lambda: box.append(Path(self.folder, "started").read_text()), daemon=True)
        t.start()
        t.join(WAIT)
        assert box, "the held task never started"
        return int(box[0])

    def release(self) -> None:
        with open(Path(self.folder, "release"), "w"):
            pass


def spans(result, name: str) -> list:
    return [s for s in result.timeline.spans if s.name == name]


def assert_proofs(result, circuit: str, instances) -> None:
    """The job completed, its proofs verify against the circuit's vk, and a tampered input is rejected."""
    assert result.status is JobStatus.COMPLETED, result.error
    c = get_circuit(circuit)
    topo = c.topology()
    vk = params_io.read_vk(params_dir_for(circuit, topo.hash) / f"{circuit}.vk", checked=False)
    proofs = result.proofs
    assert len(result.proof_bytes()) == 192 * len(instances) and len(proofs) == len(instances)
    for proof, wire in zip(proofs, proofs_from_bytes(result.proof_bytes()), strict=True):  # the wire form
        assert proof.to_bytes() == wire.to_bytes()
    assert result.public_inputs == [c.public_inputs(inst) for inst in instances]
    for proof, public in zip(proofs, result.public_inputs, strict=True):
        assert verify(vk, public, proof)
    bad = list(result.public_inputs[0])
    bad[0] = (bad[0] + 1) % (2**255)
    assert not verify(vk, bad, proofs[0])


def seeded(circuit: str, seed: int, n: int = 1) -> list:
    c = get_circuit(circuit)
    return [c.random_instance(seed + j) for j in range(n)]


def in_flight_beyond_srs(engine) -> int:
    snap = engine.budget.snapshot()
    return snap["used"] - snap.get("srs", 0)
