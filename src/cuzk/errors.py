"""The one error tree of cuzk.

    CuzkError
    ├── UsageError                      arguments that cannot work (an output in a missing folder)
    ├── FormatError (ValueError)        bytes or files that do not parse
    │   ├── EncodingError               field or point encodings
    │   │   ├── WrongLengthError        a buffer of the wrong size
    │   │   ├── InvalidFlagsError       zcash flag bits that are not allowed
    │   │   ├── NonCanonicalError       a coordinate or scalar >= its modulus
    │   │   ├── NotOnCurveError         coordinates that satisfy no curve equation
    │   │   ├── NotInSubgroupError      a curve point outside the prime-order group
    │   │   └── InfinityError           the point at infinity where it is not allowed
    │   ├── ParamsError                 .params / .vk / manifest files
    │   └── InteropError                circom .r1cs / .wtns, snarkjs .zkey / JSON
    ├── CircuitError
    │   ├── UnknownCircuitError         a circuit name nobody registered
    │   └── UnsatisfiedError            a witness that breaks a constraint
    ├── SetupError                      degenerate parameters (unbound inputs, ...)
    ├── ProofError                      a proof that did not verify where one must
    ├── BackendError
    │   ├── BackendUnavailableError     asking for a backend this machine lacks
    │   └── DeviceError                 a CUDA failure, translated in one place
    │       └── DeviceMemoryError       the device memory budget would be exceeded
    └── EngineError                     the engine refuses or ends a job
        ├── QueueFullError              intake is past its configured limit: retry later
        ├── BudgetExceededError         a job larger than the whole memory budget: never fits
        ├── JobCancelledError           the job was cancelled before it finished
        ├── DeadlineExceededError       a wait ran past its timeout
        ├── ShuttingDownError           the engine is stopping and takes no new work
        └── UnknownJobError             no job has that id

Lower-layer errors (OSError, CuPy's CUDARuntimeError) are translated at the
boundary with ``raise ... from``, so callers catch one tree.
"""

from __future__ import annotations


class CuzkError(Exception):
    """Base of every error cuzk raises on purpose."""


class UsageError(CuzkError):
    """Arguments that cannot work (e.g. an output path in a missing folder): caught before any work."""


class FormatError(CuzkError, ValueError):
    """Bytes or a file that do not parse as what they claim to be."""


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


class UnknownCircuitError(CircuitError, KeyError):
    """No circuit of that name is registered."""

    def __str__(self) -> str:  # KeyError quotes its message; we want it plain
        return str(self.args[0]) if self.args else ""


class UnsatisfiedError(CircuitError):
    """A witness does not satisfy a constraint; `constraint` names the first one that fails."""

    def __init__(self, message: str, constraint: str | None = None, index: int | None = None) -> None:
        super().__init__(message)
        self.constraint = constraint
        self.index = index


class SetupError(CuzkError):
    """Parameters would be degenerate (an unconstrained variable, an input no constraint binds)."""


class ProofError(CuzkError):
    """A proof failed verification where a valid one was required."""


class BackendError(CuzkError):
    """A compute backend failed or cannot do what was asked."""


class BackendUnavailableError(BackendError):
    """The requested backend does not exist on this machine."""


class DeviceError(BackendError):
    """A CUDA call failed; the message names the call."""


class DeviceMemoryError(DeviceError):
    """An allocation would exceed the configured device memory budget."""


class EngineError(CuzkError):
    """The engine refused a job or ended it without a proof."""


class QueueFullError(EngineError):
    """Intake is past its configured queue limit; the caller may retry later."""


class BudgetExceededError(EngineError):
    """A job needs more memory than the whole budget holds, so waiting would never help."""


class JobCancelledError(EngineError):
    """The job was cancelled before it finished."""


class DeadlineExceededError(EngineError):
    """A wait (for a result, a permit) ran past its timeout."""


class ShuttingDownError(EngineError):
    """The engine is shutting down and accepts no new work."""


class UnknownJobError(EngineError, KeyError):
    """No job with that id is known (never submitted, or its stored result was pruned)."""

    def __str__(self) -> str:  # KeyError quotes its message; we want it plain
        return str(self.args[0]) if self.args else ""


#: The one table from error class to process exit code (2: the input or the arguments are bad,
#: found before any long work; 3: inputs that parse but do not fit together, or a failure while
#: working). The most specific class listed wins; later layers (gRPC status codes) extend it here.
EXIT_CODES: dict[type[BaseException], int] = {
    UsageError: 2,
    FormatError: 2,
    UnknownCircuitError: 2,
    BackendUnavailableError: 2,
    CuzkError: 3,
}


def exit_code(exc: BaseException) -> int:
    """The exit code for `exc` from EXIT_CODES (its nearest listed base class); 1 if none is listed."""
    for cls in type(exc).__mro__:
        if cls in EXIT_CODES:
            return EXIT_CODES[cls]
    return 1
