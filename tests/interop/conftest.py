"""Fixtures for the interop tests: a toy circuit's files, made once per session with our own setup."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pytest
from circom_toy import toy, witness_array

from cuzk.backends import get_backend
from cuzk.backends.base import Backend
from cuzk.interop.r1cs import R1cs, write_r1cs
from cuzk.interop.setup import setup_zkey
from cuzk.interop.wtns import write_wtns
from cuzk.interop.zkey import write_zkey


@dataclass
class ToyFiles:
    r1cs: R1cs
    witness: list[int]
    r1cs_path: Path
    wtns_path: Path
    zkey_path: Path

    @property
    def witness_mont(self) -> np.ndarray:
        return witness_array(self.witness)


@pytest.fixture(scope="session")
def cpu() -> Backend:
    return get_backend("cpu")


@pytest.fixture(scope="session")
def toy_files(tmp_path_factory: pytest.TempPathFactory, cpu: Backend) -> ToyFiles:
    d = tmp_path_factory.mktemp("toy")
    r1cs, w = toy()
    files = ToyFiles(r1cs, w, d / "toy.r1cs", d / "toy.wtns", d / "toy.zkey")
    write_r1cs(files.r1cs_path, r1cs)
    write_wtns(files.wtns_path, witness_array(w))
    write_zkey(files.zkey_path, setup_zkey(r1cs, cpu))
    return files
