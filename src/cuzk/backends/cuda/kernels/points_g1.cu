// G1 set-up kernels: import / export of zcash encodings and the subgroup test (points.cuh).
#define CUZK_F cuzk::fq_t
#define CUZK_NAME(x) x##_g1
#include "points.cuh"
