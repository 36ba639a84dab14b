"""Numba's on-disk kernel cache, dropped when the code compiled into the kernels changes.

numba decides whether a cached kernel is stale from its own file's timestamp and size only. Our
kernels are built from helpers in other files (the Montgomery product in `_intrinsics`, the field
and curve routines in `_jit_fields`/`_jit_curves`, constants baked in at compile time), so after a
`git pull` or an upgrade that changes a helper but not the kernel's file, numba would load the old
machine code: an old bug kept, or a fix not taken. The install the README gives is editable, so
the caches beside the sources outlive such an update.

At import, a digest of the sources that kernels compile in (this package's modules and the
Poseidon constants) is compared with the one stored beside the caches; if it differs, or none is
stored, every cached kernel of the cuzk package is removed and the digest written. Reading the
~20 files costs well under a millisecond; a digest that matches removes nothing. Caches that numba
keeps elsewhere (its user-wide folder, when the package's folders are read-only) are not touched.
"""

from __future__ import annotations

import contextlib
import hashlib
import os
from collections.abc import Iterable
from pathlib import Path

#: numba's cache files: the index (.nbi) and the compiled code (.nbc) of each kernel.
CACHE_SUFFIXES = (".nbi", ".nbc")
STAMP_NAME = "kernel-sources.sha256"


def kernel_sources(package: Path) -> list[Path]:
    """The files whose code or constants are compiled into kernels defined in other files."""
    return [*sorted((package / "algebra").glob("*.py")), package / "gadgets" / "poseidon_params.py"]


def digest(files: Iterable[Path]) -> str:
    h = hashlib.sha256()
    for f in files:
        h.update(f.name.encode() + b"\0" + f.read_bytes() + b"\0")
    return h.hexdigest()


def purge_if_stale(package: Path, sources: Iterable[Path], stamp: Path) -> int:
    """Remove every numba cache file under `package` when `sources`' digest differs from the one in
    `stamp` (or there is none), then store the digest. Returns how many files were removed."""
    want = digest(sources)
    try:
        if stamp.read_text().strip() == want:
            return 0
    except OSError:
        pass
    removed = 0
    for root, _dirs, files in os.walk(package):
        if os.path.basename(root) != "__pycache__":
            continue
        for name in files:
            if name.endswith(CACHE_SUFFIXES):
                try:
                    os.unlink(os.path.join(root, name))
                    removed += 1
                except FileNotFoundError:  # another process removed it first
                    pass
    stamp.parent.mkdir(parents=True, exist_ok=True)
    tmp = stamp.with_name(f"{stamp.name}.{os.getpid()}")
    tmp.write_text(want + "\n")
    os.replace(tmp, stamp)  # whole or not at all, for a process reading it at the same moment
    return removed


def check_package() -> None:
    """The import-time check for the installed cuzk package; a read-only install is left alone."""
    package = Path(__file__).resolve().parent.parent
    with contextlib.suppress(OSError):  # no write access: numba caches elsewhere, left alone
        purge_if_stale(package, kernel_sources(package), package / "algebra" / "__pycache__" / STAMP_NAME)
