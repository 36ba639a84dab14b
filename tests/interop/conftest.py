"""Fixtures for the interop tests: a toy circuit's files, made once per session with our own setup."""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pytest
from circom_toy import NativeSystem, toy, toy_constraints, witness_array

from cuzk.backends import get_backend
from cuzk.backends.base import Backend
from cuzk.groth16 import generate_parameters, make_resident, prove
from cuzk.groth16.params_io import write_vk
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


@pytest.fixture(scope="session")
def native(cpu: Backend, tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    """The toy circuit without its unused wire (bellperson refuses unconstrained variables), two proofs."""
    d = tmp_path_factory.mktemp("native")
    _, w1, constraints = toy_constraints(3, 11)
    _, w2, _ = toy_constraints(5, 2)
    cs = NativeSystem(7, 2, constraints)
    params = generate_parameters(cs, cpu)
    result = prove(make_resident(params, cs, cpu), [cs.witness(w1[:7]), cs.witness(w2[:7])])
    files = {"vk": d / "toy.vk", "proof": d / "toy.proof", "public": d / "toy.public.json", "out": d / "sj"}
    write_vk(params.vk, files["vk"])
    files["proof"].write_bytes(result.proof_bytes())
    files["public"].write_text(json.dumps([[str(x) for x in p] for p in result.public_inputs]))
    return files
