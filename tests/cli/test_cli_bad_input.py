"""Every `cuzk` command against a table of bad arguments and bad files: exit 2, one clear line,
no traceback. The commands come from the parser itself, so a new command is covered when it is
registered; its options are classified by their declared types (`cuzk.cli.output`'s path roles
and counts), which the first test requires of every option that takes a path or a number."""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

import pytest

from cuzk.cli import output as O
from cuzk.cli.main import build_parser, main

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "interop"))  # the hand-built circom toy
from circom_toy import toy, witness_array

CIRCUIT = "porep-tiny"


def _commands(
    parser: argparse.ArgumentParser, path: tuple[str, ...] = ()
) -> Iterator[tuple[tuple[str, ...], argparse.ArgumentParser]]:
    """(command words, parser) for every command and command group under `parser`."""
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for name, sub in action.choices.items():
                yield (*path, name), sub
                yield from _commands(sub, (*path, name))


def _is_group(p: argparse.ArgumentParser) -> bool:
    return any(isinstance(a, argparse._SubParsersAction) for a in p._actions)


def _args(p: argparse.ArgumentParser) -> list[argparse.Action]:
    return [a for a in p._actions if not isinstance(a, (argparse._HelpAction, argparse._SubParsersAction))]


COMMANDS = list(_commands(build_parser()))
LEAVES = [(words, p) for words, p in COMMANDS if not _is_group(p)]


def test_every_path_and_number_option_declares_its_role():
    for words, p in LEAVES:
        for a in _args(p):
            assert a.type not in (Path, int, str, float), (
                f"`cuzk {' '.join(words)}` {a.dest}: use a type from cuzk.cli.output "
                "(input_file, input_dir, output_file, output_dir, positive_int, nonnegative_int)"
            )
            assert a.help, f"`cuzk {' '.join(words)}` {a.dest} has no help text"


@dataclass
class Files:
    """Bad and filler files, made once per module."""

    root: Path
    good: dict[tuple[str, ...], Path] = field(
        default_factory=dict
    )  # (command words..., dest) -> a valid file

    def make(self) -> Files:
        r = self.root
        self._make_good()
        (r / "garbage.bin").write_bytes(bytes(range(256)) * 3)
        (r / "empty").write_bytes(b"")
        (r / "a-file").write_text("x")
        (r / "a-dir").mkdir()
        (r / "empty-dir").mkdir()
        for name, value in (
            ("list.json", [None, {"a": 1}]),
            ("number.json", 5),
            ("object.json", {"a": 1}),
            ("str.json", "x"),
        ):
            (r / name).write_text(json.dumps(value))
        (r / "bad-manifest").mkdir()
        (r / "bad-manifest" / f"{CIRCUIT}.json").write_text("[1, 2]")
        return self

    def _make_good(self) -> None:
        """Valid inputs for the commands that read them, so each bad argument is tested alone."""
        from cuzk.interop.r1cs import write_r1cs
        from cuzk.interop.wtns import write_wtns

        r, g = self.root, self.good
        params, native, circom = r / "params", r / "native", r / "circom"
        native.mkdir()
        circom.mkdir()
        assert main(["setup", "--circuit", CIRCUIT, "--out", str(params), "--backend", "cpu"]) == 0
        proof, public, vk = native / "proof.bin", native / "public.json", params / f"{CIRCUIT}.vk"
        prove = ["prove", "--circuit", CIRCUIT, "--params", str(params), "--backend", "cpu"]
        assert main([*prove, "--out", str(proof), "--public-out", str(public)]) == 0
        r1cs, w = toy()
        write_r1cs(circom / "c.r1cs", r1cs)
        write_wtns(circom / "c.wtns", witness_array(w))
        c = {n: circom / n for n in ("c.r1cs", "c.wtns", "c.zkey", "proof.json", "public.json", "vk.json")}
        assert main(["groth16", "setup", str(c["c.r1cs"]), str(c["c.zkey"]), "--backend", "cpu"]) == 0
        assert (
            main(
                ["groth16", "prove", *(str(c[n]) for n in ("c.zkey", "c.wtns", "proof.json", "public.json"))]
            )
            == 0
        )
        assert main(["groth16", "export-vk", str(c["c.zkey"]), str(c["vk.json"])]) == 0
        g.update(
            {
                ("prove", "params"): params,
                ("bench", "single", "params"): params,
                ("verify", "vk"): vk,
                ("verify", "proof"): proof,
                ("verify", "public"): public,
                ("export", "snarkjs", "vk"): vk,
                ("export", "snarkjs", "proof"): proof,
                ("export", "snarkjs", "public"): public,
                ("groth16", "prove", "zkey"): c["c.zkey"],
                ("groth16", "prove", "witness"): c["c.wtns"],
                ("groth16", "verify", "vk"): c["vk.json"],
                ("groth16", "verify", "public"): c["public.json"],
                ("groth16", "verify", "proof"): c["proof.json"],
                ("groth16", "export-vk", "zkey"): c["c.zkey"],
                ("groth16", "setup", "r1cs"): c["c.r1cs"],
            }
        )

    def bad(self, role) -> dict[str, Path]:
        r = self.root
        under_a_file = r / "a-file" / "sub"
        table = {
            O.input_file: {
                "missing": r / "missing.bin",
                "empty": r / "empty",
                "garbage": r / "garbage.bin",
                "a directory": r / "a-dir",
                "under a file": under_a_file,
                "json list": r / "list.json",
                "json number": r / "number.json",
                "json object": r / "object.json",
                "json string": r / "str.json",
            },
            O.input_dir: {
                "missing": r / "missing-dir",
                "a file": r / "a-file",
                "empty folder": r / "empty-dir",
                "manifest of the wrong shape": r / "bad-manifest",
                "under a file": under_a_file,
            },
            O.output_file: {
                "a directory": r / "a-dir",
                "under a file": under_a_file,
                "in a missing folder": r / "missing-dir" / "out",
            },
            O.output_dir: {"a file": r / "a-file", "under a file": under_a_file / "deeper"},
        }
        return table[role]

    def filler(self, words: tuple[str, ...], action: argparse.Action, n: int) -> str:
        if (*words, action.dest) in self.good:
            return str(self.good[(*words, action.dest)])
        if action.type in (O.input_file, O.input_dir):
            return (
                str(self.root / "garbage.bin")
                if action.type is O.input_file
                else str(self.root / "empty-dir")
            )
        if action.type is O.output_file:
            return str(self.root / f"fresh-{n}.out")
        if action.type is O.output_dir:
            return str(self.root / f"fresh-dir-{n}")
        if action.type in O.INT_TYPES:
            return "1"
        if action.choices:
            return next(iter(action.choices))
        return CIRCUIT


def _argv(
    words, p, files: Files, override: argparse.Action | None = None, value: str | None = None
) -> list[str]:
    """The command with its required arguments and its valid inputs filled (`value` for `override`)."""
    argv = list(words)
    for n, a in enumerate(_args(p)):
        required = False if a.nargs in ("*", "?") else not a.option_strings or bool(a.required)
        if a is not override and not required and (*words, a.dest) not in files.good:
            continue
        text = value if a is override else files.filler(words, a, n)
        argv += [a.option_strings[0], text] if a.option_strings else [text]
    return argv


def _cases(files: Files) -> Iterator[tuple[str, list[str]]]:
    for words, p in COMMANDS:
        name = " ".join(words)
        if _is_group(p):
            yield f"{name} (no sub-command)", list(words)
            continue
        yield f"{name} --no-such-option", [*_argv(words, p, files), "--no-such-option"]
        for a in _args(p):
            label = a.option_strings[0] if a.option_strings else a.dest
            if a.type in O.INT_TYPES:
                for v in ("-5", "x", "1.5", *(["0"] if a.type is O.positive_int else [])):
                    yield f"{name} {label} {v}", _argv(words, p, files, a, v)
            elif a.type in O.PATH_TYPES:
                for what, path in files.bad(a.type).items():
                    yield f"{name} {label} <{what}>", _argv(words, p, files, a, str(path))
            elif a.choices:
                yield f"{name} {label} nonsense", _argv(words, p, files, a, "nonsense")
            elif a.dest == "circuit":
                yield f"{name} --circuit no-such-circuit", _argv(words, p, files, a, "no-such-circuit")
            elif a.nargs == "*" and not a.option_strings:
                yield f"{name} {label}=no-such-thing", [*_argv(words, p, files), "no-such-thing"]


@pytest.fixture(scope="module")
def files(tmp_path_factory) -> Files:
    return Files(tmp_path_factory.mktemp("bad")).make()


@pytest.fixture(autouse=True)
def _isolated_cache(tmp_path_factory, monkeypatch):
    monkeypatch.setenv("CUZK_CACHE_DIR", str(tmp_path_factory.getbasetemp() / "cuzk-cache"))


def _run(argv: list[str], capsys) -> tuple[int, str]:
    try:
        code = main(argv)
    except SystemExit as exc:  # argparse's usage errors
        code = exc.code if isinstance(exc.code, int) else 2
    return code, capsys.readouterr().err


def test_every_command_refuses_every_bad_argument_with_exit_2(files, capsys):
    failures = []
    for label, argv in _cases(files):
        code, err = _run(argv, capsys)
        if code != 2 or "Traceback" in err or not err.strip():
            failures.append(f"{label}: exit {code}: {err.strip()[-300:]}")
        elif "error" in err and len([ln for ln in err.splitlines() if "error" in ln]) != 1:
            failures.append(f"{label}: more than one error line: {err.strip()[-300:]}")
    assert not failures, "\n".join(failures)
    assert len(LEAVES) >= 14  # prove, setup, verify, groth16 x4, export snarkjs, selftest, circuits, ...


def test_every_command_is_in_the_table(files):
    named = {tuple(argv[: len(words)]) for _, argv in _cases(files) for words, _ in COMMANDS}
    assert {words for words, _ in COMMANDS} <= named


def test_the_valid_fillers_are_accepted(files, capsys):
    """The table's control: with only valid arguments the commands that read files succeed."""
    for words in (("verify",), ("groth16", "verify")):
        p = dict(COMMANDS)[words]
        assert main(_argv(words, p, files)) == 0, capsys.readouterr().err


# --- the cases the issue lists by name ------------------------------------------------------
def _verify_native(files: Files, public: Path) -> list[str]:
    g = files.good
    return [
        "verify",
        "--vk",
        str(g[("verify", "vk")]),
        "--proof",
        str(g[("verify", "proof")]),
        "--public",
        str(public),
    ]


@pytest.mark.parametrize("values", [["0_1"], [" 1 "], [1], ["+1"], ["0x1"], ["1.0"], 5, {"a": 1}, [[1]]])
def test_native_public_inputs_are_decimal_strings_only(files, tmp_path, capsys, values):
    good = json.loads(files.good[("verify", "public")].read_text())
    if isinstance(values, list) and len(values) == 1:
        values = [values[0], *good[1:]]  # the right count, one value in a refused spelling
    public = tmp_path / "public.json"
    public.write_text(json.dumps(values))
    code, err = _run(_verify_native(files, public), capsys)
    assert code == 2 and "Traceback" not in err
    assert "decimal string" in err or "expected public inputs" in err


def test_a_zkey_with_a_flipped_byte_in_a_point_names_the_point(files, tmp_path, capsys):
    from cuzk.interop.zkey import read_zkey

    zkey = files.good[("groth16", "prove", "zkey")]
    data = bytearray(zkey.read_bytes())
    at = data.find(read_zkey(zkey).c[1].tobytes())
    assert at > 0
    data[at + 20] ^= 0x40
    bad = tmp_path / "flipped.zkey"
    bad.write_bytes(bytes(data))
    wtns = files.good[("groth16", "prove", "witness")]
    code, err = _run(
        ["groth16", "prove", str(bad), str(wtns), str(tmp_path / "p.json"), str(tmp_path / "q.json")], capsys
    )
    assert code == 2, err
    assert "C point 1" in err and "Traceback" not in err
    assert not (tmp_path / "p.json").exists()


def test_setup_out_is_checked_before_any_work(files, tmp_path, capsys, monkeypatch):
    import cuzk.groth16
    from cuzk.circuits.base import Circuit

    def no_work(*_a, **_k):
        raise AssertionError("the computation ran before the output was checked")

    monkeypatch.setattr(cuzk.groth16, "generate_parameters", no_work)
    monkeypatch.setattr(Circuit, "topology", no_work)
    a_file = tmp_path / "file"
    a_file.write_text("x")
    read_only = tmp_path / "ro"
    read_only.mkdir()
    real_access = O.os.access
    monkeypatch.setattr(
        O.os, "access", lambda p, mode: False if Path(p) == read_only else real_access(p, mode)
    )
    for out, says in (
        (a_file, "is a file"),
        (a_file / "sub", "is a file, not a folder"),
        (read_only / "p", "not writable"),
    ):
        code, err = _run(["setup", "--circuit", CIRCUIT, "--out", str(out)], capsys)
        assert code == 2 and says in err and "Traceback" not in err


def test_export_snarkjs_onto_an_existing_file(files, tmp_path, capsys):
    target = tmp_path / "exists"
    target.write_text("keep me")
    code, err = _run(["export", "snarkjs", str(files.good[("export", "snarkjs", "vk")]), str(target)], capsys)
    assert code == 2 and "is a file" in err
    assert target.read_text() == "keep me"


@pytest.mark.parametrize(
    "argv, says",
    [
        (["prove", "--circuit", CIRCUIT, "--seed", "-5"], "--seed: must be at least 0"),
        (["bench", "single", "--runs", "0"], "--runs: must be at least 1"),
        (["bench", "synth", "--circuit", CIRCUIT, "--backend", "gpu"], "invalid choice"),
    ],
)
def test_bad_numbers_and_choices_are_usage_errors(argv, says, capsys):
    code, err = _run(argv, capsys)
    assert code == 2 and says in err and "Traceback" not in err


def test_bench_batch_addr_arguments(files, tmp_path, capsys):
    """`bench batch --addr`: a bad address, no daemon there, and the options that belong to one mode only."""
    batch = ["bench", "batch", "--circuit", CIRCUIT, "--count", "1"]
    vk = str(files.good[("verify", "vk")])
    nobody = f"unix://{tmp_path}/no-daemon.sock"
    for argv, says in (
        ([*batch, "--addr", "nonsense"], "neither unix:///path nor host:port"),
        ([*batch, "--token", "t"], "--token goes with --addr"),
        ([*batch, "--vk", vk], "--vk goes with --addr"),
        ([*batch, "--addr", nobody, "--set", "batch.max_size=2"], "--set applies to the in-process engine"),
        ([*batch, "--addr", nobody, "--backend", "cpu"], "--backend applies to the in-process engine"),
        ([*batch, "--addr", nobody, "--timeline", str(tmp_path / "t.jsonl")], "--timeline applies to"),
    ):
        code, err = _run(argv, capsys)
        assert code == 2 and says in err and "Traceback" not in err, (argv, err)
        assert len([ln for ln in err.splitlines() if "error" in ln]) == 1, err
    assert not (tmp_path / "t.jsonl").exists()
    code, err = _run([*batch, "--addr", nobody, "--vk", vk], capsys)  # no daemon: exit 5, try again
    assert code == 5 and "no daemon is running at" in err and "Traceback" not in err, err


def test_a_manifest_of_the_wrong_shape_is_exit_2(files, capsys):
    bad = files.bad(O.input_dir)["manifest of the wrong shape"]
    code, err = _run(["prove", "--circuit", CIRCUIT, "--params", str(bad)], capsys)
    assert code == 2 and "manifest" in err and "Traceback" not in err


# --- the one entry point -------------------------------------------------------------------
@pytest.fixture
def stray_bug(monkeypatch):
    import cuzk.cli.cache

    def broken(_args):
        return {}["no such key"]  # a bug: a KeyError no cuzk code meant to raise

    monkeypatch.setattr(cuzk.cli.cache, "cmd_info", broken)


def test_a_stray_exception_is_one_line_and_exit_70(stray_bug, capsys, monkeypatch):
    from cuzk.cli.main import INTERNAL_ERROR_EXIT

    monkeypatch.delenv("CUZK_DEBUG", raising=False)
    code, err = _run(["cache", "info"], capsys)
    assert code == INTERNAL_ERROR_EXIT == 70
    assert err.strip().count("\n") == 0 and "internal error: KeyError" in err and "--debug" in err


@pytest.mark.parametrize("how", ["flag", "env"])
def test_debug_prints_the_traceback(stray_bug, capsys, monkeypatch, how):
    if how == "env":
        monkeypatch.setenv("CUZK_DEBUG", "1")
    code, err = _run(["--debug", "cache", "info"] if how == "flag" else ["cache", "info"], capsys)
    assert code == 70
    assert "Traceback" in err and "no such key" in err
