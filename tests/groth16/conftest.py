"""Parameters for the toy circuits, made once per test session."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).parent))

from toy import cubic, random_circuit

from cuzk.backends import get_backend
from cuzk.groth16 import generate_parameters, make_resident


@pytest.fixture(scope="session")
def cpu():
    return get_backend("cpu")


@pytest.fixture(scope="session")
def cubic_setup(cpu):
    cs, w = cubic(3)
    params = generate_parameters(cs, cpu)
    return cs, w, params, make_resident(params, cs, cpu)


@pytest.fixture(scope="session")
def random_setup(cpu):
    cs, w = random_circuit(200, num_public=3, seed=7)
    params = generate_parameters(cs, cpu)
    return cs, w, params, make_resident(params, cs, cpu)
