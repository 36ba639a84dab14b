"""The batch collector (pure, explicit times), the blocking Scheduler (fake clock) and WorkQueue."""

from __future__ import annotations

import itertools
import threading
from dataclasses import dataclass

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from cuzk.engine.request import Priority
from cuzk.engine.scheduler import BatchCollector, Schedulable, Scheduler, WorkQueue
from cuzk.errors import EngineError, QueueFullError, ShuttingDownError, UsageError

N, H, C, L = Priority.NORMAL, Priority.HIGH, Priority.CRITICAL, Priority.LOW


@dataclass
class Job:
    job_id: str
    priority: Priority
    seq: int
    batch_key: str = "porep"
    batchable: bool = True


class Jobs:
    """Makes jobs with increasing seq, as the engine's intake does."""

    def __init__(self) -> None:
        self._seq = itertools.count()

    def __call__(
        self, job_id: str, priority: Priority = N, key: str = "porep", batchable: bool = True
    ) -> Job:
        return Job(job_id, priority, next(self._seq), key, batchable)


def ids(batches: list[list[Schedulable]]) -> list[list[str]]:
    return [[j.job_id for j in b] for b in batches]


@pytest.fixture
def mk() -> Jobs:
    return Jobs()


def test_batch_size_one_dispatches_each_job_at_once_in_priority_order(mk: Jobs) -> None:
    bc = BatchCollector(max_batch_size=1)
    assert bc.push(mk("a"), 0.0) == 0
    assert bc.push(mk("b"), 0.0) == 1
    assert bc.push(mk("c", C), 0.0) == 0  # CRITICAL goes to the front
    assert bc.push(mk("d", L), 0.0) == 3
    assert bc.next_deadline() == 0.0
    assert ids(bc.poll(0.0)) == [["c"], ["a"], ["b"], ["d"]]
    assert len(bc) == 0 and bc.next_deadline() is None and bc.poll(100.0) == []


def test_flush_on_size(mk: Jobs) -> None:
    bc = BatchCollector(max_batch_size=3, max_batch_wait_s=10.0)
    bc.push(mk("a"), 0.0)
    bc.push(mk("b"), 1.0)
    assert bc.poll(1.0) == [] and bc.next_deadline() == 10.0
    bc.push(mk("c"), 2.0)
    assert ids(bc.poll(2.0)) == [["a", "b", "c"]]
    bc.push(mk("d"), 2.0)  # opens the next batch
    assert [j.job_id for j in bc.pending()] == ["d"]


def test_flush_on_wait_timeout_after_the_first_request(mk: Jobs) -> None:
    bc = BatchCollector(max_batch_size=4, max_batch_wait_s=5.0)
    bc.push(mk("a"), 100.0)
    bc.push(mk("b"), 104.0)  # the wait runs from the first job, not the last
    assert bc.next_deadline() == 105.0
    assert bc.poll(104.999) == []
    assert ids(bc.poll(105.0)) == [["a", "b"]]
    assert bc.next_deadline() is None


def test_zero_wait_flushes_at_once(mk: Jobs) -> None:
    bc = BatchCollector(max_batch_size=4, max_batch_wait_s=0.0)
    bc.push(mk("a"), 0.0)
    bc.push(mk("b"), 0.0)
    assert ids(bc.poll(0.0)) == [["a"], ["b"]]


def test_non_batchable_arrival_flushes_then_goes_alone(mk: Jobs) -> None:
    bc = BatchCollector(max_batch_size=4, max_batch_wait_s=10.0)
    bc.push(mk("a"), 0.0)
    bc.push(mk("b"), 0.0)
    bc.push(mk("w", N, key="wpost", batchable=False), 1.0)
    assert ids(bc.poll(1.0)) == [["a", "b"], ["w"]]
    bc.push(mk("c"), 2.0)
    bc.push(mk("w2", N, key="porep", batchable=False), 2.0)  # same key, not batchable: still alone
    assert ids(bc.poll(2.0)) == [["c"], ["w2"]]


def test_higher_priority_arrival_flushes_then_goes_first(mk: Jobs) -> None:
    bc = BatchCollector(max_batch_size=4, max_batch_wait_s=10.0)
    bc.push(mk("a"), 0.0)
    bc.push(mk("b"), 0.0)
    assert bc.push(mk("h", H), 1.0) == 0  # the newcomer is dispatched alone, ahead of the NORMAL batch
    assert ids(bc.poll(1.0)) == [["h"], ["a", "b"]]


def test_lower_or_equal_priority_same_key_joins(mk: Jobs) -> None:
    bc = BatchCollector(max_batch_size=4, max_batch_wait_s=10.0)
    bc.push(mk("a", H), 0.0)
    bc.push(mk("b", N), 0.0)
    bc.push(mk("c", H), 0.0)
    assert ids(bc.flush()) == [["a", "b", "c"]]


def test_other_key_arrival_flushes_and_opens_a_new_batch(mk: Jobs) -> None:
    bc = BatchCollector(max_batch_size=4, max_batch_wait_s=10.0)
    bc.push(mk("a", key="porep-32g"), 0.0)
    bc.push(mk("s", key="snap-32g"), 3.0)
    assert ids(bc.poll(3.0)) == [["a"]]
    assert bc.next_deadline() == 13.0  # the new batch's wait runs from its own first job
    bc.push(mk("s2", key="snap-32g"), 4.0)
    assert ids(bc.poll(13.0)) == [["s", "s2"]]


def test_flush_and_seal_at_close(mk: Jobs) -> None:
    bc = BatchCollector(max_batch_size=4, max_batch_wait_s=10.0)
    bc.push(mk("a"), 0.0)
    bc.push(mk("b"), 0.0)
    bc.push(mk("c", key="other"), 0.0)
    bc.push(mk("d", key="other"), 0.0)
    assert len(bc) == 4
    assert ids(bc.flush()) == [["a", "b"], ["c", "d"]]
    assert len(bc) == 0 and bc.flush() == []


def test_fifo_within_a_class_and_critical_behind_many_normal_is_next(mk: Jobs) -> None:
    bc = BatchCollector(max_batch_size=1)
    for i in range(50):
        bc.push(mk(f"n{i}"), 0.0)
    assert ids(bc.poll(0.0, limit=2)) == [["n0"], ["n1"]]
    assert bc.push(mk("crit", C), 0.0) == 0
    bc.push(mk("h", H), 0.0)
    out = ids(bc.poll(0.0))
    assert out[0] == ["crit"] and out[1] == ["h"]
    assert [b[0] for b in out[2:]] == [f"n{i}" for i in range(2, 50)]


def test_queue_position(mk: Jobs) -> None:
    bc = BatchCollector(max_batch_size=2, max_batch_wait_s=10.0)
    bc.push(mk("a"), 0.0)
    assert bc.push(mk("b"), 0.0) == 1  # sealed by size: a, b
    assert bc.push(mk("c"), 0.0) == 2  # open batch behind the ready one
    assert bc.position("a") == 0
    with pytest.raises(EngineError):
        bc.position("zz")


def test_remove_queued_jobs(mk: Jobs) -> None:
    bc = BatchCollector(max_batch_size=3, max_batch_wait_s=10.0)
    for name in "abc":
        bc.push(mk(name), 0.0)  # ready: a b c
    bc.push(mk("d"), 0.0)  # open: d
    removed = bc.remove("b")
    assert removed is not None and removed.job_id == "b"
    assert bc.remove("b") is None and bc.remove("nope") is None
    assert bc.remove("d") is not None and bc.next_deadline() == 0.0
    assert len(bc) == 2
    assert ids(bc.poll(0.0)) == [["a", "c"]]
    assert bc.remove("a") is None  # dispatched: no longer queued


def test_removing_a_whole_ready_batch(mk: Jobs) -> None:
    bc = BatchCollector(max_batch_size=1)
    bc.push(mk("a"), 0.0)
    bc.push(mk("b"), 0.0)
    bc.remove("a")
    assert ids(bc.poll(0.0)) == [["b"]]


def test_duplicate_job_id_is_refused(mk: Jobs) -> None:
    bc = BatchCollector(max_batch_size=1)
    bc.push(mk("a"), 0.0)
    with pytest.raises(EngineError, match="already queued"):
        bc.push(mk("a"), 0.0)
    assert len(bc) == 1
    bc.poll(0.0)
    bc.push(mk("a"), 0.0)  # dispatched earlier: the id is free again
    assert len(bc) == 1


def test_equal_keys_never_collide() -> None:
    """The reference keyed its GPU queue by (0, 0) for every monolithic job and lost all but one."""
    bc = BatchCollector(max_batch_size=1)
    for i in range(5):
        bc.push(Job(f"j{i}", N, 0, "k", False), 0.0)  # the same seq for all
    assert sorted(b[0].job_id for b in bc.poll(0.0)) == [f"j{i}" for i in range(5)]


def test_bad_settings() -> None:
    for size in (0, -1, 1.5, True):
        with pytest.raises(UsageError):
            BatchCollector(max_batch_size=size)  # type: ignore[arg-type]
    with pytest.raises(UsageError):
        BatchCollector(max_batch_wait_s=-1)
    with pytest.raises(UsageError):
        BatchCollector(max_batch_wait_s=float("nan"))


ops = st.lists(
    st.one_of(
        st.tuples(
            st.just("push"),
            st.sampled_from(list(Priority)),
            st.sampled_from(["k1", "k2"]),
            st.booleans(),
            st.floats(0, 3),
        ),
        st.tuples(st.just("poll"), st.floats(0, 3), st.none() | st.integers(1, 3)),
        st.tuples(st.just("remove"), st.integers(0, 40)),
    ),
    max_size=60,
)


@settings(max_examples=150, deadline=None)
@given(ops=ops, size=st.integers(1, 4), wait=st.sampled_from([0.0, 1.0, 5.0]))
def test_no_job_lost_or_duplicated(ops: list[tuple], size: int, wait: float) -> None:
    bc = BatchCollector(max_batch_size=size, max_batch_wait_s=wait)
    now = 0.0
    pushed: list[Job] = []
    dispatched: list[str] = []
    removed: list[str] = []
    for op in ops:
        if op[0] == "push":
            _, prio, key, batchable, dt = op
            now += dt
            job = Job(f"j{len(pushed)}", prio, len(pushed), key, batchable)
            pushed.append(job)
            bc.push(job, now)
        elif op[0] == "poll":
            now += op[1]
            batches = bc.poll(now, limit=op[2])
            keys = [(-max(j.priority for j in b), min(j.seq for j in b)) for b in batches]
            assert keys == sorted(keys), "ready batches left out of priority/FIFO order"
            for batch in batches:
                assert 1 <= len(batch) <= size
                assert len({j.batch_key for j in batch}) == 1
                if len(batch) > 1:
                    assert all(j.batchable for j in batch)
                dispatched.extend(j.job_id for j in batch)
        elif pushed:
            job_id = f"j{op[1] % len(pushed)}"
            if bc.remove(job_id) is not None:
                removed.append(job_id)
        queued = [j.job_id for j in bc.pending()]
        assert len(bc) == len(queued) == len(set(queued))
        deadline = bc.next_deadline()
        assert (deadline is None) == (len(bc) == 0)
    dispatched.extend(j.job_id for b in bc.flush(now) for j in b)
    everything = dispatched + removed
    assert len(everything) == len(set(everything)), "a job left twice"
    assert sorted(everything) == sorted(j.job_id for j in pushed), "a job was lost"
    assert len(bc) == 0


@settings(max_examples=100, deadline=None)
@given(prios=st.lists(st.sampled_from(list(Priority)), max_size=30))
def test_unbatched_order_is_priority_then_fifo(prios: list[Priority]) -> None:
    bc = BatchCollector(max_batch_size=1)
    jobs = [Job(f"j{i}", p, i) for i, p in enumerate(prios)]
    for job in jobs:
        bc.push(job, 0.0)
    got = [b[0] for b in bc.poll(0.0)]
    assert got == sorted(jobs, key=lambda j: (-j.priority, j.seq))


class FakeClock:
    def __init__(self) -> None:
        self.now = 0.0

    def __call__(self) -> float:
        return self.now


def test_scheduler_waits_for_the_batch_timeout_on_a_fake_clock(mk: Jobs) -> None:
    clock = FakeClock()
    sched = Scheduler(BatchCollector(max_batch_size=4, max_batch_wait_s=10.0), clock=clock)
    sched.push(mk("a"))
    assert sched.next_batch(timeout=0) is None  # not due yet
    got: list[list[str]] = []
    waiting = threading.Event()

    def dispatcher() -> None:
        waiting.set()
        batch = sched.next_batch()
        assert batch is not None
        got.append([j.job_id for j in batch])

    t = threading.Thread(target=dispatcher)
    t.start()
    waiting.wait()
    clock.now = 10.0
    sched.wake()
    t.join()
    assert got == [["a"]]


def test_scheduler_push_wakes_a_waiting_dispatcher(mk: Jobs) -> None:
    sched = Scheduler(BatchCollector(max_batch_size=1), clock=FakeClock())
    out: list[str] = []

    def dispatcher() -> None:
        while (batch := sched.next_batch()) is not None:
            out.extend(j.job_id for j in batch)

    t = threading.Thread(target=dispatcher)
    t.start()
    for i in range(20):
        sched.push(mk(f"j{i}"))
    sched.close()
    t.join()
    assert out == [f"j{i}" for i in range(20)]


def test_scheduler_close_flushes_the_open_batch_and_refuses_new_jobs(mk: Jobs) -> None:
    sched = Scheduler(BatchCollector(max_batch_size=4, max_batch_wait_s=1e9), clock=FakeClock())
    sched.push(mk("a"))
    sched.push(mk("b"))
    assert sched.remove("b") is not None and len(sched) == 1
    sched.close()
    with pytest.raises(ShuttingDownError):
        sched.push(mk("c"))
    batch = sched.next_batch()
    assert batch is not None and [j.job_id for j in batch] == ["a"]
    assert sched.next_batch() is None and sched.closed


def test_scheduler_close_wakes_idle_dispatchers() -> None:
    sched = Scheduler(BatchCollector(), clock=FakeClock())
    results: list[object] = []
    started = threading.Barrier(4)

    def dispatcher() -> None:
        started.wait()
        results.append(sched.next_batch())

    ts = [threading.Thread(target=dispatcher) for _ in range(3)]
    for t in ts:
        t.start()
    started.wait()
    sched.close()
    for t in ts:
        t.join()
    assert results == [None, None, None]


def test_scheduler_timeout_on_the_fake_clock(mk: Jobs) -> None:
    clock = FakeClock()
    sched = Scheduler(BatchCollector(), clock=clock)
    assert sched.next_batch(timeout=0) is None
    assert not sched.closed


def test_work_queue_order_and_equal_keys() -> None:
    q: WorkQueue[str] = WorkQueue()
    q.put((-2, 5, 1), "n5p1")
    q.put((-2, 5, 0), "n5p0")
    q.put((-4, 9, 0), "crit")
    q.put((0, 0), "x1")
    q.put((0, 0), "x2")  # the same key twice: both kept, FIFO
    assert len(q) == 5
    assert [q.get() for _ in range(5)] == ["crit", "n5p0", "n5p1", "x1", "x2"]
    assert q.get(timeout=0) is None


def test_work_queue_remove_if() -> None:
    q: WorkQueue[tuple[str, int]] = WorkQueue()
    for job in ("a", "b"):
        for p in range(3):
            q.put((0, job, p), (job, p))
    assert q.remove_if(lambda item: item[0] == "a") == [("a", 0), ("a", 1), ("a", 2)]
    assert q.remove_if(lambda item: item[0] == "a") == []
    assert [q.get() for _ in range(3)] == [("b", 0), ("b", 1), ("b", 2)]


def test_work_queue_bounded_put_blocks_until_a_get() -> None:
    q: WorkQueue[int] = WorkQueue(maxsize=2)
    q.put((1,), 1)
    q.put((2,), 2)
    with pytest.raises(QueueFullError):
        q.put((3,), 3, timeout=0)
    done = threading.Event()

    def producer() -> None:
        q.put((0,), 0)
        done.set()

    t = threading.Thread(target=producer)
    t.start()
    assert q.get() == 1  # frees a slot: the producer's put goes through
    t.join()
    assert done.is_set() and len(q) == 2
    assert [q.get(), q.get()] == [0, 2]


def test_work_queue_remove_if_frees_room_for_a_blocked_put() -> None:
    q: WorkQueue[int] = WorkQueue(maxsize=1)
    q.put((1,), 1)
    t = threading.Thread(target=q.put, args=((2,), 2))
    t.start()
    assert q.remove_if(lambda x: x == 1) == [1]
    t.join()
    assert q.get() == 2


def test_work_queue_close_drains_then_returns_none_and_wakes_everyone() -> None:
    q: WorkQueue[int] = WorkQueue(maxsize=1)
    q.put((1,), 1)
    blocked_put_error: list[BaseException] = []

    def producer() -> None:
        try:
            q.put((2,), 2)
        except ShuttingDownError as exc:
            blocked_put_error.append(exc)

    t = threading.Thread(target=producer)
    t.start()
    q.close()  # the producer blocked on the full queue, or not yet there: refused either way
    t.join()
    assert len(blocked_put_error) == 1
    assert q.get() == 1 and q.get() is None and q.closed
    with pytest.raises(ShuttingDownError):
        q.put((0,), 0)

    q2: WorkQueue[int] = WorkQueue()
    got: list[object] = []
    consumers = [threading.Thread(target=lambda: got.append(q2.get())) for _ in range(3)]
    for c in consumers:
        c.start()
    q2.close()
    for c in consumers:
        c.join()
    assert got == [None, None, None]


def test_work_queue_bad_maxsize() -> None:
    with pytest.raises(UsageError):
        WorkQueue(maxsize=-1)


def test_scheduler_timeout_on_the_real_clock() -> None:
    sched = Scheduler(BatchCollector())
    assert sched.next_batch(timeout=0.01) is None and not sched.closed


def test_scheduler_many_pushers_and_dispatchers_lose_nothing() -> None:
    sched = Scheduler(BatchCollector(max_batch_size=3, max_batch_wait_s=0.001))
    pushers, per, dispatchers = 4, 50, 3
    seq = itertools.count()
    seq_lock = threading.Lock()
    got: list[str] = []
    got_lock = threading.Lock()
    start = threading.Barrier(pushers + dispatchers)

    def push(p: int) -> None:
        start.wait()
        for i in range(per):
            with seq_lock:  # seq is the submit order, as the engine's intake assigns it
                job = Job(f"p{p}-{i}", list(Priority)[i % 4], next(seq), f"k{i % 2}", i % 5 != 0)
                sched.push(job)

    def dispatch() -> None:
        start.wait()
        while (batch := sched.next_batch()) is not None:
            with got_lock:
                got.extend(j.job_id for j in batch)

    ds = [threading.Thread(target=dispatch) for _ in range(dispatchers)]
    ps = [threading.Thread(target=push, args=(p,)) for p in range(pushers)]
    for t in ds + ps:
        t.start()
    for t in ps:
        t.join()
    sched.close()
    for t in ds:
        t.join()
    assert sorted(got) == sorted(f"p{p}-{i}" for p in range(pushers) for i in range(per))
    assert len(sched) == 0


def test_scheduler_wake_with_an_event_returns_an_empty_batch_not_none(mk: Jobs) -> None:
    sched = Scheduler(BatchCollector(max_batch_size=4, max_batch_wait_s=1e9), clock=FakeClock())
    wake = threading.Event()
    got: list[list | None] = []
    waiting = threading.Event()

    def dispatcher() -> None:
        waiting.set()
        got.append(sched.next_batch(wake=wake))

    t = threading.Thread(target=dispatcher)
    t.start()
    waiting.wait()
    sched.wake()  # a plain wake is not the dispatcher's event: it keeps waiting
    wake.set()
    sched.wake()
    t.join()
    assert got == [[]]  # [] means "look at your own work", None "closed"
    sched.push(mk("a"))
    sched.close()
    assert [j.job_id for j in sched.next_batch(wake=wake) or []] == ["a"]  # a due batch comes first
    assert sched.next_batch(wake=wake) is None  # closed and empty: None even with the event set


def test_a_priority_floor_keeps_lower_batches_queued_in_order(mk: Jobs) -> None:
    """The dispatcher's floor while its devices' backlogs are full (Dispatcher._floor): only
    HIGH and CRITICAL batches come out; the rest keep their order for when it lifts."""
    bc = BatchCollector(max_batch_size=2, max_batch_wait_s=5.0)
    bc.push(mk("n1"), 0.0)
    bc.push(mk("n2"), 0.0)  # a full batch of two: ready
    bc.push(mk("h", H, batchable=False), 0.0)
    bc.push(mk("n3"), 0.0)  # opens a batch, ready at 5.0
    assert bc.next_deadline(min_priority=H) == 0.0
    assert ids(bc.poll(0.0, min_priority=H)) == [["h"]]
    assert bc.next_deadline(min_priority=H) is None  # nothing of HIGH or more: wait for a wake
    assert bc.poll(10.0, min_priority=H) == [] and len(bc) == 3
    assert bc.next_deadline() == 0.0
    assert ids(bc.poll(10.0)) == [["n1", "n2"], ["n3"]]


def test_a_closed_scheduler_under_a_floor_waits_for_the_floor_not_none(mk: Jobs) -> None:
    """Closed with NORMAL jobs queued, a floored next_batch must not say "closed and empty"
    (the dispatcher would stop and strand them): it waits for its event, then the floor lifts."""
    sched = Scheduler(BatchCollector(max_batch_size=1), clock=FakeClock())
    wake = threading.Event()
    sched.push(mk("n"))
    sched.push(mk("h", H))
    sched.close()
    assert [j.job_id for j in sched.next_batch(wake=wake, min_priority=H) or []] == ["h"]
    got: list[list | None] = []
    waiting = threading.Event()

    def dispatcher() -> None:
        waiting.set()
        got.append(sched.next_batch(wake=wake, min_priority=H))

    t = threading.Thread(target=dispatcher)
    t.start()
    waiting.wait()
    wake.set()
    sched.wake()
    t.join()
    assert got == [[]]
    assert [j.job_id for j in sched.next_batch(wake=wake) or []] == ["n"]
    assert sched.next_batch() is None
