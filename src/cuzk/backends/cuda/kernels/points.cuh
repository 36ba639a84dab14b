// Point import / export between zcash's uncompressed encoding (bellperson's .params files) and
// the device's Montgomery rows, plus the prime-order subgroup test: the set-up kernels that let a
// 44 GiB parameter file go from disk to residency without a per-point step on the host.
//
// Encoding: per coordinate 48 bytes big-endian; G2 coordinates in zcash order (c1, c0). The top
// three bits of byte 0 are the flags (compression 0x80, infinity 0x40, sort 0x20). Status codes
// (one byte per point; the host names the lowest bad index): 0 ok, 1 bad flags, 2 infinity,
// 3 a coordinate not below p, 4 not on the curve, 5 not in the prime-order subgroup.
// The subgroup tests are Scott's (as the host's _jit_curves.in_subgroup): G1 sigma(P) ==
// [-z^2] P with sigma(x, y) = (beta x, y); G2 psi(P) == [z] P; |z| = 0xd201000000010000, z < 0.
#pragma once
#include "launch.cuh"
#include "mem.cuh"

namespace cuzk {

enum : uint8_t { PT_OK = 0, PT_FLAGS = 1, PT_INFINITY = 2, PT_NONCANONICAL = 3, PT_OFF_CURVE = 4,
                 PT_SUBGROUP = 5 };

// 2^768 mod p: a canonical value times this, Montgomery-multiplied, is its Montgomery form.
CUZK_HD fq_t fq_r2() {
    constexpr uint32_t W[12] = {0x1c341746u, 0xf4df1f34u, 0x09d104f1u, 0x0a76e6a6u, 0x4c95b6d5u, 0x8de5476cu,
                                0x939d83c0u, 0x67eb88a9u, 0xb519952du, 0x9a793e85u, 0x92cae3aau, 0x11988fe5u};
    fq_t r;
    for (int i = 0; i < 12; i++) r.v[i] = W[i];
    return r;
}

CUZK_HD fq_t fq_words(const uint32_t* w) {
    fq_t r;
    for (int i = 0; i < 12; i++) r.v[i] = w[i];
    return r;
}

// 4 in Montgomery form: b of G1; G2's b is 4 (1 + i).
CUZK_HD fq_t fq_four() {
    constexpr uint32_t W[12] = {0x000cfff3u, 0xaa270000u, 0xfc34000au, 0x53cc0032u, 0x6b0a807fu, 0x478fe97au,
                                0xe6ba24d7u, 0xb1d37ebeu, 0xbf78ab2fu, 0x8ec9733bu, 0x3d83de7eu, 0x09d64551u};
    return fq_words(W);
}

CUZK_HD fq_t curve_b(const fq_t*) { return fq_four(); }
CUZK_HD fq2_t curve_b(const fq2_t*) { return {fq_four(), fq_four()}; }

// Coordinates (Fq elements) per affine point, and the zcash position of our coordinate k.
CUZK_HD constexpr int coords_of(const fq_t*) { return 2; }
CUZK_HD constexpr int coords_of(const fq2_t*) { return 4; }
CUZK_HD constexpr int zcash_slot(const fq_t*, int k) { return k; }
CUZK_HD constexpr int zcash_slot(const fq2_t*, int k) { return k ^ 1; }  // (c0, c1) <-> (c1, c0)

// t < p as a 12-word little-endian value.
CUZK_HD bool fq_below_p(const uint32_t* t) {
    for (int i = 11; i >= 0; i--) {
        uint32_t p = FqParams::p(i);
        if (t[i] != p) return t[i] < p;
    }
    return false;
}

// Point i of `raw` (rows of 48 * coords bytes) -> Montgomery row i of `out` (infinity: zeros).
template <class F>
CUZK_HD void import_point(uint64_t i, const uint8_t* raw, uint32_t* out, uint8_t* status) {
    constexpr int NC = coords_of((F*)nullptr);
    const uint8_t* row = raw + i * (uint64_t)(48 * NC);
    uint32_t* dst = out + i * (uint64_t)(NC * 12);
    const uint8_t flags = row[0] & 0xe0;
    uint32_t any = row[0] & 0x1f;
    for (int j = 1; j < 48 * NC; j++) any |= row[j];
    uint8_t code = PT_OK;
    if ((flags & 0x80) || (flags & 0x20)) code = PT_FLAGS;  // compressed, or a sort flag uncompressed
    else if (flags & 0x40) code = any ? PT_FLAGS : PT_INFINITY;
    else if (!any) code = PT_OFF_CURVE;  // (0, 0) without the infinity flag is not a point
    for (int k = 0; k < NC && code == PT_OK; k++) {
        const uint8_t* c = row + 48 * zcash_slot((F*)nullptr, k);
        uint32_t w[12];
        for (int q = 0; q < 12; q++) {
            const uint8_t* b = c + 44 - 4 * q;
            w[q] = ((uint32_t)(b[0] & (q == 11 && c == row ? 0x1f : 0xff)) << 24) | ((uint32_t)b[1] << 16) |
                   ((uint32_t)b[2] << 8) | (uint32_t)b[3];
        }
        if (!fq_below_p(w)) {
            code = PT_NONCANONICAL;
            break;
        }
        store(dst + 12 * k, fq_words(w) * fq_r2());
    }
    if (code == PT_OK) {
        Affine<F> p = load_affine<F>(out, i);
        F lhs = p.y * p.y;
        F rhs = p.x * p.x * p.x + curve_b((F*)nullptr);
        if (lhs != rhs) code = PT_OFF_CURVE;
    }
    if (code != PT_OK) {
        for (int j = 0; j < NC * 12; j++) dst[j] = 0;
    }
    status[i] = code;
}

// Montgomery row i -> its zcash uncompressed encoding (infinity: the flag and zeros).
template <class F>
CUZK_HD void export_point(uint64_t i, const uint32_t* rows, uint8_t* raw) {
    constexpr int NC = coords_of((F*)nullptr);
    const uint32_t* src = rows + i * (uint64_t)(NC * 12);
    uint8_t* row = raw + i * (uint64_t)(48 * NC);
    uint32_t any = 0;
    for (int j = 0; j < NC * 12; j++) any |= src[j];
    for (int k = 0; k < NC; k++) {
        fq_t v = from_mont(load(src + 12 * k, (fq_t*)nullptr));
        uint8_t* c = row + 48 * zcash_slot((F*)nullptr, k);
        for (int q = 0; q < 12; q++) {
            uint8_t* b = c + 44 - 4 * q;
            b[0] = (uint8_t)(v.v[q] >> 24);
            b[1] = (uint8_t)(v.v[q] >> 16);
            b[2] = (uint8_t)(v.v[q] >> 8);
            b[3] = (uint8_t)v.v[q];
        }
    }
    if (!any) row[0] = 0x40;
}

constexpr uint64_t Z_ABS = 0xd201000000010000ull;

// [|z|] P for an affine P (not infinity): double-and-add from the top bit (63).
template <class F>
CUZK_HD Xyzz<F> mul_z_abs(const F& x, const F& y) {
    Xyzz<F> r = Xyzz<F>::from_affine({x, y});
    for (int b = 62; b >= 0; b--) {
        r = xyzz_dbl(r);
        if ((Z_ABS >> b) & 1) r = xyzz_madd_ni(r, x, y);
    }
    return r;
}

template <class F>
CUZK_HD Xyzz<F> mul_z_abs(const Xyzz<F>& p) {
    Xyzz<F> r = p;
    for (int b = 62; b >= 0; b--) {
        r = xyzz_dbl(r);
        if ((Z_ABS >> b) & 1) r = xyzz_add(r, p);
    }
    return r;
}

// XYZZ q equals affine (x, y) (not infinity).
template <class F>
CUZK_HD bool xyzz_eq_affine(const Xyzz<F>& q, const F& x, const F& y) {
    if (q.is_inf()) return false;
    return cmul(x, q.ZZ) == q.X && cmul(y, q.ZZZ) == q.Y;
}

CUZK_HD bool in_subgroup(const fq_t& x, const fq_t& y) {
    constexpr uint32_t BETA[12] = {0x798a64e8u, 0x30f1361bu, 0x7ece5a2au, 0xf3b8ddabu, 0xc61577f7u, 0x16a8ca3au,
                                   0x74fd029bu, 0xc26a2ff8u, 0x60701c6eu, 0x3636b766u, 0x241b6160u, 0x051ba4abu};
    Xyzz<fq_t> q = mul_z_abs(mul_z_abs(x, y));  // [z^2] P
    return xyzz_eq_affine(q, cmul(x, fq_words(BETA)), -y);  // sigma(P) == -[z^2] P
}

CUZK_HD bool in_subgroup(const fq2_t& x, const fq2_t& y) {
    constexpr uint32_t PX1[12] = {0x867545c3u, 0x890dc9e4u, 0x3285a5d5u, 0x2af32253u, 0x309b7e2cu, 0x50880866u,
                                  0x7e881024u, 0xa20d1b8cu, 0xe2db9068u, 0x14e4f04fu, 0x1564853au, 0x14e56d3fu};
    constexpr uint32_t PY0[12] = {0xa55c9ad1u, 0x3e2f585du, 0x86c18183u, 0x4294213du, 0x8b623732u, 0x382844c8u,
                                  0x19103e18u, 0x92ad2afdu, 0xac7cf0b9u, 0x1d794e4fu, 0x7d825ec8u, 0x0bd592fcu};
    constexpr uint32_t PY1[12] = {0x5aa30fdau, 0x7bcfa7a2u, 0x2a927e7cu, 0xdc17dec1u, 0x6b4ebef1u, 0x2f088dd8u,
                                  0xda74d4a7u, 0xd1ca2087u, 0x96cebc1du, 0x2da25966u, 0xbbfd87d2u, 0x0e2b7eedu};
    const fq2_t psi_x = {fq_t::zero(), fq_words(PX1)};
    const fq2_t psi_y = {fq_words(PY0), fq_words(PY1)};
    const fq2_t cx = {x.c0, -x.c1}, cy = {y.c0, -y.c1};
    Xyzz<fq2_t> q = mul_z_abs(x, y);  // [|z|] P = -[z] P
    return xyzz_eq_affine(q, cmul(cx, psi_x), -cmul(cy, psi_y));  // psi(P) == [z] P
}

// Status 0 rows (valid and on the curve) that fail the subgroup test become PT_SUBGROUP.
template <class F>
CUZK_HD void check_subgroup(uint64_t i, const uint32_t* rows, uint8_t* status) {
    if (status[i] != PT_OK) return;
    Affine<F> p = load_affine<F>(rows, i);
    if (p.is_inf()) return;
    if (!in_subgroup(p.x, p.y)) status[i] = PT_SUBGROUP;
}

}  // namespace cuzk

CUZK_KERNEL(CUZK_NAME(import_points))(uint64_t n, const uint8_t* raw, uint32_t* out, uint8_t* status) {
    CUZK_FOR_TID(n) cuzk::import_point<CUZK_F>(tid, raw, out, status);
}

CUZK_KERNEL(CUZK_NAME(export_points))(uint64_t n, const uint32_t* rows, uint8_t* raw) {
    CUZK_FOR_TID(n) cuzk::export_point<CUZK_F>(tid, rows, raw);
}

CUZK_KERNEL(CUZK_NAME(subgroup_check))(uint64_t n, const uint32_t* rows, uint8_t* status) {
    CUZK_FOR_TID(n) cuzk::check_subgroup<CUZK_F>(tid, rows, status);
}
