"""The corpus benchmark: public numba.cuda kernels on numba_vulkan.cuda and numba.cuda."""
