// The point kernels of one group, instantiated by curve_g1.cu / curve_g2.cu, which define
// CUZK_F (the coordinate field) and CUZK_NAME(x) (the kernel name suffix) before including
// this file. Thin wrappers: the per-thread logic lives in msm.cuh.
#include "launch.cuh"
#include "msm.cuh"

CUZK_KERNEL(CUZK_NAME(msm_accumulate))(uint64_t nthreads, uint32_t L, const uint32_t* total,
                                       const uint64_t* entries, const uint32_t* bases, uint32_t* partials) {
    CUZK_FOR_TID(nthreads) cuzk::msm_accumulate<CUZK_F>(tid, L, total, entries, bases, partials);
}

CUZK_KERNEL(CUZK_NAME(msm_merge))(uint64_t nbuckets, uint32_t L, uint32_t skip_above, const uint32_t* offsets,
                                  const uint32_t* partials, uint32_t* buckets) {
    CUZK_FOR_TID(nbuckets) cuzk::msm_merge<CUZK_F>(tid, L, skip_above, offsets, partials, buckets);
}

CUZK_KERNEL(CUZK_NAME(sum_spans))(uint64_t n, const uint64_t* lo, const uint64_t* hi, const uint32_t* in,
                                  uint32_t* out) {
    CUZK_FOR_TID(n) cuzk::sum_spans<CUZK_F>(tid, lo, hi, in, out);
}

CUZK_KERNEL(CUZK_NAME(add_into))(uint64_t n, const uint32_t* idx, const uint32_t* src, uint32_t* buckets) {
    CUZK_FOR_TID(n) cuzk::add_into<CUZK_F>(tid, idx, src, buckets);
}

CUZK_KERNEL(CUZK_NAME(msm_segment))(uint64_t nseg, uint32_t B, uint32_t M,
                                                  const uint32_t* buckets, uint32_t* R, uint32_t* T) {
    CUZK_FOR_TID(nseg) cuzk::msm_segment<CUZK_F>(tid, B, M, buckets, R, T);
}

CUZK_KERNEL(CUZK_NAME(msm_weight))(uint64_t nseg, uint32_t P, uint32_t M, uint32_t* R,
                                                 const uint32_t* T) {
    CUZK_FOR_TID(nseg) cuzk::msm_weight<CUZK_F>(tid, P, M, R, T);
}

CUZK_KERNEL(CUZK_NAME(sum_groups))(uint64_t nout, uint32_t count, uint32_t G, const uint32_t* in,
                                                 uint32_t* out) {
    CUZK_FOR_TID(nout) cuzk::sum_groups<CUZK_F>(tid, count, G, in, out);
}

CUZK_KERNEL(CUZK_NAME(sum_indexed))(uint64_t nthreads, uint32_t L, uint64_t count,
                                                  const int64_t* idx, const uint32_t* bases, uint32_t* out) {
    CUZK_FOR_TID(nthreads) cuzk::sum_indexed<CUZK_F>(tid, L, count, idx, bases, out);
}

CUZK_KERNEL(CUZK_NAME(shift_points))(uint64_t n, int k, const uint32_t* in, uint32_t* out) {
    CUZK_FOR_TID(n) cuzk::shift_point<CUZK_F>(tid, k, in, out);
}

CUZK_KERNEL(CUZK_NAME(endo_points))(uint64_t n, const uint32_t* beta, const uint32_t* in, uint32_t* out) {
    CUZK_FOR_TID(n) cuzk::endo_point<CUZK_F>(tid, beta, in, out);
}

CUZK_KERNEL(CUZK_NAME(fb_table))(uint64_t nentries, int c, const uint32_t* wbases,
                                               uint32_t* table) {
    CUZK_FOR_TID(nentries) cuzk::fb_table<CUZK_F>(tid, c, wbases, table);
}

CUZK_KERNEL(CUZK_NAME(fb_mul))(uint64_t n, const uint32_t* scalars, int c, int windows,
                                             const uint32_t* table, uint32_t* out) {
    CUZK_FOR_TID(n) cuzk::fb_mul<CUZK_F>(tid, scalars, c, windows, table, out);
}

CUZK_KERNEL(CUZK_NAME(to_affine))(uint64_t nthreads, uint32_t K, uint64_t n, const uint32_t* in,
                                                uint32_t* out) {
    CUZK_FOR_TID(nthreads) cuzk::xyzz_to_affine<CUZK_F>(tid, K, n, in, out);
}

