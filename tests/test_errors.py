"""The error tree: drawn in its docstring, one disposition, exit code and gRPC status per class."""

from __future__ import annotations

import ast
import inspect

import pytest

from cuzk import errors
from cuzk.errors import Disposition as D

CLASSES = [c for _, c in inspect.getmembers(errors, inspect.isclass) if issubclass(c, errors.CuzkError)]
GRPC_CODES = {
    "OK", "CANCELLED", "UNKNOWN", "INVALID_ARGUMENT", "DEADLINE_EXCEEDED", "NOT_FOUND", "ALREADY_EXISTS",
    "PERMISSION_DENIED", "RESOURCE_EXHAUSTED", "FAILED_PRECONDITION", "ABORTED", "OUT_OF_RANGE",
    "UNIMPLEMENTED", "INTERNAL", "UNAVAILABLE", "DATA_LOSS", "UNAUTHENTICATED",
}  # fmt: skip


@pytest.mark.parametrize("cls", CLASSES, ids=lambda c: c.__name__)
def test_every_class_is_drawn_and_documented(cls: type[errors.CuzkError]) -> None:
    assert cls.__doc__  # not inherited: each class states its own case
    assert f" {cls.__name__} " in errors.__doc__
    assert isinstance(cls.disposition, D)
    assert errors.grpc_status(cls("x")) in GRPC_CODES
    assert errors.exit_code(cls("x")) in (2, 3, 5)  # 5: `cuzk client` found no daemon to answer


@pytest.mark.parametrize(
    ("cls", "disposition", "code", "status"),
    [
        (errors.UnsatisfiedError, D.JOB, 3, "INVALID_ARGUMENT"),
        (errors.NotOnCurveError, D.JOB, 2, "INVALID_ARGUMENT"),
        (errors.UnknownCircuitError, D.JOB, 2, "INVALID_ARGUMENT"),
        (errors.CircuitTooLargeError, D.JOB, 2, "INVALID_ARGUMENT"),
        (errors.ProofError, D.INTERNAL, 3, "INTERNAL"),
        (errors.BackendUnavailableError, D.JOB, 2, "FAILED_PRECONDITION"),
        (errors.DeviceError, D.DEVICE, 3, "UNAVAILABLE"),
        (errors.DeviceMemoryError, D.RETRY, 3, "RESOURCE_EXHAUSTED"),
        (errors.QueueFullError, D.RETRY, 3, "RESOURCE_EXHAUSTED"),
        (errors.BudgetExceededError, D.JOB, 2, "RESOURCE_EXHAUSTED"),
        (errors.StorageFullError, D.RETRY, 3, "RESOURCE_EXHAUSTED"),
        (errors.RequestConflictError, D.JOB, 2, "ALREADY_EXISTS"),
        (errors.ServiceUnavailableError, D.RETRY, 5, "UNAVAILABLE"),
        (errors.JobCancelledError, D.JOB, 3, "CANCELLED"),
        (errors.DeadlineExceededError, D.JOB, 3, "DEADLINE_EXCEEDED"),
        (errors.ShuttingDownError, D.RETRY, 3, "UNAVAILABLE"),
        (errors.UnknownJobError, D.JOB, 2, "NOT_FOUND"),
    ],
)
def test_tables(cls: type[errors.CuzkError], disposition: D, code: int, status: str) -> None:
    exc = cls("x")
    assert (errors.disposition(exc), errors.exit_code(exc), errors.grpc_status(exc)) == (
        disposition,
        code,
        status,
    )


def test_outside_the_tree_is_internal() -> None:
    exc = RuntimeError("bug")
    assert (errors.disposition(exc), errors.exit_code(exc), errors.grpc_status(exc)) == (
        D.INTERNAL,
        1,
        "INTERNAL",
    )


def test_a_subclass_inherits_the_nearest_entry() -> None:
    class Late(errors.DeviceMemoryError):
        """A subclass defined elsewhere."""

    assert (errors.disposition(Late()), errors.grpc_status(Late())) == (D.RETRY, "RESOURCE_EXHAUSTED")


def test_keyerror_subclasses_print_plainly() -> None:
    assert str(errors.UnknownJobError("no job x")) == "no job x"
    assert str(errors.UnknownCircuitError("no circuit y")) == "no circuit y"


def test_errors_imports_only_the_standard_library() -> None:
    tree = ast.parse(inspect.getsource(errors))
    imported = {a.name for n in ast.walk(tree) if isinstance(n, ast.Import) for a in n.names}
    imported |= {n.module or "" for n in ast.walk(tree) if isinstance(n, ast.ImportFrom)}
    assert imported == {"__future__", "collections.abc", "enum", "typing"}  # no grpc, no cuzk


def test_too_large_a_circuit_is_a_cuzk_error() -> None:
    from cuzk.groth16.qap import Domain

    with pytest.raises(errors.CircuitTooLargeError, match="constraints need a domain"):
        Domain.for_constraints(1 << 40)


def test_bad_poseidon_arity_is_a_circuit_error() -> None:
    from cuzk.gadgets.poseidon_params import params

    with pytest.raises(errors.CircuitError, match="arity"):
        params(0)
