"""DeviceArray assignment converts values as NumPy's does: the same errors for Python numbers
out of a dtype's range and NaN or inf to integers (never a silent wrap), the same values
otherwise; for every destination dtype, scalar and array values of every source dtype, and
element, slice and scattered (index array) keys. And a device allocation needs no host memory."""

import warnings

import numpy as np
import pytest
from conftest import run_python

import numba_vulkan as nv

pytestmark = [pytest.mark.device, pytest.mark.usefixtures("device")]

DTYPES = [np.bool_, np.int8, np.uint8, np.int16, np.int32, np.uint32, np.int64, np.uint64,
          np.float32, np.float64]  # fmt: skip
PYTHON_VALUES = [0, 1, -1, 127, 128, 255, 256, -129, 2**31 - 1, 2**31, -2**31, 2**32, 2**40,
                 2**63 - 1, 2**63, -2**63, 2**64, 0.5, -0.5, 1e10, 3.4e39, float("nan"),
                 float("inf"), float("-inf"), True, False]  # fmt: skip
KEYS = [(1,), slice(None), [0, 2]]


def _outcome(target, key, value):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)  # NumPy's cast warnings, on both sides
        try:
            target[key] = value
        except (OverflowError, ValueError, TypeError) as e:
            return type(e).__name__
    host = target.copy_to_host() if isinstance(target, nv.DeviceArray) else target
    return host.tobytes()


@pytest.mark.parametrize("dtype", DTYPES, ids=lambda d: np.dtype(d).name)
def test_python_numbers_as_numpy(dtype):
    d = nv.to_device(np.zeros(4, dtype))
    for key in KEYS:
        for value in PYTHON_VALUES:
            h = np.zeros(4, dtype)
            d[...] = h
            want = _outcome(h, key, value)
            got = _outcome(d, key, value)
            assert got == want, (np.dtype(dtype).name, key, value, got, want)


@pytest.mark.parametrize("dtype", DTYPES, ids=lambda d: np.dtype(d).name)
def test_numpy_values_of_every_dtype_as_numpy(dtype):
    d = nv.to_device(np.zeros(4, dtype))
    for src in DTYPES:
        with np.errstate(all="ignore"):
            values = np.array([1, -1, 300, 2.5e9], dtype=np.float64).astype(src)
        for key, value in (((1,), values[3]), (slice(None), values), ([0, 2], values[:2])):
            h = np.zeros(4, dtype)
            d[...] = h
            want = _outcome(h, key, value)
            got = _outcome(d, key, value)
            assert got == want, (np.dtype(dtype).name, np.dtype(src).name, key, got, want)


def test_a_device_allocation_reserves_no_host_memory_of_its_size():
    """Under an address-space limit that leaves room for a 1 GiB device array and the
    driver's threads, but not for a host array of the same size beside it (the strides once
    came from np.empty(shape)). One malloc arena: each thread's would reserve 64 MiB more."""
    code = (
        "import resource, numpy as np, numba_vulkan as nv\n"
        "nv.get_device()\n"
        "vm = [int(l.split()[1]) * 1024 for l in open('/proc/self/status') if l.startswith('VmSize')][0]\n"
        "limit = vm + (1700 << 20)\n"
        "resource.setrlimit(resource.RLIMIT_AS, (limit, limit))\n"
        "d = nv.device_array(1 << 30, np.uint8)\n"
        "d[-1] = 7\n"
        "print('OK', d.nbytes >> 20, int(d[-1]))\n"
    )
    r = run_python(code, timeout=120, MALLOC_ARENA_MAX="1")
    assert r.returncode == 0 and "OK 1024 7" in r.stdout, r.stdout + r.stderr[-2000:]


def test_masked_arrays_are_refused_on_every_launch_path():
    """numba.njit refuses numpy.ma arrays; a kernel must not take their data and drop the mask
    (neither on the first launch nor on the fast path after it)."""

    @nv.jit
    def double(x, out):
        i = nv.global_id(0)
        if i < x.size:
            out[i] = x[i] * 2

    x, out = np.arange(8.0), np.zeros(8)
    double.forall(8)(x, out)
    double.forall(8)(x, out)  # a launcher that takes NumPy arrays directly exists now
    masked = np.ma.masked_array(x, mask=[0, 1] * 4)
    for _ in range(2):
        with pytest.raises(TypeError, match="masked array"):
            double.forall(8)(masked, out)


def test_synchronize_report_false_defers_the_report():
    @nv.jit
    def fails(out):
        if nv.global_id(0) == 0:
            raise ValueError("from the kernel")
        out[0] = 1

    d = nv.device_array(1, np.int32)
    fails.forall(1)(d)
    nv.synchronize(report=False)  # waits, reports nothing
    with pytest.raises(ValueError, match="from the kernel"):
        nv.synchronize()


def test_local_arrays_past_the_limit_are_refused_at_compile_time():
    """1 MiB of local array per invocation: a clear error in well under a second, not a
    driver compiling for minutes or running the host out of memory."""
    import time

    from numba_vulkan.frontend.local_arrays import MAX_LOCAL_BYTES

    @nv.jit
    def big(idx, out):
        a = nv.local.array(1 << 18, np.float32)
        a[idx[0]] = 1
        out[0] = a[idx[0]]

    @nv.jit
    def two_halves(idx, out):  # the limit counts all of a kernel's local arrays
        a = nv.local.array(MAX_LOCAL_BYTES // 8 + 1, np.float32)
        c = nv.local.array(MAX_LOCAL_BYTES // 8, np.float64)
        a[idx[0]] = 1
        c[idx[0]] = 2
        out[0] = a[idx[0]] + c[idx[0]]

    start = time.perf_counter()
    for kernel in (big, two_halves):
        with pytest.raises(nv.VulkanUnsupportedError, match="bytes per invocation"):
            kernel.forall(1)(np.array([3], np.int32), np.zeros(1, np.float32))
    assert time.perf_counter() - start < 10

    @nv.jit
    def fits(idx, out):
        a = nv.local.array(256, np.float32)
        for j in range(256):
            a[j] = j
        out[0] = a[idx[0]]

    out = np.zeros(1, np.float32)
    fits.forall(1)(np.array([7], np.int32), out)
    assert out[0] == 7


def test_allocations_past_an_address_space_limit_raise_and_the_pool_gives_back():
    """Under an address-space limit: allocations that cannot fit raise a Python exception
    (no std::bad_alloc or abort out of the C++ core), the pool returns freed blocks to make
    room for a new one (trim and retry), and kernels still run afterwards."""
    code = (
        "import resource, numpy as np, numba_vulkan as nv\n"
        "@nv.jit\n"
        "def fill(out):\n"
        "    out[0] = 5\n"
        "fill.forall(1)(nv.device_array(1, np.int64))\n"
        "vm = [int(l.split()[1]) * 1024 for l in open('/proc/self/status') if l.startswith('VmSize')][0]\n"
        "limit = vm + (1200 << 20)\n"
        "resource.setrlimit(resource.RLIMIT_AS, (limit, limit))\n"
        "for make in (lambda: nv.device_array(4 << 30, np.uint8),\n"
        "             lambda: nv.pinned_array(4 << 30, np.uint8),\n"
        "             lambda: nv.device_array((1 << 62,), np.uint8)):\n"
        "    try:\n"
        "        make()\n"
        "        print('ALLOCATED')\n"
        "    except (MemoryError, nv.errors.VulkanError, nv.errors.VulkanSupportError, ValueError) as e:\n"
        "        print('RAISED', type(e).__name__)\n"
        "a = nv.device_array(600 << 20, np.uint8)\n"
        "a[-1] = 1\n"
        "del a\n"  # back to the pool, still mapped
        "b = nv.device_array(900 << 20, np.uint8)\n"  # fits only once the pool gives a back
        "b[-1] = 2\n"
        "out = nv.device_array(1, np.int64)\n"
        "fill.forall(1)(out)\n"
        "print('OK', int(b[-1]), int(out[0]))\n"
    )
    r = run_python(code, timeout=120, MALLOC_ARENA_MAX="1")
    assert r.returncode == 0, r.stdout + r.stderr[-2000:]
    assert r.stdout.count("RAISED") == 3 and "OK 2 5" in r.stdout, r.stdout + r.stderr[-2000:]


def test_arrays_held_by_reference_cycles_are_collected_before_out_of_memory():
    """An allocation that finds the device out of memory runs Python's collector and tries
    again: an array that only a reference cycle still holds (never collected here: the
    collector is off) gives its memory back. Under an address-space limit, as above."""
    code = (
        "import gc, resource, numpy as np, numba_vulkan as nv\n"
        "gc.disable()\n"
        "nv.device_array(1, np.int64)\n"
        "vm = [int(l.split()[1]) * 1024 for l in open('/proc/self/status') if l.startswith('VmSize')][0]\n"
        "limit = vm + (1200 << 20)\n"
        "resource.setrlimit(resource.RLIMIT_AS, (limit, limit))\n"
        "class Holder:\n"
        "    pass\n"
        "h = Holder()\n"
        "h.me, h.array = h, nv.device_array(600 << 20, np.uint8)\n"
        "h.array[-1] = 1\n"
        "del h\n"  # garbage, held by its cycle
        "b = nv.device_array(900 << 20, np.uint8)\n"  # fits once the cycle is collected
        "b[-1] = 2\n"
        "print('OK', int(b[-1]))\n"
    )
    r = run_python(code, timeout=120, MALLOC_ARENA_MAX="1")
    assert r.returncode == 0 and "OK 2" in r.stdout, r.stdout + r.stderr[-2000:]


def test_a_copy_of_2_gib_or_more_is_whole():
    """One copy region of 2^31 bytes or more crashed lavapipe (Mesa 22.3) or copied nothing:
    a 2 GiB device array's copy came out all zeros (found through Dask, which copies the
    arrays it is given). Copies are cut into 1 GiB regions (vk/copy_regions.h)."""
    n = (1 << 31) + 64
    x = nv.device_array(n, np.uint8)  # untouched pages: no host memory on mapped devices
    marks = {0: 1, (1 << 30) + 3: 2, (1 << 31) - 1: 3, n - 1: 4}
    for k, v in marks.items():
        x[k] = v
    y = x.copy()
    assert {k: int(y[k]) for k in marks} == marks
    assert int(y[(1 << 31) - 2]) == 0
