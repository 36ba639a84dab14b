"""`cuzk selftest`: passes on a healthy build, and a broken kernel turns into exit code 1."""

from __future__ import annotations

import numpy as np
import pytest

from cuzk.algebra.fields import Field
from cuzk.cli import selftest
from cuzk.cli.main import main


def test_selftest_passes(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["selftest", "--backend", "cpu", "--size", "16", "--seed", "3"]) == 0
    out = capsys.readouterr().out
    assert "all 17 checks passed" in out
    assert "MSM G1 vs naive" in out and "NTT round trip" in out and "FAIL" not in out


def test_selftest_reports_a_wrong_result(monkeypatch: pytest.MonkeyPatch, capsys) -> None:
    real_mul = Field.mul

    def wrong_mul(self: Field, a: np.ndarray, b: np.ndarray) -> np.ndarray:
        out = real_mul(self, a, b)
        if self.name == "Fr" and out.shape[0] > 4:
            out[4] = out[3]  # one wrong product
        return out

    monkeypatch.setattr(Field, "mul", wrong_mul)
    assert main(["selftest", "--backend", "cpu", "--size", "16", "--seed", "3"]) == 1
    out = capsys.readouterr().out
    assert "FAIL" in out and "checks failed" in out
    assert "Fr arithmetic vs ints" in out


def test_selftest_rejects_tiny_size(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["selftest", "--size", "2"]) == 2
    assert "--size must be at least 8" in capsys.readouterr().err


def test_crashing_check_is_a_failure_not_a_crash() -> None:
    class Broken(selftest.Checks):
        def plan(self):
            return [("boom", 1, lambda n: 1 / 0)]

    (outcome,) = selftest.run_checks(Broken(None, np.random.default_rng(0), 8))
    assert not outcome.passed and "ZeroDivisionError" in outcome.detail


def test_cold_cache_heuristic(monkeypatch: pytest.MonkeyPatch) -> None:
    # The tests above ran every kernel, so their cache index files exist now.
    assert not selftest.numba_cache_looks_cold()
    monkeypatch.setattr(selftest, "_KERNEL_MODULES", ("cuzk/algebra/fields.py",))  # no kernels there
    assert selftest.numba_cache_looks_cold()
