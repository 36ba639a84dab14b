"""The daemon end to end: a real `cuzk daemon` subprocess, real sockets, the client generated from the .proto.

CPU backend; porep-tiny and winning-tiny. Every proof that comes back is
verified here against the circuit's vk, and its public inputs against the
instance. Waits are on RPC results and process exits, never on sleeps.
"""

from __future__ import annotations

import os
import stat
import threading
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import grpc
import pytest
from daemon_proc import Daemon, verify

from cuzk import config
from cuzk.server.auth import bearer
from cuzk.server.v1 import proving_pb2 as pb
from cuzk.server.v1 import proving_pb2_grpc as pb_grpc

pytestmark = pytest.mark.slow

LONG_JOB = 40  # partitions: long enough (tens of seconds on the CPU) to cancel or time out before it ends


@pytest.fixture(scope="module")
def cache(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("cache")


@pytest.fixture(scope="module")
def daemon(tmp_path_factory: pytest.TempPathFactory, cache: Path) -> Iterator[Daemon]:
    d = Daemon(tmp_path_factory.mktemp("daemon"), cache=cache)
    yield d
    code, err = d.stop()
    assert code == 0, err[-3000:]
    assert not d.sock.exists()  # the socket is removed on a clean stop


def test_socket_mode_is_0600(daemon: Daemon) -> None:
    mode = daemon.sock.stat().st_mode
    assert stat.S_ISSOCK(mode) and stat.S_IMODE(mode) == 0o600


def test_prove_submit_await_and_reused_request_ids(daemon: Daemon, cache: Path) -> None:
    os.environ["CUZK_CACHE_DIR"] = str(cache)  # _verify reads the daemon's parameters
    config.reload()  # settings are read once per process
    stub = daemon.stub()
    r = stub.Prove(
        pb.ProveRequest(submit=pb.SubmitProofRequest(circuit="porep-tiny", instance_seed=5, partitions=2))
    )
    assert r.result.status == pb.AwaitProofResponse.COMPLETED, r.result.error_message
    assert len(r.result.proof) == 2 * 192 and r.result.total_ms > 0 and r.result.synthesis_ms > 0
    verify("porep-tiny", 5, r.result)
    s = stub.SubmitProof(pb.SubmitProofRequest(circuit="winning-tiny", instance_seed=1, request_id="win-1"))
    assert s.job_id == "win-1"
    again = stub.SubmitProof(
        pb.SubmitProofRequest(circuit="winning-tiny", instance_seed=1, request_id="win-1")
    )
    assert again.job_id == "win-1"  # in flight or done: the same job
    a = stub.AwaitProof(pb.AwaitProofRequest(job_id="win-1"))
    assert a.status == pb.AwaitProofResponse.COMPLETED
    verify("winning-tiny", 1, a)
    stored = stub.AwaitProof(pb.AwaitProofRequest(job_id="win-1"))  # after it finished: the stored result
    assert stored.proof == a.proof


def test_concurrent_clients(daemon: Daemon) -> None:
    def one(seed: int) -> pb.AwaitProofResponse:
        stub = daemon.stub()
        req = pb.SubmitProofRequest(circuit="winning-tiny", instance_seed=seed, priority=pb.HIGH)
        return stub.Prove(pb.ProveRequest(submit=req)).result

    with ThreadPoolExecutor(4) as ex:
        results = list(ex.map(one, range(10, 14)))
    assert [r.status for r in results] == [pb.AwaitProofResponse.COMPLETED] * 4
    assert len({r.job_id for r in results}) == 4


def test_bad_requests_get_clear_statuses(daemon: Daemon) -> None:
    stub = daemon.stub()
    cases = [
        (pb.SubmitProofRequest(), grpc.StatusCode.INVALID_ARGUMENT, "proof_kind"),
        (pb.SubmitProofRequest(proof_kind=9), grpc.StatusCode.INVALID_ARGUMENT, "invalid proof_kind: 9"),
        (pb.SubmitProofRequest(circuit="porep-huge"), grpc.StatusCode.INVALID_ARGUMENT, "porep-huge"),
        (
            pb.SubmitProofRequest(proof_kind=pb.POREP_SEAL_COMMIT, vanilla_proof=b"{}"),
            grpc.StatusCode.INVALID_ARGUMENT,
            "not supported",
        ),
        (
            pb.SubmitProofRequest(circuit="porep-tiny", instances_json="[1]"),
            grpc.StatusCode.INVALID_ARGUMENT,
            "objects",
        ),
        (
            pb.SubmitProofRequest(zkey_id="nope", witnesses=[b"x"]),
            grpc.StatusCode.INVALID_ARGUMENT,
            "unknown zkey_id",
        ),
    ]
    for req, code, text in cases:
        with pytest.raises(grpc.RpcError) as info:
            stub.SubmitProof(req)
        assert info.value.code() == code and text in info.value.details(), info.value.details()
    with pytest.raises(grpc.RpcError) as info:
        stub.AwaitProof(pb.AwaitProofRequest(job_id="never-submitted"))
    assert info.value.code() == grpc.StatusCode.NOT_FOUND
    with pytest.raises(grpc.RpcError) as info:
        stub.Prove(pb.ProveRequest())
    assert info.value.code() == grpc.StatusCode.INVALID_ARGUMENT and "missing submit" in info.value.details()
    with pytest.raises(grpc.RpcError) as info:  # over the 128 MiB message limit
        stub.SubmitProof(pb.SubmitProofRequest(circuit="porep-tiny", instances_json="x" * (129 << 20)))
    assert info.value.code() == grpc.StatusCode.RESOURCE_EXHAUSTED
    ok = stub.Prove(pb.ProveRequest(submit=pb.SubmitProofRequest(circuit="winning-tiny", instance_seed=2)))
    assert ok.result.status == pb.AwaitProofResponse.COMPLETED  # the daemon is still fine


def test_cancel_and_await_timeout(daemon: Daemon) -> None:
    stub = daemon.stub()
    s = stub.SubmitProof(
        pb.SubmitProofRequest(circuit="porep-tiny", partitions=LONG_JOB, request_id="long-1")
    )
    t = stub.AwaitProof(pb.AwaitProofRequest(job_id=s.job_id, timeout_ms=50))
    assert t.status == pb.AwaitProofResponse.TIMEOUT
    stub.CancelProof(pb.CancelProofRequest(job_id=s.job_id))
    c = stub.AwaitProof(pb.AwaitProofRequest(job_id=s.job_id))
    assert c.status == pb.AwaitProofResponse.CANCELLED and not c.proof
    with pytest.raises(grpc.RpcError) as info:
        stub.CancelProof(pb.CancelProofRequest(job_id="never-submitted"))
    assert info.value.code() == grpc.StatusCode.NOT_FOUND


def test_status_preload_evict_metrics(daemon: Daemon) -> None:
    stub = daemon.stub()
    p = stub.PreloadSRS(pb.PreloadSrsRequest(circuit_id="snap-tiny"))
    assert not p.already_loaded and p.load_time_ms > 0
    assert stub.PreloadSRS(pb.PreloadSrsRequest(circuit_id="snap-tiny")).already_loaded
    st = stub.GetStatus(pb.GetStatusRequest())
    assert [g.ordinal for g in st.gpus] == [0]  # each device once, not once per worker
    snap = [s for s in st.loaded_srs if s.circuit_id == "snap-tiny"]
    assert snap and snap[0].tier == pb.SRSStatus.HOT and snap[0].size_bytes > 0 and snap[0].ref_count == 0
    e = stub.EvictSRS(pb.EvictSrsRequest(circuit_id="snap-tiny"))
    assert e.was_loaded and e.freed_bytes == snap[0].size_bytes
    assert not stub.EvictSRS(pb.EvictSrsRequest(circuit_id="snap-tiny")).was_loaded
    text = stub.GetMetrics(pb.GetMetricsRequest()).prometheus_text
    for name in ("cuzk_proofs_completed_total", "cuzk_queue_depth", "cuzk_gpu_workers", "cuzk_phase_seconds"):
        assert f"# TYPE {name}" in text
    assert 'cuzk_stage_queue_depth{stage="device_room"} 0.0' in text  # jobs parked for room on a card


def _waiting(stub: pb_grpc.ProvingEngineStub) -> int:
    text = stub.GetMetrics(pb.GetMetricsRequest()).prometheus_text
    return int(next(ln for ln in text.splitlines() if ln.startswith("cuzk_rpc_waiting ")).split()[1])


def test_sigterm_gives_every_waiter_an_answer(tmp_path: Path, cache: Path) -> None:
    """Each waiter hears its job's end, or UNAVAILABLE for a job the shutdown left open in the journal."""
    d = Daemon(tmp_path, cache=cache, grace="1s")  # in-flight work past one second is interrupted
    stub = d.stub()
    ids = [
        stub.SubmitProof(
            pb.SubmitProofRequest(circuit="porep-tiny", partitions=LONG_JOB, instance_seed=s)
        ).job_id
        for s in range(3)
    ]  # accepted: each must end, or stay open for the next start
    results: dict[str, pb.AwaitProofResponse | grpc.StatusCode] = {}

    def wait(job_id: str) -> None:
        try:
            results[job_id] = stub.AwaitProof(pb.AwaitProofRequest(job_id=job_id))
        except grpc.RpcError as exc:
            results[job_id] = exc.code()

    threads = [threading.Thread(target=wait, args=(j,)) for j in ids]
    for t in threads:
        t.start()
    while _waiting(stub) < 3:  # synchronize on the daemon's own count of blocked awaits, not on time
        pass
    d.terminate()
    for t in threads:
        t.join(timeout=300)
    code, err = d.stop()
    assert code == 0, err[-3000:]
    assert sorted(results) == sorted(ids)
    ends = {r if isinstance(r, grpc.StatusCode) else r.status for r in results.values()}
    assert ends <= {pb.AwaitProofResponse.COMPLETED, grpc.StatusCode.UNAVAILABLE}, ends
    assert not d.sock.exists()


def test_tcp_needs_the_token(tmp_path: Path, cache: Path) -> None:
    d = Daemon(tmp_path, cache=cache, listen="127.0.0.1:0", extra='token = "s3cret"')
    try:
        stub = d.stub()
        for metadata in ([], bearer("wrong")):
            with pytest.raises(grpc.RpcError) as info:
                stub.GetStatus(pb.GetStatusRequest(), metadata=metadata)
            assert info.value.code() == grpc.StatusCode.UNAUTHENTICATED
        assert stub.GetStatus(pb.GetStatusRequest(), metadata=bearer("s3cret")).uptime_seconds >= 0
    finally:
        code, err = d.stop()
    assert code == 0, err[-3000:]
    assert "s3cret" not in err  # the token is never logged
