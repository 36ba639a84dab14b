"""A/B comparison of per-phase timings: medians, a noise band from the repeats, a verdict per phase.

The seed's regression hunt applied five changes at once and then reverted them
one by one; `cuzk bench ab` instead alternates A and B runs (ABAB, so drift
and thermal or cache effects hit both), and judges each phase against the
noise its own repeats show, so a planted regression in one MSM is named and
the untouched phases are "within noise".

Timing noise is multiplicative (a loaded machine or a cold cache slows a
phase by a factor, and a phase made five times slower jitters five times as
much in milliseconds), so each phase is judged on the log of its times. The
band for a phase, in log units, is the largest of: NOISE_SIGMAS standard
errors of the difference of the two log medians (a run's spread taken
robustly as 1.4826 x the median absolute deviation of the noisier side; a
median's standard error is about 1.2533 sigma / sqrt(n)) and log(1 +
REL_FLOOR); a change must also exceed ABS_FLOOR_S. The floors keep
sub-millisecond phases and a handful of runs, whose spread estimate is itself
noisy, from being judged on jitter: a change smaller than a fifth of a phase
needs its own measurement, not this verdict. (Judged in milliseconds, the
slow side's spread alone once hid a 4.8x slower MSM behind its own band.)

The verdict is taken against the band as printed, in seconds on A's median:
a phase regressed when B - A exceeds it, improved when A - B exceeds it. (A
band symmetric in logs is asymmetric in seconds, and judging improvements in
logs once printed "improved" beside a delta inside its own band: issue 29.)
Below MIN_RUNS runs per side the spread cannot be estimated (three runs of
identical A and B were called "improved" on a loaded machine), so every
phase reads "too few runs" and nothing is judged.
"""

from __future__ import annotations

import math
import statistics
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from cuzk.errors import UsageError

NOISE_SIGMAS = 4.0
REL_FLOOR = 0.20
ABS_FLOOR_S = 0.002
MAD_TO_SIGMA = 1.4826
MIN_RUNS = 5  # runs per side below which nothing is judged (the CLI's default --runs)
TOO_FEW = "too few runs"
MEDIAN_SE = 1.2533  # sqrt(pi / 2): a median's standard error in units of sigma / sqrt(n)
_TINY = 1e-9  # a phase timed at zero still has a logarithm


@dataclass(frozen=True)
class PhaseVerdict:
    phase: str
    a_median: float
    b_median: float
    band: float
    verdict: str  # "regressed" | "improved" | "within noise" | TOO_FEW

    @property
    def delta(self) -> float:
        return self.b_median - self.a_median

    @property
    def ratio(self) -> float:
        return self.b_median / self.a_median if self.a_median > 0 else float("inf")


def _log_band(a: Sequence[float], b: Sequence[float]) -> float:
    la = [math.log(max(x, _TINY)) for x in a]
    lb = [math.log(max(x, _TINY)) for x in b]
    ma, mb = statistics.median(la), statistics.median(lb)
    mad = max(statistics.median(abs(x - ma) for x in la), statistics.median(abs(x - mb) for x in lb))
    stderr = MEDIAN_SE * MAD_TO_SIGMA * mad * math.sqrt(1 / len(a) + 1 / len(b))
    return max(NOISE_SIGMAS * stderr, math.log1p(REL_FLOOR))


def noise_band(a: Sequence[float], b: Sequence[float]) -> float:
    """How far above A's median B's may lie by chance, in seconds (see the module docstring)."""
    return max(statistics.median(a) * math.expm1(_log_band(a, b)), ABS_FLOOR_S)


def judge(phase: str, a: Sequence[float], b: Sequence[float]) -> PhaseVerdict:
    if not a or not b:
        raise UsageError(f"phase {phase}: both sides need at least one run")
    ma, mb = statistics.median(a), statistics.median(b)
    band = noise_band(a, b)  # what the table prints: the verdict never contradicts it
    if min(len(a), len(b)) < MIN_RUNS:
        verdict = TOO_FEW
    elif mb - ma > band:
        verdict = "regressed"
    elif ma - mb > band:
        verdict = "improved"
    else:
        verdict = "within noise"
    return PhaseVerdict(phase, ma, mb, band, verdict)


def compare(
    runs_a: Sequence[Mapping[str, float]], runs_b: Sequence[Mapping[str, float]]
) -> list[PhaseVerdict]:
    """One verdict per phase present in every run of both sides, in first-seen order, then `total`."""
    phases = list(dict.fromkeys(p for run in (*runs_a, *runs_b) for p in run))
    common = [p for p in phases if all(p in r for r in (*runs_a, *runs_b))]
    out = [judge(p, [r[p] for r in runs_a], [r[p] for r in runs_b]) for p in common if p != "total"]
    if all("total" in r for r in (*runs_a, *runs_b)):
        out.append(judge("total", [r["total"] for r in runs_a], [r["total"] for r in runs_b]))
    return out


def alternate(runs: int) -> list[str]:
    """The run order: ABAB... (`runs` of each)."""
    return [side for _ in range(runs) for side in ("a", "b")]
