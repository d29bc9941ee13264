"""Complex ``**`` (and ``**=``, ``pow(z, w)``) in kernels against CPU numba.njit.

numba.njit lowers z ** w (numba/cpython/numbers.py, complex_power_impl) as the complex
product z * z when w is exactly 2 + 0j, and otherwise calls numba_cpow (_helperlib.c):
CPython's _Py_c_pow in float64 (complex64 widened to complex128, each part rounded back to
float32 once), 1 + 0j for a zero exponent, 0 for a zero base, and NaN + NaN j where CPython
would raise (a zero base with a negative or non-real exponent: numba_cpow returns NaN, it
does not raise), else the polar formula

    r = hypot(z.real, z.imag), len = pow(r, c), t = atan2(z.imag, z.real), phase = t c
    if d != 0: len /= exp(t d), phase += d log(r)
    z ** w = len cos(phase) + len sin(phase) j        (w = c + d j)

(numba_cpowf then builds the complex64 result as C's `re + _Complex_I * im` in float, so its
real part is NaN wherever the imaginary part is inf or NaN, and -0 becomes +0 beside an
imaginary part >= +0: the kernel does the same.)

The kernel does the same steps with the math library's functions (mathlib/cmathlib.py,
power_). There is no other integer-exponent path in numba.njit (z ** 3 is the polar
formula, not z * z * z): bit for bit are the exponent 2 + 0j and 0, and the zero bases.

Elsewhere the kernel's libm functions (each within 1 ulp) are not glibc's bit for bit, and
the formula magnifies a one-ulp difference in its steps: an ulp of hypot becomes |c| ulps of
len and |d| ulps (absolute) of the phase through log; an ulp of atan2 or log becomes |c t|,
|d t| or |d log r| ulps of the phase, which rotates the result by that much; the phase's own
rounding counts |phase| ulps. So the bound is relative to the operands' condition

    M = 1 + |c| + |d| + |c t| + |d t| + |d log r| + |phase|

as |out - njit| <= 2 M ulps of the larger component of njit's result, per component.
Measured on lavapipe (600,000 random pairs, seeds 100-119 of random_pairs): at most 1.42 M;
in ulps, at most 22 for |z| <= 5, |w| <= 4 uniform, 37 with |z| in [0.01, 7], 137 with |z|
from e^-30 to e^30; 88 % of the pairs bit for bit. complex64 computes in float64 and rounds
each part once, so it agrees with njit bit for bit but where that float64 noise crosses a
float32 rounding boundary: bound 1 ulp + the same 2 M float64 ulps in float32 ulps (measured:
every pair bit for bit, the special grid included). Where 2 M float64 ulps reach half the
magnitude (exponents like 1e300 with a non-trivial angle) the phase is noise on the CPU too:
there only the class (NaN, inf, zero, finite) is compared, not signs or values.
"""

import functools

import numpy as np
import pytest
from conftest import requires_feature
from numba import njit

import numba_vulkan as nv
from numba_vulkan import cuda

pytestmark = [pytest.mark.device, pytest.mark.usefixtures("device")]

# complex64 too: numba.njit computes it in float64, and so does the kernel where it can
COMPLEX = [
    pytest.param(np.complex64, marks=requires_feature("float64")),
    pytest.param(np.complex128, marks=requires_feature("float64")),
]
EPS64 = 2.0**-52


@nv.jit
def k_pow(a, b, out):
    i = nv.global_id(0)
    if i < out.size:
        out[i] = a[i] ** b[i]


@njit
def cpu_pow(a, b, out):
    for i in range(out.size):
        out[i] = a[i] ** b[i]


@njit
def forms_at(a, b, out, i):
    """``**=``, pow(), literal exponents: Numba types each as complex ** complex. One
    function for both sides: an njit function is a device function in a kernel."""
    z = a[i]
    z **= b[i]
    out[i, 0] = z
    out[i, 1] = pow(a[i], b[i])
    out[i, 2] = a[i] ** 2
    out[i, 3] = a[i] ** 3
    out[i, 4] = a[i] ** -1
    out[i, 5] = a[i] ** 0.5
    out[i, 6] = a[i] ** 1j
    out[i, 7] = 2 ** a[i]


@nv.jit
def k_forms(a, b, out):
    i = nv.global_id(0)
    if i < a.size:
        forms_at(a, b, out, i)


@njit
def cpu_forms(a, b, out):
    for i in range(a.size):
        forms_at(a, b, out, i)


# ---------------------------------------------------------------- operands


def _specials(dtype):
    big, tiny = (1e300, 1e-300) if dtype == np.complex128 else (1e30, 1e-30)
    sub = 5e-324 if dtype == np.complex128 else 1e-45
    return [0.0, -0.0, 1.0, -1.0, 0.5, 2.0, -3.0, big, tiny, sub, np.inf, -np.inf, np.nan]


def special_grid(dtype):
    """Every base from the special parts (0, -0, +-1, 1j, large, tiny, subnormal, inf,
    NaN) with every exponent from them and the integers -5..5 (imaginary 0, -0, 1, NaN)."""
    s = _specials(dtype)
    bases = [complex(x, y) for x in s for y in s]
    exps = [complex(x, y) for x in s + [float(n) for n in range(-5, 6)]
            for y in (0.0, -0.0, 1.0, -1.0, np.nan)]  # fmt: skip
    a = np.array([z for z in bases for _ in exps], dtype)
    b = np.array([w for _ in bases for w in exps], dtype)
    return a, b


def random_pairs(dtype, n=6000, seed=5):
    rng = np.random.default_rng(seed)
    a = rng.uniform(-5, 5, n) + 1j * rng.uniform(-5, 5, n)
    # magnitudes over many binades, exponents with real and imaginary parts up to 4
    far = np.exp(rng.uniform(-30, 30, n // 3)) * np.exp(1j * rng.uniform(-4, 4, n // 3))
    a = np.concatenate([a, far])
    m = a.size
    b = rng.uniform(-4, 4, m) + 1j * rng.uniform(-4, 4, m)
    # integral real exponents 0..5 and negatives, with a zero imaginary part
    ints = rng.integers(-5, 6, m // 3)
    b[: ints.size] = ints
    b[ints.size : ints.size + 50] = 1j
    b[ints.size + 50 : ints.size + 100] = 0.5
    # bases on the unit circle and on the axes
    a[-200:-100] = np.exp(1j * rng.uniform(-4, 4, 100))
    a[-100:] = rng.uniform(-3, 3, 100) * np.array([1, 1j])[rng.integers(0, 2, 100)]
    return a.astype(dtype), b.astype(dtype)


# ---------------------------------------------------------------- comparison


def condition(a, b):
    """M of the module docstring, per pair (in float64)."""
    a, b = a.astype(np.complex128), b.astype(np.complex128)
    with np.errstate(all="ignore"):
        t, lr = np.angle(a), np.log(np.abs(a))
        c, d = b.real, b.imag
        phase = c * t + d * lr
        return (1 + np.abs(c) + np.abs(d) + np.abs(c * t) + np.abs(d * t) + np.abs(d * lr)
                + np.abs(phase))


def exact_pairs(a, b):
    """Where numba.njit's result comes without libm: w == 2 + 0j (the product), w == 0,
    a zero base."""
    return ((b.real == 2) & (b.imag == 0)) | (b == 0) | (a == 0)


def _bits(x):
    return x.view({4: np.int32, 8: np.int64}[x.dtype.itemsize])


def _class(v):
    return np.select([np.isnan(v), np.isinf(v), v == 0], [0, 1, 2], 3)


def compare(out, ref, a, b):
    """The failures (strings) of out against numba.njit's ref; the worst error in ulps of the
    larger component and the worst error / M (finite results, non-exact pairs)."""
    ft = np.dtype(out.dtype).type(0).real.dtype
    eps = np.finfo(ft).eps
    m = condition(a, b)
    m = np.where(np.isnan(m), np.inf, m)  # inf * 0 in M (an infinite or NaN operand): noise
    tol = 2 * m * EPS64 / eps + (1 if ft == np.float32 else 0)
    noise = 2 * m * EPS64 >= 0.5  # the phase is lost: CPU and kernel signs are noise
    exact = exact_pairs(a, b)
    with np.errstate(all="ignore"):
        mag = np.maximum(np.abs(ref.real), np.abs(ref.imag)).astype(ft)
    failures, worst, worst_m = [], 0.0, 0.0
    for part in ("real", "imag"):
        o, r = np.ascontiguousarray(getattr(out, part)), np.ascontiguousarray(getattr(ref, part))
        nan_o, nan_r = np.isnan(o), np.isnan(r)
        special = nan_r | np.isinf(r) | (r == 0) | exact
        same = (_bits(o) == _bits(r)) | (nan_o & nan_r)
        bad = special & ~same & (~noise | exact)
        # phase noise: only the class (NaN, inf, zero, finite nonzero) must agree
        bad |= special & noise & (_class(o) != _class(r))
        fin = ~special & np.isfinite(mag) & (mag > 0)
        with np.errstate(all="ignore"):
            err = np.abs(o.astype(np.float64) - r) / np.spacing(mag).astype(np.float64)
        err = np.where(np.isnan(err), np.inf, err)
        bad |= fin & ~noise & (err > tol)
        bad |= fin & noise & (np.isnan(o) | np.isinf(o))
        sel = fin & ~noise
        if sel.any():
            worst = max(worst, float(err[sel].max()))
            worst_m = max(worst_m, float((err[sel] / m[sel]).max()))
        for i in np.flatnonzero(bad)[:6]:
            failures.append(f"{part} at {i}: {a[i]!r} ** {b[i]!r}: kernel {out[i]!r} "
                            f"njit {ref[i]!r} (tol {tol[i]:.3g} ulp)")  # fmt: skip
        if bad.sum() > 6:
            failures.append(f"{part}: {bad.sum()} differ")
    return failures, worst, worst_m


def run_pow(a, b):
    out = np.zeros(a.size, _result_dtype(a.dtype, b.dtype))
    ref = out.copy()
    k_pow.forall(a.size)(a, b, out)
    cpu_pow(a, b, ref)
    return out, ref


@functools.cache
def _result_dtype(ta, tb):
    """The dtype numba.njit gives a ** b for elements of dtypes ta, tb."""
    from numba.np import numpy_support

    one = njit(lambda x, y: x**y)
    one.compile((numpy_support.from_dtype(ta), numpy_support.from_dtype(tb)))
    return numpy_support.as_dtype(one.nopython_signatures[0].return_type)


# ---------------------------------------------------------------- tests


@pytest.mark.parametrize("dtype", COMPLEX)
def test_special_values(dtype):
    """The special grid, bit for bit where njit's result is special (NaN, inf, zero) or
    computed without libm; within the bound elsewhere."""
    a, b = special_grid(dtype)
    out, ref = run_pow(a, b)
    failures, _, _ = compare(out, ref, a, b)
    assert not failures, "\n".join(failures)
    ex = exact_pairs(a, b)
    # the exact paths: w = 2 + 0j is the product z * z in the parts' width, w = 0 is 1 + 0j
    assert (ex.sum() > 1000) and np.isnan(ref[(a == 0) & (b == -1)]).all()


@pytest.mark.parametrize("dtype", COMPLEX)
def test_random_operands(dtype):
    a, b = random_pairs(dtype)
    out, ref = run_pow(a, b)
    failures, worst, worst_m = compare(out, ref, a, b)
    assert not failures, "\n".join(failures)
    # the measured errors (module docstring): complex64 agrees bit for bit here
    if dtype == np.complex64:
        assert worst <= 1, worst
    else:
        assert worst_m <= 2, worst_m
    ints = (b.imag == 0) & (b.real == np.round(b.real)) & (np.abs(b.real) <= 5)
    assert ints.sum() > 1000


@pytest.mark.parametrize("dtype", COMPLEX)
def test_exponent_two_is_the_product_bit_for_bit(dtype):
    a, _ = random_pairs(dtype, 500)
    b = np.full(a.size, 2, dtype)
    out, ref = run_pow(a, b)
    for part in ("real", "imag"):
        o, r = (np.ascontiguousarray(getattr(v, part)) for v in (out, ref))
        assert np.array_equal(_bits(o), _bits(r))
    x, y = a.real, a.imag  # numba.njit: (ac - bd) + (ad + bc) j, in the parts' width
    square = (x * x - y * y) + 1j * (x * y + y * x).astype(x.dtype)
    assert np.array_equal(out.real, square.real) and np.array_equal(out.imag, square.imag)


@pytest.mark.parametrize("dtype", COMPLEX)
def test_inplace_pow_builtin_and_literal_exponents(dtype):
    """``z **= w``, ``pow(z, w)``, ``z ** 2`` / ``3`` / ``-1`` / ``0.5`` / ``1j`` and
    ``2 ** z``: numba.njit types each as complex ** complex (the literal made complex)."""
    a, b = random_pairs(dtype, 1500, seed=9)
    s = special_grid(dtype)[0][::40]
    a = np.concatenate([a, s])
    b = np.concatenate([b, s[::-1]])
    out = np.zeros((a.size, 8), np.complex128)
    ref = out.copy()
    k_forms.forall(a.size)(a, b, out)
    cpu_forms(a, b, ref)
    columns = [(a, b), (a, b), (a, 2), (a, 3), (a, -1), (a, 0.5), (a, 1j), (2, a)]
    for j, (x, y) in enumerate(columns):
        # each in the type numba.njit gives it (complex64 ** 2 is complex128: int64 literal)
        rt = _result_dtype(np.asarray(x).dtype, np.asarray(y).dtype)
        x, y = (np.broadcast_to(np.asarray(v), a.shape).astype(rt) for v in (x, y))
        failures, _, _ = compare(out[:, j].astype(rt), ref[:, j].astype(rt), x, y)
        assert not failures, f"column {j}:\n" + "\n".join(failures)


MIXED = [
    (np.complex128, np.float64),
    (np.complex128, np.int64),
    (np.complex64, np.float32),
    (np.complex64, np.float64),  # complex128 on the CPU
    (np.complex64, np.int64),  # complex128 on the CPU
    (np.complex64, np.int8),
    (np.float64, np.complex128),
    (np.int64, np.complex64),  # complex128 on the CPU
]


@pytest.mark.parametrize("ta, tb", MIXED, ids=lambda t: np.dtype(t).name)
@requires_feature("float64")
def test_mixed_operand_types(ta, tb):
    """complex ** float / int and real ** complex: Numba's typing converts the real operand
    to the complex type of the result (complex64 with a float64 or int64 gives complex128)."""
    rng = np.random.default_rng(4)
    n = 600

    def operand(t, scale):
        if np.dtype(t).kind == "c":
            return (rng.uniform(-scale, scale, n) + 1j * rng.uniform(-scale, scale, n)).astype(t)
        if np.dtype(t).kind == "i":
            return rng.integers(-5, 6, n).astype(t)
        return np.concatenate([rng.integers(-5, 6, n // 2),
                               rng.uniform(-4, 4, n - n // 2)]).astype(t)  # fmt: skip

    a, b = operand(ta, 5), operand(tb, 4)
    b[:5] = 0
    if np.dtype(ta).kind != "c":
        a[5:10] = 0  # 0 ** complex: NaN + NaN j for a non-real or negative exponent
    out, ref = run_pow(a, b)
    assert out.dtype == ref.dtype
    ct = out.dtype
    failures, _, _ = compare(out, ref, a.astype(ct), b.astype(ct))
    assert not failures, "\n".join(failures)


@pytest.mark.parametrize("dtype", COMPLEX)
def test_zero_base_is_nan_as_njit_not_an_exception(dtype):
    """CPython raises ZeroDivisionError for 0j ** -1 and 0j ** 1j; numba.njit does not (its
    numba_cpow turns CPython's EDOM into NaN + NaN j), and neither does the kernel."""
    with pytest.raises(ZeroDivisionError):
        complex(0) ** complex(-1)
    a = np.zeros(6, dtype)
    a[3:] = -0.0
    b = np.array([-1, 1j, -2.5 + 1j, 3, 0.5, 0], dtype)
    out, ref = run_pow(a, b)  # no exception on either side
    assert np.isnan(ref[:3].real).all() and np.isnan(ref[:3].imag).all()
    assert np.isnan(out[:3].real).all() and np.isnan(out[:3].imag).all()
    assert np.array_equal(out[3:], ref[3:]) and list(out[3:]) == [0, 0, 1]


@cuda.jit
def cuda_pow(a, b, out):
    i = cuda.grid(1)
    if i < out.size:
        out[i] = a[i] ** b[i]


@cuda.jit
def cuda_ipow(x, y):
    i = cuda.grid(1)
    if i < x.size:
        x[i] **= y[i]


@pytest.mark.parametrize("dtype", COMPLEX)
def test_numba_cuda_spelling(dtype):
    """A numba.cuda program, only the import changed: the result is numba.njit's."""
    a, b = random_pairs(dtype, 900, seed=12)
    out = cuda.device_array(a.size, dtype)
    threads = 128
    cuda_pow[(a.size + threads - 1) // threads, threads](a, b, out)
    ref = np.zeros_like(a)
    cpu_pow(a, b, ref)
    got = out.copy_to_host()
    failures, _, _ = compare(got, ref, a, b)
    assert not failures, "\n".join(failures)
    x = cuda.to_device(a)
    cuda_ipow[(a.size + threads - 1) // threads, threads](x, b)
    inplace = x.copy_to_host()
    for part in ("real", "imag"):  # the same code as out[i] = a[i] ** b[i]: the same bits
        o, r = (np.ascontiguousarray(getattr(v, part)) for v in (inplace, got))
        assert ((_bits(o) == _bits(r)) | (np.isnan(o) & np.isnan(r))).all()
