"""A local Groth16 setup with bellperson's generate_random_parameters semantics.

The toxic waste (tau, alpha, beta, gamma, delta, and the random generators g1,
g2) comes from the OS CSPRNG and is dropped when the function returns. This is
a test setup for one machine, not a ceremony: whoever ran it could forge proofs.

Every step runs where the backend computes: on a GPU the QAP's evaluation at tau (the
transposed sparse products), the query scalars and the fixed-base multiplications stay on the
device, and the queries come out as device rows (`generate_queries`), which `srs.resident_from_rows`
makes the resident key without a host copy: a real-size PoRep set (44 GiB) never crosses the
bus. `generate_parameters` is the same run with host copies (for files and the CPU backend).
"""

from __future__ import annotations

import secrets
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np

from cuzk.algebra import constants as C
from cuzk.algebra.curves import G1, G2
from cuzk.algebra.domain import powers
from cuzk.algebra.fields import FR
from cuzk.backends.base import Backend, Group
from cuzk.errors import SetupError
from cuzk.groth16.keys import Parameters, VerifyingKey
from cuzk.groth16.qap import ConstraintMatrices, Densities, Domain
from cuzk.instrument import Timeline

Progress = Callable[[str], None]
#: The queries in bellperson's order, with their groups.
QUERY_GROUPS: dict[str, Group] = {"h": "g1", "l": "g1", "a": "g1", "b_g1": "g1", "b_g2": "g2"}


@dataclass
class GeneratedQueries:
    """A fresh setup's verifying key (host) and its five queries as (n, 2 width) affine rows in
    the backend's memory (device rows on a GPU)."""

    vk: VerifyingKey
    rows: dict[str, Any]
    backend: Backend

    def host(self) -> Parameters:
        """Host copies of the queries, as the bellperson Parameters (for files)."""
        q = {}
        for name, group in QUERY_GROUPS.items():
            curve = G1 if group == "g1" else G2
            pts = np.asarray(self.backend.to_host(self.rows[name]))
            q[name] = pts.reshape(pts.shape[0], *curve.affine_shape)
        return Parameters(vk=self.vk, h=q["h"], l=q["l"], a=q["a"], b_g1=q["b_g1"], b_g2=q["b_g2"])


def _nonzero_scalar() -> int:
    return secrets.randbelow(C.R - 1) + 1


def _first_zero(xp: Any, a: Any) -> int:
    """Index of the first all-zero row (Fr zero), -1 when none."""
    if a.shape[0] == 0:
        return -1
    zero = ~a.any(axis=1)
    i = int(xp.argmax(zero))
    return i if bool(zero[i]) else -1


def _fixed_base(backend: Backend, base: np.ndarray, scalars: Any, group: Group) -> Any:
    """[s] base per scalar as (n, 2 width) rows in the backend's memory."""
    if backend.xp is not np:  # a device backend: keep the points where they are made
        return backend.fixed_base_mul(base, scalars, group, on_device=True)  # type: ignore[call-arg]
    pts = backend.fixed_base_mul(base, scalars, group)
    return pts.reshape(pts.shape[0], -1)


#: Rows per device pass of a query whose home is the host (b_g2 with msm.g2_on=cpu): the
#: device holds a pass's points, not the query's (wpost-32g's b_g2 is 23.7 GB, which failed
#: its generation beside the G1 queries on an 80 GB H100, 2026-12-07).
HOST_QUERY_CHUNK = 1 << 23


def _fixed_base_to_host(backend: Backend, base: np.ndarray, scalars: Any, group: Group) -> np.ndarray:
    """[s] base per scalar as (n, 2 width) host rows, made on the backend a pass at a time."""
    n = scalars.shape[0]
    width = (G1 if group == "g1" else G2).field.width
    out = np.empty((n, 2 * width), dtype=np.uint64)
    for lo in range(0, n, HOST_QUERY_CHUNK):
        hi = min(n, lo + HOST_QUERY_CHUNK)
        out[lo:hi] = backend.to_host(_fixed_base(backend, base, scalars[lo:hi], group))
    return out


#: Rows of a replicated block's per-copy products made at once in `qap_at` (copies x the
#: block's columns): bounds the scratch of a group of copies to ~128 MiB of values.
QAP_GROUP_ROWS = 1 << 22


def qap_at(cs: ConstraintMatrices, which: int, backend: Backend, lagrange: Any) -> Any:
    """M^T @ lagrange for M = A, B, C (which = 0, 1, 2): every variable's polynomial at tau.

    A replicated topology (cuzk.r1cs.replicate: a head plus copies of one block, its variables
    moved by a per-copy stride) is evaluated with the block's transpose, made once, over a group
    of copies at a time (`Backend.spmv_copies`: copy k reads the block's rows of lagrange moved
    by k blocks): its full matrices (GiBs at real size) are never built, and a circuit of
    thousands of small copies (wpost-32g: 2,349) takes a few launches per group, not several
    per copy (88.9 s of its set-up on the H200, 2026-12-04, went to the copy-at-a-time loop).
    """
    if not hasattr(cs, "layout") or not hasattr(cs, "unit"):
        return backend.spmv_transposed((cs.A, cs.B, cs.C)[which], lagrange)
    from cuzk.groth16.qap import transpose

    t: Any = cs
    lay = t.layout
    ncols = cs.num_inputs + cs.num_aux
    xp = backend.xp
    out = backend.to_device(np.zeros((ncols, 4), dtype=np.uint64))
    r0 = lay.shared_rows
    if r0:
        head = t.head[which]
        out = backend.fr_add(out, backend.spmv_transposed(head, lagrange[:r0]))
    unit = t.unit[which]
    cols = np.unique(np.asarray(unit.indices, dtype=np.int64))
    local = type(unit)(unit.indptr, np.searchsorted(cols, unit.indices).astype(np.int32), unit.data,
                       (unit.shape[0], int(cols.shape[0])))  # fmt: skip
    local_t = transpose(local)  # one block's transpose: the backend keeps it while this runs
    strides = lay.column_strides(cols)
    n_local = int(cols.shape[0])
    if n_local:
        rows = backend.to_device(r0 + np.arange(lay.unit_rows, dtype=np.int64))
        row_strides = backend.to_device(np.full(lay.unit_rows, lay.unit_rows, dtype=np.int64))
        moving = np.flatnonzero(strides != 0)  # a copy's own columns: no two copies share one
        shared = np.flatnonzero(strides == 0)  # ONE and the head's columns: every copy adds in
        d_moving, d_shared = backend.to_device(moving), backend.to_device(shared)
        moved_cols, moved_strides = backend.to_device(cols[moving]), backend.to_device(strides[moving])
        shared_sum = backend.to_device(np.zeros((shared.shape[0], 4), dtype=np.uint64))
        group = max(1, min(lay.copies, QAP_GROUP_ROWS // n_local))
        for k0 in range(0, lay.copies, group):
            g = min(group, lay.copies - k0)
            part = xp.empty((g * n_local, 4), dtype=np.uint64)
            backend.spmv_copies(local_t, lagrange, rows + k0 * lay.unit_rows, row_strides, g, part)
            part = part.reshape(g, n_local, 4)
            if moving.shape[0]:
                copy = (k0 + xp.arange(g, dtype=np.int64))[:, None]
                idx = (moved_cols[None, :] + copy * moved_strides[None, :]).reshape(-1)
                out[idx] = backend.fr_add(out[idx], xp.ascontiguousarray(part[:, d_moving].reshape(-1, 4)))
            if shared.shape[0]:
                shared_sum = backend.fr_add(shared_sum, _sum_copies(backend, part[:, d_shared]))
        if shared.shape[0]:
            idx = backend.to_device(cols[shared])
            out[idx] = backend.fr_add(out[idx], shared_sum)
    if which == 0:  # bellperson's input rows: input i appears in A of row end + i
        end = r0 + lay.copies * lay.unit_rows
        ni = cs.num_inputs
        out[:ni] = backend.fr_add(out[:ni], xp.ascontiguousarray(lagrange[end : end + ni]))
    return out


def _sum_copies(backend: Backend, parts: Any) -> Any:
    """(g, n, 4) Fr values summed over the copies (axis 0) by halving: log2(g) additions."""
    xp = backend.xp
    parts = xp.ascontiguousarray(parts)
    while parts.shape[0] > 1:
        h = parts.shape[0] // 2  # pairs (j, j + h); an odd copy out rides along
        summed = backend.fr_add(parts[:h].reshape(-1, 4), parts[h : 2 * h].reshape(-1, 4))
        parts = xp.concatenate([summed.reshape(h, -1, 4), parts[2 * h :]])
    return parts[0]


def generate_queries(
    cs: ConstraintMatrices,
    backend: Backend,
    *,
    timeline: Timeline | None = None,
    progress: Progress | None = None,
    g2_on_host: bool = False,
) -> GeneratedQueries:
    """Random parameters for the circuit, their queries left in the backend's memory; raises
    SetupError for degenerate circuits. Spans: lagrange, qap, scalars, fixed_base_<query>.
    Runs in the backend's device region: its gathers and checks allocate where the backend's
    memory accounting sees them (and gives their cached blocks back when a later one needs them).
    `g2_on_host`: b_g2 comes out as host rows (its MSM runs on the CPU), made a pass at a time,
    so the device never holds the whole G2 query."""
    with backend.activate():
        return _generate_queries(
            cs, backend, timeline or Timeline("setup"), progress or (lambda _msg: None), g2_on_host
        )


def _generate_queries(
    cs: ConstraintMatrices, backend: Backend, tl: Timeline, say: Progress, g2_on_host: bool = False
) -> GeneratedQueries:
    xp = backend.xp
    dom = Domain.for_constraints(cs.num_constraints)
    dens = Densities.of(cs)
    ni, n = cs.num_inputs, cs.num_constraints
    tau, alpha, beta, gamma, delta = (_nonzero_scalar() for _ in range(5))
    g1 = G1.to_affine(G1.scalar_mul(G1.generator(), FR.from_ints([_nonzero_scalar()])))
    g2 = G2.to_affine(G2.scalar_mul(G2.generator(), FR.from_ints([_nonzero_scalar()])))

    with tl.span("lagrange", points=dom.m):
        say(f"evaluating the Lagrange basis at tau over a domain of 2^{dom.log_m}")
        tau_powers = backend.to_device(powers(tau, dom.m))
        lagrange = backend.intt(tau_powers, dom.omega)[:n]
        backend.synchronize()  # each span holds its own device work (progress and per-step times)
    with tl.span("qap"):
        say("the QAP at tau: A, B and C transposed")
        at, bt, ct = (qap_at(cs, which, backend, lagrange) for which in range(3))
        del lagrange
        backend.synchronize()
    with tl.span("scalars"):
        z_tau = (pow(tau, dom.m, C.R) - 1) % C.R
        h_scalars = backend.fr_scale(tau_powers[: dom.m - 1], z_tau * pow(delta, -1, C.R) % C.R)
        del tau_powers
        combo = backend.fr_add(backend.fr_add(backend.fr_scale(at, beta), backend.fr_scale(bt, alpha)), ct)
        del ct
        ic_scalars = backend.fr_scale(combo[:ni], pow(gamma, -1, C.R))
        l_scalars = backend.fr_scale(combo[ni:], pow(delta, -1, C.R))
        del combo
        bad = _first_zero(xp, ic_scalars)
        if bad >= 0:
            raise SetupError(
                f"public input {bad} is bound by no constraint (its ic point would be infinity, "
                "so a proof would verify for any value of it)"
            )
        bad = _first_zero(xp, l_scalars)
        if bad >= 0:
            raise SetupError(f"aux variable {bad} is unconstrained (its l point would be infinity)")
        a_idx = backend.to_device(np.concatenate([np.arange(ni), ni + np.flatnonzero(dens.a_aux)]))
        b_idx = backend.to_device(
            np.concatenate([np.flatnonzero(dens.b_input), ni + np.flatnonzero(dens.b_aux)])
        )
        a_scalars, b_scalars = at[a_idx], bt[b_idx]
        del at, bt, a_idx, b_idx
        if _first_zero(xp, a_scalars) >= 0 or _first_zero(xp, b_scalars) >= 0:
            raise SetupError(
                "a used variable evaluated to zero at tau (probability ~2^-250); run setup again"
            )

    rows: dict[str, Any] = {}
    for name, base, scalars, group in (
        ("h", g1, h_scalars, "g1"),
        ("l", g1, l_scalars, "g1"),
        ("a", g1, a_scalars, "g1"),
        ("b_g1", g1, b_scalars, "g1"),
        ("b_g2", g2, b_scalars, "g2"),
    ):
        to_host = g2_on_host and name == "b_g2"
        with tl.span(f"fixed_base_{name}", points=scalars.shape[0]):
            say(f"{name}: {scalars.shape[0]} {group.upper()} points" + (" (to the host)" if to_host else ""))
            make = _fixed_base_to_host if to_host else _fixed_base
            rows[name] = make(backend, base, scalars, group)  # type: ignore[arg-type]
            backend.synchronize()
    del h_scalars, l_scalars, a_scalars
    ic = backend.fixed_base_mul(g1, backend.to_host(ic_scalars), "g1")
    g1s = backend.fixed_base_mul(g1, FR.from_ints([alpha, beta, delta]), "g1")
    g2s = backend.fixed_base_mul(g2, FR.from_ints([beta, gamma, delta]), "g2")
    vk = VerifyingKey(
        alpha_g1=np.asarray(g1s[0:1]),
        beta_g1=np.asarray(g1s[1:2]),
        beta_g2=np.asarray(g2s[0:1]),
        gamma_g2=np.asarray(g2s[1:2]),
        delta_g1=np.asarray(g1s[2:3]),
        delta_g2=np.asarray(g2s[2:3]),
        ic=np.asarray(ic),
    )
    return GeneratedQueries(vk=vk, rows=rows, backend=backend)


def generate_parameters(
    cs: ConstraintMatrices,
    backend: Backend,
    *,
    timeline: Timeline | None = None,
    progress: Progress | None = None,
) -> Parameters:
    """Random parameters for the circuit as host arrays (generate_queries, then copied out)."""
    return generate_queries(cs, backend, timeline=timeline, progress=progress).host()
