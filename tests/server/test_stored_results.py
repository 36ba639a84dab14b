"""Stored results are checked when read back (issue 32 item 3): a damaged row is never returned.

Three finished jobs; with the daemon stopped, the journal is damaged the ways the tester did:
one bit of a stored proof flipped and another instance's valid proof put in a response (rows
of an older journal, without their checksum, so the proof check must catch them), another
job's result copied into a row, and a result cut short.
After a restart each of those ids is proved again and answered with a proof that verifies for
its own instance, and the log says which row failed which check.
"""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest
from daemon_proc import Daemon, verify

from cuzk.server.v1 import proving_pb2 as pb

pytestmark = pytest.mark.slow

SEEDS = {"flip": 11, "swap": 12, "cut": 13, "other": 14}


def test_damaged_stored_results_are_proved_again(tmp_path: Path, cache: Path) -> None:
    state = tmp_path / "state"
    d = Daemon(tmp_path, cache=cache, extra=f'state_dir = "{state}"')
    stub = d.stub()
    for job_id, seed in SEEDS.items():
        req = pb.SubmitProofRequest(circuit="winning-tiny", instance_seed=seed, request_id=job_id)
        first = stub.Prove(pb.ProveRequest(submit=req), timeout=600).result
        assert first.status == pb.AwaitProofResponse.COMPLETED
    code, log = d.stop()
    assert code == 0, log[-3000:]

    db = sqlite3.connect(state / "jobs.sqlite")
    rows = dict(db.execute("SELECT job_id, result FROM jobs").fetchall())
    flipped = pb.AwaitProofResponse.FromString(rows["flip"])
    proof = bytearray(flipped.proof)
    proof[100] ^= 0x01  # one bit of the G2 point
    flipped.proof = bytes(proof)
    db.execute(  # an older journal's row: no checksum, so only the proof check can catch it
        "UPDATE jobs SET result = ?, checksum = NULL WHERE job_id = 'flip'", (flipped.SerializeToString(),)
    )
    foreign = pb.AwaitProofResponse.FromString(rows["other"])
    foreign.proof = pb.AwaitProofResponse.FromString(rows["swap"]).proof  # a valid proof, of another instance
    db.execute(
        "UPDATE jobs SET result = ?, checksum = NULL WHERE job_id = 'other'", (foreign.SerializeToString(),)
    )
    db.execute("UPDATE jobs SET result = ? WHERE job_id = 'swap'", (rows["cut"],))  # another job's result
    db.execute("UPDATE jobs SET result = ? WHERE job_id = 'cut'", (rows["cut"][:-7],))  # cut short
    db.commit()
    db.close()

    d.start()
    try:
        stub = d.stub()
        for job_id, seed in SEEDS.items():
            r = stub.AwaitProof(pb.AwaitProofRequest(job_id=job_id), timeout=600)
            assert r.status == pb.AwaitProofResponse.COMPLETED, r.error_message
            assert r.job_id == job_id
            verify("winning-tiny", seed, r)
            assert stub.AwaitProof(pb.AwaitProofRequest(job_id=job_id), timeout=600).proof == r.proof
    finally:
        code, log = d.stop()
    assert code == 0, log[-3000:]
    assert "job flip failed its check (" in log  # a point off its subgroup, or a proof that fails
    assert "job other failed its check (proof 0 does not verify against winning-tiny's" in log
    assert "job swap failed its check (its checksum does not match" in log
    assert "job cut failed its check (its checksum does not match" in log
