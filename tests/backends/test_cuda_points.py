"""The set-up kernels (kernels/points.cuh) on the host emulator, against the host's encoder and
decoder: import (flags, canonical coordinates, curve equation, subgroup) and export."""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
import pytest

from cuzk.algebra import G1, G2, Curve
from cuzk.algebra import encoding as E
from cuzk.backends.cpu import CpuBackend
from cuzk.backends.cuda import CudaBackend
from cuzk.backends.cuda._emulator import EmulatorRuntime, host_compiler
from cuzk.errors import (
    InfinityError,
    InvalidFlagsError,
    NonCanonicalError,
    NotInSubgroupError,
    NotOnCurveError,
)

sys.path.insert(0, str(Path(__file__).parents[1] / "algebra"))
from pyecc_oracle import random_curve_points

pytestmark = pytest.mark.skipif(host_compiler() is None, reason="the CUDA emulator needs a C++ compiler")
GROUPS = [(G1, "g1"), (G2, "g2")]


@pytest.fixture(scope="module")
def be() -> CudaBackend:
    return CudaBackend(runtime=EmulatorRuntime())


@pytest.mark.parametrize(("curve", "group"), GROUPS)
def test_round_trip_matches_the_host(be, curve: Curve, group: str, rng) -> None:
    pts = curve.random(5, rng)
    raw = E.encode_points(curve, pts, compressed=False)
    rows = be.import_points(raw, group, check_subgroup=True)
    assert np.array_equal(rows, pts.reshape(5, -1))
    assert np.array_equal(be.export_points(rows, group), raw)
    out = be.empty_rows(5, group)
    assert be.import_points(raw, group, check_subgroup=False, out=out) is out
    assert np.array_equal(out, rows)
    cpu = CpuBackend()
    assert np.array_equal(cpu.import_points(raw, group, check_subgroup=True), rows)
    assert np.array_equal(cpu.export_points(rows, group), raw)


@pytest.mark.parametrize(("curve", "group"), GROUPS)
def test_bad_points_are_named(be, curve: Curve, group: str, rng) -> None:
    pts = curve.random(4, rng)
    pts[2] = curve.from_ints(random_curve_points(curve, 1, rng))[0]  # on the curve, outside G
    raw = E.encode_points(curve, pts, compressed=False)
    with pytest.raises(NotInSubgroupError, match=r"h: .* point 2 is on the curve but not in"):
        be.import_points(raw, group, check_subgroup=True, what="h")
    assert np.array_equal(be.import_points(raw, group, check_subgroup=False), pts.reshape(4, -1))
    cases = []
    off = raw.copy()
    off[1, 50] ^= 1
    cases.append((off, NotOnCurveError, r"point 1: .* curve equation"))
    big = raw.copy()
    big[1, 0] |= 0x1F  # the top coordinate's high bits: above p
    cases.append((big, NonCanonicalError, "point 1: a coordinate is not below"))
    comp = raw.copy()
    comp[0, 0] |= 0x80
    cases.append((comp, InvalidFlagsError, "point 0: invalid flags"))
    inf = raw.copy()
    inf[3] = 0
    inf[3, 0] = 0x40
    cases.append((inf, InfinityError, "point 3 is the point at infinity"))
    for data, cls, msg in cases:
        with pytest.raises(cls, match=msg):
            be.import_points(data, group, check_subgroup=False)
