"""The SRS manager with a fake loader and a fake clock: load once, refcounts, LRU, idle time, evict, status."""

from __future__ import annotations

import threading
from collections.abc import Hashable
from typing import Any

import pytest

from cuzk.engine.memory import MemoryBudget
from cuzk.engine.srs import SrsManager
from cuzk.errors import (
    BudgetExceededError,
    DeadlineExceededError,
    EngineError,
    JobCancelledError,
    ParamsError,
    UsageError,
)


class FakeClock:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


class FakeLoader:
    """Sizes per key; records loads and unloads; a load can be held on a gate or made to fail."""

    def __init__(self, sizes: dict[Hashable, int]) -> None:
        self.sizes = sizes
        self.loads: list[Hashable] = []
        self.unloads: list[Hashable] = []
        self.gate: threading.Event | None = None
        self.entered = threading.Event()
        self.fail: dict[Hashable, BaseException] = {}
        self.budget: MemoryBudget | None = None
        self.used_during_load: list[int] = []

    def size(self, key: Hashable) -> int:
        return self.sizes[key]

    def load(self, key: Hashable) -> Any:
        self.loads.append(key)
        if self.budget is not None:
            self.used_during_load.append(self.budget.in_flight())
        self.entered.set()
        if self.gate is not None:
            self.gate.wait()
        if key in self.fail:
            raise self.fail[key]
        return f"value-of-{key}"

    def unload(self, key: Hashable, value: Any) -> None:
        assert value == f"value-of-{key}"
        self.unloads.append(key)


def make(
    total: int = 100, min_idle_s: float = 60.0, **sizes: int
) -> tuple[SrsManager, FakeLoader, MemoryBudget, FakeClock]:
    budget = MemoryBudget(total)
    table: dict[Hashable, int] = {"a": 40, "b": 30, "c": 20}
    loader = FakeLoader(dict(sizes.items()) if sizes else table)
    loader.budget = budget
    clock = FakeClock()
    return SrsManager(budget, loader, min_idle_s=min_idle_s, clock=clock), loader, budget, clock


def tiers(srs: SrsManager) -> dict[Hashable, tuple[str, int, int]]:
    return {s.key: (s.tier, s.size_bytes, s.ref_count) for s in srs.status()}


def test_acquire_loads_once_reserves_first_and_counts_refs() -> None:
    srs, loader, budget, _ = make()
    with srs.acquire("a") as lease:
        assert lease.value == "value-of-a"
        assert loader.used_during_load == [40]  # reserved before the load ran
        with srs.acquire("a") as lease2:
            assert lease2.value == "value-of-a"
            assert tiers(srs) == {"a": ("hot", 40, 2)}
        assert tiers(srs) == {"a": ("hot", 40, 1)}
    lease.release()  # a second release does nothing
    assert tiers(srs) == {"a": ("hot", 40, 0)}
    assert loader.loads == ["a"] and budget.in_flight() == 40 and budget.snapshot()["srs"] == 40


def test_the_manager_becomes_the_budgets_evictor() -> None:
    srs, _, budget, _ = make()
    assert budget.evictor == srs.evict_idle
    other = MemoryBudget(10, evictor=lambda n: 0)
    SrsManager(other, FakeLoader({}))
    assert other.evictor is not None and other.evictor(1) == 0  # an evictor already set is kept


def test_concurrent_acquires_load_once() -> None:
    srs, loader, budget, _ = make()
    loader.gate = threading.Event()
    n = 8
    leases: list[Any] = []
    lock = threading.Lock()
    barrier = threading.Barrier(n + 1)

    def job() -> None:
        barrier.wait()
        lease = srs.acquire("a")
        with lock:
            leases.append(lease)

    ts = [threading.Thread(target=job) for _ in range(n)]
    for t in ts:
        t.start()
    barrier.wait()
    loader.entered.wait()  # one of them is loading; the others wait for it (or are about to)
    assert [s.loading for s in srs.status()] == [True]
    loader.gate.set()
    for t in ts:
        t.join()
    assert loader.loads == ["a"] and len(leases) == n
    assert tiers(srs) == {"a": ("hot", 40, n)} and budget.in_flight() == 40
    for lease in leases:
        lease.release()
    assert tiers(srs) == {"a": ("hot", 40, 0)}


def test_load_failure_reaches_every_waiter_and_leaves_no_half_entry() -> None:
    srs, loader, budget, _ = make()
    loader.gate = threading.Event()
    loader.fail["a"] = ParamsError("a.params is truncated")
    n = 5
    errors: list[BaseException] = []
    lock = threading.Lock()
    barrier = threading.Barrier(n + 1)

    def job() -> None:
        barrier.wait()
        try:
            srs.acquire("a")
        except ParamsError as exc:
            with lock:
                errors.append(exc)

    ts = [threading.Thread(target=job) for _ in range(n)]
    for t in ts:
        t.start()
    barrier.wait()
    loader.entered.wait()
    loader.gate.set()
    for t in ts:
        t.join()
    # Waiters that arrived during the failed load get its error; a late one may load again (and fail).
    assert len(errors) == n and all("truncated" in str(e) for e in errors)
    assert 1 <= len(loader.loads) <= n
    assert srs.status() == [] and budget.in_flight() == 0
    del loader.fail["a"]
    loader.gate = None
    with srs.acquire("a") as lease:  # a later acquire tries again
        assert lease.value == "value-of-a"


def test_failed_load_of_a_registered_key_stays_cold() -> None:
    srs, loader, budget, _ = make()
    srs.register("a")
    assert tiers(srs) == {"a": ("cold", 0, 0)}
    loader.fail["a"] = OSError("disk gone")
    with pytest.raises(OSError, match="disk gone"):
        srs.acquire("a")
    assert tiers(srs) == {"a": ("cold", 0, 0)} and budget.in_flight() == 0


def test_entry_larger_than_the_budget_fails_at_once() -> None:
    srs, loader, budget, _ = make(total=100, big=101)
    with pytest.raises(BudgetExceededError):
        srs.acquire("big")
    assert loader.loads == [] and srs.status() == [] and budget.in_flight() == 0


def test_lru_eviction_when_the_budget_is_short() -> None:
    srs, loader, budget, clock = make(total=100)
    for key in ("a", "b", "c"):  # 40 + 30 + 20 = 90
        srs.acquire(key).release()
        clock.now += 100
    srs.acquire("b").release()  # b is now the most recently used: LRU order a, c, b
    clock.now += 100
    loader.sizes["d"] = 45  # needs 35 more than the 10 free
    with srs.acquire("d"):
        assert loader.unloads == ["a"]  # a alone frees 40 >= 35
        assert tiers(srs) == {
            "a": ("cold", 0, 0),
            "b": ("hot", 30, 0),
            "c": ("hot", 20, 0),
            "d": ("hot", 45, 1),
        }
        assert budget.in_flight() == 95 and budget.peak() <= 100
    loader.sizes["e"] = 50  # 5 free: evict c (20), then b (30)
    clock.now += 100
    srs.acquire("e").release()
    assert loader.unloads == ["a", "c", "b"]
    assert budget.in_flight() == 95 and budget.peak() <= 100


def test_never_evicts_an_entry_in_use() -> None:
    srs, loader, budget, clock = make(total=100)
    held = srs.acquire("a")
    srs.acquire("b").release()
    clock.now += 1000
    assert srs.evict_idle(100) == 30  # only b: a is in use
    assert loader.unloads == ["b"]
    with pytest.raises(EngineError, match="in use by 1 job"):
        srs.evict("a")
    assert tiers(srs)["a"] == ("hot", 40, 1)
    loader.sizes["x"] = 70  # 40 held by a, 30 would be needed from it: cannot fit now
    with pytest.raises(DeadlineExceededError):
        srs.acquire("x", timeout=0)
    assert "x" not in tiers(srs) and loader.unloads == ["b"] and budget.in_flight() == 40
    held.release()
    clock.now += 1000
    with srs.acquire("x"):
        assert loader.unloads == ["b", "a"]


def test_min_idle_time_protects_recent_entries() -> None:
    srs, loader, _, clock = make(total=100, min_idle_s=60.0)
    srs.acquire("a").release()
    clock.now += 59.0
    assert srs.evict_idle(1) == 0 and loader.unloads == []
    clock.now += 1.0
    assert srs.evict_idle(1) == 40 and loader.unloads == ["a"]


def test_cancelled_acquire_waiting_for_memory_hands_the_load_on() -> None:
    srs, loader, budget, _ = make(total=100, min_idle_s=60.0)
    other = budget.reserve(90)
    cancel = threading.Event()
    cancel.set()
    with pytest.raises(JobCancelledError):
        srs.acquire("a", cancelled=cancel)
    assert srs.status() == [] and loader.loads == []
    other.release()
    with srs.acquire("a") as lease:  # a later caller loads it
        assert lease.value == "value-of-a" and loader.loads == ["a"]


def test_evict_on_request_frees_and_reports_the_bytes() -> None:
    srs, loader, budget, _ = make()
    assert srs.evict("a") == (False, 0)  # unknown
    srs.acquire("a").release()
    assert budget.in_flight() == 40
    assert srs.evict("a") == (True, 40)  # no idle wait for an explicit request
    assert budget.in_flight() == 0 and loader.unloads == ["a"]
    assert srs.evict("a") == (False, 0)
    assert tiers(srs) == {"a": ("cold", 0, 0)}


def test_preload_and_status_report_true_figures() -> None:
    srs, loader, _, clock = make()
    loader.gate = None
    assert srs.status() == []
    already, seconds = srs.preload("a")
    assert already is False and seconds > 0.0
    again, seconds2 = srs.preload("a")
    assert again is True and seconds2 == seconds and loader.loads == ["a"]
    clock.now += 12.5
    (st,) = srs.status()
    assert (st.key, st.tier, st.size_bytes, st.ref_count, st.loads) == ("a", "hot", 40, 0, 1)
    assert st.last_used_s_ago == 12.5 and st.load_seconds == seconds and not st.loading
    srs.evict("a")
    srs.preload("a")
    (st,) = srs.status()
    assert st.loads == 2 and st.tier == "hot"


def test_many_threads_acquire_and_evict_within_the_budget() -> None:
    """Jobs on four keys whose SRS do not all fit: the budget is never exceeded, every lease is real."""
    srs, loader, budget, _ = make(total=100, min_idle_s=0.0, a=40, b=30, c=50, d=60)
    n, rounds = 8, 25
    barrier = threading.Barrier(n)
    bad: list[str] = []

    def job(i: int) -> None:
        barrier.wait()
        for r in range(rounds):
            key = "abcd"[(i + r) % 4]
            with srs.acquire(key) as lease:
                if lease.value != f"value-of-{key}":
                    bad.append(key)

    ts = [threading.Thread(target=job, args=(i,)) for i in range(n)]
    for t in ts:
        t.start()
    for t in ts:
        t.join()
    assert bad == [] and budget.peak() <= 100
    assert all(s.ref_count == 0 for s in srs.status())
    assert len(loader.loads) - len(loader.unloads) == sum(1 for s in srs.status() if s.tier == "hot")
    assert budget.in_flight() == sum(s.size_bytes for s in srs.status())


class WarmLoader(FakeLoader):
    """A loader with the optional host-copy hooks: cold -> warm (host copy) -> hot."""

    def __init__(self, sizes: dict[Hashable, int], host_sizes: dict[Hashable, int]) -> None:
        super().__init__(sizes)
        self.host_sizes = host_sizes
        self.host_loads: list[Hashable] = []
        self.host_drops: list[Hashable] = []

    def host_size(self, key: Hashable) -> int:
        return self.host_sizes[key]

    def load_host(self, key: Hashable) -> None:
        self.host_loads.append(key)

    def drop_host(self, key: Hashable) -> None:
        self.host_drops.append(key)


def make_warm(total: int = 100) -> tuple[SrsManager, WarmLoader, MemoryBudget, FakeClock]:
    budget = MemoryBudget(total)
    loader = WarmLoader({"a": 30, "b": 20}, {"a": 25, "b": 15})
    clock = FakeClock()
    return SrsManager(budget, loader, min_idle_s=10.0, clock=clock), loader, budget, clock


def test_warm_tier_steps_up_and_down() -> None:
    srs, loader, budget, _ = make_warm()
    assert srs.warm_capable
    with srs.acquire("a"):
        assert (loader.host_loads, loader.loads) == (["a"], ["a"])
        (st,) = srs.status()
        assert (st.tier, st.size_bytes, st.host_bytes) == ("hot", 55, 25)
        assert budget.snapshot()["srs"] == 30 and budget.snapshot()["srs-host"] == 25
    assert srs.evict("a", tier="warm") == (True, 30)
    assert tiers(srs) == {"a": ("warm", 25, 0)} and budget.in_flight() == 25
    assert srs.evict("a", tier="warm") == (False, 0)  # already warm
    with srs.acquire("a"):  # from warm: only the hot part loads again
        assert (loader.host_loads, loader.loads) == (["a"], ["a", "a"])
    assert srs.evict("a") == (True, 55)
    assert tiers(srs) == {"a": ("cold", 0, 0)} and budget.in_flight() == 0
    assert loader.unloads == ["a", "a"] and loader.host_drops == ["a"]


def test_preload_warm_and_bad_tiers() -> None:
    srs, loader, budget, _ = make_warm()
    assert srs.preload("b", tier="warm") == (False, srs.status()[0].host_load_seconds)
    assert tiers(srs) == {"b": ("warm", 15, 0)} and loader.loads == []
    assert srs.preload("b", tier="warm")[0] is True
    already, _ = srs.preload("b")
    assert already is False and tiers(srs) == {"b": ("hot", 35, 0)}
    with pytest.raises(UsageError):
        srs.preload("b", tier="lukewarm")
    with pytest.raises(UsageError):
        srs.evict("b", tier="hot")
    plain, _, _, _ = make()
    with pytest.raises(UsageError, match="no warm tier"):
        plain.preload("a", tier="warm")
    assert budget.in_flight() == 35


def test_evict_idle_frees_hot_parts_before_host_copies() -> None:
    srs, loader, budget, clock = make_warm(total=100)
    srs.acquire("a").release()  # 55
    clock.now += 1
    srs.acquire("b").release()  # 35: 90 in all
    clock.now += 100
    assert srs.evict_idle(40) == 50  # both hot parts (a first: older), host copies kept
    assert loader.unloads == ["a", "b"] and loader.host_drops == []
    assert tiers(srs) == {"a": ("warm", 25, 0), "b": ("warm", 15, 0)}
    assert srs.evict_idle(60) == 40  # still short: the host copies go too, oldest first
    assert loader.host_drops == ["a", "b"] and budget.in_flight() == 0


def test_failed_hot_load_keeps_the_warm_copy() -> None:
    srs, loader, budget, _ = make_warm()
    loader.fail["a"] = OSError("device out of memory")
    with pytest.raises(OSError, match="device out of memory"):
        srs.acquire("a")
    assert tiers(srs) == {"a": ("warm", 25, 0)} and budget.in_flight() == 25
    del loader.fail["a"]
    with srs.acquire("a") as lease:
        assert lease.value == "value-of-a" and loader.host_loads == ["a"]


def test_a_load_waiting_for_memory_proceeds_when_a_lease_ends() -> None:
    """Releasing the last lease wakes the budget's waiters, whose evictor can now take the entry."""
    srs, loader, budget, _ = make(total=100, min_idle_s=0.0, a=60, x=70)
    held = srs.acquire("a")
    got = threading.Event()

    def job() -> None:
        with srs.acquire("x"):
            got.set()

    t = threading.Thread(target=job)
    t.start()
    with budget._cond:  # the load of x is queued for memory
        budget._cond.wait_for(lambda: len(budget._waiters) == 1)
    assert not got.is_set() and loader.unloads == []
    held.release()
    t.join()
    assert got.is_set() and loader.unloads == ["a"]
    assert tiers(srs) == {"a": ("cold", 0, 0), "x": ("hot", 70, 0)} and budget.peak() <= 100


def test_listeners_hear_of_an_entry_going_idle_or_giving_memory_back() -> None:
    srs, _, _, clock = make(min_idle_s=10.0)
    calls: list[str] = []
    srs.add_listener(lambda: calls.append("changed"))
    lease = srs.acquire("a")
    with srs.acquire("a"):
        pass
    assert calls == []  # one lease still held: not idle
    lease.release()
    assert calls == ["changed"]
    assert srs.evict("a", tier="warm") == (True, 40)
    assert calls == ["changed"] * 2
    srs.acquire("b").release()
    assert srs.evict_idle(1) == 0 and calls == ["changed"] * 3  # too recent: nothing freed, no call
    clock.now += 10.0
    assert srs.evict_idle(1) == 30 and calls == ["changed"] * 4
