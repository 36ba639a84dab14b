"""What a caller asks the engine for, and what it gets back: plain data, no behaviour.

One `ProofRequest` names a circuit from the registry (or a snarkjs zkey with
circom witnesses), the instances to prove (a seed for random valid ones, or
explicit instances), how many partitions (instances proved as one job, each
its own unit of synthesis and GPU work), a priority and a request id. Every
layer that proves (the CLI, the benchmarks, the synchronous `LocalProver`, the
pipelined `Engine`, the daemon) speaks this one type.
"""

from __future__ import annotations

import enum
import os
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from cuzk.errors import UsageError


class Priority(enum.IntEnum):
    """Scheduling classes, numbered as the reference's wire enum (higher runs first)."""

    LOW = 1
    NORMAL = 2
    HIGH = 3
    CRITICAL = 4


#: The reference's default class per proof family: WinningPoSt must finish within an epoch.
DEFAULT_PRIORITY: Mapping[str, Priority] = {
    "winning": Priority.CRITICAL,
    "wpost": Priority.HIGH,
    "porep": Priority.NORMAL,
    "snap": Priority.NORMAL,
}


class JobStatus(enum.Enum):
    """A job's life: QUEUED -> RUNNING -> exactly one of the three terminal states."""

    QUEUED = "queued"
    RUNNING = "running"
    COMPLETED = "completed"
    FAILED = "failed"
    CANCELLED = "cancelled"

    @property
    def terminal(self) -> bool:
        return self in (JobStatus.COMPLETED, JobStatus.FAILED, JobStatus.CANCELLED)


WitnessSource = np.ndarray | str | os.PathLike[str]


@dataclass(frozen=True)
class ProofRequest:
    """One job. Exactly one of `circuit` and `zkey` is set.

    - circuit: a registry name (`cuzk circuits`); instances come from `seed`
      (partition j proves the random valid instance of seed + j) or from
      `instances` (one per partition, which then sets the partition count).
    - zkey: a snarkjs key file; `witnesses` holds one circom witness (a .wtns
      path or an (nVars, 4) Montgomery array) per partition.
    """

    circuit: str | None = None
    seed: int = 0
    instances: Sequence[Mapping[str, np.ndarray]] | None = None
    zkey: str | os.PathLike[str] | None = None
    witnesses: Sequence[WitnessSource] | None = None
    partitions: int | None = None
    priority: Priority | None = None
    request_id: str = ""
    params_dir: str | os.PathLike[str] | None = None  # a `cuzk setup` folder; None: the cache
    options: Mapping[str, Any] = field(default_factory=dict)  # cuzk.toggles values, e.g. msm.window.l

    def __post_init__(self) -> None:
        if (self.circuit is None) == (self.zkey is None):
            raise UsageError("a proof request names exactly one of a circuit and a zkey")
        if self.zkey is not None and not self.witnesses:
            raise UsageError("a zkey request needs at least one circom witness")
        if self.zkey is None and self.witnesses:
            raise UsageError("circom witnesses go with a zkey, not with a registry circuit")
        if isinstance(self.seed, bool) or not isinstance(self.seed, int) or self.seed < 0:
            raise UsageError(f"seed must be a non-negative integer, not {self.seed!r}")
        given = self.instances if self.instances is not None else self.witnesses
        if self.partitions is not None:
            if isinstance(self.partitions, bool) or not isinstance(self.partitions, int):
                raise UsageError(f"partitions must be an integer, not {self.partitions!r}")
            if self.partitions < 1:
                raise UsageError(f"partitions must be at least 1, not {self.partitions}")
            if given is not None and len(given) != self.partitions:
                raise UsageError(f"{len(given)} instance(s) given for {self.partitions} partition(s)")
        from cuzk.toggles import resolved

        resolved(self.options)  # unknown toggles are refused here, with the valid ones
        if self.priority is not None and not isinstance(self.priority, Priority):
            raise UsageError(f"priority must be a Priority, not {self.priority!r}")

    @property
    def partition_count(self) -> int:
        given = self.instances if self.instances is not None else self.witnesses
        if given is not None:
            return len(given)
        return self.partitions or 1

    @property
    def family(self) -> str:
        """porep | wpost | winning | snap for registry circuits; circom for zkeys."""
        return self.circuit.split("-", 1)[0] if self.circuit else "circom"

    @property
    def effective_priority(self) -> Priority:
        if self.priority is not None:
            return self.priority
        return DEFAULT_PRIORITY.get(self.family, Priority.NORMAL)

    @property
    def key_name(self) -> str:
        """What identifies the proving key (the SRS manager's key): a circuit name or a zkey path."""
        return self.circuit if self.circuit else os.fspath(self.zkey)  # type: ignore[arg-type]

    def partition_seeds(self) -> list[int]:
        return [self.seed + j for j in range(self.partition_count)]
