"""cmath on complex64 and complex128 (mathlib/cmathlib.py): each component against mpmath in
ulps on random operands, and the special values (zeros, infinities, NaN: C99 Annex G where
numba.njit gives it) bit for bit against numba.njit."""

import cmath
import math

import mpmath as mp
import numpy as np
import pytest
from conftest import requires_feature

import math_support
from math_support import assert_same_bits, cpu_reference

pytestmark = [pytest.mark.device, pytest.mark.usefixtures("device")]

COMPLEX = [np.complex64, pytest.param(np.complex128, marks=requires_feature("float64"))]

# name -> (mpmath function, bound in ulps of the larger component of the result)
FUNCS = {
    "exp": (mp.exp, 3), "log": (mp.log, 3), "log10": (mp.log10, 3), "sqrt": (mp.sqrt, 3),
    "sin": (mp.sin, 3), "cos": (mp.cos, 3), "tan": (mp.tan, 6), "sinh": (mp.sinh, 3),
    "cosh": (mp.cosh, 3), "tanh": (mp.tanh, 6), "asin": (mp.asin, 3), "acos": (mp.acos, 3),
    "atan": (mp.atan, 3), "asinh": (mp.asinh, 3), "acosh": (mp.acosh, 3),
    "atanh": (mp.atanh, 3),
}  # fmt: skip
SPECIAL = [0.0, -0.0, np.inf, -np.inf, np.nan, 1.0, -1.0, 0.5, 2.0, 1e-30]


@pytest.fixture(autouse=True)
def with_cmath(monkeypatch):
    monkeypatch.setattr(math_support, "_globals", lambda: {"np": np, "math": math,
                                                            "cmath": cmath})  # fmt: skip


def _run(exprs, z, out_dtype):
    outs = [np.zeros(z.size, out_dtype) for _ in exprs]
    math_support._kernel(exprs, 1).forall(z.size)(z, *outs)
    return outs


def _random(dtype, n=300):
    rng = np.random.default_rng(3)
    z = rng.uniform(-4, 4, n) + 1j * rng.uniform(-4, 4, n)
    small = (rng.uniform(-1, 1, n // 4) + 1j * rng.uniform(-1, 1, n // 4)) * 1e-3
    unit = np.exp(1j * rng.uniform(-4, 4, n // 4)) * (1 + rng.uniform(-1e-3, 1e-3, n // 4))
    return np.concatenate([z, small, unit]).astype(dtype)


def _component_errors(out, z, fn, ftype):
    """Per element, the larger of the two components' errors in ulps of max(|re|, |im|) of
    the exact result."""
    fi = np.finfo(ftype)
    worst, at = 0.0, None
    with mp.workdps(40):
        for zi, oi in zip(z, out):
            w = fn(mp.mpc(float(zi.real), float(zi.imag)))
            mag = max(abs(w.real), abs(w.imag))
            if mag == 0:
                continue
            e = max(int(mp.floor(mp.log(mag, 2))), fi.minexp)
            ulp = mp.mpf(2) ** (e - fi.nmant)
            err = max(abs(mp.mpf(float(oi.real)) - w.real), abs(mp.mpf(float(oi.imag)) - w.imag))
            if float(err / ulp) > worst:
                worst, at = float(err / ulp), zi
    return worst, at


@pytest.mark.parametrize("dtype", COMPLEX)
@pytest.mark.parametrize("name", sorted(FUNCS))
def test_accuracy(name, dtype):
    fn, bound = FUNCS[name]
    z = _random(dtype)
    (out,) = _run([f"cmath.{name}(x)"], z, dtype)
    worst, at = _component_errors(out, z, fn, np.dtype(dtype).type(0).real.dtype)
    assert worst <= bound, f"cmath.{name} {np.dtype(dtype).name}: {worst:.2f} ulp at {at!r}"


def _special_grid(dtype):
    return np.array([complex(a, b) for a in SPECIAL for b in SPECIAL], dtype)


@pytest.mark.parametrize("dtype", COMPLEX)
def test_special_values(dtype):
    """Where numba.njit's result component is inf or NaN, or both are zeros, the device's is
    the same (bits: signs of zeros and infinities included; any NaN matching any NaN);
    elsewhere within 8 ulp of the larger component (ln|z| near 1 is more accurate than
    numba.njit's: log(1 + 1e-30j).real is 5e-61 here, 0 there). Where z has a NaN part, the
    sign of an infinite or zero result part may be taken from a NaN the computation made,
    whose sign C99 leaves unspecified (Annex G) and hardware differs on (x86 makes negative
    NaNs, NVIDIA positive ones): only its magnitude is compared there."""
    z = _special_grid(dtype)
    nan_in = np.isnan(z.real) | np.isnan(z.imag)
    exprs = [f"cmath.{n}(x)" for n in sorted(FUNCS)]
    outs = _run(exprs, z, dtype)
    refs = cpu_reference(exprs, z)
    ft = np.dtype(dtype).type(0).real.dtype
    failures = []
    for expr, out, ref in zip(exprs, outs, refs):
        ref = ref.astype(dtype)
        mag = np.maximum(np.abs(ref.real), np.abs(ref.imag)).astype(ft)
        for part in ("real", "imag"):
            o, r = getattr(out, part), getattr(ref, part)
            unsigned = nan_in & (np.isinf(r) | (r == 0))
            o = np.where(unsigned, np.abs(o), o)
            r = np.where(unsigned, np.abs(r), r)
            special = ~np.isfinite(r) | ((r == 0) & (o == 0))
            try:
                assert_same_bits(np.where(special, o, r).astype(ft), r.astype(ft), (z,))
            except AssertionError as e:
                failures.append(f"{expr} {part}: {e}")
            m = np.where(np.isfinite(mag), mag, np.abs(r)).astype(ft)  # the other part infinite
            close = np.abs(o - r)[~special] <= 8 * np.spacing(m[~special])
            if not close.all():
                failures.append(f"{expr} {part}: {np.sum(~close)} beyond 8 ulp")
    assert not failures, "\n".join(failures)


@pytest.mark.parametrize("dtype", COMPLEX)
def test_classification_phase_polar_rect(dtype):
    z = np.concatenate([_special_grid(dtype), _random(dtype, 60)])
    exprs = ["cmath.isnan(x)", "cmath.isinf(x)", "cmath.isfinite(x)"]
    for out, ref in zip(_run(exprs, z, np.bool_), cpu_reference(exprs, z)):
        assert np.array_equal(out, ref)
    exprs = ["cmath.phase(x)", "cmath.polar(x)[0]", "cmath.polar(x)[1]"]
    refs = cpu_reference(exprs, z)
    for expr, out, ref in zip(exprs, _run(exprs, z, refs[0].dtype), refs):
        special = ~np.isfinite(ref) | (ref == 0)
        assert_same_bits(np.where(special, out, ref), ref, (z,))
        assert np.all(np.abs(out - ref)[~special] <= np.spacing(np.abs(ref[~special]))), expr
    x, y = z.real.copy(), z.imag.copy()
    (ref,) = cpu_reference(["cmath.rect(x.real, x.imag)"], z)
    (out,) = _run(["cmath.rect(x.real, x.imag)"], z, ref.dtype)
    for part in ("real", "imag"):
        o, r = (np.ascontiguousarray(getattr(v, part)) for v in (out, ref))
        special = ~np.isfinite(r) | (r == 0)
        assert_same_bits(np.where(special, o, r), r, (x, y))
        assert np.all(np.abs(o - r)[~special] <= 2 * np.spacing(np.abs(r[~special])))


def test_log_near_the_unit_circle_is_accurate():
    """ln|z| as 0.5 log1p(x^2 + y^2 - 1) near |z| = 1 (numba.njit's log(hypot) is not)."""
    t = np.random.default_rng(4).uniform(-3, 3, 200)
    z = np.exp(1j * t) * (1 + np.random.default_rng(5).uniform(-1e-9, 1e-9, 200))
    (out,) = _run(["cmath.log(x)"], z, np.complex128)
    with mp.workdps(50):
        for zi, oi in zip(z, out):
            w = mp.log(mp.mpc(zi.real, zi.imag))
            assert abs(mp.mpf(oi.real) - w.real) <= 2 * abs(w.real) * 2.0**-52, (zi, oi)


@pytest.mark.parametrize("dtype", COMPLEX)
def test_log_with_a_base(dtype):
    """cmath.log(z, base) is log(z) / log(base) (numba.njit's definition): within 8 ulp of
    the larger component of numba.njit's result (each log within 3 ulp, then a division)."""
    z = _random(dtype, 200)
    base = np.roll(z, 7)
    base[:40] = 2.0
    base[40:60] = 10.0 + 0.5j
    exprs = ["cmath.log(x, y)", "cmath.log(x, 2.0)"]
    outs = [np.zeros(z.size, dtype) for _ in exprs]
    math_support._kernel(exprs, 2).forall(z.size)(z, base, *outs)
    expected = cpu_reference(exprs, z, base)
    eps = np.finfo(np.dtype(dtype).type(0).real.dtype).eps
    for got, want in zip(outs, expected):
        want = want.astype(dtype)
        scale = np.maximum(np.abs(want.real), np.abs(want.imag))
        err = np.maximum(np.abs(got.real - want.real), np.abs(got.imag - want.imag))
        assert np.all(err <= 8 * eps * scale), (z[err > 8 * eps * scale], got, want)
    special = np.array([0.0, 1.0, -1.0, np.inf, 1j], dtype)
    got = np.zeros(special.size, dtype)
    math_support._kernel(["cmath.log(x, y)"], 2).forall(special.size)(
        special, np.full(special.size, 2.0, dtype), got)
    (want,) = cpu_reference(["cmath.log(x, y)"], special, np.full(special.size, 2.0, dtype))
    np.testing.assert_allclose(got, want.astype(dtype), rtol=8 * eps)