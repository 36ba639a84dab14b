"""The emulator's module cache: a build lands under its final name by one rename in the cache's
own folder, so a process that finds the file never loads a half-copied one (a move from /tmp to
another file system is a copy)."""

from __future__ import annotations

import tempfile
from pathlib import Path
from typing import Any

import pytest

from cuzk.backends.cuda import _emulator
from cuzk.backends.cuda._emulator import host_compiler

pytestmark = pytest.mark.skipif(host_compiler() is None, reason="the CUDA emulator needs a C++ compiler")


def test_a_module_is_built_in_the_cache_folder_and_renamed_into_place(tmp_path: Path, monkeypatch) -> None:
    cache = tmp_path / "emu"
    dirs: list[Any] = []
    real = tempfile.TemporaryDirectory

    def recording(*args: Any, **kwargs: Any) -> Any:
        dirs.append(kwargs.get("dir"))
        return real(*args, **kwargs)

    monkeypatch.setattr(_emulator.tempfile, "TemporaryDirectory", recording)
    lib = _emulator._build("fr", cache)
    assert dirs == [cache] and lib.parent == cache
    assert [p.name for p in cache.iterdir()] == [lib.name]  # no temporary folder left behind
    stamp = lib.stat().st_mtime_ns
    assert _emulator._build("fr", cache) == lib and lib.stat().st_mtime_ns == stamp and len(dirs) == 1
