"""cuzk vs snarkjs: `groth16 prove` wall time on the same .zkey and .wtns, in the same run.

    python benchmarks/vs_snarkjs.py            # ~30k and ~2^20 constraints, median of 5 each
    python benchmarks/vs_snarkjs.py --quick    # only the ~30k circuit, median of 3
    python benchmarks/vs_snarkjs.py --runs 7 --circuits small --json out.json

Circuits: MerklePaths(paths, depth 20) over circomlib's Poseidon(2), compiled
by circom2 with --prime bls12381 and circom's default simplification (--O1;
--O2 runs out of circom2's 4 GiB WebAssembly memory near 2^20): 520
constraints per level, so 3 paths give 31,200 constraints (domain 2^15) and
100 paths 1,040,000 (domain 2^20, 1,042,101 signals).
The witness comes from `snarkjs wtns calculate` on random inputs (seeded).
Keys come from `cuzk groth16 setup` (snarkjs's own powers-of-tau preparation
would take hours at 2^20 here); snarkjs proves with them and the script checks
that `snarkjs groth16 verify` accepts both tools' proofs before timing.

Each run is a fresh process per tool (`node snarkjs groth16 prove ...` and
`python -m cuzk.cli.main groth16 prove --backend cpu ...`), alternating, so
both pay their start-up (interpreter, JIT or WASM compile, file reads) and see
the same machine load. cuzk's per-phase times come from its CUZK_TIMING lines.
Compiled circuits, witnesses and keys are cached under the work directory
(--work, default <cuzk cache>/bench/vs_snarkjs).

Do not record figures while the machine is shared or busy.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import random
import re
import statistics
import subprocess
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # the repository root, for tools/

from cuzk.algebra import constants as C
from cuzk.paths import cache_dir
from tools.toolchain import SNARKJS_VERSION, Toolchain

DEPTH = 20
CIRCUITS = {"small": 3, "large": 100}  # Merkle paths of depth 20
#: Top-level spans only (synthesis holds witness and matvec), so that "other" subtracts each once.
PHASES = [
    "load_key",
    "synthesis",
    "ntt_h",
    "msm_h",
    "msm_c",
    "msm_a",
    "msm_b_g1",
    "msm_b_g2",
    "epilogue",
    "verify",
]

SOURCE = """pragma circom 2.0.0;
include "circomlib/circuits/poseidon.circom";

template MerkleLevel() {
    signal input cur;
    signal input sibling;
    signal input bit;
    signal output out;
    bit * (1 - bit) === 0;
    signal left;
    left <== (sibling - cur) * bit + cur;
    component h = Poseidon(2);
    h.inputs[0] <== left;
    h.inputs[1] <== cur + sibling - left;
    out <== h.out;
}

template MerklePaths(paths, depth) {
    signal input leaves[paths];
    signal input siblings[paths][depth];
    signal input bits[paths][depth];
    signal output roots[paths];
    component lv[paths][depth];
    for (var p = 0; p < paths; p++) {
        for (var d = 0; d < depth; d++) {
            lv[p][d] = MerkleLevel();
            lv[p][d].cur <== d == 0 ? leaves[p] : lv[p][d - 1].out;
            lv[p][d].sibling <== siblings[p][d];
            lv[p][d].bit <== bits[p][d];
        }
        roots[p] <== lv[p][depth - 1].out;
    }
}

component main = MerklePaths(PATHS, DEPTH);
"""


@dataclass
class Prepared:
    name: str
    paths: int
    zkey: Path
    wtns: Path
    vk: Path
    constraints: int
    domain: int


@dataclass
class Result:
    name: str
    constraints: int
    domain: int
    snarkjs_s: list[float] = field(default_factory=list)
    cuzk_s: list[float] = field(default_factory=list)
    phases_ms: dict[str, list[float]] = field(default_factory=dict)


def say(msg: str) -> None:
    print(msg, file=sys.stderr, flush=True)


def _cuzk_cmd(*args: str | Path) -> list[str]:
    return [sys.executable, "-m", "cuzk.cli.main", "groth16", *map(str, args)]


def _env() -> dict[str, str]:
    """Child processes import the same cuzk as this one (a checkout on PYTHONPATH or an install)."""
    import cuzk

    src = str(Path(cuzk.__file__).resolve().parents[1])
    env = dict(os.environ)
    env["PYTHONPATH"] = src + (os.pathsep + env["PYTHONPATH"] if env.get("PYTHONPATH") else "")
    return env


def prepare(tools: Toolchain, work: Path, name: str, paths: int) -> Prepared:
    d = work / f"merkle_{paths}x{DEPTH}_O1"
    d.mkdir(parents=True, exist_ok=True)
    circuit = d / "circuit.circom"
    r1cs, wasm = d / "circuit.r1cs", d / "circuit_js" / "circuit.wasm"
    wtns, zkey, vk = d / "circuit.wtns", d / "circuit.zkey", d / "vk.json"
    if not r1cs.exists() or not wasm.exists():
        circuit.write_text(SOURCE.replace("PATHS", str(paths)).replace("DEPTH", str(DEPTH)))
        say(f"[{name}] compiling {paths} Merkle paths of depth {DEPTH} with circom2 (one-off)")
        tools.circom(circuit, d, "--O1")
    if not wtns.exists():
        rnd = random.Random(paths)
        inputs = {
            "leaves": [str(rnd.randrange(C.R)) for _ in range(paths)],
            "siblings": [[str(rnd.randrange(C.R)) for _ in range(DEPTH)] for _ in range(paths)],
            "bits": [[str(rnd.randrange(2)) for _ in range(DEPTH)] for _ in range(paths)],
        }
        say(f"[{name}] computing the witness (snarkjs wtns calculate)")
        tools.witness(wasm, inputs, wtns)
    if not zkey.exists():
        say(f"[{name}] making the key with `cuzk groth16 setup` (one-off)")
        subprocess.run(_cuzk_cmd("setup", "--backend", "cpu", r1cs, zkey), env=_env(), check=True)
    if not vk.exists():
        subprocess.run(_cuzk_cmd("export-vk", zkey, vk), env=_env(), check=True)
    from cuzk.interop.r1cs import read_r1cs
    from cuzk.interop.zkey import snarkjs_domain_size

    r = read_r1cs(r1cs)
    return Prepared(
        name, paths, zkey, wtns, vk, r.n_constraints, snarkjs_domain_size(r.n_constraints, r.n_public)
    )


def _timed(cmd: list[str], env: dict[str, str] | None = None) -> tuple[float, str]:
    t0 = time.perf_counter()
    proc = subprocess.run(cmd, capture_output=True, text=True, env=env, check=False)
    dt = time.perf_counter() - t0
    if proc.returncode != 0:
        raise SystemExit(f"failed ({proc.returncode}): {' '.join(cmd)}\n{proc.stdout}\n{proc.stderr}")
    return dt, proc.stderr


def _check(tools: Toolchain, p: Prepared, proof: Path, public: Path, who: str) -> None:
    rc, out = tools.snarkjs_status("groth16", "verify", p.vk, public, proof)
    if rc != 0 or "OK!" not in out:
        raise SystemExit(f"snarkjs rejected the {who} proof for {p.name}:\n{out}")


def bench(tools: Toolchain, p: Prepared, runs: int, work: Path) -> Result:
    out = work / "out"
    out.mkdir(exist_ok=True)
    res = Result(p.name, p.constraints, p.domain)
    snark_cli = str(tools.node_modules / "snarkjs" / "build" / "cli.cjs")
    env = _env() | {"CUZK_TIMING": "1"}
    for i in range(runs):
        dt, _ = _timed(
            [
                "node",
                snark_cli,
                "groth16",
                "prove",
                str(p.zkey),
                str(p.wtns),
                str(out / "s.json"),
                str(out / "sp.json"),
            ]
        )
        res.snarkjs_s.append(dt)
        cmd = _cuzk_cmd("prove", "--backend", "cpu", p.zkey, p.wtns, out / "c.json", out / "cp.json")
        dt, err = _timed(cmd, env)
        res.cuzk_s.append(dt)
        for name, ms in re.findall(r"CUZK_TIMING .*?span=(\w+) ms=([\d.]+)", err):
            res.phases_ms.setdefault(name, []).append(float(ms))
        say(f"[{p.name}] run {i + 1}/{runs}: snarkjs {res.snarkjs_s[-1]:.2f} s, cuzk {res.cuzk_s[-1]:.2f} s")
        if i == 0:
            _check(tools, p, out / "s.json", out / "sp.json", "snarkjs")
            _check(tools, p, out / "c.json", out / "cp.json", "cuzk")
    return res


def report(results: list[Result], runs: int) -> str:
    lines = [
        f"cuzk vs snarkjs {SNARKJS_VERSION}, groth16 prove wall time, median of {runs} "
        f"({platform.machine()}, {os.cpu_count()} cpus, python {platform.python_version()})",
        "",
        "| circuit | constraints | domain | snarkjs s | cuzk cpu s | cuzk / snarkjs |",
        "|---|---:|---:|---:|---:|---:|",
    ]
    for r in results:
        s, c = statistics.median(r.snarkjs_s), statistics.median(r.cuzk_s)
        lines.append(
            f"| {r.name} | {r.constraints:,} | 2^{r.domain.bit_length() - 1} | {s:.2f} | {c:.2f} | {c / s:.2f} |"
        )
    lines += ["", "cuzk phases (median ms):", ""]
    names = [n for n in PHASES if any(n in r.phases_ms for r in results)]
    lines.append("| circuit | " + " | ".join(names) + " | other |")
    lines.append("|---|" + "---:|" * (len(names) + 1))
    for r in results:
        med = {n: statistics.median(v) for n, v in r.phases_ms.items()}
        other = statistics.median(r.cuzk_s) * 1e3 - sum(med.get(n, 0.0) for n in names)
        lines.append(
            f"| {r.name} | " + " | ".join(f"{med.get(n, 0.0):.0f}" for n in names) + f" | {other:.0f} |"
        )
    lines.append("")
    lines.append("other = process start-up, imports, JIT cache loads and file writes.")
    return "\n".join(lines)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--quick", action="store_true", help="only the ~30k circuit, 3 runs")
    ap.add_argument("--runs", type=int, help="runs per tool (default 5, or 3 with --quick)")
    ap.add_argument("--circuits", default=None, help="comma list of: " + ", ".join(CIRCUITS))
    ap.add_argument("--work", type=Path, default=None, help="cache of circuits, witnesses and keys")
    ap.add_argument("--json", type=Path, help="also write the raw timings here")
    args = ap.parse_args()
    names = (args.circuits or ("small" if args.quick else "small,large")).split(",")
    unknown = [n for n in names if n not in CIRCUITS]
    if unknown:
        ap.error(f"unknown circuit(s) {unknown}; choose from {list(CIRCUITS)}")
    runs = args.runs or (3 if args.quick else 5)
    work = args.work or cache_dir("bench", "vs_snarkjs")
    tools = Toolchain.ensure()
    results = []
    for name in names:
        prepared = prepare(tools, work, name, CIRCUITS[name])
        results.append(bench(tools, prepared, runs, work))
    text = report(results, runs)
    print(text)
    if args.json:
        args.json.write_text(json.dumps([r.__dict__ for r in results], indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
