"""Regenerate the gRPC code beside server/v1/proving.proto (run at commit time, not at install).

The generated modules are committed, so installing cuzk needs only grpcio and
protobuf at run time; grpcio-tools is a development dependency. tests/server
checks that the committed files equal a fresh generation.
"""

from __future__ import annotations

import sys
import tempfile
from pathlib import Path

SRC = Path(__file__).resolve().parents[2]  # the folder holding the cuzk package
PROTO = "cuzk/server/v1/proving.proto"
OUTPUTS = ("proving_pb2.py", "proving_pb2_grpc.py", "proving_pb2.pyi")


def generate(out_root: Path) -> dict[str, str]:
    """Run protoc (grpcio-tools) into out_root; returns {file name: text} of the generated modules."""
    from grpc_tools import protoc

    args = [
        "protoc",
        f"-I{SRC}",
        f"--python_out={out_root}",
        f"--pyi_out={out_root}",
        f"--grpc_python_out={out_root}",
        str(SRC / PROTO),
    ]
    if protoc.main(args) != 0:
        raise RuntimeError(f"protoc failed on {PROTO}")
    folder = out_root / Path(PROTO).parent
    return {name: (folder / name).read_text() for name in OUTPUTS}


def main() -> int:
    with tempfile.TemporaryDirectory() as tmp:
        files = generate(Path(tmp))
    target = SRC / Path(PROTO).parent
    for name, text in files.items():
        (target / name).write_text(text)
        print(f"wrote {target / name}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
