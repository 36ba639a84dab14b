"""cuzk: a GPU-resident Groth16 proving engine for BLS12-381.

Importing the package is cheap: the layers (algebra, backends, r1cs, gadgets,
circuits, groth16, interop, ...) are imported on use.
"""

__version__ = "0.1.0"
