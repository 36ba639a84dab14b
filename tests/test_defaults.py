"""One table of defaults (cuzk.defaults): the engine's config, the daemon's config and the named
toggles agree on every setting they share, because they all read it."""

from __future__ import annotations

from cuzk import defaults as D
from cuzk.engine import EngineConfig
from cuzk.server.config import DaemonConfig
from cuzk.toggles import resolved


def test_the_engine_the_daemon_and_the_toggles_share_their_defaults() -> None:
    e, d, t = EngineConfig(), DaemonConfig(), resolved()
    assert e.gpu_workers_per_device == d.gpu_workers_per_device == t["gpu.workers_per_device"]
    assert e.gpu_workers_per_device == D.GPU_WORKERS_PER_DEVICE
    assert e.max_batch_size == d.max_batch_size == t["batch.max_size"] == D.MAX_BATCH_SIZE
    assert e.max_batch_wait_ms == d.max_batch_wait_ms == D.MAX_BATCH_WAIT_MS
    assert e.queue_limit == d.queue_limit == D.QUEUE_LIMIT
    assert e.min_srs_idle_s == d.eviction_min_idle_s == D.EVICTION_MIN_IDLE_S
    assert e.msm_precompute == d.msm_precompute == t["msm.precompute"] == D.MSM_PRECOMPUTE
    assert e.synthesis_workers == t["synthesis.workers"] == D.SYNTHESIS_WORKERS
    assert e.split_finalize == t["finalize.split"] and e.prestage_uploads == t["upload.prestage"]
    assert e.g2_on == t["msm.g2_on"] and t["synthesis.abc_on"] == D.ABC_ON
    assert e.abc_on_worker is None  # "auto": by backend
