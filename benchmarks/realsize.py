"""Set-up at Filecoin's real sizes on one GPU: parameters generated into residency, a .params
set written and loaded back at disk speed, a 44 GiB-class set loaded, one proof per circuit.

    python benchmarks/realsize.py --out DIR [--circuits porep-13m,winning-32g] [--synthetic-gib 44]
        [--checked-load] [--deadline-s 540]

Per circuit: topology (recorded or from the cache), parameters generated on the device
(groth16.setup.generate_queries; its spans lagrange, qap, scalars, fixed_base_*), the resident
key (resident_from_rows), one proof verified by the prover plus a tampered proof rejected, then,
when the set fits the disk, the set written from the device (params_io.save_rows) and loaded
back cold (page cache dropped for the file with posix_fadvise) through params_io.load_rows,
trusted and checked, equal to what was generated.

--synthetic-gib N writes a file with the real PoRep set's layout (query counts of a 130M-
constraint partition scaled to N GiB) from a pool of valid random points, and loads it cold:
the disk-to-residency rate at that size without needing the real circuit. Everything is
timed; the table is printed and DIR/realsize.json holds every figure. Sections stop being
started once --deadline-s is near, so that one device call always returns its results.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import sys
import time
from pathlib import Path
from typing import Any

import numpy as np

T0 = time.perf_counter()
RESULTS: dict[str, Any] = {"sections": {}}


def now() -> float:
    return time.perf_counter() - T0


def say(msg: str) -> None:
    print(f"[{now():7.1f}s] {msg}", flush=True)


def save(out: Path) -> None:
    (out / "realsize.json").write_text(json.dumps(RESULTS, indent=2, default=str) + "\n")


def rss_gib() -> float:
    import resource

    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 2**20


def device_gib(be: Any) -> dict[str, float]:
    info = be.memory_info()
    return {k: round(v / 2**30, 2) for k, v in info.items() if isinstance(v, int)}


def drop_cache(path: Path) -> None:
    """Evict the file's pages (clean after fsync) so that the next read comes from the disk."""
    fd = os.open(path, os.O_RDONLY)
    try:
        os.fsync(fd)
        os.posix_fadvise(fd, 0, 0, os.POSIX_FADV_DONTNEED)
    finally:
        os.close(fd)


def spans(tl: Any) -> dict[str, float]:
    out: dict[str, float] = {}
    for s in tl.spans:
        out[s.name] = round(out.get(s.name, 0.0) + s.seconds, 3)
    return out


def circuit_section(name: str, be: Any, work: Path, args: argparse.Namespace) -> dict[str, Any]:
    from cuzk.circuits import get_circuit
    from cuzk.groth16 import api, params_io, prove, verify
    from cuzk.groth16.proof import Proof
    from cuzk.groth16.setup import generate_queries
    from cuzk.groth16.srs import release_queries, resident_from_rows
    from cuzk.instrument import Timeline

    res: dict[str, Any] = {"circuit": name}
    t = time.perf_counter()
    circuit = get_circuit(name)
    topo = circuit.topology()
    res["topology_s"] = round(time.perf_counter() - t, 2)
    res["constraints"] = topo.num_constraints
    res["num_aux"] = topo.num_aux
    res["num_inputs"] = topo.num_inputs
    res["set_gib"] = round(api.set_bytes(topo) / 2**30, 2)
    say(
        f"{name}: topology {res['topology_s']} s, {topo.num_constraints} constraints, set {res['set_gib']} GiB"
    )
    tl = Timeline("setup")
    t = time.perf_counter()
    gen = generate_queries(topo, be, timeline=tl, progress=say)
    be.synchronize()
    res["generate_s"] = round(time.perf_counter() - t, 2)
    res["generate_spans"] = spans(tl)
    t = time.perf_counter()
    key = resident_from_rows(gen.vk, gen.rows, topo, be)
    res["resident_s"] = round(time.perf_counter() - t, 2)
    res["device_after_setup"] = device_gib(be)
    say(f"{name}: generated in {res['generate_s']} s {res['generate_spans']}")
    for rep in range(args.proofs):
        if rep and now() > args.deadline_s - 90:
            break
        t = time.perf_counter()
        wit = circuit.witness(circuit.random_instance(1 + rep))
        res[f"witness_{rep}_s"] = round(time.perf_counter() - t, 3)
        pub = [int(v) for v in _ints(wit.inputs[1:])]
        t = time.perf_counter()
        pr = prove(key, [wit])
        res[f"prove_{rep}_s"] = round(time.perf_counter() - t, 3)
        res[f"prove_{rep}_spans"] = spans(pr.timeline)
        res[f"device_after_prove_{rep}"] = device_gib(be)
        res["peak_rss_gib"] = round(rss_gib(), 2)
        say(f"{name}: proof {rep}: {res[f'prove_{rep}_s']} s {res[f'prove_{rep}_spans']}")
    (proof,) = pr.proofs
    res["verified"] = bool(verify(key.vk, pub, proof))
    res["tampered_rejected"] = not verify(key.vk, pub, Proof(a=proof.c, b=proof.b, c=proof.a))
    say(
        f"{name}: proof {res[f'prove_{rep}_s']} s, verified {res['verified']}, tampered rejected {res['tampered_rejected']}"
    )
    free = shutil.disk_usage(work).free
    need = api.set_bytes(topo) + (1 << 30)
    if args.no_files or need > free - (2 << 30) or now() > args.deadline_s - 120:
        res["files"] = f"not written (needs {need / 2**30:.1f} GiB, {free / 2**30:.1f} free, or no time)"
    else:
        d = work / name
        t = time.perf_counter()
        params_io.save_rows(gen.vk, gen.rows, be, d, name, {"topology_hash": topo.hash})
        res["write_s"] = round(time.perf_counter() - t, 2)
        path = d / f"{name}.params"
        size = path.stat().st_size
        res["file_gib"] = round(size / 2**30, 2)
        sha = params_io.read_manifest(d, name)["files"][path.name]["sha256"]
        rows_ref = {k: v for k, v in gen.rows.items()}
        for mode, checked, digest in (
            ("trusted", False, None),
            ("trusted_sha", False, sha),
            ("checked", True, sha),
        ):
            if now() > args.deadline_s - 60:
                break
            drop_cache(path)
            st = params_io.LoadStats()
            _, rows = params_io.load_rows(path, be, checked=checked, sha256=digest, stats=st, progress=None)
            same = all(bool((rows[k] == rows_ref[k]).all()) for k in rows)
            res[f"load_{mode}"] = {"s": round(st.seconds, 2), "GB_s": round(st.gb_per_s, 2), "equal": same}
            say(f"{name}: load {mode}: {st.seconds:.2f} s, {st.gb_per_s:.2f} GB/s, equal {same}")
            del rows
        shutil.rmtree(d)
    release_queries(key)
    del key, gen, pr, proof
    pool = getattr(getattr(be, "xp", None), "get_default_memory_pool", None)
    if pool is not None:
        pool().free_all_blocks()  # the next circuit's set-up starts from an empty pool
    return res


def _ints(a: np.ndarray) -> list[int]:
    from cuzk.algebra.fields import FR

    return FR.to_ints(a)


def synthetic_section(be: Any, work: Path, gib: float, args: argparse.Namespace) -> dict[str, Any]:
    """A .params file with the real PoRep layout scaled to `gib`, from a pool of valid points."""
    from cuzk.algebra.curves import G1, G2
    from cuzk.algebra.fields import FR
    from cuzk.groth16 import params_io
    from cuzk.groth16.setup import _fixed_base

    res: dict[str, Any] = {}
    # the real partition: h 2^27 - 1; l = aux ~ 128.8M; a 99.7% of aux; b 25.4% (CONTEXT.md)
    aux = 128_800_000
    counts = {"h": (1 << 27) - 1, "l": aux, "a": int(aux * 0.997) + 328, "b_g1": int(aux * 0.254)}
    counts["b_g2"] = counts["b_g1"]
    full = sum(c * (192 if k == "b_g2" else 96) for k, c in counts.items())
    scale = min(1.0, gib * 2**30 / full)
    counts = {k: max(1, int(c * scale)) for k, c in counts.items()}
    free = shutil.disk_usage(work).free
    total = sum(c * (192 if k == "b_g2" else 96) for k, c in counts.items())
    res["counts"] = counts
    res["file_gib"] = round(total / 2**30, 2)
    res["disk_free_gib"] = round(free / 2**30, 2)
    if total > free - (2 << 30):
        res["skipped"] = "not enough disk"
        return res
    rng = np.random.default_rng(7)
    pool = 1 << 20
    t = time.perf_counter()
    enc = {}
    for group, curve in (("g1", G1), ("g2", G2)):
        rows = _fixed_base(be, curve.generator(), be.to_device(FR.random(pool, rng)), group)
        enc[group] = be.export_points(rows, group).tobytes()
        del rows
    vk_bytes = params_io.vk_to_bytes(_small_vk(be))
    res["pool_s"] = round(time.perf_counter() - t, 2)
    path = work / "synthetic.params"
    t = time.perf_counter()
    with open(path, "wb") as fh:
        fh.write(vk_bytes)
        for name, c in counts.items():
            fh.write(int(c).to_bytes(4, "big"))
            blob = enc["g2" if name == "b_g2" else "g1"]
            per = len(blob) // pool
            left = c
            while left:
                k = min(left, pool)
                fh.write(memoryview(blob)[: k * per])
                left -= k
        fh.flush()
        os.fsync(fh.fileno())
    res["write_s"] = round(time.perf_counter() - t, 2)
    res["write_GB_s"] = round(total / res["write_s"] / 1e9, 2)
    say(f"synthetic: {res['file_gib']} GiB written in {res['write_s']} s ({res['write_GB_s']} GB/s)")
    modes = [("trusted", False)] + ([("checked", True)] if args.checked_load else [])
    for mode, checked in modes:
        if now() > args.deadline_s - 45:
            res[f"load_{mode}"] = "no time left"
            break
        drop_cache(path)
        st = params_io.LoadStats()
        _, rows = params_io.load_rows(path, be, checked=checked, stats=st, progress=say)
        res[f"load_{mode}"] = {
            "s": round(st.seconds, 2),
            "GB_s": round(st.gb_per_s, 2),
            "device": device_gib(be),
        }
        say(f"synthetic: load {mode} {st.seconds:.2f} s, {st.gb_per_s:.2f} GB/s")
        del rows
    # the page cache's rate for the same file (a set read since boot)
    if now() < args.deadline_s - 45:
        st = params_io.LoadStats()
        _, rows = params_io.load_rows(path, be, checked=False, stats=st)
        res["load_trusted_warm"] = {"s": round(st.seconds, 2), "GB_s": round(st.gb_per_s, 2)}
        del rows
    path.unlink()
    return res


def _small_vk(be: Any) -> Any:
    from cuzk.algebra.curves import G1, G2
    from cuzk.groth16.keys import VerifyingKey

    rng = np.random.default_rng(3)
    g1, g2 = G1.random(3, rng), G2.random(3, rng)
    return VerifyingKey(
        alpha_g1=g1[0:1],
        beta_g1=g1[1:2],
        beta_g2=g2[0:1],
        gamma_g2=g2[1:2],
        delta_g1=g1[2:3],
        delta_g2=g2[2:3],
        ic=G1.random(328, rng),
    )


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--out", type=Path, required=True)
    ap.add_argument("--work", type=Path, default=Path("/tmp/cuzk-realsize"))
    ap.add_argument("--circuits", default="porep-13m")
    ap.add_argument("--synthetic-gib", type=float, default=0.0)
    ap.add_argument("--checked-load", action="store_true")
    ap.add_argument("--no-files", action="store_true")
    ap.add_argument("--proofs", type=int, default=2, help="proofs per circuit (the first compiles)")
    ap.add_argument("--deadline-s", type=float, default=540.0)
    ap.add_argument("--backend", default="cuda")
    args = ap.parse_args()
    args.out.mkdir(parents=True, exist_ok=True)
    args.work.mkdir(parents=True, exist_ok=True)
    from cuzk.backends import get_backend

    be = get_backend(args.backend)
    RESULTS["backend"] = be.describe()
    RESULTS["disk"] = {"free_gib": round(shutil.disk_usage(args.work).free / 2**30, 1)}
    status = 0
    order = [("synthetic", None)] if args.synthetic_gib else []
    order = [(c, c) for c in args.circuits.split(",") if c] + order
    for label, name in order:
        if now() > args.deadline_s - 100:
            RESULTS["sections"][label] = "not started: deadline"
            continue
        try:
            if name is None:
                RESULTS["sections"][label] = synthetic_section(be, args.work, args.synthetic_gib, args)
            else:
                RESULTS["sections"][label] = circuit_section(name, be, args.work, args)
        except Exception as exc:  # report and go on: one call must bring back every figure it can
            import traceback

            traceback.print_exc()
            RESULTS["sections"][label] = {"error": f"{type(exc).__name__}: {exc}"}
            status = 1
        RESULTS["peak_rss_gib"] = round(rss_gib(), 2)
        save(args.out)
    RESULTS["wall_s"] = round(now(), 1)
    save(args.out)
    print(json.dumps(RESULTS, indent=1, default=str))
    return status


if __name__ == "__main__":
    sys.exit(main())
