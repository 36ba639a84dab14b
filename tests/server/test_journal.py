"""The job journal: accepted jobs survive a killed process; terminal results are kept; open jobs come back."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from cuzk.errors import UsageError
from cuzk.server.journal import Journal


def test_accept_finish_and_reopen(tmp_path: Path) -> None:
    j = Journal(tmp_path / "state" / "jobs.sqlite")
    assert j.accept("a", b"req-a") and j.accept("b", b"req-b")
    assert not j.accept("a", b"again")  # in flight: the same job
    j.finish("a", "completed", b"resp-a")
    assert j.accept("a", b"req-a2")  # terminal: a request id reused runs again
    j.finish("a", "failed", b"resp-a2", "partition 1 synthesis failed: x")
    j.close()
    j2 = Journal(tmp_path / "state" / "jobs.sqlite")
    a = j2.get("a")
    assert a is not None and a.status == "failed" and a.result == b"resp-a2" and a.request == b"req-a2"
    assert [e.job_id for e in j2.open_jobs()] == ["b"]
    j2.retry("b")
    assert j2.get("b").attempts == 2
    assert j2.counts() == {"failed": 1, "accepted": 1}
    with pytest.raises(UsageError, match="not a terminal status"):
        j2.finish("b", "running", b"")
    assert j2.prune(older_than_s=-1) == 1 and j2.get("a") is None and j2.get("b") is not None


def test_a_committed_accept_survives_kill_9(tmp_path: Path) -> None:
    path = tmp_path / "jobs.sqlite"
    script = textwrap.dedent(
        f"""
        import os, signal, sys
        from cuzk.server.journal import Journal
        j = Journal({str(path)!r})
        j.accept("job-1", b"request bytes")
        print("accepted", flush=True)
        os.kill(os.getpid(), signal.SIGKILL)
        """
    )
    env = {**os.environ, "PYTHONPATH": str(Path(__file__).resolve().parents[2] / "src")}
    proc = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, env=env, timeout=60)
    assert proc.returncode == -signal.SIGKILL and "accepted" in proc.stdout
    entry = Journal(path).get("job-1")
    assert entry is not None and entry.status == "accepted" and entry.request == b"request bytes"


def test_unwritable_journal_is_a_clear_error(tmp_path: Path) -> None:
    blocker = tmp_path / "file"
    blocker.write_text("x")
    with pytest.raises(UsageError, match="cannot open the job journal"):
        Journal(blocker / "jobs.sqlite")


def test_withdraw_forgets_only_an_open_job(tmp_path: Path) -> None:
    j = Journal(tmp_path / "jobs.sqlite")
    j.accept("refused", b"r")
    j.withdraw("refused")  # the engine refused it after all: it was never accepted
    assert j.get("refused") is None
    j.accept("done", b"d")
    j.finish("done", "completed", b"resp")
    j.withdraw("done")  # a terminal job stays
    assert j.get("done") is not None and j.get("done").status == "completed"
