"""GPU busy %: the one definition (cuzk.instrument.busy) that every view of a run uses."""

from __future__ import annotations

import pytest

from cuzk.instrument.busy import CLOCK, HOLDS, LANE, busy_fraction, device_busy, headline, merged_seconds
from cuzk.instrument.idle import analyse
from cuzk.instrument.waterfall import build


def _span(name, start, end, job, **attrs):
    return {"name": name, "start": start, "end": end, "job": job, "depth": 0, "attrs": attrs}


def test_merged_seconds_counts_overlaps_once_and_clips() -> None:
    assert merged_seconds([], 0, 10) == 0
    assert merged_seconds([(0, 1), (0.5, 2), (3, 4)], 0, 10) == pytest.approx(3.0)
    assert merged_seconds([(0, 10), (1, 2), (3, 4)], 0, 10) == pytest.approx(10.0)
    assert merged_seconds([(0, 10)], 2, 5) == pytest.approx(3.0)
    assert busy_fraction([(0, 10)], 2, 6) == pytest.approx(1.0)
    assert busy_fraction([(0, 1)], 3, 3) == 0.0  # an empty window is not busy


def three_jobs(clock: bool) -> list[dict]:
    """Three jobs on device 0; holds 0-2, 2-5, 5-9; the clock (when there) runs 80% of each hold."""
    recs = []
    for job, (s, e) in zip(("j0", "j1", "j2"), ((0, 2), (2, 5), (5, 9)), strict=True):
        recs.append(_span("synthesis", s - 1 if s else 0, s, job, worker="w"))
        recs.append(_span("device_lock", s, e, job, device=0, worker="gpu-0"))
        if clock:
            recs.append(_span("device_busy", s, s + 0.8 * (e - s), job, device=0, lane="device 0 busy"))
    return recs


@pytest.mark.parametrize("clock", [True, False])
def test_one_run_gives_one_number_in_every_view(clock: bool) -> None:
    """The waterfall, `timeline idle` and bench batch's figure all come from device_busy: the same
    number (issue 29 found 93.6 / 98.5 / 94.8% for one run)."""
    recs = three_jobs(clock)
    wf = build(recs)
    (fig,) = wf.figures.values()
    assert fig.steady and fig.source == (CLOCK if clock else HOLDS)
    # steady window: j0 completes at 2, j2 at 9; the clock runs 0.8 of 2-5 and of 5-9
    expected = (0.8 * 3 + 0.8 * 4) / 7 if clock else 1.0
    assert fig.fraction == pytest.approx(expected)
    assert list(wf.busy.values()) == [pytest.approx(expected)]
    (idle,) = analyse(recs)
    assert idle.busy == pytest.approx(expected)
    assert headline(wf.figures).startswith(f"GPU busy {expected * 100:.1f}% (")


def test_a_single_job_is_measured_over_the_whole_run_and_lane_spans_stand_in_for_a_lock() -> None:
    recs = [_span("synthesis", 0, 1, "a", worker="w"), _span("msm_h", 1, 3, "a", device=0)]
    (fig,) = device_busy(build(recs).bars).values()
    assert not fig.steady and fig.source == LANE and fig.fraction == pytest.approx(2 / 3)
    assert "whole run" in fig.describe()
    assert headline({}) == "GPU busy: no device spans"
