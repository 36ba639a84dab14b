"""`cuzk bench batch` on porep-tiny: the engine run, the one-after-another run, the ratio."""

from __future__ import annotations

import json

import pytest

from cuzk.cli.main import main


def test_bench_batch_runs_both_ways_and_reports(tmp_path, capsys):
    out = tmp_path / "bench.json"
    argv = ["bench", "batch", "--circuit", "porep-tiny", "--count", "3", "--concurrency", "2",
            "--backend", "cpu", "--set", "synthesis_workers=1", "--set", "memory_budget=256MiB",
            "--json", str(out), "--timeline", str(tmp_path / "run.jsonl")]  # fmt: skip
    assert main(argv) == 0
    text = capsys.readouterr().out
    for j in range(3):
        assert f"job-{j} seed {j}: completed in " in text
    assert "proofs/min; GPU busy " in text and "pipeline gain " in text and "peak RSS " in text
    assert "(lock holds: no device clock; first to last job completion); " in text
    res = json.loads(out.read_text())
    assert [r["status"] for r in res["jobs"]] == ["completed"] * 3
    assert res["config"]["synthesis_workers"] == 1 and res["config"]["memory_budget"] == 256 << 20
    assert 0 < res["gpu_busy"] <= 1 and res["pipeline_gain"] > 0 and res["baseline_wall_s"] > 0
    assert 0 < res["memory_peak"] <= res["memory_budget"]
    # the engine's timeline feeds `timeline idle`: on the CPU backend the hold is the busy time
    assert main(["timeline", "idle", str(tmp_path / "run.jsonl"), "--json", str(tmp_path / "idle.json")]) == 0
    (idle,) = json.loads((tmp_path / "idle.json").read_text())
    assert (
        idle["device"] == "0" and not idle["clocked"] and idle["busy"] == idle["held"] and idle["gaps"] == []
    )
    assert {"device_lock", "ntt_h", "msm_h"} <= {p["phase"] for p in idle["phases"]}
    # one run, one busy figure: bench batch, `timeline idle` and the waterfall agree (issue 29)
    assert idle["busy"] == pytest.approx(res["gpu_busy"], abs=1e-4)
    assert main(["timeline", "render", str(tmp_path / "run.jsonl"), "-o", str(tmp_path / "w.html")]) == 0
    assert f"GPU busy {res['gpu_busy'] * 100:.1f}%" in capsys.readouterr().out
    # the jobs carry bench batch's numbers in the timeline, so the waterfall's labels match its lines
    jobs = {json.loads(line)["job"] for line in (tmp_path / "run.jsonl").read_text().splitlines()}
    assert jobs == {"job-0", "job-1", "job-2"}


def test_bench_batch_refuses_unknown_settings(capsys):
    argv = ["bench", "batch", "--circuit", "porep-tiny", "--count", "1", "--set", "max_batch=2"]
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert (
        "unknown setting 'max_batch'; toggles: staging.pinned" in err
        and "engine settings: backend, devices" in err
    )
    assert main([*argv[:-1], "max_batch_size=two"]) == 2
    assert "max_batch_size must be an integer, not 'two'" in capsys.readouterr().err
