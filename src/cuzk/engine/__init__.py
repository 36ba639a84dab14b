"""The proving engine: the job layer (requests, the synchronous LocalProver) and, on it, the pipeline.

`LocalProver` is imported on first use, so that `cuzk.engine.request` (plain data, read by
the scheduler) does not pull in the prover and its kernels.
"""

from typing import Any

from cuzk.engine.request import DEFAULT_PRIORITY, JobStatus, Priority, ProofRequest

__all__ = [
    "DEFAULT_PRIORITY",
    "Engine",
    "EngineConfig",
    "EngineHooks",
    "JobHandle",
    "JobResult",
    "JobStatus",
    "LocalProver",
    "Priority",
    "ProofRequest",
]


def __getattr__(name: str) -> Any:  # the prover and the pipeline import numpy, numba, multiprocessing: on use
    if name == "LocalProver":
        from cuzk.engine.local import LocalProver

        return LocalProver
    if name in ("Engine", "EngineConfig", "EngineHooks", "JobHandle", "JobResult"):
        from cuzk.engine import engine

        return getattr(engine, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
