"""Compiling a command's kernels ahead, on two processes (cuzk.algebra.precompile; issue 29's first run)."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import pytest

from cuzk.algebra import precompile as pc
from cuzk.algebra._kernel_manifest import KERNELS
from cuzk.cli.main import build_parser, kernel_lists


def test_every_recorded_kernel_resolves_and_its_signature_reads_back() -> None:
    """A renamed kernel, changed parameters or a type the reader does not know would silently
    compile late again: every entry must still match its kernel, and have a recorded cost."""
    from cuzk.algebra._kernel_manifest import COMPILE_S

    assert set(KERNELS) == {"setup", "prove", "verify"}
    assert KERNELS["setup"] and KERNELS["prove"]  # verify reads a few points: none (issue 29)
    for entries in KERNELS.values():
        for entry in entries:
            module, qualname, text = entry
            assert pc.dispatcher(module, qualname) is not None, (module, qualname)
            sig = pc.signature(text)
            assert sig is not None and str(sig) == text, text
            assert pc.resolve(entry) is not None, entry
            assert COMPILE_S[entry] > 0


def test_stale_entries_are_skipped_not_fatal(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """An entry recorded before a kernel's parameters changed (or one renamed away) is neither
    counted as cold nor compiled, and a signature numba refuses is skipped."""
    mod = "ux_precompile_stale"
    (tmp_path / f"{mod}.py").write_text(KERNELS_SRC)
    monkeypatch.syspath_prepend(str(tmp_path))
    stale = [
        (mod, "twice", "(int64, int64)"),  # twice takes one argument now
        (mod, "gone", "(int64,)"),  # renamed away
        (mod, "twice", "(Unknown(3),)"),  # a type the reader does not know
    ]
    for entry in stale:
        assert pc.resolve(entry) is None and pc.is_cached(entry)
    refused = (mod, "twice", "(FieldTag(fq2),)")  # the arity matches, but a tag times 2 does not type
    assert pc.resolve(refused) is not None
    assert pc.compile_entries([*stale, refused, (mod, "twice", "(int64,)")]) == 1
    monkeypatch.setitem(KERNELS, "stale", tuple(stale))
    assert pc.precompile(["stale"]).kernels == 0


def test_the_estimate_sums_the_recorded_costs_of_what_is_left(monkeypatch: pytest.MonkeyPatch) -> None:
    from cuzk.algebra import _kernel_manifest as manifest

    a, b, c = ("m", "a", "()"), ("m", "b", "()"), ("m", "c", "(FieldTag(fq2),)")
    monkeypatch.setattr(manifest, "COMPILE_S", {a: 2.0, b: 3.0, c: 4.0})
    assert pc.estimate_s([a, b], [c]) == 5.0  # the longer side: this process's 2 + 3
    assert pc.estimate_s([a], [c]) == 4.0
    assert pc.estimate_s([("m", "unknown", "()")], []) == pc.DEFAULT_COMPILE_S


def test_the_final_line_counts_every_compile_second_as_compiling(monkeypatch: pytest.MonkeyPatch) -> None:
    """Issue 29: compile time inside parameter generation and loading was reported as set-up work,
    and the compile-ahead step not at all."""
    from cuzk.cli.prove import final_timing

    monkeypatch.setattr(pc, "_last", pc.Precompiled(kernels=44, seconds=16.3, processes=2))
    line = final_timing(0.215, 1.148, 2.5)
    assert line == (
        "prove 0.215 s; set-up 1.148 s; plus 18.8 s compiling CPU kernels, once "
        "(16.3 s ahead on 2 processes, 2.5 s on first use)"
    )
    monkeypatch.setattr(pc, "_last", pc.Precompiled(kernels=0, seconds=0.0, processes=0))
    assert final_timing(0.2, 1.0, 0.0) == "prove 0.200 s; set-up 1.000 s"  # a warm cache
    monkeypatch.setattr(pc, "_last", None)
    assert final_timing(0.2, 1.0, 3.0).endswith("plus 3.0 s compiling CPU kernels, once (3.0 s on first use)")


def test_the_lists_a_command_needs(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from cuzk import backends, config

    monkeypatch.setenv("CUZK_CACHE_DIR", str(tmp_path / "cache"))
    config.reload()
    monkeypatch.setattr(backends, "cuda_unavailable_reason", lambda: "no GPU here")
    parse = build_parser().parse_args

    def lists(*argv: str) -> list[str]:
        return kernel_lists(parse(list(argv)))

    assert lists("verify", "--vk", __file__, "--proof", __file__, "--public", __file__) == ["verify"]
    assert lists("prove", "--circuit", "porep-tiny") == ["setup", "prove"]  # no parameters cached yet
    made = tmp_path / "cache" / "params" / "porep-tiny-0123456789abcdef"
    made.mkdir(parents=True)
    (made / "porep-tiny.json").write_text("{}")
    assert lists("prove", "--circuit", "porep-tiny") == ["prove"]  # parameters there: no generation
    assert lists("prove", "--circuit", "porep-tiny", "--params", str(tmp_path)) == ["prove"]
    assert lists("prove", "--circuit", "porep-tiny", "--backend", "cuda") == []  # other kernels
    assert lists("setup", "--circuit", "porep-tiny", "--out", str(tmp_path / "p")) == ["setup"]
    assert lists("circuits") == []
    assert kernel_lists(argparse.Namespace()) == []


KERNELS_SRC = """
from numba import njit


@njit(cache=True)
def twice(x):
    return x * 2


@njit(cache=True)
def tagged(F, x):
    return x + 1
"""


def test_cold_kernels_compile_on_two_processes_and_land_in_the_cache(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """One entry compiles here, the Fq2 one in the helper process; both are cached afterwards,
    and a second call finds nothing to do."""
    mod = "ux_precompile_probe"
    (tmp_path / f"{mod}.py").write_text(KERNELS_SRC)
    monkeypatch.syspath_prepend(str(tmp_path))
    monkeypatch.setenv("PYTHONPATH", str(tmp_path) + ":" + ":".join(sys.path))
    entries = ((mod, "twice", "(int64,)"), (mod, "tagged", "(FieldTag(fq2), int64)"))
    monkeypatch.setitem(KERNELS, "probe", entries)
    assert [pc.is_cached(e) for e in entries] == [False, False]
    assert pc.split(entries) == ([entries[0]], [entries[1]])
    lines: list[str] = []
    done = pc.precompile(["probe"], say=lines.append)
    assert (done.kernels, done.processes) == (2, 2)
    assert "compiling 2 CPU kernels (probe), once, on 2 processes" in lines[0]
    assert [pc.is_cached(e) for e in entries] == [True, True]
    assert pc.precompile(["probe"]).kernels == 0
