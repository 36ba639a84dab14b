"""The engine's first two stages: the dispatcher (intake -> device + SRS) and the feeders
(a unit's memory, then its members through the synthesis pool). GPU workers are in gpu.py,
finalizers in finalize.py.

A stage owns no job state: it reads a job's identity fields (fixed at construction), does the
slow or blocking part (an SRS load, a wait for memory or a synthesis slot) on its own thread,
and tells the core (cuzk.engine.core) what happened with an event. Test hooks run on the
stage's thread, as before the core existed: a hook that waits holds that stage.
"""

from __future__ import annotations

import dataclasses
import functools
import itertools
import logging
import threading
import time
from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING, Any

from cuzk.engine import events as ev
from cuzk.engine import work
from cuzk.engine.loader import g2_placement, srs_footprint
from cuzk.engine.model import Job, WitnessHandOver
from cuzk.engine.request import Priority
from cuzk.engine.settings import EngineConfig, EngineHooks
from cuzk.errors import BudgetExceededError, CuzkError, EngineError, JobCancelledError
from cuzk.instrument import Span

log = logging.getLogger("cuzk.engine")

if TYPE_CHECKING:
    from cuzk.backends.base import Backend
    from cuzk.engine.core import EngineCore
    from cuzk.engine.memory import MemoryBudget
    from cuzk.engine.scheduler import Scheduler, Slots, WorkQueue
    from cuzk.engine.srs import SrsManager
    from cuzk.engine.synth import SynthFailure, SynthPool, SynthResult


@dataclasses.dataclass(eq=False)
class _Parked:
    """A batch that fits its device alone but not beside the other keys' sets in use there."""

    jobs: list[Job]
    device: int
    ws: work.WorkingSet
    srs_dev: int
    seq: int
    since: float
    reported: str = ""  # why it waits (the last reason found)
    logged: str = ""  # the last reason logged (each new one once)

    @property
    def priority(self) -> int:
        return max(int(j.priority) for j in self.jobs)

    @property
    def key(self) -> Any:
        """Its SRS entry's key on its device."""
        return self.jobs[0].key_id.srs(self.device)


class Dispatcher(threading.Thread):
    """Takes batches from intake, picks the device with the shortest GPU queue, refuses what
    cannot fit (host budget, the card), leases the key's SRS there (loading it on demand) and
    hands the batch to the core.

    On a GPU the card holds every key's resident set. A batch whose set fits the card alone but
    not beside the other keys' sets there first evicts the idle ones (least recently used first,
    down to their host copies); if sets in use still leave too little room the batch is parked
    until their batches finish. While one is parked, batches of its priority or lower park
    behind it (they would keep the busy sets leased and starve it); higher ones pass if they fit.
    So a WindowPoSt set that cannot sit beside PoRep's waits for the PoRep batches dispatched
    before it, not for those submitted after it, and a WinningPoSt still goes first."""

    def __init__(
        self, *, core: EngineCore, scheduler: Scheduler, config: EngineConfig, budget: MemoryBudget,
        srs: SrsManager, backends: Mapping[int, Backend], gpu_queues: Mapping[int, WorkQueue[int]],
        hooks: EngineHooks, on_device: bool, abc_on_worker: bool,
    ) -> None:  # fmt: skip
        super().__init__(name="cuzk-dispatch", daemon=True)
        self.core = core
        self.scheduler = scheduler
        self.config = config
        self.budget = budget
        self.srs = srs
        self.backends = backends
        self.gpu_queues = gpu_queues
        self.hooks = hooks
        self.on_device = on_device
        self.abc_on_worker = abc_on_worker
        self._turn = itertools.count()
        self._parked: list[_Parked] = []  # by arrival; retried highest priority first (this thread's)
        self._parked_ids: tuple[str, ...] = ()  # what `parked` shows other threads
        self._park_seq = itertools.count()
        self._wake = threading.Event()
        srs.add_listener(self.wake)

    def wake(self) -> None:
        """Retry the parked batches (an SRS entry went idle or gave memory back, a job ended)."""
        self._wake.set()
        self.scheduler.wake()

    @property
    def parked(self) -> list[str]:
        """Job ids of the batches waiting for room on their device, in the order they retry."""
        return list(self._parked_ids)

    def _parked_changed(self) -> None:
        self._parked_ids = tuple(j.job_id for p in self._parked_order() for j in p.jobs)

    def run(self) -> None:
        while True:
            self._wake.clear()
            self._retry_parked()
            batch = self.scheduler.next_batch(wake=self._wake, min_priority=self._floor())
            if batch is None:
                break
            if not batch:
                continue
            jobs: list[Job] = self.core.call(ev.Taken(tuple(j.job_id for j in batch), time.perf_counter()))
            if not jobs:
                continue
            try:
                self._dispatch(jobs)
            except Exception as exc:  # never lose a job to a stray error
                self._fail(jobs, f"dispatch failed: {type(exc).__name__}: {exc}")
        while self._parked:  # intake closed: the parked batches still get their turn
            self._wake.wait()
            self._wake.clear()
            self._retry_parked()

    def _fail(self, jobs: list[Job], message: str) -> None:
        self.core.post(ev.JobsFailed(tuple(j.job_id for j in jobs), message))

    def _floor(self) -> int | None:
        """The lowest priority to take now: any while some device's backlog (its partitions
        dispatched and not finished, plus its parked ones) is under the dispatch depth; else
        HIGH. Eager dispatch leased every queued batch's set at once, so a WindowPoSt set that
        cannot sit beside PoRep's waited for the whole PoRep queue, not for what was in flight."""
        depth = self.config.dispatch_depth
        if any(n < depth for n in self._backlog().values()):
            return None
        return int(Priority.HIGH)

    def _backlog(self) -> dict[int, int]:
        """Per device: its partitions dispatched and not finished, and its parked ones."""
        out = {d: self.core.planned_on(d) for d in self.config.devices}
        for p in self._parked:
            out[p.device] += max(j.partitions for j in p.jobs)
        return out

    def _dispatch(self, jobs: list[Job]) -> None:
        devs = self.config.devices
        turn = next(self._turn) % len(devs)  # round robin among the devices with the shortest queue
        backlog = self._backlog()
        full = lambda d: backlog[d] >= self.config.dispatch_depth  # noqa: E731
        device = min(
            devs, key=lambda d: (full(d), len(self.gpu_queues[d]), (devs.index(d) - turn) % len(devs))
        )
        circuit = jobs[0].key
        ws = self.working_set(circuit)
        srs_host, srs_dev = srs_footprint(self.config, circuit, self.backends[device])
        need = ws.total * len(jobs) + srs_host
        if need > self.budget.total:
            return self._fail(jobs, f"{BudgetExceededError.__name__}: a partition of {circuit} needs {need} bytes "
                                    f"({len(jobs)} x {ws.total} working set + the SRS) but the whole memory "
                                    f"budget is {self.budget.total}")  # fmt: skip
        refused = self.device_refusal(circuit, device, len(jobs), ws, srs_dev)
        if refused:
            return self._fail(jobs, f"{BudgetExceededError.__name__}: {refused}")
        p = _Parked(jobs, device, ws, srs_dev, next(self._park_seq), time.perf_counter())
        ahead = [q for q in self._parked if q.device == device and q.priority >= p.priority]
        if ahead:
            p.reported = f"behind parked job(s) {', '.join(j.job_id for q in ahead for j in q.jobs)}"
            self._park(p)
        elif not self._place(p):
            self._park(p)
        return None

    def _admit(self, jobs: list[Job], device: int, ws: work.WorkingSet, spans: tuple[Span, ...] = ()) -> None:
        """Lease the key's SRS on `device` (loading it) and hand the batch to the core."""
        circuit = jobs[0].key
        t0 = time.perf_counter()
        try:
            lease = self.srs.acquire(jobs[0].key_id.srs(device))
        except CuzkError as exc:
            return self._fail(
                jobs, f"loading the parameters of {circuit} failed: {type(exc).__name__}: {exc}"
            )
        span = Span("srs_load", t0, time.perf_counter(), attrs={"device": device, "circuit": circuit})
        # a hook set once the batch is queued (a test that waits for its feeder) is for later batches
        hook = self.hooks.has("dispatched")
        self.core.call(ev.Dispatched(tuple(j.job_id for j in jobs), device, lease, ws, (*spans, span)))
        if hook:
            for j in jobs:
                for p in range(j.partitions):
                    self.hooks.call("dispatched", j.job_id, p)

    # --- room on the device beside the other keys' sets ---------------------------------------
    def _parked_order(self) -> list[_Parked]:
        return sorted(self._parked, key=lambda q: (-q.priority, q.seq))

    def _park(self, p: _Parked) -> None:
        self._parked.append(p)
        self._parked_changed()
        self._report(p)
        for j in p.jobs:
            self.hooks.call("parked", j.job_id, 0)

    def _retry_parked(self) -> None:
        """Admit parked batches in order while they fit; on each device the first that does not
        holds the rest."""
        blocked: set[int] = set()
        for p in self._parked_order():
            if p.device in blocked:
                continue
            live = [j for j in p.jobs if not j.finished]
            if not live:  # every job ended (cancelled) while parked
                self._parked.remove(p)
                self._parked_changed()
                continue
            p.jobs = live
            try:
                placed = self._place(p)
                if not placed:
                    self._report(p)
            except Exception as exc:  # never lose a parked job to a stray error either
                self._parked.remove(p)
                self._parked_changed()
                self._fail(p.jobs, f"dispatch failed: {type(exc).__name__}: {exc}")
                continue
            if not placed:
                blocked.add(p.device)
                continue
            self._parked.remove(p)
            self._parked_changed()

    def _place(self, p: _Parked) -> bool:
        """Admit `p` if its device has room for it beside the other sets kept there, evicting
        idle ones as needed; False (nothing admitted, `p.reported` saying why) if sets in use
        leave too little room."""
        short, why = self._shortfall(p)
        if short > 0:
            backend = self.backends[p.device]
            idle = [(e, srs_footprint(self.config, e.key[0], backend)[1]) for e in self._idle_others(p)]
            if short <= sum(size for _, size in idle):  # else evicting them all would not do: none yet
                for entry, size in idle:  # an idle set adds its bytes and no unit's peak
                    try:
                        self.srs.evict(entry.key, tier="warm")  # a host copy, if any, stays for a reload
                    except EngineError:  # leased or loading since we looked: not idle after all
                        continue
                    short -= size
                    if short <= 0:
                        break
            if short > 0:
                p.reported = why
                return False
        waited: tuple[Span, ...] = ()
        if p in self._parked:
            attrs = {"device": p.device, "circuit": p.jobs[0].key, "waited_for": p.reported}
            waited = (Span("device_room_wait", p.since, time.perf_counter(), attrs=attrs),)
        self._admit(p.jobs, p.device, p.ws, waited)
        return True

    def _others(self, p: _Parked) -> list[Any]:
        """The other keys' entries resident (or loading) on `p`'s device."""
        return [
            e for e in self.srs.status()
            if e.key != p.key and isinstance(e.key, tuple) and len(e.key) == 3 and e.key[1] == p.device
            and (e.tier == "hot" or e.loading)
        ]  # fmt: skip

    def _idle_others(self, p: _Parked) -> list[Any]:
        """The other keys' idle sets on `p`'s device, least recently used first."""
        idle = [e for e in self._others(p) if e.ref_count == 0 and not e.loading]
        return sorted(
            idle, key=lambda e: -(e.last_used_s_ago if e.last_used_s_ago is not None else float("inf"))
        )

    def _shortfall(self, p: _Parked) -> tuple[int, str]:
        """(bytes the device lacks for `p` beside the other sets resident there, why). Sets in use
        count their own unit's peak too: only one unit runs its transforms at a time, so the
        card holds the sets, the largest peak among the keys in use and the other GPU workers'
        staged units."""
        card = self._card(p.device)
        if not card:
            return 0, ""
        backend = self.backends[p.device]
        k = len(p.jobs)
        sets, peak, staged = p.srs_dev, k * p.ws.device_peak, k * p.ws.device_staged
        parts = []
        for e in self._others(p):
            ref = e.key[0]
            dev = srs_footprint(self.config, ref, backend)[1]
            sets += dev
            state = (
                "loading" if e.loading else f"{e.ref_count} batch(es) in flight" if e.ref_count else "idle"
            )
            parts.append(f"{ref} {dev / 2**30:.1f} GiB ({state})")
            if e.ref_count or e.loading:
                ows = self.working_set(ref)
                peak, staged = max(peak, ows.device_peak), max(staged, ows.device_staged)
        need = sets + peak + (self.config.gpu_workers_per_device - 1) * staged
        room = card - work.DEVICE_MARGIN_BYTES
        why = (
            f"device {p.device} needs {need / 2**30:.1f} GiB of {room / 2**30:.1f} GiB for {p.jobs[0].key} "
            f"beside {', '.join(parts) or 'nothing'}"
        )
        return need - room, why

    def _report(self, p: _Parked) -> None:
        """Log why `p` waits, once per distinct reason (its span names the last one)."""
        if p.reported != p.logged:
            p.logged = p.reported
            log.info("job(s) %s wait for room: %s", ",".join(j.job_id for j in p.jobs), p.reported)

    def working_set(self, circuit: str) -> work.WorkingSet:
        """One partition's bytes under this engine's settings (work.working_set's model)."""
        backend = self.backends[self.config.devices[0]]
        return work.working_set(circuit, on_device=self.on_device, abc_on_worker=self.abc_on_worker,
                                g2_on=g2_placement(self.config, circuit, backend), backend=backend)  # fmt: skip

    def _card(self, device: int) -> int:
        """The bytes `device` may use (its budget, else its size); 0 off a GPU or where the backend
        reports none, so nothing is checked."""
        if not self.on_device:
            return 0
        mem = self.backends[device].memory_info()
        return int(mem.get("budget") or mem.get("total") or 0)

    def device_refusal(self, circuit: str, device: int, k: int, ws: work.WorkingSet, srs: int) -> str | None:
        """Why a batch of k jobs of `circuit` cannot fit on `device`, or None. Only one unit runs
        `start` at a time per device (the device lock), so the card must hold the SRS, one unit's
        peak and the other GPU workers' staged units; the backend would otherwise fail mid-run."""
        card = self._card(device)
        if not card:
            return None
        room = card - work.DEVICE_MARGIN_BYTES
        others = self.config.gpu_workers_per_device - 1
        need = srs + k * ws.device_peak + others * k * ws.device_staged
        if need <= room:
            return None
        gib = lambda b: f"{b / 2**30:.1f} GiB"  # noqa: E731
        return (
            f"{k} partition(s) of {circuit} need {gib(need)} of device {device}'s memory (the SRS "
            f"{gib(srs)} + {gib(k * ws.device_peak)} while proving + {others} other GPU worker(s) x "
            f"{gib(k * ws.device_staged)} staged) but it has {gib(room)} ({gib(card)} less a "
            f"{gib(work.DEVICE_MARGIN_BYTES)} margin); use fewer GPU workers per device "
            f"(gpu.workers_per_device), a smaller batch (batch.max_size), msm.g2_on=stream, or a lower "
            f"msm.chunk_cap (the MSM's scratch is part of the unit's peak)"
        )


class Feeder(threading.Thread):
    """Takes the highest-priority batch, asks the core for its next unit, reserves the unit's
    memory (before synthesis starts) and hands each member to the synthesis pool when a slot is
    free, so priorities decide what is synthesized next. With `max_first` (the urgent lane's
    feeder) only HIGH and CRITICAL batches, so such a unit never waits behind a normal one."""

    def __init__(
        self, *, core: EngineCore, queue: WorkQueue[int], budget: MemoryBudget, slots: Slots,
        pool: Callable[[], SynthPool], hooks: EngineHooks, max_first: int | None = None,
    ) -> None:  # fmt: skip
        super().__init__(name="cuzk-feed" if max_first is None else "cuzk-feed-urgent", daemon=True)
        self.core = core
        self.queue = queue
        self.budget = budget
        self.slots = slots
        self.pool = pool
        self.hooks = hooks
        self.max_first = max_first

    def run(self) -> None:
        while (seq := self.queue.get(max_first=self.max_first)) is not None:
            unit: ev.SynthWork | None = self.core.call(ev.NextUnit(seq))
            if unit is None:
                continue
            try:
                self._feed(unit)
            except Exception as exc:
                msg = f"partition {unit.partition} synthesis failed: {type(exc).__name__}: {exc}"
                self.core.post(ev.UnitFailed(unit.unit_id, msg))

    def _feed(self, unit: ev.SynthWork) -> None:
        if unit.dead.is_set():
            self.core.post(ev.UnitDropped(unit.unit_id))
            return
        try:
            reservation = self.budget.reserve(unit.nbytes, tag=f"partitions:{unit.circuit}", cancelled=unit.dead,
                                              urgent=unit.reserve_urgent)  # fmt: skip
        except JobCancelledError:
            self.core.post(ev.UnitDropped(unit.unit_id))
            return
        except EngineError as exc:  # BudgetExceededError, DeadlineExceededError
            self.core.post(
                ev.UnitFailed(unit.unit_id, f"partition {unit.partition}: {type(exc).__name__}: {exc}")
            )
            return
        self.core.post(ev.Reserved(unit.unit_id, reservation))
        if unit.zkey:  # a circom witness needs no synthesis process: the GPU stage loads it
            for m in unit.members:
                self.core.call(ev.Synthesized(unit.unit_id, m.job_id, WitnessHandOver(m.witness)))
            return
        for m in unit.members:
            self._submit(unit, m)

    def _submit(self, unit: ev.SynthWork, m: ev.SynthMember) -> None:
        p = unit.partition
        slot = self.slots.acquire(unit.urgent)
        if m.done.is_set():  # its job ended while this feeder waited
            self.slots.release(slot)
            self.core.post(ev.Synthesized(unit.unit_id, m.job_id, None))
            return
        try:
            self.hooks.call("before_synth", m.job_id, p)
            assert m.task is not None
            task = dataclasses.replace(m.task, hold=self.hooks.call("synth_hold", m.job_id, p))
            self.pool().submit(
                task, functools.partial(self._done, unit.unit_id, m.job_id, p, slot), key=unit.key
            )
        except Exception as exc:
            self.slots.release(slot)
            msg = f"partition {p} synthesis failed: {type(exc).__name__}: {exc}"
            self.core.post(ev.Synthesized(unit.unit_id, m.job_id, None, failure=msg))

    def _done(self, uid: int, job_id: str, p: int, slot: str, out: SynthResult | SynthFailure) -> None:
        """The pool's callback (its callback thread): the outcome to the core, then the slot back."""
        from cuzk.engine.synth import SynthFailure

        try:
            spans = tuple(synth_spans(out, p))
            if isinstance(out, SynthFailure):
                failure = (
                    f"partition {p} synthesis failed: {out.message}"
                    if out.kind in ("job", "worker")
                    else None
                )
                self.core.call(ev.Synthesized(uid, job_id, None, spans, failure))
            else:
                self.core.call(ev.Synthesized(uid, job_id, out, spans))
                self.hooks.call("after_synth", job_id, p)
        except Exception as exc:
            msg = f"partition {p} synthesis hand-off failed: {type(exc).__name__}: {exc}"
            self.core.post(ev.Synthesized(uid, job_id, None, failure=msg))
        finally:
            self.slots.release(slot)


def synth_spans(out: Any, partition: int) -> list[Span]:
    """The worker's spans (dicts, perf_counter times) under one `synthesis` span of the job."""
    raw = out.spans
    if not raw:
        return []
    attrs = {"worker": f"synth-{out.worker}", "pid": out.pid, "partition": partition}
    start, end = min(s["start"] for s in raw), max(s["end"] for s in raw)
    spans = [Span("synthesis", start, end, depth=0, attrs=dict(attrs))]
    spans += [Span(s["name"], s["start"], s["end"], depth=1, attrs=dict(attrs)) for s in raw]
    return spans
