"""The gRPC contract: cuzk.v1 matches the reference's wire interface field for field.

The expected tables are transcribed from docs/REFERENCE_API.md section 2 (the
reference's proving.proto), plus our own fields from 40 on. A client built from
the reference's proto must work unchanged, so any drift here is a bug.
"""

from __future__ import annotations

import re
from importlib.metadata import version
from pathlib import Path

import pytest
from google.protobuf.descriptor import FieldDescriptor as F

from cuzk.server import codegen
from cuzk.server.v1 import proving_pb2 as pb

S, U64, U32, B, BYTES, E, M = (
    F.TYPE_STRING,
    F.TYPE_UINT64,
    F.TYPE_UINT32,
    F.TYPE_BOOL,
    F.TYPE_BYTES,
    F.TYPE_ENUM,
    F.TYPE_MESSAGE,
)
REPEATED = "repeated"

#: message -> [(field, number, type[, repeated])], reference fields first, then ours (>= 40)
MESSAGES: dict[str, list[tuple]] = {
    "SubmitProofRequest": [
        ("request_id", 1, S), ("proof_kind", 2, E), ("sector_size", 3, U64), ("registered_proof", 4, U64),
        ("priority", 5, E), ("vanilla_proof", 10, BYTES), ("vanilla_proofs", 11, BYTES, REPEATED),
        ("sector_number", 20, U64), ("miner_id", 21, U64), ("randomness", 22, BYTES),
        ("partition_index", 23, U32), ("comm_r_old", 30, BYTES), ("comm_r_new", 31, BYTES),
        ("comm_d_new", 32, BYTES),
        ("circuit", 40, S), ("instance_seed", 41, U64), ("partitions", 42, U32), ("instances_json", 43, S),
        ("zkey_id", 44, S), ("witnesses", 45, BYTES, REPEATED),
    ],
    "SubmitProofResponse": [("job_id", 1, S), ("queue_position", 2, U32), ("assigned_gpu", 3, S)],
    "AwaitProofRequest": [("job_id", 1, S), ("timeout_ms", 2, U64)],
    "AwaitProofResponse": [
        ("job_id", 1, S), ("status", 2, E), ("proof", 3, BYTES), ("error_message", 4, S),
        ("queue_wait_ms", 10, U64), ("srs_load_ms", 11, U64), ("synthesis_ms", 12, U64),
        ("gpu_compute_ms", 13, U64), ("total_ms", 14, U64),
        ("public_inputs_json", 40, S),
    ],
    "ProveRequest": [("submit", 1, M)],
    "ProveResponse": [("result", 1, M)],
    "CancelProofRequest": [("job_id", 1, S)],
    "CancelProofResponse": [("was_running", 1, B)],
    "GetStatusRequest": [],
    "GetStatusResponse": [
        ("gpus", 1, M, REPEATED), ("loaded_srs", 2, M, REPEATED), ("queues", 3, M, REPEATED),
        ("total_proofs_completed", 4, U64), ("total_proofs_failed", 5, U64), ("uptime_seconds", 6, U64),
        ("pinned_memory_bytes", 7, U64), ("pinned_memory_limit_bytes", 8, U64),
        ("memory_budget_bytes", 40, U64), ("memory_reserved_bytes", 41, U64), ("memory_peak_bytes", 42, U64),
        ("jobs", 43, M, REPEATED),
    ],
    "JobProgress": [
        ("job_id", 1, S), ("proof_kind", 2, S), ("partitions_total", 3, U32), ("partitions_done", 4, U32),
        ("running", 5, B),
    ],
    "GPUStatus": [
        ("ordinal", 1, U32), ("name", 2, S), ("vram_total_bytes", 3, U64), ("vram_free_bytes", 4, U64),
        ("current_job_id", 5, S), ("current_proof_kind", 6, S),
        ("workers", 40, U32), ("busy_workers", 41, U32),
    ],
    "SRSStatus": [("circuit_id", 1, S), ("tier", 2, E), ("size_bytes", 3, U64), ("ref_count", 4, U32)],
    "QueueStatus": [("proof_kind", 1, S), ("pending", 2, U32), ("in_progress", 3, U32)],
    "PreloadSrsRequest": [("circuit_id", 1, S)],
    "PreloadSrsResponse": [("already_loaded", 1, B), ("load_time_ms", 2, U64)],
    "EvictSrsRequest": [("circuit_id", 1, S)],
    "EvictSrsResponse": [("was_loaded", 1, B), ("freed_bytes", 2, U64)],
    "GetMetricsRequest": [],
    "GetMetricsResponse": [("prometheus_text", 1, S)],
}  # fmt: skip

ENUMS = {
    "ProofKind": [
        ("PROOF_KIND_UNSPECIFIED", 0), ("POREP_SEAL_COMMIT", 1), ("SNAP_DEALS_UPDATE", 2),
        ("WINDOW_POST_PARTITION", 3), ("WINNING_POST", 4),
    ],
    "Priority": [("PRIORITY_UNSPECIFIED", 0), ("LOW", 1), ("NORMAL", 2), ("HIGH", 3), ("CRITICAL", 4)],
    "AwaitProofResponse.Status": [("UNKNOWN", 0), ("COMPLETED", 1), ("FAILED", 2), ("CANCELLED", 3), ("TIMEOUT", 4)],
    "SRSStatus.Tier": [("HOT", 0), ("WARM", 1), ("COLD", 2)],
}  # fmt: skip

RPCS = {
    "SubmitProof": ("SubmitProofRequest", "SubmitProofResponse"),
    "AwaitProof": ("AwaitProofRequest", "AwaitProofResponse"),
    "Prove": ("ProveRequest", "ProveResponse"),
    "CancelProof": ("CancelProofRequest", "CancelProofResponse"),
    "GetStatus": ("GetStatusRequest", "GetStatusResponse"),
    "GetMetrics": ("GetMetricsRequest", "GetMetricsResponse"),
    "PreloadSRS": ("PreloadSrsRequest", "PreloadSrsResponse"),
    "EvictSRS": ("EvictSrsRequest", "EvictSrsResponse"),
}


def test_package_and_message_names() -> None:
    assert pb.DESCRIPTOR.package == "cuzk.v1"
    assert set(pb.DESCRIPTOR.message_types_by_name) == set(MESSAGES)  # spelling: GPUStatus, PreloadSrsRequest


@pytest.mark.parametrize("message", sorted(MESSAGES))
def test_fields(message: str) -> None:
    desc = pb.DESCRIPTOR.message_types_by_name[message]
    got = []
    for f in desc.fields:
        repeated = f.is_repeated
        got.append((f.name, f.number, f.type, REPEATED) if repeated else (f.name, f.number, f.type))
    assert got == MESSAGES[message]
    assert not desc.oneofs  # the reference has no oneofs, and proto3 optional would add synthetic ones


def test_enums() -> None:
    for name, values in ENUMS.items():
        outer, _, inner = name.partition(".")
        desc = (
            pb.DESCRIPTOR.message_types_by_name[outer].enum_types_by_name[inner]
            if inner
            else pb.DESCRIPTOR.enum_types_by_name[outer]
        )
        assert [(v.name, v.number) for v in desc.values] == values, name


def test_message_field_types_point_where_the_reference_does() -> None:
    msgs = pb.DESCRIPTOR.message_types_by_name
    assert msgs["ProveRequest"].fields_by_name["submit"].message_type.name == "SubmitProofRequest"
    assert msgs["ProveResponse"].fields_by_name["result"].message_type.name == "AwaitProofResponse"
    status = msgs["GetStatusResponse"].fields_by_name
    assert [status[k].message_type.name for k in ("gpus", "loaded_srs", "queues")] == [
        "GPUStatus",
        "SRSStatus",
        "QueueStatus",
    ]
    assert msgs["SubmitProofRequest"].fields_by_name["proof_kind"].enum_type.name == "ProofKind"
    assert msgs["SubmitProofRequest"].fields_by_name["priority"].enum_type.name == "Priority"


def test_service_and_method_paths() -> None:
    svc = pb.DESCRIPTOR.services_by_name["ProvingEngine"]
    assert svc.full_name == "cuzk.v1.ProvingEngine"
    got = {m.name: (m.input_type.name, m.output_type.name) for m in svc.methods}
    assert got == RPCS
    assert all(not (m.client_streaming or m.server_streaming) for m in svc.methods)  # all unary


def test_committed_code_matches_the_proto(tmp_path: Path) -> None:
    folder = codegen.SRC / Path(codegen.PROTO).parent
    stamp = re.search(r"GRPC_GENERATED_VERSION = '([^']+)'", (folder / "proving_pb2_grpc.py").read_text())
    assert stamp, "the committed gRPC code has no version stamp"
    tools = version("grpcio-tools")
    assert tools == stamp[1], (
        f"grpcio-tools {tools} is installed; the committed code was generated by {stamp[1]} (pyproject pins it)"
    )
    fresh = codegen.generate(tmp_path)
    for name, text in fresh.items():
        assert (folder / name).read_text() == text, f"{name} is stale: run `python -m cuzk.server.codegen`"


def test_wire_bytes_of_a_reference_request() -> None:
    """Field numbers on the wire: a reference-style PoRep request round-trips, tags as numbered."""
    req = pb.SubmitProofRequest(
        request_id="porep-1000-7", proof_kind=pb.POREP_SEAL_COMMIT, priority=pb.NORMAL
    )
    raw = req.SerializeToString()
    assert raw == b"\x0a\x0cporep-1000-7\x10\x01\x28\x02"  # tag 1 (len), tag 2 = 1, tag 5 = 2
    assert pb.SubmitProofRequest.FromString(raw) == req
    ours = pb.SubmitProofRequest(circuit="porep-tiny", instance_seed=3).SerializeToString()
    assert ours == b"\xc2\x02\x0aporep-tiny\xc8\x02\x03"  # tags 40 (len) and 41 (varint)
