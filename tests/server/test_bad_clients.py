"""Hostile clients against a real daemon (fuzz/bad_clients.py, a short run): it stays up, each
request gets the status of its kind, and a well-formed job after them proves and verifies.

The full run is `python fuzz/bad_clients.py -n 1000`; its figures are in docs/RELIABILITY.md.
"""

from __future__ import annotations

import sys
from pathlib import Path

import pytest
from daemon_proc import Daemon, verify

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "fuzz"))

from bad_clients import MESSAGE_LIMIT, hammer

from cuzk.server.v1 import proving_pb2 as pb

pytestmark = pytest.mark.slow

N = 60  # six of each kind


def test_hostile_requests_leave_the_daemon_serving(tmp_path: Path, cache: Path) -> None:
    d = Daemon(tmp_path, cache=cache, extra=f'max_message_bytes = "{MESSAGE_LIMIT}"')
    try:
        row = hammer(d.target(), str(d.sock), N, seed=7)
        assert d.alive()
    finally:
        code, log = d.stop()
    assert code == 0, log[-3000:]
    assert row["unexpected"] == [], row
    assert sum(sum(v.values()) for v in row["by_kind"].values()) == N
    assert all(sum(v.values()) == N // len(row["by_kind"]) for v in row["by_kind"].values())
    assert row["long_job"] == "CANCELLED"
    after = row["after"]
    assert after.status == pb.AwaitProofResponse.COMPLETED, after.error_message
    assert verify("winning-tiny", 7, after) == 1
    assert "Traceback" not in log  # no handler failed with an exception of its own
