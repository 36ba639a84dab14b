"""numba's kernel cache is dropped when a helper compiled into kernels changes (numba itself
checks only the kernel's own file), and kept when nothing changed."""

from __future__ import annotations

import os
from pathlib import Path

from cuzk.algebra import _kernel_cache as kc


def _tree(tmp_path: Path) -> tuple[Path, list[Path], Path, list[Path]]:
    pkg = tmp_path / "cuzk"
    (pkg / "algebra" / "__pycache__").mkdir(parents=True)
    (pkg / "backends" / "__pycache__").mkdir(parents=True)
    helper = pkg / "algebra" / "_intrinsics.py"
    helper.write_text("def mul(): return 1\n")
    (pkg / "backends" / "msm.py").write_text("# a kernel that inlines mul\n")
    caches = [pkg / "backends" / "__pycache__" / f"msm.k-10.py311.{i}.nb{c}" for i in (1, 2) for c in "ic"]
    keep = pkg / "backends" / "__pycache__" / "msm.cpython-311.pyc"  # Python's own cache stays
    keep.write_bytes(b"pyc")
    return pkg, [helper], pkg / "algebra" / "__pycache__" / kc.STAMP_NAME, caches


def _write(files: list[Path]) -> None:
    for f in files:
        f.write_bytes(b"compiled")


def test_a_changed_helper_drops_the_kernels_compiled_from_it(tmp_path: Path) -> None:
    pkg, sources, stamp, caches = _tree(tmp_path)
    _write(caches)
    assert kc.purge_if_stale(pkg, sources, stamp) == 4  # no digest yet: caches of unknown origin go
    assert not any(c.exists() for c in caches) and stamp.read_text().strip() == kc.digest(sources)
    _write(caches)
    assert kc.purge_if_stale(pkg, sources, stamp) == 0  # nothing changed: every kernel kept
    assert all(c.exists() for c in caches)
    sources[0].write_text("def mul(): return 2  # a fix\n")
    assert kc.purge_if_stale(pkg, sources, stamp) == 4
    assert not any(c.exists() for c in caches)
    assert (pkg / "backends" / "__pycache__" / "msm.cpython-311.pyc").exists()
    assert not [p for p in stamp.parent.iterdir() if p.name != kc.STAMP_NAME]  # no temporary left


def test_the_package_digest_is_stored_on_import() -> None:
    import cuzk.algebra  # noqa: F401 - the import runs the check

    package = Path(kc.__file__).resolve().parent.parent
    stamp = package / "algebra" / "__pycache__" / kc.STAMP_NAME
    if os.access(stamp.parent, os.W_OK):
        assert stamp.read_text().strip() == kc.digest(kc.kernel_sources(package))
    sources = kc.kernel_sources(package)
    assert package / "algebra" / "_intrinsics.py" in sources and all(s.exists() for s in sources)
