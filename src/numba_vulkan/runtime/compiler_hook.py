"""The kernel compiler, as the runtime's own kernels use it (driver probes, device-side
reductions, the driver self-test's kernel). numba_vulkan.dispatcher registers its ``jit`` here when it is imported
(``import numba_vulkan`` does): the runtime does not import the compiler, which
builds on the runtime.
"""

_jit = None
_selftest_kernel = None


def set_jit(jit):
    """Register the kernel compiler's decorator (numba_vulkan.dispatcher.jit)."""
    global _jit
    _jit = jit


def jit(*args, **options):
    """The registered compiler's ``jit`` (same arguments: a function and/or options)."""
    if _jit is None:
        raise RuntimeError(
            "numba_vulkan's kernel compiler is not loaded: `import numba_vulkan` first"
        )
    return _jit(*args, **options)


def available():
    return _jit is not None


def set_selftest_kernel(build):
    """Register the builder of the driver self-test's kernel (numba_vulkan.selftest_kernel)."""
    global _selftest_kernel
    _selftest_kernel = build


def selftest_kernel(device, with_64):
    """The registered builder's kernel for `device` (see numba_vulkan.selftest_kernel.build)."""
    if _selftest_kernel is None:
        raise RuntimeError("numba_vulkan's kernel compiler is not loaded: `import numba_vulkan` first")
    return _selftest_kernel(device, with_64)
