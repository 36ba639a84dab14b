"""A request id is an idempotency key: the same id and the same request are one job, a different
request under a used id is refused (issue 32 item 2).

Answering by id alone handed a winning-tiny client the 384 bytes of a porep-tiny job that had
used its id first, with status COMPLETED. The journal keeps each job's request as it came off
the wire; a submit under a journaled id is compared with it field by field, and any difference
is a RequestConflictError (gRPC ALREADY_EXISTS) naming the fields, never someone else's proof.
"""

from __future__ import annotations

from cuzk.errors import RequestConflictError
from cuzk.server.v1 import proving_pb2 as pb


def differing_fields(before: pb.SubmitProofRequest, now: pb.SubmitProofRequest) -> list[str]:
    """Names of the fields whose values differ between two requests (empty: the same request)."""
    return [
        f.name
        for f in pb.SubmitProofRequest.DESCRIPTOR.fields
        if getattr(before, f.name) != getattr(now, f.name)
    ]


def check_same_request(job_id: str, journaled: bytes, incoming: pb.SubmitProofRequest) -> None:
    """Raise RequestConflictError if `incoming` is not the request journaled under `job_id`."""
    differ = differing_fields(pb.SubmitProofRequest.FromString(journaled), incoming)
    if differ:
        raise RequestConflictError(
            f"request_id {job_id!r} already names a different request (it differs in "
            f"{', '.join(differ)}); a new request needs a new id"
        )
