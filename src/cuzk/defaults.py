"""The defaults of the settings that several places expose, defined once.

The engine's EngineConfig, the daemon's config (cuzk.server.config) and the named toggles
(cuzk.toggles) all read these, so a default changed here changes everywhere. Where the
reference daemon has the same setting, its default is kept (REFERENCE_API.md, the config table).
Settings that only one place has keep their default beside their definition.
"""

from __future__ import annotations

GPU_WORKERS_PER_DEVICE = 2  # the reference's default
SYNTHESIS_WORKERS = (
    2  # the engine's; the daemon's default is half the cores (pipeline.max_parallel_synthesis = 0)
)
MAX_BATCH_SIZE = 1  # the reference's default: batching off
MAX_BATCH_WAIT_MS = 10_000  # the reference's default
QUEUE_LIMIT = 1000  # jobs accepted and not yet finished
EVICTION_MIN_IDLE_S = 300.0  # the reference's 5m: an idle SRS entry is evictable after this long
MSM_PRECOMPUTE = 1  # copies of each G1 base per loaded SRS (1: none)
MSM_AUTO_COPIES = 3  # msm.precompute=auto: the most copies of H it plans (more were not measured)
SPLIT_FINALIZE = True  # finalize.split
PRESTAGE_UPLOADS = True  # upload.prestage
G2_ON = "auto"  # msm.g2_on: device where the set fits the card, else stream; cpu off a GPU
G2_PLACES = ("cpu", "device", "stream")  # where msm.g2_on puts the G2 query (auto resolved per key)
G2_ON_CHOICES = ("auto", *G2_PLACES)  # msm.g2_on's values (cuzk.toggles says what each does)
MSM_CHUNK_CAP = 25  # msm.chunk_cap: log2 of the most points an MSM scatters per chunk
MSM_CHUNK_CAP_RANGE = (20, 28)  # the chunk caps the CUDA MSM plans for
ABC_ON = "auto"  # synthesis.abc_on: on the device with CUDA, in the worker on the CPU backend
