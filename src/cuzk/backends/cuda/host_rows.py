"""Bases kept in host memory and summed on the device a chunk at a time (msm.g2_on=stream).

wpost-32g's G2 query is 123.6M points, 23.7 GB. On an 80 GB card it does not fit beside the
45.5 GB G1 set and a partition's ~21 GB, and the CPU's G2 MSM over it ran for more than 163 s
without finishing (H100, 2026-12-07, docs/BENCHMARKS.md). With the rows on the host and streamed,
the card holds two chunks of them. A helper thread stages the next chunk on the upload stream
while the current chunk's MSM runs, so the copy overlaps the kernels.

`HostRowsBackend` is a CudaBackend on the same runtime (device, pool, budget, streams) whose
`load_bases` keeps the rows on the host. Everything else is the device backend's: the 0/1
split, the Pippenger plan and the chunk cap. One chunk is one MSM over a temporary device
handle, and the chunks' sums are added on the host.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass
from typing import Any

import numpy as np

from cuzk.backends.base import Backend, Bases, Group
from cuzk.backends.cuda.backend import CudaBackend, CudaBases, _curve, check_scalars, rows_of

#: Points per streamed chunk: 2^23 G2 rows are 1.6 GB, two of them 3.2 GB on the card, and a
#: chunk's MSM scratch is what a 2^23-point MSM plans.
STREAM_CHUNK = 1 << 23


@dataclass
class HostRowBases(Bases):
    """Affine (n, 2 width) uint64 rows in host memory, streamed to the device per MSM."""

    group: Group
    n: int
    rows: np.ndarray | None
    nbytes: int
    owner: int  # id of the HostRowsBackend that made the handle


class HostRowsBackend(CudaBackend):
    """The device backend's MSMs over host-resident bases (module docstring)."""

    #: where a key's queries on this backend live: the setup writes b_g2 out as host rows for it
    bases_on_host = True

    def __init__(self, device_backend: CudaBackend, *, chunk: int = STREAM_CHUNK) -> None:
        if chunk < 1:
            raise ValueError(f"a streamed chunk holds at least one point, got {chunk}")
        super().__init__(
            device=device_backend.device,
            runtime=device_backend.rt,
            msm_chunks=device_backend.msm_chunks,
            msm_split=device_backend.msm_split,
            msm_chunk_cap=device_backend.msm_max_chunk.bit_length() - 1,
        )
        self.chunk = chunk
        self._prefetch = ThreadPoolExecutor(1, thread_name_prefix="cuzk-stream")

    @property
    def label(self) -> str:
        return f"{self.name}:{self.device}:host-rows"

    def streamed(self) -> Backend:
        return self

    # --- handles ------------------------------------------------------------------------------
    def load_bases(self, points: np.ndarray, group: Group) -> HostRowBases:  # type: ignore[override]
        if not isinstance(points, np.ndarray):
            points = self.to_host(points)
        rows = _curve(group)._aff(np.asarray(points, dtype=np.uint64))
        return HostRowBases(group=group, n=rows.shape[0], rows=rows, nbytes=rows.nbytes, owner=id(self))

    def bases_from_device(self, rows: Any, group: Group) -> HostRowBases:  # type: ignore[override]
        host = self.to_host(rows)
        return self.load_bases(host.reshape(host.shape[0], *_curve(group).affine_shape), group)

    def release(self, bases: Bases) -> None:
        self._host(bases).rows = None

    def precompute(
        self,
        bases: Bases,
        copies: int,
        *,
        progress: Callable[[str], None] | None = None,
        window: int | None = None,
    ) -> int:
        """No copies: the rows stream through the device once per MSM."""
        self._host(bases)
        return Backend.precompute(self, bases, copies)

    def precompute_cost(self, n: int, group: Group, copies: int) -> int:
        return 0

    def msm_scratch_bytes(self, n: int, group: Group = "g1") -> int:
        """A chunk's MSM scratch and the two chunks of rows on the card (the one summed, the
        next one staged)."""
        k = min(max(1, n), self.chunk)
        return super().msm_scratch_bytes(k, group) + 2 * k * 2 * _curve(group).field.width * 8

    def _host(self, bases: Bases) -> HostRowBases:
        if not isinstance(bases, HostRowBases) or bases.owner != id(self):
            raise TypeError(f"these bases were not loaded by this backend ({self.label})")
        return bases

    def _rows(self, bases: Bases, start: int, count: int) -> Any:
        if isinstance(bases, CudaBases):  # a chunk's handle, inside CudaBackend.msm
            return super()._rows(bases, start, count)
        b = self._host(bases)
        return rows_of(b.rows, b.n, start, count)

    # --- sums -----------------------------------------------------------------------------------
    def msm(self, bases: Bases, scalars: Any, *, start: int = 0, window: int | None = None) -> np.ndarray:
        if scalars.ndim == 3:
            return np.stack([self.msm(bases, s, start=start, window=window) for s in scalars])
        check_scalars(scalars)
        rows = self._rows(bases, start, scalars.shape[0])
        sc = self.to_device(scalars)
        return self._sum(
            bases.group, rows, lambda dev, a, b: CudaBackend.msm(self, dev, sc[a:b], window=window)
        )

    def sum_bases(self, bases: Bases, mask: Any, *, start: int = 0) -> np.ndarray:
        rows = self._rows(bases, start, mask.shape[0])
        m = self.to_device(np.asarray(mask, dtype=np.bool_)) if isinstance(mask, np.ndarray) else mask
        return self._sum(bases.group, rows, lambda dev, a, b: CudaBackend.sum_bases(self, dev, m[a:b]))

    def _sum(
        self, group: Group, rows: np.ndarray, part: Callable[[CudaBases, int, int], np.ndarray]
    ) -> np.ndarray:
        """sum over the chunks of part(the chunk on the device, its bounds), each chunk staged
        while the one before it is summed."""
        curve = _curve(group)
        acc = curve.to_jacobian(curve.identity(1))[0]
        for (a, b), dev in self._chunks(rows):
            handle = CudaBases(group=group, n=b - a, rows=dev, nbytes=dev.nbytes, owner=id(self))
            acc = curve.add(acc[None], part(handle, a, b)[None])[0]
            # the part read its chunk to the end: its result came back to the host
            del handle, dev
        return acc

    def _chunks(self, rows: np.ndarray) -> Iterator[tuple[tuple[int, int], Any]]:
        """(bounds, device rows) per chunk; the next chunk's staging is in flight meanwhile."""
        bounds = [(a, min(a + self.chunk, rows.shape[0])) for a in range(0, rows.shape[0], self.chunk)]
        ahead: Future[Any] | None = None
        try:
            for i, (a, b) in enumerate(bounds):
                dev = ahead.result() if ahead is not None else self.rt.stage(rows[a:b])
                ahead = None
                if i + 1 < len(bounds):
                    c, d = bounds[i + 1]
                    ahead = self._prefetch.submit(self.rt.stage, rows[c:d])
                yield (a, b), dev
        finally:
            if ahead is not None:  # an error mid-sum: let the copy land before its rows are dropped
                ahead.exception()

    def describe(self) -> dict[str, Any]:
        return {**super().describe(), "bases": "host rows, streamed", "stream_chunk": self.chunk}
