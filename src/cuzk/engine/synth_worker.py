"""A synthesis worker process: its entry point, and what it does with each task.

The pool (cuzk.engine.synth) starts each worker as a fresh interpreter running
this module, `python -P -m cuzk.engine.synth_worker FD INDEX THREADS [CIRCUIT...]`,
with one end of a socket pair as descriptor FD. Nothing of the caller's program
is imported into the worker: multiprocessing's spawn and forkserver methods both
re-run the parent's `__main__` in every child (to find pickled functions there),
which made a script without an `if __name__ == "__main__":` guard start an engine
inside each worker and fail. Our worker needs nothing of `__main__`: tasks are
plain data (SynthTask) and the code is this module's.

The worker writes each result straight into a new POSIX shared-memory block
(a file under /dev/shm, named by the parent, which registered the name with its
resource tracker), so the parent maps it without a copy and unlinks it when done.
"""

from __future__ import annotations

import contextlib
import mmap
import os
import signal
import sys
import time
from collections.abc import Mapping, Sequence
from multiprocessing.connection import Connection
from typing import Any

import numpy as np

#: Where POSIX shared memory lives on Linux (glibc's shm_open is a file under this tmpfs).
SHM_DIR = "/dev/shm"
_ALIGN = 64
#: madvise(2)'s MADV_POPULATE_WRITE (Linux 5.14+; Python names it only from 3.13)
_POPULATE_WRITE = getattr(mmap, "MADV_POPULATE_WRITE", 23)
#: How much lower than its parent a worker runs (nice increment). The parent's threads drive the
#: GPU: at real size 8 workers x 2 threads on 16 cores slowed the H MSM from 1.0 s to 1.5 s a
#: partition (2026-12-05, H200); the expected cause is the launching thread waiting for a core.
WORKER_NICE = 5


def main(argv: Sequence[str]) -> None:
    """FD INDEX THREADS [CIRCUIT...]: serve tasks on the socket FD until told to stop."""
    fd, index, threads = int(argv[0]), int(argv[1]), int(argv[2])
    serve(index, threads, Connection(fd), argv[3:])


def serve(index: int, threads: int, conn: Any, preload: Sequence[str]) -> None:
    """A worker's life: set up numba, preload circuits, say ready, then serve tasks."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # Ctrl-C is the parent's to handle
    with contextlib.suppress(OSError):  # a sandbox may refuse: run at the parent's priority then
        os.nice(WORKER_NICE)
    t0 = time.perf_counter()
    import numba

    numba.set_num_threads(min(threads, numba.config.NUMBA_NUM_THREADS))  # type: ignore[attr-defined]
    worker = Worker(index)
    for name in preload:
        try:
            worker.load(name, abc=True)
        except Exception as exc:  # the tasks of that circuit will report it
            print(f"synthesis worker {os.getpid()}: preload of {name} failed: {exc}", file=sys.stderr)
    conn.send(("ready", numba.get_num_threads(), time.perf_counter() - t0))
    while True:
        try:
            msg = conn.recv()
        except (EOFError, OSError):  # the parent is gone
            return
        if msg is None:
            return
        task_id, task, shm_name = msg
        conn.send(("started", task_id))  # from here on, a death is this task's
        conn.send((task_id, *worker.run(task, shm_name)))


class Worker:
    """The per-process state: circuits loaded once, the CPU backend."""

    def __init__(self, index: int) -> None:
        self.index = index
        self.pid = os.getpid()
        self.circuits: dict[str, Any] = {}
        self.backend: Any = None

    def load(self, name: str, *, abc: bool) -> Any:
        from cuzk.circuits import get_circuit

        circuit = self.circuits.get(name)
        if circuit is None:
            circuit = self.circuits[name] = get_circuit(name)
        circuit.program()  # topology and program come from one cache file, loaded together
        if abc and self.backend is None:
            from cuzk.backends import get_backend

            self.backend = get_backend("cpu")
        return circuit

    def run(self, task: Any, shm_name: str) -> tuple[Any, ...]:
        """('ok', layout, nbytes, spans) or ('fail', error class, message, spans)."""
        from cuzk.instrument import Timeline

        tl = Timeline(task.job_id)
        block: WitnessBlock | None = None
        try:
            if task.hold is not None:
                _hold(task.hold)
            if task.circuit not in self.circuits:
                with tl.span("load"):
                    circuit = self.load(task.circuit, abc=task.compute_abc)
            else:
                circuit = self.load(task.circuit, abc=task.compute_abc)
            if task.instance is None:
                with tl.span("instance"):
                    inst: Mapping[str, np.ndarray] = circuit.random_instance(task.seed)
            else:
                inst = task.instance
            with tl.span("witness"):  # straight into the block: no copy at the hand-off
                block = WitnessBlock(shm_name, circuit, with_abc=task.compute_abc)
                wit = circuit.witness(inst, out=block.witness)
            if task.compute_abc:
                from cuzk.groth16.prover import evaluate

                with tl.span("matvec"):  # the prover's own products and satisfaction check
                    abc = evaluate(circuit.topology(), self.backend, wit.full())
            del wit
            with tl.span("handoff"):
                if task.compute_abc:
                    block.put_abc(abc)
                layout, nbytes = block.close()
        except Exception as exc:  # every error is the task's, reported; the worker stays
            from cuzk.errors import CuzkError

            if block is not None:
                block.discard()
            what = str(exc) if isinstance(exc, CuzkError) else f"{type(exc).__name__}: {exc}"
            return ("fail", type(exc).__name__, what, self._spans(tl))
        return ("ok", layout, nbytes, self._spans(tl))

    def _spans(self, tl: Any) -> list[dict[str, Any]]:
        return [
            {"name": s.name, "start": s.start, "end": s.end, "worker": self.index, "pid": self.pid}
            for s in tl.spans
        ]


def _hold(folder: str) -> None:
    with open(os.path.join(folder, "started"), "w") as f:
        f.write(f"{os.getpid()}\n")
    with open(os.path.join(folder, "release")) as f:
        f.read()


class WitnessBlock:
    """A new shared-memory block the witness program fills in place: [inputs | aux] contiguous at
    offset 0 (a new block is zero-filled, as the program needs), then a, b, c when asked for.

    Computing the witness into a private array and copying it into the block took 0.36 s of
    every porep-full partition on the H200 machine (the `handoff` span, 2026-12-03).

    `prefault`: the block's pages are mapped in one madvise call before the program writes
    them. The program's scattered first writes each took a page fault: a porep-32g witness
    (4.2 GB) took 14.0 s into a fresh block and 1.4 + 7.7 s into a prefaulted one (2-core CI
    machine, 2026-12-06; benchmarks/synth_worker.py --prefault both).
    """

    def __init__(self, name: str, circuit: Any, *, with_abc: bool, prefault: bool = True) -> None:
        prog = circuit.program()
        ni, rows = prog.num_inputs, prog.num_inputs + prog.num_aux
        self.layout: list[tuple[str, tuple[int, ...], int]] = [
            ("inputs", (ni, 4), 0), ("aux", (rows - ni, 4), ni * 32)
        ]  # fmt: skip
        offset = aligned(rows * 32)
        if with_abc:
            n = circuit.topology().num_constraints
            for key in ("a", "b", "c"):
                self.layout.append((key, (n, 4), offset))
                offset += aligned(n * 32)
        self.nbytes = offset
        self.path = os.path.join(SHM_DIR, name)
        fd = os.open(self.path, os.O_RDWR | os.O_CREAT | os.O_EXCL, 0o600)
        try:
            os.ftruncate(fd, max(offset, 1))
            self.map: mmap.mmap | None = mmap.mmap(fd, max(offset, 1))
        finally:
            os.close(fd)
        if prefault and sys.platform == "linux":
            with contextlib.suppress(OSError):  # an older kernel: the writes fault the pages in
                self.map.madvise(_POPULATE_WRITE, 0, rows * 32)
        self.witness: np.ndarray | None = np.ndarray((rows, 4), dtype=np.uint64, buffer=self.map)

    def put_abc(self, abc: tuple[np.ndarray, np.ndarray, np.ndarray]) -> None:
        for (key, shape, off), arr in zip(self.layout[2:], abc, strict=True):
            if arr.shape != shape:
                raise ValueError(f"{key} has shape {arr.shape}, the block's slot {shape}")
            view = np.ndarray(shape, dtype=np.uint64, buffer=self.map, offset=off)
            view[...] = arr
            del view

    def close(self) -> tuple[list[tuple[str, tuple[int, ...], int]], int]:
        """Give the block up to the parent (it stays until the parent unlinks it): (layout, size)."""
        self.witness = None  # the caller has dropped its views: the map can be closed
        if self.map is not None:
            with contextlib.suppress(BufferError):  # a view still alive: unmapped when it goes
                self.map.close()
            self.map = None
        return self.layout, self.nbytes

    def discard(self) -> None:
        self.close()
        with contextlib.suppress(FileNotFoundError):
            os.unlink(self.path)


def aligned(nbytes: int) -> int:
    return -(-nbytes // _ALIGN) * _ALIGN


if __name__ == "__main__":
    main(sys.argv[1:])
