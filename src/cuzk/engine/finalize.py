"""Finalizers: the G2 MSM, assembly and verification of a unit, off the device lock.

Every proof is checked before it leaves the engine (one random-linear-
combination batch check per unit; one by one only when that fails, to name
the bad partition). A proof that fails fails its job; it is never returned.
The span names are `finalize` with `msm_b_g2`, `epilogue` and `verify` inside.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from cuzk.engine import work
from cuzk.instrument import Timeline

if TYPE_CHECKING:
    from cuzk.engine.model import Unit
    from cuzk.engine.scheduler import WorkQueue
    from cuzk.groth16.proof import Proof


class Finalizer(threading.Thread):
    """One finalizer thread: a unit whose `start` is done in, verified proofs out to its jobs."""

    def __init__(
        self,
        *,
        index: int,
        queue: WorkQueue[Unit],
        deliver: Callable[[Unit, list[Proof | None], list[list[int]], dict[int, str]], None],
        fail: Callable[[Unit, str], None],
        hooks: Any,
    ) -> None:
        super().__init__(name=f"cuzk-finalize-{index}", daemon=True)
        self.queue = queue
        self.deliver = deliver
        self.fail = fail
        self.hooks = hooks

    def run(self) -> None:
        while (unit := self.queue.get()) is not None:
            try:
                self._finalize(unit)
            except Exception as exc:  # result routing that raised: the unit fails, the finalizer stays
                self.fail(unit, f"partition {unit.partition} finalize failed: {type(exc).__name__}: {exc}")

    def finalize_unit(self, unit: Unit) -> None:
        """Finalize `unit` in the calling thread (finalize.split off: the GPU worker does it)."""
        try:
            self._finalize(unit)
        except Exception as exc:
            self.fail(unit, f"partition {unit.partition} finalize failed: {type(exc).__name__}: {exc}")

    def _finalize(self, unit: Unit) -> None:
        attrs = {"worker": self.name, "device": unit.device, "partition": unit.partition, "k": unit.k,
                 "unit": unit.label}  # fmt: skip
        tl = Timeline(unit.label)
        try:
            for m in unit.members:
                self.hooks.call("before_finalize", m.job.job_id, unit.partition)
            with tl.span("finalize", **attrs):
                proofs = work.finalize(unit.pending, unit.resident, tl, unit.windows)
                inputs = work.public_inputs(unit.pending, unit.resident)
                with tl.span("verify", proofs=len(proofs)):
                    bad = work.bad_proofs(unit.resident, inputs, proofs)
        except Exception as exc:
            self.fail(unit, f"partition {unit.partition} finalize failed: {type(exc).__name__}: {exc}")
            return
        unit.pending = None
        unit.record(tl, attrs)
        errors = {
            j: f"partition {unit.partition} proof failed verification; refusing to return it" for j in bad
        }
        data = [None if j in errors else p for j, p in enumerate(proofs)]
        self.deliver(unit, data, inputs, errors)
