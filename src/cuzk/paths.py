"""Where cuzk keeps files it makes (one cache root, overridable for CI and tests), and how it
writes them: through a hidden sibling and a rename, so no reader ever sees half a file and a
failed write leaves the old file as it was."""

from __future__ import annotations

import os
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import BinaryIO

from cuzk import config


def cache_dir(*parts: str) -> Path:
    """CUZK_CACHE_DIR, else the user cache dir (e.g. ~/.cache/cuzk); created on demand."""
    path = config.get().cache.root.joinpath(*parts)
    path.mkdir(parents=True, exist_ok=True)
    return path


@contextmanager
def open_atomic(path: str | os.PathLike[str]) -> Iterator[BinaryIO]:
    """A binary file that becomes `path` only if the block ends without an exception.

    It is written under a hidden sibling name unique to this process (concurrent writers never
    share one); OSError propagates, and callers translate it into their own error.
    """
    tmp = Path(path).with_name(f".{Path(path).name}.{os.getpid()}.tmp")
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
