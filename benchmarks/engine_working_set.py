"""One partition's host memory on the engine's path, against `cuzk.engine.work.working_set`.

    python benchmarks/engine_working_set.py porep-tiny porep-small

Per circuit (CPU backend, second run so kernels are loaded): the bytes the
synthesis worker hands over in shared memory (witness and a, b, c), plus the
tracemalloc peak of the engine side (build_assignment, start, finalize), and
the estimate the engine reserves. numpy allocations are traced; numba's own
temporaries are not, which is why the estimate keeps a margin.
"""

from __future__ import annotations

import argparse
import tracemalloc
from types import SimpleNamespace

from cuzk.engine import work
from cuzk.groth16 import prover
from cuzk.instrument import Timeline


def measure(name: str, seed: int) -> tuple[int, int]:
    c, topo = work.circuit(name), work.topology(name)
    resident = work.load_resident(name, "cpu", 0, g2_on="cpu", params_dir=None)
    backend = work.cpu_backend()
    wit = c.witness(c.random_instance(seed))
    abc = prover.synthesize(topo, [wit], backend).abc[0]
    handover = wit.inputs.nbytes + wit.aux.nbytes + sum(v.nbytes for v in abc)
    part = SimpleNamespace(inputs=wit.inputs, aux=wit.aux, abc=abc)
    tl = Timeline()
    tracemalloc.start()
    try:
        assignment = work.build_assignment(resident, [part], tl)
        del part, abc
        work.finalize(work.start(assignment, resident), resident, tl)
        return handover, tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("circuits", nargs="+")
    for name in ap.parse_args().circuits:
        measure(name, 1)
        handover, peak = measure(name, 2)
        ws = work.working_set(name)
        print(
            f"{name}: measured {(handover + peak) / 1e6:.2f} MB (hand-over {handover / 1e6:.2f} + engine peak "
            f"{peak / 1e6:.2f}); estimate {ws.total / 1e6:.2f} MB (a/b/c share {ws.abc / 1e6:.2f}); "
            f"estimate / measured {ws.total / (handover + peak):.2f}"
        )


if __name__ == "__main__":
    main()
