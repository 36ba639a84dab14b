"""The CUDA backend: kernels in kernels/*.cu compiled at first use (CuPy/NVRTC), same layout and
semantics as the CPU backend. Importing this package does not import CuPy."""

from cuzk.backends.cuda.backend import CudaBackend, CudaBases

__all__ = ["CudaBackend", "CudaBases"]
