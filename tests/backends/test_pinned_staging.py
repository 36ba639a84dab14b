"""Uploads against a fake device whose copies lag behind the host: pinned slots and pre-staging.

On the H200 a bench ab with staging.pinned=true returned a proof with a point off the curve: the
two pinned slots outlive one upload, but the events that say a slot's copy has finished were kept
per upload, so the next upload refilled a slot still being read. Here the device copies run only
when an event recorded after them is waited for, the worst a real DMA engine may do, so reusing a
slot too early corrupts the result deterministically.

Pre-staging (`stage`, the engine's uploads before the device lock) once queued its copy on the
compute stream, behind the lock holder's kernels, and held back the holder's next download: the
fake compute stream here records everything queued on it.
"""

from __future__ import annotations

import contextlib
import threading
from collections.abc import Callable
from types import SimpleNamespace
from typing import Any, ClassVar

import numpy as np
import pytest

from cuzk.backends.cuda._runtime import CupyRuntime


class LaggingStream:
    current: ClassVar[list[LaggingStream]] = []  # the streams made current by `with`, innermost last

    def __init__(self) -> None:
        self.queue: list[Callable[[], None]] = []
        self.done = 0
        self.waits = 0

    def __enter__(self) -> LaggingStream:
        LaggingStream.current.append(self)
        return self

    def __exit__(self, *exc: object) -> None:
        LaggingStream.current.pop()

    def record(self) -> SimpleNamespace:
        upto = len(self.queue)
        return SimpleNamespace(synchronize=lambda: self.run(upto))

    def wait_event(self, event: Any) -> None:
        """What is queued here from now on runs only after what the event's stream had queued."""
        self.waits += 1
        self.queue.append(event.synchronize)

    def run(self, upto: int | None = None) -> None:
        upto = len(self.queue) if upto is None else upto
        while self.done < upto:
            self.queue[self.done]()
            self.done += 1


class DeviceArray:
    def __init__(self, arr: np.ndarray, stream: LaggingStream | None = None) -> None:
        self.arr = arr
        self.stream = stream  # the stream current when it was allocated: its pool arena

    def __getitem__(self, index: Any) -> DeviceArray:
        return DeviceArray(self.arr[index])

    def set(self, host: np.ndarray, stream: LaggingStream) -> None:
        dst = self.arr
        stream.queue.append(lambda: np.copyto(dst, host))  # reads the pinned slot when it runs


def _runtime(chunk_bytes: int) -> CupyRuntime:
    cp = SimpleNamespace(
        empty=lambda shape, dtype: DeviceArray(
            np.zeros(shape, dtype), LaggingStream.current[-1] if LaggingStream.current else None
        ),
        cuda=SimpleNamespace(
            alloc_pinned_memory=lambda n: bytearray(n),
            using_allocator=lambda malloc: contextlib.nullcontext(),
        ),
    )
    rt = object.__new__(CupyRuntime)  # no CUDA: only the staging state the uploads use
    rt.device, rt.pool = contextlib.nullcontext(), SimpleNamespace(malloc=None)
    rt.cp, rt.pinned_staging, rt._chunk_bytes = cp, True, chunk_bytes
    rt._slot_sets, rt._slot_sets_lock, rt.pin_seconds, rt._copy_pool = {}, threading.Lock(), 0.0, None
    rt.upload_stream, rt.compute = LaggingStream(), LaggingStream()
    return rt


def _upload(rt: CupyRuntime, host: np.ndarray) -> DeviceArray:
    chunks = list(rt.upload_chunks(host, [(0, host.shape[0])]))
    return chunks[-1][0]


def test_back_to_back_uploads_never_refill_a_slot_in_flight() -> None:
    rt = _runtime(chunk_bytes=4 * 32)  # 4 rows of 4 uint64 per chunk
    rng = np.random.default_rng(1)
    hosts = [rng.integers(0, 2**63, size=(11, 4), dtype=np.uint64) for _ in range(3)]  # 3 chunks each
    outs = [_upload(rt, h) for h in hosts]
    rt.upload_stream.run()
    for h, out in zip(hosts, outs, strict=True):
        assert np.array_equal(out.arr, h)


@pytest.mark.parametrize("via", ["upload", "upload_chunks"])
def test_an_upload_into_a_freed_block_lands_after_the_kernels_queued_to_read_it(via: str) -> None:
    """The pool gives an upload the block of an array just dropped while a kernel queued on the
    compute stream still reads it; the upload's copies are ordered after that kernel, whichever
    stream carries them, even with the upload stream run first. (Queued on the upload stream with
    no wait, they overwrote it: porep-32g's key lost columns on the H100, 2026-12-07.)"""
    rt = _runtime(chunk_bytes=512 << 10)
    rng = np.random.default_rng(5)
    rows = 40_000  # 1.28 MB: over upload's pinned threshold, three chunks
    first, second = (rng.integers(0, 2**63, size=(rows, 4), dtype=np.uint64) for _ in range(2))
    block = DeviceArray(first.copy())
    seen = np.zeros_like(first)
    rt.compute.queue.append(lambda: np.copyto(seen, block.arr))  # the queued kernel reading x
    if via == "upload":
        rt.upload(second, out=block)
    else:
        list(rt.upload_chunks(second, [(0, 5), (5, rows)], out=block))
    rt.upload_stream.run()  # the copy engine as eager as it may be
    rt.compute.run()
    assert np.array_equal(seen, first)
    assert np.array_equal(block.arr, second)


def test_a_staging_upload_does_not_wait_for_the_compute_streams_queued_work() -> None:
    """The holder's upload (on the compute stream, behind its queued kernels) and the next
    unit's staging use different slots: the staging completes with the compute stream's queue
    not run at all. (Sharing the slots, the staging waited for the holder's kernels: a GPU
    worker's prepare took 1.9 s beside the other's hold, 0.5 s alone, H100 2026-12-07.)"""
    rt = _runtime(chunk_bytes=512 << 10)
    rng = np.random.default_rng(6)
    rows = 40_000  # over the pinned threshold, three chunks
    held, staged = (rng.integers(0, 2**63, size=(rows, 4), dtype=np.uint64) for _ in range(2))
    rt.compute.queue.append(lambda: None)  # the holder's queued kernels
    mine = rt.upload(held)
    done_before = rt.compute.done
    out = rt.stage(staged)
    assert np.array_equal(out.arr, staged)
    assert rt.compute.done == done_before < len(rt.compute.queue)  # the stage ran none of it
    rt.compute.run()
    assert np.array_equal(mine.arr, held)


def test_uploads_from_two_threads_share_the_slots_safely() -> None:
    rt = _runtime(chunk_bytes=2 * 32)
    rng = np.random.default_rng(2)
    hosts = [rng.integers(0, 2**63, size=(9, 4), dtype=np.uint64) for _ in range(8)]
    outs: dict[int, DeviceArray] = {}
    barrier = threading.Barrier(2)

    def worker(indices: range) -> None:
        barrier.wait()
        for i in indices:
            outs[i] = _upload(rt, hosts[i])

    threads = [threading.Thread(target=worker, args=(range(k, 8, 2),)) for k in (0, 1)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    rt.upload_stream.run()
    for i, h in enumerate(hosts):
        assert np.array_equal(outs[i].arr, h)


@pytest.mark.parametrize("pinned", [False, True])
def test_a_staged_upload_stays_off_the_compute_stream_and_is_done_on_return(pinned: bool) -> None:
    rt = _runtime(chunk_bytes=4 * 32)
    rt.pinned_staging = pinned
    host = np.random.default_rng(3).integers(0, 2**63, size=(11, 4), dtype=np.uint64)
    with rt.compute:  # as under the device lock's guard: the compute stream is current
        out = rt.stage(host)
    assert np.array_equal(out.arr, host)  # complete without anyone waiting on a stream afterwards
    assert rt.compute.queue == [] and rt.compute.waits == 0  # nothing queued behind the holder's kernels
    assert out.stream is rt.upload_stream  # its block comes from the upload stream's arena
    host[:] = 0
    assert out.arr.any()  # the device copy is the backend's own


def test_a_stages_parts_are_timed_where_they_wait(monkeypatch: pytest.MonkeyPatch) -> None:
    """`times` puts each wait on its part: here every device copy takes one second of a fake
    clock when it runs, and the host's work none. 11 rows in chunks of 4 through two slots: the
    third chunk waits for the first's copy (slot_wait), the final wait runs the other two (drain)."""
    from cuzk.backends.cuda._runtime import _Parts

    clock = [0.0]
    monkeypatch.setattr(_Parts, "now", staticmethod(lambda: clock[0]))
    rt = _runtime(chunk_bytes=4 * 32)
    host = np.random.default_rng(7).integers(0, 2**63, size=(11, 4), dtype=np.uint64)
    real_set = DeviceArray.set

    def slow_set(self: DeviceArray, h: np.ndarray, stream: LaggingStream) -> None:
        real_set(self, h, stream)
        copy = stream.queue[-1]
        stream.queue[-1] = lambda: (copy(), clock.__setitem__(0, clock[0] + 1.0))

    monkeypatch.setattr(DeviceArray, "set", slow_set)
    times: dict[str, float] = {}
    out = rt.stage(host, times=times)
    assert np.array_equal(out.arr, host)
    assert times == {"alloc": 0.0, "slot_wait": 1.0, "host_copy": 0.0, "enqueue": 0.0, "drain": 2.0}
    assert np.array_equal(rt.stage(host).arr, host)  # without `times`: nothing kept, no error


def test_the_cpu_backend_stages_a_copy_not_a_view() -> None:
    from cuzk.backends.cpu import CpuBackend

    host = np.arange(8, dtype=np.uint64).reshape(2, 4)
    staged = CpuBackend().stage(host)
    assert np.array_equal(staged, host) and not np.shares_memory(staged, host)


@pytest.mark.parametrize("pinned", [False, True])
def test_staged_pieces_land_one_after_another_without_a_host_join(pinned: bool) -> None:
    rt = _runtime(chunk_bytes=4 * 32)
    rt.pinned_staging = pinned
    rng = np.random.default_rng(4)
    pieces = [rng.integers(0, 2**63, size=(n, 4), dtype=np.uint64) for n in (3, 11, 0, 6)]
    out = rt.stage(*pieces)
    assert np.array_equal(out.arr, np.concatenate(pieces))
    assert out.stream is rt.upload_stream
    with pytest.raises(ValueError, match="row shape or dtype"):
        rt.stage(pieces[0], pieces[1].astype(np.int64))


def test_the_cpu_backend_joins_staged_pieces_into_its_own_copy() -> None:
    from cuzk.backends.cpu import CpuBackend

    a, b = np.arange(8, dtype=np.uint64).reshape(2, 4), np.arange(8, 20, dtype=np.uint64).reshape(3, 4)
    staged = CpuBackend().stage(a, b)
    assert np.array_equal(staged, np.concatenate([a, b]))
    assert not np.shares_memory(staged, a) and not np.shares_memory(staged, b)


def test_a_download_waits_for_the_queued_kernels_by_event_before_it_copies() -> None:
    """A synchronous download that finds kernels queued ahead of it held the other worker's
    staging copies until they were done (a 4.3 GB staging beside a run of MSMs took the hold's
    length, H100 2026-12-07); the runtime waits for them by event first, so the copy itself
    finds the compute stream drained."""
    rt = _runtime(chunk_bytes=4 * 32)
    rt.clock = SimpleNamespace(quiet=lambda: None)  # type: ignore[assignment]
    ran: list[str] = []
    rt.compute.queue.append(lambda: ran.append("kernel"))
    drained: list[bool] = []

    class Queued:
        def get(self) -> np.ndarray:
            drained.append(rt.compute.done == len(rt.compute.queue))
            return np.arange(3)

    assert np.array_equal(rt.to_host(Queued()), np.arange(3))
    assert ran == ["kernel"] and drained == [True]


def test_the_msms_host_counts_come_after_an_event_wait() -> None:
    """The MSM's implicit downloads (flatnonzero reads its count to the host) settle first too:
    the big-bucket ranges of each chunk and the split's class indices."""
    from cuzk.backends.cuda import msm

    order: list[str] = []

    def flatnonzero(a: np.ndarray) -> np.ndarray:
        order.append("count")
        return np.flatnonzero(a)

    rt = SimpleNamespace(
        xp=SimpleNamespace(flatnonzero=flatnonzero, stack=np.stack, empty=np.empty),
        settle=lambda: order.append("settle"),
        to_host=np.asarray,
        reserve=lambda n, what: None,
        launch=lambda *a, **k: None,
    )
    counts = np.array([0, msm.BIG_ENTRIES + 1, 3], dtype=np.uint32)
    offsets = np.concatenate([[0], np.cumsum(counts)]).astype(np.uint32)
    big = msm._big_buckets(rt, counts, offsets)  # type: ignore[arg-type]
    assert list(big.index) == [1] and order == ["settle", "count"]
    order.clear()
    msm.scalar_classes(rt, np.zeros((4, 4), dtype=np.uint64))  # type: ignore[arg-type]
    assert order == ["settle", "count", "count"]
