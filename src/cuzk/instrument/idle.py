"""Where a held device sat idle, and what it was waiting for: the question GPU busy % leaves open.

GPU busy below the lock's hold means the holder kept the device and gave it nothing to run.
Per device this finds the idle gaps inside the lock holds (the hold minus the device clock's
`device_busy` runs), puts each in the holder's phase, and names the span on another lane that
ended when the gap ended: a gap that closes the moment something else finishes was waiting for
it. On porep-13m that one line, "msm_h: 50 gaps ... 49 ended with gpu_prepare", found the
shared-stream staging copy (docs/BENCHMARKS.md, 2026-12-03) that per-phase means had hidden.

The window is steady state by default: from the first job's completion to the last one's, so
the ramp-up (the first partition's synthesis) and the drain do not count as idle.
"""

from __future__ import annotations

import statistics
from bisect import bisect_left, bisect_right
from collections import Counter, defaultdict
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from cuzk.errors import FormatError
from cuzk.instrument.busy import (
    CLOCK,
    DEVICE_BUSY,
    LOCK,
    busy_fraction,
    device_intervals,
    merged,
    merged_seconds,
    steady_window,
)
from cuzk.instrument.waterfall import Bar, build

#: a gap "ended with" a span that ended this close to it (seconds)
RELEASE_TOLERANCE = 0.001
OUTSIDE = "(in the hold, outside a phase)"


@dataclass(frozen=True)
class Gap:
    start: float
    end: float
    phase: str
    label: str  # job/partition of the holder
    ended_with: str | None  # the name of the span on another lane that ended with the gap

    @property
    def seconds(self) -> float:
        return self.end - self.start


@dataclass(frozen=True)
class PhaseIdle:
    phase: str
    count: int
    wall_ms: float  # medians over the phase's spans in the window
    busy_ms: float
    idle_ms: float


@dataclass
class DeviceIdle:
    device: str
    window: tuple[float, float]
    held: float  # fraction of the window the lock was held
    busy: float  # fraction of the window the device clock ran
    phases: list[PhaseIdle]
    gaps: list[Gap]  # at least min_gap long, inside holds, in time order
    min_gap: float = 0.005
    clocked: bool = True  # False: the timeline has no device clock (the CPU backend)

    @property
    def seconds(self) -> float:
        return self.window[1] - self.window[0]

    def by_phase(self) -> list[tuple[str, list[Gap]]]:
        """Gaps grouped by the holder's phase, the most idle time first."""
        groups: dict[str, list[Gap]] = defaultdict(list)
        for g in self.gaps:
            groups[g.phase].append(g)
        return sorted(groups.items(), key=lambda kv: -sum(g.seconds for g in kv[1]))

    def as_dict(self) -> dict[str, Any]:
        return {
            "device": self.device,
            "window_s": round(self.seconds, 6),
            "held": round(self.held, 4),
            "busy": round(self.busy, 4),
            "clocked": self.clocked,
            "min_gap_ms": self.min_gap * 1e3,
            "phases": [vars(p) for p in self.phases],
            "gaps": [
                {
                    "phase": phase,
                    "count": len(gs),
                    "seconds": round(sum(g.seconds for g in gs), 6),
                    "median_ms": round(statistics.median(g.seconds for g in gs) * 1e3, 3),
                    "ended_with": dict(Counter(g.ended_with for g in gs if g.ended_with).most_common()),
                }
                for phase, gs in self.by_phase()
            ],
        }


def _clip(intervals: Sequence[tuple[float, float]], lo: float, hi: float) -> list[tuple[float, float]]:
    return [(max(s, lo), min(e, hi)) for s, e in intervals if e > lo and s < hi]


def _holes(lo: float, hi: float, busy: Sequence[tuple[float, float]]) -> list[tuple[float, float]]:
    """[lo, hi) minus the (merged, sorted) busy intervals."""
    holes, cursor = [], lo
    for s, e in _clip(busy, lo, hi):
        if s > cursor:
            holes.append((cursor, s))
        cursor = max(cursor, e)
    if cursor < hi:
        holes.append((cursor, hi))
    return holes


def analyse(
    records: Sequence[Mapping[str, Any]],
    *,
    min_gap: float = 0.005,
    steady: bool = True,
    source: str = "timeline",
) -> list[DeviceIdle]:
    """One DeviceIdle per device that has lock holds in the timeline."""
    wf = build(records, source=source)
    holds_of: dict[str, list[Bar]] = defaultdict(list)
    for b in wf.bars:
        if b.name == LOCK and b.attrs.get("device") is not None:
            holds_of[str(b.attrs["device"])].append(b)
    if not holds_of:
        raise FormatError(
            f"{source}: no {LOCK!r} spans: idle time is measured inside the device lock's holds, "
            "which the engine records (`cuzk bench batch --timeline FILE`)"
        )
    window = (steady_window(wf.bars) if steady else None) or (0.0, wf.window)
    lo, hi = window
    phases_of_job: dict[str, list[Bar]] = defaultdict(list)
    for b in wf.bars:
        if b.depth >= 1:
            phases_of_job[b.job].append(b)
    ends = sorted((b for b in wf.bars if b.name != DEVICE_BUSY), key=lambda b: b.end)
    busy_of = device_intervals(wf.bars)  # the busy % of cuzk.instrument.busy, over this window
    out = []
    for device in sorted(holds_of):
        holds = sorted(holds_of[device], key=lambda b: b.start)
        in_window = [(h, _held_phases(phases_of_job[h.job], h)) for h in holds if _inside(h, lo, hi)]
        intervals, source = busy_of[device]
        clocked = source == CLOCK
        busy = merged(intervals)
        out.append(
            DeviceIdle(
                device=device,
                window=window,
                held=busy_fraction([(h.start, h.end) for h in holds], lo, hi),
                busy=busy_fraction(busy, lo, hi),
                phases=_phases(in_window, busy),
                gaps=_gaps(in_window, busy, ends, min_gap),
                min_gap=min_gap,
                clocked=clocked,
            )
        )
    return out


def _inside(b: Bar, lo: float, hi: float) -> bool:
    return b.start >= lo and b.end <= hi


def _held_phases(job_phases: Sequence[Bar], hold: Bar) -> list[Bar]:
    """The holder's phase spans inside this hold (its worker's, not a finalizer's on the same device)."""
    worker = hold.attrs.get("worker")
    return [b for b in job_phases if b.attrs.get("worker") == worker and _inside(b, hold.start, hold.end)]


def _phases(held: Sequence[tuple[Bar, list[Bar]]], busy: Sequence[tuple[float, float]]) -> list[PhaseIdle]:
    """The hold and each phase inside it: median wall, busy and idle milliseconds."""
    spans: dict[str, list[Bar]] = defaultdict(list)
    for h, phases in held:
        spans[LOCK].append(h)
        for b in phases:
            spans[b.name].append(b)
    rows = []
    for name, bs in spans.items():
        walls = [b.seconds for b in bs]
        busys = [merged_seconds(busy, b.start, b.end) for b in bs]
        rows.append(
            PhaseIdle(
                phase=name,
                count=len(bs),
                wall_ms=round(statistics.median(walls) * 1e3, 3),
                busy_ms=round(statistics.median(busys) * 1e3, 3),
                idle_ms=round(statistics.median(w - u for w, u in zip(walls, busys, strict=True)) * 1e3, 3),
            )
        )
    return sorted(rows, key=lambda r: (r.phase != LOCK, min(b.start for b in spans[r.phase])))


def _gaps(
    held: Sequence[tuple[Bar, list[Bar]]],
    busy: Sequence[tuple[float, float]],
    ends: Sequence[Bar],
    min_gap: float,
) -> list[Gap]:
    """`ends`: the spans that may have released a gap, sorted by their end."""
    end_times = [b.end for b in ends]
    gaps = []
    for h, phases in held:
        worker = h.attrs.get("worker")
        for s, e in _holes(h.start, h.end, busy):
            if e - s < min_gap:
                continue
            mid = (s + e) / 2
            phase = min(
                (p for p in phases if p.start <= mid <= p.end), key=lambda p: -p.depth, default=None
            )  # the innermost phase
            near = ends[
                bisect_left(end_times, e - RELEASE_TOLERANCE) : bisect_right(end_times, e + RELEASE_TOLERANCE)
            ]
            ended = [o for o in near if o.attrs.get("worker") != worker]
            closest = min(ended, key=lambda o: (abs(o.end - e), o.depth)) if ended else None
            gaps.append(
                Gap(s, e, phase.name if phase else OUTSIDE, h.label, closest.name if closest else None)
            )
    return sorted(gaps, key=lambda g: g.start)


def describe(report: DeviceIdle) -> list[str]:
    """Plain lines: the window, held and busy, then the idle gaps by phase and what they ended with."""
    what = "device clock" if report.clocked else "no device clock: busy is the lock's hold"
    lines = [
        f"device {report.device}: window {report.seconds:.3f} s; lock held {report.held * 100:.1f}%, "
        f"device busy {report.busy * 100:.1f}% ({what})"
    ]
    groups = report.by_phase()
    total = sum(g.seconds for g in report.gaps)
    if not groups:
        lines.append(f"no idle gap of {report.min_gap * 1e3:g} ms or more inside a hold")
        return lines
    share = total / report.seconds * 100 if report.seconds > 0 else 0.0
    lines.append(
        f"idle gaps of {report.min_gap * 1e3:g} ms or more inside holds: {len(report.gaps)}, "
        f"{total:.3f} s ({share:.1f}% of the window)"
    )
    for phase, gs in groups:
        median = statistics.median(g.seconds for g in gs) * 1e3
        n = len(gs)
        line = (
            f"  {phase}: {n} gap{'s' * (n != 1)}, {sum(g.seconds for g in gs):.3f} s, median {median:.1f} ms"
        )
        ended = Counter(g.ended_with for g in gs if g.ended_with).most_common(2)
        if ended:
            line += "; " + ", ".join(f"{n} ended with {name}" for name, n in ended)
        lines.append(line)
    return lines


#: set-up spans of a single proof (`cuzk prove`): before the proof, not part of its window
SETUP = frozenset({"topology", "load_params", "make_resident", "srs_load"})


def is_device_phase(name: str) -> bool:
    """A prover phase that runs on the device (the NTT and the MSMs, and a GPU's copies)."""
    return name.startswith(("ntt", "msm")) or name in {"gpu", "upload", "download"}


def has_holds(records: Sequence[Mapping[str, Any]]) -> bool:
    """Whether the timeline has device-lock holds (an engine run), which `analyse` needs."""
    return any(r.get("name") == LOCK for r in records)


@dataclass(frozen=True)
class SingleIdle:
    """A timeline without lock holds (`cuzk prove`): its phases run one after another, so the
    device waits for every host phase between its own; this is the time it waits, by phase."""

    window: tuple[float, float]  # the proof: first non-set-up span's start to the last end
    device_s: float  # device phases, merged
    host: list[tuple[str, float]]  # top-level host phases in the window: name, seconds (summed)
    setup_s: float  # set-up before the window (topology, parameters), not counted

    @property
    def seconds(self) -> float:
        return self.window[1] - self.window[0]

    def as_dict(self) -> dict[str, Any]:
        return {
            "mode": "single",
            "window_s": round(self.seconds, 6),
            "device_s": round(self.device_s, 6),
            "busy": round(self.device_s / self.seconds, 4) if self.seconds > 0 else 0.0,
            "host": [{"phase": n, "seconds": round(t, 6)} for n, t in self.host],
            "setup_s": round(self.setup_s, 6),
        }


def analyse_single(records: Sequence[Mapping[str, Any]], *, source: str = "timeline") -> SingleIdle:
    """Device time and the host phases it waits for, in a timeline of phases run in turn."""
    bars = build(records, source=source).bars
    top = [b for b in bars if b.depth == 0]
    setup = [b for b in top if b.name in SETUP]
    proof = [b for b in top if b.name not in SETUP]
    if not proof:
        raise FormatError(f"{source}: no proving spans after the set-up (topology, load_params)")
    lo, hi = min(b.start for b in proof), max(b.end for b in proof)
    device = [(b.start, b.end) for b in bars if is_device_phase(b.name)]
    if not device:
        raise FormatError(
            f"{source}: no {LOCK!r} spans and no device phases (ntt, msm): nothing ran on a device; "
            "record a proof (`cuzk prove --timeline FILE`) or an engine run (`cuzk bench batch --timeline FILE`)"
        )
    host: dict[str, float] = {}
    for b in proof:
        if not is_device_phase(b.name):
            host[b.name] = host.get(b.name, 0.0) + b.seconds
    return SingleIdle(
        window=(lo, hi),
        device_s=merged_seconds(device, lo, hi),
        host=sorted(host.items(), key=lambda kv: -kv[1]),
        setup_s=merged_seconds([(b.start, b.end) for b in setup], 0.0, lo),
    )


def describe_single(report: SingleIdle) -> list[str]:
    """Plain lines for a single proof: device time, and the host phases the device waits through."""
    span = report.seconds
    share = report.device_s / span * 100 if span > 0 else 0.0
    idle = span - report.device_s
    lines = [
        f"one proof, phases in turn (no engine lock): {span:.3f} s proving "
        f"(after {report.setup_s:.3f} s of set-up, not counted)",
        f"device phases (ntt, msm): {report.device_s:.3f} s, {share:.1f}%; "
        f"the device waits {idle:.3f} s for the host:",
    ]
    for name, seconds in report.host:
        pct = seconds / span * 100 if span > 0 else 0.0
        lines.append(f"  {name}: {seconds:.3f} s ({pct:.1f}%)")
    lines.append(
        "the engine overlaps these with other partitions' device work; for the idle gaps inside its "
        "device lock: `cuzk bench batch --circuit NAME --count 8 --timeline run.jsonl`, then this command"
    )
    return lines


def summary(records: Sequence[Mapping[str, Any]], *, min_gap: float = 0.005) -> list[str]:
    """`describe` for each device with a clock and idle gaps over the steady window; else nothing
    (what `bench batch` prints after its figures, so a shortfall of GPU busy comes explained)."""
    try:
        reports = analyse(records, min_gap=min_gap)
    except FormatError:  # no holds: nothing ran on a device
        return []
    return [line for r in reports if r.clocked and r.gaps for line in describe(r)]


__all__ = [
    "DeviceIdle",
    "Gap",
    "PhaseIdle",
    "SingleIdle",
    "analyse",
    "analyse_single",
    "describe",
    "describe_single",
    "has_holds",
    "steady_window",
    "summary",
]
