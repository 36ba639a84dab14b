"""Spans on a timeline, and sinks that receive each span as it ends.

A `Timeline` travels with one job (a proof, a benchmark run); code wraps each
phase in `with timeline.span("ntt_msm_h"):`. Spans nest (depth is counted per
thread, so spans from several threads of one job each nest on their own);
`totals()` sums durations by name so repeated phases (one per circuit of a
batch) add up.

Output is not the span's business: a timeline carries a list of sinks, each
called with (timeline, span) in the span's thread the moment it ends.

- `StderrSink`: the `CUZK_TIMING: span=... job=... partition=... worker=... ms=...` line, written and
  flushed at once (buffered timing output is lost output). The line format is
  an output contract; it is attached by default when config says so
  (CUZK_TIMING=1).
- `CollectSink`: keeps finished spans, for an engine that merges timelines.
- `JsonLinesSink`: one JSON object per span (name, start, end, ms, depth, job,
  attrs), for machines.

Span attributes are free-form keyword arguments; the engine uses `worker`,
`pid`, `device` and `partition`. Attributes given to the Timeline are added to
every span it records (a worker's timeline can carry its worker and pid).
Start and end are `time.perf_counter()` seconds (CLOCK_MONOTONIC on Linux, so
comparable across the processes of one machine).
"""

from __future__ import annotations

import json
import sys
import threading
import time
from collections.abc import Iterable, Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any, Protocol, TextIO

from cuzk import config


@dataclass
class Span:
    """One named interval; `end` is 0.0 until it ends."""

    name: str
    start: float  # seconds, time.perf_counter()
    end: float = 0.0
    depth: int = 0
    attrs: dict[str, Any] = field(default_factory=dict)

    @property
    def seconds(self) -> float:
        return self.end - self.start

    def as_dict(self, job: str = "") -> dict[str, Any]:
        """A JSON-ready record (name, start, end, ms, depth, job, attrs), e.g. to cross a process."""
        return {
            "name": self.name,
            "start": self.start,
            "end": self.end,
            "ms": round(self.seconds * 1e3, 3),
            "depth": self.depth,
            "job": job,
            "attrs": dict(self.attrs),
        }

    @classmethod
    def from_dict(cls, record: Mapping[str, Any]) -> Span:
        """The span of an `as_dict` record (its job and ms are not part of a Span)."""
        return cls(
            name=str(record["name"]),
            start=float(record["start"]),
            end=float(record["end"]),
            depth=int(record.get("depth", 0)),
            attrs=dict(record.get("attrs", {})),
        )


class Sink(Protocol):
    """Receives every span of a timeline when it ends (in the thread that ran the span)."""

    def __call__(self, timeline: Timeline, span: Span) -> None: ...


#: attributes written right after span= and job=, in this order, when a span has them
LEADING_KEYS = ("partition", "worker", "device")


def _value(v: Any) -> str:
    """key=value values carry no spaces, so a line splits on whitespace (spaces become underscores)."""
    return str(v).replace(" ", "_") if v is not None and v != "" else "-"


def timing_line(job: str, span: Span) -> str:
    """The CUZK_TIMING line of a finished span (an output contract): key=value pairs.

    `CUZK_TIMING: span=NAME job=JOB partition=P worker=W device=D ms=MS` then the
    span's other attributes; job/partition/worker/device are `-` where unknown.
    """
    attrs = span.attrs
    lead = " ".join(f"{k}={_value(attrs.get(k))}" for k in LEADING_KEYS)
    rest = "".join(f" {k}={_value(v)}" for k, v in attrs.items() if k not in LEADING_KEYS)
    return f"CUZK_TIMING: span={span.name} job={_value(job)} {lead} ms={span.seconds * 1e3:.3f}{rest}"


class StderrSink:
    """Writes each span's CUZK_TIMING line to `stream` (default: sys.stderr at that moment), flushed."""

    def __init__(self, stream: TextIO | None = None) -> None:
        self.stream = stream
        self._lock = threading.Lock()  # one whole line at a time

    def __call__(self, timeline: Timeline, span: Span) -> None:
        line = timing_line(timeline.job, span)
        with self._lock:
            print(line, file=self.stream or sys.stderr, flush=True)


class JsonLinesSink:
    """Writes one JSON object per span (`Span.as_dict`) to `stream`, flushed; other values as str."""

    def __init__(self, stream: TextIO) -> None:
        self.stream = stream
        self._lock = threading.Lock()

    def __call__(self, timeline: Timeline, span: Span) -> None:
        line = json.dumps(span.as_dict(timeline.job), default=str)
        with self._lock:
            self.stream.write(line + "\n")
            self.stream.flush()


class CollectSink:
    """Keeps every finished span (with its timeline's job) until `drain()` takes them."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._items: list[tuple[str, Span]] = []

    def __call__(self, timeline: Timeline, span: Span) -> None:
        with self._lock:
            self._items.append((timeline.job, span))

    def drain(self) -> list[tuple[str, Span]]:
        """(job, span) pairs in the order they ended; the sink starts empty again."""
        with self._lock:
            items, self._items = self._items, []
        return items


def default_sinks() -> list[Sink]:
    """The sinks a Timeline gets when none are given: the stderr line when CUZK_TIMING is on."""
    return [StderrSink()] if config.get().timing.stderr else []


class Timeline:
    """The spans of one job, in start order; safe to record into from several threads."""

    def __init__(
        self,
        job: str = "",
        *,
        sinks: Iterable[Sink] | None = None,
        attrs: Mapping[str, Any] | None = None,
    ) -> None:
        self.job = job
        self.spans: list[Span] = []
        self.sinks: list[Sink] = default_sinks() if sinks is None else list(sinks)
        self.attrs: dict[str, Any] = dict(attrs or {})
        self._lock = threading.Lock()
        self._local = threading.local()  # .depth: this thread's nesting

    @contextmanager
    def span(self, name: str, **attrs: Any) -> Iterator[Span]:
        depth = getattr(self._local, "depth", 0)
        s = Span(name, time.perf_counter(), depth=depth, attrs={**self.attrs, **attrs})
        with self._lock:
            self.spans.append(s)
        self._local.depth = depth + 1
        try:
            yield s
        finally:
            self._local.depth = depth
            s.end = time.perf_counter()
            for sink in list(self.sinks):
                sink(self, s)

    def snapshot(self) -> list[Span]:
        """A copy of the span list, taken under the lock."""
        with self._lock:
            return list(self.spans)

    def records(self) -> list[dict[str, Any]]:
        """Every span as a JSON-ready record (`Span.as_dict`): what `--timeline FILE` writes."""
        return [s.as_dict(self.job) for s in self.snapshot()]

    def totals(self) -> dict[str, float]:
        """Seconds per span name, summed over repeats, in first-seen order."""
        out: dict[str, float] = {}
        for s in self.snapshot():
            out[s.name] = out.get(s.name, 0.0) + s.seconds
        return out

    def add(self, span: Span) -> None:
        """A finished span measured on another clock (the device's), given to the sinks like the rest."""
        with self._lock:
            self.spans.append(span)
        for sink in list(self.sinks):
            sink(self, span)

    def merge(self, other: Timeline | Iterable[Span]) -> None:
        """Append another timeline's spans (or finished spans, e.g. from a worker process)."""
        spans = other.snapshot() if isinstance(other, Timeline) else list(other)
        with self._lock:
            self.spans.extend(spans)
