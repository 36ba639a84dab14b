"""Shared fixtures and the marker gates of the suite.

- settings (`cuzk.config`) are re-read after every test, so a fixture that
  sets a CUZK_ variable calls `config.reload()` and its effect ends with it.
- `rng`: one seeded numpy Generator per test session (CUZK_TEST_SEED overrides
  the seed, which the header prints, so a failure can be replayed).
- `@pytest.mark.gpu` tests run only where the CUDA backend can run.
- `@pytest.mark.large` tests run only with CUZK_LARGE=1 (too big for the
  2-core CI machine).
- Ctrl-C is heard: a runner started in the background of a shell inherits SIGINT
  ignored, and so would every process a test starts; tests of interrupted writes
  need it, so the session puts Python's default handler back.
- `@pytest.mark.npm` tests (real circom and snarkjs) run when the pinned npm
  packages are already in the cache, or with CUZK_NPM=1, which fetches them
  (about 80 MB) first; the default run never downloads.
"""

from __future__ import annotations

import os
from collections.abc import Iterator

import numpy as np
import pytest

from cuzk import config

SEED = int(os.environ.get("CUZK_TEST_SEED", "20261202"))


def pytest_configure(config: pytest.Config) -> None:
    import signal

    if signal.getsignal(signal.SIGINT) == signal.SIG_IGN:
        signal.signal(signal.SIGINT, signal.default_int_handler)


def pytest_report_header(config: pytest.Config) -> str:
    return f"cuzk test seed: {SEED} (set CUZK_TEST_SEED to change)"


@pytest.fixture(autouse=True)
def _fresh_config() -> Iterator[None]:
    """Settings are read once per process; re-read them after each test (its setenv undone)."""
    yield
    config.reload()


@pytest.fixture(scope="session")
def rng() -> np.random.Generator:
    """A session-wide seeded Generator: reproducible for a given seed and test selection."""
    return np.random.default_rng(SEED)


def _cuda_reason() -> str | None:
    from cuzk.backends import cuda_unavailable_reason

    return cuda_unavailable_reason()


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    gpu_items = [item for item in items if item.get_closest_marker("gpu") is not None]
    reason = _cuda_reason() if gpu_items else None
    if reason is not None:
        skip_gpu = pytest.mark.skip(reason=f"needs a CUDA device: {reason}")
        for item in gpu_items:
            item.add_marker(skip_gpu)
    npm_items = [item for item in items if item.get_closest_marker("npm") is not None]
    if npm_items and os.environ.get("CUZK_NPM") != "1":
        from tools.toolchain import Toolchain, default_root

        if not Toolchain(default_root())._installed():
            skip_npm = pytest.mark.skip(reason="fetches ~80 MB of snarkjs/circom from npm: set CUZK_NPM=1")
            for item in npm_items:
                item.add_marker(skip_npm)
    if os.environ.get("CUZK_LARGE") != "1":
        skip_large = pytest.mark.skip(reason="large test: set CUZK_LARGE=1 to run it")
        for item in items:
            if item.get_closest_marker("large") is not None:
                item.add_marker(skip_large)
