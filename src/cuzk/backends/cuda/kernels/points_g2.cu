// G2 set-up kernels: import / export of zcash encodings and the subgroup test (points.cuh).
#define CUZK_F cuzk::fq2_t
#define CUZK_NAME(x) x##_g2
#include "points.cuh"
