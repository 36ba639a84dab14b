"""Mutation fuzzing of every decoder of outside bytes: `python fuzz/run.py [--inputs N] [--only NAME,...]`.

Each input is a valid seed mutated (bit flips, byte sets to boundary values,
insertions, deletions, truncations, duplicated or swapped blocks, splices of
two seeds, little-endian length fields set to absurd values). The outcome per
input is one of: decoded, refused with a cuzk error that names what was wrong,
or a bug: another exception class, an empty message, or a hang (over
--hang-s of CPU time, caught with SIGPROF). Bugs are written to --out with the input that
caused them; the table at the end is what docs/RELIABILITY.md records.
The same targets run coverage-guided (libFuzzer via atheris) with fuzz/guided.py;
this engine is the reproducible one (a seed fixes every input) and needs no atheris.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import random
import signal
import sys
import time
import traceback
from collections import Counter
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "src"))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from targets import Target, targets

from cuzk.errors import CuzkError

BOUNDARY = (0x00, 0x01, 0x7F, 0x80, 0xFE, 0xFF)


class Hang(Exception):
    pass


def mutate(rng: random.Random, seeds: tuple[bytes, ...]) -> bytes:
    data = bytearray(rng.choice(seeds))
    for _ in range(rng.choice((1, 1, 1, 2, 3, 8))):
        op = rng.randrange(9)
        n = len(data)
        if op == 0 and n:  # flip a bit
            i = rng.randrange(n)
            data[i] ^= 1 << rng.randrange(8)
        elif op == 1 and n:  # a boundary byte
            data[rng.randrange(n)] = rng.choice(BOUNDARY)
        elif op == 2:  # insert bytes
            i = rng.randrange(n + 1)
            data[i:i] = bytes(rng.randrange(256) for _ in range(rng.choice((1, 4, 8, 32))))
        elif op == 3 and n:  # delete a run
            i = rng.randrange(n)
            del data[i : i + rng.choice((1, 4, 32, 256))]
        elif op == 4 and n:  # truncate
            del data[rng.randrange(n) :]
        elif op == 5 and n > 8:  # duplicate a block
            i, j = sorted(rng.randrange(n) for _ in range(2))
            data[j:j] = data[i : min(j, i + 512)]
        elif op == 6 and n >= 4:  # an absurd little-endian u32 / u64 (section sizes, counts)
            i = rng.randrange(n - 3)
            width = 8 if i + 8 <= n and rng.random() < 0.5 else 4
            value = rng.choice((0, 1, 2**31, 2**32 - 1, 2**63, 2 ** (8 * width) - 1, rng.randrange(2**20)))
            data[i : i + width] = (value % (2 ** (8 * width))).to_bytes(width, "little")
        elif op == 7:  # splice with another seed
            other = rng.choice(seeds)
            cut = rng.randrange(len(other) + 1)
            data = data[: rng.randrange(n + 1)] + bytearray(other[cut:])
        elif op == 8 and n:  # swap two bytes
            i, j = rng.randrange(n), rng.randrange(n)
            data[i], data[j] = data[j], data[i]
    return bytes(data)


def _alarm(_signum: int, _frame: object) -> None:
    raise Hang()


def _warm_up(target: Target) -> None:
    """Decode the seeds once, untimed: the first calls compile numba kernels, and an alarm raised
    inside numba's compiler leaves it broken (the first full run died in libllvmlite that way)."""
    for data in target.seeds:
        with contextlib.suppress(CuzkError):
            target.decode(data)


def run_target(target: Target, inputs: int, seed: int, hang_s: float, out: Path | None) -> dict:
    rng = random.Random(f"{seed}:{target.name}")
    counts: Counter[str] = Counter()
    bugs: list[dict] = []
    _warm_up(target)
    # CPU time, not wall time: on a shared machine at nice 19 a decoder may wait seconds for a core
    signal.signal(signal.SIGPROF, _alarm)
    t0 = time.perf_counter()
    for i in range(inputs):
        data = mutate(rng, target.seeds) if i >= len(target.seeds) else target.seeds[i]
        signal.setitimer(signal.ITIMER_PROF, hang_s)
        try:
            target.decode(data)
            counts["decoded"] += 1
        except Hang:
            bugs.append({"kind": "hang", "input": data.hex()[:20000]})
        except CuzkError as exc:
            if str(exc).strip():
                counts["refused"] += 1
                counts[type(exc).__name__] += 1
            else:
                bugs.append({"kind": f"empty message from {type(exc).__name__}", "input": data.hex()[:20000]})
        except Exception as exc:
            bugs.append(
                {
                    "kind": f"{type(exc).__name__}: {str(exc)[:200]}",
                    "traceback": traceback.format_exc()[-3000:],
                    "input": data.hex()[:20000],
                }
            )
        finally:
            signal.setitimer(signal.ITIMER_PROF, 0)
    seconds = time.perf_counter() - t0
    if bugs and out is not None:
        out.mkdir(parents=True, exist_ok=True)
        (out / f"{target.name}.json").write_text(json.dumps(bugs, indent=1))
    kinds = Counter(b["kind"].split(":")[0] for b in bugs)
    return {
        "target": target.name,
        "inputs": inputs,
        "decoded": counts["decoded"],
        "refused": counts["refused"],
        "bugs": len(bugs),
        "bug_kinds": dict(kinds),
        "errors": {k: v for k, v in counts.items() if k not in ("decoded", "refused")},
        "seconds": round(seconds, 1),
    }


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--inputs", type=int, default=100_000, help="inputs per target (default 100000)")
    p.add_argument("--only", default="", help="comma-separated target names (default: all)")
    p.add_argument("--seed", type=int, default=1, help="mutation seed")
    p.add_argument("--hang-s", type=float, default=10.0, help="an input taking more CPU seconds is a hang")
    p.add_argument("--out", type=Path, default=Path("fuzz-findings"), help="where bug inputs are written")
    p.add_argument("--json", type=Path, help="also write the table as JSON")
    args = p.parse_args(argv)
    chosen = set(filter(None, args.only.split(",")))
    rows = []
    for target in targets():
        if chosen and target.name not in chosen:
            continue
        row = run_target(target, args.inputs, args.seed, args.hang_s, args.out)
        rows.append(row)
        print(
            f"{row['target']:16} {row['inputs']:8} inputs  {row['decoded']:7} decoded  {row['refused']:8} refused"
            f"  {row['bugs']:4} bugs  {row['seconds']:7.1f} s  {row['bug_kinds'] or ''}",
            flush=True,
        )
    if args.json:
        args.json.write_text(json.dumps(rows, indent=1) + "\n")
    return 1 if any(r["bugs"] for r in rows) else 0


if __name__ == "__main__":
    sys.exit(main())
