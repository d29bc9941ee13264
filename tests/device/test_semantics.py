"""Numba's semantics by default (issue 5): every case here once gave a silently wrong answer.

Each kernel runs on the device and under ``numba.njit`` on the CPU with the same
arguments; integer results must agree bit for bit. The narrowing modes
(``narrow="ints"/"floats"/True``) must convert data, never reinterpret it, and
refuse with OverflowError a value that a 32-bit integer cannot hold.
"""

import inspect
import textwrap

import numba
import numpy as np
import pytest

import numba_vulkan as nv

pytestmark = [pytest.mark.device, pytest.mark.usefixtures("device")]


def both(pyfunc, *args, **options):
    """Run ``pyfunc`` as a kernel over the first array's size and, invocation by invocation,
    under numba.njit on the CPU; returns (device results, CPU results), the arrays of each."""
    n = args[0].size
    dev_args = [a.copy() if isinstance(a, np.ndarray) else a for a in args]
    nv.jit(pyfunc, **options).forall(n)(*dev_args)
    cpu_args = [a.copy() if isinstance(a, np.ndarray) else a for a in args]
    step = numba.njit(error_model="numpy")(_ids_as_argument(pyfunc))
    for i in range(n):
        step(i, *cpu_args)
    arrays = lambda xs: [a for a in xs if isinstance(a, np.ndarray)]  # noqa: E731
    return arrays(dev_args), arrays(cpu_args)


def _ids_as_argument(kernel_func):
    """The kernel's source recompiled as a CPU function whose first argument replaces
    ``nv.global_id(0)``."""
    src = textwrap.dedent(inspect.getsource(kernel_func)).replace("nv.global_id(0)", "__i")
    name = kernel_func.__name__
    src = src.replace(f"def {name}(", f"def {name}(__i, ", 1)
    namespace = dict(kernel_func.__globals__)
    exec(compile(src, f"<cpu {name}>", "exec"), namespace)
    return namespace[name]


def assert_same(dev, cpu):
    for d, c in zip(dev, cpu):
        assert d.dtype == c.dtype
        np.testing.assert_array_equal(d.view(f"u{d.itemsize}") if d.dtype.kind == "f" else d,
                                      c.view(f"u{c.itemsize}") if c.dtype.kind == "f" else c)


# ---------------------------------------------------------------- the cases that were wrong


def copy_kernel(src, dst):
    i = nv.global_id(0)
    if i < dst.size:
        dst[i] = src[i]


def test_int64_data_stays_int64():
    src = np.array([2**40, 2**33 + 5, -(2**62), 2**63 - 1, -(2**63)], np.int64)
    dst = np.zeros_like(src)
    nv.jit(copy_kernel).forall(src.size)(src, dst)
    np.testing.assert_array_equal(dst, src)


def store_scalar(out, value):
    i = nv.global_id(0)
    if i < out.size:
        out[i] = value


@pytest.mark.parametrize(
    "value, dtype",
    [(3_000_000_000, np.float64), (1 << 40, np.int64), (2**63 + 7, np.uint64), (-5, np.int64),
     (2**53 + 1, np.int64), (-(2**63), np.int64)],
)  # fmt: skip
def test_python_int_scalars_arrive_intact(value, dtype):
    dev, cpu = both(store_scalar, np.zeros(3, dtype), value)
    assert_same(dev, cpu)
    assert dev[0][0] == np.array(value).astype(dtype)


def uint32_floordiv(a, out):
    i = nv.global_id(0)
    if i < out.size:
        out[i] = a[i] // 3


def test_uint32_stays_unsigned():
    a = np.array([2**31, 2**32 - 1, 2**31 + 7, 5, 0], np.uint32)
    dev, cpu = both(uint32_floordiv, a, np.zeros(5, np.int64))
    assert_same(dev, cpu)
    assert dev[1][1] == (2**32 - 1) // 3


def int64_cube(a, out):
    i = nv.global_id(0)
    if i < out.size:
        out[i] = a[i] ** 3


def test_int64_power_wraps_as_numba():
    a = np.array([2**21 + 1, 2**30, -(2**25), 3, -7], np.int64)
    dev, cpu = both(int64_cube, a, np.zeros(5, np.int64))
    assert_same(dev, cpu)


def xorshift32(seeds, out):
    i = nv.global_id(0)
    if i < out.size:
        h = seeds[i]
        for _ in range(8):
            h ^= h << np.uint32(13)
            h ^= h >> np.uint32(17)
            h ^= h << np.uint32(5)
        out[i] = h


def test_uint32_xorshift_matches_numba():
    seeds = np.random.default_rng(5).integers(1, 2**32, 257, dtype=np.uint64).astype(np.uint32)
    dev, cpu = both(xorshift32, seeds, np.zeros(257, np.uint32))
    assert_same(dev, cpu)


def mixed_widths(a8, b16, c32, d64, out):
    i = nv.global_id(0)
    if i < out.size:
        x = a8[i] * b16[i] + c32[i]          # int64 in Numba
        y = np.uint32(c32[i]) + np.uint32(7)  # uint64
        out[i] = x - np.int64(y) + d64[i] // np.int64(-3) + (d64[i] % 1000) * a8[i]


def test_mixed_widths_follow_numba_promotion():
    rng = np.random.default_rng(1)
    n = 200
    args = (
        rng.integers(-128, 128, n).astype(np.int8),
        rng.integers(-(2**15), 2**15, n).astype(np.int16),
        rng.integers(-(2**31), 2**31, n).astype(np.int32),
        rng.integers(-(2**62), 2**62, n).astype(np.int64),
        np.zeros(n, np.int64),
    )
    dev, cpu = both(mixed_widths, *args)
    assert_same(dev, cpu)


# ---------------------------------------------------------------- scalar arguments


def add_scalar(out, s):
    i = nv.global_id(0)
    if i < out.size:
        out[i] = out[i] + s


SCALARS = [np.int8(-100), np.uint8(250), np.int16(-30000), np.uint16(65000), np.int32(-7),
           np.uint32(4_000_000_000), np.int64(-(2**40)), np.uint64(2**63 + 1), np.float32(1.5),
           np.float64(-2.25), np.bool_(True), True, 7, 2**40, -(2**62), 2.5]  # fmt: skip


@pytest.mark.parametrize("scalar", SCALARS, ids=lambda s: f"{type(s).__name__}({s})")
def test_every_scalar_type_is_accepted(scalar):
    out = np.full(4, 3, np.float64)
    dev, cpu = both(add_scalar, out, scalar)
    assert_same(dev, cpu)


def test_float16_scalar():
    # numba.njit cannot take float16 arguments on the CPU: NumPy is the reference.
    out = np.full(4, 3, np.float64)
    nv.jit(add_scalar).forall(4)(out, np.float16(0.5))
    np.testing.assert_array_equal(out, 3.5)


def test_a_new_scalar_type_gets_its_own_specialisation():
    kernel = nv.jit(store_scalar)
    out = np.zeros(2, np.int64)
    kernel.forall(2)(out, np.int32(5))
    kernel.forall(2)(out, np.int64(2**40))
    assert out[0] == 2**40
    kernel.forall(2)(out, np.int32(-3))
    assert out[0] == -3
    kernel.forall(2)(out, 2**40 + 1)  # a Python int: int64
    assert out[0] == 2**40 + 1
    kernel.forall(2)(out, np.uint32(7))
    kernel.forall(2)(out, -5)
    assert out[0] == -5
    kernel.forall(2)(out, True)
    assert out[0] == 1


def test_fast_path_never_truncates_device_arrays():
    kernel = nv.jit(store_scalar)
    d = nv.device_array(2, np.int64)
    kernel.forall(2)(d, np.int32(5))
    for value in (2**40, np.int64(-(2**41)), np.uint64(2**63), np.int8(-1)):
        kernel.forall(2)(d, value)
        assert d.copy_to_host()[0] == np.array(value).astype(np.int64)


# ---------------------------------------------------------------- explicit narrowing


def scale(a, out):
    i = nv.global_id(0)
    if i < out.size:
        out[i] = a[i] * 2


@pytest.mark.parametrize("narrow", [True, "floats"])
def test_narrowed_floats_convert_float64_data(narrow):
    a = np.array([0.1, 1.5, -2.0, 3.0])
    out = np.zeros_like(a)
    nv.jit(scale, narrow=narrow).forall(4)(a, out)
    expected = (a.astype(np.float32) * np.float32(2)).astype(np.float64)
    np.testing.assert_array_equal(out, expected)


def test_narrowed_ints_refuse_values_that_do_not_fit():
    kernel = nv.jit(store_scalar, narrow="ints")
    out = np.zeros(2, np.int64)
    kernel.forall(2)(out, 2**31 - 1)
    assert out[0] == 2**31 - 1
    with pytest.raises(OverflowError, match="argument 1"):
        kernel.forall(2)(out, 2**40)
    d = nv.to_device(out)
    with pytest.raises(OverflowError, match="argument 1"):
        kernel.forall(2)(d, np.int64(-(2**31) - 1))
    with pytest.raises(OverflowError, match="argument 0"):
        nv.jit(scale, narrow="ints").forall(2)(np.array([1, 2**35]), np.zeros(2, np.int64))


def test_default_mode_is_numbas():
    dev = nv.get_device()
    mode = dev.mode
    assert not mode.ints and mode.prove
    assert mode.floats == (not dev.info.float64)


def test_float64_narrowed_by_default_warns_once():
    from numba import float64

    from numba_vulkan import narrowing

    # As on a device without float64: the default narrows with a VulkanPrecisionWarning.
    no_f64 = narrowing.Mode(floats=True, float64_storage=False)
    kernel = nv.jit(scale)
    argtypes = (float64[::1], float64[::1])
    with pytest.warns(nv.VulkanPrecisionWarning, match="'scale' computes its float64"):
        kernel.compile(argtypes, mode=no_f64)
    import warnings

    with warnings.catch_warnings():
        warnings.simplefilter("error")
        kernel.compile((float64[:], float64[:]), mode=no_f64)  # once per kernel
        nv.jit(scale, narrow="floats").compile(argtypes, mode=no_f64)  # asked for: no warning


def float_to_int(a, out64, out32):
    i = nv.global_id(0)
    if i < out64.size:
        out64[i] = np.int64(a[i])
        out32[i] = np.int32(a[i])


def test_out_of_range_float_to_int_as_numba():
    # Undefined in SPIR-V (NVIDIA saturates); numba.njit and NumPy give the smallest integer.
    a = np.array([np.nan, np.inf, -np.inf, 1e300, -1e300, 2.0**63, -(2.0**63), 2.0**31,
                  -(2.0**31) - 1, 3.9, -3.9, -0.0, 2.0**62])  # fmt: skip
    dev, cpu = both(float_to_int, a, np.zeros(a.size, np.int64), np.zeros(a.size, np.int32))
    assert_same(dev, cpu)
