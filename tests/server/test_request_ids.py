"""A request id names one request (issue 32 item 2): the same id with a different request is
refused with ALREADY_EXISTS, in flight, finished and after a restart, never answered with the
other request's proof; the same request under its id is still the same job.
"""

from __future__ import annotations

from pathlib import Path

import grpc
import pytest
from daemon_proc import Daemon, verify

from cuzk.server.v1 import proving_pb2 as pb

pytestmark = pytest.mark.slow


def _refused(call: object, req: object) -> str:
    with pytest.raises(grpc.RpcError) as info:
        call(req)  # type: ignore[operator]
    assert info.value.code() == grpc.StatusCode.ALREADY_EXISTS, info.value.details()
    return str(info.value.details())


def test_a_reused_id_with_another_request_is_refused(tmp_path: Path, cache: Path) -> None:
    d = Daemon(tmp_path, cache=cache, extra=f'state_dir = "{tmp_path / "state"}"')
    first = pb.SubmitProofRequest(circuit="porep-tiny", instance_seed=7, partitions=2, request_id="dup")
    other = pb.SubmitProofRequest(circuit="winning-tiny", instance_seed=7, request_id="dup")
    try:
        stub = d.stub()
        assert stub.SubmitProof(first).job_id == "dup"
        why = _refused(stub.SubmitProof, other)  # while the first is in flight
        assert "'dup'" in why and "circuit" in why and "partitions" in why
        done = stub.AwaitProof(pb.AwaitProofRequest(job_id="dup"), timeout=600)
        assert done.status == pb.AwaitProofResponse.COMPLETED and len(done.proof) == 2 * 192
        verify("porep-tiny", 7, done)
        _refused(stub.SubmitProof, other)  # finished
        _refused(stub.Prove, pb.ProveRequest(submit=other))
        seed_only = pb.SubmitProofRequest()
        seed_only.CopyFrom(first)
        seed_only.instance_seed = 8
        assert "instance_seed" in _refused(stub.SubmitProof, seed_only)
        assert stub.SubmitProof(first).job_id == "dup"  # the same request: the same job
        d.kill()
        d.start()
        stub = d.stub()
        _refused(stub.SubmitProof, other)  # after a restart, from the journal
        again = stub.Prove(pb.ProveRequest(submit=first), timeout=600).result
        assert again.proof == done.proof
    finally:
        code, log = d.stop()
    assert code == 0, log[-3000:]
