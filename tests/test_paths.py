"""Atomic writes: a file appears whole or not at all, and a failure keeps the old one."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
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


def test_two_threads_of_one_process_get_different_temporaries(tmp_path: Path) -> None:
    import threading

    from cuzk.paths import temp_name

    names: list[Path] = []
    barrier = threading.Barrier(2)

    def pick() -> None:
        barrier.wait()
        names.append(temp_name(tmp_path / "x.params"))

    threads = [threading.Thread(target=pick) for _ in range(2)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert len(set(names)) == 2
    assert all(n.name.startswith(f".x.params.{os.getpid()}.") and n.name.endswith(".tmp") for n in names)


def test_two_threads_write_one_file_without_a_mixed_result(tmp_path: Path) -> None:
    import threading

    target = tmp_path / "shared.bin"
    inside = threading.Barrier(2)

    def write(byte: bytes) -> None:
        with open_atomic(target) as fh:
            fh.write(byte * 1000)
            inside.wait()  # both temporaries are open at once
            fh.write(byte * 1000)

    threads = [threading.Thread(target=write, args=(b,)) for b in (b"a", b"b")]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert target.read_bytes() in (b"a" * 2000, b"b" * 2000)
    assert [p.name for p in tmp_path.iterdir()] == ["shared.bin"]


def _dead_pid() -> int:
    proc = subprocess.run(
        [sys.executable, "-c", "import os; print(os.getpid())"], capture_output=True, text=True
    )
    return int(proc.stdout)


def test_stale_temporaries_of_dead_processes_are_removed_on_the_next_write(tmp_path: Path) -> None:
    dead = _dead_pid()
    old_style = tmp_path / f".k.params.{dead}.tmp"  # as cuzk named them before the token
    new_style = tmp_path / f".k.params.{dead}.0a1b2c3d.tmp"
    live = tmp_path / f".k.params.{os.getppid()}.0a1b2c3d.tmp"  # a running process: not ours to remove
    other = tmp_path / f".other.{dead}.tmp"  # another file's temporary: left for its own writer
    for p in (old_style, new_style, live, other):
        p.write_bytes(b"half")
    write_atomic(tmp_path / "k.params", b"whole")
    assert sorted(p.name for p in tmp_path.iterdir()) == sorted(["k.params", live.name, other.name])


def test_sigkill_mid_write_leaves_a_temporary_the_next_write_cleans(tmp_path: Path) -> None:
    target = tmp_path / "big.params"
    target.write_bytes(b"old")
    code = (
        "import os, signal, sys; from cuzk.paths import open_atomic\n"
        f"with open_atomic({str(target)!r}) as fh:\n"
        "    fh.write(b'partial'); fh.flush(); os.kill(os.getpid(), signal.SIGKILL)\n"
    )
    proc = subprocess.run([sys.executable, "-c", code], env=_env(), capture_output=True)
    assert proc.returncode == -signal.SIGKILL
    assert target.read_bytes() == b"old"
    assert len([p for p in tmp_path.iterdir() if p.name.endswith(".tmp")]) == 1
    write_atomic(target, b"new")
    assert [p.name for p in tmp_path.iterdir()] == ["big.params"]


def test_locked_serializes_processes(tmp_path: Path) -> None:
    """Another process cannot take the lock a live one holds; it can once the holder is killed."""
    import fcntl

    lock = tmp_path / ".x.lock"
    code = (
        "import sys; from cuzk.paths import locked\n"
        f"with locked({str(lock)!r}):\n"
        "    print('held', flush=True); sys.stdin.read()\n"
    )
    with subprocess.Popen(
        [sys.executable, "-c", code], env=_env(), stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True
    ) as holder:
        try:
            assert holder.stdout is not None and holder.stdout.readline() == "held\n"
            fd = os.open(lock, os.O_RDWR)
            try:
                with pytest.raises(BlockingIOError):
                    fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
                holder.kill()
                holder.wait()
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)  # the kernel released the dead holder's lock
            finally:
                os.close(fd)
        finally:
            holder.kill()


def _env() -> dict[str, str]:
    src = str(Path(__file__).resolve().parents[1] / "src")
    return {**os.environ, "PYTHONPATH": src + os.pathsep + os.environ.get("PYTHONPATH", "")}
