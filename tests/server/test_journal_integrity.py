"""The journal is never emptied in silence (issue 32 item 7) and a full disk is a clear refusal (item 10).

A daemon killed with its write-ahead log still holding the jobs, then its main file emptied:
the next start must refuse (exit 2, naming the file), not start with "0 open jobs". The same
after a clean stop (the log checkpointed away: the marker file beside the journal notices),
and for a main file of garbage. A disk that fills under the journal is StorageFullError
(gRPC RESOURCE_EXHAUSTED), and the job is not recorded.
"""

from __future__ import annotations

import os
import sqlite3
import subprocess
import sys
from pathlib import Path

import pytest
from daemon_proc import Daemon

from cuzk.errors import StorageFullError, grpc_status
from cuzk.server.journal import Journal
from cuzk.server.v1 import proving_pb2 as pb

pytestmark = pytest.mark.slow


def _start_refused(d: Daemon) -> str:
    env = {**os.environ, "CUZK_CACHE_DIR": str(d.cache)}
    out = subprocess.run(
        [sys.executable, "-m", "cuzk.cli.main", "daemon", "--config", str(d.config)],
        capture_output=True,
        text=True,
        env=env,
        timeout=300,
    )
    assert out.returncode == 2, (out.returncode, out.stdout, out.stderr[-3000:])
    assert "listening on" not in out.stdout
    return out.stderr


def test_an_emptied_journal_refuses_to_start(tmp_path: Path, cache: Path) -> None:
    state = tmp_path / "state"
    db = state / "jobs.sqlite"
    d = Daemon(tmp_path, cache=cache, extra=f'state_dir = "{state}"')
    d.stub().SubmitProof(pb.SubmitProofRequest(circuit="porep-tiny", partitions=40, request_id="open"))
    d.kill()  # the log holds the accepted job
    assert (state / "jobs.sqlite-wal").stat().st_size > 0
    db.write_bytes(b"")
    err = _start_refused(d)
    assert f"the job journal {db} is empty but its write-ahead log" in err
    assert (state / "jobs.sqlite-wal").stat().st_size > 0  # left as it was, to be restored

    for leftover in state.glob("jobs.sqlite*"):  # start afresh, as the message says
        leftover.unlink()
    d.start()
    d.stub().SubmitProof(pb.SubmitProofRequest(circuit="winning-tiny", request_id="kept"))
    code, log = d.stop()  # a clean stop checkpoints: the log is folded in and truncated
    assert code == 0, log[-3000:]
    assert not (state / "jobs.sqlite-wal").exists() or (state / "jobs.sqlite-wal").stat().st_size == 0
    db.write_bytes(b"")
    err = _start_refused(d)
    assert f"the job journal {db} is empty, but {db}.id says this folder held journal" in err

    db.write_bytes(b"not a database" * 100)
    err = _start_refused(d)
    assert f"cannot open the job journal {db}" in err


def test_a_full_disk_is_resource_exhausted(tmp_path: Path) -> None:
    j = Journal(tmp_path / "jobs.sqlite")
    try:
        pages = j._db.execute("PRAGMA page_count").fetchone()[0]
        j._db.execute(f"PRAGMA max_page_count = {pages + 1}")  # the disk fills after one more page
        with pytest.raises(StorageFullError, match=r"cannot grow .*full.*not recorded") as info:
            j.accept("big", os.urandom(1 << 20))
        assert grpc_status(info.value) == "RESOURCE_EXHAUSTED"
        assert j.get("big") is None
        assert j.accept("small", b"x")  # the journal still works for what fits
    finally:
        j.close()
    assert sqlite3.connect(tmp_path / "jobs.sqlite").execute("PRAGMA quick_check").fetchone()[0] == "ok"


def test_rows_with_an_unknown_status_are_logged(tmp_path: Path, cache: Path) -> None:
    state = tmp_path / "state"
    j = Journal(state / "jobs.sqlite")
    j.accept("odd", pb.SubmitProofRequest(circuit="winning-tiny", request_id="odd").SerializeToString())
    with j._tx() as db:
        db.execute("UPDATE jobs SET status = 'paused' WHERE job_id = 'odd'")
    j.close()
    d = Daemon(tmp_path, cache=cache, extra=f'state_dir = "{state}"')
    code, log = d.stop()
    assert code == 0, log[-3000:]
    assert "journal row odd has status 'paused', which this daemon does not know" in log
