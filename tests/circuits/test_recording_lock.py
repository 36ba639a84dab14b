"""The recording of a circuit happens once: under threads (a per-circuit lock) and under
processes (a file lock around "record if absent" in the disk cache).

Both tests hold the first recorder inside `record` until the second caller has arrived, so the
second asks while the first is still recording (without the locks, both would record)."""

from __future__ import annotations

import multiprocessing as mp
import pickle
import threading
from pathlib import Path
from typing import Any

from cuzk import config
from cuzk.circuits.post import Post
from cuzk.r1cs import cache as rcache


def _circuit(**kw: Any) -> Post:
    return Post(name="wpost-tiny", description="lock test", scale="tiny",
                params={"sectors": 1, "challenges": 2, "depth": 4}, **kw)  # fmt: skip


class GatedPost(Post):
    """Counts recordings; the first waits for `go` after saying `started`."""

    def __init__(self, started: threading.Event, go: threading.Event) -> None:
        super().__init__(name="wpost-tiny", description="lock test", scale="tiny",
                         params={"sectors": 1, "challenges": 2, "depth": 4})  # fmt: skip
        self.started, self.go, self.calls = started, go, 0

    def record(self):  # type: ignore[no-untyped-def]
        self.calls += 1
        self.started.set()
        assert self.go.wait(60)
        return super().record()


def test_threads_record_one_circuit_once(tmp_path: Path) -> None:
    config.reload({"CUZK_CACHE_DIR": str(tmp_path)})
    started, go, arrived = threading.Event(), threading.Event(), threading.Event()
    c = GatedPost(started, go)
    got: dict[str, Any] = {}

    def first() -> None:
        got["first"] = c.topology()

    def second() -> None:
        arrived.set()
        got["second"] = c.topology()

    t1 = threading.Thread(target=first)
    t1.start()
    assert started.wait(60)
    t2 = threading.Thread(target=second)
    t2.start()
    assert arrived.wait(60)
    go.set()
    t1.join()
    t2.join()
    assert c.calls == 1 and got["first"] is got["second"]
    assert c.cache_status == "recorded"
    c.forget()
    assert c.topology().hash == got["first"].hash and c.cache_status == "hit" and c.calls == 1


def test_a_circuit_pickles_without_its_lock() -> None:
    c = _circuit()
    twin = pickle.loads(pickle.dumps(c))
    assert twin.spec() == c.spec() and twin._lock is not c._lock


def _child(path: str, calls: str, started: Any, go: Any, arrived: Any, first: bool, out: Any) -> None:
    """One process asking the disk cache for the recording; the first one is held in `record`."""
    c = _circuit()

    def record() -> Any:
        with open(calls, "a") as f:
            f.write("r\n")
        if first:
            started.set()
            assert go.wait(120)
        return c.record()

    if not first:
        arrived.set()
    topo, _, status = rcache.load_or_record(Path(path), c.spec(), record)
    out.put((first, status, topo.hash))


def _wait(event: Any, proc: Any) -> None:
    """Wait for a child's event; fail at once if that child died instead."""
    while not event.wait(1):
        assert proc.is_alive(), f"child exited with {proc.exitcode} before signalling"


def test_processes_record_once_and_read_one_file(tmp_path: Path) -> None:
    ctx = mp.get_context("spawn")
    started, go, arrived, out = ctx.Event(), ctx.Event(), ctx.Event(), ctx.Queue()
    path, calls = str(tmp_path / "r1cs" / "wpost-tiny.npz"), str(tmp_path / "record.calls")
    p1 = ctx.Process(target=_child, args=(path, calls, started, go, arrived, True, out))
    p1.start()
    _wait(started, p1)  # the first process is inside record, holding the lock
    p2 = ctx.Process(target=_child, args=(path, calls, started, go, arrived, False, out))
    p2.start()
    _wait(arrived, p2)
    go.set()
    results = sorted(out.get(timeout=300) for _ in range(2))
    p1.join(60)
    p2.join(60)
    assert (p1.exitcode, p2.exitcode) == (0, 0)
    assert [(first, status) for first, status, _ in results] == [(False, "hit"), (True, "recorded")]
    assert results[0][2] == results[1][2]
    assert Path(calls).read_text() == "r\n"
