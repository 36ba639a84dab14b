// Fr kernels: elementwise arithmetic, Fq/Fq2 products (checks), MSM digit extraction and scatter, CSR SpMV, and the
// multiplication-rate micro-kernels used by the benchmark's physical-limit check.
#include "launch.cuh"
#include "msm.cuh"
#include "spmv.cuh"

using cuzk::fr_t;
using cuzk::fq_t;
using cuzk::load_elem;
using cuzk::store_elem;

CUZK_KERNEL(fr_add)(uint64_t n, const uint32_t* a, const uint32_t* b, uint32_t* out) {
    CUZK_FOR_TID(n) store_elem<fr_t>(out, tid, load_elem<fr_t>(a, tid) + load_elem<fr_t>(b, tid));
}

CUZK_KERNEL(fr_sub)(uint64_t n, const uint32_t* a, const uint32_t* b, uint32_t* out) {
    CUZK_FOR_TID(n) store_elem<fr_t>(out, tid, load_elem<fr_t>(a, tid) - load_elem<fr_t>(b, tid));
}

CUZK_KERNEL(fr_mul)(uint64_t n, const uint32_t* a, const uint32_t* b, uint32_t* out) {
    CUZK_FOR_TID(n) store_elem<fr_t>(out, tid, load_elem<fr_t>(a, tid) * load_elem<fr_t>(b, tid));
}

// a[i] * s for one Montgomery element s.
CUZK_KERNEL(fr_scale)(uint64_t n, const uint32_t* a, const uint32_t* s, uint32_t* out) {
    CUZK_FOR_TID(n) store_elem<fr_t>(out, tid, load_elem<fr_t>(a, tid) * load_elem<fr_t>(s, 0));
}

// (a[i] b[i] - c[i]) s: the pointwise step of the QAP quotient.
CUZK_KERNEL(fr_mul_sub_scale)(uint64_t n, const uint32_t* a, const uint32_t* b, const uint32_t* c,
                                            const uint32_t* s, uint32_t* out) {
    CUZK_FOR_TID(n) {
        fr_t v = load_elem<fr_t>(a, tid) * load_elem<fr_t>(b, tid) - load_elem<fr_t>(c, tid);
        store_elem<fr_t>(out, tid, v * load_elem<fr_t>(s, 0));
    }
}

// Fq and Fq2 products, for checking the base-field arithmetic against the host directly.
CUZK_KERNEL(fq_mul)(uint64_t n, const uint32_t* a, const uint32_t* b, uint32_t* out) {
    CUZK_FOR_TID(n) store_elem<fq_t>(out, tid, load_elem<fq_t>(a, tid) * load_elem<fq_t>(b, tid));
}

CUZK_KERNEL(fq2_mul)(uint64_t n, const uint32_t* a, const uint32_t* b, uint32_t* out) {
    CUZK_FOR_TID(n) {
        cuzk::fq2_t x = load_elem<cuzk::fq2_t>(a, tid), y = load_elem<cuzk::fq2_t>(b, tid);
        store_elem<cuzk::fq2_t>(out, tid, x == y ? cuzk::sqr(x) : x * y);
    }
}

CUZK_KERNEL(msm_digits)(uint64_t n, const uint32_t* scalars, uint32_t* canon, uint32_t* counts,
                                      int c, int windows, int copies, int halves) {
    CUZK_FOR_TID(n) cuzk::msm_digits(tid, scalars, canon, counts, c, windows, copies, halves);
}

CUZK_KERNEL(msm_scatter)(uint64_t n, const uint32_t* canon, uint32_t* cursor, uint64_t* entries, int c,
                         int windows, int copies, int halves, uint32_t stride) {
    CUZK_FOR_TID(n) cuzk::msm_scatter(tid, canon, cursor, entries, c, windows, copies, halves, stride, nullptr);
}

// The tail of a split MSM: scalar i's point is base map[i] (an index map, no gather of bases).
CUZK_KERNEL(msm_scatter_mapped)(uint64_t n, const uint32_t* canon, uint32_t* cursor, uint64_t* entries,
                                int c, int windows, int copies, int halves, uint32_t stride,
                                const uint32_t* map) {
    CUZK_FOR_TID(n) cuzk::msm_scatter(tid, canon, cursor, entries, c, windows, copies, halves, stride, map);
}

// cls[i] = 0 / 1 / 2 for zero / one / any other scalar (cuzk::scalar_class).
CUZK_KERNEL(msm_classes)(uint64_t n, const uint32_t* scalars, uint8_t* cls) {
    CUZK_FOR_TID(n) cls[tid] = cuzk::scalar_class(tid, scalars);
}

// Thread i takes row order[i] (rows longest first, so a warp's rows are of about one length).
CUZK_KERNEL(spmv_csr)(uint64_t rows, const int32_t* order, const int64_t* indptr, const int32_t* indices,
                      const uint32_t* data, const uint8_t* codes, const uint32_t* w, uint32_t* out) {
    CUZK_FOR_TID(rows) cuzk::spmv_row((uint64_t)order[tid], indptr, indices, data, codes, w, out);
}

// out[k rows + r] = row r of the block applied to copy k's columns (cuzk::spmv_row_copy), all
// copies in one launch; consecutive threads take rows of one copy in `order` (as spmv_csr).
CUZK_KERNEL(spmv_copies)(uint64_t rows, uint64_t copies, const int32_t* order, const int64_t* indptr,
                         const int32_t* indices, const uint32_t* data, const uint8_t* codes,
                         const int64_t* cols, const int64_t* strides, const uint32_t* w, uint32_t* out) {
    CUZK_FOR_TID(rows * copies) {
        const uint64_t k = tid / rows, r = (uint64_t)order[tid - k * rows];
        cuzk::spmv_row_copy(r, k, indptr, indices, data, codes, cols, strides, w, out + 8 * k * rows);
    }
}

// Micro-kernels: `iters` rounds of 4 independent Montgomery products per thread, so the
// integer pipe, not latency, bounds them; the result is stored so nothing is optimized away.
template <class F>
CUZK_HD void mul_chain(uint64_t i, int iters, const uint32_t* in, uint32_t* out) {
    F x0 = load_elem<F>(in, 4 * i + 0), x1 = load_elem<F>(in, 4 * i + 1);
    F x2 = load_elem<F>(in, 4 * i + 2), x3 = load_elem<F>(in, 4 * i + 3);
    const F y = x0;
    for (int k = 0; k < iters; k++) {
        x0 = x0 * y;
        x1 = x1 * y;
        x2 = x2 * y;
        x3 = x3 * y;
    }
    store_elem<F>(out, i, (x0 + x1) + (x2 + x3));
}

CUZK_KERNEL(fq_mul_rate)(uint64_t n, int iters, const uint32_t* in, uint32_t* out) {
    CUZK_FOR_TID(n) mul_chain<fq_t>(tid, iters, in, out);
}

CUZK_KERNEL(fr_mul_rate)(uint64_t n, int iters, const uint32_t* in, uint32_t* out) {
    CUZK_FOR_TID(n) mul_chain<fr_t>(tid, iters, in, out);
}
