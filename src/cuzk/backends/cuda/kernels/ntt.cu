// The NTT pass kernel: load a tile, run the DIF network in shared memory (two stages per step
// with radix4, a radix-2 stage last when log_N is odd, folded into the store by default), store
// with twiddles.
// One block per tile of T columns; the host build runs the blocks and their phases in turn.
#include "launch.cuh"
#include "ntt.cuh"

#if !defined(__CUDACC__)
#include <vector>
#endif

#define CUZK_NTT_PARAMS const uint32_t *in, uint32_t *out, const cuzk::NttParams p

#define CUZK_NTT_ARGS                                                                              \
    cuzk::NttArgs a = {in,      out,     p.log_n,  p.log_N,  p.log_S,    p.log_T,                   \
                       p.npass, {p.logs[0], p.logs[1], p.logs[2], p.logs[3]}, p.wsub, p.tw_lo,        \
                       p.tw_hi, p.tw_bits, p.tw_full, p.in_lo, p.in_hi, p.out_mode, p.out_c, p.out_lo, \
                       p.out_hi, p.radix4 != 0};

// R2_ONLY: the radix-2 network whatever a.radix4 says, so that ptxas sizes registers for it alone;
// SWIZZLED: the tile's layout (ntt.cuh's Tile)
template <bool R2_ONLY, bool SWIZZLED>
CUZK_HD void ntt_pass_body(const cuzk::NttArgs& a) {
    const int log_N = a.log_N, log_T = a.log_T;
    const bool radix4 = !R2_ONLY && a.radix4;
    const uint32_t total = 1u << (log_N + log_T);
    const bool fused = cuzk::ntt_fused_last(log_N, radix4);
    const int last_h = fused ? 1 : 0;  // the radix-2 stages run in the tile down to this one
#if defined(__CUDACC__)
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
    // Programmatic dependent launch (ntt.py's OVERLAP; both are no-ops in a launch without it):
    // the next pass may be scheduled once every block of this one has started, so that its
    // launch overlaps this pass's tail, and nothing here reads memory before the pass before
    // has finished and flushed.
    asm volatile("griddepcontrol.launch_dependents;" ::: "memory");
    asm volatile("griddepcontrol.wait;" ::: "memory");
#endif
    extern __shared__ uint4 smem[];
    const cuzk::Tile<SWIZZLED> tile{reinterpret_cast<uint32_t*>(smem)};
    const uint64_t blk = blockIdx.x;
    for (uint32_t idx = threadIdx.x; idx < total; idx += blockDim.x) cuzk::ntt_load(a, blk, idx, tile);
    __syncthreads();
    int log_h = log_N - 1;
    if (radix4)
        for (; log_h >= 1; log_h -= 2) {
            for (uint32_t q = threadIdx.x; q < total / 4; q += blockDim.x) cuzk::ntt_butterfly4(a, log_h, q, tile);
            __syncthreads();
        }
    for (; log_h >= last_h; log_h--) {
        for (uint32_t beta = threadIdx.x; beta < total / 2; beta += blockDim.x)
            cuzk::ntt_butterfly(a, log_h, beta, tile);
        __syncthreads();
    }
    if (fused)
        for (uint32_t p = threadIdx.x; p < total / 2; p += blockDim.x) cuzk::ntt_store_pair(a, blk, p, tile);
    else
        for (uint32_t idx = threadIdx.x; idx < total; idx += blockDim.x) cuzk::ntt_store(a, blk, idx, tile);
#else
    std::vector<uint32_t> buf((uint64_t)total * cuzk::fr_t::N);
    const cuzk::Tile<SWIZZLED> tile{buf.data()};
    const uint64_t blocks = 1ull << (a.log_n - log_N - log_T);
    for (uint64_t blk = 0; blk < blocks; blk++) {
        for (uint32_t idx = 0; idx < total; idx++) cuzk::ntt_load(a, blk, idx, tile);
        int log_h = log_N - 1;
        if (radix4)
            for (; log_h >= 1; log_h -= 2)
                for (uint32_t q = 0; q < total / 4; q++) cuzk::ntt_butterfly4(a, log_h, q, tile);
        for (; log_h >= last_h; log_h--)
            for (uint32_t beta = 0; beta < total / 2; beta++) cuzk::ntt_butterfly(a, log_h, beta, tile);
        if (fused)
            for (uint32_t p = 0; p < total / 2; p++) cuzk::ntt_store_pair(a, blk, p, tile);
        else
            for (uint32_t idx = 0; idx < total; idx++) cuzk::ntt_store(a, blk, idx, tile);
    }
#endif
}

// Entry points of one body: ntt_pass caps registers so that three 256-thread blocks (three
// 64 KiB tiles) fit on an SM, ntt_pass_regs lets ptxas use what the radix-4 step wants (two
// blocks); ntt_pass_r2 is the radix-2 network alone under a cap of four 256-thread blocks
// (nvcc 13.0: 60 registers, no spills), 32 warps per SM instead of 24 (docs/GPU_NOTES.md v17).
// Each with the swizzled tile, and with the contiguous one as NAME_plain (ntt.py's
// SWIZZLE_MAX_LOG picks per pass, docs/GPU_NOTES.md v23).
#if defined(__CUDACC__)
#define CUZK_NTT_KERNEL(name, bounds) extern "C" __global__ void bounds name
#else
#define CUZK_NTT_KERNEL(name, bounds) extern "C" void name
#endif
#define CUZK_NTT_ENTRIES(name, bounds, r2_only)                 \
    CUZK_NTT_KERNEL(name, bounds)(CUZK_NTT_PARAMS) {            \
        CUZK_NTT_ARGS                                           \
        ntt_pass_body<r2_only, true>(a);                        \
    }                                                           \
    CUZK_NTT_KERNEL(name##_plain, bounds)(CUZK_NTT_PARAMS) {    \
        CUZK_NTT_ARGS                                           \
        ntt_pass_body<r2_only, false>(a);                       \
    }
CUZK_NTT_ENTRIES(ntt_pass, __launch_bounds__(256, 3), false)
CUZK_NTT_ENTRIES(ntt_pass_regs, , false)
CUZK_NTT_ENTRIES(ntt_pass_r2, __launch_bounds__(256, 4), true)
