// Montgomery arithmetic over Fr (8 x 32-bit limbs) and Fq (12 limbs), and Fq2 = Fq[i]/(i^2+1).
//
// The radix is 2^(32 N), i.e. 2^256 for Fr and 2^384 for Fq: the same Montgomery form as the
// host's 64-bit limbs, so a device buffer is the host's bytes unchanged. Every value is fully
// reduced in [0, p) after each operation (the host relies on that for equality and encodings).
// Multiplication is CIOS in even/odd form (see operator* below): 4 N^2 32-bit multiply-adds
// per product in the PTX, which ptxas turns into far fewer SASS instructions than the
// lo-chain/hi-chain form.
#pragma once
#include "ptx.cuh"

namespace cuzk {

struct FrParams {
    static constexpr int N = 8;
    static constexpr uint32_t INV = 0xffffffffu;  // -r^-1 mod 2^32
    static constexpr bool LOW_ONE = true;  // r's low limb is 1 (see mont_redc)
    static CUZK_HD uint32_t p(int i) {
        constexpr uint32_t P[8] = {0x00000001u, 0xffffffffu, 0xfffe5bfeu, 0x53bda402u,
                                   0x09a1d805u, 0x3339d808u, 0x299d7d48u, 0x73eda753u};
        return P[i];
    }
    static CUZK_HD uint32_t one(int i) {  // 2^256 mod r
        constexpr uint32_t O[8] = {0xfffffffeu, 0x00000001u, 0x00034802u, 0x5884b7fau,
                                   0xecbc4ff5u, 0x998c4fefu, 0xacc5056fu, 0x1824b159u};
        return O[i];
    }
};

struct FqParams {
    static constexpr int N = 12;
    static constexpr uint32_t INV = 0xfffcfffdu;  // -p^-1 mod 2^32
    static constexpr bool LOW_ONE = false;
    static CUZK_HD uint32_t p(int i) {
        constexpr uint32_t P[12] = {0xffffaaabu, 0xb9feffffu, 0xb153ffffu, 0x1eabfffeu,
                                    0xf6b0f624u, 0x6730d2a0u, 0xf38512bfu, 0x64774b84u,
                                    0x434bacd7u, 0x4b1ba7b6u, 0x397fe69au, 0x1a0111eau};
        return P[i];
    }
    static CUZK_HD uint32_t one(int i) {  // 2^384 mod p
        constexpr uint32_t O[12] = {0x0002fffdu, 0x76090000u, 0xc40c0002u, 0xebf4000bu,
                                    0x53c758bau, 0x5f489857u, 0x70525745u, 0x77ce5853u,
                                    0xa256ec6du, 0x5c071a97u, 0xfa80e493u, 0x15f65ec3u};
        return O[i];
    }
};

// CUZK_OPAQUE_INV 1 (device builds): the reduction's m = X[0] * INV takes INV from constant
// memory, so ptxas cannot see that Fr's INV is 2^32 - 1 (m = -X[0]); knowing it, ptxas splits each
// m p_j multiply-add pair into IMAD.X + IMAD.HI.X (+ IADD3.X) instead of one IMAD.WIDE with carry.
// nvcc 13.0, sm_90: 4 Fr products 1128 -> 928 SASS instructions, ntt_pass 3920 -> 3296 with
// smaller spills. Measured on the H200: the Fr product rate 54.2 -> 61.3 G/s, the NTT -7% at
// 2^24 and 2^27 (docs/GPU_NOTES.md v16). 0 gives the folded constant back (an A/B variant).
#ifndef CUZK_OPAQUE_INV
#define CUZK_OPAQUE_INV 1
#endif
#if CUZK_OPAQUE_INV && defined(__CUDA_ARCH__)
__constant__ uint32_t MONT_INV[2] = {FrParams::INV, FqParams::INV};
#endif

// -p^-1 mod 2^32 as the reduction multiplies by it (see CUZK_OPAQUE_INV)
template <class P>
CUZK_HD uint32_t mont_inv() {
#if CUZK_OPAQUE_INV && defined(__CUDA_ARCH__)
    return MONT_INV[P::N == FrParams::N ? 0 : 1];
#else
    return P::INV;
#endif
}

template <class P>
struct Fp {
    static constexpr int N = P::N;
    static constexpr int WORDS = N;  // 32-bit words in memory
    uint32_t v[N];

    static CUZK_HD Fp zero() {
        Fp r;
#pragma unroll
        for (int i = 0; i < N; i++) r.v[i] = 0;
        return r;
    }
    static CUZK_HD Fp one() {
        Fp r;
#pragma unroll
        for (int i = 0; i < N; i++) r.v[i] = P::one(i);
        return r;
    }
    CUZK_HD bool is_zero() const {
        uint32_t acc = 0;
#pragma unroll
        for (int i = 0; i < N; i++) acc |= v[i];
        return acc == 0;
    }
    CUZK_HD bool operator==(const Fp& o) const {
        uint32_t acc = 0;
#pragma unroll
        for (int i = 0; i < N; i++) acc |= v[i] ^ o.v[i];
        return acc == 0;
    }
    CUZK_HD bool operator!=(const Fp& o) const { return !(*this == o); }
};

// r = t - p if t >= p else t, for t < 2p given in N limbs (2p < 2^(32N) for both moduli).
template <class P>
CUZK_HD void reduce_once(uint32_t* t) {
    constexpr int N = P::N;
    uint32_t d[N];
    d[0] = sub_cc(t[0], P::p(0));
#pragma unroll
    for (int i = 1; i < N; i++) d[i] = subc_cc(t[i], P::p(i));
    uint32_t borrow = subc(0, 0);  // 0xffffffff when t < p
#pragma unroll
    for (int i = 0; i < N; i++) t[i] = borrow ? t[i] : d[i];
}

template <class P>
CUZK_HD Fp<P> operator+(const Fp<P>& a, const Fp<P>& b) {
    constexpr int N = P::N;
    Fp<P> r;
    r.v[0] = add_cc(a.v[0], b.v[0]);
#pragma unroll
    for (int i = 1; i < N; i++) r.v[i] = addc_cc(a.v[i], b.v[i]);
    reduce_once<P>(r.v);
    return r;
}

template <class P>
CUZK_HD Fp<P> operator-(const Fp<P>& a, const Fp<P>& b) {
    constexpr int N = P::N;
    Fp<P> r;
    r.v[0] = sub_cc(a.v[0], b.v[0]);
#pragma unroll
    for (int i = 1; i < N; i++) r.v[i] = subc_cc(a.v[i], b.v[i]);
    uint32_t borrow = subc(0, 0);
    uint32_t mask = borrow;  // add p back when the difference went negative
    uint32_t c[N];
#pragma unroll
    for (int i = 0; i < N; i++) c[i] = P::p(i) & mask;
    r.v[0] = add_cc(r.v[0], c[0]);
#pragma unroll
    for (int i = 1; i < N; i++) r.v[i] = addc_cc(r.v[i], c[i]);
    return r;
}

template <class P>
CUZK_HD Fp<P> operator-(const Fp<P>& a) {
    return Fp<P>::zero() - a;
}

template <class P>
CUZK_HD Fp<P> dbl(const Fp<P>& a) {
    return a + a;
}

// Montgomery product a * b / 2^(32N) mod p: CIOS with the running sum split in two halves.
//
// The sum t is kept as X + Y 2^32 with X and Y of N limbs each: X receives the products of the
// even limbs (a[0] b_i into X[0..1], a[2] b_i into X[2..3], ...), Y those of the odd limbs. The
// low and high words of one 32x32 product then land in adjacent limbs of one accumulator, so a
// row is two unbroken carry chains of N multiply-adds with no fix-ups between them; nvcc 13 for
// sm_90 emits 2.5x (Fr) and 3.1x (Fq) fewer SASS instructions for the rate kernel's 4 products
// (2752 -> 1096, 5168 -> 1672), and the measured product rate rose 1.6x (Fr) and 1.9x (Fq). After a row's reduction
// X[0] = 0, and dividing by 2^32 makes Y the aligned half and X (shifted two limbs, its limb 1
// added into Y[0]) the offset one, so the two arrays swap roles every row. Bounds: t < 2p and
// 2p < 2^(32N) keep every partial sum below 2^(32(N+1)), so the dropped top carries are zero.
// acc[2..] += a[off + 2..] b, continuing the carry chain of the limbs below
template <class P>
CUZK_HD void mont_cmad_rest(uint32_t* acc, const uint32_t* a, int off, uint32_t b) {
#pragma unroll
    for (int j = 2; j < P::N; j += 2) {
        acc[j] = madc_lo_cc(a[j + off], b, acc[j]);
        acc[j + 1] = madc_hi_cc(a[j + off], b, acc[j + 1]);
    }
}

template <class P>
CUZK_HD void mont_cmad(uint32_t* acc, const uint32_t* a, int off, uint32_t b) {
    acc[0] = mad_lo_cc(a[off], b, acc[0]);
    acc[1] = madc_hi_cc(a[off], b, acc[1]);
    mont_cmad_rest<P>(acc, a, off, b);
}

// X + Y 2^32 += m p with m = -X[0] / p mod 2^32, so that X[0] becomes 0.
//
// Where p's low limb is 1 (Fr), m = -X[0] and the limb-0 product needs no multiplier: X[0] + m
// is 0 with carry [X[0] != 0] into limb 1 (ptxas keeps a multiply by the constant 1 as an IMAD).
template <class P>
CUZK_HD void mont_redc(uint32_t* X, uint32_t* Y) {
    constexpr int N = P::N;
    uint32_t pe[N];
#pragma unroll
    for (int i = 0; i < N; i++) pe[i] = P::p(i);
    const uint32_t m = X[0] * mont_inv<P>();
    mont_cmad<P>(Y, pe, 1, m);  // its top carry is zero by the bound
    if constexpr (P::LOW_ONE) {
        X[0] = add_cc(X[0], m);  // 0
        X[1] = addc_cc(X[1], 0u);
        mont_cmad_rest<P>(X, pe, 0, m);
    } else {
        mont_cmad<P>(X, pe, 0, m);
    }
    Y[N - 1] = addc(Y[N - 1], 0);
}

// Row i > 0: divide the reduced X + Y 2^32 by 2^32 and add a b_i; Y becomes the aligned half.
template <class P>
CUZK_HD void mont_row(uint32_t* X, uint32_t* Y, const uint32_t* a, uint32_t b) {
    constexpr int N = P::N;
    Y[0] = add_cc(Y[0], X[1]);
#pragma unroll
    for (int j = 0; j < N - 2; j += 2) {
        X[j] = madc_lo_cc(a[j + 1], b, X[j + 2]);
        X[j + 1] = madc_hi_cc(a[j + 1], b, X[j + 3]);
    }
    X[N - 2] = madc_lo_cc(a[N - 1], b, 0);
    X[N - 1] = madc_hi(a[N - 1], b, 0);
    mont_cmad<P>(Y, a, 0, b);
    X[N - 1] = addc(X[N - 1], 0);
    mont_redc<P>(Y, X);
}

template <class P>
CUZK_HD Fp<P> operator*(const Fp<P>& x, const Fp<P>& y) {
    constexpr int N = P::N;
    static_assert(N % 2 == 0, "the even/odd split needs an even limb count");
    const uint32_t* a = x.v;
    uint32_t ev[N], od[N];
#pragma unroll
    for (int j = 0; j < N; j += 2) {
        ev[j] = mul_lo(a[j], y.v[0]);
        ev[j + 1] = mul_hi(a[j], y.v[0]);
        od[j] = mul_lo(a[j + 1], y.v[0]);
        od[j + 1] = mul_hi(a[j + 1], y.v[0]);
    }
    mont_redc<P>(ev, od);
#pragma unroll
    for (int i = 1; i < N; i += 2) {
        mont_row<P>(ev, od, a, y.v[i]);
        if (i + 1 < N) mont_row<P>(od, ev, a, y.v[i + 1]);
    }
    // N even: the last row left od aligned with od[0] = 0 and ev offset; divide by 2^32
    Fp<P> r;
    r.v[0] = add_cc(ev[0], od[1]);
#pragma unroll
    for (int i = 1; i < N - 1; i++) r.v[i] = addc_cc(ev[i], od[i + 1]);
    r.v[N - 1] = addc(ev[N - 1], 0);
    reduce_once<P>(r.v);
    return r;
}

template <class P>
CUZK_HD Fp<P> sqr(const Fp<P>& a) {
    return a * a;
}

// Canonical value of a Montgomery element: a * 1 / 2^(32N).
template <class P>
CUZK_HD Fp<P> from_mont(const Fp<P>& a) {
    Fp<P> one_canon = Fp<P>::zero();
    one_canon.v[0] = 1;
    return a * one_canon;
}

// a^e for an exponent given as 32-bit words (little endian), square-and-multiply from the top.
template <class P>
CUZK_HD Fp<P> pow_words(const Fp<P>& a, const uint32_t* e, int words) {
    Fp<P> r = Fp<P>::one();
    for (int w = words - 1; w >= 0; w--) {
        for (int b = 31; b >= 0; b--) {
            r = sqr(r);
            if ((e[w] >> b) & 1u) r = r * a;
        }
    }
    return r;
}

// a^(p-2) (Fermat): the inverse for a != 0, and 0 for a = 0.
template <class P>
CUZK_HD Fp<P> inverse(const Fp<P>& a) {
    constexpr int N = P::N;
    uint32_t e[N];
#pragma unroll
    for (int i = 0; i < N; i++) e[i] = P::p(i);
    // p - 2: p is odd and p(0) >= 2 for both moduli except Fr (p(0) = 1), handle the borrow.
    e[0] = sub_cc(e[0], 2u);
#pragma unroll
    for (int i = 1; i < N; i++) e[i] = subc_cc(e[i], 0u);
    return pow_words<P>(a, e, N);
}

// Out-of-line products for the cold point formulas (window reduction, doubling, exceptional
// cases): a call costs a few percent there, and keeps each module's code and compile time small.
template <class P>
CUZK_HD_NOINLINE Fp<P> mul_ni(const Fp<P>& a, const Fp<P>& b) {
    return a * b;
}
template <class P>
CUZK_HD Fp<P> cmul(const Fp<P>& a, const Fp<P>& b) {
    return mul_ni(a, b);
}
template <class P>
CUZK_HD Fp<P> csqr(const Fp<P>& a) {
    return mul_ni(a, a);
}

typedef Fp<FrParams> fr_t;
typedef Fp<FqParams> fq_t;

// ---- Fq2 = Fq[i] / (i^2 + 1) -------------------------------------------------------------

struct fq2_t {
    static constexpr int WORDS = 2 * fq_t::N;
    fq_t c0, c1;

    static CUZK_HD fq2_t zero() { return {fq_t::zero(), fq_t::zero()}; }
    static CUZK_HD fq2_t one() { return {fq_t::one(), fq_t::zero()}; }
    CUZK_HD bool is_zero() const { return c0.is_zero() && c1.is_zero(); }
    CUZK_HD bool operator==(const fq2_t& o) const { return c0 == o.c0 && c1 == o.c1; }
    CUZK_HD bool operator!=(const fq2_t& o) const { return !(*this == o); }
};

CUZK_HD fq2_t operator+(const fq2_t& a, const fq2_t& b) { return {a.c0 + b.c0, a.c1 + b.c1}; }
CUZK_HD fq2_t operator-(const fq2_t& a, const fq2_t& b) { return {a.c0 - b.c0, a.c1 - b.c1}; }
CUZK_HD fq2_t operator-(const fq2_t& a) { return {-a.c0, -a.c1}; }
CUZK_HD fq2_t dbl(const fq2_t& a) { return {dbl(a.c0), dbl(a.c1)}; }

// Karatsuba: 3 Fq products.
CUZK_HD fq2_t operator*(const fq2_t& a, const fq2_t& b) {
    fq_t t0 = a.c0 * b.c0;
    fq_t t1 = a.c1 * b.c1;
    fq_t t2 = (a.c0 + a.c1) * (b.c0 + b.c1);
    return {t0 - t1, t2 - t0 - t1};
}

// (a0 + a1 i)^2 = (a0 + a1)(a0 - a1) + 2 a0 a1 i: 2 Fq products.
CUZK_HD fq2_t sqr(const fq2_t& a) {
    fq_t t = a.c0 * a.c1;
    return {(a.c0 + a.c1) * (a.c0 - a.c1), dbl(t)};
}

CUZK_HD fq2_t cmul(const fq2_t& a, const fq2_t& b) {
    fq_t t0 = cmul(a.c0, b.c0);
    fq_t t1 = cmul(a.c1, b.c1);
    fq_t t2 = cmul(a.c0 + a.c1, b.c0 + b.c1);
    return {t0 - t1, t2 - t0 - t1};
}
CUZK_HD fq2_t csqr(const fq2_t& a) {
    fq_t t = cmul(a.c0, a.c1);
    return {cmul(a.c0 + a.c1, a.c0 - a.c1), dbl(t)};
}

// 1 / (a0 + a1 i) = (a0 - a1 i) / (a0^2 + a1^2).
CUZK_HD fq2_t inverse(const fq2_t& a) {
    fq_t norm = sqr(a.c0) + sqr(a.c1);
    fq_t inv = inverse(norm);
    return {a.c0 * inv, -(a.c1 * inv)};
}

}  // namespace cuzk
