"""The numba kernels each command compiles on a cold cache (cuzk.algebra.precompile).

Recorded on the CPU backend, each on a cold cache, with
`python tools/record_kernels.py -- COMMAND ...` (2026-12-04, porep-tiny):
`setup` is `cuzk setup` (topology and parameter generation), `prove` a `cuzk prove --params DIR`,
`verify` a `cuzk verify`. A kernel missing here still compiles on first use; an entry whose
kernel was renamed is skipped (tests/cli/test_precompile.py checks every entry resolves).
"""

from __future__ import annotations

KERNELS: dict[str, tuple[tuple[str, str, str], ...]] = {
    "setup": (
        (
            "cuzk.algebra._field_kernels",
            "k_neg",
            "(FieldTag(fr), Array(uint64, 2, 'C', False, aligned=True), Array(uint64, 2, 'C', False, aligned=True))",
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
            "(FieldTag(fr), Array(uint64, 2, 'C', False, aligned=True), Array(uint64, 2, 'C', False, aligned=True))",
        ),
        (
            "cuzk.algebra._field_kernels",
            "k_first_noncanonical",
            "(FieldTag(fq), Array(uint64, 2, 'C', False, aligned=True))",
        ),
        (
            "cuzk.algebra._field_kernels",
            "k_from_canon",
            "(FieldTag(fq), Array(uint64, 2, 'C', False, aligned=True), Array(uint64, 2, 'C', False, aligned=True))",
        ),
        (
            "cuzk.algebra._curve_kernels",
            "k_on_curve",
            "(FieldTag(fq), Array(uint64, 2, 'C', False, aligned=True), Array(bool, 1, 'C', False, aligned=True))",
        ),
        (
            "cuzk.algebra._field_kernels",
            "k_to_canon",
            "(FieldTag(fr), Array(uint64, 2, 'C', False, aligned=True), Array(uint64, 2, 'C', False, aligned=True))",
        ),
        (
            "cuzk.algebra._curve_kernels",
            "k_scalar_mul",
            "(FieldTag(fq), Array(uint64, 2, 'C', False, aligned=True), Array(uint64, 2, 'C', False, aligned=True), Array(uint64, 2, 'C', False, aligned=True))",
        ),
        (
            "cuzk.algebra._curve_kernels",
            "k_jac_to_affine",
            "(FieldTag(fq), Array(uint64, 2, 'C', False, aligned=True), Array(uint64, 2, 'C', False, aligned=True), int64)",
        ),
        (
            "cuzk.algebra._field_kernels",
            "k_first_noncanonical",
            "(FieldTag(fq2), Array(uint64, 2, 'C', False, aligned=True))",
        ),
        (
            "cuzk.algebra._field_kernels",
            "k_from_canon",
            "(FieldTag(fq2), Array(uint64, 2, 'C', False, aligned=True), Array(uint64, 2, 'C', False, aligned=True))",
        ),
        (
            "cuzk.algebra._curve_kernels",
            "k_on_curve",
            "(FieldTag(fq2), Array(uint64, 2, 'C', False, aligned=True), Array(bool, 1, 'C', False, aligned=True))",
        ),
        (
            "cuzk.algebra._curve_kernels",
            "k_scalar_mul",
            "(FieldTag(fq2), Array(uint64, 2, 'C', False, aligned=True), Array(uint64, 2, 'C', False, aligned=True), Array(uint64, 2, 'C', False, aligned=True))",
        ),
        (
            "cuzk.algebra._curve_kernels",
            "k_jac_to_affine",
            "(FieldTag(fq2), Array(uint64, 2, 'C', False, aligned=True), Array(uint64, 2, 'C', False, aligned=True), int64)",
        ),
        (
            "cuzk.algebra._field_kernels",
            "k_pow",
            "(FieldTag(fr), Array(uint64, 2, 'C', False, aligned=True), Array(uint64, 1, 'C', False, aligned=True), Array(uint64, 2, 'C', False, aligned=True))",
        ),
        (
            "cuzk.algebra._field_kernels",
            "k_powers",
            "(FieldTag(fr), Array(uint64, 2, 'C', False, aligned=True), Array(uint64, 2, 'C', False, aligned=True), Array(uint64, 2, 'C', False, aligned=True))",
        ),
        (
            "cuzk.algebra._field_kernels",
            "k_powers_chunked",
            "(FieldTag(fr), Array(uint64, 2, 'C', False, aligned=True), Array(uint64, 2, 'C', False, aligned=True), Array(uint64, 2, 'C', False, aligned=True), int64)",
        ),
        (
            "cuzk.backends.cpu.ntt",
            "_bit_reverse_copy",
            "(Array(uint64, 2, 'C', False, aligned=True), Array(uint64, 2, 'C', False, aligned=True), int64)",
        ),
        (
            "cuzk.backends.cpu.ntt",
            "_stages_in_blocks",
            "(FieldTag(fr), Array(uint64, 2, 'C', False, aligned=True), Array(uint64, 2, 'C', False, aligned=True), Array(uint64, 2, 'C', False, aligned=True), int64, int64)",
        ),
        (
            "cuzk.backends.cpu.ntt",
            "_stage",
            "(FieldTag(fr), Array(uint64, 2, 'C', False, aligned=True), Array(uint64, 2, 'C', False, aligned=True), Array(uint64, 2, 'C', False, aligned=True), int64, int64, int64)",
        ),
        (
            "cuzk.backends.cpu.ntt",
            "_scale_const",
            "(FieldTag(fr), Array(uint64, 2, 'C', False, aligned=True), Array(uint64, 2, 'C', False, aligned=True))",
        ),
        (
            "cuzk.backends.cpu.spmv",
            "_spmv",
            "(FieldTag(fr), Array(int64, 1, 'C', False, aligned=True), Array(int64, 1, 'C', False, aligned=True), Array(uint64, 2, 'C', False, aligned=True), Array(uint64, 2, 'C', False, aligned=True), Array(uint64, 2, 'C', False, aligned=True), Array(uint64, 2, 'C', False, aligned=True))",
        ),
        (
            "cuzk.algebra._field_kernels",
            "k_scale",
            "(FieldTag(fr), Array(uint64, 2, 'C', False, aligned=True), Array(uint64, 2, 'C', False, aligned=True), Array(uint64, 2, 'C', False, aligned=True))",
        ),
        (
            "cuzk.algebra._field_kernels",
            "k_add",
            "(FieldTag(fr), Array(uint64, 2, 'C', False, aligned=True), Array(uint64, 2, 'C', False, aligned=True), Array(uint64, 2, 'C', False, aligned=True))",
        ),
        (
            "cuzk.backends.cpu.msm",
            "_fill_table",
            "(FieldTag(fq), Array(uint64, 2, 'C', False, aligned=True), int64, int64, Array(uint64, 2, 'C', False, aligned=True))",
        ),
        (
            "cuzk.backends.cpu.msm",
            "_fixed_base",
            "(FieldTag(fq), Array(uint64, 2, 'C', False, aligned=True), Array(uint64, 2, 'C', False, aligned=True), int64, int64, Array(uint64, 2, 'C', False, aligned=True))",
        ),
        (
            "cuzk.backends.cpu.msm",
            "_fill_table",
            "(FieldTag(fq2), Array(uint64, 2, 'C', False, aligned=True), int64, int64, Array(uint64, 2, 'C', False, aligned=True))",
        ),
        (
            "cuzk.backends.cpu.msm",
            "_fixed_base",
            "(FieldTag(fq2), Array(uint64, 2, 'C', False, aligned=True), Array(uint64, 2, 'C', False, aligned=True), int64, int64, Array(uint64, 2, 'C', False, aligned=True))",
        ),
        (
            "cuzk.algebra._field_kernels",
            "k_to_canon",
            "(FieldTag(fq), Array(uint64, 2, 'C', False, aligned=True), Array(uint64, 2, 'C', False, aligned=True))",
        ),
    ),
    "prove": (
        (
            "cuzk.algebra._field_kernels",
            "k_neg",
            "(FieldTag(fr), Array(uint64, 2, 'C', False, aligned=True), Array(uint64, 2, 'C', False, aligned=True))",
        ),
        (
            "cuzk.algebra._field_kernels",
            "k_from_canon",
            "(FieldTag(fq), Array(uint64, 2, 'C', False, aligned=True), Array(uint64, 2, 'C', False, aligned=True))",
        ),
        (
            "cuzk.algebra._curve_kernels",
            "k_on_curve",
            "(FieldTag(fq), Array(uint64, 2, 'C', False, aligned=True), Array(bool, 1, 'C', False, aligned=True))",
        ),
        (
            "cuzk.algebra._curve_kernels",
            "k_on_curve",
            "(FieldTag(fq2), Array(uint64, 2, 'C', False, aligned=True), Array(bool, 1, 'C', False, aligned=True))",
        ),
        (
            "cuzk.algebra._curve_kernels",
            "k_affine_neg",
            "(FieldTag(fq2), Array(uint64, 2, 'C', False, aligned=True), Array(uint64, 2, 'C', False, aligned=True))",
        ),
        (
            "cuzk.algebra._field_kernels",
            "k_to_canon",
            "(FieldTag(fq), Array(uint64, 2, 'C', False, aligned=True), Array(uint64, 2, 'C', False, aligned=True))",
        ),
        (
            "cuzk.algebra._field_kernels",
            "k_first_noncanonical",
            "(FieldTag(fr), Array(uint64, 2, 'C', False, aligned=True))",
        ),
        (
            "cuzk.algebra._field_kernels",
            "k_from_canon",
            "(FieldTag(fr), Array(uint64, 2, 'C', False, aligned=True), Array(uint64, 2, 'C', False, aligned=True))",
        ),
        ("cuzk.gadgets.poseidon_params", "_grain_bits", "(Array(uint8, 1, 'C', False, aligned=True), int64)"),
        (
            "cuzk.gadgets.poseidon",
            "_k_permute_ser",
            "(FieldTag(fr), Array(uint64, 2, 'C', False, aligned=True), Array(uint64, 2, 'C', False, aligned=True), Array(uint64, 2, 'C', False, aligned=True), int64, int64, int64, Array(uint64, 2, 'C', False, aligned=True), Array(uint64, 2, 'C', False, aligned=True), bool)",
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
            "(FieldTag(fr), Array(int64, 1, 'C', False, aligned=True), Array(int32, 1, 'C', False, aligned=True), Array(uint64, 2, 'C', False, aligned=True), Array(uint64, 2, 'C', False, aligned=True), Array(uint64, 2, 'C', False, aligned=True), Array(uint64, 2, 'C', False, aligned=True))",
        ),
        (
            "cuzk.algebra._field_kernels",
            "k_mul",
            "(FieldTag(fr), Array(uint64, 2, 'C', False, aligned=True), Array(uint64, 2, 'C', False, aligned=True), Array(uint64, 2, 'C', False, aligned=True))",
        ),
        (
            "cuzk.algebra._field_kernels",
            "k_pow",
            "(FieldTag(fr), Array(uint64, 2, 'C', False, aligned=True), Array(uint64, 1, 'C', False, aligned=True), Array(uint64, 2, 'C', False, aligned=True))",
        ),
        (
            "cuzk.algebra._field_kernels",
            "k_powers",
            "(FieldTag(fr), Array(uint64, 2, 'C', False, aligned=True), Array(uint64, 2, 'C', False, aligned=True), Array(uint64, 2, 'C', False, aligned=True))",
        ),
        (
            "cuzk.algebra._field_kernels",
            "k_powers_chunked",
            "(FieldTag(fr), Array(uint64, 2, 'C', False, aligned=True), Array(uint64, 2, 'C', False, aligned=True), Array(uint64, 2, 'C', False, aligned=True), int64)",
        ),
        (
            "cuzk.backends.cpu.ntt",
            "_bit_reverse_copy",
            "(Array(uint64, 2, 'C', False, aligned=True), Array(uint64, 2, 'C', False, aligned=True), int64)",
        ),
        (
            "cuzk.backends.cpu.ntt",
            "_stages_in_blocks",
            "(FieldTag(fr), Array(uint64, 2, 'C', False, aligned=True), Array(uint64, 2, 'C', False, aligned=True), Array(uint64, 2, 'C', False, aligned=True), int64, int64)",
        ),
        (
            "cuzk.backends.cpu.ntt",
            "_stage",
            "(FieldTag(fr), Array(uint64, 2, 'C', False, aligned=True), Array(uint64, 2, 'C', False, aligned=True), Array(uint64, 2, 'C', False, aligned=True), int64, int64, int64)",
        ),
        (
            "cuzk.backends.cpu.ntt",
            "_scale_const",
            "(FieldTag(fr), Array(uint64, 2, 'C', False, aligned=True), Array(uint64, 2, 'C', False, aligned=True))",
        ),
        (
            "cuzk.backends.cpu.ntt",
            "_scale_by",
            "(FieldTag(fr), Array(uint64, 2, 'C', False, aligned=True), Array(uint64, 2, 'C', False, aligned=True))",
        ),
        (
            "cuzk.algebra._field_kernels",
            "k_sub",
            "(FieldTag(fr), Array(uint64, 2, 'C', False, aligned=True), Array(uint64, 2, 'C', False, aligned=True), Array(uint64, 2, 'C', False, aligned=True))",
        ),
        (
            "cuzk.algebra._field_kernels",
            "k_scale",
            "(FieldTag(fr), Array(uint64, 2, 'C', False, aligned=True), Array(uint64, 2, 'C', False, aligned=True), Array(uint64, 2, 'C', False, aligned=True))",
        ),
        (
            "cuzk.algebra._field_kernels",
            "k_to_canon",
            "(FieldTag(fr), Array(uint64, 2, 'C', False, aligned=True), Array(uint64, 2, 'C', False, aligned=True))",
        ),
        (
            "cuzk.algebra._curve_kernels",
            "k_affine_to_jac",
            "(FieldTag(fq), Array(uint64, 2, 'C', False, aligned=True), Array(uint64, 2, 'C', False, aligned=True))",
        ),
        (
            "cuzk.algebra.pippenger",
            "_signed_digits",
            "(Array(uint64, 2, 'C', False, aligned=True), int64, int64, Array(int64, 2, 'C', False, aligned=True))",
        ),
        (
            "cuzk.backends.cpu.msm",
            "_window_sums",
            "(FieldTag(fq), Array(uint64, 2, 'C', False, aligned=True), Array(int64, 1, 'C', False, aligned=True), Array(int64, 2, 'C', False, aligned=True), int64, Array(uint64, 2, 'C', False, aligned=True))",
        ),
        (
            "cuzk.algebra.pippenger",
            "_horner",
            "(FieldTag(fq), Array(uint64, 2, 'C', False, aligned=True), int64, Array(uint64, 2, 'C', False, aligned=True))",
        ),
        (
            "cuzk.algebra._curve_kernels",
            "k_jac_add",
            "(FieldTag(fq), Array(uint64, 2, 'C', False, aligned=True), Array(uint64, 2, 'C', False, aligned=True), Array(uint64, 2, 'C', False, aligned=True))",
        ),
        (
            "cuzk.algebra._curve_kernels",
            "k_masked_sum",
            "(FieldTag(fq), Array(uint64, 2, 'C', False, aligned=True), Array(bool, 1, 'C', False, aligned=True), Array(uint64, 2, 'C', False, aligned=True))",
        ),
        (
            "cuzk.algebra._curve_kernels",
            "k_affine_to_jac",
            "(FieldTag(fq2), Array(uint64, 2, 'C', False, aligned=True), Array(uint64, 2, 'C', False, aligned=True))",
        ),
        (
            "cuzk.algebra._curve_kernels",
            "k_masked_sum",
            "(FieldTag(fq2), Array(uint64, 2, 'C', False, aligned=True), Array(bool, 1, 'C', False, aligned=True), Array(uint64, 2, 'C', False, aligned=True))",
        ),
        (
            "cuzk.backends.cpu.msm",
            "_window_sums",
            "(FieldTag(fq2), Array(uint64, 2, 'C', False, aligned=True), Array(int64, 1, 'C', False, aligned=True), Array(int64, 2, 'C', False, aligned=True), int64, Array(uint64, 2, 'C', False, aligned=True))",
        ),
        (
            "cuzk.algebra.pippenger",
            "_horner",
            "(FieldTag(fq2), Array(uint64, 2, 'C', False, aligned=True), int64, Array(uint64, 2, 'C', False, aligned=True))",
        ),
        (
            "cuzk.algebra._curve_kernels",
            "k_jac_add",
            "(FieldTag(fq2), Array(uint64, 2, 'C', False, aligned=True), Array(uint64, 2, 'C', False, aligned=True), Array(uint64, 2, 'C', False, aligned=True))",
        ),
        (
            "cuzk.algebra._curve_kernels",
            "k_scalar_mul",
            "(FieldTag(fq), Array(uint64, 2, 'C', False, aligned=True), Array(uint64, 2, 'C', False, aligned=True), Array(uint64, 2, 'C', False, aligned=True))",
        ),
        (
            "cuzk.algebra._curve_kernels",
            "k_jac_madd",
            "(FieldTag(fq), Array(uint64, 2, 'C', False, aligned=True), Array(uint64, 2, 'C', False, aligned=True), Array(uint64, 2, 'C', False, aligned=True))",
        ),
        (
            "cuzk.algebra._curve_kernels",
            "k_scalar_mul",
            "(FieldTag(fq2), Array(uint64, 2, 'C', False, aligned=True), Array(uint64, 2, 'C', False, aligned=True), Array(uint64, 2, 'C', False, aligned=True))",
        ),
        (
            "cuzk.algebra._curve_kernels",
            "k_jac_madd",
            "(FieldTag(fq2), Array(uint64, 2, 'C', False, aligned=True), Array(uint64, 2, 'C', False, aligned=True), Array(uint64, 2, 'C', False, aligned=True))",
        ),
        (
            "cuzk.algebra._curve_kernels",
            "k_jac_to_affine",
            "(FieldTag(fq), Array(uint64, 2, 'C', False, aligned=True), Array(uint64, 2, 'C', False, aligned=True), int64)",
        ),
        (
            "cuzk.algebra._curve_kernels",
            "k_affine_neg",
            "(FieldTag(fq), Array(uint64, 2, 'C', False, aligned=True), Array(uint64, 2, 'C', False, aligned=True))",
        ),
        (
            "cuzk.algebra._curve_kernels",
            "k_jac_to_affine",
            "(FieldTag(fq2), Array(uint64, 2, 'C', False, aligned=True), Array(uint64, 2, 'C', False, aligned=True), int64)",
        ),
        (
            "cuzk.algebra._field_kernels",
            "k_add",
            "(FieldTag(fr), Array(uint64, 2, 'C', False, aligned=True), Array(uint64, 2, 'C', False, aligned=True), Array(uint64, 2, 'C', False, aligned=True))",
        ),
    ),
    "verify": (
        (
            "cuzk.algebra._field_kernels",
            "k_from_canon",
            "(FieldTag(fq), Array(uint64, 2, 'C', False, aligned=True), Array(uint64, 2, 'C', False, aligned=True))",
        ),
        (
            "cuzk.algebra._curve_kernels",
            "k_on_curve",
            "(FieldTag(fq), Array(uint64, 2, 'C', False, aligned=True), Array(bool, 1, 'C', False, aligned=True))",
        ),
        (
            "cuzk.algebra._curve_kernels",
            "k_in_subgroup",
            "(FieldTag(fq), Array(uint64, 2, 'C', False, aligned=True), Array(bool, 1, 'C', False, aligned=True))",
        ),
        (
            "cuzk.algebra._curve_kernels",
            "k_on_curve",
            "(FieldTag(fq2), Array(uint64, 2, 'C', False, aligned=True), Array(bool, 1, 'C', False, aligned=True))",
        ),
        (
            "cuzk.algebra._curve_kernels",
            "k_in_subgroup",
            "(FieldTag(fq2), Array(uint64, 2, 'C', False, aligned=True), Array(bool, 1, 'C', False, aligned=True))",
        ),
        (
            "cuzk.algebra.encoding",
            "k_decompress",
            "(FieldTag(fq), Array(uint64, 2, 'C', False, aligned=True), Array(bool, 1, 'C', False, aligned=True), Array(bool, 1, 'C', False, aligned=True), Array(uint64, 2, 'C', False, aligned=True), Array(bool, 1, 'C', False, aligned=True))",
        ),
        (
            "cuzk.algebra.encoding",
            "k_decompress",
            "(FieldTag(fq2), Array(uint64, 2, 'C', False, aligned=True), Array(bool, 1, 'C', False, aligned=True), Array(bool, 1, 'C', False, aligned=True), Array(uint64, 2, 'C', False, aligned=True), Array(bool, 1, 'C', False, aligned=True))",
        ),
        (
            "cuzk.algebra._curve_kernels",
            "k_affine_neg",
            "(FieldTag(fq2), Array(uint64, 2, 'C', False, aligned=True), Array(uint64, 2, 'C', False, aligned=True))",
        ),
        (
            "cuzk.algebra._field_kernels",
            "k_to_canon",
            "(FieldTag(fq), Array(uint64, 2, 'C', False, aligned=True), Array(uint64, 2, 'C', False, aligned=True))",
        ),
        (
            "cuzk.algebra._field_kernels",
            "k_first_noncanonical",
            "(FieldTag(fr), Array(uint64, 2, 'C', False, aligned=True))",
        ),
        (
            "cuzk.algebra._field_kernels",
            "k_from_canon",
            "(FieldTag(fr), Array(uint64, 2, 'C', False, aligned=True), Array(uint64, 2, 'C', False, aligned=True))",
        ),
        (
            "cuzk.algebra._field_kernels",
            "k_to_canon",
            "(FieldTag(fr), Array(uint64, 2, 'C', False, aligned=True), Array(uint64, 2, 'C', False, aligned=True))",
        ),
    ),
}
