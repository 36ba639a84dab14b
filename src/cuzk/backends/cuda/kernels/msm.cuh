// Pippenger MSM steps, one function per thread of each kernel (the .cu files only launch them).
//
// Per chunk of points:
//   digits:     scalar i -> canonical form; signed c-bit digits; count[w B + |d| - 1] += 1
//   (host)      offsets = exclusive prefix sum of the counts (CuPy / CUB)
//   scatter:    (bucket g, point i, sign) entries land bucket-contiguous at offsets[g]
//   accumulate: thread t sums entries [t L, t L + L) per bucket in XYZZ, writing one partial
//               per (thread, bucket) at slot g + t; the slot is unique because the entries
//               are sorted by g, so a later thread never sees a smaller bucket
//   merge:      bucket g adds its partials (slots g + t for the threads t that touched it)
// After all chunks, per window: running sums over segments of M buckets (R_s, T_s), then
// V_s = R_s + s M T_s, then plain sums of V_s: the window sums sum_b (b + 1) S_b. The host
// combines the few window sums with doublings (Horner).
// Digits follow the CPU backend: W = floor(255 / c) + 1 windows, d in [-(2^(c-1)-1), 2^(c-1)],
// the top window keeps the carry; buckets B = 2^(c-1), bucket index |d| - 1.
// Precomputed bases (`copies` > 1): the table holds copy j = 2^(j c) P of every base at rows
// [j stride, (j + 1) stride); window w = s copies + j adds copy j into bucket set s, so the
// W windows share ceil(W / copies) bucket sets, and the host combines set sums with c copies
// doublings each. copies = 1 is the plain MSM (one set per window).
// GLV (`halves` = 2, G1 only): the digits step splits each scalar k = k1 + LAMBDA k2 (both
// below 2^128, cuzk.algebra.glv) and keeps [k1 | k2] in canon's words 0..3 | 4..7; `windows`
// is then per half, and half h's window w adds row ((h copies + w % copies) stride + i) of a
// table whose copies [copies, 2 copies) are phi of copies [0, copies) (phi(P) = LAMBDA P),
// into the same set w / copies as k1's window w: the sets (and the buckets) halve.
#pragma once
#include "mem.cuh"

namespace cuzk {

// Signed digit of window w of the nwords-word value v, given the running carry (updated).
CUZK_HD int32_t signed_digit(const uint32_t* v, int nwords, int c, int w, int windows, uint32_t& carry) {
    const int bit = w * c;
    const int word = bit >> 5;
    const int off = bit & 31;
    uint64_t lo = word < nwords ? v[word] : 0u;
    uint64_t hi = word + 1 < nwords ? v[word + 1] : 0u;
    uint32_t u = (uint32_t)(((hi << 32) | lo) >> off) & ((1u << c) - 1);
    int32_t d = (int32_t)(u + carry);
    const int32_t half = 1 << (c - 1);
    if (d > half && w < windows - 1) {
        d -= 1 << c;
        carry = 1;
    } else {
        carry = 0;
    }
    return d;
}

// The GLV split of a canonical k < r: k1 = k % LAMBDA in words 0..3, k2 = k / LAMBDA in words
// 4..7. Barrett: q = floor(k MU / 2^256) (MU = floor(2^256 / LAMBDA), 129 bits) is at most 2
// below k / LAMBDA (tests/algebra/test_glv.py), so at most two corrections follow.
CUZK_HD fr_t glv_split(const fr_t& k) {
    const uint32_t lam[4] = {0xffffffffu, 0x00000000u, 0x0001a402u, 0xac45a401u};
    const uint32_t mu[5] = {0xf6cfee30u, 0x63f6e522u, 0xe01faaddu, 0x7c6becf1u, 0x1u};
    uint32_t prod[13];
    for (int i = 0; i < 13; i++) prod[i] = 0;
    for (int i = 0; i < 8; i++) {
        uint64_t carry = 0;
        for (int j = 0; j < 5; j++) {
            uint64_t t = (uint64_t)k.v[i] * mu[j] + prod[i + j] + carry;
            prod[i + j] = (uint32_t)t;
            carry = t >> 32;
        }
        prod[i + 5] = (uint32_t)carry;
    }
    uint32_t q[4] = {prod[8], prod[9], prod[10], prod[11]};  // prod[12] = 0: q <= LAMBDA + 1 < 2^128
    // rem = k - q LAMBDA (the low 6 words suffice: rem < 3 LAMBDA < 2^130)
    uint32_t ql[6] = {0, 0, 0, 0, 0, 0};
    for (int i = 0; i < 4; i++) {
        uint64_t carry = 0;
        for (int j = 0; j < 4 && i + j < 6; j++) {
            uint64_t t = (uint64_t)q[i] * lam[j] + ql[i + j] + carry;
            ql[i + j] = (uint32_t)t;
            carry = t >> 32;
        }
        if (i + 4 < 6) ql[i + 4] = (uint32_t)carry;
    }
    uint32_t rem[6];
    uint64_t borrow = 0;
    for (int i = 0; i < 6; i++) {
        uint64_t t = (uint64_t)k.v[i] - ql[i] - borrow;
        rem[i] = (uint32_t)t;
        borrow = (t >> 32) & 1u;
    }
    for (int round = 0; round < 2; round++) {
        bool ge = true;  // rem >= LAMBDA (whose words 4, 5 are zero)
        if ((rem[5] | rem[4]) == 0) {
            for (int i = 3; i >= 0; i--) {
                if (rem[i] != lam[i]) {
                    ge = rem[i] > lam[i];
                    break;
                }
            }
        }
        if (!ge) break;
        borrow = 0;
        for (int i = 0; i < 6; i++) {
            uint64_t t = (uint64_t)rem[i] - (i < 4 ? lam[i] : 0u) - borrow;
            rem[i] = (uint32_t)t;
            borrow = (t >> 32) & 1u;
        }
        uint64_t carry = 1;
        for (int i = 0; i < 4; i++) {
            uint64_t t = (uint64_t)q[i] + carry;
            q[i] = (uint32_t)t;
            carry = t >> 32;
        }
    }
    fr_t out;
    for (int i = 0; i < 4; i++) out.v[i] = rem[i], out.v[4 + i] = q[i];
    return out;
}

// Canonicalize scalar i (GLV: split it) and count its nonzero digits per bucket.
CUZK_HD void msm_digits(uint64_t i, const uint32_t* scalars, uint32_t* canon, uint32_t* counts, int c,
                        int windows, int copies, int halves) {
    fr_t s = from_mont(load_elem<fr_t>(scalars, i));
    if (halves == 2) s = glv_split(s);
    store_elem<fr_t>(canon, i, s);
    const uint32_t B = 1u << (c - 1);
    const int nwords = 8 / halves;
    for (int h = 0; h < halves; h++) {
        uint32_t carry = 0, set = 0;
        for (int w = 0, j = 0; w < windows; w++) {
            int32_t d = signed_digit(s.v + h * nwords, nwords, c, w, windows, carry);
            if (d != 0) atomic_inc(&counts[set * B + (uint32_t)(d < 0 ? -d : d) - 1]);
            if (++j == copies) j = 0, set++;  // set = w / copies without a division
        }
    }
}

// Class of Montgomery scalar i for the split MSM: 0 (zero: no work), 1 (one, R mod r: a plain
// sum of its base), 2 (any other value: the tail Pippenger). A PoRep witness is mostly bits.
CUZK_HD uint8_t scalar_class(uint64_t i, const uint32_t* scalars) {
    const fr_t s = load_elem<fr_t>(scalars, i);
    return s.is_zero() ? 0 : (s == fr_t::one() ? 1 : 2);
}

// An entry: bucket g in the low word, (point index << 1 | sign) in the high word, written with
// one 8-byte store (two 4-byte stores into two arrays touched two random sectors per entry).
CUZK_HD uint64_t msm_entry(uint32_t g, uint32_t val) { return ((uint64_t)val << 32) | g; }

// Place scalar i's (bucket, point) entries; cursor starts as a copy of the offsets. The point
// is the row of half h's window w's base copy, (h copies + w % copies) stride + p (the host
// keeps it below 2^31), where p = i, or map[i] for the tail of a split MSM (scalar i of the
// gathered full scalars belongs to base map[i]: the bases are read in place, not gathered).
CUZK_HD void msm_scatter(uint64_t i, const uint32_t* canon, uint32_t* cursor, uint64_t* entries, int c,
                         int windows, int copies, int halves, uint32_t stride, const uint32_t* map) {
    fr_t s = load_elem<fr_t>(canon, i);
    const uint32_t B = 1u << (c - 1);
    const int nwords = 8 / halves;
    const uint32_t p = map ? map[i] : (uint32_t)i;
    for (int h = 0; h < halves; h++) {
        const uint32_t first = (uint32_t)h * (uint32_t)copies * stride + p;
        uint32_t carry = 0, set = 0, row = first;
        for (int w = 0, j = 0; w < windows; w++) {
            int32_t d = signed_digit(s.v + h * nwords, nwords, c, w, windows, carry);
            if (d != 0) {
                uint32_t g = set * B + (uint32_t)(d < 0 ? -d : d) - 1;
                uint32_t pos = atomic_inc(&cursor[g]);
                entries[pos] = msm_entry(g, (row << 1) | (d < 0 ? 1u : 0u));
            }
            if (++j == copies) {  // next set, copy 0; else the next copy's row
                j = 0, set++, row = first;
            } else {
                row += stride;
            }
        }
    }
}

template <class F>
CUZK_HD Affine<F> signed_point(const uint32_t* bases, uint64_t idx, bool neg) {
    Affine<F> p = load_affine<F>(bases, idx);
    if (neg) p.y = -p.y;  // -0 = 0 keeps infinity all zeros
    return p;
}

// Thread t: XYZZ sums of entries [t L, min(t L + L, total)) per bucket, into slots g + t.
template <class F>
CUZK_HD void msm_accumulate(uint64_t t, uint32_t L, const uint32_t* total_ptr, const uint64_t* entries,
                            const uint32_t* bases, uint32_t* partials) {
    const uint64_t total = *total_ptr;
    const uint64_t k0 = t * L;
    if (k0 >= total) return;
    const uint64_t k1 = k0 + L < total ? k0 + L : total;
    uint32_t g = (uint32_t)entries[k0];
    Xyzz<F> acc = Xyzz<F>::inf();
    for (uint64_t k = k0; k < k1; k++) {
        const uint64_t entry = entries[k];
        const uint32_t gk = (uint32_t)entry;
        if (gk != g) {
            store_xyzz<F>(partials, (uint64_t)g + t, acc);
            acc = Xyzz<F>::inf();
            g = gk;
        }
        const uint32_t e = (uint32_t)(entry >> 32);
        Affine<F> p = signed_point<F>(bases, e >> 1, e & 1u);
        if (!p.is_inf()) acc = xyzz_madd(acc, p.x, p.y);
    }
    store_xyzz<F>(partials, (uint64_t)g + t, acc);
}

// Bucket g: buckets[g] += its partials from this chunk. Buckets of more than skip_above
// entries are left to the host's tree sums (msm.py), so no thread runs a long serial chain.
template <class F>
CUZK_HD void msm_merge(uint64_t g, uint32_t L, uint32_t skip_above, const uint32_t* offsets,
                       const uint32_t* partials, uint32_t* buckets) {
    const uint32_t lo = offsets[g], hi = offsets[g + 1];
    if (lo == hi || hi - lo > skip_above) return;
    Xyzz<F> s = load_xyzz<F>(buckets, g);
    for (uint64_t t = lo / L; t <= (hi - 1) / L; t++) s = xyzz_add_hot(s, load_xyzz<F>(partials, g + t));
    store_xyzz<F>(buckets, g, s);
}

// out[j] = sum of in[lo[j] .. hi[j]) (batched tree sums over the big buckets' partial runs).
template <class F>
CUZK_HD void sum_spans(uint64_t j, const uint64_t* lo, const uint64_t* hi, const uint32_t* in, uint32_t* out) {
    Xyzz<F> acc = Xyzz<F>::inf();
    for (uint64_t k = lo[j]; k < hi[j]; k++) acc = xyzz_add(acc, load_xyzz<F>(in, k));
    store_xyzz<F>(out, j, acc);
}

// buckets[idx[j]] += src[j] (the tree-summed big buckets).
template <class F>
CUZK_HD void add_into(uint64_t j, const uint32_t* idx, const uint32_t* src, uint32_t* buckets) {
    const uint64_t g = idx[j];
    store_xyzz<F>(buckets, g, xyzz_add(load_xyzz<F>(buckets, g), load_xyzz<F>(src, j)));
}

// Segment s of window w (ws = w P + s): R = sum_j (j + 1) S_(s M + j), T = sum_j S_(s M + j).
template <class F>
CUZK_HD void msm_segment(uint64_t ws, uint32_t B, uint32_t M, const uint32_t* buckets, uint32_t* R,
                         uint32_t* T) {
    const uint32_t P = B / M;
    const uint64_t w = ws / P, s = ws % P;
    Xyzz<F> running = Xyzz<F>::inf(), acc = Xyzz<F>::inf();
    for (int64_t j = (int64_t)M - 1; j >= 0; j--) {
        running = xyzz_add_hot(running, load_xyzz<F>(buckets, w * B + s * M + (uint64_t)j));
        acc = xyzz_add_hot(acc, running);
    }
    store_xyzz<F>(R, ws, acc);
    store_xyzz<F>(T, ws, running);
}

// V_s = R_s + (s M) T_s, in place over R.
template <class F>
CUZK_HD void msm_weight(uint64_t ws, uint32_t P, uint32_t M, uint32_t* R, const uint32_t* T) {
    const uint32_t s = (uint32_t)(ws % P);
    Xyzz<F> v = load_xyzz<F>(R, ws);
    if (s != 0) v = xyzz_add(v, xyzz_mul_small(load_xyzz<F>(T, ws), s * M));
    store_xyzz<F>(R, ws, v);
}

// out[j] = sum of in[j G .. j G + G) within groups of `count` points (group = j / per_out).
template <class F>
CUZK_HD void sum_groups(uint64_t j, uint32_t count, uint32_t G, const uint32_t* in, uint32_t* out) {
    const uint32_t per_out = (count + G - 1) / G;
    const uint64_t grp = j / per_out, part = j % per_out;
    const uint64_t lo = part * G;
    const uint64_t hi = lo + G < count ? lo + G : count;
    Xyzz<F> acc = Xyzz<F>::inf();
    for (uint64_t k = lo; k < hi; k++) acc = xyzz_add(acc, load_xyzz<F>(in, grp * count + k));
    store_xyzz<F>(out, j, acc);
}

// Thread t: sum of bases[idx[k]] for k in [t L, min(t L + L, count)) (the 0/1-scalar MSM).
template <class F>
CUZK_HD void sum_indexed(uint64_t t, uint32_t L, uint64_t count, const int64_t* idx, const uint32_t* bases,
                         uint32_t* out) {
    const uint64_t k0 = t * L;
    const uint64_t k1 = k0 + L < count ? k0 + L : count;
    Xyzz<F> acc = Xyzz<F>::inf();
    for (uint64_t k = k0; k < k1; k++) {
        Affine<F> p = load_affine<F>(bases, (uint64_t)idx[k]);
        if (!p.is_inf()) acc = xyzz_madd_ni(acc, p.x, p.y);
    }
    store_xyzz<F>(out, t, acc);
}

// out[i] = 2^k in[i] (k >= 1) in XYZZ: the next copy of the precomputed MSM bases.
template <class F>
CUZK_HD void shift_point(uint64_t i, int k, const uint32_t* in, uint32_t* out) {
    Affine<F> p = load_affine<F>(in, i);
    Xyzz<F> r = Xyzz<F>::inf();
    if (!p.is_inf()) {  // the subgroup has no point of order 2, so y != 0
        r = xyzz_mdbl(p.x, p.y);
        for (int j = 1; j < k; j++) r = xyzz_dbl(r);
    }
    store_xyzz<F>(out, i, r);
}

// out[i] = phi(in[i]) = (beta x, y) (G1's endomorphism; beta in Montgomery form; infinity,
// all zeros, stays all zeros).
template <class F>
CUZK_HD void endo_point(uint64_t i, const uint32_t* beta, const uint32_t* in, uint32_t* out) {
    Affine<F> p = load_affine<F>(in, i);
    p.x = cmul(p.x, load_elem<F>(beta, 0));
    store_affine<F>(out, i, p);
}

// ---- fixed-base multiplication (parameter generation) --------------------------------------

// Table entry e = w (2^c - 1) + d - 1 holds d * wbase[w], d in 1..2^c - 1 (XYZZ).
template <class F>
CUZK_HD void fb_table(uint64_t e, int c, const uint32_t* wbases, uint32_t* table) {
    const uint32_t per = (1u << c) - 1;
    const uint64_t w = e / per;
    const uint32_t d = (uint32_t)(e % per) + 1;
    Xyzz<F> b = Xyzz<F>::from_affine(load_affine<F>(wbases, w));
    store_xyzz<F>(table, e, xyzz_mul_small(b, d));
}

// Scalar i: sum over windows of table[w][digit_w] (unsigned c-bit digits), XYZZ result.
template <class F>
CUZK_HD void fb_mul(uint64_t i, const uint32_t* scalars, int c, int windows, const uint32_t* table,
                    uint32_t* out) {
    fr_t s = from_mont(load_elem<fr_t>(scalars, i));
    const uint32_t per = (1u << c) - 1;
    Xyzz<F> acc = Xyzz<F>::inf();
    for (int w = 0; w < windows; w++) {
        const int bit = w * c;
        const int word = bit >> 5, off = bit & 31;
        uint64_t lo = word < 8 ? s.v[word] : 0u;
        uint64_t hi = word + 1 < 8 ? s.v[word + 1] : 0u;
        uint32_t d = (uint32_t)(((hi << 32) | lo) >> off) & per;
        if (d != 0) {
            Affine<F> p = load_affine<F>(table, (uint64_t)w * per + d - 1);
            if (!p.is_inf()) acc = xyzz_madd_ni(acc, p.x, p.y);
        }
    }
    store_xyzz<F>(out, i, acc);
}

// Thread t: points [t K, min(t K + K, n)) from XYZZ to affine with one inversion
// (Montgomery's trick on ZZ * ZZZ; x = X ZZZ / (ZZ ZZZ), y = Y ZZ / (ZZ ZZZ)). The prefix
// products are parked in the output's x coordinates.
template <class F>
CUZK_HD void xyzz_to_affine(uint64_t t, uint32_t K, uint64_t n, const uint32_t* in, uint32_t* out) {
    const uint64_t k0 = t * K;
    if (k0 >= n) return;
    const uint64_t k1 = k0 + K < n ? k0 + K : n;
    F acc = F::one();
    for (uint64_t k = k0; k < k1; k++) {
        Xyzz<F> p = load_xyzz<F>(in, k);
        store_affine<F>(out, k, {acc, F::zero()});
        if (!p.is_inf()) acc = cmul(acc, cmul(p.ZZ, p.ZZZ));
    }
    F inv = inverse(acc);
    for (uint64_t k = k1; k-- > k0;) {
        Xyzz<F> p = load_xyzz<F>(in, k);
        if (p.is_inf()) {
            store_affine<F>(out, k, {F::zero(), F::zero()});
            continue;
        }
        F prefix = load_affine<F>(out, k).x;
        F d = cmul(p.ZZ, p.ZZZ);
        F dinv = cmul(inv, prefix);
        inv = cmul(inv, d);
        store_affine<F>(out, k, {cmul(cmul(p.X, p.ZZZ), dinv), cmul(cmul(p.Y, p.ZZ), dinv)});
    }
}

}  // namespace cuzk
