"""numba_vulkan: Numba kernels compiled to SPIR-V, run on any Vulkan device."""

__version__ = "0.1.0"
