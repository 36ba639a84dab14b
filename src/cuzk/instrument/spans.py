"""A minimal span recorder: nested, named, monotonic-clock intervals.

A `Timeline` travels with one job (a proof, a benchmark run); code wraps each
phase in `with timeline.span("ntt_msm_h"):`. Spans may nest; `totals()` sums
durations by name so repeated phases (one per circuit of a batch) add up.
When the CUZK_TIMING environment variable is set, each finished span is also
written at once to stderr as a `CUZK_TIMING name=... ms=...` line (flushed,
the seed's lesson: buffered timing output is lost output).
"""

from __future__ import annotations

import os
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any


@dataclass
class Span:
    name: str
    start: float  # seconds, time.perf_counter()
    end: float = 0.0
    depth: int = 0
    attrs: dict[str, Any] = field(default_factory=dict)

    @property
    def seconds(self) -> float:
        return self.end - self.start


class Timeline:
    """The spans of one job, in start order."""

    def __init__(self, job: str = "") -> None:
        self.job = job
        self.spans: list[Span] = []
        self._depth = 0
        self._echo = bool(os.environ.get("CUZK_TIMING"))

    @contextmanager
    def span(self, name: str, **attrs: Any) -> Iterator[Span]:
        s = Span(name, time.perf_counter(), depth=self._depth, attrs=dict(attrs))
        self.spans.append(s)
        self._depth += 1
        try:
            yield s
        finally:
            self._depth -= 1
            s.end = time.perf_counter()
            if self._echo:
                extra = "".join(f" {k}={v}" for k, v in s.attrs.items())
                job = f" job={self.job}" if self.job else ""
                print(
                    f"CUZK_TIMING{job} span={name} ms={s.seconds * 1e3:.3f}{extra}",
                    file=sys.stderr,
                    flush=True,
                )

    def totals(self) -> dict[str, float]:
        """Seconds per span name, summed over repeats, in first-seen order."""
        out: dict[str, float] = {}
        for s in self.spans:
            out[s.name] = out.get(s.name, 0.0) + s.seconds
        return out

    def merge(self, other: Timeline) -> None:
        self.spans.extend(other.spans)
