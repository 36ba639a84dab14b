// Sparse matrix-vector product over Fr from CSR, one thread per row.
//
// codes[k] marks coefficients +1 (1) and -1 (2), most of a bit-decomposed circuit, which skip
// the Montgomery product; 0 means a general coefficient read from data.
#pragma once
#include "mem.cuh"

namespace cuzk {

// acc plus entry e's coefficient times x: +1 and -1 (codes 1, 2) without the product.
CUZK_HD fr_t spmv_term(const fr_t& acc, const fr_t& x, uint8_t code, const uint32_t* data, int64_t e) {
    if (code == 1) return acc + x;
    if (code == 2) return acc - x;
    return acc + load_elem<fr_t>(data, (uint64_t)e) * x;
}

CUZK_HD void spmv_row(uint64_t r, const int64_t* indptr, const int32_t* indices, const uint32_t* data,
                      const uint8_t* codes, const uint32_t* w, uint32_t* out) {
    fr_t acc = fr_t::zero();
    for (int64_t k = indptr[r]; k < indptr[r + 1]; k++)
        acc = spmv_term(acc, load_elem<fr_t>(w, (uint64_t)indices[k]), codes[k], data, k);
    store_elem<fr_t>(out, r, acc);
}

// Row r of copy k of a replicated block: the block's entries read w at cols[j] + k strides[j]
// (j the block's local column), so no copy's columns are gathered into a vector first.
CUZK_HD void spmv_row_copy(uint64_t r, uint64_t k, const int64_t* indptr, const int32_t* indices,
                           const uint32_t* data, const uint8_t* codes, const int64_t* cols,
                           const int64_t* strides, const uint32_t* w, uint32_t* out) {
    fr_t acc = fr_t::zero();
    for (int64_t e = indptr[r]; e < indptr[r + 1]; e++) {
        const int32_t j = indices[e];
        acc = spmv_term(acc, load_elem<fr_t>(w, (uint64_t)(cols[j] + (int64_t)k * strides[j])), codes[e], data, e);
    }
    store_elem<fr_t>(out, r, acc);
}

}  // namespace cuzk
