"""The `cuzk.v1.ProvingEngine` servicer: wire messages in, engine calls, wire messages out.

Every RPC is real where the reference has stubs: CancelProof cancels, EvictSRS
evicts and reports the bytes freed, AwaitProof honours `timeout_ms` (TIMEOUT)
and reports CANCELLED, and timings are measured (srs_load_ms included). Errors
map to gRPC status codes through the one table in cuzk.errors (`grpc_status`);
a proof that failed is not an RPC error but a FAILED response with its message.
"""

from __future__ import annotations

import asyncio
import json
import logging
import threading
import time
import uuid
from typing import Any

import grpc
import numpy as np
from google.protobuf.message import DecodeError

from cuzk.engine import JobStatus, Priority, ProofRequest
from cuzk.engine.stats import DeviceStats, EngineStats, GpuWorkerStats
from cuzk.errors import CuzkError, ShuttingDownError, UnknownJobError, UsageError, grpc_status
from cuzk.server.config import DaemonConfig
from cuzk.server.idempotency import check_same_request
from cuzk.server.stored import BadStoredResult
from cuzk.server.v1 import proving_pb2 as pb
from cuzk.server.v1 import proving_pb2_grpc as pb_grpc

log = logging.getLogger("cuzk.daemon")

#: ProofKind number -> (our kind name, the reference's display name used in status and metrics)
KINDS: dict[int, tuple[str, str]] = {
    pb.POREP_SEAL_COMMIT: ("porep", "porep-c2"),
    pb.SNAP_DEALS_UPDATE: ("snap", "snap-update"),
    pb.WINDOW_POST_PARTITION: ("wpost", "window-post"),
    pb.WINNING_POST: ("winning", "winning-post"),
}
DISPLAY = {kind: display for kind, display in KINDS.values()}
_STATUS = {
    JobStatus.COMPLETED: pb.AwaitProofResponse.COMPLETED,
    JobStatus.FAILED: pb.AwaitProofResponse.FAILED,
    JobStatus.CANCELLED: pb.AwaitProofResponse.CANCELLED,
}
#: spans summed into the response's timing fields (over partitions, as the reference sums them)
_TIMING_SPANS = {
    "queue_wait_ms": "queue_wait",
    "srs_load_ms": "srs_load",
    "synthesis_ms": "synthesis",
    "gpu_compute_ms": "device_lock",
}


def display_kind(family: str) -> str:
    """The reference's display name of a family (porep-c2, ...); our other families keep their own."""
    return DISPLAY.get(family, family)


#: A job id (request_id, job_id) is a key of the journal and shows in logs: short and printable.
MAX_ID_CHARS = 256
#: Partitions of one job: the reference's largest kind has 16; far more is a hostile or broken client
#: (10^9 partitions would be 10^9 units in memory before the budget could refuse them).
MAX_PARTITIONS = 1024
#: Runs of one journaled job that a restart may interrupt before it is failed instead of re-run.
MAX_ATTEMPTS = 3


def check_id(value: str, name: str) -> str:
    """A job or request id as the journal keys it: non-empty, at most MAX_ID_CHARS, printable."""
    if not value:
        raise UsageError(f"{name} is empty")
    if len(value) > MAX_ID_CHARS:
        raise UsageError(f"{name} is {len(value)} characters long; at most {MAX_ID_CHARS} are allowed")
    if not value.isprintable():
        raise UsageError(f"{name} {value[:40]!r} has non-printable characters")
    return value


def _check_partitions(n: int, what: str) -> None:
    if n > MAX_PARTITIONS:
        raise UsageError(f"{what}: {n} partitions asked for; at most {MAX_PARTITIONS} in one job")


def check_request(msg: Any, cfg: DaemonConfig) -> Any:
    """The service's validation of one request message, before it touches the engine.

    SubmitProofRequest (and the one inside ProveRequest) becomes a ProofRequest; job ids and
    circuit ids are checked; GetStatus and GetMetrics take nothing. A bad request is a UsageError
    (INVALID_ARGUMENT) naming the field. The fuzz targets run every request message through this.
    """
    if isinstance(msg, pb.SubmitProofRequest):
        return to_proof_request(msg, cfg)
    if isinstance(msg, pb.ProveRequest):
        if not msg.HasField("submit"):
            raise UsageError("missing submit field")
        return to_proof_request(msg.submit, cfg)
    if isinstance(msg, pb.AwaitProofRequest | pb.CancelProofRequest):
        return check_id(msg.job_id, "job_id")
    if isinstance(msg, pb.PreloadSrsRequest | pb.EvictSrsRequest):
        from cuzk.circuits import get_circuit

        cid = check_id(msg.circuit_id, "circuit_id")
        if cid in cfg.zkeys:  # a configured zkey id: its file (never a path a client chose)
            return cfg.zkeys[cid]
        get_circuit(cid)  # UnknownCircuitError names the known ones
        return cid
    if isinstance(msg, pb.GetStatusRequest | pb.GetMetricsRequest):
        return None
    raise UsageError(f"{type(msg).__name__} is not a request of cuzk.v1.ProvingEngine")


def to_proof_request(msg: pb.SubmitProofRequest, cfg: DaemonConfig) -> ProofRequest:
    """A SubmitProofRequest as a ProofRequest; anything that cannot be proved here is a UsageError."""
    if msg.request_id:
        check_id(msg.request_id, "request_id")
    if msg.vanilla_proof or len(msg.vanilla_proofs):
        raise UsageError(
            "real Filecoin inputs (vanilla_proof / vanilla_proofs) are not supported: this daemon proves "
            "its own shape-alike circuits; name one in `circuit` (field 40) with an `instance_seed` (41)"
        )
    kind = msg.proof_kind
    if kind and kind not in KINDS:
        raise UsageError(f"invalid proof_kind: {kind}")
    if msg.zkey_id:
        if msg.zkey_id not in cfg.zkeys:
            known = ", ".join(sorted(cfg.zkeys)) or "none are configured"
            raise UsageError(f"unknown zkey_id {msg.zkey_id!r} ({known})")
        if not len(msg.witnesses):
            raise UsageError("a zkey_id request needs its circom witnesses (field 45)")
        _check_partitions(len(msg.witnesses), "witnesses")
        witnesses = [_wtns(raw, j) for j, raw in enumerate(msg.witnesses)]
        return ProofRequest(
            zkey=cfg.zkeys[msg.zkey_id],
            witnesses=witnesses,
            priority=_priority(msg.priority),
            request_id=msg.request_id or str(uuid.uuid4()),
        )
    if len(msg.witnesses):
        raise UsageError("witnesses (field 45) go with a zkey_id (field 44)")
    if msg.circuit:
        circuit = msg.circuit
    elif kind:
        circuit = cfg.circuits[KINDS[kind][0]]
    else:
        raise UsageError("invalid proof_kind: 0 (name a proof_kind or a circuit)")
    from cuzk.circuits import get_circuit

    get_circuit(circuit)  # UnknownCircuitError (INVALID_ARGUMENT) here, not later in a worker
    instances = _instances(msg.instances_json, circuit) if msg.instances_json else None
    partitions = msg.partitions or None
    if partitions is None and instances is None and not msg.circuit and kind:
        partitions = cfg.partitions[KINDS[kind][0]]
    _check_partitions(partitions or 0, "partitions")
    return ProofRequest(
        circuit=circuit,
        seed=msg.instance_seed,
        instances=instances,
        partitions=partitions,
        priority=_priority(msg.priority),
        request_id=msg.request_id or str(uuid.uuid4()),
        params_dir=cfg.param_cache or None,
    )


def _priority(value: int) -> Priority | None:
    """0 is the kind's default; an unknown number means NORMAL, as in the reference."""
    if value == 0:
        return None
    try:
        return Priority(value)
    except ValueError:
        return Priority.NORMAL


def _wtns(raw: bytes, index: int) -> np.ndarray:
    """A .wtns sent on the wire, decoded by the one .wtns reader (which takes a file)."""
    import tempfile

    from cuzk.interop.wtns import read_wtns

    with tempfile.NamedTemporaryFile(prefix=f"cuzk-witness-{index}-", suffix=".wtns") as fh:
        fh.write(raw)
        fh.flush()
        return read_wtns(fh.name)


def _instances(text: str, circuit_name: str) -> list[dict[str, np.ndarray]]:
    """instances_json: a list with one object per partition, each {array name: nested list}.

    Bits are 0/1 integers; field elements are decimal strings (canonical, < r), as
    in public.json. Shapes and kinds are checked against the circuit's schema.
    """
    from cuzk.algebra import constants as C
    from cuzk.algebra.fields import FR
    from cuzk.circuits import get_circuit

    try:
        data = json.loads(text)
    except RecursionError as exc:  # the stdlib decoder recurses once per nesting level
        raise UsageError("instances_json is nested too deeply") from exc
    except ValueError as exc:
        raise UsageError(f"instances_json is not JSON: {exc}") from exc
    if not isinstance(data, list) or not data or not all(isinstance(d, dict) for d in data):
        raise UsageError("instances_json must be a non-empty list of objects, one per partition")
    _check_partitions(len(data), "instances_json")
    schema = get_circuit(circuit_name).schema()
    out = []
    for j, obj in enumerate(data):
        if set(obj) != set(schema):
            missing, extra = sorted(set(schema) - set(obj)), sorted(set(obj) - set(schema))
            raise UsageError(f"instances_json[{j}]: missing {missing}, unexpected {extra}")
        inst = {}
        for name, (kind, shape) in schema.items():
            where = f"instances_json[{j}].{name}"
            if kind == "bits":
                try:  # a ragged nesting is a ValueError of numpy's
                    arr = np.asarray(obj[name])
                except ValueError:
                    arr = np.zeros(0)
                if arr.shape != tuple(shape) or not np.isin(arr, (0, 1)).all():
                    raise UsageError(f"{where}: expected 0/1 values of shape {tuple(shape)}")
                inst[name] = arr.astype(np.uint8)
            else:
                try:
                    flat = np.asarray(obj[name], dtype=object)
                except ValueError:
                    flat = np.zeros(0, dtype=object)
                if flat.shape != tuple(shape):
                    raise UsageError(f"{where}: expected decimal strings of shape {tuple(shape)}")
                values = []
                for s in flat.reshape(-1):
                    # ASCII digits only (int() refuses superscripts that isdigit() admits), no more
                    # than r has (int() refuses strings over 4300 digits)
                    if (
                        not isinstance(s, str)
                        or not (s.isascii() and s.isdigit())
                        or len(s) > len(str(C.R))
                        or int(s) >= C.R
                    ):
                        raise UsageError(f"{where}: {str(s)[:80]!r} is not a canonical decimal field element")
                    values.append(int(s))
                inst[name] = FR.from_ints(values).reshape(*shape, 4)
        out.append(inst)
    return out


def _timings(result: Any) -> dict[str, int]:
    totals = result.timeline.totals()
    out = {field: round(totals.get(span, 0.0) * 1e3) for field, span in _TIMING_SPANS.items()}
    spans = result.timeline.spans
    out["total_ms"] = round((max(s.end for s in spans) - min(s.start for s in spans)) * 1e3) if spans else 0
    return out


def await_response(result: Any) -> pb.AwaitProofResponse:
    status = _STATUS[result.status]
    msg = pb.AwaitProofResponse(job_id=result.job_id, status=status)
    if result.status is JobStatus.COMPLETED:
        msg.proof = result.proof_bytes()
        msg.public_inputs_json = json.dumps([[str(x) for x in p] for p in result.public_inputs])
        for key, value in _timings(result).items():
            setattr(msg, key, value)
    else:
        msg.error_message = result.error or result.status.value
    return msg


class ProvingEngineServicer(pb_grpc.ProvingEngineServicer):
    """Maps each RPC onto the engine on grpc's asyncio server; refuses new work with UNAVAILABLE once draining.

    Waits (AwaitProof, Prove) park a future on the event loop (CompletionWaits), so any number of
    them leaves the server free to answer status and submits; work that blocks (a journal commit,
    a parameter load, the engine's status) runs on a small thread pool instead of the loop.

    With a journal, every accepted job is on disk before SubmitProof answers, and its terminal
    status and AwaitProofResponse when it ends (an engine listener); an id the engine no longer
    knows (after a restart, or pruned) is answered from the journal within result_retention.
    """

    def __init__(self, engine: Any, cfg: DaemonConfig, *, metrics: Any = None, journal: Any = None) -> None:
        from concurrent.futures import ThreadPoolExecutor

        from cuzk.server.stored import StoredResults
        from cuzk.server.waits import CompletionWaits

        self.engine = engine
        self.cfg = cfg
        self.metrics = metrics
        self.journal = journal
        self.started = time.monotonic()
        self.draining = threading.Event()
        self.waits = CompletionWaits(engine)
        self.results = StoredResults(cfg, self._circuit_of)
        self._blocking_pool = ThreadPoolExecutor(max_workers=16, thread_name_prefix="cuzk-rpc")
        self._open: set[str] = set()  # ids accepted and not finished (the queue position of the next)
        self._open_lock = threading.Lock()
        self._client_cancelled: set[str] = set()  # ids a client cancelled (a shutdown's cancels differ)
        self._intake = threading.Lock()  # look-up, journal and submit of one id happen as one step
        self._pruned_at = 0.0
        engine.add_listener(self._log_result)
        if journal is not None:
            engine.add_listener(self._journal_result)

    def close(self) -> None:
        """Stop the blocking-work pool (after the server stopped)."""
        self._blocking_pool.shutdown(wait=True, cancel_futures=True)

    # --- the journal ---
    def _log_result(self, result: Any, _request: Any) -> None:
        """Engine listener: one info line per job that ends, with its times (issue 29: 235 s of silence)."""
        with self._open_lock:
            self._open.discard(result.job_id)
        t = _timings(result)
        times = (
            f"in {t['total_ms'] / 1e3:.2f} s (queue {t['queue_wait_ms'] / 1e3:.2f} s, srs {t['srs_load_ms'] / 1e3:.2f} s, "
            f"synthesis {t['synthesis_ms'] / 1e3:.2f} s, gpu {t['gpu_compute_ms'] / 1e3:.2f} s)"
        )
        if result.status is JobStatus.COMPLETED:
            log.info("job %s completed %s", result.job_id, times)
        else:
            log.info("job %s %s %s: %s", result.job_id, result.status.value, times, result.error or "")

    def _journal_result(self, result: Any, _request: Any) -> None:
        """Engine listener: a job's terminal status and response go to the journal.

        Not so for a job the shutdown cancelled: it stays open and runs after the restart, as it
        would have after a crash (issue 32 item 5)."""
        assert self.journal is not None
        if self.interrupted(result):
            log.info("job %s: interrupted by the shutdown; left open in the journal to run after restart",
                     result.job_id)  # fmt: skip
            return
        self.journal.finish(
            result.job_id, result.status.value, await_response(result).SerializeToString(), result.error
        )
        now = time.monotonic()
        if now - self._pruned_at > 60.0:  # results past their retention are forgotten here too
            self._pruned_at = now
            self.journal.prune(self.cfg.result_retention_s)

    def _retained(self, entry: Any) -> bool:
        """A finished journal row whose result is still within result_retention."""
        return (
            entry is not None
            and entry.result is not None
            and entry.finished_at is not None
            and entry.finished_at >= time.time() - self.cfg.result_retention_s
        )

    def _stored(self, job_id: str) -> pb.AwaitProofResponse | None:
        """The journaled response of a finished job within result_retention, checked; else None.

        A stored result that fails its check (server.stored) is never returned: the job is proved
        again (None: the engine has it now) or, when it cannot be, failed naming the reason."""
        if self.journal is None:
            return None
        entry = self.journal.get(job_id)
        if not self._retained(entry):
            return None
        try:
            return self.results.check(entry)
        except BadStoredResult as exc:
            return self._replace_bad(entry, str(exc))

    def _replace_bad(self, entry: Any, why: str) -> pb.AwaitProofResponse | None:
        """Prove again a job whose stored result failed its check; its FAILED response if that cannot be."""
        assert self.journal is not None
        log.warning("the stored result of job %s failed its check (%s): proving it again", entry.job_id, why)
        problem = "the daemon is shutting down"
        if not self.draining.is_set():
            try:
                req = to_proof_request(pb.SubmitProofRequest.FromString(entry.request), self.cfg)
                self.journal.reopen(entry.job_id)
                self.engine.submit(req)
                return None
            except (CuzkError, DecodeError) as exc:
                problem = str(exc)
        message = (
            f"the stored result failed its check ({why}) and the job could not be proved again: {problem}"
        )
        log.error("job %s: %s", entry.job_id, message)
        resp = pb.AwaitProofResponse(
            job_id=entry.job_id, status=pb.AwaitProofResponse.FAILED, error_message=message
        )
        self.journal.finish(entry.job_id, "failed", resp.SerializeToString(), message)
        return resp

    def _circuit_of(self, msg: pb.SubmitProofRequest) -> str:
        """The registry circuit a journaled request proves ("" for a zkey request)."""
        if msg.zkey_id:
            return ""
        if msg.circuit:
            return msg.circuit
        if msg.proof_kind in KINDS:
            return self.cfg.circuits[KINDS[msg.proof_kind][0]]
        raise UsageError(f"invalid proof_kind: {msg.proof_kind}")

    def recover(self, on_restart: str) -> dict[str, int]:
        """Jobs the last run accepted and never finished: re-run them, or mark them FAILED.

        A job is charged a run only when the last run ended while one of its partitions was on
        a device (the journal's device marks); after MAX_ATTEMPTS charged runs it fails instead
        of being re-run again (a job that kills the daemon must not kill every restart), while
        jobs that only waited in a queue, or that a clean shutdown interrupted, are never charged.
        Returns counts by outcome.
        """
        assert self.journal is not None
        done = {"rerun": 0, "failed": 0}
        charged = self.journal.on_device_jobs()
        for job_id, status in self.journal.unexpected_rows():
            log.warning(
                "journal row %s has status %r, which this daemon does not know: left as it is, not run",
                job_id,
                status,
            )
        for entry in self.journal.open_jobs():
            why = "daemon restarted"
            on_device = entry.job_id in charged
            if on_restart == "rerun" and on_device and entry.attempts >= MAX_ATTEMPTS:
                why = (
                    f"daemon restarted {entry.attempts} times while this job was on a device; "
                    "not re-run again"
                )
            elif on_restart == "rerun":
                try:
                    req = to_proof_request(pb.SubmitProofRequest.FromString(entry.request), self.cfg)
                    if on_device:
                        self.journal.retry(entry.job_id)
                    self._ahead(entry.job_id)
                    self.engine.submit(req)
                    done["rerun"] += 1
                    continue
                except (CuzkError, DecodeError) as exc:
                    why = f"daemon restarted; the job could not be re-run: {exc}"
            resp = pb.AwaitProofResponse(
                job_id=entry.job_id, status=pb.AwaitProofResponse.FAILED, error_message=why
            )
            self.journal.finish(entry.job_id, "failed", resp.SerializeToString(), why)
            done["failed"] += 1
        self.journal.clear_marks()
        return done

    def interrupted(self, result: Any) -> bool:
        """A job the daemon's own shutdown cancelled (not its client): it stays open in the journal."""
        return (
            result.status is JobStatus.CANCELLED
            and self.draining.is_set()
            and result.job_id not in self._client_cancelled
        )

    # --- helpers ---
    async def _abort(self, context: grpc.aio.ServicerContext, exc: BaseException) -> Any:
        code = getattr(grpc.StatusCode, grpc_status(exc))
        await context.abort(code, str(exc) or type(exc).__name__)

    async def _blocking(self, fn: Any, *args: Any) -> Any:
        """`fn(*args)` on the blocking-work pool, so the event loop keeps answering."""
        return await asyncio.get_running_loop().run_in_executor(self._blocking_pool, fn, *args)

    def _accept(self, msg: pb.SubmitProofRequest, peer: str) -> tuple[str, int]:
        """Accept a job (journaled first) or find the one with its id; (job_id, queue position).

        Runs on the blocking pool (a journal commit waits for the disk); raises CuzkError."""
        if self.draining.is_set():
            raise ShuttingDownError("the daemon is shutting down and accepts no new jobs")
        req = to_proof_request(msg, self.cfg)
        if self.journal is None:
            handle = self.engine.submit(req)
            return handle.job_id, handle.queue_position
        job_id = req.request_id  # always set: to_proof_request makes one when the client did not
        wire = pb.SubmitProofRequest()
        wire.CopyFrom(msg)
        wire.request_id = job_id  # a re-run after a restart keeps the id its client awaits
        with self._intake:
            known = self.journal.get(job_id)
            if known is not None and (known.status == "accepted" or self._retained(known)):
                check_same_request(job_id, known.request, wire)  # an id names one request only
            try:
                handle = self.engine.get(job_id)  # in flight or kept: the same job
                return handle.job_id, 0
            except UnknownJobError:
                pass
            if self._stored(job_id) is not None:  # finished before a restart: the same job
                return job_id, 0
            self.journal.accept(job_id, wire.SerializeToString())
            ahead = self._ahead(job_id)
            try:
                handle = self.engine.submit(req)
            except BaseException:
                self.journal.withdraw(job_id)  # refused: it was never accepted
                with self._open_lock:
                    self._open.discard(job_id)
                raise
            log.info(
                "accepted job %s: %s, %d partition(s), %d job(s) ahead, from %s",
                job_id,
                req.key_name,
                req.partition_count,
                ahead,
                peer,
            )
        return handle.job_id, ahead

    def _ahead(self, job_id: str) -> int:
        """Jobs accepted before this one and not finished (queued or running); counts it in.

        The engine's own queue_position counts only its intake queue, which its dispatcher
        empties at once, so every submit said "position 0" (issue 29)."""
        with self._open_lock:
            ahead = len(self._open) - (job_id in self._open)
            self._open.add(job_id)
        return ahead

    async def _submit(self, msg: pb.SubmitProofRequest, context: grpc.aio.ServicerContext) -> tuple[str, int]:
        try:
            result: tuple[str, int] = await self._blocking(self._accept, msg, context.peer())
            return result
        except CuzkError as exc:
            return await self._abort(context, exc)

    def _lookup(self, job_id: str) -> tuple[Any, pb.AwaitProofResponse | None]:
        """(the engine's handle, None) or (None, the journal's stored response); UnknownJobError else."""
        try:
            return self.engine.get(job_id), None
        except UnknownJobError:
            stored = self._stored(job_id)
            if stored is None:  # unknown (UnknownJobError), or a bad stored result proved again
                return self.engine.get(job_id), None
            return None, stored

    async def _await_id(
        self, job_id: str, timeout_s: float | None, context: grpc.aio.ServicerContext
    ) -> pb.AwaitProofResponse:
        try:
            handle, stored = await self._blocking(self._lookup, job_id)
        except CuzkError as exc:
            return await self._abort(context, exc)
        if stored is not None:
            return stored
        remaining = context.time_remaining()
        # the call's own deadline bounds the wait too; when it is the tighter bound, what ran out
        # is the call, not the job's wait: DEADLINE_EXCEEDED, as when the answer comes too late
        # (a TIMEOUT answer that beat the deadline to the client made `await --timeout` exit 4
        # instead of 5, depending on the race)
        by_deadline = remaining is not None and (timeout_s is None or remaining < timeout_s)
        if remaining is not None:
            timeout_s = remaining if timeout_s is None else min(timeout_s, remaining)
        result = await self.waits.wait(handle, timeout_s)
        if result is None and by_deadline:
            await context.abort(
                grpc.StatusCode.DEADLINE_EXCEEDED,
                f"job {handle.job_id} did not finish within the call's deadline; await it again",
            )
        if result is None:
            return pb.AwaitProofResponse(
                job_id=handle.job_id,
                status=pb.AwaitProofResponse.TIMEOUT,
                error_message=f"the job did not finish within {timeout_s:.3f} s",
            )
        if self.interrupted(result):
            await context.abort(
                grpc.StatusCode.UNAVAILABLE,
                f"the daemon is shutting down; job {result.job_id} stays journaled and runs after the "
                "restart: await it again then",
            )
        return await_response(result)

    async def _check(self, msg: Any, context: grpc.aio.ServicerContext) -> Any:
        try:
            return check_request(msg, self.cfg)
        except CuzkError as exc:
            return await self._abort(context, exc)

    # --- RPCs ---
    async def SubmitProof(
        self, request: pb.SubmitProofRequest, context: grpc.aio.ServicerContext
    ) -> pb.SubmitProofResponse:
        job_id, position = await self._submit(request, context)
        return pb.SubmitProofResponse(job_id=job_id, queue_position=position)

    async def AwaitProof(
        self, request: pb.AwaitProofRequest, context: grpc.aio.ServicerContext
    ) -> pb.AwaitProofResponse:
        await self._check(request, context)
        timeout_s = request.timeout_ms / 1e3 if request.timeout_ms else None
        return await self._await_id(request.job_id, timeout_s, context)

    async def Prove(self, request: pb.ProveRequest, context: grpc.aio.ServicerContext) -> pb.ProveResponse:
        if not request.HasField("submit"):
            await context.abort(grpc.StatusCode.INVALID_ARGUMENT, "missing submit field")
        job_id, _ = await self._submit(request.submit, context)
        return pb.ProveResponse(result=await self._await_id(job_id, None, context))

    def _cancel(self, job_id: str) -> bool:
        """True if a running job was cancelled; raises UnknownJobError for an id nobody knows."""
        handle, _stored = self._lookup(job_id)
        if handle is None:
            return False  # it finished before a restart
        was_running = handle.status is JobStatus.RUNNING
        self._client_cancelled.add(job_id)
        cancelled = self.engine.cancel(job_id)
        return bool(cancelled and was_running)

    async def CancelProof(
        self, request: pb.CancelProofRequest, context: grpc.aio.ServicerContext
    ) -> pb.CancelProofResponse:
        await self._check(request, context)
        try:
            was_running = await self._blocking(self._cancel, request.job_id)
        except CuzkError as exc:
            return await self._abort(context, exc)
        return pb.CancelProofResponse(was_running=was_running)

    async def GetStatus(
        self, request: pb.GetStatusRequest, context: grpc.aio.ServicerContext
    ) -> pb.GetStatusResponse:
        st = await self._blocking(self.engine.status)
        return status_message(st, uptime=time.monotonic() - self.started)

    def _metrics_text(self) -> str:
        text = self.metrics.text() if self.metrics is not None else ""
        busy = self.engine.status().synthesis_workers.busy
        return text + (
            "# HELP cuzk_rpc_waiting Prove and AwaitProof calls waiting for their job now\n"
            f"# TYPE cuzk_rpc_waiting gauge\ncuzk_rpc_waiting {self.waits.count}\n"
            "# HELP cuzk_synthesis_busy Synthesis worker processes holding a task now\n"
            f"# TYPE cuzk_synthesis_busy gauge\ncuzk_synthesis_busy {busy}\n"
        )

    async def GetMetrics(
        self, request: pb.GetMetricsRequest, context: grpc.aio.ServicerContext
    ) -> pb.GetMetricsResponse:
        return pb.GetMetricsResponse(prometheus_text=await self._blocking(self._metrics_text))

    async def PreloadSRS(
        self, request: pb.PreloadSrsRequest, context: grpc.aio.ServicerContext
    ) -> pb.PreloadSrsResponse:
        target = await self._check(request, context)
        try:
            loaded = await self._blocking(self.engine.preload, target)
        except CuzkError as exc:
            return await self._abort(context, exc)
        already = all(a for a, _ in loaded.values())
        seconds = sum(s for _, s in loaded.values())
        return pb.PreloadSrsResponse(
            already_loaded=already, load_time_ms=0 if already else int(seconds * 1e3)
        )

    async def EvictSRS(
        self, request: pb.EvictSrsRequest, context: grpc.aio.ServicerContext
    ) -> pb.EvictSrsResponse:
        target = await self._check(request, context)
        try:
            freed = await self._blocking(self.engine.evict, target)
        except CuzkError as exc:
            return await self._abort(context, exc)
        return pb.EvictSrsResponse(
            was_loaded=any(w for w, _ in freed.values()), freed_bytes=sum(b for _, b in freed.values())
        )


_TIERS = {"hot": pb.SRSStatus.HOT, "warm": pb.SRSStatus.WARM, "cold": pb.SRSStatus.COLD}


def srs_circuit_id(key: Any) -> str:
    """The circuit id an SRS entry is shown under: its key's ref (cuzk.engine.keys.SrsKey)."""
    return str(key[0] if isinstance(key, list | tuple) else key)


def status_message(st: EngineStats, *, uptime: float) -> pb.GetStatusResponse:
    """GetStatusResponse from engine.status(): each device once, every SRS entry with its true tier."""
    msg = pb.GetStatusResponse(
        total_proofs_completed=int(st.counters.get("completed", 0)),
        total_proofs_failed=int(st.counters.get("failed", 0)),
        uptime_seconds=int(uptime),
        memory_budget_bytes=st.memory.total,
        memory_reserved_bytes=st.memory.used,
        memory_peak_bytes=st.memory.peak,
    )
    by_device: dict[int, list[GpuWorkerStats]] = {}
    for w in st.gpu_workers:
        by_device.setdefault(w.device, []).append(w)
    for device, workers in sorted(by_device.items()):
        busy = next((w for w in workers if w.job), None)
        info = st.devices.get(device, DeviceStats(f"GPU {device}"))
        msg.gpus.add(
            ordinal=device,
            name=info.name,
            vram_total_bytes=info.total_bytes,
            vram_free_bytes=info.free_bytes,
            current_job_id=str(busy.job) if busy else "",
            current_proof_kind=display_kind(busy.family) if busy else "",
            workers=len(workers),
            busy_workers=sum(1 for w in workers if w.job),
        )
    for entry in st.srs:
        msg.loaded_srs.add(
            circuit_id=srs_circuit_id(entry.key),
            tier=_TIERS.get(entry.tier, pb.SRSStatus.COLD),
            size_bytes=entry.size_bytes,
            ref_count=entry.ref_count,
        )
    for kind, q in sorted(st.jobs_by_kind.items()):  # jobs in flight by family: queued / running
        msg.queues.add(proof_kind=display_kind(kind), pending=q.queued, in_progress=q.running)
    for job in st.jobs_in_flight:
        parts = job.partitions
        msg.jobs.add(
            job_id=job.job_id,
            proof_kind=display_kind(job.family),
            partitions_total=len(parts),
            partitions_done=sum(1 for p in parts if p.state == "done"),
            running=job.status == "running",
        )
    return msg


class DecodeInterceptor(grpc.aio.ServerInterceptor):
    """Bytes that do not parse as the method's request message are INVALID_ARGUMENT, naming the message.

    grpc's own deserialization failure is INTERNAL ("Exception deserializing request!"), which
    reads as a bug of the server; a client that sent bad bytes should learn that it did.
    """

    async def intercept_service(
        self,
        continuation: Any,
        handler_call_details: grpc.HandlerCallDetails,
    ) -> Any:
        handler = await continuation(handler_call_details)
        if handler is None or handler.unary_unary is None or handler.request_deserializer is None:
            return handler
        parse, inner = handler.request_deserializer, handler.unary_unary
        method = handler_call_details.method.rsplit("/", 1)[-1]

        async def behavior(raw: bytes, context: grpc.aio.ServicerContext) -> Any:
            try:
                request = parse(raw)
            except Exception as exc:  # DecodeError, or anything else the parser raises on bad bytes
                await context.abort(
                    grpc.StatusCode.INVALID_ARGUMENT,
                    f"the request of {method} does not parse as its message: {exc}",
                )
            return await inner(request, context)

        return handler._replace(request_deserializer=None, unary_unary=behavior)
