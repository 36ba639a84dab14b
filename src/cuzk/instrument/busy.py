"""GPU busy %: one definition, so that one run gives one number in every view of it.

Before this module the waterfall, `timeline idle` and `bench batch` each measured busy their
own way (different windows, lock holds against the device clock) and one run read 93.6, 98.5
and 94.8% (issue 29). Every view now asks this module:

- the busy time of a device is the union of its `device_busy` spans (the device's own clock,
  cuzk.engine.gpu) where the timeline has them, else of its lock holds (`device_lock`), else
  of every span on its lane (a timeline without a lock: the CPU backend's phases, old files);
- the window is the run's steady state, first to last job completion, when at least two jobs
  complete at different times (the ramp-up and drain are not idleness); otherwise the whole
  run, first start to last end;
- busy % is the union's length inside the window over the window's length.

The engine's live figure (status page, `/metrics`) is over the engine's lifetime, not a run;
it should use `busy_fraction` on its lock's intervals so the arithmetic is this one.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Protocol

#: the span name of the device clock's runs of kernels, and of a device lock's hold
DEVICE_BUSY = "device_busy"
LOCK = "device_lock"


class _Bar(Protocol):  # cuzk.instrument.waterfall.Bar, without importing it (no cycle)
    @property
    def name(self) -> str: ...
    @property
    def lane(self) -> str: ...
    @property
    def start(self) -> float: ...
    @property
    def end(self) -> float: ...
    @property
    def job(self) -> str: ...
    @property
    def attrs(self) -> Mapping[str, Any]: ...


def merged(intervals: Iterable[tuple[float, float]]) -> list[tuple[float, float]]:
    """The union of the intervals, as sorted disjoint intervals."""
    out: list[list[float]] = []
    for s, e in sorted(intervals):
        if e < s:
            continue
        if out and s <= out[-1][1]:
            out[-1][1] = max(out[-1][1], e)
        else:
            out.append([s, e])
    return [(s, e) for s, e in out]


def merged_seconds(intervals: Iterable[tuple[float, float]], since: float, until: float) -> float:
    """Length of the union of the intervals inside [since, until] (overlaps counted once)."""
    return sum(min(e, until) - max(s, since) for s, e in merged(intervals) if min(e, until) > max(s, since))


def busy_fraction(intervals: Iterable[tuple[float, float]], since: float, until: float) -> float:
    """The busy %'s arithmetic: the union inside [since, until] over that window's length (0 for none)."""
    if until <= since:
        return 0.0
    return merged_seconds(intervals, since, until) / (until - since)


def steady_window(bars: Sequence[_Bar]) -> tuple[float, float] | None:
    """First to last job completion (a job completes with its last span); None below two jobs."""
    ends: dict[str, float] = {}
    for b in bars:
        if b.job:
            ends[b.job] = max(ends.get(b.job, b.end), b.end)
    if len(ends) < 2:
        return None
    done = sorted(ends.values())
    return (done[0], done[-1]) if done[-1] > done[0] else None


def run_window(bars: Sequence[_Bar]) -> tuple[tuple[float, float], bool]:
    """The busy window of a run and whether it is the steady state (else first start to last end)."""
    steady = steady_window(bars)
    if steady is not None:
        return steady, True
    if not bars:
        return (0.0, 0.0), False
    return (min(b.start for b in bars), max(b.end for b in bars)), False


def _device_of_lane(lane: str) -> str | None:
    words = lane.split()
    return words[1] if len(words) >= 2 and words[0] == "device" else None


#: where a device's busy intervals came from, in the order they are preferred
CLOCK, HOLDS, LANE = "device clock", "lock holds: no device clock", "device lane: no lock, no clock"


def device_intervals(bars: Sequence[_Bar]) -> dict[str, tuple[list[tuple[float, float]], str]]:
    """Per device: its busy intervals and their source (CLOCK, HOLDS or LANE; see the module doc)."""
    clock: dict[str, list[tuple[float, float]]] = defaultdict(list)
    holds: dict[str, list[tuple[float, float]]] = defaultdict(list)
    lane: dict[str, list[tuple[float, float]]] = defaultdict(list)
    for b in bars:
        device = b.attrs.get("device")
        if b.name == DEVICE_BUSY and (device is not None or _device_of_lane(b.lane) is not None):
            clock[str(device if device is not None else _device_of_lane(b.lane))].append((b.start, b.end))
        elif b.name == LOCK and device is not None:
            holds[str(device)].append((b.start, b.end))
        elif (d := _device_of_lane(b.lane)) is not None:
            lane[d].append((b.start, b.end))
    out: dict[str, tuple[list[tuple[float, float]], str]] = {}
    for device in sorted(set(clock) | set(holds) | set(lane)):
        if clock.get(device):
            out[device] = (clock[device], CLOCK)
        elif holds.get(device):
            out[device] = (holds[device], HOLDS)
        else:
            out[device] = (lane[device], LANE)
    return out


@dataclass(frozen=True)
class Busy:
    """One device's busy % over a run's window."""

    device: str
    fraction: float
    window: tuple[float, float]
    steady: bool  # the window is first to last job completion (else the whole run)
    source: str  # CLOCK, HOLDS or LANE

    @property
    def clocked(self) -> bool:
        return self.source == CLOCK

    def describe(self) -> str:
        """`GPU busy` wording every view shares: the figure, then what it was measured on."""
        window = "first to last job completion" if self.steady else "whole run"
        return f"{self.fraction * 100:.1f}% ({self.source}; {window})"


def device_busy(bars: Sequence[_Bar]) -> dict[str, Busy]:
    """Busy % per device of one run, over `run_window` (the one figure every tool prints)."""
    window, steady = run_window(bars)
    return {
        device: Busy(device, busy_fraction(ivs, *window), window, steady, source)
        for device, (ivs, source) in device_intervals(bars).items()
    }


def headline(figures: Mapping[str, Busy]) -> str:
    """One line for a run's devices: `GPU busy 95.1% (...)`, per device when there are several."""
    if not figures:
        return "GPU busy: no device spans"
    if len(figures) == 1:
        (only,) = figures.values()
        return f"GPU busy {only.describe()}"
    mean = sum(b.fraction for b in figures.values()) / len(figures)
    first = next(iter(figures.values()))
    per = ", ".join(f"device {d} {b.fraction * 100:.1f}%" for d, b in figures.items())
    return f"GPU busy {mean * 100:.1f}% mean of {per} ({first.describe().split('(', 1)[1]}"


__all__ = [
    "Busy",
    "busy_fraction",
    "device_busy",
    "device_intervals",
    "headline",
    "merged",
    "merged_seconds",
    "run_window",
    "steady_window",
]
