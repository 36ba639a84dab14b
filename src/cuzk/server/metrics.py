"""Prometheus metrics of an engine: what the daemon serves on /metrics and in GetMetrics.

Two parts. Ours, through prometheus-client: per-phase duration histograms,
proofs completed and failed by circuit, queue depths, GPU busy fraction,
memory reserved and peak, SRS bytes per tier. And the reference's families
(REFERENCE_API.md 4.2) under their exact names, so dashboards built on the
reference keep working; those are formatted by `reference_text`, because
prometheus-client renames counter samples to `<name>_total` while the
reference's per-kind counters are exposed without the suffix.
"""

from __future__ import annotations

import threading
import time
from collections import deque
from collections.abc import Callable, Iterator, Mapping
from typing import Any

from prometheus_client import CollectorRegistry, Counter, Histogram, generate_latest
from prometheus_client.core import GaugeMetricFamily, Metric

from cuzk.engine.stats import EngineStats

#: phase histogram buckets (seconds): from sub-millisecond kernels to minute-long partitions
BUCKETS = (0.001, 0.005, 0.01, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0, 30.0, 60.0, 300.0)

#: our family names -> the reference's metric label (REFERENCE_API.md 2.1)
METRIC_KIND = {"porep": "porep_c2", "snap": "snap_update", "wpost": "window_post", "winning": "winning_post"}


class EngineMetrics:
    """Metrics of one engine. `observe(...)` is called once per finished job; gauges read status()."""

    def __init__(self, status: Callable[[], EngineStats], *, started: float | None = None) -> None:
        self._status = status
        self._started = time.monotonic() if started is None else started
        self._lock = threading.Lock()
        self._durations: dict[str, deque[float]] = {}  # kind -> last <= 1000 totals, as the reference
        self._done: dict[str, int] = {}
        self._failed: dict[str, int] = {}
        self.registry = CollectorRegistry()
        self.phase_seconds = Histogram(
            "cuzk_phase_seconds",
            "Duration of each proving phase (span), summed per job",
            ["phase", "circuit"],
            buckets=BUCKETS,
            registry=self.registry,
        )
        self.jobs = Counter(
            "cuzk_jobs", "Jobs that reached a terminal status", ["circuit", "status"], registry=self.registry
        )
        self.registry.register(_StatusCollector(self._status))

    def observe(
        self, *, circuit: str, family: str, status: str, seconds: float, phases: Mapping[str, float]
    ) -> None:
        """Record one finished job (status: completed | failed | cancelled)."""
        self.jobs.labels(circuit=circuit, status=status).inc()
        for phase, secs in phases.items():
            self.phase_seconds.labels(phase=phase, circuit=circuit).observe(secs)
        kind = METRIC_KIND.get(family, family)
        with self._lock:
            if status == "completed":
                self._done[kind] = self._done.get(kind, 0) + 1
                self._durations.setdefault(kind, deque(maxlen=1000)).append(seconds)
            elif status == "failed":
                self._failed[kind] = self._failed.get(kind, 0) + 1

    def observe_result(self, result: Any, request: Any) -> None:
        """An engine listener: one finished job (its JobResult and ProofRequest), labelled by its
        key's ref (cuzk.engine.keys), the name status shows for it too."""
        from cuzk.engine.keys import KeyId

        spans = result.timeline.spans
        seconds = (max(s.end for s in spans) - min(s.start for s in spans)) if spans else 0.0
        self.observe(
            circuit=KeyId.of(request).ref,
            family=request.family,
            status=result.status.value,
            seconds=seconds,
            phases=result.timeline.totals(),
        )

    def text(self) -> str:
        """The whole exposition: the reference's families, then ours."""
        return self.reference_text() + generate_latest(self.registry).decode()

    def reference_text(self) -> str:
        st = self._status()
        with self._lock:
            done, failed = dict(self._done), dict(self._failed)
            durations = {k: list(v) for k, v in self._durations.items()}
        running = sum(1 for w in st.gpu_workers if w.job)
        lines: list[str] = []

        def family(name: str, kind: str, help_: str, samples: list[tuple[str, float]]) -> None:
            lines.append(f"# HELP {name} {help_}")
            lines.append(f"# TYPE {name} {kind}")
            lines.extend(f"{sample} {_num(value)}" for sample, value in samples)

        family(
            "cuzk_proofs_completed_total",
            "counter",
            "Total proofs completed",
            [("cuzk_proofs_completed_total", sum(done.values()))],
        )
        family(
            "cuzk_proofs_failed_total",
            "counter",
            "Total proofs failed",
            [("cuzk_proofs_failed_total", sum(failed.values()))],
        )
        family(
            "cuzk_uptime_seconds",
            "gauge",
            "Engine uptime in seconds",
            [("cuzk_uptime_seconds", time.monotonic() - self._started)],
        )
        family(
            "cuzk_queue_depth",
            "gauge",
            "Jobs waiting in the priority queue",
            [("cuzk_queue_depth", st.queues.intake)],
        )
        family(
            "cuzk_proofs_completed",
            "counter",
            "Proofs completed by kind",
            [(f'cuzk_proofs_completed{{proof_kind="{k}"}}', v) for k, v in sorted(done.items())],
        )
        family(
            "cuzk_proofs_failed",
            "counter",
            "Proofs failed by kind",
            [(f'cuzk_proofs_failed{{proof_kind="{k}"}}', v) for k, v in sorted(failed.items())],
        )
        if durations:
            samples: list[tuple[str, float]] = []
            for k, vals in sorted(durations.items()):
                samples.append((f'cuzk_proof_duration_seconds_count{{proof_kind="{k}"}}', len(vals)))
                samples.append((f'cuzk_proof_duration_seconds_sum{{proof_kind="{k}"}}', round(sum(vals), 3)))
            family("cuzk_proof_duration_seconds", "summary", "Proof duration (last 1000 proofs)", samples)
        family("cuzk_running_jobs", "gauge", "GPU workers holding a job", [("cuzk_running_jobs", running)])
        family(
            "cuzk_gpu_workers",
            "gauge",
            "Number of GPU workers",
            [("cuzk_gpu_workers", len(st.gpu_workers))],
        )
        return "\n".join(lines) + "\n"  # fmt: skip


def _num(value: float) -> str:
    return str(int(value)) if float(value).is_integer() else f"{value:.3f}"


class _StatusCollector:
    """Gauges read from engine.status() at scrape time: queues, GPU busy, memory, SRS tiers."""

    def __init__(self, status: Callable[[], EngineStats]) -> None:
        self._status = status

    def collect(self) -> Iterator[Metric]:
        st = self._status()
        queues = GaugeMetricFamily(
            "cuzk_stage_queue_depth", "Items waiting per engine stage", labels=["stage"]
        )
        q = st.queues
        for stage, total in (("intake", q.intake), ("synthesis", q.synthesis), ("gpu", sum(q.gpu.values())),
                             ("finalize", q.finalize), ("device_room", len(q.device_room))):  # fmt: skip
            queues.add_metric([stage], float(total))
        yield queues
        busy = GaugeMetricFamily(
            "cuzk_gpu_busy_ratio", "Fraction of uptime a device held its lock", labels=["device"]
        )
        for device, frac in st.gpu_busy.per_device.items():
            busy.add_metric([str(device)], float(frac))
        yield busy
        mem = st.memory
        yield GaugeMetricFamily(
            "cuzk_memory_budget_bytes", "The engine's memory budget", value=float(mem.total)
        )
        yield GaugeMetricFamily("cuzk_memory_reserved_bytes", "Bytes reserved now", value=float(mem.used))
        yield GaugeMetricFamily(
            "cuzk_memory_peak_bytes", "Most bytes ever reserved at once", value=float(mem.peak)
        )
        tiers = GaugeMetricFamily("cuzk_srs_bytes", "SRS bytes per tier", labels=["tier"])
        sizes: dict[str, float] = {"hot": 0.0, "warm": 0.0, "cold": 0.0}
        for entry in st.srs:
            sizes[entry.tier] = sizes.get(entry.tier, 0.0) + float(entry.size_bytes)
        for tier, size in sizes.items():
            tiers.add_metric([tier], size)
        yield tiers
