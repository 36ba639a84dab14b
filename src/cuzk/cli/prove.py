"""`cuzk setup`, `cuzk prove`, `cuzk verify`: the native (bellperson-format) Groth16 flow."""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

from cuzk.cli.output import add_backend_option, check_output_paths, console, phase_table, progress_printer
from cuzk.errors import FormatError, UsageError
from cuzk.paths import write_atomic


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("setup", help="generate local (test, not ceremony) parameters for a circuit")
    p.add_argument("--circuit", required=True, help="a registered circuit name (see `cuzk circuits`)")
    p.add_argument("--out", required=True, type=Path, help="directory for NAME.params, NAME.vk, NAME.json")
    add_backend_option(p)
    p.set_defaults(func=cmd_setup)

    p = sub.add_parser("prove", help="prove a random valid instance of a circuit")
    p.add_argument("--circuit", required=True)
    p.add_argument(
        "--params", type=Path, help="directory made by `cuzk setup` (default: generate once, cached)"
    )
    p.add_argument("--seed", type=int, default=0, help="seed of the random instance (default 0)")
    p.add_argument(
        "--batch", type=int, default=1, help="prove this many instances (seeds seed..) in one pass"
    )
    p.add_argument("--out", type=Path, help="write the proof bytes here (192 bytes per proof)")
    p.add_argument(
        "--public-out", type=Path, help="write the public inputs here as a JSON list of decimal strings"
    )
    p.add_argument("--checked", action="store_true", help="subgroup-check the parameters when loading them")
    p.add_argument(
        "--g2-on-cpu", action="store_true", help="run the B MSM on G2 on the CPU (finalize off the GPU)"
    )
    add_backend_option(p)
    p.set_defaults(func=cmd_prove)

    p = sub.add_parser("verify", help="verify a native proof: exit 0 valid, 1 invalid, 2 bad input")
    p.add_argument("--vk", required=True, type=Path, help="a bellperson-format .vk file")
    p.add_argument("--proof", required=True, type=Path, help="proof bytes (192 per proof)")
    p.add_argument(
        "--public",
        required=True,
        type=Path,
        help="JSON list of decimal strings (a list of lists for several proofs)",
    )
    p.add_argument("--unchecked", action="store_true", help="skip the vk's subgroup checks (trusted files)")
    p.set_defaults(func=cmd_verify)


def cmd_setup(args: argparse.Namespace) -> int:
    from cuzk.backends import get_backend
    from cuzk.circuits import get_circuit
    from cuzk.groth16 import generate_parameters, params_io
    from cuzk.groth16.api import _meta
    from cuzk.instrument import Timeline

    circuit = get_circuit(args.circuit)
    backend = get_backend(args.backend)
    say = progress_printer()
    tl = Timeline("setup")
    t0 = time.perf_counter()
    with tl.span("topology"):
        say(f"recording the topology of {circuit.name}")
        topo = circuit.topology()
    params = generate_parameters(topo, backend, timeline=tl, progress=say)
    with tl.span("write"):
        manifest = params_io.save(params, args.out, circuit.name, meta=_meta(topo, topo.hash))
    console().print(phase_table(tl, title=f"setup {circuit.name} on {backend.name}"))
    console().print(
        f"wrote {manifest.parent}/{circuit.name}.{{params,vk,json}} in {time.perf_counter() - t0:.2f} s"
    )
    return 0


def cmd_prove(args: argparse.Namespace) -> int:
    from cuzk.backends import get_backend
    from cuzk.circuits import get_circuit
    from cuzk.groth16 import load_or_create_parameters, make_resident, prove
    from cuzk.instrument import Timeline

    check_output_paths(args.out, args.public_out)
    if args.batch < 1:
        raise FormatError("--batch must be at least 1")
    circuit = get_circuit(args.circuit)
    backend = get_backend(args.backend)
    say = progress_printer()
    tl = Timeline("prove")
    with tl.span("topology"):
        topo = circuit.topology()
    with tl.span("load_params"):
        _, params = load_or_create_parameters(
            circuit.name, topo, topo.hash, backend, directory=args.params, checked=args.checked, progress=say
        )
    g2_backend = get_backend("cpu") if args.g2_on_cpu else backend
    with tl.span("make_resident"):
        srs = make_resident(params, topo, backend, g2_backend=g2_backend)
    with tl.span("witness", circuits=args.batch):
        witnesses = [circuit.witness(circuit.random_instance(seed=args.seed + j)) for j in range(args.batch)]
    t0 = time.perf_counter()
    result = prove(topo, witnesses, srs, timeline=tl)
    elapsed = time.perf_counter() - t0
    pub = result.public_inputs[0] if args.batch == 1 else result.public_inputs
    for path, data in ((args.out, result.proof_bytes()), (args.public_out, json.dumps(_decimal(pub)) + "\n")):
        if path is not None:
            try:
                write_atomic(path, data)
            except OSError as exc:
                raise UsageError(f"{path}: cannot write: {exc.strerror or exc}") from exc
    con = console()
    con.print(phase_table(tl, title=f"prove {circuit.name} x{args.batch} on {backend.name}"))
    con.print(
        f"{len(result.proofs)} proof(s) verified; prove {elapsed:.3f} s"
        + (f"; wrote {args.out}" if args.out else "")
        + (f" and {args.public_out}" if args.public_out else "")
    )
    return 0


def _decimal(values: list) -> list:
    return [_decimal(v) if isinstance(v, list) else str(v) for v in values]


def _parse_public(path: Path, count: int) -> list[list[int]]:
    try:
        data = json.loads(path.read_text())
    except OSError as exc:
        raise FormatError(f"cannot read {path}: {exc.strerror or exc}") from exc
    except ValueError as exc:
        raise FormatError(f"{path} is not JSON: {exc}") from exc
    lists = data if (data and isinstance(data[0], list)) else [data]
    if not isinstance(data, list) or len(lists) != count:
        raise FormatError(f"{path}: expected public inputs for {count} proof(s)")
    try:
        return [[int(str(x), 10) for x in lst] for lst in lists]
    except ValueError as exc:
        raise FormatError(f"{path}: public inputs must be decimal strings: {exc}") from exc


def cmd_verify(args: argparse.Namespace) -> int:
    from cuzk.groth16 import proofs_from_bytes, verify
    from cuzk.groth16.params_io import read_vk

    vk = read_vk(args.vk, checked=not args.unchecked)
    try:
        data = args.proof.read_bytes()
    except OSError as exc:
        raise FormatError(f"cannot read {args.proof}: {exc.strerror or exc}") from exc
    proofs = proofs_from_bytes(data)
    inputs = _parse_public(args.public, len(proofs))
    results = [verify(vk, x, p) for x, p in zip(inputs, proofs, strict=True)]
    ok = all(results)
    for j, r in enumerate(results):
        print(f"proof {j}: {'valid' if r else 'INVALID'}", file=sys.stdout if r else sys.stderr)
    return 0 if ok else 1
