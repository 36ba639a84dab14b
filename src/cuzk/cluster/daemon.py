"""`cuzk daemon` with a `[cluster]` section: the daemon's gRPC service, journal, status page and
metrics in front of a `Fleet` instead of one engine.

Everything but the engine is the daemon's own (cuzk.server.daemon.Daemon): the same
cuzk.v1.ProvingEngine servicer, so `cuzk client` and `cuzk bench batch --addr` work unchanged;
the same job journal, so a restart of the front re-runs or fails the jobs it had accepted
(`daemon.on_restart`, which also decides what happens to the jobs of a lost engine); /status
gains a `fleet` list (one row per engine) and /metrics the `cuzk_fleet_*` gauges.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterator
from typing import Any

from cuzk.cluster.front import Fleet, FleetConfig
from cuzk.server.config import DaemonConfig
from cuzk.server.daemon import Daemon, engine_config


def fleet_config(cfg: DaemonConfig) -> FleetConfig:
    """The FleetConfig of a daemon config with a [cluster] section; every engine gets its [...] settings."""
    assert cfg.cluster is not None
    ec = engine_config(cfg)
    engine = {f.name: getattr(ec, f.name) for f in dataclasses.fields(ec) if f.name not in ("hooks", "clock")}
    c = cfg.cluster
    return FleetConfig(
        address=c.address,
        engines_per_node=c.engines_per_node,
        num_cpus=c.num_cpus,
        num_gpus=c.num_gpus,
        resources=dict(c.resources),
        slots=c.slots,
        policy=c.policy,
        on_lost=cfg.on_restart,
        watch_s=c.watch_interval_s,
        engine=engine,
    )


class FleetDaemon(Daemon):
    """The daemon serving a Fleet (module docstring)."""

    def make_engine(self) -> Any:
        return Fleet(
            fleet_config(self.cfg),
            queue_limit=self.cfg.queue_limit,
            result_retention_s=self.cfg.result_retention_s,
        )

    def start(self) -> None:
        super().start()
        self.servicer.metrics.registry.register(FleetCollector(self.engine))

    def status_document(self) -> dict[str, Any]:
        doc = super().status_document()
        doc["fleet"] = self.engine.fleet_status()["fleet"]
        return doc


class FleetCollector:
    """Prometheus gauges of the fleet, read at scrape time: engines, their jobs, busy and hot SRS."""

    def __init__(self, fleet: Fleet) -> None:
        self.fleet = fleet

    def collect(self) -> Iterator[Any]:
        from prometheus_client.core import CounterMetricFamily, GaugeMetricFamily

        st = self.fleet.fleet_status()
        up = GaugeMetricFamily(
            "cuzk_fleet_engine_up", "1 while the engine is alive and ready", labels=["node"]
        )
        jobs = GaugeMetricFamily(
            "cuzk_fleet_node_jobs", "Jobs dispatched to the engine, unfinished", labels=["node"]
        )
        busy = GaugeMetricFamily(
            "cuzk_fleet_node_busy_ratio", "The engine's GPU busy fraction", labels=["node"]
        )
        hot = GaugeMetricFamily(
            "cuzk_fleet_srs_hot", "1 per circuit hot on the engine", labels=["node", "circuit"]
        )
        for n in st["fleet"]:
            up.add_metric([n["engine"]], 1.0 if n["alive"] and n["ready"] else 0.0)
            jobs.add_metric([n["engine"]], float(n["jobs"]))
            busy.add_metric([n["engine"]], float(n["busy"]))
            for c in n["hot"]:
                hot.add_metric([n["engine"], c], 1.0)
        yield from (up, jobs, busy, hot)
        yield GaugeMetricFamily("cuzk_fleet_queue", "Jobs in the front's queue, not yet placed",
                                value=float(st["fleet_queue"]))  # fmt: skip
        yield CounterMetricFamily("cuzk_fleet_redispatched", "Jobs re-dispatched after their engine was lost",
                                  value=float(st["counters"].get("redispatched", 0)))  # fmt: skip
