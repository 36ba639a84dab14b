// 32-bit carry-chain primitives: inline PTX on the device, a carry-flag emulation on the host.
//
// The host branch exists only so that the field and curve code above it can be compiled as
// plain C++ and checked against Python integers without a GPU (tests/backends/test_cuda_host.py);
// kernels never run it. On the device, PTX's condition-code register carries between the
// separate asm statements: nothing else in the generated code touches CC, so chains such as
// add_cc / addc / addc survive, which is the common practice of GPU big-integer libraries.
#pragma once

#if defined(__CUDACC_RTC__)
// NVRTC has no <stdint.h>; use the compiler's own type macros where it has them, so that a
// builtin typedef of the same name (if any) is the same type and does not conflict.
#if defined(__UINT64_TYPE__) && defined(__INT64_TYPE__)
typedef __UINT8_TYPE__ uint8_t;
typedef __UINT32_TYPE__ uint32_t;
typedef __UINT64_TYPE__ uint64_t;
typedef __INT32_TYPE__ int32_t;
typedef __INT64_TYPE__ int64_t;
#else
typedef unsigned char uint8_t;
typedef unsigned int uint32_t;
typedef unsigned long long uint64_t;
typedef int int32_t;
typedef long long int64_t;
#endif
#else
#include <stdint.h>
#endif

#if !defined(__CUDACC__)
#define __host__
#define __device__
#define __forceinline__ inline
#define __noinline__ __attribute__((noinline))
#define __global__
#endif

#define CUZK_HD __host__ __device__ __forceinline__
// Cold or large point formulas: one out-of-line copy per kernel keeps compile time and code size sane.
#define CUZK_HD_NOINLINE __host__ __device__ __noinline__

namespace cuzk {

#if defined(__CUDA_ARCH__)

__device__ __forceinline__ uint32_t add_cc(uint32_t a, uint32_t b) {
    uint32_t r;
    asm volatile("add.cc.u32 %0, %1, %2;" : "=r"(r) : "r"(a), "r"(b));
    return r;
}
__device__ __forceinline__ uint32_t addc_cc(uint32_t a, uint32_t b) {
    uint32_t r;
    asm volatile("addc.cc.u32 %0, %1, %2;" : "=r"(r) : "r"(a), "r"(b));
    return r;
}
__device__ __forceinline__ uint32_t addc(uint32_t a, uint32_t b) {
    uint32_t r;
    asm volatile("addc.u32 %0, %1, %2;" : "=r"(r) : "r"(a), "r"(b));
    return r;
}
__device__ __forceinline__ uint32_t sub_cc(uint32_t a, uint32_t b) {
    uint32_t r;
    asm volatile("sub.cc.u32 %0, %1, %2;" : "=r"(r) : "r"(a), "r"(b));
    return r;
}
__device__ __forceinline__ uint32_t subc_cc(uint32_t a, uint32_t b) {
    uint32_t r;
    asm volatile("subc.cc.u32 %0, %1, %2;" : "=r"(r) : "r"(a), "r"(b));
    return r;
}
__device__ __forceinline__ uint32_t subc(uint32_t a, uint32_t b) {
    uint32_t r;
    asm volatile("subc.u32 %0, %1, %2;" : "=r"(r) : "r"(a), "r"(b));
    return r;
}
__device__ __forceinline__ uint32_t mad_lo_cc(uint32_t a, uint32_t b, uint32_t c) {
    uint32_t r;
    asm volatile("mad.lo.cc.u32 %0, %1, %2, %3;" : "=r"(r) : "r"(a), "r"(b), "r"(c));
    return r;
}
__device__ __forceinline__ uint32_t madc_lo_cc(uint32_t a, uint32_t b, uint32_t c) {
    uint32_t r;
    asm volatile("madc.lo.cc.u32 %0, %1, %2, %3;" : "=r"(r) : "r"(a), "r"(b), "r"(c));
    return r;
}
__device__ __forceinline__ uint32_t mad_hi_cc(uint32_t a, uint32_t b, uint32_t c) {
    uint32_t r;
    asm volatile("mad.hi.cc.u32 %0, %1, %2, %3;" : "=r"(r) : "r"(a), "r"(b), "r"(c));
    return r;
}
__device__ __forceinline__ uint32_t madc_hi_cc(uint32_t a, uint32_t b, uint32_t c) {
    uint32_t r;
    asm volatile("madc.hi.cc.u32 %0, %1, %2, %3;" : "=r"(r) : "r"(a), "r"(b), "r"(c));
    return r;
}
__device__ __forceinline__ uint32_t madc_hi(uint32_t a, uint32_t b, uint32_t c) {
    uint32_t r;
    asm volatile("madc.hi.u32 %0, %1, %2, %3;" : "=r"(r) : "r"(a), "r"(b), "r"(c));
    return r;
}
// As PTX instructions, not C (a * b, __umulhi): with the C forms ptxas gave the Fr product of
// the rate kernel 1216 SASS instructions per 4 products, with these 1096 (nvcc 13.0, sm_90)
__device__ __forceinline__ uint32_t mul_lo(uint32_t a, uint32_t b) {
    uint32_t r;
    asm("mul.lo.u32 %0, %1, %2;" : "=r"(r) : "r"(a), "r"(b));
    return r;
}
__device__ __forceinline__ uint32_t mul_hi(uint32_t a, uint32_t b) {
    uint32_t r;
    asm("mul.hi.u32 %0, %1, %2;" : "=r"(r) : "r"(a), "r"(b));
    return r;
}

#else  // host emulation (tests only)

static uint32_t host_cc = 0;

inline uint32_t add_cc(uint32_t a, uint32_t b) {
    uint64_t s = (uint64_t)a + b;
    host_cc = (uint32_t)(s >> 32);
    return (uint32_t)s;
}
inline uint32_t addc_cc(uint32_t a, uint32_t b) {
    uint64_t s = (uint64_t)a + b + host_cc;
    host_cc = (uint32_t)(s >> 32);
    return (uint32_t)s;
}
inline uint32_t addc(uint32_t a, uint32_t b) { return (uint32_t)((uint64_t)a + b + host_cc); }
inline uint32_t sub_cc(uint32_t a, uint32_t b) {
    uint64_t d = (uint64_t)a - b;
    host_cc = (uint32_t)(d >> 63);
    return (uint32_t)d;
}
inline uint32_t subc_cc(uint32_t a, uint32_t b) {
    uint64_t d = (uint64_t)a - b - host_cc;
    host_cc = (uint32_t)(d >> 63);
    return (uint32_t)d;
}
inline uint32_t subc(uint32_t a, uint32_t b) { return (uint32_t)((uint64_t)a - b - host_cc); }
inline uint32_t mad_lo_cc(uint32_t a, uint32_t b, uint32_t c) {
    return add_cc((uint32_t)((uint64_t)a * b), c);
}
inline uint32_t madc_lo_cc(uint32_t a, uint32_t b, uint32_t c) {
    return addc_cc((uint32_t)((uint64_t)a * b), c);
}
inline uint32_t mad_hi_cc(uint32_t a, uint32_t b, uint32_t c) {
    return add_cc((uint32_t)(((uint64_t)a * b) >> 32), c);
}
inline uint32_t madc_hi_cc(uint32_t a, uint32_t b, uint32_t c) {
    return addc_cc((uint32_t)(((uint64_t)a * b) >> 32), c);
}
inline uint32_t madc_hi(uint32_t a, uint32_t b, uint32_t c) {
    return addc((uint32_t)(((uint64_t)a * b) >> 32), c);
}
inline uint32_t mul_lo(uint32_t a, uint32_t b) { return (uint32_t)((uint64_t)a * b); }
inline uint32_t mul_hi(uint32_t a, uint32_t b) { return (uint32_t)(((uint64_t)a * b) >> 32); }

#endif

// Atomic increment returning the old value (a plain increment in the sequential host emulation).
CUZK_HD uint32_t atomic_inc(uint32_t* p) {
#if defined(__CUDA_ARCH__)
    return atomicAdd(p, 1u);
#else
    return (*p)++;
#endif
}

}  // namespace cuzk
