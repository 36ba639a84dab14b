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

// The tile's layout (docs/GPU_NOTES.md v23). An element moves as two 16-byte halves, and a
// quarter-warp's eight 16-byte accesses are served in one shared-memory wavefront only if they
// fall in eight different 16-byte slots of a 128-byte row. Stored contiguously, half 0 of every
// element lands in one of 4 slots, and the columns of a load or store (g N + i, the same i)
// all in the same one: 3-6 wavefronts per access on average over the plans' steps. Swizzled,
// element e's halves sit at chunks c and c ^ 1 of c = 2e ^ h(e >> 2), h a 3-bit XOR of bits of
// its row: 1 the row's parities under three masks found by search (one wavefront per access
// at every step of every tile shape the plans use, in the bank model of GPU_NOTES v23), 2 a
// cheaper XOR of four shifted copies (1.0-1.4 wavefronts), 0 contiguous.
#ifndef CUZK_NTT_SWIZZLE
#define CUZK_NTT_SWIZZLE 1
#endif
// the last radix-2 stage (half-size 1, no twiddle) of an odd-sized pass done in the store step:
// each thread reads the stage's two elements, and writes both outputs to global memory, which
// saves the stage's tile round trip and barrier
#ifndef CUZK_NTT_FUSED_LAST
#define CUZK_NTT_FUSED_LAST 1
#endif

namespace cuzk {

CUZK_HD uint32_t parity(uint32_t x) {
#if defined(__CUDA_ARCH__)
    return __popc(x) & 1u;
#else
    return (uint32_t)__builtin_parity(x);
#endif
}

// The tile in shared memory (a word array of 32-byte elements), swizzled (SWIZZLED: element e's
// halves at chunks c and c ^ 1 of c = 2e ^ h(e >> 2)) or contiguous. The steps below take it as
// a template parameter so that ntt.cu builds one entry point of each layout.
template <bool SWIZZLED>
struct Tile {
    uint32_t* w;

    // the 16-byte chunk that holds half 0 of element e (half 1 is at chunk ^ 1)
    CUZK_HD static uint32_t chunk(uint32_t e) {
        const uint32_t row = e >> 2;
        uint32_t h = 0;
        if (SWIZZLED) {
#if CUZK_NTT_SWIZZLE == 1
            h = parity(row & 0xffu) | parity(row & 0x41u) << 1 | parity(row & 0x1d5u) << 2;
#elif CUZK_NTT_SWIZZLE == 2
            h = (row ^ row >> 1 ^ row >> 2 ^ row >> 4) & 7u;
#endif
        }
        return (e << 1) ^ h;
    }
    CUZK_HD fr_t get(uint32_t e) const {
        const uint32_t c = chunk(e);
        fr_t r;
        load_words<4>(r.v, w + 4 * c);
        load_words<4>(r.v + 4, w + 4 * (c ^ 1u));
        return r;
    }
    CUZK_HD void put(uint32_t e, const fr_t& x) const {
        const uint32_t c = chunk(e);
        store_words<4>(w + 4 * c, x.v);
        store_words<4>(w + 4 * (c ^ 1u), x.v + 4);
    }
};

// A pass's launch parameters apart from its buffers, passed by value as one kernel argument:
// the host packs it once per plan (ntt.py's NTT_PARAMS, the same layout), so that a launch
// marshals 3 arguments instead of 24 (docs/GPU_NOTES.md v19). Ints first, then pointers, no
// padding: 12 x 4 + 9 x 8 = 120 bytes.
struct NttParams {
    int log_n, log_N, log_S, log_T, npass;
    int logs[4];
    int tw_bits, out_mode, radix4;
    const uint32_t *wsub, *tw_lo, *tw_hi, *tw_full, *in_lo, *in_hi, *out_c, *out_lo, *out_hi;
};
static_assert(sizeof(NttParams) == 120, "NttParams must match ntt.py's NTT_PARAMS");

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
template <class TileT>
CUZK_HD void ntt_load(const NttArgs& a, uint64_t blk, uint32_t idx, TileT tile) {
    const uint32_t T = 1u << a.log_T, N = 1u << a.log_N;
    const bool last = ntt_is_last(a);
    const uint32_t g = last ? idx >> a.log_N : idx & (T - 1);
    const uint32_t i1 = last ? idx & (N - 1) : idx >> a.log_T;
    tile.put(g * N + i1, ntt_fetch(a, blk, g, i1));
}

// Step 2: butterfly beta (< T N / 2) of the DIF stage with half-size 2^log_h.
template <class TileT>
CUZK_HD void ntt_butterfly(const NttArgs& a, int log_h, uint32_t beta, TileT tile) {
    const uint32_t half_N = 1u << (a.log_N - 1);
    const uint32_t g = beta >> (a.log_N - 1);
    const uint32_t r = beta & (half_N - 1);
    const uint32_t j = r & ((1u << log_h) - 1);
    const uint32_t blk = r >> log_h;
    const uint32_t p0 = (g << a.log_N) + (blk << (log_h + 1)) + j;
    const uint32_t p1 = p0 + (1u << log_h);
    fr_t u = tile.get(p0);
    fr_t v = tile.get(p1);
    tile.put(p0, u + v);
    fr_t d = u - v;
    if (j != 0) d = d * load_elem<fr_t>(a.wsub, (uint64_t)j << (a.log_N - 1 - log_h));
    tile.put(p1, d);
}

// Step 2 for two stages at once (half-sizes 2^log_h and 2^(log_h - 1), log_h >= 1): quad q
// (< T N / 4) holds the four elements base + k 2^(log_h - 1), k < 4, in registers through both
// stages, so the tile is read and written once per two stages and a barrier is saved; its three
// twiddles are the ones the two radix-2 stages would load for these four elements.
template <class TileT>
CUZK_HD void ntt_butterfly4(const NttArgs& a, int log_h, uint32_t q, TileT tile) {
    const int log_q = log_h - 1;
    const uint32_t g = q >> (a.log_N - 2);
    const uint32_t r = q & ((1u << (a.log_N - 2)) - 1);
    const uint32_t j = r & ((1u << log_q) - 1);
    const uint32_t blk = r >> log_q;
    const uint32_t base = (g << a.log_N) + (blk << (log_h + 1)) + j;
    const uint32_t step = 1u << log_q;
    fr_t x0 = tile.get(base);
    fr_t x1 = tile.get(base + step);
    fr_t x2 = tile.get(base + 2 * step);
    fr_t x3 = tile.get(base + 3 * step);
    // stage log_h: pairs (x0, x2) at offset j and (x1, x3) at offset j + 2^(log_h - 1); stage
    // log_h - 1: pairs (x0, x1) and (d0, d1), both at offset j. Ordered so that fewer elements
    // are live across each product (the products' carry asm is volatile, so this order is the
    // order the code runs in): the sums of both stages leave for the tile as soon as they exist
    // (80 registers and 52 / 64 B of spills before, 72 and none now: docs/GPU_NOTES.md v25)
    const int sh = a.log_N - 1 - log_h;
    fr_t d0 = x0 - x2, d1 = x1 - x3;
    x0 = x0 + x2;
    x1 = x1 + x3;
    tile.put(base, x0 + x1);
    fr_t e0 = x0 - x1;
    if (j != 0) d0 = d0 * load_elem<fr_t>(a.wsub, (uint64_t)j << sh);
    d1 = d1 * load_elem<fr_t>(a.wsub, (uint64_t)(j + step) << sh);
    tile.put(base + 2 * step, d0 + d1);
    fr_t e1 = d0 - d1;
    if (j != 0) {
        const fr_t w = load_elem<fr_t>(a.wsub, (uint64_t)j << (sh + 1));
        e0 = e0 * w;
        e1 = e1 * w;
    }
    tile.put(base + step, e0);
    tile.put(base + 3 * step, e1);
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
template <class TileT>
CUZK_HD void ntt_store(const NttArgs& a, uint64_t blk, uint32_t idx, TileT tile) {
    const uint32_t T = 1u << a.log_T, N = 1u << a.log_N;
    const uint32_t g = idx & (T - 1);
    const uint32_t k1 = idx >> a.log_T;
    ntt_emit(a, blk, g, k1, tile.get(g * N + bitrev(k1, a.log_N)));
}

// Step 3 with the last DIF stage (half-size 1) folded in, pair p (< T N / 2): the stage's
// butterfly on tile positions 2m, 2m + 1 of column g gives X[k1] and X[k1 + N/2], k1 =
// bitrev(m) over log_N - 1 bits (bitrev(2m) = k1, bitrev(2m + 1) = k1 + N/2). g runs fastest
// so that a warp's stores come in runs of T elements, as in ntt_store.
template <class TileT>
CUZK_HD void ntt_store_pair(const NttArgs& a, uint64_t blk, uint32_t p, TileT tile) {
    const uint32_t T = 1u << a.log_T, N = 1u << a.log_N;
    const uint32_t g = p & (T - 1);
    const uint32_t m = p >> a.log_T;
    const fr_t u = tile.get(g * N + 2 * m);
    const fr_t v = tile.get(g * N + 2 * m + 1);
    const uint32_t k1 = bitrev(m, a.log_N - 1);
    // one copy of ntt_emit (its twiddle product) in the code, not two
#pragma unroll 1
    for (uint32_t half = 0; half < 2; half++)
        ntt_emit(a, blk, g, k1 + half * (N / 2), half ? u - v : u + v);
}

// whether a pass ends in ntt_store_pair: when a radix-2 stage is left after the radix-4 steps
CUZK_HD bool ntt_fused_last(int log_N, bool radix4) {
    return CUZK_NTT_FUSED_LAST && log_N >= 1 && (!radix4 || (log_N & 1));
}

}  // namespace cuzk
