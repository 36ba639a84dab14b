"""The proving engine: the job layer (requests, the synchronous LocalProver) and, on it, the pipeline."""

from cuzk.engine.request import DEFAULT_PRIORITY, JobStatus, Priority, ProofRequest

__all__ = [
    "DEFAULT_PRIORITY",
    "Engine",
    "EngineConfig",
    "EngineHooks",
    "JobHandle",
    "JobResult",
    "JobStatus",
    "Priority",
    "ProofRequest",
]


def __getattr__(name: str):  # the pipeline imports numpy, the prover, multiprocessing: load it on use
    if name in ("Engine", "EngineConfig", "EngineHooks", "JobHandle", "JobResult"):
        from cuzk.engine import engine

        return getattr(engine, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
