"""The fleet's merged status reads as the engine's typed status (no Ray: plain engines' statuses).

The daemon's GetStatus, /status and /metrics read `EngineStats` fields; a fleet front hands them
the engines' statuses merged by `cluster.stats.fleet_status`, so that merge must build one.
"""

from __future__ import annotations

from cuzk.cluster.stats import engine_stats, fleet_status
from cuzk.engine import Engine, EngineConfig
from cuzk.engine.stats import EngineStats
from cuzk.server.service import status_message
from cuzk.server.status import status_json


class _Front:
    def __init__(self, st: EngineStats) -> None:
        self.st = st

    def status(self) -> EngineStats:
        return self.st


def test_two_engines_merge_into_one_typed_status() -> None:
    with Engine(EngineConfig(backend="cpu", synthesis_workers=1)) as engine:
        one = engine_stats(engine)
    assert EngineStats.from_dict(one) == engine.status().__class__.from_dict(one)
    two = {**one, "queues": {**one["queues"], "device_room": ["wpost-1"]}}  # a job parked on node-b
    merged = fleet_status(
        {"node-a": one, "node-b": two, "node-c": None},
        {"queued": 2, "counters": {"completed": 3}, "jobs_by_kind": {"porep": {"queued": 2, "running": 0}}},
    )
    st = EngineStats.from_dict(merged)
    assert len(st.devices) == 2 * len(one["devices"])
    assert all(name.startswith(("node-a: ", "node-b: ")) for name in (d.name for d in st.devices.values()))
    assert st.jobs_by_kind["porep"].queued == 2 and st.counters["completed"] == 3
    assert st.memory.total == 2 * one["memory"]["total"]
    assert st.queues.device_room == ["wpost-1"]
    msg = status_message(st, uptime=1.0)
    assert msg.total_proofs_completed == 3 and len(msg.gpus) == len(st.devices)
    assert status_json(_Front(st), started=0.0)["counters"]["total_completed"] == 3
