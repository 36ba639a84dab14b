"""Restart and preload, end to end: `srs.preload`, PreloadSRS, EvictSRS and srs_load_ms, then a SIGTERM
and a new daemon on the same socket path and parameter cache (a stale socket left there is removed;
a live daemon's socket is refused and left in place). A real `cuzk daemon` subprocess, CPU backend; every proof is verified.
"""

from __future__ import annotations

import os
import socket
import stat
import subprocess
import sys
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest
from daemon_proc import Daemon, verify
from test_daemon_e2e import LONG_JOB

from cuzk import config
from cuzk.cli.main import main
from cuzk.server.v1 import proving_pb2 as pb

pytestmark = pytest.mark.slow

PRELOAD = '\n[srs]\npreload = ["porep-tiny"]'


def _srs(stub, circuit: str) -> pb.SRSStatus | None:
    return next(
        (s for s in stub.GetStatus(pb.GetStatusRequest()).loaded_srs if s.circuit_id == circuit), None
    )


def _prove(stub, seed: int) -> pb.AwaitProofResponse:
    req = pb.SubmitProofRequest(circuit="porep-tiny", instance_seed=seed, partitions=1)
    r = stub.Prove(pb.ProveRequest(submit=req)).result
    assert r.status == pb.AwaitProofResponse.COMPLETED, r.error_message
    verify("porep-tiny", seed, r)
    return r


def test_preload_evict_reload_and_restart(
    tmp_path: Path, cache: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    config.reload()
    d = Daemon(tmp_path, cache=cache, extra=PRELOAD)
    try:
        stub = d.stub()
        st = stub.GetStatus(pb.GetStatusRequest())
        assert st.total_proofs_completed == 0  # before any job:
        (srs,) = [s for s in st.loaded_srs if s.circuit_id == "porep-tiny"]
        assert srs.tier == pb.SRSStatus.HOT and srs.size_bytes > 0 and srs.ref_count == 0
        first = _prove(stub, 2)  # resident already: nothing to load
        again = stub.PreloadSRS(pb.PreloadSrsRequest(circuit_id="porep-tiny"))
        assert again.already_loaded and again.load_time_ms == 0

        long = stub.SubmitProof(pb.SubmitProofRequest(circuit="porep-tiny", partitions=LONG_JOB)).job_id
        while _srs(stub, "porep-tiny").ref_count == 0:  # until it runs and holds the parameters
            pass
        st = stub.GetStatus(pb.GetStatusRequest())
        assert [(q.proof_kind, q.pending, q.in_progress) for q in st.queues] == [("porep-c2", 0, 1)]
        assert [(g.ordinal, g.workers) for g in st.gpus] == [(0, 2)]  # once, with its two workers
        assert st.memory_budget_bytes == 4 << 30 and 0 < st.memory_reserved_bytes <= st.memory_peak_bytes
        assert [s.ref_count for s in st.loaded_srs if s.circuit_id == "porep-tiny"] == [1]  # held by it
        stub.CancelProof(pb.CancelProofRequest(job_id=long))
        assert stub.AwaitProof(pb.AwaitProofRequest(job_id=long)).status == pb.AwaitProofResponse.CANCELLED
        while (s := _srs(stub, "porep-tiny")) is not None and s.ref_count:  # its partitions let go
            pass

        freed = stub.EvictSRS(pb.EvictSrsRequest(circuit_id="porep-tiny"))
        assert freed.was_loaded and freed.freed_bytes == srs.size_bytes
        gone = _srs(stub, "porep-tiny")
        assert gone is None or gone.tier != pb.SRSStatus.HOT
        reloaded = _prove(stub, 3)  # evicted: this job loads the parameters again
        assert reloaded.srs_load_ms > 0 and first.srs_load_ms < reloaded.srs_load_ms
        assert _srs(stub, "porep-tiny").tier == pb.SRSStatus.HOT
    finally:
        code, err = d.stop()
    assert code == 0, err[-3000:]
    assert not d.sock.exists()

    stale = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)  # what a daemon killed with -9 leaves:
    stale.bind(str(d.sock))  # a socket file that nobody listens on
    stale.close()
    assert stat.S_ISSOCK(d.sock.lstat().st_mode)
    d2 = Daemon(tmp_path, cache=cache, extra=PRELOAD)  # the same socket path, config and cache
    try:
        assert d2.address == f"unix://{d.sock}" and stat.S_IMODE(d.sock.stat().st_mode) == 0o600
        stub = d2.stub()
        srs2 = _srs(stub, "porep-tiny")
        assert srs2 is not None and srs2.tier == pb.SRSStatus.HOT and srs2.ref_count == 0
        _prove(stub, 4)
        live = subprocess.run(  # a third daemon on the live socket is refused, and changes nothing
            [sys.executable, "-m", "cuzk.cli.main", "daemon", "--config", str(tmp_path / "cuzk.toml")],
            capture_output=True,
            text=True,
            timeout=120,
            env={**os.environ, "CUZK_CACHE_DIR": str(cache)},
        )
        assert live.returncode == 2 and "another daemon is listening" in live.stderr, live.stderr[-2000:]
        assert d.sock.exists()  # the refused daemon left the live one's socket alone
        assert stub.GetStatus(pb.GetStatusRequest()).total_proofs_completed == 1
        capsys.readouterr()
        assert main(["client", "--addr", d2.address, "status"]) == 0  # the same, for a person
        text = capsys.readouterr().out
        assert "proofs completed 1, failed 0; memory " in text and " MiB reserved of 4096 MiB" in text
        assert "0 of 2 workers busy" in text and "srs porep-tiny: HOT" in text
    finally:
        code, err = d2.stop()
    assert code == 0, err[-3000:]
    assert "removed stale socket" in err


def test_a_draining_daemon_answers_unavailable(tmp_path: Path) -> None:
    """After SIGTERM, while in-flight work drains, a new job is refused with UNAVAILABLE (and says why)."""
    import grpc

    d = Daemon(tmp_path, cache=tmp_path / "cache", grace="3s")
    try:
        stub = d.stub()
        accepted = [stub.SubmitProof(pb.SubmitProofRequest(circuit="porep-tiny", partitions=LONG_JOB)).job_id]
        while _srs(stub, "porep-tiny") is None or _srs(stub, "porep-tiny").ref_count == 0:
            pass  # until it runs: the drain then lasts the grace period
        d.terminate()
        d.await_log("stopping intake")  # until the daemon has taken the signal
        while True:  # a submit that raced the drain's start is accepted, and must end like the others
            try:
                accepted.append(stub.SubmitProof(pb.SubmitProofRequest(circuit="winning-tiny")).job_id)
            except grpc.RpcError as exc:
                assert exc.code() == grpc.StatusCode.UNAVAILABLE, exc
                assert "shutting down" in exc.details(), exc.details()
                break
            assert len(accepted) < 50, "the daemon kept accepting jobs after it began to drain"

        def end(job_id: str) -> object:
            try:
                return stub.AwaitProof(pb.AwaitProofRequest(job_id=job_id)).status
            except grpc.RpcError as exc:  # interrupted by the drain: journaled, runs after a restart
                assert "stays journaled and runs after the restart" in exc.details(), exc.details()
                return exc.code()

        with ThreadPoolExecutor(len(accepted)) as pool:  # all at once, before the server closes
            ends = set(pool.map(end, accepted))
        assert ends <= {pb.AwaitProofResponse.COMPLETED, grpc.StatusCode.UNAVAILABLE}, ends
    finally:
        code, err = d.stop()
    assert code == 0, err[-3000:]
