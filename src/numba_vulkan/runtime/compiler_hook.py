"""What the compiler's floors lend the runtime below them: the kernel compiler, as the
runtime's own kernels use it (driver probes, device-side reductions, copies, gathers), the
driver self-test's kernel, and the kernels built on the compiler that device arrays' NumPy
methods run (``__array_ufunc__``, ``astype``, ``@``).

The runtime does not import the compiler, which builds on the runtime: each provider
registers itself here when imported — numba_vulkan.dispatcher (``jit``),
numba_vulkan.selftest_kernel, numba_vulkan.ufunc (ufuncs and casts), numba_vulkan.linalg
(``np.matmul``) — and
``import numba_vulkan`` imports all of them. Without them (only numba_vulkan.runtime
loaded), the calls below raise RuntimeError.
"""

_jit = None
_selftest_kernel = None
_sqrt_probe_kernel = None
_array_ufunc = None
_cast = None
_matmul = None

_NOT_LOADED = "numba_vulkan's kernel compiler is not loaded: `import numba_vulkan` first"


def set_jit(jit):
    """Register the kernel compiler's decorator (numba_vulkan.dispatcher.jit)."""
    global _jit
    _jit = jit


def jit(*args, **options):
    """The registered compiler's ``jit`` (same arguments: a function and/or options)."""
    if _jit is None:
        raise RuntimeError(_NOT_LOADED)
    return _jit(*args, **options)


def available():
    return _jit is not None


def set_selftest_kernel(build, build_sqrt_probe):
    """Register the builders of the driver self-test's kernels (numba_vulkan.selftest_kernel:
    the primitives' probe and runtime/sqrt_probe.py's)."""
    global _selftest_kernel, _sqrt_probe_kernel
    _selftest_kernel, _sqrt_probe_kernel = build, build_sqrt_probe


def selftest_kernel(device, with_64):
    """The registered builder's kernel for `device` (see numba_vulkan.selftest_kernel.build)."""
    if _selftest_kernel is None:
        raise RuntimeError(_NOT_LOADED)
    return _selftest_kernel(device, with_64)


def sqrt_probe_kernel(device, per):
    """runtime/sqrt_probe.py's kernel for `device`, or None where its Fma may round twice
    (selftest_kernel.build_sqrt_probe)."""
    if _sqrt_probe_kernel is None:
        raise RuntimeError(_NOT_LOADED)
    return _sqrt_probe_kernel(device, per)


def set_array_kernels(array_ufunc, cast):
    """Register NumPy's ufuncs on device arrays and the element conversion on the device
    (numba_vulkan.ufunc: numpy_ufuncs.array_ufunc, elementwise.cast_on_device)."""
    global _array_ufunc, _cast
    _array_ufunc, _cast = array_ufunc, cast


def array_ufunc(ufunc, method, inputs, kwargs):
    """``DeviceArray.__array_ufunc__``: NumPy's `ufunc` run on the device."""
    if _array_ufunc is None:
        raise RuntimeError(_NOT_LOADED)
    return _array_ufunc(ufunc, method, inputs, kwargs)


def cast_on_device(array, dtype):
    """A new device array holding `array`'s elements converted to `dtype` (NumPy's astype)."""
    if _cast is None:
        raise RuntimeError(_NOT_LOADED)
    return _cast(array, dtype)


def set_matmul(matmul):
    """Register ``np.matmul`` on device arrays (numba_vulkan.linalg: products.array_ufunc)."""
    global _matmul
    _matmul = matmul


def matmul(method, inputs, kwargs):
    """``DeviceArray.__array_ufunc__`` for ``np.matmul``: the product on the device."""
    if _matmul is None:
        raise RuntimeError(_NOT_LOADED)
    return _matmul(method, inputs, kwargs)
