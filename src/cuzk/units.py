"""Sizes and durations as people write them: one grammar, the reference daemon's, for every setting.

    size       an integer followed by GiB, MiB (powers of 1024), GB or MB (powers of 1000), or a
               plain byte count: "14GiB", "512MiB", "5GB", "100MB", "4096", 4096
    duration   an integer followed by m (minutes) or s (seconds), or plain seconds:
               "5m", "30s", "2", 2, 0.5

Units are read in any case ("14gib" is 14 GiB), with spaces around the number allowed. This is
the grammar of the reference daemon's config (REFERENCE_API.md, "Size strings"); anything else
("1.5GiB", "80G", "2KiB", "250ms", "-1") is refused with a UsageError that says what is accepted,
where the reference fell back silently to a default (a typo in a budget became 50 GiB there).
Every size and duration cuzk reads (the engine's budget and margin, the daemon's config, the
CUDA backend's device budget) goes through here.
"""

from __future__ import annotations

import re

from cuzk.errors import UsageError

__all__ = ["SIZE_UNITS", "parse_duration", "parse_size"]

#: The size units, upper case, and their bytes.
SIZE_UNITS: dict[str, int] = {"GIB": 1 << 30, "MIB": 1 << 20, "GB": 10**9, "MB": 10**6}
_DURATION_UNITS: dict[str, int] = {"M": 60, "S": 1}
_TEXT = re.compile(r"^\s*(\d+)\s*([A-Za-z]*)\s*$")
_SIZE_HELP = "an integer with GiB, MiB, GB or MB (e.g. 14GiB, 512MiB, 5GB) or a plain byte count"
_DURATION_HELP = "an integer with m or s (e.g. 5m, 30s) or plain seconds"


def _where(key: str | None) -> str:
    return f"{key}: " if key else ""


def parse_size(value: object, key: str | None = None) -> int:
    """Bytes from a size (see the module docstring); `key` names the setting in the error."""
    if isinstance(value, int) and not isinstance(value, bool) and value >= 0:
        return value
    if isinstance(value, str):
        m = _TEXT.match(value)
        if m is not None:
            unit = m.group(2).upper()
            if not unit:
                return int(m.group(1))
            if unit in SIZE_UNITS:
                return int(m.group(1)) * SIZE_UNITS[unit]
    raise UsageError(f"{_where(key)}{value!r} is not a size: use {_SIZE_HELP}")


def parse_duration(value: object, key: str | None = None) -> float:
    """Seconds from a duration (see the module docstring); `key` names the setting in the error."""
    if isinstance(value, int | float) and not isinstance(value, bool) and value >= 0:
        return float(value)
    if isinstance(value, str):
        m = _TEXT.match(value)
        if m is not None:
            unit = m.group(2).upper()
            if not unit:
                return float(m.group(1))
            if unit in _DURATION_UNITS:
                return float(int(m.group(1)) * _DURATION_UNITS[unit])
    raise UsageError(f"{_where(key)}{value!r} is not a duration: use {_DURATION_HELP}")
