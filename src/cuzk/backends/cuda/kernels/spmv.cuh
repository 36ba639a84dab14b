// Sparse matrix-vector product over Fr from CSR, one thread per row.
//
// codes[k] marks coefficients +1 (1) and -1 (2), most of a bit-decomposed circuit, which skip
// the Montgomery product; 0 means a general coefficient read from data.
#pragma once
#include "mem.cuh"

namespace cuzk {

CUZK_HD void spmv_row(uint64_t r, const int64_t* indptr, const int32_t* indices, const uint32_t* data,
                      const uint8_t* codes, const uint32_t* w, uint32_t* out) {
    fr_t acc = fr_t::zero();
    for (int64_t k = indptr[r]; k < indptr[r + 1]; k++) {
        fr_t x = load_elem<fr_t>(w, (uint64_t)indices[k]);
        const uint8_t code = codes[k];
        if (code == 1)
            acc = acc + x;
        else if (code == 2)
            acc = acc - x;
        else
            acc = acc + load_elem<fr_t>(data, (uint64_t)k) * x;
    }
    store_elem<fr_t>(out, r, acc);
}

}  // namespace cuzk
