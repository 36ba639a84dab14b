"""A thousand clients waiting on proofs leave the daemon answering (issue 32 item 1).

The old daemon held one of its 64 server threads per AwaitProof/Prove, so 64 waiting clients
froze GetStatus and SubmitProof. Here 1,000 AwaitProof calls wait on one long job while status,
metrics and a submit must answer within a one-second deadline each (a deadline is liveness, not a
speed test: on the old daemon they never answer). Then the job is cancelled and every one of
the 1,000 waits must come back CANCELLED. Waits synchronize on the daemon's own waiting gauge.
"""

from __future__ import annotations

import time
from pathlib import Path

import grpc
import pytest
from daemon_proc import Daemon, metric

from cuzk.server.v1 import proving_pb2 as pb
from cuzk.server.v1 import proving_pb2_grpc as pb_grpc

pytestmark = pytest.mark.slow

WAITS = 1000
CHANNELS = 10  # clients, each with WAITS / CHANNELS calls open on its own connection
HELD_JOB = 200  # partitions of porep-tiny: minutes on the CPU, far longer than opening the waits


def test_a_thousand_waits_leave_status_and_submit_answering(tmp_path: Path, cache: Path) -> None:
    d = Daemon(tmp_path, cache=cache)
    try:
        stub = d.stub()
        held = stub.SubmitProof(
            pb.SubmitProofRequest(circuit="porep-tiny", partitions=HELD_JOB, request_id="held")
        ).job_id
        stubs = [pb_grpc.ProvingEngineStub(grpc.insecure_channel(d.target())) for _ in range(CHANNELS)]
        calls = [
            stubs[k % CHANNELS].AwaitProof.future(pb.AwaitProofRequest(job_id=held)) for k in range(WAITS)
        ]
        while metric(stub, "cuzk_rpc_waiting") < WAITS:  # every wait parked in the daemon
            assert not any(c.done() for c in calls), "a wait ended before all were open: the job ended early"
        # with 1,000 waits open, the daemon still answers each of these within a second
        t0 = time.perf_counter()
        st = stub.GetStatus(pb.GetStatusRequest(), timeout=1.0)
        status_s = time.perf_counter() - t0
        assert sum(q.pending + q.in_progress for q in st.queues) >= 1
        assert metric_within(stub, "cuzk_rpc_waiting", 1.0) == WAITS
        other = stub.SubmitProof(
            pb.SubmitProofRequest(circuit="winning-tiny", instance_seed=3, request_id="other"), timeout=1.0
        )
        assert other.job_id == "other"
        print(f"\n{WAITS} waits open: GetStatus answered in {status_s * 1e3:.1f} ms (wall, shared machine)")
        stub.CancelProof(pb.CancelProofRequest(job_id=held), timeout=1.0)
        ends = [c.result(timeout=120) for c in calls]
        assert {r.status for r in ends} == {pb.AwaitProofResponse.CANCELLED}
        assert len(ends) == WAITS
        assert metric(stub, "cuzk_rpc_waiting") == 0
        stub.CancelProof(pb.CancelProofRequest(job_id="other"))
    finally:
        code, log = d.stop()
    assert code == 0, log[-3000:]


def metric_within(stub: pb_grpc.ProvingEngineStub, name: str, deadline_s: float) -> float:
    text = stub.GetMetrics(pb.GetMetricsRequest(), timeout=deadline_s).prometheus_text
    return float(next(ln for ln in text.splitlines() if ln.startswith(name + " ")).split()[1])
