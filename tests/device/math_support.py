"""Shared helpers of the math tests: kernels made from an expression, operand samples, and
comparisons (bit for bit, or in ulp) against the CPU (numba.njit: CPython / NumPy semantics)."""

import functools
import itertools
import linecache
import math
from fractions import Fraction

import numpy as np
import pytest
from numba import njit
from numba.np import numpy_support

import numba_vulkan as nv

_names = itertools.count()
_PARAMS = ("x", "y", "z")


def _kernel(exprs, nargs, **options):
    """A kernel computing out_j[i] = exprs[j] with x, y, z = a0[i], a1[i], a2[i]."""
    name = f"math_kernel_{next(_names)}"
    args = ", ".join([f"a{j}" for j in range(nargs)] + [f"o{j}" for j in range(len(exprs))])
    body = "".join(f"        {_PARAMS[j]} = a{j}[i]\n" for j in range(nargs))
    body += "".join(f"        o{j}[i] = {e}\n" for j, e in enumerate(exprs))
    src = f"def {name}({args}):\n    i = nv.global_id(0)\n    if i < o0.size:\n{body}"
    filename = f"<{name}>"
    linecache.cache[filename] = (len(src), None, src.splitlines(True), filename)
    namespace = {"nv": nv, **_globals()}
    exec(compile(src, filename, "exec"), namespace)  # noqa: S102
    return nv.jit(**options)(namespace[name])


def _globals():
    import math

    return {"np": np, "math": math}


def cpu_reference(exprs, *args):
    """Per expression, the array numba.njit computes element by element (one compile for all)."""
    params = ", ".join(_PARAMS[: len(args)])
    scalar = njit(eval(f"lambda {params}: ({', '.join(exprs)},)", _globals()))
    rows = [scalar(*(a[i] for a in args)) for i in range(args[0].size)]
    ret = scalar.nopython_signatures[0].return_type
    dtypes = [numpy_support.as_dtype(t) for t in ret.types]
    return [np.array([r[j] for r in rows], dtypes[j]) for j in range(len(exprs))]


def run_many(exprs, *args, **options):
    """[(expr, device result, CPU result)] for each expression, from one kernel."""
    refs = cpu_reference(exprs, *args)
    outs = [np.zeros(args[0].shape, r.dtype) for r in refs]
    _kernel(exprs, len(args), **options).forall(args[0].size)(*args, *outs)
    return list(zip(exprs, outs, refs))


def run_both(expr, *args, **options):
    """(device result, CPU numba.njit result) of out[i] = expr over the operand arrays."""
    ((_, out, ref),) = run_many([expr], *args, **options)
    return out, ref


def run_kernel(expr, *args, dtype=None, **options):
    """The device's out[i] = expr, with out of `dtype` (default: the first operand's)."""
    out = np.zeros(args[0].shape, dtype or args[0].dtype)
    _kernel([expr], len(args), **options).forall(out.size)(*args, out)
    return out


def set_subnormals32(monkeypatch, setting, dtype=np.float32):
    """config.SUBNORMALS32 = setting for one test; "keep" (the fast forms, for a device that
    keeps float32 subnormals) is skipped for float32 on a device that flushes them."""
    from numba_vulkan import config

    if setting == "keep" and dtype == np.float32 and flushes_float32():
        pytest.skip("this device flushes float32 subnormals: the fast forms are not for it")
    monkeypatch.setattr(config, "SUBNORMALS32", setting)


@functools.cache
def flushes_float32():
    """Whether plain float32 arithmetic flushes subnormals on this device: NVIDIA's driver
    offers no DenormPreserve for float32 (lavapipe keeps them). The math library is
    flush-safe there (mathlib/denormals.py); `x * y` itself is not (docs/math.md)."""

    @nv.jit
    def times_one(a, out):
        out[0] = a[0] * a[1]  # a[1] is 1.0, read at run time: nothing to fold

    a = np.array([1e-40, 1.0], np.float32)
    out = np.zeros(2, np.float32)
    times_one.forall(1)(a, out)
    return bool(out[0] != a[0])


def plain_arith_comparable(*arrays):
    """Which rows (first axis) plain float32 arithmetic computes as IEEE 754 says on this
    device: all, except on a device that flushes float32 subnormals, where a row with a
    subnormal float32 (or complex64 part) in any of `arrays` (operands, results) is left out."""
    keep = np.ones(len(arrays[0]), bool)
    if not flushes_float32():
        return keep
    tiny = np.finfo(np.float32).smallest_normal
    for a in map(np.asarray, arrays):
        if a.dtype not in (np.float32, np.complex64):
            continue
        for part in (a.real, a.imag) if a.dtype.kind == "c" else (a,):
            sub = (part != 0) & (np.abs(part) < tiny)
            keep &= ~sub.reshape(len(keep), -1).any(axis=1)
    return keep


def assert_all_same_bits(exprs, *args, plain_arith=False, **options):
    """Bit for bit for every expression; plain_arith: arithmetic the device computes itself,
    so elements with float32 subnormals are left out where the device flushes them."""
    failures = []
    for expr, out, ref in run_many(exprs, *args, **options):
        try:
            if plain_arith:
                keep = plain_arith_comparable(out, ref, *args)
                out, ref, args_kept = out[keep], ref[keep], tuple(a[keep] for a in args)
            else:
                args_kept = args
            assert_same_bits(out, ref, args_kept)
        except AssertionError as e:
            failures.append(f"{expr}: {e}")
    assert not failures, "\n".join(failures)


def assert_same_bits(out, ref, where=()):
    """Bit for bit, except that any NaN matches any NaN (payload and sign are not specified)."""
    if out.dtype.kind == "f":
        both_nan = np.isnan(out) & np.isnan(ref)
        ib = {4: np.int32, 8: np.int64}[out.dtype.itemsize]
        bad = (out.view(ib) != ref.view(ib)) & ~both_nan
    else:
        bad = out != ref
    if bad.any():
        idx = np.flatnonzero(bad)[:8]
        lines = [
            f"  at {i}: operands {[w[i] for w in where]} device {out[i]!r} cpu {ref[i]!r}"
            for i in idx
        ]
        raise AssertionError(f"{bad.sum()} of {bad.size} differ:\n" + "\n".join(lines))


def ulp_error(out, exact):
    """|out - exact| in ulps of the exact value's binade (exact given in float64 or as mpf->float)."""
    out = np.asarray(out)
    ft = out.dtype
    ex = np.asarray(exact, np.float64)
    finfo = np.finfo(ft)
    with np.errstate(all="ignore"):
        e = np.floor(np.log2(np.maximum(np.abs(ex), float(finfo.smallest_normal))))
        ulp = np.exp2(e - (finfo.nmant))
        err = np.abs(out.astype(np.float64) - ex) / ulp
    same_special = (np.isnan(out) & np.isnan(ex)) | (out.astype(np.float64) == ex)
    return np.where(same_special, 0.0, err)


def special_floats(dtype):
    """Edge cases: zeros, infinities, NaN, subnormals, extremes, ties and near-integers."""
    fi = np.finfo(dtype)
    vals = [
        0.0,
        -0.0,
        np.inf,
        -np.inf,
        np.nan,
        1.0,
        -1.0,
        0.5,
        -0.5,
        1.5,
        -1.5,
        2.5,
        -2.5,
        3.5,
        0.49999997,
        0.5000001,
        -0.4,
        2.0,
        3.0,
        10.0,
        1e-3,
        123.456,
        -987.25,
        float(fi.tiny),
        -float(fi.tiny),
        float(fi.smallest_subnormal),
        -float(fi.smallest_subnormal),
        float(fi.tiny) * 0.75,
        float(fi.max),
        -float(fi.max),
        2.0 ** (fi.nmant),
        2.0 ** (fi.nmant) + 1,
        2.0 ** (fi.nmant - 1) + 0.5,
        -(2.0 ** (fi.nmant - 1) + 0.5),
        2.0 ** (fi.nmant + 1),
    ]
    return np.array(vals, dtype)


def random_floats(dtype, n, seed=0, lo_exp=None, hi_exp=None):
    """n floats with random signs, exponents spread over [lo_exp, hi_exp] and random mantissas."""
    fi = np.finfo(dtype)
    rng = np.random.default_rng(seed)
    lo_exp = fi.minexp - fi.nmant if lo_exp is None else lo_exp
    hi_exp = fi.maxexp - 1 if hi_exp is None else hi_exp
    e = rng.integers(lo_exp, hi_exp + 1, n)
    m = rng.uniform(1.0, 2.0, n)
    s = rng.choice([-1.0, 1.0], n)
    with np.errstate(all="ignore"):
        return (s * np.ldexp(m, e)).astype(dtype)


def operands(dtype, n=200, seed=0, **kw):
    return np.concatenate([special_floats(dtype), random_floats(dtype, n, seed, **kw)])


def max_ulp(out, x, ref_fn, dps=40):
    """The largest error of `out` (device results for operands x) in ulps of its dtype, against
    ref_fn evaluated by mpmath at `dps` digits; also returns the worst operand. Where the exact
    result is out of range (overflow) or NaN, the device result must be the IEEE one."""
    import mpmath as mp

    fi = np.finfo(out.dtype)
    worst, at = 0.0, None
    with mp.workdps(dps):
        for xi, oi in zip(x, out):
            exact = ref_fn(mp.mpf(float(xi)))
            if isinstance(exact, mp.mpc):
                exact = mp.nan
            if mp.isnan(exact) or mp.isinf(exact):
                err = 0.0 if (np.isnan(oi) and mp.isnan(exact)) or float(exact) == oi else np.inf
            elif abs(exact) > float(fi.max):
                # rounds to +-inf when beyond max + ulp/2
                limit = mp.mpf(float(fi.max)) * (1 + mp.mpf(2) ** (-fi.nmant - 2))
                err = (
                    0.0
                    if (abs(exact) >= limit and np.isinf(oi))
                    else (0.0 if float(oi) == float(fi.max) * np.sign(float(exact)) else np.inf)
                )
            else:
                e = max(
                    int(mp.floor(mp.log(abs(exact), 2))) if exact != 0 else fi.minexp, fi.minexp
                )
                ulp = mp.mpf(2) ** (e - fi.nmant)
                err = float(abs(mp.mpf(float(oi)) - exact) / ulp) if np.isfinite(oi) else np.inf
            if err > worst:
                worst, at = err, xi
    return worst, at


def exact_fma(a, b, c, dtype):
    """a * b + c rounded once to `dtype` (IEEE 754: ties to even, overflow to infinity, the
    sign of a zero by the rules of addition)."""
    a, b, c = (float(v) for v in (a, b, c))
    if not (math.isfinite(a) and math.isfinite(b)):
        with np.errstate(all="ignore"):  # an infinite or NaN product: exact as written
            return dtype(dtype(a) * dtype(b) + dtype(c))
    if not math.isfinite(c):
        return dtype(c)
    product = Fraction(a) * Fraction(b)
    x = product + Fraction(c)
    if x != 0:
        return rounded(x, dtype)
    both_negative = product == 0 and c == 0 and (math.copysign(1, a) != math.copysign(1, b)) \
        and math.copysign(1, c) < 0  # fmt: skip
    return dtype(-0.0 if both_negative else 0.0)


def rounded(x, dtype):
    """Non-zero Fraction x rounded to nearest (ties to even) in `dtype`, subnormals and
    overflow included; a zero keeps x's sign."""
    if dtype == np.float64:
        try:
            return np.float64(float(x))  # Python rounds a Fraction to float64 correctly
        except OverflowError:
            return np.float64(math.inf if x > 0 else -math.inf)
    m = abs(x)
    if m >= Fraction(2) ** 128 - Fraction(2) ** 103:  # halfway past float32's largest
        v = np.float32(np.inf)
    else:
        e = m.numerator.bit_length() - m.denominator.bit_length()
        e += 1 if Fraction(2) ** (e + 1) <= m else 0
        e -= 1 if Fraction(2) ** e > m else 0
        q = Fraction(2) ** (max(e, -126) - 23)
        n = math.floor(m / q)
        rem = m / q - n
        n += 1 if rem > Fraction(1, 2) or (rem == Fraction(1, 2) and n % 2) else 0
        v = np.float32(float(n * q))
    return -v if x < 0 else v
