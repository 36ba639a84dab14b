"""Constraint systems: the bellman-style API, recording to CSR, and the witness program.

    from cuzk.r1cs import ConstraintSystem, LC, ONE, gadget

`ConstraintSystem()` is the direct path (concrete values, bellman's
TestConstraintSystem); `ConstraintSystem(values=False)` records a topology and
a witness program, which `cuzk.circuits` caches on disk and runs per proof.
"""

from cuzk.r1cs.gadget import gadget
from cuzk.r1cs.lc import LC, ONE, input_var, is_input
from cuzk.r1cs.program import CallGroup, Source, WitnessCS, WitnessProgram
from cuzk.r1cs.system import ConstraintSystem, Recording, SourceRef
from cuzk.r1cs.topology import ConstraintNames, Topology, Witness

__all__ = [
    "LC",
    "ONE",
    "CallGroup",
    "ConstraintNames",
    "ConstraintSystem",
    "Recording",
    "Source",
    "SourceRef",
    "Topology",
    "Witness",
    "WitnessCS",
    "WitnessProgram",
    "gadget",
    "input_var",
    "is_input",
]
