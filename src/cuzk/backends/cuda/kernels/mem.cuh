// Loads and stores of field elements and points from word arrays, 16 bytes at a time.
//
// Every element size (Fr 32 B, Fq 48 B, Fq2 96 B) is a multiple of 16 and CuPy allocations
// are 256-byte aligned, so each element can move as uint4 vectors.
#pragma once
#include "curve.cuh"

namespace cuzk {

#if !defined(__CUDACC__)
struct uint4 {
    uint32_t x, y, z, w;
};
#endif

template <int N>
CUZK_HD void load_words(uint32_t* dst, const uint32_t* src) {
    const uint4* s = reinterpret_cast<const uint4*>(src);
#pragma unroll
    for (int k = 0; k < N / 4; k++) {
        uint4 q = s[k];
        dst[4 * k + 0] = q.x;
        dst[4 * k + 1] = q.y;
        dst[4 * k + 2] = q.z;
        dst[4 * k + 3] = q.w;
    }
}

template <int N>
CUZK_HD void store_words(uint32_t* dst, const uint32_t* src) {
    uint4* d = reinterpret_cast<uint4*>(dst);
#pragma unroll
    for (int k = 0; k < N / 4; k++) {
        uint4 q;
        q.x = src[4 * k + 0];
        q.y = src[4 * k + 1];
        q.z = src[4 * k + 2];
        q.w = src[4 * k + 3];
        d[k] = q;
    }
}

template <class P>
CUZK_HD Fp<P> load(const uint32_t* src, Fp<P>*) {
    Fp<P> r;
    load_words<P::N>(r.v, src);
    return r;
}
template <class P>
CUZK_HD void store(uint32_t* dst, const Fp<P>& a) {
    store_words<P::N>(dst, a.v);
}
CUZK_HD fq2_t load(const uint32_t* src, fq2_t*) {
    fq2_t r;
    load_words<fq_t::N>(r.c0.v, src);
    load_words<fq_t::N>(r.c1.v, src + fq_t::N);
    return r;
}
CUZK_HD void store(uint32_t* dst, const fq2_t& a) {
    store_words<fq_t::N>(dst, a.c0.v);
    store_words<fq_t::N>(dst + fq_t::N, a.c1.v);
}

// Element i of a contiguous array of F.
template <class F>
CUZK_HD F load_elem(const uint32_t* base, uint64_t i) {
    return load(base + i * F::WORDS, (F*)nullptr);
}
template <class F>
CUZK_HD void store_elem(uint32_t* base, uint64_t i, const F& a) {
    store(base + i * F::WORDS, a);
}

template <class F>
CUZK_HD Affine<F> load_affine(const uint32_t* base, uint64_t i) {
    const uint32_t* p = base + i * 2 * F::WORDS;
    return {load(p, (F*)nullptr), load(p + F::WORDS, (F*)nullptr)};
}
template <class F>
CUZK_HD void store_affine(uint32_t* base, uint64_t i, const Affine<F>& a) {
    uint32_t* p = base + i * 2 * F::WORDS;
    store(p, a.x);
    store(p + F::WORDS, a.y);
}

template <class F>
CUZK_HD Xyzz<F> load_xyzz(const uint32_t* base, uint64_t i) {
    const uint32_t* p = base + i * 4 * F::WORDS;
    return {load(p, (F*)nullptr), load(p + F::WORDS, (F*)nullptr), load(p + 2 * F::WORDS, (F*)nullptr),
            load(p + 3 * F::WORDS, (F*)nullptr)};
}
template <class F>
CUZK_HD void store_xyzz(uint32_t* base, uint64_t i, const Xyzz<F>& a) {
    uint32_t* p = base + i * 4 * F::WORDS;
    store(p, a.X);
    store(p + F::WORDS, a.Y);
    store(p + 2 * F::WORDS, a.ZZ);
    store(p + 3 * F::WORDS, a.ZZZ);
}

}  // namespace cuzk
