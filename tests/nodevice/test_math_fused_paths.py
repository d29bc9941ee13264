"""The math library's float64 short paths as NVIDIA gets them (CodegenControls.fused_fma: the
device's Fma rounds once), run in the KIR interpreter, whose Fma is std::fma: lavapipe's Fma
rounds twice, so the device tests run the other form. sin and cos (trig._short: the reduction
by fused Fmas with pi/2 in three full words, sin's and cos's polynomials and a select, the
sign by an xor) and exp (explog._exp_short: 2^k from the bits of the rounding constant, e^r
ending in two Fmas; float32 too) within 1 ulp against mpmath, the operands closest to a multiple of pi/2 included, and the special
values as C99 gives them (the rare blocks: huge operands, inf, NaN, over- and underflow); sqrt
bit for bit in both widths, float32 log, erf in both widths (1 - 2^L beyond 0.84375), and
fastmath's float64 sin and cos within 2 ulp, in the same form."""

import fractions
import math

import mpmath
import numba
import numpy as np
import pytest
from kir_host import EXACT, run_kir

import numba_vulkan.frontend as frontend
from numba_vulkan.frontend.mathlib import denormals
from numba_vulkan.typing import pipeline


def _kernel(name):
    ns = {"math": math}
    exec(f"def kern(x, out):\n    for i in range(x.size):\n        out[i] = math.{name}(x[i])\n",
         ns)  # fmt: skip
    return ns["kern"]


def run_fused(name, x, loose=False, fastmath=False):
    """math.<name> of each x through the interpreter, compiled with NVIDIA's float controls
    (`loose`: the driver's quotients and Sqrt moved by 2 ulp, NUMBA_VULKAN_DRIVER_DIV=loose;
    `fastmath`: the kernel compiled with fastmath=True)."""
    import kir_host

    kern = _kernel(name)
    out = np.zeros_like(x)
    argtypes = (numba.typeof(x), numba.typeof(out))
    typed = pipeline.type_kernel(kern, argtypes, pipeline.Options())
    lk = frontend.lower_kernel(typed.func_ir, typed.typemap, typed.calltypes, argtypes, EXACT,
                               "kern", fused_fma=True, denormals=denormals.FLUSH,
                               loose_division=loose, fastmath=fastmath)  # fmt: skip
    real = kir_host.lower
    kir_host.lower = lambda fn, args, mode=EXACT, group_loop=False: lk
    try:
        return run_kir(kern, (x, out), max_steps=10**9)[1]
    finally:
        kir_host.lower = real


def near_multiples_of_half_pi(count, dtype=np.float64):
    """The floats closest to q pi/2 (q < 2^15, float32: those below the short path's limit
    512; exact integer arithmetic), the closest first, and for float64 the hardest below 2^20
    (|r| = 6.2e-19 at 45.55..., and its doublings)."""
    scale = 300
    mpmath.mp.prec = 400
    half_pi = int(mpmath.floor(mpmath.pi / 2 * mpmath.mpf(2) ** scale))
    prec = np.finfo(dtype).nmant + 1
    found = []
    for q in range(1, 1 << 15 if dtype == np.float64 else 326):
        exact = q * half_pi
        shift = exact.bit_length() - prec
        m = (exact + (1 << (shift - 1))) >> shift
        found.append((abs((m << shift) - exact), math.ldexp(m, shift - scale)))
    found.sort()
    x = [v for _, v in found[:count]]
    if dtype == np.float64:
        x += [45.553093477052 * 2.0**j for j in range(14)]
    x = np.array(x, dtype)
    return np.concatenate([x, np.nextafter(x, dtype(0)), np.nextafter(x, dtype(np.inf))])


def trig_operands_float32():
    """The float64 sample's shape for float32: the short path ends at 512."""
    rng = np.random.default_rng(17)
    f32 = np.float32
    x = np.concatenate([
        rng.uniform(-10, 10, 3000).astype(f32),
        rng.uniform(-0.8, 0.8, 1000).astype(f32),
        (np.exp2(rng.uniform(-40, 9, 2000)) * rng.choice([-1, 1], 2000)).astype(f32),
        rng.uniform(-512, 512, 2000).astype(f32),
        np.exp2(rng.uniform(9, 128, 200)).astype(f32),
        near_multiples_of_half_pi(325, f32),
        np.array([0.0, 1e-45, 1.1754944e-38, 2.0**-13, 2.0**-12, math.pi / 4, 512.0,
                  np.nextafter(f32(512), f32(600)), 3.4028235e38], f32),
    ])  # fmt: skip
    return np.concatenate([x, -x])


def trig_operands():
    rng = np.random.default_rng(7)
    x = np.concatenate([
        rng.uniform(-10, 10, 3000),
        rng.uniform(-0.8, 0.8, 1000),
        np.exp2(rng.uniform(-40, 20, 2000)) * rng.choice([-1, 1], 2000),
        np.exp2(rng.uniform(20, 1024, 200)),
        near_multiples_of_half_pi(600),
        [0.0, 5e-324, 2.2250738585072014e-308, 2.0**-27, 2.0**-26, math.pi / 4,
         np.nextafter(math.pi / 4, 1), 2.0**20, np.nextafter(2.0**20, 3e6),
         6381956970095103 * 2.0**797, 1.7976931348623157e308],
    ])  # fmt: skip
    return np.concatenate([x, -x])


def exp_operands():
    rng = np.random.default_rng(8)
    x = np.concatenate([
        rng.uniform(-708, 708, 3000),
        rng.uniform(-1, 1, 1000),
        np.exp2(rng.uniform(-60, 0, 500)) * rng.choice([-1, 1], 500),
        rng.integers(-1000, 1000, 500) * math.log(2) * (1 + rng.uniform(-1e-13, 1e-13, 500)),
        rng.uniform(-746, -708, 300), rng.uniform(708, 710, 100),
        [0.0, -0.0, 708.0, -708.0, np.nextafter(708.0, 709), np.nextafter(-708.0, -709), 709.78,
         709.79, -745.1, -745.2, -744.4, 5e-324, -5e-324],
    ])  # fmt: skip
    return x


def ulps(name, x, y):
    """|y - f(x)| in ulps of f(x) at x's width (subnormals: of the smallest subnormal), by
    mpmath."""
    mpmath.mp.prec = 120
    f = getattr(mpmath, name)
    fi = np.finfo(x.dtype)
    prec, tiny_exp = fi.nmant + 1, fi.minexp - fi.nmant
    out = np.zeros(x.size)
    for i, (xi, yi) in enumerate(zip(x.tolist(), y.tolist())):
        exact = f(mpmath.mpf(xi))
        if abs(exact) > float(fi.max):
            out[i] = 0.0 if yi == math.inf else math.inf
            continue
        e = math.frexp(float(exact))[1] if exact != 0 else tiny_exp
        ulp = 2.0 ** max(e - prec, tiny_exp)
        out[i] = float(abs(mpmath.mpf(yi) - exact) / ulp)
    return out


@pytest.mark.parametrize("name", ["sin", "cos", "exp", "sin float32", "cos float32"])
def test_fused_short_paths_within_one_ulp(name):
    """float32 sin and cos take the same path: Fma words of pi/2 and polynomials a degree
    shorter than the general form's."""
    name, _, width = name.partition(" ")
    if width:
        x = trig_operands_float32()
    else:
        x = exp_operands() if name == "exp" else trig_operands()
    y = run_fused(name, x)
    err = ulps(name, x, y)
    worst = int(np.argmax(err))
    assert err[worst] <= 1.0, f"{name}: {err[worst]:.3f} ulp at x = {x[worst]!r} (got {y[worst]!r})"


@pytest.mark.parametrize("name", ["sin", "cos"])
def test_fastmath_float64_trig_within_two_ulp(name):
    """fastmath's float64 sin and cos (trig.fast: r in one word, one polynomial) within
    numba.cuda's documented 2 ulp, the operands nearest a multiple of pi/2 and those beyond the
    short path included, and the special values as the accurate form gives them."""
    x = trig_operands()
    y = run_fused(name, x, fastmath=True)
    err = ulps(name, x, y)
    worst = int(np.argmax(err))
    assert err[worst] <= 2.0, f"{name}: {err[worst]:.3f} ulp at x = {x[worst]!r} (got {y[worst]!r})"
    special = np.array([0.0, -0.0, math.inf, -math.inf, math.nan, 5e-324, -5e-324, 1e300])
    y, ref = run_fused(name, special, fastmath=True), run_fused(name, special)
    assert np.array_equal(y, ref, equal_nan=True)
    assert np.array_equal(np.signbit(y), np.signbit(ref))


def test_fused_exp_float32_within_one_ulp():
    """float32 exp takes the same short path (2^k a product there: e^-87 may be subnormal
    after it), ending in two Fmas where Fma rounds once: within 1 ulp of mpmath over the
    short range, its ends and the rare operands beyond them (over- and underflow, subnormal
    results on a flushing device: flushed to 0 there, so left out above -87.3)."""
    rng = np.random.default_rng(12)
    ends = np.array([87.0, -87.0, 88.7, -87.3, 0.3466, -0.3466, 1e-30, -1e-30], np.float32)
    x = np.concatenate([rng.uniform(-87.3, 88.72, 20000), rng.uniform(-0.35, 0.35, 5000),
                        ends, np.nextafter(ends, np.float32(0)),
                        np.nextafter(ends, np.float32(100))]).astype(np.float32)  # fmt: skip
    y = run_fused("exp", x)
    err = ulps("exp", x, y)
    worst = int(np.argmax(err))
    assert err[worst] <= 1.0, f"{err[worst]:.3f} ulp at x = {x[worst]!r} (got {y[worst]!r})"


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
@pytest.mark.parametrize("name", ["sin", "cos", "exp"])
def test_fused_short_paths_special_values(name, dtype):
    """On a device that flushes float32 subnormals too: sin(x) = x for a subnormal x."""
    x = np.array([0.0, -0.0, math.inf, -math.inf, math.nan, -math.nan, 5e-324, -5e-324,
                  2.0**-30, -(2.0**-30), 1e300, -1e300])  # fmt: skip
    if dtype == np.float32:
        x = np.concatenate([x[:6], [1e-45, -1e-45, 1e-39, -1e-39, 2.0**-30, -(2.0**-30),
                                    1e30, -1e30, 3e38]]).astype(dtype)  # fmt: skip
    y = run_fused(name, x)
    with np.errstate(all="ignore"):
        ref = getattr(np, name)(x)
    assert np.array_equal(np.isnan(y), np.isnan(ref))
    keep = ~np.isnan(ref)
    assert np.array_equal(y[keep], ref[keep])
    assert np.array_equal(np.signbit(y[keep]), np.signbit(ref[keep]))  # sin(-0) = -0


def sqrt32_operands():
    """float32: random mantissas over [1, 4) and the whole range, squares of 12-bit numbers
    and their neighbours (exact roots, residuals near the midpoints), the short path's ends,
    the special values."""
    rng = np.random.default_rng(9)
    f32 = np.float32
    sq = (np.arange(2048, 4096, dtype=np.float64) ** 2 * 2.0**-22).astype(f32)
    ends = np.array([2.0**-60, 2.0**60, 1.0, 2.0, 4.0], f32)
    x = np.concatenate([
        rng.integers(0x3F800000, 0x40800000, 20000, dtype=np.int32).view(f32),
        rng.integers(0, 0x7F800000, 20000, dtype=np.int32).view(f32),
        sq, np.nextafter(sq, f32(0)), np.nextafter(sq, f32(8)),
        ends, np.nextafter(ends, f32(0)), np.nextafter(ends, f32(np.inf)),
        np.array([0.0, -0.0, np.inf, -np.inf, np.nan, 1e-45, -1.0, 3.4028235e38], f32),
    ])  # fmt: skip
    return x


def sqrt64_operands():
    """float64: random mantissas over [1, 4) and the whole range, squares of 26-bit numbers and
    their neighbours (exact roots), the floats nearest the squares of midpoints between
    neighbouring floats of [1, 2) (roots within about 2^-106 of a midpoint) and their
    neighbours, the short path's ends, the special values."""
    rng = np.random.default_rng(13)
    sq = (np.arange(1 << 25, (1 << 25) + 4000, dtype=np.float64) * 2.0**-25) ** 2
    mid = [float(fractions.Fraction((2 * int(m) + 1) ** 2, 1 << 106))
           for m in rng.integers(1 << 52, 1 << 53, 3000, dtype=np.int64)]  # fmt: skip
    mid = np.array(mid + [4 * v for v in mid[:1000]])
    ends = np.array([2.0**-60, 2.0**60, 1.0, 2.0, 4.0])
    near = np.concatenate([sq, mid, ends])
    return np.concatenate([
        rng.integers(0x3FF0000000000000, 0x4010000000000000, 10000, np.int64).view(np.float64),
        rng.integers(0, 0x7FF0000000000000, 10000, dtype=np.int64).view(np.float64),
        near, np.nextafter(near, 0.0), np.nextafter(near, np.inf),
        [0.0, -0.0, np.inf, -np.inf, np.nan, 5e-324, -1.0, 1.7976931348623157e308],
    ])  # fmt: skip


@pytest.mark.parametrize("loose", [False, True])
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_fused_sqrt_correctly_rounded(dtype, loose):
    """sqrt with a fused Fma (roots._sqrt_fused: no division, the rounding decided by two exact
    residuals; float64 after two steps from the float32 guess) is NumPy's bit for bit, also
    from a driver's InverseSqrt 2 ulp off."""
    x = sqrt32_operands() if dtype == np.float32 else sqrt64_operands()
    y = run_fused("sqrt", x, loose)
    with np.errstate(invalid="ignore"):
        ref = np.sqrt(x)
    ints = np.int32 if dtype == np.float32 else np.int64
    bad = (y.view(ints) != ref.view(ints)) & ~(np.isnan(y) & np.isnan(ref))
    assert not bad.any(), f"{bad.sum()} differ, e.g. x = {x[bad][:4]!r}: {y[bad][:4]!r}"


@pytest.mark.parametrize("loose", [False, True])
def test_fused_log_float32_within_one_ulp(loose):
    """float32 log with a fused Fma (its division's correction by two Fmas) within 1 ulp."""
    rng = np.random.default_rng(10)
    x = np.concatenate([rng.integers(0x00800000, 0x7F800000, 20000, dtype=np.int32),
                        np.arange(0x3F340000, 0x3F360000, 4, dtype=np.int32),  # sqrt(1/2)
                        np.arange(0x3FB40000, 0x3FB60000, 4, dtype=np.int32),  # sqrt(2)
                        np.arange(0x3F7F0000, 0x3F810000, 4, dtype=np.int32)]).view(np.float32)
    y = run_fused("log", x, loose)
    exact = np.log(x.astype(np.longdouble))
    e = np.floor(np.log2(np.maximum(np.abs(exact), 2.0**-126).astype(np.float64)))
    err = np.abs(y.astype(np.longdouble) - exact) / np.exp2(e - 23)
    worst = int(np.argmax(err))
    assert err[worst] <= 1.0, f"{float(err[worst]):.3f} ulp at x = {x[worst]!r}"


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_fused_erf_within_its_bound(dtype):
    """erf as NVIDIA gets it (erf.py: x + x P(x^2), beyond 0.84375 1 - 2^L with 2^L from the
    bits, float32's tiny case on a flushing device) within its documented 1.5 ulp of mpmath,
    around each limit (0.84375, the fit's end where erf rounds to 1) and at the special
    values."""
    rng = np.random.default_rng(11)
    edges = np.array([0.84375, 3.92, 4.0, 5.86, 6.0, 2.0**-100, 2.0**-126])
    x = np.concatenate([rng.uniform(-6.5, 6.5, 3000), rng.uniform(0.8, 1.2, 1000), edges,
                        np.nextafter(edges, 0), np.nextafter(edges, 9)]).astype(dtype)
    x = np.concatenate([x, -x])
    y = run_fused("erf", x)
    err = ulps("erf", x, y)
    worst = int(np.argmax(err))
    assert err[worst] <= 1.5, f"{err[worst]:.3f} ulp at x = {x[worst]!r} (got {y[worst]!r})"
    special = np.array([0.0, -0.0, np.inf, -np.inf, np.nan], dtype)
    got = run_fused("erf", special)
    assert np.array_equal(got, np.array([0.0, -0.0, 1.0, -1.0, np.nan], dtype), equal_nan=True)
    assert np.signbit(got[1]) and not np.signbit(got[0])
