"""cuzk's kernel thread pool (cuzk.algebra._parallel): chunked batches equal the serial path,
errors reach the caller after every chunk has finished, and nesting runs inline."""

from __future__ import annotations

import threading

import numpy as np
import pytest

from cuzk.algebra import FQ, FR, G1, G2
from cuzk.algebra import _parallel as P


def test_chunks_cover_the_range_once() -> None:
    for n in (0, 1, 2, 5, 64, 1000, 1001):
        for parts in (1, 2, 3, 7, 64, 5000):
            ranges = P.chunks(n, parts)
            assert len(ranges) <= max(1, min(parts, n)) or n == 0
            covered = [i for lo, hi in ranges for i in range(lo, hi)]
            assert covered == list(range(n)), (n, parts)
            assert all(hi > lo for lo, hi in ranges)


@pytest.mark.parametrize("threads", [1, 2, 3])
def test_batches_split_over_threads_equal_the_serial_path(
    threads: int, rng: np.random.Generator, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Sizes above SERIAL_WORK so the pool is used: field, inversion (per-chunk Montgomery trick),
    point conversion and MSM window kernels, each against one chunk on the calling thread."""
    a, b = FR.random(40_000, rng), FR.random(40_000, rng)
    b[::97] = 0  # zeros inside the inversion chunks
    pts = G1.random(300, rng)
    jac = G1.add(G1.to_jacobian(pts), G1.to_jacobian(pts[::-1].copy()))
    q = FQ.random(20_000, rng)

    def run() -> list[np.ndarray]:
        return [FR.mul(a, b), FR.inv(b), FQ.to_canonical(q), G1.to_affine(jac), G1.sum(pts)[None]]

    monkeypatch.setattr(P, "max_threads", lambda: threads)
    pooled = run()
    with P.limit_threads(1):
        serial = run()
    for x, y in zip(pooled, serial, strict=True):
        assert np.array_equal(x, y)


def test_g2_msm_on_the_pool_equals_one_thread(rng: np.random.Generator) -> None:
    from cuzk.backends.cpu import CpuBackend

    be = CpuBackend()
    bases = be.load_bases(G2.random(64, rng), "g2")
    scalars = FR.random(64, rng)
    pooled = be.msm(bases, scalars)
    with P.limit_threads(1):
        serial = be.msm(bases, scalars)
    assert G2.eq(pooled[None], serial[None]).all()


def test_an_error_in_a_chunk_reaches_the_caller_after_all_chunks_ran(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(P, "max_threads", lambda: 3)
    finished: list[int] = []
    lock = threading.Lock()

    def task(i: int) -> None:
        if i == 1:
            raise ValueError("chunk 1 failed")
        with lock:
            finished.append(i)

    with pytest.raises(ValueError, match="chunk 1 failed"):
        P.run_all([lambda i=i: task(i) for i in range(6)])
    assert sorted(finished) == [0, 2, 3, 4, 5]


def test_the_first_error_in_task_order_wins(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(P, "max_threads", lambda: 2)

    def fail(msg: str) -> None:
        raise RuntimeError(msg)

    for _ in range(20):  # whichever chunk fails first in time, the first in list order is raised
        with pytest.raises(RuntimeError, match="first"):
            P.run_all([lambda: fail("first"), lambda: fail("second"), lambda: fail("last")])


def test_nested_batches_run_inline_on_pool_threads(monkeypatch: pytest.MonkeyPatch) -> None:
    """A chunk that starts a batch of its own gets one thread: no pool thread waits on the pool."""
    monkeypatch.setattr(P, "max_threads", lambda: 2)
    inner_threads: list[int] = []

    def outer() -> None:
        inner_threads.append(P.threads())
        P.run_all([lambda: None, lambda: None])

    P.run_all([outer, outer, outer, outer])
    assert 1 in inner_threads  # the chunks on pool threads saw one thread


def test_threads_for_small_work_uses_one_thread() -> None:
    with P.threads_for(10):
        assert P.threads() == 1
    with P.threads_for(P.SERIAL_WORK):
        assert P.threads() == P.max_threads()
    assert P.parts_for(1000, 10) == 1
