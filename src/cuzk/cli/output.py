"""Shared terminal output: one rich console on stderr-friendly defaults, phase tables, progress."""

from __future__ import annotations

import argparse
import sys
import time
from collections.abc import Callable
from functools import cache

from rich.console import Console
from rich.table import Table

from cuzk.instrument import Timeline


@cache
def console() -> Console:
    return Console(highlight=False)


@cache
def err_console() -> Console:
    return Console(stderr=True, highlight=False)


def phase_table(tl: Timeline, title: str) -> Table:
    """Top-level and nested spans with their durations, in the order they ran."""
    table = Table(title=title, title_justify="left")
    table.add_column("phase")
    table.add_column("ms", justify="right")
    seen: dict[tuple[str, int], float] = {}
    order: list[tuple[str, int]] = []
    for s in tl.spans:
        key = (s.name, s.depth)
        if key not in seen:
            order.append(key)
            seen[key] = 0.0
        seen[key] += s.seconds
    for name, depth in order:
        table.add_row("  " * depth + name, f"{seen[(name, depth)] * 1e3:.1f}")
    return table


def progress_printer() -> Callable[[str], None]:
    """A progress callback: one timestamped line per step on stderr (safe in logs and CI)."""
    start = time.perf_counter()

    def say(message: str) -> None:
        err_console().print(f"[dim]{time.perf_counter() - start:7.2f}s[/dim] {message}")
        sys.stderr.flush()

    return say


def add_backend_option(p: argparse.ArgumentParser) -> None:
    """The one `--backend` option every computing command takes."""
    p.add_argument(
        "--backend",
        choices=("auto", "cpu", "cuda"),
        default=None,
        help="compute backend (default: CUZK_BACKEND, else cuda when a GPU is present, else cpu)",
    )
