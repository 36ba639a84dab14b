"""Atomic writes: a file appears whole or not at all, and a failure keeps the old one."""

from __future__ import annotations

from pathlib import Path

import pytest

from cuzk.paths import open_atomic, write_atomic


def test_write_atomic_replaces_whole(tmp_path: Path) -> None:
    target = tmp_path / "out.bin"
    write_atomic(target, b"old")
    write_atomic(target, "new text")
    assert target.read_text() == "new text"
    assert [p.name for p in tmp_path.iterdir()] == ["out.bin"]


def test_a_failure_mid_write_keeps_the_old_file(tmp_path: Path) -> None:
    target = tmp_path / "key.params"
    target.write_bytes(b"precious")
    with pytest.raises(RuntimeError, match="disk"), open_atomic(target) as fh:
        fh.write(b"half of a new fi")
        raise RuntimeError("disk full")
    assert target.read_bytes() == b"precious"
    assert [p.name for p in tmp_path.iterdir()] == ["key.params"]


def test_a_missing_folder_is_an_oserror(tmp_path: Path) -> None:
    with pytest.raises(FileNotFoundError):
        write_atomic(tmp_path / "missing" / "x", b"")
