"""The one error tree of cuzk, and what the engine and the CLI do with each error.

    CuzkError                           disposition
    ├── UsageError                      job     arguments that cannot work (an output in a missing folder)
    ├── FormatError (ValueError)        job     bytes or files that do not parse
    │   ├── EncodingError                       field or point encodings
    │   │   ├── WrongLengthError                a buffer of the wrong size
    │   │   ├── InvalidFlagsError               zcash flag bits that are not allowed
    │   │   ├── NonCanonicalError               a coordinate or scalar >= its modulus
    │   │   ├── NotOnCurveError                 coordinates that satisfy no curve equation
    │   │   ├── NotInSubgroupError              a curve point outside the prime-order group
    │   │   └── InfinityError                   the point at infinity where it is not allowed
    │   ├── ParamsError                         .params / .vk / manifest files
    │   └── InteropError                        circom .r1cs / .wtns, snarkjs .zkey / JSON
    ├── CircuitError                    job
    │   ├── UnknownCircuitError                 a circuit name nobody registered
    │   │   └── RenamedCircuitError             an old circuit name; the message names the new one
    │   ├── CircuitTooLargeError                more constraints than the largest supported domain
    │   └── UnsatisfiedError                    a witness that breaks a constraint
    ├── SetupError                      job     degenerate parameters (unbound inputs, ...)
    ├── ProofError                      internal a proof that did not verify where one must
    ├── BackendError                    internal
    │   ├── BackendUnavailableError     job     asking for a backend this machine lacks
    │   └── DeviceError                 device  a CUDA failure, translated in one place
    │       └── DeviceMemoryError       retry   the device memory budget would be exceeded
    ├── ServiceUnavailableError         retry   a daemon not running, unreachable, gone or busy (client)
    └── EngineError                     job     the engine refuses or ends a job
        ├── QueueFullError              retry   intake is past its configured limit
        ├── StorageFullError            retry   the disk under the job journal is full
        ├── BudgetExceededError         job     a job larger than the whole memory budget: never fits
        ├── JobCancelledError           job     the job was cancelled before it finished
        ├── DeadlineExceededError       job     a wait ran past its timeout
        ├── ShuttingDownError           retry   the engine is stopping and takes no new work
        ├── UnknownJobError             job     no job has that id
        └── RequestConflictError        job     a request id already names a different request

A class without its own disposition inherits its parent's. `Disposition` says
what a worker does when a job raises: JOB ends that job (the request was bad
or ended; the worker and the device are fine), RETRY ends it with "try again
later" (a transient shortage), DEVICE ends it and marks the device unhealthy,
INTERNAL ends it as a bug. `disposition(exc)`, `exit_code(exc)` and
`grpc_status(exc)` look the nearest listed class up in one table each
(`EXIT_CODES`, `GRPC_STATUS`); any exception outside the tree is INTERNAL,
exit code 1, gRPC "INTERNAL".

Lower-layer errors (OSError, CuPy's CUDARuntimeError) are translated at the
boundary with ``raise ... from``, so callers catch one tree. A ValueError or
TypeError from a backend or algebra array check (a wrong shape or dtype passed
between cuzk's own layers) is a bug in the caller, not a bad request: public
entry points validate their inputs first.
"""

from __future__ import annotations

import enum
from collections.abc import Mapping
from typing import ClassVar, TypeVar

_T = TypeVar("_T")


class Disposition(enum.Enum):
    """What the engine does with a job that raised (see the module docstring)."""

    JOB = "job"
    RETRY = "retry"
    DEVICE = "device"
    INTERNAL = "internal"


class CuzkError(Exception):
    """Base of every error cuzk raises on purpose."""

    disposition: ClassVar[Disposition] = Disposition.INTERNAL


class UsageError(CuzkError):
    """Arguments that cannot work (e.g. an output path in a missing folder): caught before any work."""

    disposition = Disposition.JOB


class FormatError(CuzkError, ValueError):
    """Bytes or a file that do not parse as what they claim to be."""

    disposition = Disposition.JOB


class EncodingError(FormatError):
    """A field element or curve point encoding is invalid."""


class WrongLengthError(EncodingError):
    """A buffer has the wrong number of bytes for its encoding."""


class InvalidFlagsError(EncodingError):
    """The zcash flag bits (compressed, infinity, sign) are not a legal combination."""


class NonCanonicalError(EncodingError):
    """A field element is not reduced: its integer value is >= the modulus."""


class NotOnCurveError(EncodingError):
    """The coordinates do not satisfy the curve equation (or x has no square root)."""


class NotInSubgroupError(EncodingError):
    """A point is on the curve but outside the prime-order subgroup."""


class InfinityError(EncodingError):
    """The point at infinity appears where the format forbids it."""


class ParamsError(FormatError):
    """A Groth16 parameter, verifying-key or manifest file is malformed or inconsistent."""


class InteropError(FormatError):
    """A circom or snarkjs file is malformed or of an unsupported kind."""


class CircuitError(CuzkError):
    """A circuit cannot be built or its witness is wrong."""

    disposition = Disposition.JOB


class UnknownCircuitError(CircuitError, KeyError):
    """No circuit of that name is registered."""

    def __str__(self) -> str:  # KeyError quotes its message; we want it plain
        return str(self.args[0]) if self.args else ""


class RenamedCircuitError(UnknownCircuitError):
    """A circuit asked for by a name it no longer has; the message names the new one."""

    @classmethod
    def of(cls, old: str, new: str) -> RenamedCircuitError:
        return cls(f"circuit {old!r} has been renamed {new!r}; ask for {new!r}")


class CircuitTooLargeError(CircuitError):
    """The circuit needs an evaluation domain larger than the backends support (2^MAX_LOG_N)."""


class UnsatisfiedError(CircuitError):
    """A witness does not satisfy a constraint; `constraint` names the first one that fails."""

    def __init__(self, message: str, constraint: str | None = None, index: int | None = None) -> None:
        super().__init__(message)
        self.constraint = constraint
        self.index = index


class SetupError(CuzkError):
    """Parameters would be degenerate (an unconstrained variable, an input no constraint binds)."""

    disposition = Disposition.JOB


class ProofError(CuzkError):
    """A proof failed verification where a valid one was required."""


class BackendError(CuzkError):
    """A compute backend failed or cannot do what was asked."""


class BackendUnavailableError(BackendError):
    """The requested backend does not exist on this machine."""

    disposition = Disposition.JOB


class DeviceError(BackendError):
    """A CUDA call failed; the message names the call. The device may be unhealthy."""

    disposition = Disposition.DEVICE


class DeviceMemoryError(DeviceError):
    """An allocation would exceed the configured device memory budget; it may fit once others finish."""

    disposition = Disposition.RETRY


class ServiceUnavailableError(CuzkError):
    """`cuzk client`: the daemon is not running, not reachable, went away mid-call or is too busy now."""

    disposition = Disposition.RETRY


class EngineError(CuzkError):
    """The engine refused a job or ended it without a proof."""

    disposition = Disposition.JOB


class QueueFullError(EngineError):
    """Intake is past its configured queue limit; the caller may retry later."""

    disposition = Disposition.RETRY


class StorageFullError(EngineError):
    """The disk under the daemon's job journal is full: a job cannot be recorded, so it is not accepted."""

    disposition = Disposition.RETRY


class BudgetExceededError(EngineError):
    """A job needs more memory than the whole budget holds, so waiting would never help."""


class JobCancelledError(EngineError):
    """The job was cancelled before it finished."""


class DeadlineExceededError(EngineError):
    """A wait (for a result, a permit) ran past its timeout."""


class ShuttingDownError(EngineError):
    """The engine is shutting down and accepts no new work (another instance may)."""

    disposition = Disposition.RETRY


class UnknownJobError(EngineError, KeyError):
    """No job with that id is known (never submitted, or its stored result was pruned)."""

    def __str__(self) -> str:  # KeyError quotes its message; we want it plain
        return str(self.args[0]) if self.args else ""


class RequestConflictError(EngineError):
    """A request id that already names another request: answering it would hand out another's proof."""


#: The one table from error class to process exit code (2: the input or the arguments are bad,
#: found before any long work; 3: inputs that parse but do not fit together, or a failure while
#: working; 5: `cuzk client` found no daemon to answer, try again). The most specific class listed wins.
EXIT_CODES: dict[type[BaseException], int] = {
    ServiceUnavailableError: 5,
    UsageError: 2,
    FormatError: 2,
    UnknownCircuitError: 2,
    CircuitTooLargeError: 2,
    BackendUnavailableError: 2,
    BudgetExceededError: 2,
    UnknownJobError: 2,
    RequestConflictError: 2,
    CuzkError: 3,
}

#: The same table for the gRPC service: error class -> status code name (grpc.StatusCode member
#: names, kept as strings so this module imports no grpc). A proof that fails is not a gRPC error
#: (it is a FAILED result); these are for requests the service refuses or cannot finish. An unknown
#: circuit is a bad argument of the request (INVALID_ARGUMENT, as the reference answers an unknown
#: proof kind); NOT_FOUND is for a job id the engine does not know.
GRPC_STATUS: dict[type[BaseException], str] = {
    UsageError: "INVALID_ARGUMENT",
    FormatError: "INVALID_ARGUMENT",
    CircuitError: "INVALID_ARGUMENT",
    SetupError: "INVALID_ARGUMENT",
    BackendUnavailableError: "FAILED_PRECONDITION",
    DeviceError: "UNAVAILABLE",
    DeviceMemoryError: "RESOURCE_EXHAUSTED",
    QueueFullError: "RESOURCE_EXHAUSTED",
    StorageFullError: "RESOURCE_EXHAUSTED",
    BudgetExceededError: "RESOURCE_EXHAUSTED",
    JobCancelledError: "CANCELLED",
    DeadlineExceededError: "DEADLINE_EXCEEDED",
    ShuttingDownError: "UNAVAILABLE",
    ServiceUnavailableError: "UNAVAILABLE",
    UnknownJobError: "NOT_FOUND",
    RequestConflictError: "ALREADY_EXISTS",
    CuzkError: "INTERNAL",
}


def _nearest(table: Mapping[type[BaseException], _T], exc: BaseException, default: _T) -> _T:
    """The value of the nearest class of `exc` (in method resolution order) that `table` lists."""
    for cls in type(exc).__mro__:
        if cls in table:
            return table[cls]
    return default


def exit_code(exc: BaseException) -> int:
    """The exit code for `exc` from EXIT_CODES (its nearest listed base class); 1 if none is listed."""
    return _nearest(EXIT_CODES, exc, 1)


def grpc_status(exc: BaseException) -> str:
    """The gRPC status code name for `exc` from GRPC_STATUS; "INTERNAL" for anything outside the tree."""
    return _nearest(GRPC_STATUS, exc, "INTERNAL")


def disposition(exc: BaseException) -> Disposition:
    """What the engine does with a job that raised `exc`; INTERNAL for anything outside the tree."""
    return exc.disposition if isinstance(exc, CuzkError) else Disposition.INTERNAL
