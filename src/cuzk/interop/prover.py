"""snarkjs keys for the one Groth16 prover (`cuzk.groth16.prover`): a Zkey made resident.

    pk = load_proving_key(read_zkey("circuit.zkey"), backend)   CSR A, B from section 4; 5-9 as Bases
    prove(pk, ["witness.wtns"])                                 cuzk.groth16.prover.prove

The key follows snarkjs's conventions (`SnarkjsQap`: the generator-5 domain and the
odd-roots trick; `FullScalars`: the full witness for A, B1, B2 and the C section over
the private signals) and reads witnesses from circom .wtns files or (nVars, 4) arrays.
It has no C matrix, so a witness that breaks a constraint is not detected in
synthesis: its proof fails the prover's final verification (ProofError).
"""

from __future__ import annotations

import os
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np

from cuzk.backends.base import Backend, Bases, CsrMatrix
from cuzk.groth16.conventions import FullScalars, QapConvention, QueryScalars, SnarkjsQap
from cuzk.groth16.keys import VerifyingKey
from cuzk.groth16.srs import Copies, load_queries
from cuzk.groth16.verifier import PreparedVerifyingKey, prepare
from cuzk.interop.wtns import read_wtns
from cuzk.interop.zkey import Zkey, warn_if_unbound


@dataclass
class ZkeyProvingKey:
    """A zkey made resident on a backend (the G2 query may live on another, e.g. the CPU)."""

    zkey: Zkey
    backend: Backend
    g2_backend: Backend
    vk: VerifyingKey
    pvk: PreparedVerifyingKey
    A: CsrMatrix  # (domainSize, nVars), Montgomery
    B: CsrMatrix
    a: Bases  # section 5
    b_g1: Bases  # section 6
    b_g2: Bases  # section 7, on g2_backend
    l: Bases  # section 8, the C section (private signals)
    h: Bases  # section 9
    qap: QapConvention  # SnarkjsQap
    scalars: QueryScalars  # FullScalars
    C: CsrMatrix | None = None  # snarkjs keys carry no C matrix

    @property
    def num_inputs(self) -> int:
        return self.zkey.n_public + 1

    @property
    def num_vars(self) -> int:
        return self.zkey.n_vars

    def constraint_name(self, i: int) -> str:
        return f"row {i}"

    def witness_vector(self, source: Any, who: str) -> np.ndarray:
        """A .wtns path (read and checked) or an (nVars, 4) Montgomery array."""
        return read_wtns(source) if isinstance(source, str | os.PathLike) else np.asarray(source)


def load_proving_key(
    zkey: Zkey,
    backend: Backend,
    *,
    g2_backend: Backend | None = None,
    precompute: Copies = 1,
    progress: Callable[[str], None] | None = None,
) -> ZkeyProvingKey:
    """Sections 5-9 as resident bases (the G1 ones with `precompute` copies, as make_resident);
    warns (UnboundInputsWarning) about unbound public inputs."""
    warn_if_unbound(zkey.ic, str(zkey.path or "zkey"))
    g2_be = g2_backend or backend
    a_mat, b_mat = zkey.matrices()
    vk = zkey.verifying_key()
    q = load_queries(
        backend,
        g2_be,
        {"a": zkey.a, "b_g1": zkey.b1, "l": zkey.c, "h": zkey.h},
        {"b_g2": zkey.b2},
        precompute=precompute,
        progress=progress,
    )
    return ZkeyProvingKey(
        zkey=zkey,
        backend=backend,
        g2_backend=g2_be,
        vk=vk,
        pvk=prepare(vk),
        A=a_mat,
        B=b_mat,
        a=q["a"],
        b_g1=q["b_g1"],
        b_g2=q["b_g2"],
        l=q["l"],
        h=q["h"],
        qap=SnarkjsQap.for_domain(zkey.log_n),
        scalars=FullScalars(zkey.n_public + 1),
    )
