"""Parameters made resident on a backend: the five SRS queries as Bases handles.

Loading once and proving many times is the point of the engine (the reference
saved 30-90 s per proof this way); the handle also records which circuit shape
the parameters fit, so a mismatch is caught before any MSM runs.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from cuzk.backends.base import Backend, Bases
from cuzk.errors import ParamsError
from cuzk.groth16.keys import Parameters, VerifyingKey
from cuzk.groth16.qap import ConstraintMatrices, Densities, Domain


@dataclass
class ResidentParameters:
    backend: Backend
    g2_backend: Backend  # where the B query on G2 lives (the CPU, to keep finalize off the GPU)
    vk: VerifyingKey
    h: Bases
    l: Bases
    a: Bases
    b_g1: Bases
    b_g2: Bases
    domain: Domain
    densities: Densities
    num_inputs: int
    num_aux: int
    # the density bitmaps as index arrays on the backend, for gathering MSM scalars there
    a_aux_idx: Any
    b_input_idx: Any
    b_aux_idx: Any


def check_shape(params: Parameters, cs: ConstraintMatrices) -> tuple[Domain, Densities]:
    """Raise ParamsError unless the parameters' query sizes match this constraint system."""
    dom = Domain.for_constraints(cs.num_constraints)
    dens = Densities.of(cs)
    expected = {
        "ic": cs.num_inputs,
        "h": dom.m - 1,
        "l": cs.num_aux,
        "a": dens.a_size,
        "b_g1": dens.b_size,
        "b_g2": dens.b_size,
    }
    actual = {
        "ic": params.vk.ic.shape[0],
        "h": params.h.shape[0],
        "l": params.l.shape[0],
        "a": params.a.shape[0],
        "b_g1": params.b_g1.shape[0],
        "b_g2": params.b_g2.shape[0],
    }
    wrong = [f"{k}: {actual[k]} points, circuit needs {v}" for k, v in expected.items() if actual[k] != v]
    if wrong:
        raise ParamsError("parameters do not fit this circuit (" + "; ".join(wrong) + ")")
    return dom, dens


def make_resident(
    params: Parameters,
    cs: ConstraintMatrices,
    backend: Backend,
    *,
    g2_backend: Backend | None = None,
) -> ResidentParameters:
    dom, dens = check_shape(params, cs)
    g2_be = g2_backend or backend
    return ResidentParameters(
        backend=backend,
        g2_backend=g2_be,
        vk=params.vk,
        h=backend.load_bases(params.h, "g1"),
        l=backend.load_bases(params.l, "g1"),
        a=backend.load_bases(params.a, "g1"),
        b_g1=backend.load_bases(params.b_g1, "g1"),
        b_g2=g2_be.load_bases(params.b_g2, "g2"),
        domain=dom,
        densities=dens,
        num_inputs=cs.num_inputs,
        num_aux=cs.num_aux,
        a_aux_idx=backend.to_device(np.flatnonzero(dens.a_aux)),
        b_input_idx=backend.to_device(np.flatnonzero(dens.b_input)),
        b_aux_idx=backend.to_device(np.flatnonzero(dens.b_aux)),
    )
