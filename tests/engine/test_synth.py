"""The synthesis worker pool, with real processes on -tiny circuits.

Synchronization is on callbacks (events) and on the workers' `hold` FIFOs,
never on sleeps; the generous timeouts only turn a hang into a failure. One
pool serves the module (spawning workers and loading their kernel caches
costs seconds).
"""

from __future__ import annotations

import gc
import glob
import mmap
import os
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Iterator

import numpy as np
import pytest
from engine_helpers import Hold

from cuzk.backends import get_backend
from cuzk.circuits import get_circuit
from cuzk.engine import synth
from cuzk.engine.synth import (
    SHM_DIR,
    SHM_PREFIX,
    SynthFailure,
    SynthPool,
    SynthResult,
    SynthTask,
    default_threads,
)
from cuzk.errors import ShuttingDownError, UsageError
from cuzk.groth16.prover import evaluate

WAIT = 600.0  # seconds before a hang fails a test (the first task compiles/loads kernels)


class Outcomes:
    """A callback that records each outcome per (job, partition), with an event to wait on."""

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.got: dict[tuple[str, int], list[SynthResult | SynthFailure]] = {}
        self.events: dict[tuple[str, int], threading.Event] = {}
        self.arrived: dict[tuple[str, int], float] = {}  # time.perf_counter() at the callback

    def _event(self, key: tuple[str, int]) -> threading.Event:
        with self.lock:
            return self.events.setdefault(key, threading.Event())

    def __call__(self, outcome: SynthResult | SynthFailure) -> None:
        key = (outcome.job_id, outcome.partition)
        with self.lock:
            self.got.setdefault(key, []).append(outcome)
            self.arrived.setdefault(key, time.perf_counter())
        self._event(key).set()

    def wait(self, job: str, partition: int) -> SynthResult | SynthFailure:
        assert self._event((job, partition)).wait(WAIT), f"no outcome for {job}/{partition}"
        with self.lock:
            return self.got[(job, partition)][0]

    def count(self, job: str, partition: int) -> int:
        with self.lock:
            return len(self.got.get((job, partition), []))


def blocks(pool_pid: int | None = None) -> list[str]:
    return glob.glob(os.path.join(SHM_DIR, f"{SHM_PREFIX}{pool_pid or os.getpid()}-*"))


@pytest.fixture(scope="module")
def pool() -> Iterator[SynthPool]:
    with SynthPool(2, threads_per_worker=1) as p:
        yield p
    assert not blocks()


@pytest.fixture(scope="module")
def cpu():
    return get_backend("cpu")


def in_process(name: str, seed: int, cpu):
    c = get_circuit(name)
    w = c.witness(c.random_instance(seed))
    a, b, c_ = evaluate(c.topology(), cpu, w.full())
    return w, (a, b, c_)


def test_results_equal_in_process_synthesis(pool, cpu):
    out = Outcomes()
    winning = get_circuit("winning-tiny")
    inst = dict(winning.random_instance(5).arrays)
    submitted = time.perf_counter()
    pool.submit(SynthTask("eq", 0, "porep-tiny", seed=3), out)
    pool.submit(SynthTask("eq", 1, "porep-tiny", seed=4, compute_abc=False), out)
    pool.submit(SynthTask("eq", 2, "winning-tiny", instance=inst), out)
    for p, (name, seed) in enumerate([("porep-tiny", 3), ("porep-tiny", 4), ("winning-tiny", 5)]):
        r = out.wait("eq", p)
        assert isinstance(r, SynthResult), r
        w, abc = in_process(name, seed, cpu)
        assert np.array_equal(r.inputs, w.inputs) and np.array_equal(r.aux, w.aux)
        if p == 1:
            assert r.abc is None
        else:
            assert r.abc is not None
            for got, want in zip(r.abc, abc, strict=True):
                assert np.array_equal(got, want)
        assert isinstance(r.inputs.base, mmap.mmap)  # a view into the shared block, not a copy
        names = [s["name"] for s in r.spans]
        assert "witness" in names and ("matvec" in names) == (p != 1)
        assert ("instance" in names) == (p != 2)  # seeded tasks make their instance in the worker
        for s in r.spans:  # one clock for all processes: worker spans fall inside the parent's wait
            assert submitted <= s["start"] <= s["end"] <= out.arrived[("eq", p)]
            assert s["pid"] == r.pid and s["worker"] == r.worker
        assert r.pid in pool.worker_pids()
        kept = r.aux  # a view the caller still holds outlives close(): mapped, never dangling
        r.close()
        assert np.array_equal(kept, w.aux)
        del kept
        r.close()  # idempotent
        assert r.abc is None and r.aux.size == 0
    assert not blocks()
    assert [i["numba_threads"] for i in pool.worker_info()] == [1, 1]


def test_default_threads_never_oversubscribe():
    assert default_threads(16, 16) == 1 and default_threads(4, 16) == 4 and default_threads(3, 16) == 5
    assert default_threads(32, 16) == 1


def test_a_raising_callback_or_a_dropped_result_leaks_nothing(pool, caplog):
    got: list[SynthResult | SynthFailure] = []
    both = threading.Event()

    def boom(outcome):
        raise RuntimeError("callback bug")

    def keep(outcome):
        got.append(outcome)
        both.set()

    pool.submit(SynthTask("cb", 0, "winning-tiny", seed=1, compute_abc=False), boom)
    pool.submit(SynthTask("cb", 1, "winning-tiny", seed=2, compute_abc=False), keep)
    assert both.wait(WAIT)
    (r,) = got
    assert isinstance(r, SynthResult)
    got.clear()
    del r
    gc.collect()  # a result never closed is released when it is collected
    done = Outcomes()
    pool.submit(SynthTask("cb", 2, "winning-tiny", seed=3, compute_abc=False), done)
    done.wait("cb", 2).close()  # the callback thread delivered after the bad callback
    assert "a synthesis callback raised (job cb)" in caplog.text
    assert not blocks()


def test_a_bad_instance_fails_only_its_task(pool):
    out = Outcomes()
    c = get_circuit("porep-tiny")
    bad = c.corrupt(c.random_instance(6))
    pids = pool.worker_pids()
    pool.submit(SynthTask("bad", 0, "porep-tiny", instance=dict(bad.arrays)), out)
    pool.submit(SynthTask("bad", 1, "porep-tiny", instance={}), out)
    pool.submit(SynthTask("good", 0, "porep-tiny", seed=6), out)
    f = out.wait("bad", 1)
    assert (
        isinstance(f, SynthFailure) and f.kind == "job" and f.message.startswith("partition 1 of job bad: ")
    )
    f = out.wait("bad", 0)
    assert isinstance(f, SynthFailure) and f.kind == "job" and f.error == "UnsatisfiedError"
    assert "partition 0 of job bad" in f.message and "is not satisfied" in f.message
    r = out.wait("good", 0)
    assert isinstance(r, SynthResult)
    r.close()
    assert pool.worker_pids() == pids  # the worker stays
    assert not blocks()


def test_a_task_needs_exactly_one_of_seed_and_instance(pool):
    with pytest.raises(UsageError, match="exactly one of seed and instance"):
        pool.submit(SynthTask("x", 0, "porep-tiny"), Outcomes())


def test_a_killed_worker_fails_its_task_and_is_replaced(pool, tmp_path):
    out = Outcomes()
    hold = Hold(tmp_path / "h")
    pool.submit(SynthTask("kill", 3, "porep-tiny", seed=1, hold=hold.folder), out)
    pid = hold.pid()
    assert pid in pool.worker_pids() and pool.busy() >= 1
    os.kill(pid, signal.SIGKILL)
    f = out.wait("kill", 3)
    assert isinstance(f, SynthFailure) and f.kind == "worker"
    assert (
        f.message
        == f"synthesis worker {pid} died (signal 9: SIGKILL) while synthesizing partition 3 of job kill"
    )
    pool.submit(SynthTask("after", 0, "porep-tiny", seed=2), out)
    pool.submit(SynthTask("after", 1, "porep-tiny", seed=3), out)
    for p in (0, 1):
        r = out.wait("after", p)
        assert isinstance(r, SynthResult), r
        r.close()
    assert pid not in pool.worker_pids() and len(pool.worker_pids()) == 2
    assert out.count("kill", 3) == 1
    assert not blocks()


def test_workers_run_below_the_parent_that_drives_the_gpu(pool):
    from cuzk.engine.synth_worker import WORKER_NICE

    out = Outcomes()
    pool.submit(SynthTask("nice", 0, "winning-tiny", seed=1, compute_abc=False), out)
    r = out.wait("nice", 0)  # a worker said ready (it lowers itself before that) and ran it
    assert isinstance(r, SynthResult), r
    r.close()
    mine = os.getpriority(os.PRIO_PROCESS, 0)
    ready = [w["pid"] for w in pool.worker_info() if w["ready"]]
    assert ready
    for pid in ready:
        assert os.getpriority(os.PRIO_PROCESS, pid) == min(19, mine + WORKER_NICE)


def test_idle_workers_killed_cost_no_task(pool):
    out = Outcomes()
    old = pool.worker_pids()
    for pid in old:
        os.kill(pid, signal.SIGKILL)
    pool.submit(SynthTask("idle", 0, "winning-tiny", seed=1, compute_abc=False), out)
    r = out.wait("idle", 0)  # requeued if it went to a dead worker, else run by a replacement
    assert isinstance(r, SynthResult), r
    r.close()
    assert not set(old) & set(pool.worker_pids())
    assert not blocks()


def test_cancel_drops_queued_tasks_and_closes_a_running_ones_result(pool, tmp_path):
    out = Outcomes()
    h0, h1 = Hold(tmp_path / "a"), Hold(tmp_path / "b")
    pool.submit(SynthTask("c", 0, "porep-tiny", seed=1, hold=h0.folder), out)
    pool.submit(SynthTask("other", 0, "porep-tiny", seed=2, hold=h1.folder), out)
    h0.pid(), h1.pid()  # both workers are inside a task: what follows stays queued
    pool.submit(SynthTask("c", 1, "porep-tiny", seed=3), out)
    pool.submit(SynthTask("c", 2, "porep-tiny", seed=4), out)
    pool.submit(SynthTask("other", 1, "porep-tiny", seed=5), out)
    assert pool.cancel("c") == 3
    for p in (1, 2):
        f = out.wait("c", p)
        assert isinstance(f, SynthFailure) and f.kind == "cancelled"
    h0.release()
    h1.release()
    f = out.wait("c", 0)
    assert isinstance(f, SynthFailure) and f.kind == "cancelled" and f.spans  # it ran; its block is gone
    for p in (0, 1):
        r = out.wait("other", p)
        assert isinstance(r, SynthResult), r
        r.close()
    assert all(out.count(j, p) == 1 for j, p in [("c", 0), ("c", 1), ("c", 2), ("other", 0), ("other", 1)])
    assert not blocks()


def test_shutdown_with_tasks_queued_gives_each_one_outcome(tmp_path):
    out = Outcomes()
    hold = Hold(tmp_path / "h")
    p = SynthPool(1, threads_per_worker=1)
    p.submit(SynthTask("s", 0, "winning-tiny", seed=1, compute_abc=False, hold=hold.folder), out)
    for i in range(1, 4):
        p.submit(SynthTask("s", i, "winning-tiny", seed=1, compute_abc=False), out)
    hold.pid()
    p.shutdown(wait=False, cancel_pending=True)
    with pytest.raises(ShuttingDownError):
        p.submit(SynthTask("s", 9, "winning-tiny", seed=1), out)
    for i in range(1, 4):
        f = out.wait("s", i)
        assert isinstance(f, SynthFailure) and f.kind == "shutdown"
    hold.release()
    p.shutdown(wait=True)
    r = out.wait("s", 0)
    assert isinstance(r, SynthResult)
    r.close()
    assert all(out.count("s", i) == 1 for i in range(4))
    assert not blocks()


def test_a_broken_dispatcher_still_gives_every_task_an_outcome(monkeypatch):
    def boom(*args):
        raise RuntimeError("boom")

    monkeypatch.setattr(synth, "_map_result", boom)
    out = Outcomes()
    p = SynthPool(1, threads_per_worker=1)
    for i in range(2):
        p.submit(SynthTask("broken", i, "winning-tiny", seed=i, compute_abc=False), out)
    for i in range(2):
        f = out.wait("broken", i)
        assert isinstance(f, SynthFailure) and f.kind == "worker"
        assert "the synthesis pool failed: RuntimeError('boom')" in f.message
    p.shutdown(wait=True)
    assert out.count("broken", 0) == out.count("broken", 1) == 1
    assert not blocks()


_CLEAN_EXIT = """
import gc, queue
from cuzk.engine.synth import SynthPool, SynthResult, SynthTask
if __name__ == "__main__":
    q = queue.SimpleQueue()
    with SynthPool(1, threads_per_worker=1) as pool:
        for i in range(3):
            pool.submit(SynthTask("t", i, "winning-tiny", seed=i, compute_abc=False), q.put)
        kept = [q.get() for _ in range(3)]
        assert all(isinstance(r, SynthResult) for r in kept), kept
        kept[0].close()
        view = kept[1].aux
        kept[1].close()
        del kept
        gc.collect()
        assert view.sum() >= 0
"""


def test_the_resource_tracker_reports_no_leak_at_exit(tmp_path):
    """Shared memory made by workers and released by the parent leaves the tracker nothing to warn about."""
    script = tmp_path / "clean_exit.py"
    script.write_text(_CLEAN_EXIT)
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)}
    proc = subprocess.run(
        [sys.executable, "-W", "error", str(script)], env=env, capture_output=True, text=True
    )
    assert proc.returncode == 0, proc.stderr
    assert "resource_tracker" not in proc.stderr and "leaked" not in proc.stderr, proc.stderr


@pytest.mark.parametrize("prefault", [True, False])
def test_a_prefaulted_block_starts_zero_and_holds_the_same_witness(prefault, tmp_path):
    """The block's pages mapped ahead (madvise) read as zeros, as the witness program needs, and
    the witness written into it equals the one the program computes into a private array."""
    from cuzk.engine.synth_worker import WitnessBlock

    circuit = get_circuit("porep-tiny")
    inst = circuit.random_instance(5)
    name = f"{SHM_PREFIX}test-prefault-{os.getpid()}-{int(prefault)}"
    block = WitnessBlock(name, circuit, with_abc=False, prefault=prefault)
    try:
        assert block.witness is not None and not block.witness.any()
        got = circuit.witness(inst, out=block.witness).full().copy()
        want = circuit.witness(inst).full()
        assert np.array_equal(got, want)
    finally:
        block.discard()
    assert not os.path.exists(os.path.join(SHM_DIR, name))
