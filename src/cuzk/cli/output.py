"""Shared terminal output: one rich console on stderr-friendly defaults, phase tables, progress."""

from __future__ import annotations

import argparse
import os
import sys
import time
from collections.abc import Callable
from functools import cache
from pathlib import Path

from rich.console import Console
from rich.table import Table

from cuzk.errors import UsageError
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


def check_output_paths(*paths: Path | None) -> None:
    """Refuse output files that cannot be written before the work that makes them (minutes at scale)."""
    for path in paths:
        if path is None:
            continue
        if path.is_dir():
            raise UsageError(f"{path}: is a directory; give a file name")
        parent = path.parent
        if not parent.is_dir():
            raise UsageError(f"{path}: the folder {parent} does not exist")
        if not os.access(parent, os.W_OK):
            raise UsageError(f"{path}: the folder {parent} is not writable")


def add_backend_option(p: argparse.ArgumentParser) -> None:
    """The one `--backend` option every computing command takes."""
    p.add_argument(
        "--backend",
        choices=("auto", "cpu", "cuda"),
        default=None,
        help="compute backend (default: CUZK_BACKEND, else cuda when a GPU is present, else cpu)",
    )
