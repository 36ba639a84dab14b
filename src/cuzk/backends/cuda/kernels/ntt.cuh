// One pass of the multi-pass (four-step) NTT over Fr, as per-thread steps.
//
// n = 2^L is split into passes of sizes N_1..N_P (L = sum of their logs). Pass p works on
// sub-problems of size S = N_p * M (M = N_{p+1} ... N_P), each contiguous: for every
// (sub-problem o, column i2 < M) it computes a size-N_p DFT over x[o S + M i1 + i2], multiplies
// output k1 by omega_S^(i2 k1) and writes it back at o S + M k1 + i2. After P passes X[k] sits
// at a digit-reversed position; the last pass (M = 1) writes each result straight to its
// natural index, so input and output are both in natural order. A block handles T columns
// (consecutive i2, or in the last pass T consecutive natural indices) so that global accesses
// come in runs of T elements. Inside the block the DFT is a radix-2 decimation-in-frequency
// network in shared memory (natural in, bit-reversed out, read back through bitrev), run two
// stages per step (ntt_butterfly4) with a single radix-2 stage last when log_N is odd.
//
// The kernel in ntt.cu calls these steps in parallel loops separated by barriers; the host
// emulation in the tests calls the same steps in sequential loops.
#pragma once
#include "mem.cuh"

namespace cuzk {

struct NttArgs {
    const uint32_t* in;
    uint32_t* out;
    int log_n;   // L
    int log_N;   // this pass's DFT size
    int log_S;   // this pass's sub-problem size
    int log_T;   // columns per block
    int npass;   // P
    int logs[4]; // all pass sizes (the last pass needs them for the digit reversal)
    const uint32_t* wsub;   // omega_N^t, t < N/2
    const uint32_t* tw_lo;  // omega_n^e, e < 2^tw_bits (non-last passes)
    const uint32_t* tw_hi;  // omega_n^(e 2^tw_bits)
    int tw_bits;
    const uint32_t* tw_full;  // optional omega_S^j, j < S: one load instead of two and a product
    const uint32_t* in_lo;  // optional input scale s^i (two-level like tw), first pass only
    const uint32_t* in_hi;
    int out_mode;           // last pass: 0 none, 1 times out_c, 2 times out_hi[k >> b] out_lo[k & m]
    const uint32_t* out_c;
    const uint32_t* out_lo;
    const uint32_t* out_hi;
    bool radix4;            // two DIF stages per shared-memory step (ntt_butterfly4)
};

CUZK_HD uint32_t bitrev(uint32_t x, int bits) {
#if defined(__CUDA_ARCH__)
    return bits == 0 ? 0u : (__brev(x) >> (32 - bits));
#else
    uint32_t r = 0;
    for (int i = 0; i < bits; i++) r |= ((x >> i) & 1u) << (bits - 1 - i);
    return r;
#endif
}

CUZK_HD fr_t two_level(const uint32_t* lo, const uint32_t* hi, int bits, uint64_t e) {
    fr_t a = load_elem<fr_t>(lo, e & ((1ull << bits) - 1));
    fr_t b = load_elem<fr_t>(hi, e >> bits);
    return a * b;
}

CUZK_HD bool ntt_is_last(const NttArgs& a) { return a.log_S == a.log_N; }

// Last pass: the sub-problem index o whose results land at natural indices D + (n/N) k. The
// digits are taken with constant indices into logs (at most 3 earlier passes) so that the
// arguments stay in registers: a runtime index would put the whole struct in local memory.
CUZK_HD uint64_t ntt_last_group(const NttArgs& a, uint64_t D) {
    uint64_t o = 0;
#pragma unroll
    for (int p = 0; p < 3; p++) {
        if (p >= a.npass - 1) break;
        const int l = a.logs[p];
        o = (o << l) | (D & ((1ull << l) - 1));
        D >>= l;
    }
    return o;
}

// Tile element (g, i1) of block blk, read from global memory (times the input scale, if any).
CUZK_HD fr_t ntt_fetch(const NttArgs& a, uint64_t blk, uint32_t g, uint32_t i1) {
    uint64_t addr;
    if (ntt_is_last(a)) {
        addr = (ntt_last_group(a, (blk << a.log_T) + g) << a.log_N) + i1;
    } else {
        const int log_M = a.log_S - a.log_N;
        const int log_bpo = log_M - a.log_T;  // blocks per sub-problem (a power of two: shifts)
        uint64_t o = blk >> log_bpo;
        uint64_t i2 = ((blk & ((1ull << log_bpo) - 1)) << a.log_T) + g;
        addr = (o << a.log_S) + ((uint64_t)i1 << log_M) + i2;
    }
    fr_t x = load_elem<fr_t>(a.in, addr);
    // the input scale is set on the first pass only, where addr is the natural index
    if (a.in_lo != nullptr) x = x * two_level(a.in_lo, a.in_hi, a.tw_bits, addr);
    return x;
}

// Step 1: element idx (< T N) of block blk from global memory into the tile.
CUZK_HD void ntt_load(const NttArgs& a, uint64_t blk, uint32_t idx, uint32_t* tile) {
    const uint32_t T = 1u << a.log_T, N = 1u << a.log_N;
    const bool last = ntt_is_last(a);
    const uint32_t g = last ? idx >> a.log_N : idx & (T - 1);
    const uint32_t i1 = last ? idx & (N - 1) : idx >> a.log_T;
    store_elem<fr_t>(tile, (uint64_t)g * N + i1, ntt_fetch(a, blk, g, i1));
}

// Step 2: butterfly beta (< T N / 2) of the DIF stage with half-size 2^log_h.
CUZK_HD void ntt_butterfly(const NttArgs& a, int log_h, uint32_t beta, uint32_t* tile) {
    const uint32_t half_N = 1u << (a.log_N - 1);
    const uint32_t g = beta >> (a.log_N - 1);
    const uint32_t r = beta & (half_N - 1);
    const uint32_t j = r & ((1u << log_h) - 1);
    const uint32_t blk = r >> log_h;
    const uint32_t p0 = (g << a.log_N) + (blk << (log_h + 1)) + j;
    const uint32_t p1 = p0 + (1u << log_h);
    fr_t u = load_elem<fr_t>(tile, p0);
    fr_t v = load_elem<fr_t>(tile, p1);
    store_elem<fr_t>(tile, p0, u + v);
    fr_t d = u - v;
    if (j != 0) d = d * load_elem<fr_t>(a.wsub, (uint64_t)j << (a.log_N - 1 - log_h));
    store_elem<fr_t>(tile, p1, d);
}

// Step 2 for two stages at once (half-sizes 2^log_h and 2^(log_h - 1), log_h >= 1): quad q
// (< T N / 4) holds the four elements base + k 2^(log_h - 1), k < 4, in registers through both
// stages, so the tile is read and written once per two stages and a barrier is saved; its three
// twiddles are the ones the two radix-2 stages would load for these four elements.
CUZK_HD void ntt_butterfly4(const NttArgs& a, int log_h, uint32_t q, uint32_t* tile) {
    const int log_q = log_h - 1;
    const uint32_t g = q >> (a.log_N - 2);
    const uint32_t r = q & ((1u << (a.log_N - 2)) - 1);
    const uint32_t j = r & ((1u << log_q) - 1);
    const uint32_t blk = r >> log_q;
    const uint32_t base = (g << a.log_N) + (blk << (log_h + 1)) + j;
    const uint32_t step = 1u << log_q;
    fr_t x0 = load_elem<fr_t>(tile, base);
    fr_t x1 = load_elem<fr_t>(tile, base + step);
    fr_t x2 = load_elem<fr_t>(tile, base + 2 * step);
    fr_t x3 = load_elem<fr_t>(tile, base + 3 * step);
    // stage log_h: pairs (x0, x2) at offset j and (x1, x3) at offset j + 2^(log_h - 1)
    const int sh = a.log_N - 1 - log_h;
    fr_t d0 = x0 - x2, d1 = x1 - x3;
    x0 = x0 + x2;
    x1 = x1 + x3;
    if (j != 0) d0 = d0 * load_elem<fr_t>(a.wsub, (uint64_t)j << sh);
    d1 = d1 * load_elem<fr_t>(a.wsub, (uint64_t)(j + step) << sh);
    // stage log_h - 1: pairs (x0, x1) and (d0, d1), both at offset j
    fr_t e0 = x0 - x1, e1 = d0 - d1;
    if (j != 0) {
        const fr_t w = load_elem<fr_t>(a.wsub, (uint64_t)j << (sh + 1));
        e0 = e0 * w;
        e1 = e1 * w;
    }
    store_elem<fr_t>(tile, base, x0 + x1);
    store_elem<fr_t>(tile, base + step, e0);
    store_elem<fr_t>(tile, base + 2 * step, d0 + d1);
    store_elem<fr_t>(tile, base + 3 * step, e1);
}

// Output k1 of column g of block blk (the DFT's X[k1], already in hand) to global memory, times
// the inter-pass twiddle (non-last passes) or the output scale (last pass).
CUZK_HD void ntt_emit(const NttArgs& a, uint64_t blk, uint32_t g, uint32_t k1, fr_t x) {
    if (ntt_is_last(a)) {
        uint64_t natural = (blk << a.log_T) + g + ((uint64_t)k1 << (a.log_n - a.log_N));
        if (a.out_mode == 1) x = x * load_elem<fr_t>(a.out_c, 0);
        if (a.out_mode == 2) x = x * two_level(a.out_lo, a.out_hi, a.tw_bits, natural);
        store_elem<fr_t>(a.out, natural, x);
    } else {
        const int log_M = a.log_S - a.log_N;
        const int log_bpo = log_M - a.log_T;
        uint64_t o = blk >> log_bpo;
        uint64_t i2 = ((blk & ((1ull << log_bpo) - 1)) << a.log_T) + g;
        const uint64_t local = i2 * k1;  // exponent of omega_S
        if (local != 0) {
            if (a.tw_full != nullptr)
                x = x * load_elem<fr_t>(a.tw_full, local);
            else
                x = x * two_level(a.tw_lo, a.tw_hi, a.tw_bits, local << (a.log_n - a.log_S));
        }
        store_elem<fr_t>(a.out, (o << a.log_S) + ((uint64_t)k1 << log_M) + i2, x);
    }
}

// Step 3: output element idx (< T N) of block blk from the tile to global memory.
CUZK_HD void ntt_store(const NttArgs& a, uint64_t blk, uint32_t idx, const uint32_t* tile) {
    const uint32_t T = 1u << a.log_T, N = 1u << a.log_N;
    const uint32_t g = idx & (T - 1);
    const uint32_t k1 = idx >> a.log_T;
    ntt_emit(a, blk, g, k1, load_elem<fr_t>(tile, (uint64_t)g * N + bitrev(k1, a.log_N)));
}

// ---- The register-resident pass (ntt_pass_reg8): each thread holds 8 elements of the tile in
// registers and runs up to three DIF stages on them per step; the tile goes through shared memory
// only between steps (three exchanges for N = 2^10 or 2^11, instead of a round trip per one or two
// stages), the first step reads global memory and the last writes it straight from registers.
// Step plan: the short step (log_N mod 3 stages) first, then steps of three; a step whose top
// stage has half-size 2^h holds the elements that differ in tile bits lo..lo+2, lo = h - 2.

// Other bit i of a thread (the tile bits outside lo..lo+2, in order).
CUZK_HD int r8_other_bit(int i, int lo) { return i < lo ? i : i + 3; }

// Tile position of element 0 of thread t in the step with group bits lo..lo+2. Thread bits go to
// the other bits in rotated order, so that a warp's 32 lanes fill five bits whose swizzled
// shared-memory words (r8_word) fall in 32 different banks: bits 0..4 when lo >= 5, else the five
// bits from lo + 3 up.
CUZK_HD uint32_t r8_base(uint32_t t, int lo, int tot_bits) {
    const int count = tot_bits - 3;
    const int r0 = lo >= 5 ? 0 : lo;
    uint32_t p = 0;
    for (int j = 0; j < count; j++) p |= ((t >> j) & 1u) << r8_other_bit((j + r0) % count, lo);
    return p;
}

// Shared-memory word of limb l of tile position p: limb-planar with an XOR swizzle (bits 5..9 onto
// 0..4, bit 10 onto 0), a bijection on the tile that puts every step's lanes in distinct banks.
CUZK_HD uint32_t r8_word(uint32_t p, int l, int tot_bits) {
    const uint32_t sw = p ^ ((p >> 5) & 31u) ^ ((p >> 10) & 1u);
    return ((uint32_t)l << tot_bits) + sw;
}

// One DIF stage on a thread's 8 elements: pairs differing in bit D (< 3) of the element index,
// i.e. tile bit lo + D, half-size 2^(lo + D). base_i is element 0's index within its DFT.
template <int D>
CUZK_HD void r8_stage(const NttArgs& a, fr_t* x, uint32_t base_i, int lo) {
    const int s = lo + D;
    const int sh = a.log_N - 1 - s;
    const uint32_t jmask = (1u << s) - 1;
#pragma unroll
    for (int k = 0; k < 8; k++) {
        if (k & (1 << D)) continue;
        const uint32_t j = (base_i + ((uint32_t)k << lo)) & jmask;
        fr_t u = x[k], v = x[k | (1 << D)];
        x[k] = u + v;
        fr_t d = u - v;
        if (j != 0) d = d * load_elem<fr_t>(a.wsub, (uint64_t)j << sh);
        x[k | (1 << D)] = d;
    }
}

// A step of r (1..3) stages, top stage half-size 2^(lo + 2).
CUZK_HD void r8_step(const NttArgs& a, fr_t* x, uint32_t base, int lo, int r) {
    const uint32_t base_i = base & ((1u << a.log_N) - 1);
    r8_stage<2>(a, x, base_i, lo);
    if (r >= 2) r8_stage<1>(a, x, base_i, lo);
    if (r >= 3) r8_stage<0>(a, x, base_i, lo);
}

CUZK_HD void r8_fetch(const NttArgs& a, uint64_t blk, fr_t* x, uint32_t base, int lo) {
#pragma unroll
    for (int k = 0; k < 8; k++) {
        const uint32_t p = base + ((uint32_t)k << lo);
        x[k] = ntt_fetch(a, blk, p >> a.log_N, p & ((1u << a.log_N) - 1));
    }
}

// The network leaves X[bitrev(i)] at DFT index i.
CUZK_HD void r8_emit(const NttArgs& a, uint64_t blk, const fr_t* x, uint32_t base, int lo) {
#pragma unroll
    for (int k = 0; k < 8; k++) {
        const uint32_t p = base + ((uint32_t)k << lo);
        ntt_emit(a, blk, p >> a.log_N, bitrev(p & ((1u << a.log_N) - 1), a.log_N), x[k]);
    }
}

CUZK_HD void r8_put(fr_t* x, uint32_t base, int lo, int tot_bits, uint32_t* tile) {
#pragma unroll
    for (int k = 0; k < 8; k++) {
        const uint32_t p = base + ((uint32_t)k << lo);
#pragma unroll
        for (int l = 0; l < fr_t::N; l++) tile[r8_word(p, l, tot_bits)] = x[k].v[l];
    }
}

CUZK_HD void r8_get(fr_t* x, uint32_t base, int lo, int tot_bits, const uint32_t* tile) {
#pragma unroll
    for (int k = 0; k < 8; k++) {
        const uint32_t p = base + ((uint32_t)k << lo);
#pragma unroll
        for (int l = 0; l < fr_t::N; l++) x[k].v[l] = tile[r8_word(p, l, tot_bits)];
    }
}

}  // namespace cuzk
