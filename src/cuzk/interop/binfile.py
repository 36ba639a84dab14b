"""The iden3 binary container shared by .r1cs, .wtns and .zkey, memory-mapped.

Layout (FORMATS.md section 2): 4-byte magic || u32 LE version || u32 LE section
count; then per section u32 LE type || u64 LE size || body. Sections may come in
any order. A file is mapped once, privately (copy-on-write), so every section
body is a zero-copy numpy view: a multi-GiB key costs page faults, not copies,
and nothing we do can write through to the file. Section bodies start at
arbitrary offsets (headers are 12 bytes), so views are often not 8-byte
aligned; numpy and numba handle that.

Every defect (wrong magic, version, truncation, a section repeated or missing,
a size that disagrees with the header) raises InteropError naming the file.
"""

from __future__ import annotations

import mmap
import os
import struct
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import BinaryIO

import numpy as np
from numpy.typing import DTypeLike

from cuzk.errors import InteropError
from cuzk.paths import open_atomic

_HEADER = struct.Struct("<4sII")
_SECTION = struct.Struct("<IQ")


@dataclass(frozen=True)
class Section:
    type: int
    offset: int  # of the body, from the start of the file
    size: int


class BinFile:
    """A mapped container; `kind` names the format in messages ("zkey", "r1cs", "wtns")."""

    def __init__(self, path: str | os.PathLike[str], magic: bytes, versions: Iterable[int]) -> None:
        self.path = Path(path)
        self.kind = magic.decode()
        self._mm = _map(self.path, self.kind)
        self.size = len(self._mm)
        if self.size < _HEADER.size:
            raise self.error(f"{self.size} bytes is shorter than the {_HEADER.size}-byte file header")
        found, self.version, count = _HEADER.unpack_from(self._mm, 0)
        if found != magic:
            raise self.error(f"bad magic {found!r}: this is not a .{self.kind} file (expected {magic!r})")
        allowed = tuple(versions)
        if self.version not in allowed:
            want = " or ".join(str(v) for v in allowed)
            raise self.error(f"unsupported .{self.kind} version {self.version} (cuzk reads version {want})")
        self.sections: dict[int, list[Section]] = {}
        pos = _HEADER.size
        for i in range(count):
            if pos + _SECTION.size > self.size:
                raise self.error(
                    f"truncated: the header announces {count} sections, the file ends in header {i}"
                )
            kind, size = _SECTION.unpack_from(self._mm, pos)
            body = pos + _SECTION.size
            if body + size > self.size:
                raise self.error(
                    f"truncated: section {kind} claims {size} bytes at offset {body}, "
                    f"but the file ends at {self.size}"
                )
            self.sections.setdefault(kind, []).append(Section(kind, body, size))
            pos = body + size

    def error(self, message: str) -> InteropError:
        return InteropError(f"{self.path}: {message}")

    # --- sections -------------------------------------------------------------------
    def section(self, kind: int, what: str, *, size: int | None = None) -> Section:
        """The one section of this type; `size`, when given, is the size the header implies."""
        found = self.sections.get(kind)
        if not found:
            raise self.error(f"section {kind} ({what}) is missing")
        if len(found) > 1:
            raise self.error(f"section {kind} ({what}) appears {len(found)} times")
        sec = found[0]
        if size is not None and sec.size != size:
            raise self.error(f"section {kind} ({what}) has {sec.size} bytes; the header implies {size}")
        return sec

    def has(self, kind: int) -> bool:
        return kind in self.sections

    # --- reads ------------------------------------------------------------------------
    def reader(self, sec: Section) -> SectionReader:
        return SectionReader(self, sec)

    def view(self, offset: int, dtype: DTypeLike, count: int) -> np.ndarray:
        """`count` items of `dtype` at `offset`: a writable (copy-on-write) zero-copy view."""
        dt = np.dtype(dtype)
        if offset < 0 or offset + count * dt.itemsize > self.size:
            raise self.error(f"read of {count * dt.itemsize} bytes at {offset} runs past the end")
        return np.frombuffer(self._mm, dtype=dt, count=count, offset=offset)


class SectionReader:
    """Sequential little-endian reads inside one section, with bounds checks."""

    def __init__(self, f: BinFile, sec: Section) -> None:
        self.f, self.sec, self.pos = f, sec, sec.offset
        self.end = sec.offset + sec.size

    def _take(self, n: int, what: str) -> int:
        if self.pos + n > self.end:
            raise self.f.error(f"section {self.sec.type} ends before its {what}")
        at = self.pos
        self.pos += n
        return at

    def u32(self, what: str) -> int:
        return int(struct.unpack_from("<I", self.f._mm, self._take(4, what))[0])

    def u64(self, what: str) -> int:
        return int(struct.unpack_from("<Q", self.f._mm, self._take(8, what))[0])

    def bigint(self, nbytes: int, what: str) -> int:
        at = self._take(nbytes, what)
        return int.from_bytes(self.f._mm[at : at + nbytes], "little")

    def array(self, dtype: np.dtype | str, count: int, what: str) -> np.ndarray:
        dt = np.dtype(dtype)
        return self.f.view(self._take(count * dt.itemsize, what), dt, count)

    @property
    def remaining(self) -> int:
        return self.end - self.pos


def _map(path: Path, kind: str) -> mmap.mmap:
    try:
        with open(path, "rb") as fh:
            size = os.fstat(fh.fileno()).st_size
            if size == 0:
                raise InteropError(f"{path}: the file is empty (expected a .{kind} file)")
            return mmap.mmap(fh.fileno(), 0, access=mmap.ACCESS_COPY)
    except OSError as exc:
        raise InteropError(f"{path}: cannot read: {exc.strerror or exc}") from exc


class BinFileWriter:
    """Writes a container section by section; buffers (numpy arrays, bytes) go out without copies.

    The bytes go through `cuzk.paths.open_atomic`: `path` is replaced only when every
    announced section is written, so a failure leaves an existing file as it was and no
    half-written file that looks like a key.
    """

    def __init__(self, path: str | os.PathLike[str], magic: bytes, version: int, sections: int) -> None:
        self.path = Path(path)
        self._planned = sections
        self._written = 0
        self._target = open_atomic(self.path)
        try:
            self._fh: BinaryIO = self._target.__enter__()
        except OSError as exc:
            raise InteropError(f"{self.path}: cannot write: {exc.strerror or exc}") from exc
        self._write(_HEADER.pack(magic, version, sections))

    def _write(self, data: bytes | memoryview) -> None:
        """One write; on failure the partial file goes and the error names the target."""
        try:
            self._fh.write(data)
        except OSError as exc:
            self.abort()
            raise InteropError(f"{self.path}: cannot write: {exc.strerror or exc}") from exc

    def section(self, kind: int, *chunks: bytes | np.ndarray) -> None:
        views = [np.ascontiguousarray(c).data.cast("B") if isinstance(c, np.ndarray) else c for c in chunks]
        self._write(_SECTION.pack(kind, sum(len(v) for v in views)))
        for v in views:
            self._write(v)
        self._written += 1

    def close(self) -> None:
        if self._written != self._planned:
            raise InteropError(f"{self.path}: wrote {self._written} sections, announced {self._planned}")
        try:
            self._target.__exit__(None, None, None)  # closes, then renames into place
        except OSError as exc:
            raise InteropError(f"{self.path}: cannot write: {exc.strerror or exc}") from exc

    def abort(self) -> None:
        """Drop what was written (idempotent); an existing file at `path` stays as it was."""
        reason = InteropError(f"{self.path}: write abandoned")
        self._target.__exit__(type(reason), reason, None)

    def __enter__(self) -> BinFileWriter:
        return self

    def __exit__(self, *exc: object) -> None:
        if exc[0] is not None:
            self.abort()
            return
        try:
            self.close()
        except BaseException:
            self.abort()
            raise


def u32(value: int) -> bytes:
    return struct.pack("<I", value)


def u64(value: int) -> bytes:
    return struct.pack("<Q", value)


def bigint(value: int, nbytes: int) -> bytes:
    return value.to_bytes(nbytes, "little")
