"""The fleet simulation: hand-checkable small fleets, determinism, and the policies' ordering."""

from __future__ import annotations

import pytest

from cuzk.cluster.policy import CRITICAL, NORMAL, HotFirst, JobSpec, RoundRobin
from cuzk.cluster.simulate import FIGURES, Scenario, Simulation, _Job, _quantile, compare


def run_jobs(nodes: int, jobs: list[tuple[float, str]], policy=None, **kw) -> Simulation:  # type: ignore[no-untyped-def]
    """A simulation with exactly these arrivals (time, circuit) and no generated work."""
    sim = Simulation(Scenario(nodes=nodes, hours=1.0, **kw), policy or HotFirst())
    sim._arrivals = lambda: [sim._at(t, "arrive", c) for t, c in jobs]  # type: ignore[method-assign]
    sim.run()
    return sim


def test_one_sector_on_one_node_costs_a_load_and_ten_partitions() -> None:
    sim = run_jobs(1, [(0.0, "porep")])
    (job,) = sim.jobs
    f = FIGURES["porep"]
    assert job.finished == pytest.approx(f["load_s"].value + 10 * f["partition_s"].value)
    assert sim.nodes["n000"].loads == 1


def test_second_sector_goes_to_the_hot_node_and_skips_the_load() -> None:
    # two idle nodes; the second sector arrives after the first finished: hot-first reuses the node
    done = 60.0 + 37.0
    sim = run_jobs(2, [(0.0, "porep"), (done + 1.0, "porep")])
    assert sim.jobs[1].finished == pytest.approx(done + 1.0 + 37.0)
    assert sum(n.loads for n in sim.nodes.values()) == 1
    rr = run_jobs(2, [(0.0, "porep"), (done + 1.0, "porep")], RoundRobin())
    assert sum(n.loads for n in rr.nodes.values()) == 2  # round-robin loads it again elsewhere


def test_critical_job_runs_at_the_next_partition_boundary() -> None:
    # one node proving a sector; a WinningPoSt arrives mid-partition and runs right after it
    sim = run_jobs(1, [(0.0, "porep"), (61.0, "winning")])
    win = sim.jobs[1]
    boundary = 60.0 + 3.7  # the partition that started when the load finished
    load = FIGURES["winning"]["load_s"].value  # loaded while the GPU finishes the partition
    assert win.finished == pytest.approx(max(boundary, 61.0 + load) + FIGURES["winning"]["partition_s"].value)
    assert sim.jobs[0].finished == pytest.approx(60.0 + 37.0 + 0.11)  # the sector waited one short job


def test_node_memory_holds_one_large_srs_and_evicts_the_idle_one() -> None:
    sim = run_jobs(1, [(0.0, "porep"), (200.0, "wpost")])
    node = sim.nodes["n000"]
    assert set(node.hot) == {"wpost"}  # 44 + 57 GiB > 100 GiB: porep, idle, was evicted
    assert sim.jobs[1].finished == pytest.approx(200.0 + 77.7 + 3.56)


def test_quantile_is_nearest_rank() -> None:
    assert _quantile([], 0.99) == 0.0
    assert _quantile([1.0, 2.0, 3.0, 4.0], 0.5) == 2.0
    assert _quantile([float(i) for i in range(1, 101)], 0.99) == 99.0


def test_seeded_and_deterministic() -> None:
    sc = Scenario(nodes=6, hours=0.5, providers=4, seed=7)
    assert compare(sc) == compare(sc)
    assert compare(sc) != compare(Scenario(nodes=6, hours=0.5, providers=4, seed=8))


def test_hot_first_answers_winning_sooner_than_the_baselines() -> None:
    rows = {r["policy"]: r for r in compare(Scenario(nodes=16, hours=1.0, providers=8, seed=3))}
    hot, rr, ll = rows["hot-first"], rows["round-robin"], rows["least-loaded"]
    assert hot["winning_p99_s"] <= min(rr["winning_p99_s"], ll["winning_p99_s"])
    assert hot["winning_p99_s"] < 25.0


def test_every_job_has_its_kind() -> None:
    sim = Simulation(Scenario(nodes=4, hours=0.5, providers=2), HotFirst())
    sim.run()
    kinds = {j.spec.circuit: (j.spec.priority, j.spec.partitions) for j in sim.jobs}
    assert kinds["porep"] == (NORMAL, 10) and kinds["winning"] == (CRITICAL, 1)
    assert all(isinstance(j, _Job) and isinstance(j.spec, JobSpec) for j in sim.jobs)
