"""Where cuzk keeps files it makes (one cache root, overridable for CI and tests), and how it
writes them: through a hidden sibling and a rename, so no reader ever sees half a file and a
failed write leaves the old file as it was.

Hidden temporaries are named `.NAME.PID.TOKEN.tmp`: the pid lets a later writer tell the
leftovers of a dead (SIGKILLed) process and remove them; the random token keeps two threads of
one process apart. `locked` is the one cross-process lock, for "make it if it is absent".
"""

from __future__ import annotations

import fcntl
import os
import secrets
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import BinaryIO

from cuzk import config


def cache_root() -> Path:
    """CUZK_CACHE_DIR, else the user cache dir (e.g. ~/.cache/cuzk); not created."""
    return config.get().cache.root


def cache_dir(*parts: str) -> Path:
    """A folder under `cache_root()`, created on demand."""
    path = cache_root().joinpath(*parts)
    path.mkdir(parents=True, exist_ok=True)
    return path


def temp_name(path: str | os.PathLike[str]) -> Path:
    """A hidden sibling of `path` that no other process or thread will choose."""
    p = Path(path)
    return p.with_name(f".{p.name}.{os.getpid()}.{secrets.token_hex(4)}.tmp")


def _pid_alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:  # someone else's live process
        return True
    return True


def clean_stale_temporaries(path: str | os.PathLike[str]) -> list[Path]:
    """Remove the hidden temporaries of `path` left by processes that no longer run; returns them.

    Matches `.NAME.PID.tmp` (older cuzk) and `.NAME.PID.TOKEN.tmp`; a live process's files stay.
    """
    p = Path(path)
    prefix = f".{p.name}."
    removed: list[Path] = []
    try:
        entries = list(p.parent.iterdir())
    except OSError:
        return removed
    for entry in entries:
        name = entry.name
        if not (name.startswith(prefix) and name.endswith(".tmp")):
            continue
        pid_text = name[len(prefix) : -len(".tmp")].split(".")[0]
        if not pid_text.isdigit() or int(pid_text) == os.getpid() or _pid_alive(int(pid_text)):
            continue
        try:
            entry.unlink()
            removed.append(entry)
        except FileNotFoundError:  # another writer cleaned it first
            pass
        except IsADirectoryError:
            pass
    return removed


@contextmanager
def open_atomic(path: str | os.PathLike[str]) -> Iterator[BinaryIO]:
    """A binary file that becomes `path` only if the block ends without an exception.

    It is written under `temp_name(path)` (concurrent writers never share one), after removing
    dead processes' temporaries of the same file; OSError propagates, and callers translate it
    into their own error.
    """
    clean_stale_temporaries(path)
    tmp = temp_name(path)
    try:
        with open(tmp, "wb") as fh:
            yield fh
        os.replace(tmp, path)
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise


def write_atomic(path: str | os.PathLike[str], data: bytes | str) -> None:
    """All of `data` or nothing, through `open_atomic`."""
    with open_atomic(path) as fh:
        fh.write(data.encode() if isinstance(data, str) else data)


@contextmanager
def locked(path: str | os.PathLike[str]) -> Iterator[None]:
    """Hold an exclusive cross-process lock (flock) on the file `path`, created if absent.

    The kernel drops the lock when the holder exits, even by SIGKILL, so a dead holder never
    blocks the next one. The lock file itself stays (removing it would race with a waiter).
    """
    p = Path(path)
    p.parent.mkdir(parents=True, exist_ok=True)
    fd = os.open(p, os.O_RDWR | os.O_CREAT, 0o644)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)
        yield
    finally:
        os.close(fd)  # closing releases the flock
