"""Finalizers: the G2 MSM, assembly and verification of a unit, off the device lock.

Every proof is checked before it leaves the engine (one random-linear-
combination batch check per unit; one by one only when that fails, to name
the bad partition). A proof that fails fails its job; it is never returned.
The span names are `finalize` with `msm_b_g2`, `epilogue` and `verify` inside.
A finalizer takes a FinalizeWork (cuzk.engine.events) and posts Finalized, or
UnitFailed, to the core.
"""

from __future__ import annotations

import threading
from typing import TYPE_CHECKING, Any

from cuzk.engine import work
from cuzk.engine.events import Finalized, FinalizeWork, UnitFailed
from cuzk.instrument import Timeline

if TYPE_CHECKING:
    from cuzk.engine.core import EngineCore
    from cuzk.engine.scheduler import WorkQueue


class Finalizer(threading.Thread):
    """One finalizer thread: a unit whose `start` is done in, its verified proofs out to the core."""

    def __init__(self, *, core: EngineCore, index: int, queue: WorkQueue[FinalizeWork], hooks: Any) -> None:
        super().__init__(name=f"cuzk-finalize-{index}", daemon=True)
        self.core = core
        self.queue = queue
        self.hooks = hooks

    def run(self) -> None:
        while (unit := self.queue.get()) is not None:
            self.finalize_unit(unit)

    def finalize_unit(self, unit: FinalizeWork) -> None:
        """Finalize `unit` in the calling thread (finalize.split off: the GPU worker does it)."""
        try:
            self._finalize(unit)
        except Exception as exc:  # result routing that raised: the unit fails, the finalizer stays
            msg = f"partition {unit.partition} finalize failed: {type(exc).__name__}: {exc}"
            self.core.post(UnitFailed(unit.unit_id, msg))

    def _finalize(self, unit: FinalizeWork) -> None:
        attrs = {"worker": self.name, "device": unit.device, "partition": unit.partition, "k": unit.k,
                 "unit": unit.label}  # fmt: skip
        tl = Timeline(unit.label)
        for job_id in unit.job_ids:
            self.hooks.call("before_finalize", job_id, unit.partition)
        with tl.span("finalize", **attrs):
            proofs = work.finalize(unit.pending, unit.resident, tl, unit.windows)
            inputs = work.public_inputs(unit.pending, unit.resident)
            with tl.span("verify", proofs=len(proofs)):
                bad = work.bad_proofs(unit.resident, inputs, proofs)
        errors = {
            j: f"partition {unit.partition} proof failed verification; refusing to return it" for j in bad
        }
        data = tuple(None if j in errors else p for j, p in enumerate(proofs))
        self.core.post(Finalized(unit.unit_id, data, tuple(inputs), errors, tl, attrs))
