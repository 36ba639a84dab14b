"""Timing spans: every phase of proving is a named span; the names are part of the output contract."""

from cuzk.instrument.spans import Span, Timeline

__all__ = ["Span", "Timeline"]
