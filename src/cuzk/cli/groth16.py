"""`cuzk groth16 ...`: circom/snarkjs files on BLS12-381, argument-compatible with snarkjs.

cuzk groth16 prove circuit.zkey witness.wtns proof.json public.json
cuzk groth16 verify verification_key.json public.json proof.json   (0 valid, 1 invalid, 2 bad input)
cuzk groth16 export-vk circuit.zkey verification_key.json
cuzk groth16 setup circuit.r1cs circuit.zkey                      (development key, NOT a ceremony)
"""

from __future__ import annotations

import argparse
import warnings
from collections.abc import Iterator
from contextlib import contextmanager

from cuzk.cli.output import (
    add_backend_option,
    check_output_dir,
    check_output_paths,
    err_console,
    input_file,
    output_dir,
    output_file,
    phase_table,
    progress_printer,
    require_subcommand,
)


def register(sub: argparse._SubParsersAction) -> None:
    g = sub.add_parser("groth16", help="circom/snarkjs Groth16: prove, verify, export-vk, setup")
    cmds = g.add_subparsers(dest="groth16_command", metavar="COMMAND")
    require_subcommand(g)

    p = cmds.add_parser(
        "prove", help="prove with a snarkjs .zkey and a circom .wtns (like `snarkjs groth16 prove`)"
    )
    p.add_argument("zkey", type=input_file, help="snarkjs Groth16 proving key (.zkey)")
    p.add_argument("witness", type=input_file, help="circom witness (.wtns)")
    p.add_argument("proof", type=output_file, help="where to write proof.json")
    p.add_argument("public", type=output_file, help="where to write public.json")
    p.add_argument(
        "--g2-on-cpu", action="store_true", help="run the B MSM on G2 on the CPU (finalize off the GPU)"
    )
    p.add_argument("--no-check", action="store_true", help="skip verifying the proof before writing it")
    p.add_argument("--timing", action="store_true", help="print the time of each phase")
    add_backend_option(p)
    p.set_defaults(func=cmd_prove)

    p = cmds.add_parser("verify", help="verify a snarkjs proof: exit 0 valid, 1 invalid, 2 bad input")
    p.add_argument("vk", type=input_file, help="verification_key.json")
    p.add_argument("public", type=input_file, help="public.json")
    p.add_argument("proof", type=input_file, help="proof.json")
    p.set_defaults(func=cmd_verify)

    p = cmds.add_parser("export-vk", help="write the verification_key.json of a .zkey")
    p.add_argument("zkey", type=input_file, help="snarkjs Groth16 proving key (.zkey)")
    p.add_argument("vk", type=output_file, help="where to write verification_key.json")
    p.set_defaults(func=cmd_export_vk)

    p = cmds.add_parser(
        "setup", help="make a development .zkey from fresh random toxic waste (NOT a trusted ceremony)"
    )
    p.add_argument(
        "r1cs", type=input_file, help="circom constraint system (.r1cs, compiled with --prime bls12381)"
    )
    p.add_argument("zkey", type=output_file, help="where to write the .zkey")
    p.add_argument("--timing", action="store_true", help="print the time of each phase")
    add_backend_option(p)
    p.set_defaults(func=cmd_setup)

    e = sub.add_parser("export", help="export native keys and proofs to other tools' formats")
    targets = e.add_subparsers(dest="export_target", metavar="TARGET")
    require_subcommand(e)
    p = targets.add_parser(
        "snarkjs", help="a native .vk (and proofs) as verification_key.json, proof.json, public.json"
    )
    p.add_argument("vk", type=input_file, help="a native (bellperson-format) .vk file")
    p.add_argument("out", type=output_dir, help="directory for the JSON files (created if absent)")
    p.add_argument(
        "--proof", type=input_file, help="native proof bytes (192 per proof, e.g. from `cuzk prove --out`)"
    )
    p.add_argument("--public", type=input_file, help="their public inputs (`cuzk prove --public-out`)")
    p.set_defaults(func=cmd_export_snarkjs)


@contextmanager
def _loud_warnings() -> Iterator[None]:
    """Show cuzk's warnings (unbound public inputs) as one bold line each, whatever the filters say."""
    from cuzk.interop.zkey import UnboundInputsWarning

    def show(
        message: Warning | str,
        category: type[Warning],
        filename: str,
        lineno: int,
        file: object = None,
        line: str | None = None,
    ) -> None:
        err_console().print(f"[bold red]WARNING:[/bold red] {message}", soft_wrap=True)

    with warnings.catch_warnings():
        warnings.simplefilter("always", UnboundInputsWarning)
        warnings.showwarning = show
        yield


def cmd_prove(args: argparse.Namespace) -> int:
    from cuzk.backends import get_backend
    from cuzk.groth16 import prover
    from cuzk.instrument import Timeline
    from cuzk.interop import snarkjs_json
    from cuzk.interop.prover import load_proving_key
    from cuzk.interop.zkey import read_zkey

    check_output_paths(args.proof, args.public)
    backend = get_backend(args.backend)
    g2_backend = get_backend("cpu") if args.g2_on_cpu else backend
    tl = Timeline("groth16-prove")
    with tl.span("load_key"), _loud_warnings():
        zk = read_zkey(args.zkey)
        zk.validate_points()  # a corrupted query point is a format error, not a bad proof later
        pk = load_proving_key(zk, backend, g2_backend=g2_backend)
    if args.no_check:  # snarkjs's behaviour, asked for: the phases without the final verification
        pending = prover.start(prover.synthesize(pk, [args.witness], timeline=tl), pk)
        (proof,), (public,) = prover.finalize(pending, pk), prover.public_inputs(pending)
    else:
        result = prover.prove(pk, [args.witness], timeline=tl)
        (proof,), (public,) = result.proofs, result.public_inputs
    with tl.span("write"):
        snarkjs_json.write_proof(args.proof, proof)
        snarkjs_json.write_public(args.public, public)
    if args.timing:
        err_console().print(phase_table(tl, f"groth16 prove ({backend.name})"))
    return 0


def cmd_verify(args: argparse.Namespace) -> int:
    from cuzk.groth16.verifier import verify
    from cuzk.interop import snarkjs_json
    from cuzk.interop.zkey import warn_if_unbound

    vk = snarkjs_json.read_vk(args.vk)
    public = snarkjs_json.read_public(args.public)
    proof = snarkjs_json.read_proof(args.proof)
    with _loud_warnings():
        warn_if_unbound(vk.ic, str(args.vk))
    ok = snarkjs_json.proof_points_valid(proof) and verify(vk, public, proof)
    if ok:
        print("OK!")
        return 0
    err_console().print("[bold red]Invalid proof[/bold red]")
    return 1


def cmd_export_vk(args: argparse.Namespace) -> int:
    from cuzk.interop import snarkjs_json
    from cuzk.interop.zkey import read_zkey, warn_if_unbound

    check_output_paths(args.vk)
    zk = read_zkey(args.zkey)
    with _loud_warnings():
        warn_if_unbound(zk.ic, str(args.zkey))
    snarkjs_json.write_vk(args.vk, zk.verifying_key())
    return 0


def cmd_setup(args: argparse.Namespace) -> int:
    from cuzk.backends import get_backend
    from cuzk.instrument import Timeline
    from cuzk.interop.r1cs import read_r1cs
    from cuzk.interop.setup import setup_zkey
    from cuzk.interop.zkey import write_zkey

    check_output_paths(args.zkey)
    backend = get_backend(args.backend)
    say = progress_printer()
    err_console().print(
        "[bold yellow]development setup, NOT a ceremony:[/bold yellow] the toxic waste is random and "
        "discarded, but whoever runs this could keep it and forge proofs"
    )
    tl = Timeline("groth16-setup")
    with tl.span("read_r1cs"):
        say(f"reading {args.r1cs}")
        r1cs = read_r1cs(args.r1cs)
        say(
            f"{r1cs.n_constraints} constraints, {r1cs.n_wires} wires, {r1cs.n_public} public signals "
            f"({r1cs.n_pub_out} outputs, {r1cs.n_pub_in} inputs)"
        )
    zk = setup_zkey(r1cs, backend, timeline=tl, progress=say)
    with tl.span("write"):
        say(f"writing {args.zkey}")
        write_zkey(args.zkey, zk)
    say("done")
    if args.timing:
        err_console().print(phase_table(tl, f"groth16 setup ({backend.name})"))
    return 0


def cmd_export_snarkjs(args: argparse.Namespace) -> int:
    from cuzk.interop.export import export_native_files

    check_output_dir(args.out)
    for path in export_native_files(args.vk, args.out, args.proof, args.public):
        print(path)
    return 0
