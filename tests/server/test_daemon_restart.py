"""Crashes lose no job: kill -9 of the daemon mid-proof, then a restart on the same state folder.

Every accepted id reaches exactly one terminal status after the restart: re-run (the default,
`daemon.on_restart = "rerun"`) or FAILED "daemon restarted" (`"fail"`); AwaitProof on any id
works across the restart, finished results served from the journal. A synthesis worker killed
with SIGKILL fails only its job. Real daemon processes, real sockets; every proof verified.
Waits are on the daemon's own reports (GetStatus, GetMetrics), never on sleeps.
"""

from __future__ import annotations

import os
import signal
from collections.abc import Iterator
from pathlib import Path

import grpc
import pytest
from daemon_proc import Daemon, metric, running, verify

from cuzk import config
from cuzk.server.journal import Journal
from cuzk.server.v1 import proving_pb2 as pb

pytestmark = pytest.mark.slow

JOBS = 2  # porep-tiny jobs in flight when the daemon is killed
PARTITIONS = 2


@pytest.fixture(scope="module")
def cache(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    path = tmp_path_factory.mktemp("cache")
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("CUZK_CACHE_DIR", str(path))  # verify() reads the daemon's parameters
        config.reload()
        yield path
    config.reload()


def _await(d: Daemon, job_id: str) -> pb.AwaitProofResponse:
    return d.stub().AwaitProof(pb.AwaitProofRequest(job_id=job_id), timeout=600)


@pytest.mark.parametrize("mode", ["rerun", "fail"])
def test_kill_9_mid_proof_loses_no_job(tmp_path: Path, cache: Path, mode: str) -> None:
    state = tmp_path / "state"
    d = Daemon(tmp_path, cache=cache, extra=f'state_dir = "{state}"\non_restart = "{mode}"')
    stub = d.stub()
    before = stub.Prove(
        pb.ProveRequest(
            submit=pb.SubmitProofRequest(circuit="winning-tiny", instance_seed=1, request_id="done")
        )
    ).result
    assert before.status == pb.AwaitProofResponse.COMPLETED
    verify("winning-tiny", 1, before)
    seeds = {f"open-{k}": 100 + 10 * k for k in range(JOBS)}
    for job_id, seed in seeds.items():
        req = pb.SubmitProofRequest(
            circuit="porep-tiny", instance_seed=seed, partitions=PARTITIONS, request_id=job_id
        )
        assert stub.SubmitProof(req).job_id == job_id
    while running(stub) < 1:  # a proof is under way (the daemon's own report), then the crash
        pass
    d.kill()

    journal = Journal(state / "jobs.sqlite")
    try:  # what the dead daemon left: the finished job with its result, the rest open
        interrupted = {e.job_id for e in journal.open_jobs()}
        done = journal.get("done")
        assert done is not None and done.status == "completed" and done.result
    finally:
        journal.close()
    assert interrupted and interrupted <= set(seeds)

    d.start()  # same config, same state folder; the stale socket is removed
    try:
        again = _await(d, "done")  # finished before the crash: from the journal
        assert again.status == pb.AwaitProofResponse.COMPLETED and again.proof == before.proof
        verify("winning-tiny", 1, again)
        ends = {}
        for job_id, seed in seeds.items():
            ends[job_id] = r = _await(d, job_id)
            if mode == "fail" and job_id in interrupted:
                assert r.status == pb.AwaitProofResponse.FAILED and r.error_message == "daemon restarted"
                assert not r.proof
            else:
                assert r.status == pb.AwaitProofResponse.COMPLETED, r.error_message
                assert verify("porep-tiny", seed, r) == PARTITIONS
            assert _await(d, job_id).status == r.status  # one terminal status, asked twice
        resubmitted = d.stub().SubmitProof(
            pb.SubmitProofRequest(
                circuit="porep-tiny",
                instance_seed=seeds["open-0"],
                partitions=PARTITIONS,
                request_id="open-0",
            )
        )
        assert resubmitted.job_id == "open-0"  # a finished id submitted again: the same job, not re-run
        assert _await(d, "open-0").status == ends["open-0"].status
        with pytest.raises(grpc.RpcError) as info:
            d.stub().AwaitProof(pb.AwaitProofRequest(job_id="never-submitted"))
        assert info.value.code() == grpc.StatusCode.NOT_FOUND
        after = (
            d.stub()
            .Prove(pb.ProveRequest(submit=pb.SubmitProofRequest(circuit="winning-tiny", instance_seed=7)))
            .result
        )
        assert after.status == pb.AwaitProofResponse.COMPLETED
        verify("winning-tiny", 7, after)
    finally:
        code, log = d.stop()
    assert code == 0, log[-3000:]
    journal = Journal(state / "jobs.sqlite")
    try:
        counts = journal.counts()
    finally:
        journal.close()
    assert "accepted" not in counts  # every journaled job is terminal
    want = {"completed": 2 + JOBS} if mode == "rerun" else {"completed": 2 + JOBS - len(interrupted)}
    if mode == "fail":
        want["failed"] = len(interrupted)
    assert counts == want
    rerun, failed = (len(interrupted), 0) if mode == "rerun" else (0, len(interrupted))
    print(
        f"restart ({mode}): {sum(counts.values())} jobs accepted, {len(interrupted)} interrupted by kill -9, "
        f"{counts.get('completed', 0)} completed, {counts.get('failed', 0)} failed, 0 lost"
    )
    assert f"{rerun} open job(s) of the last run re-run, {failed} failed (on_restart = {mode})" in log


def _writes(pid: int) -> int:
    """write-family system calls the process has made (/proc/PID/io syscw)."""
    io = Path(f"/proc/{pid}/io").read_text()
    return int(next(ln for ln in io.splitlines() if ln.startswith("syscw:")).split()[1])


def test_a_killed_synthesis_worker_fails_only_its_job(tmp_path: Path, cache: Path) -> None:
    """SIGKILL of the synthesis worker while it synthesizes a partition fails that job; the next succeeds.

    Certain, not timed: the worker is stopped (SIGSTOP) before the job comes, so the task waits in
    its pipe (cuzk_synthesis_busy says when it is there); let go, its first write is the "started"
    message, and stopped again at once it has said it started and not yet sent its result (the
    count of its writes says both); then SIGKILL.
    """
    d = Daemon(tmp_path, cache=cache, extra=f'state_dir = "{tmp_path / "state"}"')
    try:
        stub = d.stub()
        warm = stub.Prove(
            pb.ProveRequest(submit=pb.SubmitProofRequest(circuit="winning-tiny", instance_seed=1))
        )
        assert warm.result.status == pb.AwaitProofResponse.COMPLETED  # the synthesis pool is up
        verify("winning-tiny", 1, warm.result)
        workers = [pid for pid, cmd in d.children() if "cuzk.engine.synth_worker" in cmd]
        assert len(workers) == 1, d.children()  # max_parallel_synthesis = 1
        pid = workers[0]
        os.kill(pid, signal.SIGSTOP)
        base = _writes(pid)
        victim = stub.SubmitProof(pb.SubmitProofRequest(circuit="porep-tiny", instance_seed=2)).job_id
        while metric(stub, "cuzk_synthesis_busy") < 1:  # the task is in the stopped worker's pipe
            pass
        os.kill(pid, signal.SIGCONT)
        while _writes(pid) == base:  # it has read the task and says "started"
            pass
        os.kill(pid, signal.SIGSTOP)
        assert _writes(pid) == base + 1  # stopped inside the task: its result not sent
        os.kill(pid, signal.SIGKILL)
        r = stub.AwaitProof(pb.AwaitProofRequest(job_id=victim))
        assert r.status == pb.AwaitProofResponse.FAILED
        assert f"synthesis worker {pid} died (signal 9: SIGKILL)" in r.error_message, r.error_message
        nxt = stub.Prove(pb.ProveRequest(submit=pb.SubmitProofRequest(circuit="porep-tiny", instance_seed=3)))
        assert nxt.result.status == pb.AwaitProofResponse.COMPLETED, nxt.result.error_message
        verify("porep-tiny", 3, nxt.result)
        assert d.alive()
    finally:
        code, log = d.stop()
    assert code == 0, log[-3000:]
