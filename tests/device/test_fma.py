"""cuda.fma (and libdevice.fma/fmaf): a * b + c rounded once, bit for bit against the exact
value (Python's fractions, rounded by float()) on random and hard operands: ties, exact
cancellation, subnormal results, products past the float range, infinities and NaN.
float64 is checked with the device's default (lavapipe: the software emulation, its Fma
rounds twice) and with NUMBA_VULKAN_FMA=off (the emulation everywhere)."""

import math
import random
from fractions import Fraction

import numpy as np
import pytest
from math_support import exact_fma

import numba_vulkan as nv
from numba_vulkan import config, cuda
from numba_vulkan.cuda import libdevice

pytestmark = [pytest.mark.device, pytest.mark.usefixtures("device")]


def _bits(a):
    return a.view(np.uint32 if a.dtype == np.float32 else np.uint64)


def _same(got, want):
    """Equal bits, any NaN matching any NaN."""
    nan = np.isnan(got) & np.isnan(want)
    return nan | (_bits(got) == _bits(want))


def _number(rng, dtype, lo, hi, bits=None):
    p = 24 if dtype == np.float32 else 53
    bits = bits or rng.choice([p, p, 3, 12])
    m = rng.getrandbits(bits - 1) | (1 << (bits - 1))
    return rng.choice([1.0, -1.0]) * math.ldexp(m, rng.randint(lo, hi) - bits + 1)


def _cases(dtype, n=3000, seed=0):
    """(a, b, c) arrays: random, cancelling, tie-making, subnormal, huge and special cases."""
    rng = random.Random(seed)
    tiny, big = (-149, 127) if dtype == np.float32 else (-1074, 1023)
    half = big // 2
    rows = []

    def fit(v):
        try:
            v = float(v)
        except OverflowError:
            v = math.inf if v > 0 else -math.inf
        with np.errstate(all="ignore"):
            return float(dtype(v))

    for i in range(n):
        kind = i % 8
        a, b = _number(rng, dtype, -20, 20), _number(rng, dtype, -20, 20)
        if kind == 0:  # anything
            c = _number(rng, dtype, -45, 45)
        elif kind == 1:  # cancellation to a few bits (and exactly to zero)
            k = rng.choice([0, 1, -1, 3])
            c = fit(-(Fraction(a) * Fraction(b)) * (1 + Fraction(k, 2 ** rng.randint(10, 60))))
        elif kind == 2:  # a sticky c far below the product, deciding a tie
            a, b = _number(rng, dtype, -3, 3, 12), _number(rng, dtype, -3, 3, 14)
            c = _number(rng, dtype, -120, -40)
        elif kind == 3:  # c far above the product
            c = _number(rng, dtype, 40, 120)
        elif kind == 4:  # subnormal results
            a = _number(rng, dtype, tiny // 2 - 2, tiny // 2 + 12)
            b = _number(rng, dtype, tiny // 2 - 2, tiny // 2 + 12)
            c = rng.choice([0.0, -0.0, _number(rng, dtype, tiny, tiny + 30),
                            fit(-(Fraction(a) * Fraction(b)) * (1 + Fraction(rng.choice([1, -1]),
                                2 ** rng.randint(1, 30))))])  # fmt: skip
        elif kind == 5:  # near overflow
            a, b = _number(rng, dtype, half - 2, half + 2), _number(rng, dtype, half - 2, half + 2)
            c = rng.choice([_number(rng, dtype, big - 3, big), fit(-(Fraction(a) * Fraction(b)))])
        elif kind == 6:  # operands of any size
            a, b, c = (_number(rng, dtype, tiny, big) for _ in range(3))
        else:  # specials
            s = [0.0, -0.0, math.inf, -math.inf, math.nan, 1.0, -1.0, fit(2.0**tiny), 1e-300]
            a, b, c = (rng.choice(s + [a]) for _ in range(3))
        rows.append((fit(a), fit(b), fit(c)))
    arr = np.array(rows, dtype=dtype)
    return arr[:, 0].copy(), arr[:, 1].copy(), arr[:, 2].copy()


def _fma(o, a, b, c):
    i = cuda.grid(1)
    if i < o.size:
        o[i] = cuda.fma(a[i], b[i], c[i])


_fma_kernel = cuda.jit(_fma)


@cuda.jit
def _libdevice_kernel(o32, o64, a, b, c):
    i = cuda.grid(1)
    if i < o64.size:
        o32[i] = libdevice.fmaf(np.float32(a[i]), np.float32(b[i]), np.float32(c[i]))
        o64[i] = libdevice.fma(a[i], b[i], c[i])


def _check(dtype, seed, kernel=_fma_kernel):
    a, b, c = _cases(dtype, seed=seed)
    out = np.zeros_like(a)
    kernel.forall(a.size)(out, a, b, c)
    want = np.array([exact_fma(x, y, z, dtype) for x, y, z in zip(a, b, c)], dtype=dtype)
    bad = ~_same(out, want)
    assert not bad.any(), [(x.hex(), y.hex(), z.hex(), g, w) for x, y, z, g, w in zip(
        a[bad].tolist(), b[bad].tolist(), c[bad].tolist(), out[bad], want[bad])][:5]  # fmt: skip


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_fma_is_rounded_once(dtype):
    _check(dtype, seed=1)


def test_fma_checks_can_fail(monkeypatch, device):
    """The checks see a twice-rounded Fma: lavapipe's, taken as fused (NUMBA_VULKAN_FMA=
    fused, which is only for devices whose Fma rounds once)."""
    if "llvmpipe" not in device.info.name:
        pytest.skip("needs a device whose Fma rounds twice (lavapipe)")
    monkeypatch.setattr(config, "FMA", "fused")
    with pytest.raises(AssertionError):
        _check(np.float64, seed=3, kernel=cuda.jit(_fma))


def test_fma32_where_float32_subnormals_flush(monkeypatch):
    """float32 on a device that flushes float32 subnormals (simulated: NVIDIA's case): the
    widening and narrowing keep them."""
    monkeypatch.setattr(config, "SUBNORMALS32", "simulate")
    _check(np.float32, seed=4, kernel=cuda.jit(_fma))


def test_fma64_emulated(monkeypatch):
    """float64 with NUMBA_VULKAN_FMA=off: Boldo and Melquiond's emulation, on any device."""
    monkeypatch.setattr(config, "FMA", "off")
    _check(np.float64, seed=2, kernel=cuda.jit(_fma))


def test_fma_hard_cases():
    """Cases a twice-rounded a * b + c gets wrong, and the extremes of the float64 emulation."""
    f64 = [
        (1 + 2.0**-30, 1 - 2.0**-30, -1.0),  # -2^-60: a plain a * b + c gives 0
        (1 + 2.0**-52, 1 + 2.0**-52, 0.0),  # the product rounded once: 1 + 2^-51
        (0.1, 10.0, -1.0),
        (2.0**-600, 2.0**-600, 0.0),  # underflows to +0
        (-(2.0**-600), 2.0**-600, 0.0),  # to -0 (+0 + the tiny negative product)
        (2.0**-537, 2.0**-538, 2.0**-1074),  # 2^-1075 + 2^-1074: a tie in the subnormals
        (3 * 2.0**-538, 2.0**-538, -(2.0**-1074)),  # 1.5 2^-1074 - 2^-1074: a tie, to even
        (2.0**-1074, 2.0**-1074, 1.0),  # a product far below c's sticky range
        (2.0**-1074, 2.0**-1074, -(2.0**-1074)),
        (1.5 * 2.0**-1070, 2.0**-5, 2.0**-1074),
        (1.7976931348623157e308, 2.0, -1.7976931348623157e308),  # product past the range
        (1.7976931348623157e308, 1.0000000000000002, 0.0),  # overflows
        (2.0**1000, 2.0**1000, -math.inf),
        (math.inf, 0.0, 1.0),
        (1.0 + 2.0**-52, 1.0 - 2.0**-53, -1.0),
        (2.0**-1022, 1.0 - 2.0**-53, 0.0),  # a tie below the smallest normal: up to it
        (2.0**-1022, 1.0 - 2.0**-53, -(2.0**-1074)),  # a tie between subnormals: to even
    ]
    a, b, c = (np.array(col, np.float64) for col in zip(*f64))
    out = np.zeros_like(a)
    _fma_kernel.forall(a.size)(out, a, b, c)
    want = np.array([exact_fma(*r, np.float64) for r in zip(a, b, c)])
    assert _same(out, want).all(), list(zip(out[~_same(out, want)], want[~_same(out, want)]))
    assert out[0] == -(2.0**-60) and out[4] == 0 and np.signbit(out[4])


def test_libdevice_fma_and_typing():
    """libdevice.fma/fmaf, integer operands (converted to float64, as numba-cuda's template)."""
    a = np.array([1 + 2.0**-12, 3.0]), np.array([1 - 2.0**-12, 4.0]), np.array([-1.0, 5.0])
    o32, o64 = np.zeros(2, np.float32), np.zeros(2)
    _libdevice_kernel.forall(2)(o32, o64, *a)
    assert o64.tolist() == [-(2.0**-24), 17.0]
    assert o32.tolist() == [-(2.0**-24), 17.0]

    @cuda.jit
    def ints(o, n):
        o[0] = cuda.fma(n, n, np.float32(0.5))

    o = np.zeros(1)
    ints[1, 1](o, 3)
    assert o[0] == 9.5


def test_fma_without_float64_is_refused():
    """float32's exact form needs float64: refused where the kernel has none (compiled with
    float64 computed as float32)."""
    from numba_vulkan import narrowing

    def k(o, a):
        o[0] = cuda.fma(a[0], a[0], a[0])

    with pytest.raises(nv.VulkanUnsupportedError, match="cuda.fma on a device without float64"):
        nv.jit(k).compile("void(float32[::1], float32[::1])", mode=narrowing.Mode(floats=True))
    assert nv.jit(k).compile("void(float32[::1], float32[::1])").words.size > 0
