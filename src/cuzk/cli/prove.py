"""`cuzk setup`, `cuzk prove`, `cuzk verify`: the native (bellperson-format) Groth16 flow."""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

from cuzk.cli.output import (
    add_backend_option,
    add_timeline_option,
    check_output_dir,
    check_output_paths,
    compile_seconds_within,
    console,
    input_dir,
    input_file,
    nonnegative_int,
    output_dir,
    output_file,
    phase_table,
    positive_int,
    progress_printer,
    write_timeline,
)
from cuzk.errors import FormatError, UsageError
from cuzk.paths import write_atomic

CIRCUIT_HELP = "a registered circuit name (see `cuzk circuits`), e.g. porep-tiny"


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("setup", help="generate local (test, not ceremony) parameters for a circuit")
    p.add_argument("--circuit", required=True, help=CIRCUIT_HELP)
    p.add_argument(
        "--out",
        required=True,
        type=output_dir,
        help="directory for NAME.params, NAME.vk, NAME.json (an existing set there is replaced as a whole)",
    )
    add_backend_option(p)
    p.set_defaults(func=cmd_setup)

    p = sub.add_parser("prove", help="prove a random valid instance of a circuit")
    p.add_argument("--circuit", required=True, help=CIRCUIT_HELP)
    p.add_argument(
        "--params", type=input_dir, help="directory made by `cuzk setup` (default: generate once, cached)"
    )
    p.add_argument("--seed", type=nonnegative_int, default=0, help="seed of the random instance (default 0)")
    p.add_argument(
        "--batch", type=positive_int, default=1, help="prove this many instances (seeds seed..) in one pass"
    )
    p.add_argument("--out", type=output_file, help="write the proof bytes here (192 bytes per proof)")
    p.add_argument(
        "--public-out",
        type=output_file,
        help="write the public inputs here as a JSON list of decimal strings",
    )
    p.add_argument(
        "--vk-out", type=output_file, help="also write the verifying key (.vk) here, for `cuzk verify --vk`"
    )
    p.add_argument("--checked", action="store_true", help="subgroup-check the parameters when loading them")
    add_timeline_option(p)
    p.add_argument(
        "--g2-on-cpu", action="store_true", help="run the B MSM on G2 on the CPU (finalize off the GPU)"
    )
    add_backend_option(p)
    p.set_defaults(func=cmd_prove)

    p = sub.add_parser("verify", help="verify a native proof: exit 0 valid, 1 invalid, 2 bad input")
    p.add_argument("--vk", required=True, type=input_file, help="a bellperson-format .vk file")
    p.add_argument("--proof", required=True, type=input_file, help="proof bytes (192 per proof)")
    p.add_argument(
        "--public",
        required=True,
        type=input_file,
        help='JSON list of decimal strings such as ["12", "0"] (a list of lists for several proofs); '
        "JSON numbers, signs, spaces and underscores are refused",
    )
    p.add_argument("--unchecked", action="store_true", help="skip the vk's subgroup checks (trusted files)")
    p.set_defaults(func=cmd_verify)


def cmd_setup(args: argparse.Namespace) -> int:
    from cuzk.backends import get_backend
    from cuzk.circuits import get_circuit
    from cuzk.groth16 import params_io
    from cuzk.groth16.api import _meta
    from cuzk.groth16.setup import generate_queries
    from cuzk.instrument import Timeline

    check_output_dir(args.out)
    circuit = get_circuit(args.circuit)
    backend = get_backend(args.backend)
    say = progress_printer()
    tl = Timeline("setup")
    t0 = time.perf_counter()
    with tl.span("topology"):
        say(f"recording the topology of {circuit.name}")
        topo = circuit.topology()
    gen = generate_queries(topo, backend, timeline=tl, progress=say)
    with tl.span("write"):  # encoded where the queries are (the GPU), a chunk at a time
        try:
            manifest = params_io.save_rows(
                gen.vk, gen.rows, backend, args.out, circuit.name, _meta(topo, topo.hash)
            )
        except OSError as exc:
            raise UsageError(f"{args.out}: cannot write the parameters: {exc.strerror or exc}") from exc
    console().print(phase_table(tl, title=f"setup {circuit.name} on {backend.name}"))
    console().print(
        f"wrote {manifest.parent}/{circuit.name}.{{params,vk,json}} in {time.perf_counter() - t0:.2f} s"
    )
    return 0


def cmd_prove(args: argparse.Namespace) -> int:
    from cuzk.backends import get_backend
    from cuzk.engine import LocalProver, ProofRequest
    from cuzk.instrument import Timeline

    check_output_paths(args.out, args.public_out, args.vk_out, args.timeline)
    request = ProofRequest(
        circuit=args.circuit, seed=args.seed, partitions=args.batch, params_dir=args.params
    )
    backend = get_backend(args.backend)
    g2_backend = get_backend("cpu") if args.g2_on_cpu else backend
    local = LocalProver(backend, g2_backend=g2_backend, checked=args.checked, progress=progress_printer())
    tl = Timeline("prove")
    s0 = time.perf_counter()
    local.resident(request, timeline=tl)  # topology, load_params, make_resident: once per process
    t0 = time.perf_counter()
    result = local.prove(request, timeline=tl)
    t1 = time.perf_counter()
    setup, setup_compiling = t0 - s0, compile_seconds_within(s0, t0)
    elapsed, compiling = t1 - t0, compile_seconds_within(t0, t1)
    write_timeline(args.timeline, [tl])
    params_dir = local.params_dir(request)  # None: a real-size set generated into residency, not written
    circuit_name = request.key_name
    pub = result.public_inputs[0] if args.batch == 1 else result.public_inputs
    vk_path = params_dir / f"{circuit_name}.vk" if params_dir is not None else None
    outputs: list[tuple[Path | None, bytes | str]] = [
        (args.out, result.proof_bytes()),
        (args.public_out, json.dumps(_decimal(pub)) + "\n"),
    ]
    if args.vk_out is not None:
        from cuzk.groth16.params_io import vk_to_bytes

        outputs.append((args.vk_out, vk_to_bytes(local.resident(request).vk)))
    for path, data in outputs:
        if path is not None:
            try:
                write_atomic(path, data)
            except OSError as exc:
                raise UsageError(f"{path}: cannot write: {exc.strerror or exc}") from exc
    con = console()
    con.print(phase_table(tl, title=f"prove {circuit_name} x{args.batch} on {backend.name}"))
    con.print(
        f"{len(result.proofs)} proof(s) verified; "
        + final_timing(elapsed - compiling, setup - setup_compiling, compiling + setup_compiling)
        + (f"; wrote {args.out}" if args.out else "")
        + (f" and {args.public_out}" if args.public_out else ""),
        soft_wrap=True,
    )
    vk_shown = args.vk_out or vk_path or "not written (pass --vk-out)"
    con.print(f"verifying key: {vk_shown}", soft_wrap=True)
    if args.out and args.public_out:
        con.print(
            f"check it: cuzk verify --vk {vk_shown} --proof {args.out} --public {args.public_out}",
            soft_wrap=True,
        )
    return 0


def final_timing(prove_s: float, setup_s: float, compiling_s: float) -> str:
    """The final line's times: the work of proving and of the set-up (topology and parameters),
    and apart from them every second numba spent compiling kernels for this command, wherever it
    fell: ahead of the command (both processes' wall time), or inside a phase (issue 29: the
    compile time inside parameter generation and loading had been reported as set-up work)."""
    from cuzk.algebra.precompile import last

    ahead = last()
    ahead_s = ahead.seconds if ahead is not None else 0.0
    text = f"prove {prove_s:.3f} s; set-up {setup_s:.3f} s"
    total = ahead_s + compiling_s
    if total >= 0.05:
        parts = []
        if ahead is not None and ahead.kernels:
            parts.append(
                f"{ahead_s:.1f} s ahead on {ahead.processes} process{'es' if ahead.processes > 1 else ''}"
            )
        if compiling_s >= 0.05:
            parts.append(f"{compiling_s:.1f} s on first use")
        text += f"; plus {total:.1f} s compiling CPU kernels, once ({', '.join(parts)})"
    return text


def _decimal(values: list) -> list:
    return [_decimal(v) if isinstance(v, list) else str(v) for v in values]


def cmd_verify(args: argparse.Namespace) -> int:
    from cuzk.groth16 import proofs_from_bytes, verify
    from cuzk.groth16.params_io import read_vk
    from cuzk.interop.export import read_native_public

    vk = read_vk(args.vk, checked=not args.unchecked)
    try:
        data = args.proof.read_bytes()
    except OSError as exc:
        raise FormatError(f"cannot read {args.proof}: {exc.strerror or exc}") from exc
    proofs = proofs_from_bytes(data)
    inputs = read_native_public(args.public, len(proofs))
    results = [verify(vk, x, p) for x, p in zip(inputs, proofs, strict=True)]
    ok = all(results)
    for j, r in enumerate(results):
        print(f"proof {j}: {'valid' if r else 'INVALID'}", file=sys.stdout if r else sys.stderr)
    return 0 if ok else 1
