"""Shared terminal output and argument types: one rich console, phase tables, progress, kernel
compilation notices, and the typed path and number options every command uses.

Path options say their role by their type (`input_file`, `input_dir`, `output_file`,
`output_dir`) and counts by theirs (`positive_int`, `nonnegative_int`), so a bad value is
refused before any work and the CLI's bad-argument test knows what to feed each option.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import sys
import threading
import time
from collections.abc import Callable, Iterable, Iterator
from functools import cache
from pathlib import Path
from types import TracebackType
from typing import Any

from rich.console import Console
from rich.table import Table

from cuzk.errors import UsageError
from cuzk.instrument import Timeline

#: Tables are laid out at least this wide: in a narrower terminal they overflow the line
#: instead of wrapping every cell into a column of fragments.
MIN_WIDTH = 100


def _console(min_width: int = MIN_WIDTH, **kwargs: Any) -> Console:
    con = Console(highlight=False, **kwargs)
    con.width = max(min_width, con.width)
    return con


def wide_console(min_width: int) -> Console:
    """A stdout console at least `min_width` columns wide, for tables with many columns."""
    return _console(min_width)


@cache
def console() -> Console:
    return _console()


@cache
def err_console() -> Console:
    return _console(stderr=True)


def phase_table(tl: Timeline, title: str) -> Table:
    """Top-level and nested spans with their durations, in the order they ran.

    When numba compiled kernels during the command, the compile time inside each phase is a
    column of its own and "ms" is the phase's work without it: a first run's load_params
    once read 37 s where the work was a second (issue 29)."""
    table = Table(title=title, title_justify="left")
    table.add_column("phase")
    table.add_column("ms", justify="right")
    seen: dict[tuple[str, int], float] = {}
    compiling: dict[tuple[str, int], float] = {}
    order: list[tuple[str, int]] = []
    for s in tl.spans:
        key = (s.name, s.depth)
        if key not in seen:
            order.append(key)
            seen[key] = compiling[key] = 0.0
        seen[key] += s.seconds
        compiling[key] += compile_seconds_within(s.start, s.end)
    shown = any(v >= 0.0005 for v in compiling.values())
    if shown:
        table.add_column("compiling ms", justify="right")
    for key in order:
        name, depth = key
        row = ["  " * depth + name, f"{(seen[key] - compiling[key]) * 1e3:.1f}"]
        if shown:
            row.append(f"{compiling[key] * 1e3:.1f}" if compiling[key] >= 0.0005 else "")
        table.add_row(*row)
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
        if parent.exists() and not parent.is_dir():
            raise UsageError(f"{path}: {parent} is a file, not a folder")
        if not parent.is_dir():
            raise UsageError(f"{path}: the folder {parent} does not exist")
        if not os.access(parent, os.W_OK):
            raise UsageError(f"{path}: the folder {parent} is not writable")


def check_output_dir(path: Path) -> None:
    """Refuse an output folder that cannot be made or written, before the work that fills it."""
    if path.exists() and not path.is_dir():
        raise UsageError(f"{path}: is a file; give a folder (it is created if absent)")
    existing = path
    while not existing.exists():
        existing = existing.parent
    if not existing.is_dir():
        raise UsageError(f"{path}: {existing} is a file, not a folder")
    if not os.access(existing, os.W_OK):
        raise UsageError(f"{path}: {existing} is not writable (read-only place or no permission)")


def _setting(text: str) -> dict[str, Any]:
    from cuzk.errors import CuzkError
    from cuzk.toggles import parse_settings

    try:
        return parse_settings([text])
    except CuzkError as exc:
        raise argparse.ArgumentTypeError(str(exc)) from None


class _MergeSettings(argparse.Action):
    def __call__(self, parser: Any, namespace: Any, values: Any, option_string: Any = None) -> None:
        merged = dict(getattr(namespace, self.dest) or {})
        merged.update(values)
        setattr(namespace, self.dest, merged)


def add_settings_option(p: argparse.ArgumentParser) -> None:
    """The one `--set key=value` option (repeatable): named toggles (cuzk.toggles), validated."""
    p.add_argument(
        "--set",
        dest="settings",
        type=_setting,
        action=_MergeSettings,
        default={},
        metavar="KEY=VALUE",
        help="a named toggle, e.g. msm.window.l=12 or staging.pinned=on (repeatable; see docs/ARCHITECTURE.md)",
    )


def add_timeline_option(p: argparse.ArgumentParser) -> None:
    """The one `--timeline FILE` option: every span of the run as JSON lines (`cuzk timeline render`)."""
    p.add_argument(
        "--timeline",
        type=output_file,
        help="write every span as JSON lines here (see `cuzk timeline render`)",
    )


def write_timeline(path: Path | None, timelines: Iterable[Timeline]) -> None:
    """All spans of `timelines` as JSON lines at `path` (nothing when path is None), all or nothing."""
    if path is None:
        return
    from cuzk.paths import write_atomic

    text = "".join(json.dumps(r, default=str) + "\n" for tl in timelines for r in tl.records())
    try:
        write_atomic(path, text)
    except OSError as exc:
        raise UsageError(f"{path}: cannot write: {exc.strerror or exc}") from exc


def add_backend_option(p: argparse.ArgumentParser) -> None:
    """The one `--backend` option every computing command takes."""
    p.add_argument(
        "--backend",
        choices=("auto", "cpu", "cuda"),
        default=None,
        help="compute backend (default: CUZK_BACKEND, else cuda when a GPU is present, else cpu)",
    )


def require_subcommand(p: argparse.ArgumentParser) -> None:
    """A command group run without its sub-command: argparse's usage error (stderr, exit 2)."""
    p.set_defaults(func=lambda _args: p.error("a sub-command is required (see --help)"))


# --- argument types: the role of each path, the range of each count -------------------------
def input_file(text: str) -> Path:
    """A file the command reads (checked when read: missing or malformed is a clean error)."""
    return Path(text)


def input_dir(text: str) -> Path:
    """A folder the command reads (e.g. parameters made by `cuzk setup`)."""
    return Path(text)


def output_file(text: str) -> Path:
    """A file the command writes (checked with `check_output_paths` before any work)."""
    return Path(text)


def output_dir(text: str) -> Path:
    """A folder the command writes into, created if absent (checked with `check_output_dir`)."""
    return Path(text)


def _int(text: str, least: int) -> int:
    try:
        n = int(text, 10)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a whole number") from None
    if n < least:
        raise argparse.ArgumentTypeError(f"must be at least {least}, got {n}")
    return n


def positive_int(text: str) -> int:
    """A count of at least 1 (runs, iterations, batch size)."""
    return _int(text, 1)


def nonnegative_int(text: str) -> int:
    """A number of at least 0 (seeds)."""
    return _int(text, 0)


def seconds(text: str) -> float:
    """A duration in seconds, at least 0 (timeouts, waits)."""
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a number of seconds") from None
    if not value >= 0:
        raise argparse.ArgumentTypeError(f"must be at least 0, got {text}")
    return value


PATH_TYPES = (input_file, input_dir, output_file, output_dir)
INT_TYPES = (positive_int, nonnegative_int)


# --- numba compilation notices ----------------------------------------------------------------
class KernelCompileWatch:
    """Says when numba compiles (not loads from its cache) a kernel, and adds up the time spent.

    Listens to numba's "numba:compile" events, which fire only on a cache miss; nested
    compilations (a kernel compiling the kernels it calls) count once, in their outermost event.
    """

    # the kernels a command is known to need compile ahead, with their own estimate
    # (cuzk.algebra.precompile); this notice is for the rest, each a few seconds
    NOTICE = "compiling CPU kernels on first use, once (numba caches them on disk)"
    EVERY_S = 5.0  # at most one progress line per this many seconds

    def __init__(self, say: Callable[[str], None]) -> None:
        self.say = say
        self.seconds = 0.0
        self.kernels = 0
        self.intervals: list[tuple[float, float]] = []  # each outermost compile, perf_counter seconds
        self._lock = threading.Lock()
        self._local = threading.local()
        self._noticed = False
        self._last = time.perf_counter()
        self._scope: Any = None

    @contextlib.contextmanager
    def announced(self) -> Iterator[None]:
        """No notice inside the block (what compiles there is announced another way)."""
        with self._lock:
            before, self._noticed = self._noticed, True
        try:
            yield
        finally:
            with self._lock:
                self._noticed = before

    def on_start(self, event: Any) -> None:
        depth = getattr(self._local, "depth", 0)
        self._local.depth = depth + 1
        if depth == 0:
            self._local.t0 = time.perf_counter()
            with self._lock:
                first, self._noticed = not self._noticed, True
            if first:
                self.say(self.NOTICE)

    def on_end(self, event: Any) -> None:
        self._local.depth -= 1
        if self._local.depth == 0:
            now = time.perf_counter()
            dt = now - self._local.t0
            with self._lock:
                self.intervals.append((self._local.t0, now))
                self.seconds += dt
                self.kernels += 1
                n, total = self.kernels, self.seconds
                due = now - self._last >= self.EVERY_S
                if due:
                    self._last = now
            if due:
                func = getattr((event.data or {}).get("dispatcher"), "py_func", None)
                name = getattr(func, "__qualname__", "a kernel")
                self.say(f"  ... compiled {n} kernels in {total:.0f} s (latest: {name})")

    def __enter__(self) -> KernelCompileWatch:
        from numba.core import event

        watch = self

        class _Listener(event.Listener):  # numba accepts only its own Listener subclasses
            def on_start(self, ev: Any) -> None:
                watch.on_start(ev)

            def on_end(self, ev: Any) -> None:
                watch.on_end(ev)

        self._scope = event.install_listener("numba:compile", _Listener())
        self._scope.__enter__()
        return self

    def __exit__(
        self, kind: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        self._scope.__exit__(kind, exc, tb)


_WATCH: KernelCompileWatch | None = None


def compile_seconds() -> float:
    """Seconds numba has spent compiling kernels in this command so far (0 when none)."""
    return _WATCH.seconds if _WATCH is not None else 0.0


def current_watch() -> KernelCompileWatch | None:
    """The command's compile watch (None outside `cuzk.cli.main`)."""
    return _WATCH


def compile_seconds_within(start: float, end: float) -> float:
    """Seconds numba spent compiling inside [start, end] (perf_counter), overlaps counted once."""
    if _WATCH is None or not _WATCH.intervals:
        return 0.0
    from cuzk.instrument.busy import merged_seconds

    return merged_seconds(list(_WATCH.intervals), start, end)


def watch_kernel_compilation() -> KernelCompileWatch:
    """A fresh watch for one command (`cuzk.cli.main` enters it around the command)."""
    global _WATCH
    _WATCH = KernelCompileWatch(progress_printer())
    return _WATCH
