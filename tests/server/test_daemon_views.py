"""What the daemon tells its operator and its clients about jobs (issue 29, "the daemon and its views").

Five submits in a row report the jobs ahead of each (0, 1, 2, 3, 4), not "position 0" five
times; the log has one info line per job accepted and one per job ended, with its times; and
`cuzk client prove` on a terminal (a pseudo-terminal here) draws the job's partitions done.
"""

from __future__ import annotations

import os
import pty
import subprocess
import sys
from pathlib import Path

import pytest
from daemon_proc import Daemon

from cuzk.server.v1 import proving_pb2 as pb

pytestmark = pytest.mark.slow

LONG = 40  # porep-tiny partitions: tens of seconds each on the CPU, far longer than five submits


def test_positions_logs_and_progress(tmp_path: Path, cache: Path) -> None:
    d = Daemon(tmp_path, cache=cache)
    try:
        stub = d.stub()
        positions = []
        for k in range(5):
            req = pb.SubmitProofRequest(circuit="porep-tiny", partitions=LONG, request_id=f"j{k}")
            positions.append(stub.SubmitProof(req).queue_position)
        assert positions == [0, 1, 2, 3, 4]
        for k in range(1, 5):
            stub.CancelProof(pb.CancelProofRequest(job_id=f"j{k}"))
        d.await_log("job j4 cancelled in ")
        status = stub.GetStatus(pb.GetStatusRequest())
        (j0,) = [j for j in status.jobs if j.job_id == "j0"]
        assert j0.partitions_total == LONG and j0.proof_kind == "porep-c2" and j0.running
        stub.CancelProof(pb.CancelProofRequest(job_id="j0"))

        main_fd, tty = pty.openpty()  # the client's stderr is a terminal: it draws progress
        env = {**os.environ, "CUZK_CACHE_DIR": str(cache), "COLUMNS": "120"}
        client = subprocess.Popen(
            [sys.executable, "-m", "cuzk.cli.main", "client", "--addr", d.address, "prove",
             "--circuit", "porep-tiny", "--partitions", "6", "--request-id", "shown"],
            stdout=subprocess.PIPE, stderr=tty, text=True, env=env,
        )  # fmt: skip
        os.close(tty)
        drawn = b""
        while True:
            try:
                chunk = os.read(main_fd, 4096)
            except OSError:  # the client closed the terminal's last writer: it exited
                break
            if not chunk:
                break
            drawn += chunk
        os.close(main_fd)
        out, _ = client.communicate(timeout=600)
        assert client.returncode == 0 and "shown: COMPLETED" in out, out
        assert b"shown" in drawn and b"partitions" in drawn and b"/6" in drawn, drawn[-2000:]
    finally:
        code, log = d.stop()
    assert code == 0, log[-3000:]
    assert "INFO cuzk.daemon: accepted job j0: porep-tiny, 40 partition(s), 0 job(s) ahead" in log
    assert "INFO cuzk.daemon: accepted job j3: porep-tiny, 40 partition(s), 3 job(s) ahead" in log
    assert "INFO cuzk.daemon: job shown completed in " in log and "synthesis " in log
