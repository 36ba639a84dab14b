"""`cuzk timeline idle`: gaps inside the lock's holds, their phase, and the span each gap ended with."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from cuzk.cli.main import main
from cuzk.errors import FormatError
from cuzk.instrument.idle import OUTSIDE, analyse, describe, steady_window, summary
from cuzk.instrument.waterfall import build

MS = 1e-3


def _span(
    name: str, start_ms: float, end_ms: float, job: str, worker: str, depth: int = 0, **attrs: Any
) -> dict:
    return {"name": name, "start": 10 + start_ms * MS, "end": 10 + end_ms * MS, "depth": depth, "job": job,
            "attrs": {"worker": worker, "partition": 0, **attrs}}  # fmt: skip


def _two_workers() -> list[dict]:
    """Worker 0 holds the device 0-100 ms; its msm_h idles 60-80 ms while worker 1 stages until 80 ms."""
    dev = {"device": 0}
    busy = {"device": 0, "lane": "device 0 busy"}
    return [
        _span("device_lock", 0, 100, "j1", "gpu-0", **dev),
        _span("ntt_h", 0, 30, "j1", "gpu-0", 1, **dev),
        _span("msm_h", 30, 100, "j1", "gpu-0", 1, **dev),
        _span("device_busy", 0, 30, "j1", "gpu-0", **busy),
        _span("device_busy", 30, 60, "j1", "gpu-0", **busy),
        _span("device_busy", 80, 100, "j1", "gpu-0", **busy),
        _span("gpu_prepare", 20, 80.0004, "j2", "gpu-1", **dev),  # ends with the gap: what it waited for
        _span("msm_b_g2", 40, 70, "j0", "fin-0", 1, **dev),  # a finalizer's span on the device: not a phase
        _span("device_lock", 100, 150, "j2", "gpu-1", **dev),
        _span("msm_h", 100, 150, "j2", "gpu-1", 1, **dev),
        _span("device_busy", 100, 147, "j2", "gpu-1", **busy),  # a 3 ms tail: below the 5 ms floor
    ]


def test_a_gap_is_placed_in_its_phase_and_named_by_what_it_waited_for() -> None:
    (r,) = analyse(_two_workers(), steady=False)
    assert r.device == "0" and r.clocked
    assert [(g.phase, round(g.seconds * 1e3, 3), g.ended_with, g.label) for g in r.gaps] == [
        ("msm_h", 20.0, "gpu_prepare", "j1/p0")
    ]
    assert r.held == pytest.approx(1.0) and r.busy == pytest.approx(127 / 150)
    phases = {p.phase: p for p in r.phases}
    assert set(phases) == {"device_lock", "ntt_h", "msm_h"}  # the finalizer's msm_b_g2 is not the holder's
    assert phases["msm_h"].count == 2 and phases["ntt_h"].idle_ms == pytest.approx(0.0, abs=1e-6)
    text = "\n".join(describe(r))
    assert "msm_h: 1 gap, 0.020 s, median 20.0 ms; 1 ended with gpu_prepare" in text
    assert "lock held 100.0%, device busy 84.7% (device clock)" in text
    (fine,) = analyse(_two_workers(), steady=False, min_gap=0.002)
    assert [g.seconds for g in fine.gaps] == pytest.approx([0.020, 0.003])


def test_a_gap_between_phases_and_one_that_ended_with_nothing() -> None:
    dev, busy = {"device": 1}, {"device": 1, "lane": "device 1 busy"}
    recs = [
        _span("device_lock", 0, 50, "a", "gpu-0", **dev),
        _span("msm_l", 20, 50, "a", "gpu-0", 1, **dev),
        _span("device_busy", 10, 50, "a", "gpu-0", **busy),
    ]
    (r,) = analyse(recs, steady=False)
    assert [(g.phase, g.ended_with) for g in r.gaps] == [(OUTSIDE, None)]
    assert r.device == "1"


def test_without_a_device_clock_the_hold_is_the_busy_time() -> None:
    recs = [s for s in _two_workers() if s["name"] != "device_busy"]
    (r,) = analyse(recs, steady=False)
    assert not r.clocked and r.gaps == [] and r.busy == pytest.approx(r.held)
    assert "no device clock" in describe(r)[0]


def test_the_steady_window_runs_from_the_first_completion_to_the_last() -> None:
    window = steady_window(build(_two_workers()).bars)
    assert window is not None
    lo, hi = window  # j0 ends at 70 ms, j1 at 100, j2 at 150 (relative to the first start)
    assert (round(lo * 1e3, 6), round(hi * 1e3, 6)) == (70.0, 150.0)
    (r,) = analyse(_two_workers())  # only j2's hold lies wholly inside it
    assert [p.count for p in r.phases if p.phase == "device_lock"] == [1] and r.gaps == []
    assert steady_window(build([_span("x", 0, 1, "only", "w")]).bars) is None


def test_a_timeline_without_holds_is_refused() -> None:
    with pytest.raises(FormatError, match="no 'device_lock' spans"):
        analyse([_span("synthesis", 0, 5, "a", "w")])


def test_the_command(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    tl = tmp_path / "run.jsonl"
    tl.write_text("".join(json.dumps(s) + "\n" for s in _two_workers()))
    out = tmp_path / "idle.json"
    assert main(["timeline", "idle", str(tl), "--all", "--json", str(out)]) == 0
    assert "1 ended with gpu_prepare" in capsys.readouterr().out
    (rep,) = json.loads(out.read_text())
    assert rep["gaps"] == [{"phase": "msm_h", "count": 1, "seconds": 0.02, "median_ms": 20.0,
                            "ended_with": {"gpu_prepare": 1}}]  # fmt: skip
    with pytest.raises(SystemExit) as exc:
        main(["timeline", "idle", str(tl), "--min-gap-ms", "-1"])
    assert exc.value.code == 2
    assert "must be above 0 ms" in capsys.readouterr().err
    (tmp_path / "empty.jsonl").write_text(json.dumps(_span("synthesis", 0, 5, "a", "w")) + "\n")
    assert main(["timeline", "idle", str(tmp_path / "empty.jsonl")]) == 2
    assert "no 'device_lock' spans" in capsys.readouterr().err


def test_the_summary_bench_batch_prints() -> None:
    recs = [
        _span("finalize", -50, -10, "j-1", "fin-0"),
        *_two_workers(),
    ]  # a job done first: j1 in the window
    lines = summary(recs)
    assert lines and "1 ended with gpu_prepare" in lines[-1]
    assert summary([s for s in recs if s["name"] != "device_busy"]) == []  # no clock: nothing to explain
    assert summary([_span("synthesis", 0, 5, "a", "w")]) == []  # nothing ran on a device


def test_a_single_proof_names_the_host_phases_the_device_waits_through() -> None:
    """A `cuzk prove` timeline has no lock holds: its phases run in turn, so the device's idle
    time is the host phases between its own; set-up before the proof is not counted."""
    recs = [
        {"name": "topology", "start": 0.0, "end": 1.0, "depth": 0, "job": "prove"},
        {"name": "load_params", "start": 1.0, "end": 3.0, "depth": 0, "job": "prove"},
        {"name": "synthesis", "start": 3.0, "end": 4.0, "depth": 0, "job": "prove"},
        {"name": "witness", "start": 3.0, "end": 3.5, "depth": 1, "job": "prove"},
        {"name": "ntt_h", "start": 4.0, "end": 4.5, "depth": 0, "job": "prove"},
        {"name": "msm_h", "start": 4.5, "end": 6.0, "depth": 0, "job": "prove"},
        {"name": "epilogue", "start": 6.0, "end": 6.5, "depth": 0, "job": "prove"},
    ]
    from cuzk.instrument.idle import analyse_single, describe_single, has_holds

    assert not has_holds(recs) and has_holds(_two_workers())
    r = analyse_single(recs)
    assert r.window == (3.0, 6.5) and r.setup_s == pytest.approx(3.0)
    assert r.device_s == pytest.approx(2.0) and r.host == [("synthesis", 1.0), ("epilogue", 0.5)]
    text = "\n".join(describe_single(r))
    assert "device phases (ntt, msm): 2.000 s, 57.1%; the device waits 1.500 s" in text
    assert "  synthesis: 1.000 s (28.6%)" in text
    with pytest.raises(FormatError, match="no proving spans"):
        analyse_single(recs[:2])
