"""Timing spans: every phase of proving is a named span; the names are part of the output contract.

A bottom layer (it imports only `cuzk.config`): any layer may record spans, and sinks decide
where they go (the CUZK_TIMING stderr line, a collector, JSON lines).
"""

from cuzk.instrument.spans import (
    CollectSink,
    JsonLinesSink,
    Sink,
    Span,
    StderrSink,
    Timeline,
    default_sinks,
    timing_line,
)

__all__ = [
    "CollectSink",
    "JsonLinesSink",
    "Sink",
    "Span",
    "StderrSink",
    "Timeline",
    "default_sinks",
    "timing_line",
]
