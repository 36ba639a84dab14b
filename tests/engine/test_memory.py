"""The byte budget: sizes, reserve/release, waiting, eviction, cancellation, and a many-thread stress run."""

from __future__ import annotations

import threading
from collections.abc import Callable

import pytest

from cuzk.engine.memory import MemoryBudget, auto_budget
from cuzk.errors import BudgetExceededError, DeadlineExceededError, JobCancelledError, UsageError

GiB = 2**30


def test_auto_budget_reads_mem_available(tmp_path) -> None:
    meminfo = tmp_path / "meminfo"
    meminfo.write_text("MemTotal:       1000000 kB\nMemFree:  10 kB\nMemAvailable:    500000 kB\n")
    assert auto_budget(1024, meminfo_path=str(meminfo)) == 500000 * 1024 - 1024
    assert auto_budget("100MiB", meminfo_path=str(meminfo)) == 500000 * 1024 - (100 << 20)
    with pytest.raises(UsageError, match="margin"):
        auto_budget(500000 * 1024, meminfo_path=str(meminfo))


def test_auto_budget_on_this_machine() -> None:
    assert auto_budget(0) > 0


def test_reserve_partial_release_and_peak() -> None:
    budget = MemoryBudget(100)
    a = budget.reserve(60, tag="abc")
    b = budget.reserve(30, tag="rest")
    assert budget.in_flight() == 90 and budget.peak() == 90
    assert budget.snapshot() == {"total": 100, "used": 90, "available": 10, "peak": 90, "waiters": 0,
                                 "abc": 60, "rest": 30}  # fmt: skip
    a.release(50)
    assert a.nbytes == 10 and budget.in_flight() == 40
    a.release(50)  # more than is held: gives back what is left
    assert a.nbytes == 0 and budget.in_flight() == 30
    a.release()
    a.release()  # idempotent
    assert budget.in_flight() == 30 and budget.peak() == 90
    with b:
        pass
    assert budget.in_flight() == 0 and b.nbytes == 0
    assert budget.snapshot()["peak"] == 90 and "abc" not in budget.snapshot()


def test_bad_arguments() -> None:
    with pytest.raises(UsageError):
        MemoryBudget(0)
    budget = MemoryBudget(10)
    for bad in (-1, 1.5, True):
        with pytest.raises(UsageError):
            budget.reserve(bad)  # type: ignore[arg-type]
    with pytest.raises(UsageError):
        budget.reserve(1, tag="total")
    res = budget.reserve(5)
    with pytest.raises(UsageError):
        res.release(-1)
    assert budget.in_flight() == 5 and budget.snapshot()["untagged"] == 5


def _recorder(calls: list[int]) -> Callable[[int], int]:
    """An evictor that frees nothing and records what it was asked for."""

    def evictor(short: int) -> int:
        calls.append(short)
        return 0

    return evictor


def test_larger_than_total_fails_at_once() -> None:
    calls: list[int] = []
    budget = MemoryBudget(100, evictor=_recorder(calls))
    with pytest.raises(
        BudgetExceededError, match="101 bytes for porep exceed the whole memory budget of 100"
    ):
        budget.reserve(101, tag="porep")
    with pytest.raises(BudgetExceededError):
        budget.try_reserve(101)
    assert calls == [] and budget.in_flight() == 0


def test_try_reserve() -> None:
    budget = MemoryBudget(10)
    r = budget.try_reserve(8)
    assert r is not None and budget.in_flight() == 8
    assert budget.try_reserve(3) is None
    r.release()
    assert budget.try_reserve(10) is not None


def test_evictor_called_when_short() -> None:
    budget = MemoryBudget(100)
    held = {"srs": budget.reserve(70, tag="srs")}
    asked: list[int] = []

    def evictor(short: int) -> int:
        asked.append(short)
        res = held.pop("srs")
        n = res.nbytes
        res.release()
        return n

    budget.set_evictor(evictor)
    r = budget.reserve(50, timeout=0)
    assert asked == [20] and r.nbytes == 50 and budget.in_flight() == 50


def test_evictor_freeing_nothing_then_timeout() -> None:
    asked: list[int] = []
    budget = MemoryBudget(100, evictor=_recorder(asked))
    budget.reserve(90)
    with pytest.raises(DeadlineExceededError, match="waiting for 20 bytes"):
        budget.reserve(20, timeout=0)
    assert asked == [10]
    assert budget.in_flight() == 90 and budget.snapshot()["waiters"] == 0


def _wait_for_waiters(budget: MemoryBudget, n: int) -> None:
    """Block until `n` reserves are queued (the budget's condition is notified on every change)."""
    with budget._cond:
        budget._cond.wait_for(lambda: len(budget._waiters) >= n)


def test_blocking_reserve_woken_by_release() -> None:
    budget = MemoryBudget(100)
    first = budget.reserve(80)
    got: list[int] = []

    def waiter() -> None:
        with budget.reserve(50) as r:
            got.append(r.nbytes)

    t = threading.Thread(target=waiter)
    t.start()
    _wait_for_waiters(budget, 1)
    assert got == []
    first.release(40)  # 40 used: 50 fits now
    t.join()
    assert got == [50] and budget.peak() == 90 and budget.in_flight() == 40


def test_cancelled_while_waiting() -> None:
    budget = MemoryBudget(10)
    budget.reserve(10)
    cancel = threading.Event()
    errors: list[BaseException] = []

    def waiter() -> None:
        try:
            budget.reserve(5, cancelled=cancel)
        except JobCancelledError as exc:
            errors.append(exc)

    t = threading.Thread(target=waiter)
    t.start()
    _wait_for_waiters(budget, 1)
    cancel.set()
    budget.wake()
    t.join()
    assert len(errors) == 1 and "cancelled while waiting for 5 bytes" in str(errors[0])
    assert budget.in_flight() == 10 and budget.snapshot()["waiters"] == 0


def test_already_cancelled_fails_even_if_it_fits() -> None:
    cancel = threading.Event()
    cancel.set()
    with pytest.raises(JobCancelledError):
        MemoryBudget(10).reserve(1, cancelled=cancel)


def test_timeout_while_waiting() -> None:
    budget = MemoryBudget(10)
    budget.reserve(10)
    with pytest.raises(DeadlineExceededError):
        budget.reserve(1, timeout=0.01)
    assert budget.snapshot()["waiters"] == 0


def test_waiters_are_served_in_arrival_order() -> None:
    """A big request is not starved by small ones arriving after it."""
    budget = MemoryBudget(100)
    base = budget.reserve(100)
    order: list[str] = []
    got = {"big": threading.Event(), "small": threading.Event()}

    def take(name: str, n: int, hold: threading.Event | None) -> None:
        r = budget.reserve(n)
        order.append(name)
        got[name].set()
        if hold is not None:
            hold.wait()
        r.release()

    release_big = threading.Event()
    big = threading.Thread(target=take, args=("big", 90, release_big))
    big.start()
    _wait_for_waiters(budget, 1)
    small = threading.Thread(target=take, args=("small", 20, None))
    small.start()
    _wait_for_waiters(budget, 2)
    assert budget.try_reserve(1) is None  # someone waits: no overtaking, even by try_reserve
    base.release(20)  # 20 free: the small one would fit, but the big one is first in line
    base.release()
    got["big"].wait()
    assert order == ["big"] and not got["small"].is_set()
    release_big.set()
    big.join()
    small.join()
    assert order == ["big", "small"] and budget.in_flight() == 0


def test_stress_in_flight_never_exceeds_total() -> None:
    """Many threads reserving, partly releasing and releasing: 3x more demand than fits."""
    total = 1000
    budget = MemoryBudget(total)
    threads_n, rounds = 12, 40
    sizes = [100, 250, 400, 50, 333, 1000]
    violations: list[int] = []
    count = [0]
    count_lock = threading.Lock()
    start = threading.Barrier(threads_n)

    def worker(i: int) -> None:
        start.wait()
        for r in range(rounds):
            n = sizes[(i + r) % len(sizes)]
            res = budget.reserve(n, tag=f"w{i % 3}")
            used = budget.in_flight()
            if used > total:
                violations.append(used)
            with count_lock:
                count[0] += 1
            res.release(n // 2)  # the a/b/c share
            res.release()

    ts = [threading.Thread(target=worker, args=(i,)) for i in range(threads_n)]
    for t in ts:
        t.start()
    for t in ts:
        t.join()
    assert violations == []
    assert count[0] == threads_n * rounds
    assert budget.in_flight() == 0 and 0 < budget.peak() <= total
    assert budget.snapshot() == {"total": total, "used": 0, "available": total, "peak": budget.peak(),
                                 "waiters": 0}  # fmt: skip


def test_unfair_budget_lets_a_fitting_request_pass_a_waiter() -> None:
    budget = MemoryBudget(100, fair=False)
    base = budget.reserve(50)
    got = threading.Event()

    def big() -> None:
        with budget.reserve(90):
            got.set()

    t = threading.Thread(target=big)
    t.start()
    _wait_for_waiters(budget, 1)
    small = budget.try_reserve(30)  # fits: goes ahead of the waiting 90
    assert small is not None and budget.in_flight() == 80 and not got.is_set()
    small.release()
    base.release()
    t.join()
    assert got.is_set() and budget.in_flight() == 0
