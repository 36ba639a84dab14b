"""Named toggles: every optimization that can be switched is a real code path with a name.

The seed's lesson: five optimizations applied at once cost 17 s and a day of
reverting; each change should be switchable by name, with its expected
effect written beside it, so `cuzk bench ab --a 'k=v' --b 'k=v'` measures one
against the other. Each toggle says what it is expected to do; BENCHMARKS.md
holds what it measured.

Set them with `--set key=value` on every bench command, in the engine config
(`EngineConfig.toggles`), or per request (`ProofRequest.options`). Unknown keys
and bad values are refused with the list of valid ones.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from cuzk import defaults as D
from cuzk.errors import UsageError

#: "full" precomputation: more copies than any MSM has windows (the backend caps them at that).
FULL_COPIES = 64
#: "auto" precomputation: the engine plans copies of the H query within the device memory its
#: model leaves free (cuzk.engine.loader.copies_plan); resolved before any load.
AUTO_COPIES = 0


@dataclass(frozen=True)
class Toggle:
    key: str
    kind: str  # "bool" | "int" | "window" | "choice" | "copies" (an int, or off = 1, full and auto)
    default: Any
    expected: str  # the effect we expect, written before measuring
    choices: tuple[str, ...] = ()
    minimum: int = 1
    maximum: int | None = None

    def parse(self, text: str) -> Any:
        t = text.strip().lower()
        if self.kind == "bool":
            if t in ("1", "true", "yes", "on"):
                return True
            if t in ("0", "false", "no", "off"):
                return False
            raise UsageError(f"{self.key}: expected on or off, not {text!r}")
        if self.kind == "choice":
            if t not in self.choices:
                raise UsageError(f"{self.key}: expected one of {', '.join(self.choices)}, not {text!r}")
            return t
        if self.kind == "window" and t == "auto":
            return None
        if self.kind == "copies" and t in ("off", "full", "auto"):
            return {"off": 1, "full": FULL_COPIES, "auto": AUTO_COPIES}[t]
        top = float("inf") if self.maximum is None else self.maximum
        if not t.isdigit() or not self.minimum <= int(t) <= top:
            span = f">= {self.minimum}" if self.maximum is None else f"of {self.minimum}..{self.maximum}"
            what = {
                "window": "auto or a window of 1..23 bits",
                "copies": "off, auto, full or a number of copies >= 1",
            }.get(self.kind, f"an integer {span}")
            raise UsageError(f"{self.key}: expected {what}, not {text!r}")
        value = int(t)
        if self.kind == "window" and value > 23:
            raise UsageError(f"{self.key}: a window of {value} bits is above the 23 the kernels support")
        return value


def _window(query: str, note: str) -> Toggle:
    return Toggle(
        f"msm.window.{query}",
        "window",
        None,
        f"the Pippenger window of the {note} MSM (auto: chosen from its size). A window a few bits off "
        "the chosen one costs 10-50% of that MSM; 1-2 bits is a planted regression (many times slower).",
    )


TOGGLES: dict[str, Toggle] = {
    t.key: t
    for t in (
        Toggle(
            "staging.pinned",
            "bool",
            True,
            "uploads through two reused page-locked (pinned) staging buffers. Off, a pageable upload holds up "
            "the GPU work beside it: the 2^27 H MSM ran 8.7x slower beside a pageable 4.3 GB stage and 1.00x "
            "beside a pinned one (H100, 2026-12-07). Pinning is paid once per buffer; CUDA backend only.",
        ),
        _window("h", "H query"),
        _window("l", "L query"),
        _window("a", "A query"),
        _window("b_g1", "B query on G1"),
        _window("b_g2", "B query on G2"),
        Toggle(
            "msm.split",
            "bool",
            True,
            "G1 MSMs over device scalars split off their zeros and ones first (the ones summed without "
            "digits, only the full scalars through Pippenger): a PoRep witness is mostly bits, so the A, L "
            "and B_G1 queries become sums. Measured on an H100 (docs/GPU_NOTES.md v30): 0.27 of the plain "
            "MSM at 2^27 on a witness mix, 1.004 with all scalars full; CUDA backend only.",
        ),
        Toggle(
            "msm.chunk_cap",
            "int",
            D.MSM_CHUNK_CAP,
            f"log2 of the most points a G1 MSM scatters per chunk ({D.MSM_CHUNK_CAP_RANGE[0]}.."
            f"{D.MSM_CHUNK_CAP_RANGE[1]}). The 2^27 H MSM needs ~31 GB of "
            "scratch in one chunk and 9.9 GB in four (25, the default, made for the 80 GB H100 beside the "
            "47.5 GB real set); on a card with the room (the H200) 27 is expected to take 3-6% off msm_h "
            "(one chunk ran 928 ms at window 20 on the H200; GPU_NOTES v41). CUDA backend only.",
            minimum=D.MSM_CHUNK_CAP_RANGE[0],
            maximum=D.MSM_CHUNK_CAP_RANGE[1],
        ),
        Toggle(
            "msm.precompute",
            "copies",
            D.MSM_PRECOMPUTE,
            "shifted copies 2^(j c) P of each G1 base kept with the SRS (off = 1; full = one per window), so "
            "the windows of an MSM share bucket sets and the window grows: the cost model expects the H200's "
            "G1 MSM 2^24 -17% with full copies (13 x 1.6 GiB) and -7% with 4; built once per SRS load (c "
            "doublings per copy), counted in the SRS's memory; CUDA backend only (the CPU keeps none). auto: "
            f"copies of the H query only (up to {D.MSM_AUTO_COPIES}), as many as the device memory the engine's "
            "model leaves beside the set, one unit's peak and the other workers' staged units (the 0/1 split "
            "leaves A, L and B_G1 little to gain); against the best plain window, 2 / 3 copies took 4.1 / 5.5% "
            "off the 2^27 H MSM on the H200 (GPU_NOTES v32), so that much of msm_h where the card has the room.",
        ),
        Toggle(
            "msm.g2_on",
            "choice",
            D.G2_ON,
            "where the B MSM on G2 runs: cpu keeps it off the device lock in the finalizer (the reference's "
            "split; porep-13m sectors took 7.73 s on it against 3.91 s with device, H200 2026-12-03, and "
            "wpost-32g's ran past 163 s); device runs it in the kernel region, serialized with the other MSMs; "
            "stream runs it there too but keeps the G2 query in host memory and streams it through the card in "
            "2^23-point chunks (3.74 s for wpost-32g's on an H100). auto, per key: device where the set with "
            "its G2 query, one unit's peak and the other workers' staged units fit the card, else stream; cpu "
            "off a GPU.",
            choices=D.G2_ON_CHOICES,
        ),
        Toggle(
            "synthesis.abc_on",
            "choice",
            D.ABC_ON,
            "where a = A.w, b = B.w, c = C.w are computed: worker (in the synthesis process, on the CPU) or "
            "device (the worker hands over the witness alone, 4x fewer bytes, and the SpMV runs under the "
            "device lock: 14 ms for porep-13m on the H200, so it pays there: 3.88 s per porep-13m sector "
            "against 6.83 s, 2026-12-03; on the CPU backend it moves work onto the GPU stage); auto: device "
            "with CUDA, worker on the CPU backend.",
            choices=("auto", "worker", "device"),
        ),
        Toggle("batch.max_size", "int", D.MAX_BATCH_SIZE, "same-circuit jobs merged into one prover pass: the reference "
               "measured 1.42-1.46x throughput for 2 sectors per pass, at twice the memory per pass."),
        Toggle("gpu.workers_per_device", "int", D.GPU_WORKERS_PER_DEVICE, "GPU workers per device sharing one kernel-region lock: "
               "with 2, one worker's host work overlaps the other's kernels (the reference: 100% GPU busy)."),
        Toggle("synthesis.workers", "int", D.SYNTHESIS_WORKERS, "synthesis worker processes: throughput scales with cores "
               "until memory or the GPU bounds it."),
        Toggle("finalize.split", "bool", D.SPLIT_FINALIZE, "G2 MSM, assembly and verification in finalizer threads, off "
               "the GPU worker: the worker picks up the next partition that much sooner."),
        Toggle("upload.prestage", "bool", D.PRESTAGE_UPLOADS, "a GPU worker uploads its partition's vectors before taking the "
               "device lock, so copies overlap the other worker's kernels (the reference: NTT+MSM_H "
               "2.4 s -> 0.69 s per partition with pinned, pre-staged uploads). With synthesis.abc_on="
               "device the witness is stacked and uploaded once, before the lock, and the MSMs reuse that "
               "copy (expected on porep-13m, H200: the lock hold 850 -> ~450 ms per partition)."),
    )
}  # fmt: skip


def parse_settings(pairs: Iterable[str]) -> dict[str, Any]:
    """`key=value` texts -> validated values; unknown keys are refused with the valid ones."""
    out: dict[str, Any] = {}
    for pair in pairs:
        key, sep, value = pair.partition("=")
        key = key.strip()
        if not sep or not key:
            raise UsageError(f"--set takes key=value, not {pair!r}; valid keys: {', '.join(TOGGLES)}")
        if key not in TOGGLES:
            raise UsageError(f"unknown toggle {key!r}; valid keys: {', '.join(TOGGLES)}")
        out[key] = TOGGLES[key].parse(value)
    return out


def resolved(settings: Mapping[str, Any] | None = None) -> dict[str, Any]:
    """Every toggle's value: the defaults, overridden by `settings` (already parsed)."""
    values = {k: t.default for k, t in TOGGLES.items()}
    for key, value in (settings or {}).items():
        if key not in TOGGLES:
            raise UsageError(f"unknown toggle {key!r}; valid keys: {', '.join(TOGGLES)}")
        values[key] = value
    return values


def windows(settings: Mapping[str, Any] | None) -> dict[str, int]:
    """The per-MSM window overrides in `settings`: {query: bits} for the ones not auto."""
    values = resolved(settings)
    return {
        k.rsplit(".", 1)[1]: v for k, v in values.items() if k.startswith("msm.window.") and v is not None
    }


def differing(a: Mapping[str, Any], b: Mapping[str, Any]) -> list[str]:
    """The toggles whose resolved values differ between two settings (for `bench ab`'s report)."""
    ra, rb = resolved(a), resolved(b)
    return [k for k in TOGGLES if ra[k] != rb[k]]
