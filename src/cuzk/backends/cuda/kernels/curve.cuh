// Short Weierstrass points (a = 0) over Fq (G1) and Fq2 (G2): affine and XYZZ coordinates.
//
// XYZZ (x = X / ZZ, y = Y / ZZZ, ZZ^3 = ZZZ^2) makes the mixed addition of bucket accumulation
// 8M + 2S; ZZ = 0 encodes infinity, so a zeroed buffer is a buffer of identities. Affine
// infinity is all zeros, as on the host. The formulas are the EFD's madd-2008-s, add-2008-s,
// dbl-2008-s-1 and mdbl-2008-s-1, with the exceptional cases (equal and opposite points)
// handled, as in the CPU backend's _jit_curves.py.
#pragma once
#include "field.cuh"

namespace cuzk {

template <class F>
struct Affine {
    F x, y;
    CUZK_HD bool is_inf() const { return x.is_zero() && y.is_zero(); }
};

template <class F>
struct Xyzz {
    F X, Y, ZZ, ZZZ;
    static CUZK_HD Xyzz inf() { return {F::zero(), F::zero(), F::zero(), F::zero()}; }
    static CUZK_HD Xyzz from_affine(const Affine<F>& p) {
        if (p.is_inf()) return inf();
        return {p.x, p.y, F::one(), F::one()};
    }
    CUZK_HD bool is_inf() const { return ZZ.is_zero(); }
};

// 2P for an affine P (not infinity).
template <class F>
CUZK_HD_NOINLINE Xyzz<F> xyzz_mdbl(const F& x, const F& y) {
    F U = dbl(y);
    F V = csqr(U);
    F W = cmul(U, V);
    F S = cmul(x, V);
    F X2 = csqr(x);
    F M = dbl(X2) + X2;
    F X3 = csqr(M) - dbl(S);
    F Y3 = cmul(M, S - X3) - cmul(W, y);
    return {X3, Y3, V, W};
}

template <class F>
CUZK_HD_NOINLINE Xyzz<F> xyzz_dbl(const Xyzz<F>& p) {
    if (p.is_inf()) return p;
    F U = dbl(p.Y);
    F V = csqr(U);
    F W = cmul(U, V);
    F S = cmul(p.X, V);
    F X2 = csqr(p.X);
    F M = dbl(X2) + X2;
    F X3 = csqr(M) - dbl(S);
    F Y3 = cmul(M, S - X3) - cmul(W, p.Y);
    return {X3, Y3, cmul(V, p.ZZ), cmul(W, p.ZZZ)};
}

// p + (x2, y2) for an affine point that is not infinity.
template <class F>
CUZK_HD Xyzz<F> xyzz_madd(const Xyzz<F>& p, const F& x2, const F& y2) {
    if (p.is_inf()) return {x2, y2, F::one(), F::one()};
    F U2 = x2 * p.ZZ;
    F S2 = y2 * p.ZZZ;
    F P = U2 - p.X;
    F R = S2 - p.Y;
    if (P.is_zero()) {
        if (R.is_zero()) return xyzz_mdbl(x2, y2);
        return Xyzz<F>::inf();
    }
    F PP = sqr(P);
    F PPP = P * PP;
    F Q = p.X * PP;
    F X3 = sqr(R) - PPP - dbl(Q);
    F Y3 = R * (Q - X3) - p.Y * PPP;
    return {X3, Y3, p.ZZ * PP, p.ZZZ * PPP};
}

template <class F>
CUZK_HD_NOINLINE Xyzz<F> xyzz_add(const Xyzz<F>& p, const Xyzz<F>& q) {
    if (p.is_inf()) return q;
    if (q.is_inf()) return p;
    F U1 = cmul(p.X, q.ZZ);
    F U2 = cmul(q.X, p.ZZ);
    F S1 = cmul(p.Y, q.ZZZ);
    F S2 = cmul(q.Y, p.ZZZ);
    F P = U2 - U1;
    F R = S2 - S1;
    if (P.is_zero()) {
        if (R.is_zero()) return xyzz_dbl(p);
        return Xyzz<F>::inf();
    }
    F PP = csqr(P);
    F PPP = cmul(P, PP);
    F Q = cmul(U1, PP);
    F X3 = csqr(R) - PPP - dbl(Q);
    F Y3 = cmul(R, Q - X3) - cmul(S1, PPP);
    return {X3, Y3, cmul(cmul(p.ZZ, q.ZZ), PP), cmul(cmul(p.ZZZ, q.ZZZ), PPP)};
}

// The same addition inlined with full-speed products, for the per-bucket passes (merge and
// window segments) whose cost grows with the bucket count.
template <class F>
CUZK_HD Xyzz<F> xyzz_add_hot(const Xyzz<F>& p, const Xyzz<F>& q) {
    if (p.is_inf()) return q;
    if (q.is_inf()) return p;
    F U1 = p.X * q.ZZ;
    F U2 = q.X * p.ZZ;
    F S1 = p.Y * q.ZZZ;
    F S2 = q.Y * p.ZZZ;
    F P = U2 - U1;
    F R = S2 - S1;
    if (P.is_zero()) {
        if (R.is_zero()) return xyzz_dbl(p);
        return Xyzz<F>::inf();
    }
    F PP = sqr(P);
    F PPP = P * PP;
    F Q = U1 * PP;
    F X3 = sqr(R) - PPP - dbl(Q);
    F Y3 = R * (Q - X3) - S1 * PPP;
    return {X3, Y3, p.ZZ * q.ZZ * PP, p.ZZZ * q.ZZZ * PPP};
}

// G2's per-bucket passes are a small part of its MSM; keeping its addition out of line halves
// the G2 module's compile time (the exact-match overload wins over the template).
CUZK_HD Xyzz<fq2_t> xyzz_add_hot(const Xyzz<fq2_t>& p, const Xyzz<fq2_t>& q) { return xyzz_add(p, q); }

// Out-of-line mixed addition for the kernels off the MSM's hot path (fixed-base, 0/1 sums).
template <class F>
CUZK_HD_NOINLINE Xyzz<F> xyzz_madd_ni(const Xyzz<F>& p, const F& x2, const F& y2) {
    return xyzz_madd(p, x2, y2);
}

// k * p for a small unsigned k (double-and-add from the top bit).
template <class F>
CUZK_HD Xyzz<F> xyzz_mul_small(const Xyzz<F>& p, uint32_t k) {
    Xyzz<F> r = Xyzz<F>::inf();
    for (int b = 31; b >= 0; b--) {
        r = xyzz_dbl(r);
        if ((k >> b) & 1u) r = xyzz_add(r, p);
    }
    return r;
}

}  // namespace cuzk
