"""The proving engine: the job layer (requests, the synchronous LocalProver) and, on it, the pipeline."""

from cuzk.engine.request import DEFAULT_PRIORITY, JobStatus, Priority, ProofRequest

__all__ = ["DEFAULT_PRIORITY", "JobStatus", "Priority", "ProofRequest"]
