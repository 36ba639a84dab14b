"""One grammar for sizes and durations (cuzk.units), the reference daemon's: what it takes and refuses."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from cuzk.errors import UsageError
from cuzk.units import parse_duration, parse_size

GiB, MiB = 1 << 30, 1 << 20


@pytest.mark.parametrize(
    ("text", "expected"),
    [("14GiB", 14 * GiB), ("512MiB", 512 * MiB), ("5GB", 5 * 10**9), ("100MB", 100 * 10**6),
     ("80gib", 80 * GiB), (" 2 GiB ", 2 * GiB), ("123", 123), (4096, 4096), (0, 0)],
)  # fmt: skip
def test_sizes(text: object, expected: int) -> None:
    assert parse_size(text) == expected


@pytest.mark.parametrize(
    "text", ["", "GiB", "14G", "80G", "1.5GiB", "2KiB", "7B", "1TB", "-5", "1e9", "5 GiB extra", -1, True, 2.5,
             None],
)  # fmt: skip
def test_sizes_outside_the_grammar_are_refused_with_what_is_accepted(text: object) -> None:
    with pytest.raises(UsageError, match=r"memory\.total_budget: .* is not a size: use an integer with GiB"):
        parse_size(text, "memory.total_budget")


@pytest.mark.parametrize(
    ("text", "expected"), [("5m", 300.0), ("30s", 30.0), ("2", 2.0), (2, 2.0), (0.5, 0.5)]
)
def test_durations(text: object, expected: float) -> None:
    assert parse_duration(text) == expected


@pytest.mark.parametrize("text", ["", "m", "250ms", "1h", "1.5m", "-1", "soon", True, -1, None])
def test_durations_outside_the_grammar_are_refused(text: object) -> None:
    with pytest.raises(UsageError, match="is not a duration: use an integer with m or s"):
        parse_duration(text, "daemon.grace_period")


def test_one_definition_of_each_parser() -> None:
    """The issue's check: one parse_size (and no parse_budget) in src."""
    out = subprocess.run(
        ["grep", "-rn", r"def parse_size\|def parse_budget\|def parse_duration", "src", "--include=*.py"],
        capture_output=True, text=True, check=False, cwd=Path(__file__).resolve().parents[1],
    ).stdout.splitlines()  # fmt: skip
    assert [line.split(":")[0] for line in out] == ["src/cuzk/units.py", "src/cuzk/units.py"], out
