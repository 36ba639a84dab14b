"""The routing policy on small fleets, every case checkable by hand."""

from __future__ import annotations

from cuzk.cluster.policy import (
    CRITICAL,
    HIGH,
    LOW,
    NORMAL,
    HotFirst,
    JobSpec,
    LeastLoaded,
    NodeView,
    RoundRobin,
    TableCosts,
    admissible,
    plan,
)

COSTS = TableCosts(
    partition={"porep": 4.0, "wpost": 4.0, "winning": 0.1},
    load={"porep": 60.0, "wpost": 80.0, "winning": 0.25},
    size={"porep": 44, "wpost": 57, "winning": 1},
)


def job(circuit: str = "porep", priority: int = NORMAL, seq: int = 0, partitions: int = 1) -> JobSpec:
    return JobSpec(f"j{seq}", circuit, priority, partitions, seq)


def test_hot_node_wins_over_an_idle_cold_one() -> None:
    nodes = [NodeView("a"), NodeView("b", hot=frozenset({"porep"}), in_flight=1, backlog_s={NORMAL: 8.0})]
    assert HotFirst().choose(job(), nodes, COSTS) == "b"


def test_full_hot_node_sends_the_job_to_the_soonest_load() -> None:
    full = NodeView("hot", hot=frozenset({"porep"}), in_flight=2, backlog_s={NORMAL: 40.0})
    busy_loader = NodeView("b", load_queue_s=70.0)  # ready in 70 + 60 s
    loading = NodeView("c", loading={"porep": 10.0}, load_queue_s=10.0)  # ready in 10 s
    idle = NodeView("d")  # ready in 60 s
    assert HotFirst().choose(job(), [full, busy_loader, loading, idle], COSTS) == "c"
    # the full hot node starts it in 40 s, a load on d takes 60 s: the job waits in the front
    assert HotFirst().choose(job(), [full, busy_loader, idle], COSTS) is None
    swamped = NodeView("hot", hot=frozenset({"porep"}), in_flight=2, backlog_s={NORMAL: 100.0})
    assert HotFirst().choose(job(), [swamped, busy_loader, idle], COSTS) == "d"


def test_among_hot_nodes_the_least_work_ahead_wins() -> None:
    hot = frozenset({"porep"})
    a = NodeView("a", hot=hot, in_flight=1, backlog_s={NORMAL: 12.0})
    b = NodeView("b", hot=hot, in_flight=1, backlog_s={NORMAL: 4.0})
    c = NodeView("c", hot=hot, in_flight=1, backlog_s={LOW: 100.0})  # LOW work does not delay NORMAL
    assert HotFirst().choose(job(), [a, b, c], COSTS) == "c"


def test_critical_takes_the_first_boundary_anywhere_even_on_full_nodes() -> None:
    a = NodeView("a", in_flight=2, current_s=3.0, backlog_s={NORMAL: 40.0}, hot=frozenset({"winning"}))
    b = NodeView("b", in_flight=2, current_s=0.5, backlog_s={NORMAL: 40.0}, hot=frozenset({"winning"}))
    assert HotFirst().choose(job("winning", CRITICAL), [a, b], COSTS) == "b"
    # a cold node whose boundary is near but whose load takes 0.25 s still beats a 3 s wait
    c = NodeView("c", in_flight=2, current_s=0.1, backlog_s={NORMAL: 40.0})
    assert HotFirst().choose(job("winning", CRITICAL), [a, c], COSTS) == "c"


def test_admission_slots_memory_and_outranking() -> None:
    full = NodeView("a", in_flight=2, backlog_s={NORMAL: 8.0})
    assert not admissible(job(), full, COSTS)
    assert admissible(job("wpost", HIGH), full, COSTS)  # outranks everything queued: runs next
    assert not admissible(job("wpost", HIGH), NodeView("a", in_flight=2, backlog_s={HIGH: 4.0}), COSTS)
    assert not admissible(job(), NodeView("small", memory_total=40), COSTS)  # 44 never fits in 40
    assert not admissible(job(), NodeView("dead", alive=False), COSTS)


def test_same_circuit_jobs_gather_for_a_batch() -> None:
    hot = frozenset({"porep"})
    a = NodeView("a", hot=hot, in_flight=1, waiting={"porep": 1}, backlog_s={NORMAL: 4.0})
    b = NodeView("b", hot=hot, in_flight=0)
    assert HotFirst(batch=2).choose(job(), [a, b], COSTS) == "a"
    assert HotFirst(batch=1).choose(job(), [a, b], COSTS) == "b"


def test_plan_places_by_priority_and_fills_nodes() -> None:
    nodes = [
        NodeView("a", slots=1, hot=frozenset({"porep"})),
        NodeView("b", slots=1, hot=frozenset({"porep"})),
    ]
    queue = [job(seq=0), job(seq=1), job(seq=2), job("wpost", HIGH, seq=3)]
    placed = [(j.job_id, n) for j, n in plan(queue, nodes, HotFirst(), COSTS)]
    # the HIGH job first (fleet-wide priority), to a node (both cold for wpost: the first id);
    # then j0 to the other; a's slot is taken and its HIGH job outranks NORMAL work, so j1 and j2 wait
    assert placed == [("j3", "a"), ("j0", "b")]


def test_round_robin_and_least_loaded_baselines() -> None:
    nodes = [NodeView("a"), NodeView("b"), NodeView("c", in_flight=1)]
    rr = RoundRobin()
    assert [rr.choose(job(), nodes, COSTS) for _ in range(4)] == ["a", "b", "c", "a"]
    assert LeastLoaded().choose(job(), nodes, COSTS) == "a"
    assert LeastLoaded().choose(job(), [NodeView("x", in_flight=1), NodeView("y")], COSTS) == "y"


def test_nobody_can_take_it() -> None:
    assert HotFirst().choose(job(), [NodeView("a", alive=False)], COSTS) is None
    assert plan([job()], [], HotFirst(), COSTS) == []
