"""The daemon's job journal: every accepted job is on disk before SubmitProof answers.

A proving job may stand for hours of sealing; the reference keeps jobs in
memory only, so a crash loses them silently. Here the request is written to
SQLite (WAL mode, synchronous=FULL: a committed row survives kill -9 and power
loss) before the caller hears "accepted", and the terminal status and result
are written when the job ends. After a restart, jobs without a terminal status
are handed back to be re-run (the default) or marked FAILED ("daemon
restarted"), by config, and AwaitProof on any journaled id is answered from
here.
"""

from __future__ import annotations

import contextlib
import hashlib
import sqlite3
import threading
import time
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

from cuzk.errors import UsageError
from cuzk.paths import write_atomic

SCHEMA = """
CREATE TABLE IF NOT EXISTS jobs (
    job_id      TEXT PRIMARY KEY,
    request     BLOB NOT NULL,       -- the SubmitProofRequest as it came off the wire
    status      TEXT NOT NULL,       -- accepted | completed | failed | cancelled
    result      BLOB,                -- the AwaitProofResponse, once terminal
    error       TEXT,
    accepted_at REAL NOT NULL,
    finished_at REAL,
    attempts    INTEGER NOT NULL DEFAULT 1,
    checksum    TEXT                 -- row_checksum(job_id, request, result), once terminal
);
CREATE INDEX IF NOT EXISTS jobs_open ON jobs (status) WHERE status = 'accepted';
CREATE TABLE IF NOT EXISTS on_device (  -- partitions on a device now: a crash charges only their jobs
    job_id      TEXT NOT NULL,
    partition   INTEGER NOT NULL,
    PRIMARY KEY (job_id, partition)
);
"""
TERMINAL = ("completed", "failed", "cancelled")
_COLUMNS = "job_id, request, status, result, error, accepted_at, finished_at, attempts, checksum"


def row_checksum(job_id: str, request: bytes, result: bytes) -> str:
    """sha256 over a finished row's id, request and result: a flipped bit, or a result that belongs to
    another row, no longer matches (server.stored checks it when a result is read back)."""
    h = hashlib.sha256()
    for part in (job_id.encode(), request, result):
        h.update(len(part).to_bytes(8, "little"))
        h.update(part)
    return h.hexdigest()


def _refuse_emptied(path: Path, marker: Path) -> None:
    """A main file gone or emptied beside a write-ahead log that holds data: opening it would let
    SQLite start an empty journal over the log. Refused before SQLite touches either."""
    wal = path.with_name(path.name + "-wal")
    if wal.exists() and wal.stat().st_size > 0 and (not path.exists() or path.stat().st_size == 0):
        raise UsageError(
            f"the job journal {path} is {'missing' if not path.exists() else 'empty'} but its write-ahead "
            f"log {wal.name} holds data: the file was emptied or removed. Restore it, or move "
            f"{path.name}*{' and ' + marker.name if marker.exists() else ''} aside to start afresh"
        )


def _storage_error(path: Path, exc: sqlite3.Error) -> Exception:
    """A SQLite failure as the error tree's: a full disk is StorageFullError (RESOURCE_EXHAUSTED)."""
    from cuzk.errors import EngineError, StorageFullError

    text = str(exc)
    if "full" in text or "No space" in text:
        return StorageFullError(f"the job journal {path} cannot grow ({text}): the job was not recorded")
    return EngineError(f"the job journal {path} failed: {text}")


@dataclass(frozen=True)
class JournalEntry:
    job_id: str
    request: bytes
    status: str
    result: bytes | None
    error: str | None
    accepted_at: float
    finished_at: float | None
    attempts: int
    checksum: str | None = None


class Journal:
    """A SQLite journal of jobs in the daemon's state directory; safe to share between threads."""

    def __init__(self, path: str | Path) -> None:
        self.path = Path(path)
        self.marker = self.path.with_name(self.path.name + ".id")
        _refuse_emptied(self.path, self.marker)
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            self._db = sqlite3.connect(self.path, check_same_thread=False, isolation_level=None)
            self._db.execute("PRAGMA journal_mode=WAL")
            self._db.execute("PRAGMA synchronous=FULL")
            verdict = self._db.execute("PRAGMA quick_check").fetchone()[0]
            if verdict != "ok":
                raise UsageError(
                    f"the job journal {self.path} fails its integrity check ({verdict}); move it aside "
                    f"(with {self.marker.name}) to start with an empty journal, or restore it"
                )
            self._db.executescript(SCHEMA)
            columns = {row[1] for row in self._db.execute("PRAGMA table_info(jobs)")}
            if "checksum" not in columns:  # a journal of an older cuzk: its results get checked anew
                self._db.execute("ALTER TABLE jobs ADD COLUMN checksum TEXT")
            self._check_identity()
        except (OSError, sqlite3.Error) as exc:
            raise UsageError(f"cannot open the job journal {self.path}: {exc}") from exc
        self._lock = threading.Lock()
        # Device marks are written twice per partition from the GPU workers' threads: on a connection
        # of their own without fsync (a committed write is in the OS page cache, which a kill -9 of
        # the daemon does not lose; a power cut may, and then only spares a job a charge).
        self._marks = sqlite3.connect(self.path, check_same_thread=False, isolation_level=None, timeout=30)
        self._marks.execute("PRAGMA synchronous=OFF")
        self._marks_lock = threading.Lock()

    def _check_identity(self) -> None:
        """A journal names itself in a `meta` row and in the marker file beside it. An empty journal
        beside a marker was emptied or replaced (its jobs would be forgotten in silence): refused."""
        self._db.execute("CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL)")
        row = self._db.execute("SELECT value FROM meta WHERE key = 'journal_id'").fetchone()
        recorded = self.marker.read_text().strip() if self.marker.exists() else None
        if row is None:
            if recorded:
                raise UsageError(
                    f"the job journal {self.path} is empty, but {self.marker} says this folder held "
                    f"journal {recorded}: the file was emptied or replaced, and starting would forget its "
                    f"jobs. Restore it, or move {self.path.name}* and {self.marker.name} aside to start afresh"
                )
            journal_id = uuid.uuid4().hex
            self._db.execute("INSERT INTO meta VALUES ('journal_id', ?)", (journal_id,))
            write_atomic(self.marker, journal_id + "\n")
        elif recorded is None:
            write_atomic(self.marker, row[0] + "\n")  # a journal of an older cuzk: named now
        elif recorded != row[0]:
            raise UsageError(
                f"the job journal {self.path} is journal {row[0]}, but {self.marker} names journal "
                f"{recorded}: it was replaced. Restore it, or move both aside to start afresh"
            )

    @contextmanager
    def _tx(self) -> Iterator[sqlite3.Connection]:
        with self._lock:
            try:
                self._db.execute("BEGIN IMMEDIATE")
                try:
                    yield self._db
                except BaseException:
                    if self._db.in_transaction:
                        self._db.execute("ROLLBACK")
                    raise
                self._db.execute("COMMIT")
            except sqlite3.Error as exc:
                if self._db.in_transaction:
                    self._db.execute("ROLLBACK")
                raise _storage_error(self.path, exc) from exc

    def checkpoint(self) -> None:
        """Fold the write-ahead log into the main file and truncate it (done at each prune and close)."""
        with self._lock:
            self._db.execute("PRAGMA wal_checkpoint(TRUNCATE)")

    def accept(self, job_id: str, request: bytes) -> bool:
        """Record an accepted job; False if the id is already journaled and not terminal (same job)."""
        with self._tx() as db:
            row = db.execute("SELECT status FROM jobs WHERE job_id = ?", (job_id,)).fetchone()
            if row is not None and row[0] not in TERMINAL:
                return False
            db.execute(
                "INSERT INTO jobs (job_id, request, status, accepted_at) VALUES (?, ?, 'accepted', ?) "
                "ON CONFLICT(job_id) DO UPDATE SET request = excluded.request, status = 'accepted', "
                "result = NULL, error = NULL, accepted_at = excluded.accepted_at, finished_at = NULL, "
                "attempts = 1",
                (job_id, request, time.time()),
            )
            return True

    def finish(self, job_id: str, status: str, result: bytes, error: str | None = None) -> None:
        """Record a job's terminal status and its AwaitProofResponse bytes."""
        if status not in TERMINAL:
            raise UsageError(f"{status!r} is not a terminal status ({', '.join(TERMINAL)})")
        with self._tx() as db:
            row = db.execute("SELECT request FROM jobs WHERE job_id = ?", (job_id,)).fetchone()
            if row is None:
                return
            db.execute(
                "UPDATE jobs SET status = ?, result = ?, error = ?, finished_at = ?, checksum = ? "
                "WHERE job_id = ?",
                (status, result, error, time.time(), row_checksum(job_id, row[0], result), job_id),
            )

    def withdraw(self, job_id: str) -> None:
        """Forget an open job the engine refused after all (queue full, shutting down): never accepted."""
        with self._tx() as db:
            db.execute("DELETE FROM jobs WHERE job_id = ? AND status = 'accepted'", (job_id,))

    def retry(self, job_id: str) -> None:
        """A journaled open job is being run again (after a restart)."""
        with self._tx() as db:
            db.execute("UPDATE jobs SET attempts = attempts + 1 WHERE job_id = ?", (job_id,))

    def reopen(self, job_id: str) -> None:
        """A finished job whose stored result failed its check is open again (to be proved anew)."""
        with self._tx() as db:
            db.execute(
                "UPDATE jobs SET status = 'accepted', result = NULL, error = NULL, finished_at = NULL, "
                "checksum = NULL WHERE job_id = ?",
                (job_id,),
            )

    def mark_on_device(self, job_id: str, partition: int) -> None:
        """A partition of the job is going onto a device (a crash from now on is charged to the job)."""
        with self._marks_lock:
            self._marks.execute("INSERT OR IGNORE INTO on_device VALUES (?, ?)", (job_id, partition))

    def unmark_on_device(self, job_id: str, partition: int) -> None:
        with self._marks_lock:
            self._marks.execute(
                "DELETE FROM on_device WHERE job_id = ? AND partition = ?", (job_id, partition)
            )

    def on_device_jobs(self) -> set[str]:
        """Jobs with a partition marked on a device: at start-up, those the last run's end caught there."""
        with self._marks_lock:
            return {row[0] for row in self._marks.execute("SELECT DISTINCT job_id FROM on_device")}

    def clear_marks(self) -> None:
        """Forget every device mark (after recovery has read them, and after a clean drain)."""
        with self._marks_lock:
            self._marks.execute("DELETE FROM on_device")

    def get(self, job_id: str) -> JournalEntry | None:
        with self._lock:
            row = self._db.execute(
                f"SELECT {_COLUMNS} FROM jobs WHERE job_id = ?",
                (job_id,),
            ).fetchone()
        return JournalEntry(*row) if row else None

    def open_jobs(self) -> list[JournalEntry]:
        """Jobs accepted and never finished (a restart interrupted them), oldest first."""
        with self._lock:
            rows = self._db.execute(
                f"SELECT {_COLUMNS} FROM jobs WHERE status = 'accepted' ORDER BY accepted_at"
            ).fetchall()
        return [JournalEntry(*r) for r in rows]

    def unexpected_rows(self) -> list[tuple[str, str]]:
        """(job id, status) of rows whose status is none this journal writes (a hand edit, a newer cuzk)."""
        known = ("accepted", *TERMINAL)
        with self._lock:
            rows = self._db.execute(
                f"SELECT job_id, status FROM jobs WHERE status NOT IN ({', '.join('?' * len(known))})", known
            ).fetchall()
        return [(str(a), str(b)) for a, b in rows]

    def counts(self) -> dict[str, int]:
        with self._lock:
            rows = self._db.execute("SELECT status, COUNT(*) FROM jobs GROUP BY status").fetchall()
        return {status: n for status, n in rows}

    def prune(self, older_than_s: float) -> int:
        """Forget terminal jobs finished more than `older_than_s` ago; returns how many."""
        with self._tx() as db:
            cur = db.execute(
                "DELETE FROM jobs WHERE status != 'accepted' AND finished_at < ?",
                (time.time() - older_than_s,),
            )
            pruned = int(cur.rowcount)
        self.checkpoint()
        return pruned

    def close(self) -> None:
        with self._marks_lock:
            self._marks.close()
        with self._lock:
            with contextlib.suppress(sqlite3.Error):
                self._db.execute("PRAGMA wal_checkpoint(TRUNCATE)")
            self._db.close()
