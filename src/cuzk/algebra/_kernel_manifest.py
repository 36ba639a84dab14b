"""The numba kernels each command compiles on a cold cache (cuzk.algebra.precompile), with the
seconds each took to compile there (its callees not compiled before it included).

Written by `python tools/record_kernels.py write` (2026-12-06, porep-tiny, CPU backend, each command
on an empty numba cache, one process): `setup` is `cuzk setup` (topology and parameter
generation), `prove` a `cuzk prove --params DIR`, `verify` a `cuzk verify`. A kernel missing
here still compiles on first use; an entry that no longer matches its kernel (renamed, or its
signature changed) is skipped (tests/cli/test_precompile.py checks every entry resolves).
"""

from __future__ import annotations

KERNELS: dict[str, tuple[tuple[str, str, str], ...]] = {
    "setup": (
        (
            "cuzk.algebra._field_kernels",
            "k_neg",
            "(FieldTag(fr), Array(uint64, 2, 'C', False, aligned=True), Array(uint64, 2, 'C', False, aligned=True), int64, int64)",
        ),
        ("cuzk.gadgets.poseidon_params", "_grain_bits", "(Array(uint8, 1, 'C', False, aligned=True), int64)"),
        (
            "cuzk.algebra._field_kernels",
            "k_first_noncanonical",
            "(FieldTag(fr), Array(uint64, 2, 'C', False, aligned=True))",
        ),
        (
            "cuzk.algebra._field_kernels",
            "k_from_canon",
            "(FieldTag(fr), Array(uint64, 2, 'C', False, aligned=True), Array(uint64, 2, 'C', False, aligned=True), int64, int64)",
        ),
        (
            "cuzk.algebra._curve_kernels",
            "k_jac_to_affine",
            "(FieldTag(fq), Array(uint64, 2, 'C', False, aligned=True), Array(uint64, 2, 'C', False, aligned=True), int64, int64)",
        ),
        (
            "cuzk.algebra._curve_kernels",
            "k_jac_to_affine",
            "(FieldTag(fq2), Array(uint64, 2, 'C', False, aligned=True), Array(uint64, 2, 'C', False, aligned=True), int64, int64)",
        ),
        (
            "cuzk.algebra._field_kernels",
            "k_powers",
            "(FieldTag(fr), Array(uint64, 2, 'C', False, aligned=True), Array(uint64, 2, 'C', False, aligned=True), Array(uint64, 2, 'C', False, aligned=True))",
        ),
        (
            "cuzk.algebra._field_kernels",
            "k_powers_chunked",
            "(FieldTag(fr), Array(uint64, 2, 'C', False, aligned=True), Array(uint64, 2, 'C', False, aligned=True), Array(uint64, 2, 'C', False, aligned=True), int64, int64, int64)",
        ),
        (
            "cuzk.backends.cpu.ntt",
            "_bit_reverse_copy",
            "(Array(uint64, 2, 'C', False, aligned=True), Array(uint64, 2, 'C', False, aligned=True), int64, int64, int64)",
        ),
        (
            "cuzk.backends.cpu.ntt",
            "_stages_in_blocks",
            "(FieldTag(fr), Array(uint64, 2, 'C', False, aligned=True), Array(uint64, 2, 'C', False, aligned=True), Array(uint64, 2, 'C', False, aligned=True), int64, int64, int64, int64)",
        ),
        (
            "cuzk.backends.cpu.ntt",
            "_stage",
            "(FieldTag(fr), Array(uint64, 2, 'C', False, aligned=True), Array(uint64, 2, 'C', False, aligned=True), Array(uint64, 2, 'C', False, aligned=True), int64, int64, int64, int64, int64)",
        ),
        (
            "cuzk.backends.cpu.ntt",
            "_scale_const",
            "(FieldTag(fr), Array(uint64, 2, 'C', False, aligned=True), Array(uint64, 2, 'C', False, aligned=True), int64, int64)",
        ),
        (
            "cuzk.backends.cpu.spmv",
            "_spmv",
            "(FieldTag(fr), Array(int64, 1, 'C', False, aligned=True), Array(int64, 1, 'C', False, aligned=True), Array(uint64, 2, 'C', False, aligned=True), Array(uint64, 2, 'C', False, aligned=True), Array(uint64, 2, 'C', False, aligned=True), Array(uint64, 2, 'C', False, aligned=True), int64, int64)",
        ),
        (
            "cuzk.algebra._field_kernels",
            "k_scale",
            "(FieldTag(fr), Array(uint64, 2, 'C', False, aligned=True), Array(uint64, 2, 'C', False, aligned=True), Array(uint64, 2, 'C', False, aligned=True), int64, int64)",
        ),
        (
            "cuzk.algebra._field_kernels",
            "k_add",
            "(FieldTag(fr), Array(uint64, 2, 'C', False, aligned=True), Array(uint64, 2, 'C', False, aligned=True), Array(uint64, 2, 'C', False, aligned=True), int64, int64)",
        ),
        (
            "cuzk.algebra._field_kernels",
            "k_to_canon",
            "(FieldTag(fr), Array(uint64, 2, 'C', False, aligned=True), Array(uint64, 2, 'C', False, aligned=True), int64, int64)",
        ),
        (
            "cuzk.backends.cpu.msm",
            "_fill_table",
            "(FieldTag(fq), Array(uint64, 2, 'C', False, aligned=True), int64, int64, Array(uint64, 2, 'C', False, aligned=True))",
        ),
        (
            "cuzk.backends.cpu.msm",
            "_fixed_base",
            "(FieldTag(fq), Array(uint64, 2, 'C', False, aligned=True), Array(uint64, 2, 'C', False, aligned=True), int64, int64, Array(uint64, 2, 'C', False, aligned=True), int64, int64)",
        ),
        (
            "cuzk.backends.cpu.msm",
            "_fill_table",
            "(FieldTag(fq2), Array(uint64, 2, 'C', False, aligned=True), int64, int64, Array(uint64, 2, 'C', False, aligned=True))",
        ),
        (
            "cuzk.backends.cpu.msm",
            "_fixed_base",
            "(FieldTag(fq2), Array(uint64, 2, 'C', False, aligned=True), Array(uint64, 2, 'C', False, aligned=True), int64, int64, Array(uint64, 2, 'C', False, aligned=True), int64, int64)",
        ),
        (
            "cuzk.algebra._field_kernels",
            "k_to_canon",
            "(FieldTag(fq), Array(uint64, 2, 'C', False, aligned=True), Array(uint64, 2, 'C', False, aligned=True), int64, int64)",
        ),
    ),
    "prove": (
        (
            "cuzk.algebra._field_kernels",
            "k_neg",
            "(FieldTag(fr), Array(uint64, 2, 'C', False, aligned=True), Array(uint64, 2, 'C', False, aligned=True), int64, int64)",
        ),
        (
            "cuzk.algebra._field_kernels",
            "k_from_canon",
            "(FieldTag(fq), Array(uint64, 2, 'C', False, aligned=True), Array(uint64, 2, 'C', False, aligned=True), int64, int64)",
        ),
        (
            "cuzk.algebra._curve_kernels",
            "k_on_curve",
            "(FieldTag(fq), Array(uint64, 2, 'C', False, aligned=True), Array(bool, 1, 'C', False, aligned=True), int64, int64)",
        ),
        (
            "cuzk.algebra._curve_kernels",
            "k_on_curve",
            "(FieldTag(fq2), Array(uint64, 2, 'C', False, aligned=True), Array(bool, 1, 'C', False, aligned=True), int64, int64)",
        ),
        ("cuzk.gadgets.poseidon_params", "_grain_bits", "(Array(uint8, 1, 'C', False, aligned=True), int64)"),
        (
            "cuzk.algebra._field_kernels",
            "k_first_noncanonical",
            "(FieldTag(fr), Array(uint64, 2, 'C', False, aligned=True))",
        ),
        (
            "cuzk.algebra._field_kernels",
            "k_from_canon",
            "(FieldTag(fr), Array(uint64, 2, 'C', False, aligned=True), Array(uint64, 2, 'C', False, aligned=True), int64, int64)",
        ),
        (
            "cuzk.gadgets.poseidon",
            "_k_permute",
            "(FieldTag(fr), Array(uint64, 2, 'C', False, aligned=True), Array(uint64, 2, 'C', False, aligned=True), Array(uint64, 2, 'C', False, aligned=True), Array(uint64, 2, 'C', False, aligned=True), Array(uint64, 2, 'C', False, aligned=True), Array(uint64, 2, 'C', False, aligned=True), Array(uint64, 2, 'C', False, aligned=True), int64, int64, int64, Array(uint64, 2, 'C', False, aligned=True), Array(uint64, 2, 'C', False, aligned=True), bool, int64, int64)",
        ),
        (
            "cuzk.gadgets._fr",
            "_k_to_canon",
            "(FieldTag(fr), Array(uint64, 2, 'C', False, aligned=True), Array(uint64, 2, 'C', False, aligned=True))",
        ),
        (
            "cuzk.r1cs.program",
            "_scatter_bits",
            "(Array(uint64, 2, 'C', False, aligned=True), Array(int64, 1, 'C', False, aligned=True), Array(int64, 1, 'C', False, aligned=True), Array(uint8, 2, 'C', False, aligned=True), Array(uint64, 1, 'C', False, aligned=True))",
        ),
        (
            "cuzk.gadgets._fr",
            "_k_sub",
            "(FieldTag(fr), Array(uint64, 2, 'C', False, aligned=True), Array(uint64, 2, 'C', False, aligned=True), Array(uint64, 2, 'C', False, aligned=True))",
        ),
        (
            "cuzk.gadgets._fr",
            "_k_add",
            "(FieldTag(fr), Array(uint64, 2, 'C', False, aligned=True), Array(uint64, 2, 'C', False, aligned=True), Array(uint64, 2, 'C', False, aligned=True))",
        ),
        (
            "cuzk.backends.cpu.spmv",
            "_spmv",
            "(FieldTag(fr), Array(int64, 1, 'C', False, aligned=True), Array(int32, 1, 'C', False, aligned=True), Array(uint64, 2, 'C', False, aligned=True), Array(uint64, 2, 'C', False, aligned=True), Array(uint64, 2, 'C', False, aligned=True), Array(uint64, 2, 'C', False, aligned=True), int64, int64)",
        ),
        (
            "cuzk.algebra._field_kernels",
            "k_mul",
            "(FieldTag(fr), Array(uint64, 2, 'C', False, aligned=True), Array(uint64, 2, 'C', False, aligned=True), Array(uint64, 2, 'C', False, aligned=True), int64, int64)",
        ),
        (
            "cuzk.algebra._field_kernels",
            "k_powers",
            "(FieldTag(fr), Array(uint64, 2, 'C', False, aligned=True), Array(uint64, 2, 'C', False, aligned=True), Array(uint64, 2, 'C', False, aligned=True))",
        ),
        (
            "cuzk.algebra._field_kernels",
            "k_powers_chunked",
            "(FieldTag(fr), Array(uint64, 2, 'C', False, aligned=True), Array(uint64, 2, 'C', False, aligned=True), Array(uint64, 2, 'C', False, aligned=True), int64, int64, int64)",
        ),
        (
            "cuzk.backends.cpu.ntt",
            "_bit_reverse_copy",
            "(Array(uint64, 2, 'C', False, aligned=True), Array(uint64, 2, 'C', False, aligned=True), int64, int64, int64)",
        ),
        (
            "cuzk.backends.cpu.ntt",
            "_stages_in_blocks",
            "(FieldTag(fr), Array(uint64, 2, 'C', False, aligned=True), Array(uint64, 2, 'C', False, aligned=True), Array(uint64, 2, 'C', False, aligned=True), int64, int64, int64, int64)",
        ),
        (
            "cuzk.backends.cpu.ntt",
            "_stage",
            "(FieldTag(fr), Array(uint64, 2, 'C', False, aligned=True), Array(uint64, 2, 'C', False, aligned=True), Array(uint64, 2, 'C', False, aligned=True), int64, int64, int64, int64, int64)",
        ),
        (
            "cuzk.backends.cpu.ntt",
            "_scale_const",
            "(FieldTag(fr), Array(uint64, 2, 'C', False, aligned=True), Array(uint64, 2, 'C', False, aligned=True), int64, int64)",
        ),
        (
            "cuzk.backends.cpu.ntt",
            "_scale_by",
            "(FieldTag(fr), Array(uint64, 2, 'C', False, aligned=True), Array(uint64, 2, 'C', False, aligned=True), int64, int64)",
        ),
        (
            "cuzk.algebra._field_kernels",
            "k_sub",
            "(FieldTag(fr), Array(uint64, 2, 'C', False, aligned=True), Array(uint64, 2, 'C', False, aligned=True), Array(uint64, 2, 'C', False, aligned=True), int64, int64)",
        ),
        (
            "cuzk.algebra._field_kernels",
            "k_scale",
            "(FieldTag(fr), Array(uint64, 2, 'C', False, aligned=True), Array(uint64, 2, 'C', False, aligned=True), Array(uint64, 2, 'C', False, aligned=True), int64, int64)",
        ),
        (
            "cuzk.algebra._field_kernels",
            "k_to_canon",
            "(FieldTag(fr), Array(uint64, 2, 'C', False, aligned=True), Array(uint64, 2, 'C', False, aligned=True), int64, int64)",
        ),
        (
            "cuzk.algebra.pippenger",
            "_signed_digits",
            "(Array(uint64, 2, 'C', False, aligned=True), int64, int64, Array(int64, 2, 'C', False, aligned=True))",
        ),
        (
            "cuzk.backends.cpu.msm",
            "_window_sums",
            "(FieldTag(fq), Array(uint64, 2, 'C', False, aligned=True), Array(int64, 1, 'C', False, aligned=True), Array(int64, 2, 'C', False, aligned=True), int64, Array(uint64, 2, 'C', False, aligned=True), int64, int64)",
        ),
        (
            "cuzk.algebra.pippenger",
            "_horner",
            "(FieldTag(fq), Array(uint64, 2, 'C', False, aligned=True), int64, Array(uint64, 2, 'C', False, aligned=True))",
        ),
        (
            "cuzk.algebra._curve_kernels",
            "k_jac_add",
            "(FieldTag(fq), Array(uint64, 2, 'C', False, aligned=True), Array(uint64, 2, 'C', False, aligned=True), Array(uint64, 2, 'C', False, aligned=True), int64, int64)",
        ),
        (
            "cuzk.algebra._curve_kernels",
            "k_masked_sum",
            "(FieldTag(fq), Array(uint64, 2, 'C', False, aligned=True), Array(bool, 1, 'C', False, aligned=True), Array(uint64, 2, 'C', False, aligned=True), int64, int64, int64)",
        ),
        (
            "cuzk.algebra._curve_kernels",
            "k_masked_sum",
            "(FieldTag(fq2), Array(uint64, 2, 'C', False, aligned=True), Array(bool, 1, 'C', False, aligned=True), Array(uint64, 2, 'C', False, aligned=True), int64, int64, int64)",
        ),
        (
            "cuzk.backends.cpu.msm",
            "_window_sums",
            "(FieldTag(fq2), Array(uint64, 2, 'C', False, aligned=True), Array(int64, 1, 'C', False, aligned=True), Array(int64, 2, 'C', False, aligned=True), int64, Array(uint64, 2, 'C', False, aligned=True), int64, int64)",
        ),
        (
            "cuzk.algebra.pippenger",
            "_horner",
            "(FieldTag(fq2), Array(uint64, 2, 'C', False, aligned=True), int64, Array(uint64, 2, 'C', False, aligned=True))",
        ),
        (
            "cuzk.algebra._curve_kernels",
            "k_jac_add",
            "(FieldTag(fq2), Array(uint64, 2, 'C', False, aligned=True), Array(uint64, 2, 'C', False, aligned=True), Array(uint64, 2, 'C', False, aligned=True), int64, int64)",
        ),
        (
            "cuzk.algebra._curve_kernels",
            "k_jac_madd",
            "(FieldTag(fq), Array(uint64, 2, 'C', False, aligned=True), Array(uint64, 2, 'C', False, aligned=True), Array(uint64, 2, 'C', False, aligned=True), int64, int64)",
        ),
        (
            "cuzk.algebra._curve_kernels",
            "k_jac_madd",
            "(FieldTag(fq2), Array(uint64, 2, 'C', False, aligned=True), Array(uint64, 2, 'C', False, aligned=True), Array(uint64, 2, 'C', False, aligned=True), int64, int64)",
        ),
        (
            "cuzk.algebra._curve_kernels",
            "k_jac_to_affine",
            "(FieldTag(fq), Array(uint64, 2, 'C', False, aligned=True), Array(uint64, 2, 'C', False, aligned=True), int64, int64)",
        ),
        (
            "cuzk.algebra._curve_kernels",
            "k_jac_to_affine",
            "(FieldTag(fq2), Array(uint64, 2, 'C', False, aligned=True), Array(uint64, 2, 'C', False, aligned=True), int64, int64)",
        ),
        (
            "cuzk.algebra._field_kernels",
            "k_add",
            "(FieldTag(fr), Array(uint64, 2, 'C', False, aligned=True), Array(uint64, 2, 'C', False, aligned=True), Array(uint64, 2, 'C', False, aligned=True), int64, int64)",
        ),
    ),
    "verify": (),
}

#: seconds each entry took to compile when recorded (for the compile-ahead notice's estimate)
COMPILE_S: dict[tuple[str, str, str], float] = {
    (
        "cuzk.algebra._field_kernels",
        "k_neg",
        "(FieldTag(fr), Array(uint64, 2, 'C', False, aligned=True), Array(uint64, 2, 'C', False, aligned=True), int64, int64)",
    ): 0.22,
    (
        "cuzk.gadgets.poseidon_params",
        "_grain_bits",
        "(Array(uint8, 1, 'C', False, aligned=True), int64)",
    ): 0.27,
    (
        "cuzk.algebra._field_kernels",
        "k_first_noncanonical",
        "(FieldTag(fr), Array(uint64, 2, 'C', False, aligned=True))",
    ): 0.14,
    (
        "cuzk.algebra._field_kernels",
        "k_from_canon",
        "(FieldTag(fr), Array(uint64, 2, 'C', False, aligned=True), Array(uint64, 2, 'C', False, aligned=True), int64, int64)",
    ): 0.17,
    (
        "cuzk.algebra._curve_kernels",
        "k_jac_to_affine",
        "(FieldTag(fq), Array(uint64, 2, 'C', False, aligned=True), Array(uint64, 2, 'C', False, aligned=True), int64, int64)",
    ): 1.21,
    (
        "cuzk.algebra._curve_kernels",
        "k_jac_to_affine",
        "(FieldTag(fq2), Array(uint64, 2, 'C', False, aligned=True), Array(uint64, 2, 'C', False, aligned=True), int64, int64)",
    ): 1.72,
    (
        "cuzk.algebra._field_kernels",
        "k_powers",
        "(FieldTag(fr), Array(uint64, 2, 'C', False, aligned=True), Array(uint64, 2, 'C', False, aligned=True), Array(uint64, 2, 'C', False, aligned=True))",
    ): 0.30,
    (
        "cuzk.algebra._field_kernels",
        "k_powers_chunked",
        "(FieldTag(fr), Array(uint64, 2, 'C', False, aligned=True), Array(uint64, 2, 'C', False, aligned=True), Array(uint64, 2, 'C', False, aligned=True), int64, int64, int64)",
    ): 0.22,
    (
        "cuzk.backends.cpu.ntt",
        "_bit_reverse_copy",
        "(Array(uint64, 2, 'C', False, aligned=True), Array(uint64, 2, 'C', False, aligned=True), int64, int64, int64)",
    ): 0.20,
    (
        "cuzk.backends.cpu.ntt",
        "_stages_in_blocks",
        "(FieldTag(fr), Array(uint64, 2, 'C', False, aligned=True), Array(uint64, 2, 'C', False, aligned=True), Array(uint64, 2, 'C', False, aligned=True), int64, int64, int64, int64)",
    ): 0.50,
    (
        "cuzk.backends.cpu.ntt",
        "_stage",
        "(FieldTag(fr), Array(uint64, 2, 'C', False, aligned=True), Array(uint64, 2, 'C', False, aligned=True), Array(uint64, 2, 'C', False, aligned=True), int64, int64, int64, int64, int64)",
    ): 0.16,
    (
        "cuzk.backends.cpu.ntt",
        "_scale_const",
        "(FieldTag(fr), Array(uint64, 2, 'C', False, aligned=True), Array(uint64, 2, 'C', False, aligned=True), int64, int64)",
    ): 0.11,
    (
        "cuzk.backends.cpu.spmv",
        "_spmv",
        "(FieldTag(fr), Array(int64, 1, 'C', False, aligned=True), Array(int64, 1, 'C', False, aligned=True), Array(uint64, 2, 'C', False, aligned=True), Array(uint64, 2, 'C', False, aligned=True), Array(uint64, 2, 'C', False, aligned=True), Array(uint64, 2, 'C', False, aligned=True), int64, int64)",
    ): 0.38,
    (
        "cuzk.algebra._field_kernels",
        "k_scale",
        "(FieldTag(fr), Array(uint64, 2, 'C', False, aligned=True), Array(uint64, 2, 'C', False, aligned=True), Array(uint64, 2, 'C', False, aligned=True), int64, int64)",
    ): 0.11,
    (
        "cuzk.algebra._field_kernels",
        "k_add",
        "(FieldTag(fr), Array(uint64, 2, 'C', False, aligned=True), Array(uint64, 2, 'C', False, aligned=True), Array(uint64, 2, 'C', False, aligned=True), int64, int64)",
    ): 0.09,
    (
        "cuzk.algebra._field_kernels",
        "k_to_canon",
        "(FieldTag(fr), Array(uint64, 2, 'C', False, aligned=True), Array(uint64, 2, 'C', False, aligned=True), int64, int64)",
    ): 0.17,
    (
        "cuzk.backends.cpu.msm",
        "_fill_table",
        "(FieldTag(fq), Array(uint64, 2, 'C', False, aligned=True), int64, int64, Array(uint64, 2, 'C', False, aligned=True))",
    ): 2.43,
    (
        "cuzk.backends.cpu.msm",
        "_fixed_base",
        "(FieldTag(fq), Array(uint64, 2, 'C', False, aligned=True), Array(uint64, 2, 'C', False, aligned=True), int64, int64, Array(uint64, 2, 'C', False, aligned=True), int64, int64)",
    ): 0.80,
    (
        "cuzk.backends.cpu.msm",
        "_fill_table",
        "(FieldTag(fq2), Array(uint64, 2, 'C', False, aligned=True), int64, int64, Array(uint64, 2, 'C', False, aligned=True))",
    ): 4.07,
    (
        "cuzk.backends.cpu.msm",
        "_fixed_base",
        "(FieldTag(fq2), Array(uint64, 2, 'C', False, aligned=True), Array(uint64, 2, 'C', False, aligned=True), int64, int64, Array(uint64, 2, 'C', False, aligned=True), int64, int64)",
    ): 1.34,
    (
        "cuzk.algebra._field_kernels",
        "k_to_canon",
        "(FieldTag(fq), Array(uint64, 2, 'C', False, aligned=True), Array(uint64, 2, 'C', False, aligned=True), int64, int64)",
    ): 0.31,
    (
        "cuzk.algebra._field_kernels",
        "k_from_canon",
        "(FieldTag(fq), Array(uint64, 2, 'C', False, aligned=True), Array(uint64, 2, 'C', False, aligned=True), int64, int64)",
    ): 0.32,
    (
        "cuzk.algebra._curve_kernels",
        "k_on_curve",
        "(FieldTag(fq), Array(uint64, 2, 'C', False, aligned=True), Array(bool, 1, 'C', False, aligned=True), int64, int64)",
    ): 0.89,
    (
        "cuzk.algebra._curve_kernels",
        "k_on_curve",
        "(FieldTag(fq2), Array(uint64, 2, 'C', False, aligned=True), Array(bool, 1, 'C', False, aligned=True), int64, int64)",
    ): 1.27,
    (
        "cuzk.gadgets.poseidon",
        "_k_permute",
        "(FieldTag(fr), Array(uint64, 2, 'C', False, aligned=True), Array(uint64, 2, 'C', False, aligned=True), Array(uint64, 2, 'C', False, aligned=True), Array(uint64, 2, 'C', False, aligned=True), Array(uint64, 2, 'C', False, aligned=True), Array(uint64, 2, 'C', False, aligned=True), Array(uint64, 2, 'C', False, aligned=True), int64, int64, int64, Array(uint64, 2, 'C', False, aligned=True), Array(uint64, 2, 'C', False, aligned=True), bool, int64, int64)",
    ): 0.92,
    (
        "cuzk.gadgets._fr",
        "_k_to_canon",
        "(FieldTag(fr), Array(uint64, 2, 'C', False, aligned=True), Array(uint64, 2, 'C', False, aligned=True))",
    ): 0.16,
    (
        "cuzk.r1cs.program",
        "_scatter_bits",
        "(Array(uint64, 2, 'C', False, aligned=True), Array(int64, 1, 'C', False, aligned=True), Array(int64, 1, 'C', False, aligned=True), Array(uint8, 2, 'C', False, aligned=True), Array(uint64, 1, 'C', False, aligned=True))",
    ): 0.21,
    (
        "cuzk.gadgets._fr",
        "_k_sub",
        "(FieldTag(fr), Array(uint64, 2, 'C', False, aligned=True), Array(uint64, 2, 'C', False, aligned=True), Array(uint64, 2, 'C', False, aligned=True))",
    ): 0.10,
    (
        "cuzk.gadgets._fr",
        "_k_add",
        "(FieldTag(fr), Array(uint64, 2, 'C', False, aligned=True), Array(uint64, 2, 'C', False, aligned=True), Array(uint64, 2, 'C', False, aligned=True))",
    ): 0.08,
    (
        "cuzk.backends.cpu.spmv",
        "_spmv",
        "(FieldTag(fr), Array(int64, 1, 'C', False, aligned=True), Array(int32, 1, 'C', False, aligned=True), Array(uint64, 2, 'C', False, aligned=True), Array(uint64, 2, 'C', False, aligned=True), Array(uint64, 2, 'C', False, aligned=True), Array(uint64, 2, 'C', False, aligned=True), int64, int64)",
    ): 0.37,
    (
        "cuzk.algebra._field_kernels",
        "k_mul",
        "(FieldTag(fr), Array(uint64, 2, 'C', False, aligned=True), Array(uint64, 2, 'C', False, aligned=True), Array(uint64, 2, 'C', False, aligned=True), int64, int64)",
    ): 0.19,
    (
        "cuzk.backends.cpu.ntt",
        "_scale_by",
        "(FieldTag(fr), Array(uint64, 2, 'C', False, aligned=True), Array(uint64, 2, 'C', False, aligned=True), int64, int64)",
    ): 0.10,
    (
        "cuzk.algebra._field_kernels",
        "k_sub",
        "(FieldTag(fr), Array(uint64, 2, 'C', False, aligned=True), Array(uint64, 2, 'C', False, aligned=True), Array(uint64, 2, 'C', False, aligned=True), int64, int64)",
    ): 0.08,
    (
        "cuzk.algebra.pippenger",
        "_signed_digits",
        "(Array(uint64, 2, 'C', False, aligned=True), int64, int64, Array(int64, 2, 'C', False, aligned=True))",
    ): 0.22,
    (
        "cuzk.backends.cpu.msm",
        "_window_sums",
        "(FieldTag(fq), Array(uint64, 2, 'C', False, aligned=True), Array(int64, 1, 'C', False, aligned=True), Array(int64, 2, 'C', False, aligned=True), int64, Array(uint64, 2, 'C', False, aligned=True), int64, int64)",
    ): 2.45,
    (
        "cuzk.algebra.pippenger",
        "_horner",
        "(FieldTag(fq), Array(uint64, 2, 'C', False, aligned=True), int64, Array(uint64, 2, 'C', False, aligned=True))",
    ): 1.50,
    (
        "cuzk.algebra._curve_kernels",
        "k_jac_add",
        "(FieldTag(fq), Array(uint64, 2, 'C', False, aligned=True), Array(uint64, 2, 'C', False, aligned=True), Array(uint64, 2, 'C', False, aligned=True), int64, int64)",
    ): 0.74,
    (
        "cuzk.algebra._curve_kernels",
        "k_masked_sum",
        "(FieldTag(fq), Array(uint64, 2, 'C', False, aligned=True), Array(bool, 1, 'C', False, aligned=True), Array(uint64, 2, 'C', False, aligned=True), int64, int64, int64)",
    ): 0.27,
    (
        "cuzk.algebra._curve_kernels",
        "k_masked_sum",
        "(FieldTag(fq2), Array(uint64, 2, 'C', False, aligned=True), Array(bool, 1, 'C', False, aligned=True), Array(uint64, 2, 'C', False, aligned=True), int64, int64, int64)",
    ): 1.96,
    (
        "cuzk.backends.cpu.msm",
        "_window_sums",
        "(FieldTag(fq2), Array(uint64, 2, 'C', False, aligned=True), Array(int64, 1, 'C', False, aligned=True), Array(int64, 2, 'C', False, aligned=True), int64, Array(uint64, 2, 'C', False, aligned=True), int64, int64)",
    ): 2.37,
    (
        "cuzk.algebra.pippenger",
        "_horner",
        "(FieldTag(fq2), Array(uint64, 2, 'C', False, aligned=True), int64, Array(uint64, 2, 'C', False, aligned=True))",
    ): 2.78,
    (
        "cuzk.algebra._curve_kernels",
        "k_jac_add",
        "(FieldTag(fq2), Array(uint64, 2, 'C', False, aligned=True), Array(uint64, 2, 'C', False, aligned=True), Array(uint64, 2, 'C', False, aligned=True), int64, int64)",
    ): 1.26,
    (
        "cuzk.algebra._curve_kernels",
        "k_jac_madd",
        "(FieldTag(fq), Array(uint64, 2, 'C', False, aligned=True), Array(uint64, 2, 'C', False, aligned=True), Array(uint64, 2, 'C', False, aligned=True), int64, int64)",
    ): 0.74,
    (
        "cuzk.algebra._curve_kernels",
        "k_jac_madd",
        "(FieldTag(fq2), Array(uint64, 2, 'C', False, aligned=True), Array(uint64, 2, 'C', False, aligned=True), Array(uint64, 2, 'C', False, aligned=True), int64, int64)",
    ): 1.16,
}
