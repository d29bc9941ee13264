"""Whole-array reductions only (no axis, ddof or dtype), each as Numba's implementation
computes it: NumPy's NaN-skipping ones (``np.nansum``, ``nanprod``, ``nanmin``, ``nanmax``,
``nanmean``), the variance and standard deviation (``np.var``/``a.var()``,
``np.std``/``a.std()``) and ``np.count_nonzero``. frontend/reductions.py dispatches to them."""

from numba.core import types

from .. import _core
from . import arith, bfloat16, status
from .errors import unsupported
from .loops import for_each
from .mathlib import denormals, roots
from .reduction_steps import beats, mean, raise_if
from .types import compute_kind, is_float

Op = _core.Op
K = _core.Kind

#: The names frontend/reductions.py hands to `whole_only`.
WHOLE_ONLY = ("nansum", "nanprod", "nanmin", "nanmax", "nanmean", "var", "std", "count_nonzero")


def whole_only(lo, arr, name, sig, loc):
    """The reductions of WHOLE_ONLY, each as Numba's implementation computes it (its loop
    over np.nditer: C order of the indices, the same accumulator types)."""
    dtype = arr.ty.dtype
    if name != "count_nonzero" and (dtype == types.float16 or bfloat16.is_bfloat16(dtype)):
        raise unsupported(f"'{name}' of a {dtype} array (NumPy rounds every step to {dtype}: "
                          "write the loop, with the accumulator type you want)", loc)
    rk = compute_kind(sig.return_type, lo.mode, loc)
    if name == "count_nonzero":  # np.sum(np.ravel(a) != 0): NaN counts
        return _count(lo, arr, rk, lambda b, v: arith.truth(b, v))
    if name in ("nansum", "nanprod"):
        return _nan_fold(lo, arr, rk, name == "nansum")
    if name in ("nanmin", "nanmax"):
        return _nan_minmax(lo, arr, rk, name == "nanmax", loc)
    if name == "nanmean":
        return _nanmean(lo, arr, rk, loc)
    var = _var(lo, arr, loc)
    if name == "var":
        return arith.convert(lo.b, var, rk)
    # a.var() ** 0.5: sqrt, correctly rounded, is the correctly rounded power
    lo.exact_math = True  # see LoweredKernel.exact_math
    return arith.convert(lo.b, roots.sqrt(denormals.for_lowerer(lo), var), rk)


def _not_nan(b, v):
    """Numba's get_isnan: np.isnan of a float, False for other kinds."""
    if not is_float(b.kind(v)):
        return arith.const(b, K.bool, True)
    return b.compare(Op.eq, v, v)


def _count(lo, arr, k, counted):
    b = lo.b
    n = b.var(k)
    b.store(n, arith.const(b, k, 0))

    def body(b, idx):
        one = arith.convert(b, counted(b, arr.load(b, idx, None)), k)
        b.store(n, b.binary(Op.add, b.load(n), one))

    for_each(lo, arr, body)
    return b.load(n)


def _nan_fold(lo, arr, k, is_sum):
    """np.nansum / np.nanprod: c = 0 (1) of the accumulator type, c += v (c *= v) for each
    element that is not NaN."""
    b = lo.b
    acc = b.var(k)
    b.store(acc, arith.const(b, k, 0 if is_sum else 1))

    def body(b, idx):
        v = arr.load(b, idx, None)
        keep = _not_nan(b, v)
        cur = b.load(acc)
        new = b.binary(Op.add if is_sum else Op.mul, cur, arith.convert(b, v, k))
        b.store(acc, b.select(keep, new, cur))

    for_each(lo, arr, body)
    return b.load(acc)


def _nan_minmax(lo, arr, k, is_max, loc):
    """np.nanmin / np.nanmax (Numba's nan_min_max_factory): ValueError if empty; r = the first
    element; then r = v for each v that is not NaN where not r < v (nanmin; nanmax: not
    r > v): equal values replace r (so [0.0, -0.0] gives -0.0), a NaN r is replaced by the
    first number, and only an array of NaNs gives NaN."""
    b = lo.b
    best, started = b.var(k), b.var(K.bool)
    b.store(best, arith.const(b, k, 0))
    b.store(started, arith.const(b, K.bool, False))

    def body(b, idx):
        v = arith.convert(b, arr.load(b, idx, None), k)
        cur, first = b.load(best), arith.logical_not(b, b.load(started))
        replaces = arith.logical_and(b, _not_nan(b, v),
                                     arith.logical_not(b, beats(b, cur, v, is_max)))
        b.store(best, b.select(arith.logical_or(b, first, replaces), v, cur))
        b.store(started, arith.const(b, K.bool, True))

    for_each(lo, arr, body)
    raise_if(lo, arith.logical_not(b, b.load(started)),
              "zero-size array to reduction operation not possible", loc)
    return b.load(best)


def _nanmean(lo, arr, rk, loc):
    """np.nanmean: c = 0.0 (float64) += v and count += 1 for each v that is not NaN;
    np.divide(c, count) (0 / 0 is NaN, no exception)."""
    b = lo.b
    c, n = b.var(K.f64), b.var(K.f64)
    b.store(c, arith.const(b, K.f64, 0.0))
    b.store(n, arith.const(b, K.f64, 0.0))  # an intp count, exact in float64 below 2^53

    def body(b, idx):
        v = arr.load(b, idx, None)
        keep = _not_nan(b, v)
        cur, count = b.load(c), b.load(n)
        b.store(c, b.select(keep, b.binary(Op.add, cur, arith.convert(b, v, K.f64)), cur))
        b.store(n, b.select(keep, b.binary(Op.add, count, arith.const(b, K.f64, 1.0)), count))

    for_each(lo, arr, body)
    return arith.convert(b, b.binary(Op.div, b.load(c), b.load(n)), rk)


def _var(lo, arr, loc):
    """a.var() as Numba computes it, in float64: m = a.mean() (in the dtype for floats, else
    float64); ssd = sum of (v - m) * (v - m), each square in m's type added in float64;
    ssd / a.size (NaN for an empty array; ZeroDivisionError under error_model='python',
    as in numba.njit)."""
    b = lo.b
    mk = arr.compute if is_float(arr.compute) else K.f64
    m = b.var(mk)
    b.store(m, mean(lo, arr, mk, loc))
    ssd = b.var(K.f64)
    b.store(ssd, arith.const(b, K.f64, 0.0))

    def body(b, idx):
        d = b.binary(Op.sub, arith.convert(b, arr.load(b, idx, None), mk), b.load(m))
        sq = arith.convert(b, b.binary(Op.mul, d, d), K.f64)
        b.store(ssd, b.binary(Op.add, b.load(ssd), sq))

    for_each(lo, arr, body)
    ik = compute_kind(types.intp, lo.mode, loc)
    size = arr.size(b, ik)
    if getattr(lo.root, "error_model", "numpy") == "python":
        from .exceptions import site

        bad = b.compare(Op.eq, size, arith.const(b, ik, 0))
        status.check(lo, bad, site(lo, ZeroDivisionError, ("division by zero",), loc))
        size = arr.size(b, ik)  # after the check's branch (values do not cross blocks)
    return b.binary(Op.div, b.load(ssd), arith.convert(b, size, K.f64))
