// G1 point kernels (coordinates in Fq).
#define CUZK_F cuzk::fq_t
#define CUZK_NAME(x) x##_g1
#include "curve_kernels.cuh"
