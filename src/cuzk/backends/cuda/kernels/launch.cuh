// Kernel entry points that also build as host functions for the sequential emulator.
//
// On the device CUZK_KERNEL is an extern "C" __global__ function and CUZK_FOR_TID(n) runs its
// body for the one thread index it owns (if below n). Built as host C++ (the test emulator,
// cuzk.backends.cuda._emulator) the same entry point is a plain function whose body runs for
// every index in turn: each kernel here is a parallel-for without barriers, so the sequential
// order computes the same result (atomics become plain increments).
#pragma once
#include "ptx.cuh"

#if defined(__CUDACC__)
#define CUZK_KERNEL(name) extern "C" __global__ void name
#define CUZK_FOR_TID(n)                                                        \
    for (uint64_t tid = blockIdx.x * (uint64_t)blockDim.x + threadIdx.x; tid < (uint64_t)(n); \
         tid = (uint64_t)(n))
#else
#define CUZK_KERNEL(name) extern "C" void name
#define CUZK_FOR_TID(n) for (uint64_t tid = 0; tid < (uint64_t)(n); tid++)
#endif
