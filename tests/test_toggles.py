"""Named toggles: parsing, refusal of unknown keys and bad values, and the diff bench ab reports."""

from __future__ import annotations

import pytest

from cuzk.errors import UsageError
from cuzk.toggles import TOGGLES, differing, parse_settings, resolved, windows


def test_every_toggle_writes_down_its_expected_effect() -> None:
    for key, t in TOGGLES.items():
        assert t.key == key and len(t.expected) > 40, key


def test_parse_and_resolve() -> None:
    got = parse_settings(["msm.window.l=3", "staging.pinned=off", "msm.g2_on=device", "batch.max_size=2"])
    assert got == {"msm.window.l": 3, "staging.pinned": False, "msm.g2_on": "device", "batch.max_size": 2}
    assert windows(got) == {"l": 3}
    assert windows(parse_settings(["msm.window.h=auto"])) == {}
    full = resolved(got)
    assert full["finalize.split"] is True and full["msm.window.h"] is None and set(full) == set(TOGGLES)
    assert differing({}, got) == ["staging.pinned", "msm.window.l", "msm.g2_on", "batch.max_size"]
    assert differing(got, got) == []


@pytest.mark.parametrize(
    ("pair", "message"),
    [
        ("nope=1", r"unknown toggle 'nope'; valid keys: staging\.pinned, msm\.window\.h"),
        ("staging.pinned", r"--set takes key=value"),
        ("staging.pinned=maybe", r"staging\.pinned: expected on or off"),
        ("msm.window.h=0", r"msm\.window\.h: expected auto or a window"),
        ("msm.window.h=40", r"above the 23"),
        ("msm.g2_on=gpu", r"msm\.g2_on: expected one of auto, cpu, device"),
        ("batch.max_size=0", r"batch\.max_size: expected an integer >= 1"),
        ("gpu.workers_per_device=two", r"expected an integer"),
    ],
)
def test_bad_settings_are_refused(pair: str, message: str) -> None:
    with pytest.raises(UsageError, match=message):
        parse_settings([pair])
