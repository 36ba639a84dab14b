"""Settings from the environment, read once into one small frozen dataclass per component.

Every environment variable cuzk reads is read here and nowhere else (a test greps src/ for it):

    variable                    field                          value
    CUZK_CACHE_DIR              cache.root                     a folder; default: the user cache dir
    CUZK_TIMING                 timing.stderr                  flag: a CUZK_TIMING line per finished span
    CUZK_BACKEND                backend.name                   auto | cpu | cuda (checked by get_backend)
    CUZK_MSM_CHUNKS             cuda.msm_chunks                a positive integer
    CUZK_PROFILE_KERNELS        cuda.profile_kernels           flag: CUDA events around each launch
    CUZK_PINNED_STAGING         cuda.pinned_staging            flag: page-locked upload staging (default on)
    CUZK_DEVICE_MEMORY_BUDGET   cuda.device_memory_budget      a size ('80GiB', '512MiB', bytes: cuzk.units)
    CUZK_NPM_CACHE              npm.cache                      a folder for the test toolchain (tools/)
    CUZK_ADDR                   client.addr                    the daemon `cuzk client` talks to
    CUZK_TOKEN                  client.token                   its bearer token (kept out of repr)
    CUZK_DEBUG                  debug.traceback                flag: the CLI prints tracebacks of errors

Flags take 1/true/yes/on or 0/false/no/off in any case; empty is unset. A value that does not
parse is a UsageError naming the variable, raised by the first `get()`: bad settings fail at once,
not deep inside a proof. (`CXX`, which the CUDA host emulator honours, is the build tools'
convention, not a cuzk setting, and stays there.)

`get()` reads the process environment on first use and then always returns the same `Config`
(thread-safe). `reload()` reads again; `reload(mapping)` installs settings read from an explicit
mapping instead, for tests. Worker processes read their own environment when they start.
"""

from __future__ import annotations

import os
import threading
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path

from cuzk.errors import UsageError

_TRUE = frozenset({"1", "true", "yes", "on"})
_FALSE = frozenset({"0", "false", "no", "off"})


def _text(env: Mapping[str, str], name: str) -> str | None:
    value = env.get(name, "").strip()
    return value or None


def _flag(env: Mapping[str, str], name: str, default: bool = False) -> bool:
    value = _text(env, name)
    if value is None:
        return default
    value = value.lower()
    if value in _TRUE:
        return True
    if value in _FALSE:
        return False
    raise UsageError(f"{name} must be a flag (1/true/yes/on or 0/false/no/off), got {env[name]!r}")


def _positive_int(env: Mapping[str, str], name: str) -> int | None:
    value = _text(env, name)
    if value is None:
        return None
    try:
        number = int(value)
    except ValueError:
        number = 0
    if number < 1:
        raise UsageError(f"{name} must be a positive integer, got {value!r}")
    return number


def _default_cache_root() -> Path:
    from platformdirs import user_cache_dir

    return Path(user_cache_dir("cuzk", appauthor=False))


@dataclass(frozen=True)
class CacheConfig:
    """Where cuzk keeps what it makes (recordings, parameters, the npm toolchain)."""

    root: Path = field(default_factory=_default_cache_root)


@dataclass(frozen=True)
class TimingConfig:
    """Whether every finished span is echoed to stderr as a CUZK_TIMING line."""

    stderr: bool = False


@dataclass(frozen=True)
class BackendChoice:
    """The backend `get_backend()` picks when the caller names none (lower case, unchecked here)."""

    name: str = "auto"


@dataclass(frozen=True)
class CudaConfig:
    """CUDA backend defaults; the backend's keyword arguments override each."""

    msm_chunks: int | None = None  # scalar upload chunks per MSM; None: the cost model decides
    profile_kernels: bool = False
    pinned_staging: bool = True  # off, an MSM beside a pageable upload ran 8.7x slower (BENCHMARKS)
    device_memory_budget: str | None = None  # raw text; the backend reads it (cuzk.units)


@dataclass(frozen=True)
class NpmConfig:
    """Where the pinned circom/snarkjs toolchain of the tests lives; None: under the cache root."""

    cache: Path | None = None


@dataclass(frozen=True)
class ClientConfig:
    """Defaults for `cuzk client`: the daemon's address (None: the daemon's default) and token."""

    addr: str | None = None
    token: str = field(default="", repr=False)


@dataclass(frozen=True)
class DebugConfig:
    """`CUZK_DEBUG=1`: the CLI shows the traceback behind an error (as `--debug` does)."""

    traceback: bool = False


@dataclass(frozen=True)
class Config:
    """All settings, one dataclass per component."""

    cache: CacheConfig = field(default_factory=CacheConfig)
    timing: TimingConfig = field(default_factory=TimingConfig)
    backend: BackendChoice = field(default_factory=BackendChoice)
    cuda: CudaConfig = field(default_factory=CudaConfig)
    npm: NpmConfig = field(default_factory=NpmConfig)
    client: ClientConfig = field(default_factory=ClientConfig)
    debug: DebugConfig = field(default_factory=DebugConfig)

    @classmethod
    def from_env(cls, env: Mapping[str, str]) -> Config:
        """Parse `env` (validating every value); nothing is cached."""
        cache_root = _text(env, "CUZK_CACHE_DIR")
        npm_cache = _text(env, "CUZK_NPM_CACHE")
        return cls(
            cache=CacheConfig(Path(cache_root)) if cache_root else CacheConfig(),
            timing=TimingConfig(stderr=_flag(env, "CUZK_TIMING")),
            backend=BackendChoice((_text(env, "CUZK_BACKEND") or "auto").lower()),
            cuda=CudaConfig(
                msm_chunks=_positive_int(env, "CUZK_MSM_CHUNKS"),
                profile_kernels=_flag(env, "CUZK_PROFILE_KERNELS"),
                pinned_staging=_flag(env, "CUZK_PINNED_STAGING", default=True),
                device_memory_budget=_text(env, "CUZK_DEVICE_MEMORY_BUDGET"),
            ),
            npm=NpmConfig(Path(npm_cache) if npm_cache else None),
            client=ClientConfig(addr=_text(env, "CUZK_ADDR"), token=_text(env, "CUZK_TOKEN") or ""),
            debug=DebugConfig(traceback=_flag(env, "CUZK_DEBUG")),
        )


_lock = threading.Lock()
_current: Config | None = None


def get() -> Config:
    """The settings of this process, read from os.environ on first use."""
    current = _current
    if current is None:
        with _lock:
            current = _current if _current is not None else _install(os.environ)
    return current


def reload(env: Mapping[str, str] | None = None) -> Config:
    """Read the settings again, from `env` if given (tests), else from os.environ."""
    with _lock:
        return _install(os.environ if env is None else env)


def _install(env: Mapping[str, str]) -> Config:
    global _current
    _current = Config.from_env(env)
    return _current


def child_environment(overrides: Mapping[str, str]) -> dict[str, str]:
    """The environment for a process cuzk starts (a synthesis worker): this process's, with
    `overrides` (its numba thread count, its cache root, its import path)."""
    return {**os.environ, **overrides}
