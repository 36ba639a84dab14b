"""The device lock: what it counts as GPU busy. A backend with a device clock gives the clock's
intervals (and device_busy spans on their own lane); one without (the CPU) gives the hold."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager

import pytest

from cuzk.backends import get_backend
from cuzk.engine.gpu import DeviceLock, busy_seconds
from cuzk.instrument import CollectSink, Timeline


class ClockedBackend:
    """Reports two runs of kernels inside whatever region it measures."""

    def __init__(self) -> None:
        self.runs = [(100.0, 100.5), (101.0, 101.25)]

    @contextmanager
    def device_clock(self) -> Iterator[list[tuple[float, float]]]:
        out: list[tuple[float, float]] = []
        yield out
        out.extend(self.runs)


def test_a_clocked_device_counts_its_runs_not_the_hold() -> None:
    lock, sink = DeviceLock(3), CollectSink()
    tl = Timeline("job-1", sinks=[sink])
    with lock.hold(tl, ClockedBackend(), worker="w", partition=0):
        pass
    assert lock.snapshot() == [(100.0, 100.5), (101.0, 101.25)]
    busy = [s for s in tl.spans if s.name == "device_busy"]
    assert [(s.start, s.end) for s in busy] == [(100.0, 100.5), (101.0, 101.25)]
    assert {s.attrs["lane"] for s in busy} == {"device 3 busy"} and busy[0].attrs["partition"] == 0
    assert [s.name for _job, s in sink.drain()].count("device_busy") == 2  # timing lines too
    assert busy_seconds(lock.snapshot(), 100.25, 101.1) == pytest.approx(0.35)


def test_a_device_without_a_clock_counts_the_hold() -> None:
    lock, tl = DeviceLock(0), Timeline("job-2", sinks=[])
    with lock.hold(tl, get_backend("cpu")):
        pass
    (hold,) = [s for s in tl.spans if s.name == "device_lock"]
    ((start, end),) = lock.snapshot()
    assert start == hold.start and end >= hold.end
    assert not [s for s in tl.spans if s.name == "device_busy"]


def test_a_failed_hold_releases_the_lock_and_counts_nothing_of_the_clock() -> None:
    class Failing(ClockedBackend):
        @contextmanager
        def device_clock(self) -> Iterator[list[tuple[float, float]]]:
            yield []  # a region that raised: the clock reads no events

    lock, tl = DeviceLock(0), Timeline(sinks=[])
    with pytest.raises(ValueError), lock.hold(tl, Failing()):
        raise ValueError("kernel failed")
    assert lock.snapshot() == []
    with lock.hold(tl, get_backend("cpu")):  # not left locked
        pass


def test_waiters_take_the_device_by_priority_then_arrival() -> None:
    """A CRITICAL unit that reaches the lock after NORMAL ones goes next (issue 34: a
    WinningPoSt partition must not wait behind PoRep partitions that each hold it for seconds)."""
    import threading

    lock, be = DeviceLock(0), get_backend("cpu")
    order: list[str] = []
    holding, release = threading.Event(), threading.Event()

    def holder() -> None:
        with lock.hold(Timeline(sinks=[]), be):
            holding.set()
            release.wait()

    def waiter(name: str, priority: int) -> None:
        with lock.hold(Timeline(sinks=[]), be, priority=priority):
            order.append(name)

    first = threading.Thread(target=holder)
    first.start()
    assert holding.wait(10)
    threads = []
    for n, (name, prio) in enumerate([("normal-1", 1), ("normal-2", 1), ("critical", 3), ("low", 0)]):
        t = threading.Thread(target=waiter, args=(name, prio))
        t.start()
        threads.append(t)
        assert lock.waiting(n + 1, timeout=10)  # each arrives before the next: a fixed arrival order
    release.set()
    for t in (first, *threads):
        t.join(10)
    assert order == ["critical", "normal-1", "normal-2", "low"]
