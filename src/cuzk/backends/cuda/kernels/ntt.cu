// The NTT pass kernel: load a tile, run the DIF network in shared memory (two stages per step
// with radix4, a radix-2 stage last when log_N is odd), store with twiddles.
// One block per tile of T columns; the host build runs the blocks and their phases in turn.
#include "launch.cuh"
#include "ntt.cuh"

#if !defined(__CUDACC__)
#include <vector>
#endif

#define CUZK_NTT_PARAMS                                                                                   \
    const uint32_t *in, uint32_t *out, int log_n, int log_N, int log_S, int log_T, int npass, int l0, int l1, \
        int l2, int l3, const uint32_t *wsub, const uint32_t *tw_lo, const uint32_t *tw_hi, int tw_bits,      \
        const uint32_t *tw_full,                                                                               \
        const uint32_t *in_lo, const uint32_t *in_hi, int out_mode, const uint32_t *out_c,                   \
        const uint32_t *out_lo, const uint32_t *out_hi, int radix4

#define CUZK_NTT_ARGS                                                                                   \
    cuzk::NttArgs a = {in,    out,   log_n,   log_N,   log_S, log_T, npass,    {l0, l1, l2, l3}, wsub, \
                       tw_lo, tw_hi, tw_bits, tw_full, in_lo, in_hi, out_mode, out_c,            out_lo, out_hi, radix4 != 0};

CUZK_HD void ntt_pass_body(const cuzk::NttArgs& a) {
    const int log_N = a.log_N, log_T = a.log_T;
    const bool radix4 = a.radix4;
    const uint32_t total = 1u << (log_N + log_T);
#if defined(__CUDACC__)
    extern __shared__ uint4 smem[];
    uint32_t* tile = reinterpret_cast<uint32_t*>(smem);
    const uint64_t blk = blockIdx.x;
    for (uint32_t idx = threadIdx.x; idx < total; idx += blockDim.x) cuzk::ntt_load(a, blk, idx, tile);
    __syncthreads();
    int log_h = log_N - 1;
    if (radix4)
        for (; log_h >= 1; log_h -= 2) {
            for (uint32_t q = threadIdx.x; q < total / 4; q += blockDim.x) cuzk::ntt_butterfly4(a, log_h, q, tile);
            __syncthreads();
        }
    for (; log_h >= 0; log_h--) {
        for (uint32_t beta = threadIdx.x; beta < total / 2; beta += blockDim.x)
            cuzk::ntt_butterfly(a, log_h, beta, tile);
        __syncthreads();
    }
    for (uint32_t idx = threadIdx.x; idx < total; idx += blockDim.x) cuzk::ntt_store(a, blk, idx, tile);
#else
    std::vector<uint32_t> buf((uint64_t)total * cuzk::fr_t::N);
    uint32_t* tile = buf.data();
    const uint64_t blocks = 1ull << (a.log_n - log_N - log_T);
    for (uint64_t blk = 0; blk < blocks; blk++) {
        for (uint32_t idx = 0; idx < total; idx++) cuzk::ntt_load(a, blk, idx, tile);
        int log_h = log_N - 1;
        if (radix4)
            for (; log_h >= 1; log_h -= 2)
                for (uint32_t q = 0; q < total / 4; q++) cuzk::ntt_butterfly4(a, log_h, q, tile);
        for (; log_h >= 0; log_h--)
            for (uint32_t beta = 0; beta < total / 2; beta++) cuzk::ntt_butterfly(a, log_h, beta, tile);
        for (uint32_t idx = 0; idx < total; idx++) cuzk::ntt_store(a, blk, idx, tile);
    }
#endif
}

// Two entry points of one body: ntt_pass caps registers so that three 256-thread blocks (three
// 64 KiB tiles) fit on an SM, ntt_pass_regs lets ptxas use what the radix-4 step wants (two blocks).
#if defined(__CUDACC__)
#define CUZK_NTT_KERNEL(name, bounds) extern "C" __global__ void bounds name
#else
#define CUZK_NTT_KERNEL(name, bounds) extern "C" void name
#endif
CUZK_NTT_KERNEL(ntt_pass, __launch_bounds__(256, 3))(CUZK_NTT_PARAMS) {
    CUZK_NTT_ARGS
    ntt_pass_body(a);
}
CUZK_NTT_KERNEL(ntt_pass_regs, )(CUZK_NTT_PARAMS) {
    CUZK_NTT_ARGS
    ntt_pass_body(a);
}

// The register-resident pass (see ntt.cuh): THREADS = tile / 8, log_N >= 3. Two 256-thread blocks
// per SM (up to 128 registers: 64 hold the elements).
CUZK_HD void ntt_pass_reg8_body(const cuzk::NttArgs& a) {
    const int log_N = a.log_N, tot = a.log_N + a.log_T;
    const int first = log_N % 3 == 0 ? 3 : log_N % 3;
#if defined(__CUDACC__)
    extern __shared__ uint4 smem[];
    uint32_t* tile = reinterpret_cast<uint32_t*>(smem);
    const uint64_t blk = blockIdx.x;
    const uint32_t t = threadIdx.x;
    cuzk::fr_t x[8];
    int h = log_N - 1, r = first;
    uint32_t base = cuzk::r8_base(t, h - 2, tot);
    cuzk::r8_fetch(a, blk, x, base, h - 2);
    for (bool exchanged = false;; exchanged = true) {
        const int lo = h - 2;
        cuzk::r8_step(a, x, base, lo, r);
        h -= r;
        r = 3;
        if (h < 0) break;
        if (exchanged) __syncthreads();  // every thread has read the previous exchange
        cuzk::r8_put(x, base, lo, tot, tile);
        __syncthreads();
        base = cuzk::r8_base(t, h - 2, tot);
        cuzk::r8_get(x, base, h - 2, tot, tile);
    }
    cuzk::r8_emit(a, blk, x, base, 0);
#else
    // the threads run in turn between the barriers; each keeps its 8 "registers" in regs
    const uint32_t threads = 1u << (tot - 3);
    std::vector<uint32_t> buf((uint64_t)cuzk::fr_t::N << tot);
    std::vector<cuzk::fr_t> regs((uint64_t)threads * 8);
    std::vector<uint32_t> bases(threads);
    const uint64_t blocks = 1ull << (a.log_n - log_N - a.log_T);
    for (uint64_t blk = 0; blk < blocks; blk++) {
        int h = log_N - 1, r = first;
        for (uint32_t t = 0; t < threads; t++) {
            bases[t] = cuzk::r8_base(t, h - 2, tot);
            cuzk::r8_fetch(a, blk, &regs[t * 8], bases[t], h - 2);
        }
        for (;;) {
            for (uint32_t t = 0; t < threads; t++) cuzk::r8_step(a, &regs[t * 8], bases[t], h - 2, r);
            const int lo = h - 2;
            h -= r;
            r = 3;
            if (h < 0) break;
            for (uint32_t t = 0; t < threads; t++) cuzk::r8_put(&regs[t * 8], bases[t], lo, tot, buf.data());
            for (uint32_t t = 0; t < threads; t++) {
                bases[t] = cuzk::r8_base(t, h - 2, tot);
                cuzk::r8_get(&regs[t * 8], bases[t], h - 2, tot, buf.data());
            }
        }
        for (uint32_t t = 0; t < threads; t++) cuzk::r8_emit(a, blk, &regs[t * 8], bases[t], 0);
    }
#endif
}
CUZK_NTT_KERNEL(ntt_pass_reg8, __launch_bounds__(256, 2))(CUZK_NTT_PARAMS) {
    CUZK_NTT_ARGS
    ntt_pass_reg8_body(a);
}
