"""Workload circuits modelled on the Filecoin proof kinds (porep, wpost, winning, snap).

    from cuzk.circuits import get_circuit, list_circuits
    c = get_circuit("porep-tiny")
    topo = c.topology()                 # cached recording
    inst = c.random_instance(seed=0)
    wit = c.witness(inst)
    topo.check(wit, backend)

Shape-alike, not Filecoin-consensus-compatible (docs/CIRCUITS.md).
"""

from cuzk.circuits.base import Circuit, Instance
from cuzk.circuits.registry import get_circuit, list_circuits, names

__all__ = ["Circuit", "Instance", "get_circuit", "list_circuits", "names"]
