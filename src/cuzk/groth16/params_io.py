"""bellperson's .vk and .params files, memory-mapped, plus cuzk's JSON manifest.

Layout (FORMATS.md section 1), every point uncompressed zcash (G1 96 bytes,
G2 192 bytes), counts u32 big-endian:

    .vk      alpha_g1 beta_g1 beta_g2 gamma_g2 delta_g1 delta_g2 | count | ic...
    .params  the vk, then h, l, a, b_g1, b_g2, each count | points...

Bytes after b_g2 are ignored, as bellperson does. Opening a file reads only the
section headers; each query is decoded when first asked for, so a cold load
touches only what it uses. `checked` adds the subgroup check for files from
elsewhere; trusted local files may skip it. Points at infinity are rejected,
as bellperson's readers do.
"""

from __future__ import annotations

import hashlib
import json
import mmap
import os
import signal
import threading
import time
from collections.abc import Collection, Iterable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any, BinaryIO

import numpy as np

from cuzk import __version__
from cuzk.algebra import encoding
from cuzk.errors import EncodingError, ParamsError
from cuzk.groth16.keys import Parameters, VerifyingKey
from cuzk.paths import clean_stale_temporaries, open_atomic, temp_name, write_atomic

G1_BYTES, G2_BYTES = 96, 192
VK_FIXED = [
    ("alpha_g1", G1_BYTES),
    ("beta_g1", G1_BYTES),
    ("beta_g2", G2_BYTES),
    ("gamma_g2", G2_BYTES),
    ("delta_g1", G1_BYTES),
    ("delta_g2", G2_BYTES),
]
QUERIES = [("h", G1_BYTES), ("l", G1_BYTES), ("a", G1_BYTES), ("b_g1", G1_BYTES), ("b_g2", G2_BYTES)]
MANIFEST_FORMAT = "cuzk-groth16-params"
MANIFEST_VERSION = 1


@dataclass(frozen=True)
class Section:
    name: str
    offset: int  # first point byte
    count: int
    point_bytes: int

    @property
    def end(self) -> int:
        return self.offset + self.count * self.point_bytes


def _decode(name: str, raw: np.ndarray, point_bytes: int, checked: bool, source: str) -> np.ndarray:
    decode = encoding.decode_g1 if point_bytes == G1_BYTES else encoding.decode_g2
    try:
        return decode(raw, compressed=False, check_subgroup=checked, allow_infinity=False)
    except EncodingError as exc:
        raise ParamsError(f"{source}: {name}: {exc}") from exc


class _Layout:
    """Section offsets of a vk or params buffer, read from the count headers only."""

    def __init__(self, buf: memoryview | bytes, source: str, with_queries: bool) -> None:
        self.buf, self.source = buf, source
        self.sections: dict[str, Section] = {}
        pos = 0
        for name, size in VK_FIXED:
            self.sections[name] = Section(name, pos, 1, size)
            pos += size
        pos = self._counted("ic", pos, G1_BYTES)
        if with_queries:
            for name, size in QUERIES:
                pos = self._counted(name, pos, size)
        self.end = pos

    def _counted(self, name: str, pos: int, size: int) -> int:
        if pos + 4 > len(self.buf):
            raise ParamsError(f"{self.source}: truncated before the {name} count at byte {pos}")
        count = int.from_bytes(bytes(self.buf[pos : pos + 4]), "big")
        sec = Section(name, pos + 4, count, size)
        if sec.end > len(self.buf):
            raise ParamsError(
                f"{self.source}: truncated: {name} declares {count} points ({count * size} bytes) "
                f"but only {len(self.buf) - sec.offset} bytes remain"
            )
        self.sections[name] = sec
        return sec.end

    def raw(self, name: str) -> np.ndarray:
        sec = self.sections[name]
        arr = np.frombuffer(self.buf, dtype=np.uint8, count=sec.count * sec.point_bytes, offset=sec.offset)
        return arr.reshape(sec.count, sec.point_bytes)

    def decode(self, name: str, checked: bool) -> np.ndarray:
        sec = self.sections[name]
        return _decode(name, self.raw(name), sec.point_bytes, checked, self.source)

    def vk(self, checked: bool) -> VerifyingKey:
        parts = {name: self.decode(name, checked) for name, _ in VK_FIXED}
        return VerifyingKey(ic=self.decode("ic", checked), **parts)


class ParamsFile:
    """A memory-mapped .params file; queries decode on first use."""

    def __init__(self, path: str | os.PathLike, *, checked: bool = True) -> None:
        self.path = Path(path)
        self.checked = checked
        try:
            with open(self.path, "rb") as fh:
                size = os.fstat(fh.fileno()).st_size
                if size == 0:
                    raise ParamsError(f"{self.path}: empty file")
                self._map = mmap.mmap(fh.fileno(), 0, access=mmap.ACCESS_READ)
        except OSError as exc:
            raise ParamsError(f"cannot open parameters {self.path}: {exc.strerror or exc}") from exc
        self._layout = _Layout(memoryview(self._map), str(self.path), with_queries=True)
        self._cache: dict[str, np.ndarray] = {}

    def counts(self) -> dict[str, int]:
        return {name: sec.count for name, sec in self._layout.sections.items()}

    def query(self, name: str) -> np.ndarray:
        if name not in dict(QUERIES):
            raise KeyError(f"unknown query {name!r}")
        if name not in self._cache:
            self._cache[name] = self._layout.decode(name, self.checked)
        return self._cache[name]

    def vk(self) -> VerifyingKey:
        return self._layout.vk(self.checked)

    def parameters(self) -> Parameters:
        q = self.query
        return Parameters(vk=self.vk(), h=q("h"), l=q("l"), a=q("a"), b_g1=q("b_g1"), b_g2=q("b_g2"))


def read_vk(path: str | os.PathLike, *, checked: bool = True) -> VerifyingKey:
    try:
        data = Path(path).read_bytes()
    except OSError as exc:
        raise ParamsError(f"cannot read verifying key {path}: {exc.strerror or exc}") from exc
    return vk_from_bytes(data, checked=checked, source=str(path))


def vk_from_bytes(data: bytes, *, checked: bool = True, source: str = "vk") -> VerifyingKey:
    layout = _Layout(memoryview(data), source, with_queries=False)
    if layout.end != len(data):
        raise ParamsError(f"{source}: {len(data) - layout.end} unexpected bytes after the ic points")
    return layout.vk(checked)


def _encode(points: np.ndarray) -> bytes:
    enc = encoding.encode_g1 if points.ndim == 3 else encoding.encode_g2
    return enc(points, compressed=False).tobytes()


def _count(points: np.ndarray) -> bytes:
    return int(points.shape[0]).to_bytes(4, "big")


def vk_chunks(vk: VerifyingKey) -> Iterable[bytes]:
    for name, _ in VK_FIXED:
        yield _encode(getattr(vk, name))
    yield _count(vk.ic)
    yield _encode(vk.ic)


def vk_to_bytes(vk: VerifyingKey) -> bytes:
    return b"".join(vk_chunks(vk))


def _params_chunks(params: Parameters) -> Iterable[bytes]:
    yield from vk_chunks(params.vk)
    for name, _ in QUERIES:
        pts = getattr(params, name)
        yield _count(pts)
        yield _encode(pts)


def _write_chunks(fh: BinaryIO, chunks: Iterable[bytes]) -> str:
    digest = hashlib.sha256()
    for chunk in chunks:
        fh.write(chunk)
        digest.update(chunk)
    return digest.hexdigest()


def write_params(params: Parameters, path: str | os.PathLike) -> str:
    """Write a .params file; returns its sha256 hex digest."""
    with open_atomic(path) as fh:
        return _write_chunks(fh, _params_chunks(params))


def write_vk(vk: VerifyingKey, path: str | os.PathLike) -> str:
    data = vk_to_bytes(vk)
    write_atomic(path, data)
    return hashlib.sha256(data).hexdigest()


def sha256_file(path: str | os.PathLike) -> str:
    digest = hashlib.sha256()
    with open(path, "rb") as fh:
        while chunk := fh.read(1 << 22):
            digest.update(chunk)
    return digest.hexdigest()


# --- a directory of parameters with its manifest ------------------------------------------


def save(params: Parameters, directory: str | os.PathLike, name: str, meta: dict) -> Path:
    """Write DIR/NAME.params, DIR/NAME.vk and DIR/NAME.json as one set; returns the manifest path.

    All three are written in full under hidden names first, then renamed into place with the
    manifest last, SIGINT and SIGTERM held back for those three renames: an error or an
    interrupt while writing leaves the old set as it was, and a reader that checks the
    manifest's sha256 (`verify_files`) never accepts a mixed set, even after a SIGKILL.
    """
    sizes = {q: int(getattr(params, q).shape[0]) for q, _ in QUERIES} | {"ic": params.vk.num_inputs}
    return _save_set(_params_chunks(params), params.vk, sizes, directory, name, meta)


def _save_set(
    params_chunks: Iterable[bytes],
    vk: VerifyingKey,
    sizes: dict[str, int],
    directory: str | os.PathLike,
    name: str,
    meta: dict,
) -> Path:
    out = Path(directory)
    out.mkdir(parents=True, exist_ok=True)
    staged: list[tuple[Path, Path]] = []
    try:
        files = {}
        for suffix, chunks in ((".params", params_chunks), (".vk", vk_chunks(vk))):
            target = out / f"{name}{suffix}"
            sha, size = _stage(target, chunks, staged)
            files[target.name] = {"sha256": sha, "bytes": size}
        manifest = {
            "format": MANIFEST_FORMAT,
            "version": MANIFEST_VERSION,
            "circuit": name,
            **meta,
            "sizes": sizes,
            "files": files,
            "setup": "local random toxic waste from the OS CSPRNG; a test setup, not a ceremony",
            "created": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
            "cuzk_version": __version__,
        }
        path = out / f"{name}.json"
        _stage(path, [(json.dumps(manifest, indent=2) + "\n").encode()], staged)
        with _interrupts_held():
            for tmp, target in staged:
                os.replace(tmp, target)
    except BaseException:
        for tmp, _ in staged:
            tmp.unlink(missing_ok=True)
        raise
    return path


def _stage(target: Path, chunks: Iterable[bytes], staged: list[tuple[Path, Path]]) -> tuple[str, int]:
    """Write `chunks` to a durable hidden sibling of `target`, recorded in `staged`; (sha256, size)."""
    clean_stale_temporaries(target)
    tmp = temp_name(target)
    staged.append((tmp, target))
    with open(tmp, "wb") as fh:
        sha = _write_chunks(fh, chunks)
        fh.flush()
        os.fsync(fh.fileno())
        size = fh.tell()
    return sha, size


@contextmanager
def _interrupts_held() -> Iterator[None]:
    """Defer SIGINT and SIGTERM over a few renames, then deliver them (main thread only)."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    caught: list[int] = []
    sigs = (signal.SIGINT, signal.SIGTERM)
    old = {sig: signal.signal(sig, lambda signum, _frame: caught.append(signum)) for sig in sigs}
    try:
        yield
    finally:
        for sig, handler in old.items():
            signal.signal(sig, handler)
        for signum in caught:
            signal.raise_signal(signum)


def read_manifest(directory: str | os.PathLike, name: str) -> dict:
    path = Path(directory) / f"{name}.json"
    try:
        manifest = json.loads(path.read_text())
    except FileNotFoundError:
        raise ParamsError(
            f"no manifest {path} (run `cuzk setup --circuit {name} --out {directory}`)"
        ) from None
    except (OSError, ValueError) as exc:
        raise ParamsError(f"unreadable manifest {path}: {exc}") from exc
    if (
        not isinstance(manifest, dict)
        or manifest.get("format") != MANIFEST_FORMAT
        or manifest.get("version") != MANIFEST_VERSION
    ):
        raise ParamsError(f"{path} is not a version-{MANIFEST_VERSION} {MANIFEST_FORMAT} manifest")
    files = manifest.get("files")
    if not isinstance(files, dict) or not all(isinstance(v, dict) for v in files.values()):
        raise ParamsError(f"{path}: 'files' must map each file name to its sha256 and size")
    return manifest


def verify_files(directory: str | os.PathLike, manifest: dict) -> None:
    """Raise ParamsError when a file's sha256 or size differs from the manifest."""
    for fname, info in manifest["files"].items():
        path = Path(directory) / fname
        if not path.exists():
            raise ParamsError(f"{path} is listed in the manifest but missing")
        if path.stat().st_size != info.get("bytes"):
            raise ParamsError(
                f"{path}: size {path.stat().st_size} differs from the manifest's {info.get('bytes')}"
            )
        if sha256_file(path) != info.get("sha256"):
            raise ParamsError(f"{path}: sha256 differs from the manifest (corrupted or replaced file)")


# --- real-size sets: straight between the file and the backend's memory -----------------------

#: Points per read of `load_rows` (G1: 96 MiB) and how many reads are in flight.
LOAD_CHUNK_POINTS = 1 << 20
LOAD_READERS = 8
QUERY_GROUP = {"h": "g1", "l": "g1", "a": "g1", "b_g1": "g1", "b_g2": "g2"}


@dataclass
class LoadStats:
    """What `load_rows` did: bytes read, seconds, and the rate (for logs and benchmarks)."""

    bytes_read: int = 0
    seconds: float = 0.0
    checked: bool = False

    @property
    def gb_per_s(self) -> float:
        return self.bytes_read / self.seconds / 1e9 if self.seconds else 0.0


def _pread_into(fd: int, buf: np.ndarray, offset: int) -> None:
    view = buf.data.cast("B")
    done = 0
    while done < len(view):
        got = os.preadv(fd, [view[done:]], offset + done)
        if got <= 0:
            raise ParamsError(f"short read at byte {offset + done}")
        done += got


def load_rows(
    path: str | os.PathLike,
    backend: Any,
    *,
    checked: bool,
    sha256: str | None = None,
    progress: Any = None,
    stats: LoadStats | None = None,
    chunk_points: int = LOAD_CHUNK_POINTS,
    readers: int = LOAD_READERS,
    host: Collection[str] = (),
) -> tuple[VerifyingKey, dict[str, Any]]:
    """The vk and the five queries of a .params file as affine rows in `backend`'s memory, those
    named in `host` as host rows instead (decoded on the backend a chunk at a time through one
    staging buffer, then copied out: a G2 query kept in host memory, msm.g2_on cpu or stream,
    never occupies the card whole, so wpost-32g's set loads on an 80 GB GPU with room to spare).

    Reads run `readers` at a time (positioned reads into reused buffers, no per-point Python);
    each chunk is decoded where the backend computes (Backend.import_points: flags, canonical
    coordinates and the curve equation always; the subgroup test when `checked`). With
    `sha256` the file's digest is computed from the same reads, in order on one more thread,
    and must match (a manifest's). Unchecked is the trust setting for files whose bytes are
    vouched for that way: see docs/DAEMON.md. All or nothing: an error frees what was made.
    """
    from concurrent.futures import Future, ThreadPoolExecutor

    say = progress or (lambda _m: None)
    st = stats if stats is not None else LoadStats()
    st.checked = checked
    t0 = time.perf_counter()
    pf = ParamsFile(path, checked=checked)
    vk = pf.vk()
    sections = pf._layout.sections
    file_size = len(pf._map)
    # (query, lo, hi, point bytes, section offset, bytes of the file before this chunk to hash first)
    jobs: list[tuple[str, int, int, int, int, tuple[int, int]]] = []
    pos = 0
    for name, size in QUERIES:
        sec = sections[name]
        for lo in range(0, max(sec.count, 1), chunk_points):
            hi = min(sec.count, lo + chunk_points)
            start = sec.offset + lo * size
            jobs.append((name, lo, hi, size, sec.offset, (pos, start)))
            pos = start + (hi - lo) * size
    digest = hashlib.sha256() if sha256 is not None else None
    rows: dict[str, Any] = {}
    unknown = set(host) - set(QUERY_GROUP)
    if unknown:
        raise ValueError(f"no such queries to keep on the host: {sorted(unknown)}")
    staging: dict[str, Any] = {}  # group -> one chunk's rows on the backend, for the host queries
    nbuf = readers + 2
    buffers = [np.empty(chunk_points * G2_BYTES, dtype=np.uint8) for _ in range(nbuf)]
    hashed: list[Future | None] = [None] * nbuf
    free = list(range(nbuf))
    fd = os.open(path, os.O_RDONLY)
    try:
        with (
            ThreadPoolExecutor(max_workers=readers, thread_name_prefix="params-read") as pool,
            ThreadPoolExecutor(max_workers=1, thread_name_prefix="params-sha256") as hasher,
        ):

            def submit(j: int) -> tuple[Future, int]:
                _, lo, hi, size, off, _gap = jobs[j]
                b = free.pop()
                if hashed[b] is not None:
                    hashed[b].result()  # type: ignore[union-attr]  # the hash still reads this buffer
                view = buffers[b][: (hi - lo) * size]
                return pool.submit(_pread_into, fd, view, off + lo * size), b

            def hash_range(lo: int, hi: int) -> None:
                if digest is not None and hi > lo:
                    gap = np.empty(hi - lo, dtype=np.uint8)
                    _pread_into(fd, gap, lo)
                    digest.update(gap.data)

            pending = [submit(j) for j in range(min(readers, len(jobs)))]
            done_bytes = 0
            for j, (name, lo, hi, size, _off, gap) in enumerate(jobs):
                fut, b = pending.pop(0)  # pending holds jobs j .. j + readers - 1
                fut.result()
                group = QUERY_GROUP[name]
                if name not in rows:
                    if name in host:  # affine rows: as many 64-bit words as the encoding's bytes / 8
                        rows[name] = np.empty((sections[name].count, size // 8), dtype=np.uint64)
                        if group not in staging:
                            staging[group] = backend.empty_rows(chunk_points, group)
                    else:
                        rows[name] = backend.empty_rows(sections[name].count, group)
                raw = buffers[b][: (hi - lo) * size].reshape(hi - lo, size)
                if digest is not None:
                    hasher.submit(hash_range, *gap)
                    hashed[b] = hasher.submit(digest.update, raw.data)
                if hi > lo:
                    out = staging[group][: hi - lo] if name in host else rows[name][lo:hi]
                    try:
                        backend.import_points(
                            raw, group, check_subgroup=checked, out=out, what=f"{path}: {name}"
                        )
                    except EncodingError as exc:
                        raise ParamsError(_shift_index(str(exc), lo)) from exc
                    if name in host:
                        rows[name][lo:hi] = backend.to_host(out)
                free.append(b)
                if j + readers < len(jobs):
                    pending.append(submit(j + readers))
                done_bytes += (hi - lo) * size
                if hi == sections[name].count:
                    say(f"{name}: {hi} points loaded ({done_bytes / 2**30:.1f} GiB so far)")
            if digest is not None:
                hasher.submit(hash_range, pos, file_size).result()
            backend.synchronize()
    except BaseException:
        rows.clear()
        raise
    finally:
        staging.clear()
        os.close(fd)
    if digest is not None and digest.hexdigest() != sha256:
        rows.clear()
        raise ParamsError(f"{path}: sha256 differs from the manifest (corrupted or replaced file)")
    st.bytes_read = file_size
    st.seconds = time.perf_counter() - t0
    return vk, rows


def _shift_index(message: str, lo: int) -> str:
    """A chunk's error names the point within the chunk; name it within the query."""
    import re

    if lo == 0:
        return message
    return re.sub(r"point (\d+)", lambda m: f"point {int(m.group(1)) + lo}", message, count=1)


def save_rows(
    vk: VerifyingKey,
    rows: dict[str, Any],
    backend: Any,
    directory: str | os.PathLike,
    name: str,
    meta: dict,
    *,
    chunk_points: int = LOAD_CHUNK_POINTS,
) -> Path:
    """`save` for queries held as rows in `backend`'s memory: each chunk is encoded there
    (Backend.export_points) and written, so no host copy of the whole set is made."""

    def query_chunks() -> Iterable[bytes]:
        yield from vk_chunks(vk)
        for q, _ in QUERIES:
            r = rows[q]
            yield _count(r)
            for lo in range(0, r.shape[0], chunk_points):
                yield backend.export_points(r[lo : lo + chunk_points], QUERY_GROUP[q]).tobytes()

    sizes = {q: int(rows[q].shape[0]) for q, _ in QUERIES} | {"ic": vk.num_inputs}
    return _save_set(query_chunks(), vk, sizes, directory, name, meta)
