"""What a stop or a crash does to open jobs (issue 32 items 5 and 6).

Item 5: a SIGTERM whose grace period runs out cancels the jobs still in flight, but they stay
open in the journal and run after the restart, as after a crash; their waiting clients hear
UNAVAILABLE ("await it again"), not a final CANCELLED. A job its client cancelled stays cancelled.

Item 6: a crash is charged only to jobs with a partition on a device at that moment. Three
kill -9s while one job proves and others only wait in the queue: the proving job fails after
its third charged run, and every queued job still completes.
"""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import grpc
import pytest
from daemon_proc import Daemon, metric, running, verify

from cuzk.server.journal import Journal
from cuzk.server.v1 import proving_pb2 as pb

pytestmark = pytest.mark.slow

LONG = 6  # porep-tiny partitions: seconds on the CPU, so a SIGTERM with no grace finds it running


def test_sigterm_leaves_interrupted_jobs_open_to_run_after_restart(tmp_path: Path, cache: Path) -> None:
    state = tmp_path / "state"
    d = Daemon(tmp_path, cache=cache, grace="0s", extra=f'state_dir = "{state}"')
    stub = d.stub()
    long = pb.SubmitProofRequest(circuit="porep-tiny", instance_seed=40, partitions=LONG, request_id="long")
    queued = {f"q{k}": 50 + k for k in range(3)}
    stub.SubmitProof(long)
    for job_id, seed in queued.items():
        stub.SubmitProof(pb.SubmitProofRequest(circuit="winning-tiny", instance_seed=seed, request_id=job_id))
    stub.SubmitProof(pb.SubmitProofRequest(circuit="porep-tiny", partitions=LONG, request_id="mine"))
    stub.CancelProof(pb.CancelProofRequest(job_id="mine"))  # the client's own cancel: final
    with ThreadPoolExecutor(1) as pool:
        waiter = pool.submit(stub.AwaitProof, pb.AwaitProofRequest(job_id="long"), timeout=600)
        while running(stub) < 1 or metric(stub, "cuzk_rpc_waiting") < 1:
            pass
        code, log = d.stop()
        with pytest.raises(grpc.RpcError) as info:
            waiter.result()
    assert code == 0, log[-3000:]
    assert info.value.code() == grpc.StatusCode.UNAVAILABLE
    assert "stays journaled and runs after the restart" in info.value.details()
    assert "job long: interrupted by the shutdown; left open in the journal" in log
    journal = Journal(state / "jobs.sqlite")
    try:
        assert "long" in {e.job_id for e in journal.open_jobs()}
        assert journal.get("mine").status == "cancelled"  # type: ignore[union-attr]
        assert not journal.on_device_jobs()  # a clean stop charges nobody
        assert journal.get("long").attempts == 1  # type: ignore[union-attr]
    finally:
        journal.close()

    d.start()
    try:
        stub = d.stub()
        r = stub.AwaitProof(pb.AwaitProofRequest(job_id="long"), timeout=600)
        assert r.status == pb.AwaitProofResponse.COMPLETED, r.error_message
        assert verify("porep-tiny", 40, r) == LONG
        for job_id, seed in queued.items():
            q = stub.AwaitProof(pb.AwaitProofRequest(job_id=job_id), timeout=600)
            assert q.status == pb.AwaitProofResponse.COMPLETED, q.error_message
            verify("winning-tiny", seed, q)
        assert stub.AwaitProof(pb.AwaitProofRequest(job_id="mine")).status == pb.AwaitProofResponse.CANCELLED
    finally:
        code, log = d.stop()
    assert code == 0, log[-3000:]


def test_crashes_are_charged_only_to_jobs_on_a_device(tmp_path: Path, cache: Path) -> None:
    state = tmp_path / "state"
    # one partition's working set beside the parameters: one job proves, the rest wait for memory
    from cuzk.engine import work

    budget = work.srs_bytes("porep-tiny") + work.working_set("porep-tiny").total
    d = Daemon(tmp_path, cache=cache, budget=str(budget), extra=f'state_dir = "{state}"')
    stub = d.stub()
    stub.SubmitProof(
        pb.SubmitProofRequest(circuit="porep-tiny", instance_seed=60, partitions=40, request_id="heavy")
    )
    waiting = {f"w{k}": 70 + k for k in range(3)}
    for job_id, seed in waiting.items():
        stub.SubmitProof(pb.SubmitProofRequest(circuit="porep-tiny", instance_seed=seed, request_id=job_id))
    for _crash in range(3):
        journal = Journal(state / "jobs.sqlite")
        try:
            while "heavy" not in journal.on_device_jobs():  # the heavy job's partition is on a device
                assert d.alive()
            assert not journal.on_device_jobs() & set(waiting), "a queued job was on a device"
        finally:
            journal.close()
        d.kill()
        d.start()
    try:
        stub = d.stub()
        r = stub.AwaitProof(pb.AwaitProofRequest(job_id="heavy"), timeout=600)
        assert r.status == pb.AwaitProofResponse.FAILED
        assert "3 times while this job was on a device" in r.error_message
        for job_id, seed in waiting.items():
            w = stub.AwaitProof(pb.AwaitProofRequest(job_id=job_id), timeout=600)
            assert w.status == pb.AwaitProofResponse.COMPLETED, w.error_message
            verify("porep-tiny", seed, w)
    finally:
        code, log = d.stop()
    assert code == 0, log[-3000:]
