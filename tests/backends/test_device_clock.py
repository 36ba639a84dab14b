"""The device clock: runs of kernels between quiet points, mapped onto the host clock by one
reference event. A fake stream stands in for CUDA: its events carry the device time at which
they were recorded, the time a test sets."""

from __future__ import annotations

import time

import pytest

from cuzk.backends.cuda.clock import DeviceClock


class FakeStream:
    def __init__(self) -> None:
        self.t = 0.0  # device seconds
        self.events: list[FakeEvent] = []
        self.waited = 0

    def event(self) -> FakeEvent:
        ev = FakeEvent(self, self.t)
        self.events.append(ev)
        return ev


class FakeEvent:
    def __init__(self, stream: FakeStream, t: float) -> None:
        self.stream, self.t = stream, t

    def synchronize(self) -> None:
        self.stream.waited += 1


def clock(stream: FakeStream) -> DeviceClock:
    return DeviceClock(stream.event, lambda a, b: (b.t - a.t) * 1e3)


def test_runs_open_at_a_launch_and_close_at_a_quiet_point() -> None:
    s = FakeStream()
    c = clock(s)
    before = time.perf_counter()
    with c.measure() as busy:
        s.t = 1.0
        c.launching()  # opens a run at 1.0
        s.t = 1.5
        c.launching()  # the run is open: no new event
        s.t = 2.0
        c.quiet()  # closes it at 2.0
        s.t = 3.0
        c.quiet()  # nothing open: nothing recorded
        c.launching()  # a second run from 3.0 ...
        s.t = 3.25  # ... closed by the end of the measurement, where the reference event is "now"
        assert busy == []  # filled in at the end, once the events have completed
    after = time.perf_counter()
    assert len(busy) == 2 and len(s.events) == 5  # two per run and the reference
    (a0, a1), (b0, b1) = busy
    assert a1 - a0 == pytest.approx(1.0) and b1 - b0 == pytest.approx(0.25)
    assert b0 - a1 == pytest.approx(1.0)  # the quiet second between runs is not busy
    assert before - 3 <= a0 and b1 <= after  # mapped onto perf_counter: the reference is "now"
    assert 0 <= after - b1 <= after - before
    assert s.waited == 1  # one host wait for the whole measurement


def test_nothing_is_recorded_outside_a_measurement_and_an_idle_one_waits_for_nothing() -> None:
    s = FakeStream()
    c = clock(s)
    c.launching()
    c.quiet()
    with c.measure() as busy:
        pass
    assert busy == [] and s.events == [] and s.waited == 0


def test_a_failed_region_reads_no_events_and_the_clock_can_measure_again() -> None:
    s = FakeStream()
    c = clock(s)
    with pytest.raises(ValueError, match="boom"), c.measure() as busy:
        c.launching()
        raise ValueError("boom")
    assert busy == [] and s.waited == 0  # a device error may leave events that never complete
    with c.measure() as busy:
        c.launching()
        s.t = 0.5
    assert len(busy) == 1 and busy[0][1] - busy[0][0] == pytest.approx(0.5)


def test_one_measurer_at_a_time() -> None:
    c = clock(FakeStream())
    with c.measure(), pytest.raises(RuntimeError, match="already measuring"), c.measure():
        pass
