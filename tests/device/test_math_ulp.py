"""The accurate elementary functions against mpmath: the largest error in ulps over a small
sample (edge cases plus random operands over each function's interesting range) must stay
within the bounds docs/math.md promises. benchmarks/math_accuracy.py sweeps 10^6 samples."""

import math

import mpmath as mp
import numpy as np
import pytest
from conftest import requires_feature
from math_support import (
    max_ulp,
    plain_arith_comparable,
    random_floats,
    run_kernel,
    special_floats,
)

import numba_vulkan as nv

pytestmark = [pytest.mark.device, pytest.mark.usefixtures("device")]

FLOATS = [np.float32, pytest.param(np.float64, marks=requires_feature("float64"))]


def _exp_range(dtype):
    return (-110, 100) if dtype == np.float32 else (-750, 720)


# expr -> (mpmath reference, operand sampler(dtype, n), ulp bound)
CASES = {
    "math.exp(x)": (mp.exp, lambda dt, n: _uniform(dt, n, *_exp_range(dt)), 1.0),
    "np.exp2(x)": (lambda v: mp.power(2, v), lambda dt, n: _uniform(dt, n, -160, 140) if dt ==
                   np.float32 else _uniform(dt, n, -1100, 1030), 1.0),
    "math.exp2(x)": (lambda v: mp.power(2, v), lambda dt, n: _uniform(dt, n, -150, 128), 1.0),
    "np.float_power(x, 1.5)": (lambda v: mp.power(abs(v), 1.5) if v >= 0 or mp.isinf(v) else mp.nan,
                               lambda dt, n: _positive(dt, n), 1.0),
    "math.log(x)": (mp.log, lambda dt, n: _positive(dt, n), 1.0),
    "math.log2(x)": (lambda v: mp.log(v, 2), lambda dt, n: _positive(dt, n), 1.0),
    "math.log10(x)": (mp.log10, lambda dt, n: _positive(dt, n), 1.0),
    "math.expm1(x)": (mp.expm1, lambda dt, n: _uniform(dt, n, *_exp_range(dt)), 1.0),
    "math.log1p(x)": (mp.log1p, lambda dt, n: np.concatenate([_positive(dt, n), _uniform(
        dt, n // 2, -1, 1)]), 1.0),
    "np.cbrt(x)": (lambda v: mp.sign(v) * mp.cbrt(abs(v)), lambda dt, n: random_floats(dt, n), 1.0),
    "math.atan(x)": (mp.atan, lambda dt, n: np.concatenate([random_floats(dt, n),
                     _uniform(dt, n, -3, 3)]), 1.0),
    "math.tanh(x)": (mp.tanh, lambda dt, n: _uniform(dt, n, -12, 12), 1.0),
    "math.sinh(x)": (mp.sinh, lambda dt, n: _uniform(dt, n, *_hyp_range(dt)), 1.0),
    "math.cosh(x)": (mp.cosh, lambda dt, n: _uniform(dt, n, *_hyp_range(dt)), 1.0),
    "math.asinh(x)": (mp.asinh, lambda dt, n: np.concatenate([random_floats(dt, n),
                      _uniform(dt, n, -5, 5)]), 1.0),
    "math.acosh(x)": (mp.acosh, lambda dt, n: np.concatenate([np.abs(random_floats(dt, n)),
                      _uniform(dt, n, 1, 5)]), 1.0),
    "math.atanh(x)": (mp.atanh, lambda dt, n: _uniform(dt, n, -1, 1), 1.0),
    "math.asin(x)": (mp.asin, lambda dt, n: _uniform(dt, n, -1, 1), 1.0),
    "math.acos(x)": (mp.acos, lambda dt, n: _uniform(dt, n, -1, 1), 1.0),
    "math.hypot(x, 1.5)": (lambda v: mp.sqrt(v * v + mp.mpf(1.5) ** 2),
                           lambda dt, n: random_floats(dt, n), 1.0),
    "math.sin(x)": (mp.sin, lambda dt, n: _trig(dt, n), 1.0),
    "math.cos(x)": (mp.cos, lambda dt, n: _trig(dt, n), 1.0),
    "math.tan(x)": (mp.tan, lambda dt, n: _trig(dt, n), 1.0),
    "math.erf(x)": (mp.erf, lambda dt, n: _erf(dt, n), 1.5),
    "math.erfc(x)": (lambda v: mp.erfc(v) if mp.isnan(v) or abs(v) < 100 else mp.mpf(v < 0) * 2,
                     lambda dt, n: _erf(dt, n), 2.0),
}  # fmt: skip

# The operands closest to a multiple of pi/2 (Muller, "Elementary Functions", table 11.1):
# there |x mod pi/2| is about 2^-29 (float32) and 2^-61 (float64).
_TRIG_HARD = {np.float32: [16367173 * 2.0**72], np.float64: [6381956970095103 * 2.0**797]}


def _erf(dtype, n):
    """Every interval of erf.py (edges included), the erfc underflow zone, and wide operands."""
    rng = np.random.default_rng(19)
    edges = np.array([0.25, 0.84375, 1.25, 2, 3, 4, 4.5, 6, 6.5, 9, 10.05, 13, 19, 27.2])
    near = np.concatenate([edges, -edges, np.nextafter(edges.astype(dtype), dtype(0))])
    return np.concatenate([_uniform(dtype, n, -6, 6), rng.uniform(-28, 28, n // 2).astype(dtype),
                           random_floats(dtype, n // 4, seed=20), near.astype(dtype)])


def _trig(dtype, n):
    """Full-range operands (every exponent), moderate ones, ones near multiples of pi/2 and the
    known hardest cases for the reduction."""
    rng = np.random.default_rng(17)
    k = rng.integers(1, 2000, n // 4)
    near = (k * (np.pi / 2)) * (1 + rng.uniform(-1e-6, 1e-6, n // 4))
    hard = np.array(_TRIG_HARD[dtype])
    return np.concatenate([random_floats(dtype, n, seed=18), _uniform(dtype, n, -20, 20),
                           near.astype(dtype), hard.astype(dtype)])


def _hyp_range(dtype):
    return (-92, 92) if dtype == np.float32 else (-712, 712)


def _uniform(dtype, n, lo, hi):
    rng = np.random.default_rng(11)
    near0 = random_floats(dtype, n // 4, seed=12, hi_exp=-1)
    return np.concatenate([rng.uniform(lo, hi, n).astype(dtype), near0, special_floats(dtype)])


def _positive(dtype, n):
    rng = np.random.default_rng(13)
    x = np.abs(random_floats(dtype, n, seed=14))
    near1 = (1 + rng.uniform(-0.3, 0.4, n // 2)).astype(dtype)
    return np.concatenate([x, near1, special_floats(dtype)])


@pytest.mark.parametrize("dtype", FLOATS)
@pytest.mark.parametrize("expr", sorted(CASES))
def test_ulp(expr, dtype):
    ref, sample, bound = CASES[expr]
    x = sample(dtype, 1500)
    out = run_kernel(expr, x)
    worst, at = max_ulp(out, x, ref)
    assert worst <= bound, f"{expr} on {dtype.__name__}: {worst:.3f} ulp at x = {at!r}"


@pytest.mark.parametrize("dtype", FLOATS)
def test_pow_ulp(dtype):
    rng = np.random.default_rng(21)
    x = np.concatenate([np.abs(random_floats(dtype, 700, seed=22, lo_exp=-60, hi_exp=60)),
                        rng.uniform(0.5, 2.0, 700).astype(dtype)])  # fmt: skip
    y = np.concatenate([rng.uniform(-20, 20, 700), rng.uniform(-900, 900, 700)]).astype(dtype)
    out = run_kernel("x ** y", x, y)
    worst = 0.0
    fi = np.finfo(dtype)
    with mp.workdps(40):
        for xi, yi, oi in zip(x, y, out):
            ex = mp.power(mp.mpf(float(xi)), mp.mpf(float(yi)))
            if ex > float(fi.max):
                assert np.isinf(oi), (xi, yi, oi)
                continue
            e = max(int(mp.floor(mp.log(ex, 2))), fi.minexp) if ex else fi.minexp
            worst = max(worst, float(abs(mp.mpf(float(oi)) - ex) / mp.mpf(2) ** (e - fi.nmant)))
    assert worst <= 1.0, worst


@pytest.mark.parametrize("dtype", FLOATS)
def test_fastmath_keeps_the_library_exact(dtype):
    """fastmath=True lets the driver reassociate, which would fold the library's exact steps
    ((a + 2^52) - 2^52, Knuth's sum) and give garbage: such kernels keep exact float ops."""
    x = _uniform(dtype, 500, -80, 80)
    # (expm1 has no driver built-in: fastmath leaves it to the library, mathlib/fast.py)
    out = run_kernel("math.expm1(x) + np.rint(x)", x, fastmath=True)
    ref, _ = run_kernel("math.expm1(x)", x), None
    expected = ref + np.rint(x)
    # The + is the device's: on one that flushes float32 subnormals, rows with one are left out
    keep = plain_arith_comparable(x, out, expected)
    x, out, expected = x[keep], out[keep], expected[keep]
    bad = ~((out == expected) | (np.isnan(out) & np.isnan(expected)))
    assert not bad.any(), [(x[i], out[i], expected[i]) for i in np.flatnonzero(bad)[:8]]


@pytest.mark.parametrize("dtype", FLOATS)
def test_atan2_ulp(dtype):
    rng = np.random.default_rng(31)
    y = np.concatenate([random_floats(dtype, 700, seed=32), rng.uniform(-3, 3, 700).astype(dtype)])
    x = np.concatenate([random_floats(dtype, 700, seed=33), rng.uniform(-3, 3, 700).astype(dtype)])
    out = run_kernel("math.atan2(x, y)", y, x)
    fi = np.finfo(dtype)
    worst = 0.0
    with mp.workdps(40):
        for yi, xi, oi in zip(y, x, out):
            ex = mp.atan2(mp.mpf(float(yi)), mp.mpf(float(xi)))
            e = max(int(mp.floor(mp.log(abs(ex), 2))), fi.minexp) if ex else fi.minexp
            worst = max(worst, float(abs(mp.mpf(float(oi)) - ex) / mp.mpf(2) ** (e - fi.nmant)))
    assert worst <= 1.0, worst


@nv.jit(fastmath=True)
def _device_helper(v):
    return math.exp(v) * math.sqrt(abs(v))


def test_math_in_a_device_function():
    """Math calls inside an inlined device function reach the library (and its fastmath rule)."""

    @nv.jit(fastmath=True)
    def kernel(a, out):
        i = nv.global_id(0)
        if i < out.size:
            out[i] = _device_helper(a[i])

    x = np.linspace(-20, 20, 101)
    out = np.zeros_like(x)
    kernel.forall(x.size)(x, out)
    ref = np.exp(x) * np.sqrt(np.abs(x))
    assert np.all(np.abs(out - ref) <= 2 * np.abs(np.spacing(ref)))


@pytest.mark.parametrize("dtype", FLOATS)
def test_erf_special_values(dtype):
    """erf(+-0) = +-0, erf(+-inf) = +-1, erfc(+-0) = 1, erfc(inf) = 0, erfc(-inf) = 2, NaN."""
    x = np.array([0.0, -0.0, np.inf, -np.inf, np.nan], dtype)
    erf = run_kernel("math.erf(x)", x)
    assert np.array_equal(erf, np.array([0.0, -0.0, 1, -1, np.nan], dtype), equal_nan=True)
    assert np.signbit(erf[1]) and not np.signbit(erf[0])
    erfc = run_kernel("math.erfc(x)", x)
    assert np.array_equal(erfc, np.array([1, 1, 0, 2, np.nan], dtype), equal_nan=True)


@pytest.mark.parametrize("dtype", FLOATS)
def test_trig_special_values(dtype):
    """sin, tan keep the sign of zero; cos(+-0) = 1; NaN and +-inf give NaN (C99, NumPy)."""
    x = np.array([0.0, -0.0, np.inf, -np.inf, np.nan, 1e-30, -1e-30], dtype)
    for expr, ref in (("math.sin(x)", np.sin), ("np.tan(x)", np.tan), ("np.cos(x)", np.cos)):
        out = run_kernel(expr, x)
        with np.errstate(invalid="ignore"):
            want = ref(x)
        assert np.array_equal(out, want, equal_nan=True), (expr, out)
        assert np.array_equal(np.signbit(out[:2]), np.signbit(want[:2])), (expr, out)


SIGNED_ZERO = ["math.log1p(x)", "math.expm1(x)", "math.sinh(x)", "math.asinh(x)", "math.atanh(x)",
               "math.tanh(x)", "math.atan(x)", "math.asin(x)", "math.erf(x)", "np.cbrt(x)",
               "math.sqrt(x)", "math.tan(x)", "math.sin(x)"]  # fmt: skip


@pytest.mark.parametrize("dtype", FLOATS)
def test_signed_zeros(dtype):
    """f(+-0) = +-0 for the odd functions (C99; log1p and expm1 gave +0 for -0 once)."""
    from math_support import assert_all_same_bits

    assert_all_same_bits(SIGNED_ZERO, np.array([-0.0, 0.0], dtype))


@pytest.mark.parametrize("dtype", FLOATS)
def test_trig_branch_in_a_loop(dtype):
    """sin/cos branch to the full reduction beyond 2^20 (float32: 512) in a block of their own
    (mathlib/rare.py): operands on both sides in one launch, inside a loop, with the argument
    and an accumulator used after each call."""

    @nv.jit
    def kernel(x, out):
        i = nv.global_id(0)
        if i < x.size:
            v = x[i]
            acc = x[i] * 0
            for _ in range(3):
                acc += math.sin(v) + math.cos(v) * v
                v = v * 4 + 1
            out[i] = acc

    lim = 512.0 if dtype == np.float32 else 2.0**20
    rng = np.random.default_rng(5)
    x = np.concatenate([rng.uniform(-4, 4, 64), rng.uniform(lim / 8, lim * 2, 64),
                        rng.uniform(-1e30, 1e30, 64), [lim / 4, -lim / 4, lim, np.nextafter(
                            dtype(lim), dtype(np.inf))]]).astype(dtype)  # fmt: skip
    out = np.zeros_like(x)
    kernel.forall(x.size)(x, out)
    v, acc, scale = x.astype(np.float64), np.zeros(x.size), np.zeros(x.size)
    for _ in range(3):
        s, c = np.sin(v), np.cos(v)
        acc += s + c * v
        scale += np.abs(s) + np.abs(c * v) + np.abs(v)
        v = (v.astype(dtype) * dtype(4) + dtype(1)).astype(np.float64)
    assert np.all(np.abs(out - acc) <= 8 * np.finfo(dtype).eps * scale)


def _around(dtype, edges):
    """Each edge, its neighbours two ulps either way, and both signs."""
    v = []
    for e in edges:
        e = dtype(e)
        lo, hi = e, e
        for _ in range(2):
            with np.errstate(over="ignore"):  # past the largest float: inf, wanted too
                lo, hi = np.nextafter(lo, dtype(-np.inf)), np.nextafter(hi, dtype(np.inf))
            v += [lo, hi]
        v.append(e)
    v = np.array(v, dtype)
    return np.concatenate([v, -v])


# The short paths of scalar calls (mathlib.Call.may_branch) and where they hand over to the
# general form in a block of its own: exp's |x| <= 87 / 708 (explog._EXP_DIRECT), log's
# positive normal x (explog._log_direct_parts); sqrt's edges are in test_math_exact.py.
SHORT_PATH_EDGES = {
    "math.exp(x)": (mp.exp, {np.float32: [87.0, 88.0, 88.72, 89.0, 103.0, 104.0, 0.0],
                             np.float64: [708.0, 709.0, 709.78, 710.0, 745.0, 746.0, 0.0]}),
    "math.log(x)": (mp.log, {np.float32: [np.finfo(np.float32).tiny, np.finfo(np.float32).max,
                                          0.70710677, 1.0, 2.0**-149],
                             np.float64: [np.finfo(np.float64).tiny, np.finfo(np.float64).max,
                                          0.7071067811865476, 1.0, 2.0**-1074]}),
}  # fmt: skip


@pytest.mark.parametrize("dtype", FLOATS)
@pytest.mark.parametrize("expr", sorted(SHORT_PATH_EDGES))
def test_short_path_edges(expr, dtype):
    """Operands on both sides of each short path's limits, against mpmath; the kernel has the
    block of the other operands, so both forms run."""
    from math_support import _kernel

    ref, edges = SHORT_PATH_EDGES[expr]
    x = np.concatenate([_around(dtype, edges[dtype]), special_floats(dtype)])
    kernel = _kernel([expr], 1)
    out = np.zeros_like(x)
    kernel.forall(x.size)(x, out)
    assert ".rare" in kernel.inspect_kir(x, out), "no short path"
    worst, at = max_ulp(out, x, ref)
    assert worst <= 1.0, f"{expr} on {dtype.__name__}: {worst:.3f} ulp at x = {at!r}"


# erf's and erfc's cases in scalar calls (mathlib/erf.py): the limits between the intervals,
# between the G intervals of erfc's tails (coeffs_special.ERFC_EDGES), the end of erf's fit
# ERF_L (float32 4, float64 6; erf rounds to 1 from 3.92, 5.86 on), erfc's limit of normal
# results (erf._ERFC_FAR), the underflow zone, and
# the tiny operands (2^-100) that a device flushing float32 subnormals takes apart.
ERF_CASE_EDGES = {
    np.float32: [0.25, 0.5, 0.84375, 1.25, 2.0, 3.0, 3.92, 4.0, 4.5, 6.5, 9.0, 9.2, 10.05, 10.1, 13.0,
                 2.0**-100, 2.0**-124, 2.0**-126],
    np.float64: [0.25, 0.5, 0.84375, 1.25, 2.0, 3.0, 4.5, 5.86, 6.0, 6.5, 9.0, 13.0, 19.0, 26.55, 27.3,
                 27.5, 2.0**-100, 2.0**-1022],
}  # fmt: skip


@pytest.mark.parametrize("subnormals", ["", "keep"])
@pytest.mark.parametrize("dtype", FLOATS)
@pytest.mark.parametrize("expr", ["math.erf(x)", "math.erfc(x)"])
def test_erf_case_edges(expr, dtype, subnormals, monkeypatch):
    """Operands on both sides of each limit of erf's and erfc's cases, against mpmath, and bit
    for bit against the general form (every interval evaluated, results selected), which
    array ufuncs' element calls take; with the flush-safe forms and without them. The kernel
    has the cases' blocks, and the general form's has none."""
    from math_support import _kernel, assert_same_bits, set_subnormals32

    from numba_vulkan.frontend import mathlib
    from numba_vulkan.frontend.mathlib import erf

    set_subnormals32(monkeypatch, subnormals, dtype)
    ref, _, bound = CASES[expr]
    x = np.concatenate([_around(dtype, ERF_CASE_EDGES[dtype]), special_floats(dtype)])
    kernel = _kernel([expr], 1)
    out = np.zeros_like(x)
    kernel.forall(x.size)(x, out)
    kir = kernel.inspect_kir(x, out)
    if "erfc" in expr:
        cases = (".small", ".mid", ".tail", ".far", ".general", "erfg")
    else:
        cases = (".small", ".big")
    for case in cases:
        assert case in kir, f"no case {case}"
    worst, at = max_ulp(out, x, ref)
    assert worst <= bound, f"{expr} on {dtype.__name__}: {worst:.3f} ulp at x = {at!r}"

    fn, impl = (math.erf, erf.erf) if "erfc" not in expr else (math.erfc, erf.erfc)
    monkeypatch.setitem(mathlib.TABLE, fn, lambda c: c.ret(impl(c.b, c.fargs()[0])))
    general = _kernel([expr], 1)
    want = np.zeros_like(x)
    general.forall(x.size)(x, want)
    assert cases[-1] not in general.inspect_kir(x, want)
    assert_same_bits(out, want, (x,))


def test_erf_tiny_correctly_rounded(monkeypatch):
    """float32 erf below 2^-100 where the library takes the flush-safe forms (here simulating a
    device that flushes subnormals) is x * 2/sqrt(pi) rounded once, the constant as a double
    word (erf._erf_tiny; the float32 constant alone was 1.37 ulp off just below 2^-124)."""
    from numba_vulkan import config

    monkeypatch.setattr(config, "SUBNORMALS32", "simulate")
    rng = np.random.default_rng(23)
    x = (rng.uniform(1, 2, 400) * np.exp2(rng.integers(-149, -100, 400))).astype(np.float32)
    x = np.concatenate([x, -x, _around(np.float32, [2.0**-124, 2.0**-126, 2.0**-100])])
    x = x[np.abs(x) < 2.0**-100]
    worst, at = max_ulp(run_kernel("math.erf(x)", x), x, mp.erf)
    assert worst <= 0.5 + 1e-6, f"{worst:.3f} ulp at x = {at!r}"
