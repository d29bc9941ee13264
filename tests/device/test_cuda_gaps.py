"""numba.cuda features other people's programs use, through ``from numba_vulkan import cuda``
with nothing else changed: launch_bounds, kernel.configure, Stream.add_callback and
async_done, managed arrays, vectorize signatures without a return type, a guvectorize
signature the inputs cast to, libdevice's fast float32 functions."""

import asyncio
import math
import threading

import numpy as np
import pytest

from numba_vulkan import cuda

pytestmark = [pytest.mark.device, pytest.mark.usefixtures("device")]


@cuda.jit(launch_bounds=(256, 2))  # a vendor tutorial's dgemm-style hint
def _axpy(r, a, x, y):
    i = cuda.grid(1)
    if i < r.size:
        r[i] = a * x[i] + y[i]


def _operands(n=1000):
    x = np.arange(n, dtype=np.float32)
    return x, np.ones(n, np.float32)


def test_launch_bounds_and_configure():
    x, y = _operands()
    r = cuda.device_array_like(x)
    _axpy.configure((x.size + 255) // 256, 256)(r, np.float32(2), cuda.to_device(x),
                                                cuda.to_device(y))  # fmt: skip
    np.testing.assert_array_equal(r.copy_to_host(), 2 * x + y)


def test_stream_add_callback_runs_after_the_work():
    x, y = _operands()
    r = cuda.device_array_like(x)
    s = cuda.stream()
    seen, done = [], threading.Event()

    def callback(stream, status, arg):
        seen.append((stream is s, status, arg, r.copy_to_host()[-1]))
        done.set()

    _axpy[4, 256, s](r, np.float32(3), cuda.to_device(x), cuda.to_device(y))
    s.add_callback(callback, "arg")
    assert done.wait(30)
    assert seen == [(True, None, "arg", 3 * x[-1] + 1)]


def test_stream_async_done():
    x, y = _operands()
    r = cuda.device_array_like(x)
    s = cuda.stream()

    async def main():
        _axpy[4, 256, s](r, np.float32(4), cuda.to_device(x), cuda.to_device(y))
        await s.async_done()
        return r.copy_to_host()

    np.testing.assert_array_equal(asyncio.run(main()), 4 * x + y)


def test_managed_array_as_copy_at_launch():
    x, y = _operands()
    m = cuda.managed_array(x.size, np.float32)
    m[:] = 0
    _axpy[4, 256](m, np.float32(5), x, y)
    cuda.synchronize()
    np.testing.assert_array_equal(m, 5 * x + y)


def test_vectorize_signature_without_return_type():
    @cuda.vectorize(["(int16, int16)"])
    def add(a, b):
        return a + b

    a = np.arange(6, dtype=np.int16)
    got = add(a, a)
    want = a.astype(np.int64) + a  # the type numba.njit infers for int16 + int16
    assert got.dtype == want.dtype
    np.testing.assert_array_equal(got, want)


def test_guvectorize_picks_a_signature_the_inputs_cast_to():
    @cuda.guvectorize(["void(float32[:], float32[:])"], "(n)->(n)")
    def double(x, out):
        for i in range(x.shape[0]):
            out[i] = x[i] * 2

    np.testing.assert_array_equal(np.asarray(double(np.arange(4.0))), np.arange(4.0) * 2)


@pytest.mark.parametrize("name", ["sin", "cos", "tan", "exp", "log"])
def test_libdevice_fast_functions(name):
    from numba_vulkan.cuda import libdevice

    fast = getattr(libdevice, f"fast_{name}f")

    @cuda.jit
    def k(x):
        i = cuda.grid(1)
        if i < x.size:
            x[i] = fast(x[i])

    x = np.linspace(0.1, 3.0, 64).astype(np.float32)
    got = x.copy()
    k[1, 64](got)
    want = np.array([getattr(math, name)(float(v)) for v in x])
    np.testing.assert_allclose(got, want, rtol=2e-6, atol=2e-6)
