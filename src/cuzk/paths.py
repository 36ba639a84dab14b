"""Where cuzk keeps files it makes: one cache root, overridable for CI and tests."""

from __future__ import annotations

import os
from pathlib import Path


def cache_dir(*parts: str) -> Path:
    """CUZK_CACHE_DIR, else the user cache dir (e.g. ~/.cache/cuzk); created on demand."""
    root = os.environ.get("CUZK_CACHE_DIR")
    if root:
        base = Path(root)
    else:
        from platformdirs import user_cache_dir

        base = Path(user_cache_dir("cuzk", appauthor=False))
    path = base.joinpath(*parts)
    path.mkdir(parents=True, exist_ok=True)
    return path
