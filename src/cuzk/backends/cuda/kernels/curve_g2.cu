// G2 point kernels (coordinates in Fq2).
#define CUZK_F cuzk::fq2_t
#define CUZK_NAME(x) x##_g2
#include "curve_kernels.cuh"
