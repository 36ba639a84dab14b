"""The registry of workload circuits: family x scale -> a Circuit, built on first use.

Scales aim at 2^10..2^12 (-tiny, CI), 2^16 (-small), 2^20 (-medium) constraints;
porep-13m is 13.2M constraints, a tenth of a real PoRep partition; the -32g
circuits are the real 32 GiB sizes (porep-32g 130M per partition, wpost-32g 125M,
winning-32g 0.37M, snap-32g ~81M), recorded by replication (cuzk.r1cs.replicate).
The -tiny SHA-256 circuits use 2-round SHA-256 so that they fit; every other
scale uses the full 64 rounds. docs/CIRCUITS.md tabulates the shapes.
"""

from __future__ import annotations

from functools import cache
from typing import Any

from cuzk.circuits.base import Circuit
from cuzk.circuits.fallback import FallbackPost
from cuzk.circuits.porep import Porep
from cuzk.circuits.post import Post
from cuzk.circuits.snap import Snap
from cuzk.circuits.stacked import StackedPorep
from cuzk.circuits.update import SnapUpdate
from cuzk.errors import RenamedCircuitError, UnknownCircuitError

_SPECS: dict[str, tuple[type[Circuit], str, dict[str, Any]]] = {
    "porep-tiny": (Porep, "PoRep partition, 1 challenge, 2-round SHA-256 (CI)",
                   {"challenges": 1, "data_depth": 1, "label_blocks": 1, "replica_depth": 1, "sha_rounds": 2}),
    "porep-small": (Porep, "PoRep partition, 1 challenge, full SHA-256",
                    {"challenges": 1, "data_depth": 1, "label_blocks": 1, "replica_depth": 1, "sha_rounds": 64}),
    "porep-medium": (Porep, "PoRep partition, 2 challenges, data depth 10",
                     {"challenges": 2, "data_depth": 10, "label_blocks": 2, "replica_depth": 3, "sha_rounds": 64}),
    "porep-13m": (Porep, "PoRep-like, 18 challenges, ~13M constraints (a tenth of a real partition)",
                  {"challenges": 18, "data_depth": 12, "label_blocks": 6, "replica_depth": 4, "sha_rounds": 64}),
    "porep-32g": (StackedPorep, "PoRep partition of a 32 GiB sector at the real size (130M constraints)",
                  {"challenges": 18, "layers": 11, "data_depth": 30, "drg_parents": 6, "exp_parents": 8,
                   "parent_slots": 37, "tree_depth": 10, "sha_rounds": 64}),
    "wpost-tiny": (Post, "WindowPoSt partition, 1 sector x 2 challenges (CI)",
                   {"sectors": 1, "challenges": 2, "depth": 4}),
    "wpost-small": (Post, "WindowPoSt partition, 2 sectors x 10 challenges",
                    {"sectors": 2, "challenges": 10, "depth": 8}),
    "wpost-medium": (Post, "WindowPoSt partition, 25 sectors x 10 challenges",
                     {"sectors": 25, "challenges": 10, "depth": 10}),
    "wpost-32g": (FallbackPost, "WindowPoSt partition at the real size: 2,349 sectors x 10 challenges",
                  {"sectors": 2349, "challenges": 10, "depth": 13}),
    "winning-tiny": (Post, "WinningPoSt, 1 sector x 1 challenge (CI)",
                     {"sectors": 1, "challenges": 1, "depth": 6}),
    "winning-small": (Post, "WinningPoSt, 1 sector x 16 challenges",
                      {"sectors": 1, "challenges": 16, "depth": 10}),
    "winning-medium": (Post, "WinningPoSt, 1 sector x 66 challenges, depth 36",
                       {"sectors": 1, "challenges": 66, "depth": 36}),
    "winning-32g": (FallbackPost, "WinningPoSt at the real size: 66 sectors x 1 challenge",
                    {"sectors": 66, "challenges": 1, "depth": 13}),
    "snap-tiny": (Snap, "SnapDeals partition, 1 challenge, 2-round SHA-256 (CI)",
                  {"challenges": 1, "data_depth": 1, "replica_depth": 1, "sha_rounds": 2}),
    "snap-small": (Snap, "SnapDeals partition, 1 challenge, full SHA-256",
                   {"challenges": 1, "data_depth": 1, "replica_depth": 1, "sha_rounds": 64}),
    "snap-medium": (Snap, "SnapDeals partition, 4 challenges, data depth 5",
                    {"challenges": 4, "data_depth": 5, "replica_depth": 2, "sha_rounds": 64}),
    "snap-32g": (SnapUpdate, "SnapDeals partition at the real size: 86 challenges, 128 apex leaves",
                 {"challenges": 86, "data_depth": 19, "apex_leaves": 128, "tree_depth": 10, "sha_rounds": 64}),
}  # fmt: skip


#: Old names -> new names: asking for an old one is an error that names the new one.
RENAMED = {"porep-full": "porep-13m"}


def names() -> list[str]:
    return list(_SPECS)


@cache
def get_circuit(name: str) -> Circuit:
    """The registered circuit `name` (one object per process, so its recording is shared)."""
    if name in RENAMED:
        raise RenamedCircuitError.of(name, RENAMED[name])
    try:
        cls, description, params = _SPECS[name]
    except KeyError:
        raise UnknownCircuitError(f"unknown circuit {name!r}; known circuits: {', '.join(_SPECS)}") from None
    return cls(name=name, description=description, scale=name.rsplit("-", 1)[1], params=dict(params))


def list_circuits() -> list[Circuit]:
    """Every registered circuit, in registry order (family, then scale)."""
    return [get_circuit(n) for n in _SPECS]
