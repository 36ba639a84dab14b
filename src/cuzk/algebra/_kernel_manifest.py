"""The numba kernels each command compiles on a cold cache (cuzk.algebra.precompile).

Recorded on the CPU backend with `python -m cuzk.algebra.precompile record -- COMMAND ...` on a
cold cache; `setup` is the parameter generation, `prove` a proof with parameters present,
`verify` a `cuzk verify`. A kernel missing here still compiles on first use.
"""

from __future__ import annotations

KERNELS: dict[str, tuple[tuple[str, str, str], ...]] = {}
