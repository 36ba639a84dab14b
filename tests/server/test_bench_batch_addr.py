"""`cuzk bench batch --addr` against a real daemon subprocess (CPU backend): the same per-job lines and
summary as the in-process run, every proof verified against the vk; with a wrong vk the run stops at
its warm-up job (exit 3). Argument errors of --addr are in tests/cli/test_cli_bad_input.py.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from daemon_proc import Daemon

from cuzk import config
from cuzk.cli.main import main

pytestmark = pytest.mark.slow


def test_bench_batch_drives_a_daemon(tmp_path: Path, cache: Path, capsys: pytest.CaptureFixture[str]) -> None:
    config.reload()
    d = Daemon(tmp_path, cache=cache)
    try:
        out = tmp_path / "bench.json"
        argv = ["bench", "batch", "--addr", d.address, "--circuit", "porep-tiny", "--count", "3",
                "--concurrency", "2", "--partitions", "2", "--seed", "5"]  # fmt: skip
        assert main([*argv, "--json", str(out)]) == 0
        text = capsys.readouterr().out
        for j in range(3):
            assert f"job-{j} seed {5 + 2 * j}: completed in " in text
        assert "daemon: 3 job(s) in " in text and " proofs/min; queue wait median " in text
        assert "verified here: 6 proof(s) valid against " in text
        res = json.loads(out.read_text())
        assert res["mode"] == "daemon" and res["failed"] == 0 and res["verified"] == 6
        assert sorted(r["job"] for r in res["jobs"]) == [0, 1, 2]
        assert all(r["status"] == "completed" and r["synthesis_s"] > 0 for r in res["jobs"])
        assert res["proofs_per_minute"] > 0 and res["steady_s_per_job"] > 0

        other = tmp_path / "other"  # a second setup of the same circuit: another, wrong, vk
        assert main(["setup", "--circuit", "porep-tiny", "--out", str(other), "--backend", "cpu"]) == 0
        capsys.readouterr()
        wrong = [*argv[:6], "--count", "1", "--vk", str(other / "porep-tiny.vk")]
        assert main(wrong) == 3  # the warm-up job already fails verification: an EngineError
        err = capsys.readouterr().err
        assert "the warm-up job failed" in err and "does not verify against" in err
    finally:
        code, err = d.stop()
    assert code == 0, err[-3000:]


def test_bench_batch_over_tcp_sends_the_token(
    tmp_path: Path, cache: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    config.reload()
    d = Daemon(tmp_path, cache=cache, listen="127.0.0.1:0", extra='token = "s3cret"')
    try:
        argv = ["bench", "batch", "--addr", d.address, "--circuit", "winning-tiny", "--count", "1"]
        assert main(argv) == 2
        assert "UNAUTHENTICATED" in capsys.readouterr().err
        assert main([*argv, "--token", "s3cret"]) == 0
        assert "verified here: 1 proof(s) valid" in capsys.readouterr().out
    finally:
        code, err = d.stop()
    assert code == 0, err[-3000:]
