"""`cuzk bench batch --addr ADDR`: the batch benchmark against a running daemon, through the gRPC client.

The daemon's parameters are loaded (PreloadSRS) and one warm-up job proved
before the clock starts, as in the in-process run. Then `count` jobs go in
with at most `concurrency` in flight (one Prove call per job on its own
thread, so each latency is measured from its own submission); the per-job
lines and the summary are bench batch's own, from the timings the daemon
returns (queue wait, SRS load, synthesis, GPU). Every proof is verified here:
its public inputs must be the requested instance's, and the proof must verify
against the circuit's vk (`--vk`, else the local parameter cache's, which is
the daemon's when both run on one host with the same cache). A proof that
does not is counted as failed.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import time
import uuid
from concurrent.futures import FIRST_COMPLETED, Future, ThreadPoolExecutor, wait
from pathlib import Path
from typing import Any

from cuzk import config
from cuzk.cli.bench_batch import job_line, progress_bar, summary
from cuzk.cli.client import Client, channel_target
from cuzk.errors import UsageError

WARMUP_SEED = 10**6  # as the in-process run's warm-up job


def check_remote_args(args: argparse.Namespace) -> None:
    """A bad --addr, and options that only mean something for the in-process engine, are refused."""
    channel_target(args.addr)
    for flag, given in (("--set", args.set), ("--backend", args.backend), ("--timeline", args.timeline)):
        if given:
            raise UsageError(
                f"{flag} applies to the in-process engine, not to a daemon (--addr): the daemon's own "
                "config sets its engine, and its spans are on its status page"
            )


def default_vk(circuit_name: str) -> Path:
    """The circuit's vk in the local parameter cache (UsageError when there is none)."""
    from cuzk.circuits import get_circuit
    from cuzk.groth16.api import params_dir_for

    circuit = get_circuit(circuit_name)
    path = params_dir_for(circuit.name, circuit.topology().hash) / f"{circuit.name}.vk"
    if not path.is_file():
        raise UsageError(
            f"no verifying key for {circuit.name} in the local parameter cache ({path}); pass --vk with the "
            "daemon's (its srs.param_cache folder, or `cuzk prove --vk-out` run with the daemon's cache)"
        )
    return path


class Checker:
    """Verifies a daemon's AwaitProofResponse: the requested instance's public inputs, a valid proof."""

    def __init__(self, circuit_name: str, vk_path: Path) -> None:
        from cuzk.circuits import get_circuit
        from cuzk.groth16.params_io import read_vk

        self.circuit = get_circuit(circuit_name)
        self.vk = read_vk(vk_path)
        self.vk_path = vk_path

    def problem(self, resp: Any, seed: int, partitions: int) -> str | None:
        """None when every proof is right; else what is wrong."""
        from cuzk.groth16 import proofs_from_bytes, verify

        proofs = proofs_from_bytes(resp.proof)
        publics = json.loads(resp.public_inputs_json or "[]")
        if len(proofs) != partitions or len(publics) != partitions:
            return f"{len(proofs)} proof(s) and {len(publics)} input list(s) for {partitions} partition(s)"
        for p, (proof, pub) in enumerate(zip(proofs, publics, strict=True)):
            expected = self.circuit.public_inputs(self.circuit.random_instance(seed=seed + p))
            if [int(x) for x in pub] != expected:
                return f"partition {p}: the public inputs are not those of instance seed {seed + p}"
            if not verify(self.vk, expected, proof):
                return f"partition {p}: the proof does not verify against {self.vk_path}"
        return None


def _request(circuit: str, seed: int, partitions: int, request_id: str) -> Any:
    from cuzk.server.v1 import proving_pb2 as pb

    submit = pb.SubmitProofRequest(
        circuit=circuit, instance_seed=seed, partitions=partitions, request_id=request_id
    )
    return pb.ProveRequest(submit=submit)


def _row(j: int, seed: int, resp: Any, problem: str | None, submitted: float, done: float, t0: float) -> dict:
    from cuzk.server.v1 import proving_pb2 as pb

    status = pb.AwaitProofResponse.Status.Name(resp.status).lower()
    if status == "completed" and problem:
        status = "invalid"
    return {
        "job": j, "seed": seed, "job_id": resp.job_id, "status": status,
        "error": problem or resp.error_message, "latency_s": done - submitted, "done_s": done - t0,
        "queue_wait_s": resp.queue_wait_ms / 1e3, "srs_load_s": resp.srs_load_ms / 1e3,
        "synthesis_s": resp.synthesis_ms / 1e3, "gpu_s": resp.gpu_compute_ms / 1e3,
        "daemon_total_s": resp.total_ms / 1e3,
    }  # fmt: skip


def run_remote(args: argparse.Namespace) -> dict[str, Any]:
    """Prove args.count jobs through the daemon at args.addr; the figures, as run_batch gives them."""
    from cuzk.cli.output import console
    from cuzk.errors import EngineError
    from cuzk.server.v1 import proving_pb2 as pb

    circuit, count, partitions = args.circuit, args.count, args.partitions
    client = Client(args.addr, args.token or config.get().client.token)
    window = args.concurrency or count
    seeds = [args.seed + j * partitions for j in range(count)]
    tag = uuid.uuid4().hex[:8]  # request ids of this run: bench-TAG-J
    out: dict[str, Any] = {"mode": "daemon", "addr": args.addr, "circuit": circuit, "count": count,
                           "partitions": partitions, "concurrency": window}  # fmt: skip
    con = console()
    try:
        loaded = client.call("PreloadSRS", pb.PreloadSrsRequest(circuit_id=circuit))
        out["srs_load_s"] = loaded.load_time_ms / 1e3
        checker = Checker(circuit, args.vk or default_vk(circuit))  # the daemon has made its parameters now
        out["vk"] = str(checker.vk_path)
        t = time.perf_counter()
        warm = client.call("Prove", _request(circuit, WARMUP_SEED, partitions, f"bench-{tag}-warmup")).result
        ok = warm.status == pb.AwaitProofResponse.COMPLETED
        problem = checker.problem(warm, WARMUP_SEED, partitions) if ok else None
        if not ok or problem:
            raise EngineError(f"the warm-up job failed: {problem or warm.error_message or warm.status}")
        out["warmup_s"] = time.perf_counter() - t

        def prove(j: int) -> tuple[int, Any, float, float]:
            submitted = time.perf_counter()
            resp = client.call("Prove", _request(circuit, seeds[j], partitions, f"bench-{tag}-{j}")).result
            return j, resp, submitted, time.perf_counter()

        rows: list[dict[str, Any]] = []
        t0 = time.perf_counter()
        with progress_bar(con, "daemon", count) as (bar, task), ThreadPoolExecutor(window) as pool:
            running: set[Future] = {pool.submit(prove, j) for j in range(count)}
            try:
                while running:
                    finished, running = wait(running, return_when=FIRST_COMPLETED)
                    for fut in sorted(finished, key=lambda f: f.result()[3]):
                        j, resp, submitted, done = fut.result()
                        ok = resp.status == pb.AwaitProofResponse.COMPLETED
                        problem = checker.problem(resp, seeds[j], partitions) if ok else None
                        rows.append(_row(j, seeds[j], resp, problem, submitted, done, t0))
                        bar.console.print(job_line(rows[-1]), soft_wrap=True)
                        bar.advance(task)
            except BaseException:  # Ctrl-C or a refused call: leave nothing of this run in the daemon
                for f in running:
                    f.cancel()
                for j in range(count):
                    with contextlib.suppress(UsageError):  # never submitted, or already finished
                        client.call("CancelProof", pb.CancelProofRequest(job_id=f"bench-{tag}-{j}"))
                raise
        t1 = time.perf_counter()
    finally:
        client.close()
    rows.sort(key=lambda r: r["done_s"])
    out.update(summary(rows, t1 - t0, partitions))
    out["verified"] = sum(r["status"] == "completed" for r in rows) * partitions
    return out
