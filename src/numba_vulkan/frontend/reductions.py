"""Reductions and simple methods of arrays and views inside kernels, as KIR loops.

``a.sum()``, ``a.prod()``, ``a.mean()``, ``a.min()``, ``a.max()``,
``a.argmin()``, ``a.argmax()``, ``a.fill(x)`` and the NumPy functions of the
same names (``np.sum(a)``...), ``np.dot(x, y)`` of two 1-d arrays, and over whole
arrays only ``np.nansum``, ``np.nanprod``, ``np.nanmin``, ``np.nanmax``,
``np.nanmean``, ``np.var``/``a.var()``, ``np.std``/``a.std()`` and
``np.count_nonzero`` (whole_reductions.py). Numba's
implementations of these are CPU code (nditer, exceptions), so the front end
writes the loops itself, visiting the elements in Numba's order (C order of
the indices, one accumulator, the same operations in the same kinds): integer
results agree with numba.njit bit for bit, and float sums, products and means
over C-contiguous data too. np.dot of floats is a plain loop here, while Numba
calls BLAS, whose summation order is its own: the results may differ in the
last bits.

Where Numba raises ValueError (min, max, argmin, argmax of an empty array;
np.dot of different lengths) the kernel raises it too, with Numba's message
(frontend/exceptions.py: the host raises it at the next synchronisation).

Along an axis (``a.sum(axis=k)``, ``np.argmin(a, axis=k)``...) a reduction is
an array expression (AxisReduction, an ArrayExpr of array_exprs.py): each
element is the reduction of the line through it, the whole-array loop over
that line, run where the element is read. The axis is a constant or a value
known only at run time (RunTimeAxis); dtype= is refused.
"""

import operator

from numba.core import types

from .. import _core
from ..typing.target import ARRAY_FUNCTIONS, ARRAY_METHODS
from . import arith, bfloat16, float16, status
from .array_exprs import ArrayExpr
from .arrays import ArrayArg
from .errors import unsupported
from .inline import BoundMethod
from .loops import for_each
from .reduction_steps import beats, mean, raise_if, raise_if_empty, take
from .types import compute_kind, is_float
from .whole_reductions import WHOLE_ONLY, whole_only

Op = _core.Op
K = _core.Kind


def _array_operand(lo, var, loc, what):
    value = lo.statics.get(var.name)
    if not isinstance(value, ArrayArg):
        raise unsupported(f"{what} of {lo.typemap[var.name]}", loc)
    return value


def lower_array_call(lo, expr, fn, fn_ty, sig):
    """Lower a reduction or method call on an array; None where `fn` is not one."""
    loc = expr.loc
    if isinstance(fn, BoundMethod) and isinstance(fn.receiver[0], ArrayArg):
        key = getattr(fn_ty, "typing_key", None)
        # "array.sum" (Numba's templates) or (types.Array, "sum") (@overload_method)
        name = key.split(".")[-1] if isinstance(key, str) else None
        if isinstance(key, tuple) and len(key) == 2 and isinstance(key[1], str):
            name = key[1]
        if name not in ARRAY_METHODS:
            return None
        arr, args = fn.receiver[0], list(expr.args)
    else:
        try:
            name = ARRAY_FUNCTIONS.get(fn)
        except TypeError:
            return None
        if name is None or not expr.args:
            return None
        if not isinstance(lo.typemap[expr.args[0].name], types.Array):
            return None
        arr, args = _array_operand(lo, expr.args[0], loc, name), list(expr.args[1:])
    others = [_array_operand(lo, a, loc, name) for a in args[:1]] if name == "dot" else []
    bfloat16.check_reduction(name, [arr, *others], loc)
    if getattr(arr, "complex", False):
        if name in ("sum", "prod", "mean") and not args and not expr.kws:
            return _complex_fold(lo, arr, name, sig, loc), sig.return_type
        if name == "fill" and len(args) == 1:
            return _fill(lo, arr, args, sig, loc), types.none
        raise unsupported(f"'{name}' of a complex array", loc)
    if name in WHOLE_ONLY:
        if args or expr.kws or expr.vararg:
            raise unsupported(f"'{name}' of an array with arguments (axis=, ddof=...)", loc)
        return whole_only(lo, arr, name, sig, loc), sig.return_type
    kws = dict(expr.kws)
    if name not in ("fill", "dot") and (args or "axis" in kws) and not expr.vararg and \
            set(kws) <= {"axis"}:  # fmt: skip
        axis_var = kws["axis"] if "axis" in kws else args[0]
        reduced = axis_reduction(lo, arr, name, axis_var, sig, loc)
        if reduced is not None:
            return reduced, sig.return_type
        _check_axis_of_1d(lo, axis_var, loc)
        args, expr_kws = [], ()  # a 1-d array: the whole reduction
    else:
        expr_kws = expr.kws
    if expr_kws or expr.vararg:
        raise unsupported(f"'{name}' of an array with keyword arguments (axis=, dtype=...)", loc)
    if name == "fill":
        return _fill(lo, arr, args, sig, loc), types.none
    if name == "dot":
        if len(args) != 1:
            raise unsupported("np.dot with more than two arguments", loc)
        other = _array_operand(lo, args[0], loc, "np.dot")
        if arr.ndim != 1 or other.ndim != 1:
            raise unsupported("np.dot of arrays that are not both 1-d", loc)
        return _dot(lo, arr, other, sig, loc), sig.return_type
    if args:
        raise unsupported(f"'{name}' of an array with an axis argument", loc)
    rk = compute_kind(sig.return_type, lo.mode, loc)
    if name in ("sum", "prod"):
        return _fold(lo, arr, rk, name), sig.return_type
    if name == "mean":
        return mean(lo, arr, rk, loc), sig.return_type
    if name in ("any", "all"):
        return _any_all(lo, arr, name == "all"), sig.return_type
    if name in ("min", "max"):
        return _minmax(lo, arr, rk, name == "max", loc), sig.return_type
    return _argminmax(lo, arr, rk, name == "argmax", loc), sig.return_type


def _fold(lo, arr, k, name):
    b = lo.b
    acc = b.var(k)
    b.store(acc, arith.const(b, k, 0 if name == "sum" else 1))
    op = Op.add if name == "sum" else Op.mul

    def body(b, idx):
        v = arith.convert(b, arr.load(b, idx, None), k)
        b.store(acc, b.binary(op, b.load(acc), v))

    for_each(lo, arr, body)
    return float16.rounded(b, b.load(acc), arr.ty.dtype)  # float16: in float32, rounded once


def _any_all(lo, arr, is_all):
    """Whether any (all) element is true (nonzero; NaN is true): False (True) if empty."""
    b = lo.b
    acc = b.var(K.bool)
    b.store(acc, arith.const(b, K.bool, is_all))

    def body(b, idx):
        t = arith.truth(b, arr.load(b, idx, None))
        combine = arith.logical_and if is_all else arith.logical_or
        b.store(acc, combine(b, b.load(acc), t))

    for_each(lo, arr, body)
    return b.load(acc)


def builtin_minmax(lo, arr, sig, is_max, loc):
    """Builtin max(a) / min(a) of a 1-d array, as numba.njit iterates it: the first element,
    then each one strictly greater (smaller), so a NaN wins only in first place; an empty
    array raises StopIteration, as in numba.njit."""
    b = lo.b
    if arr.ndim != 1:
        raise unsupported(f"builtin {'max' if is_max else 'min'} of {arr.ty}", loc)
    k = compute_kind(sig.return_type, lo.mode, loc)
    best, started = b.var(k), b.var(K.bool)
    b.store(best, arith.const(b, k, 0))
    b.store(started, arith.const(b, K.bool, False))

    def body(b, idx):
        v = arith.convert(b, arr.load(b, idx, None), k)
        cur = b.load(best)
        better = beats(bfloat16.builder(lo, arr.ty.dtype, b=b), v, cur, is_max)
        b.store(best, b.select(arith.logical_or(b, arith.logical_not(b, b.load(started)),
                                                better), v, cur))  # fmt: skip
        b.store(started, arith.const(b, K.bool, True))

    for_each(lo, arr, body)
    from .exceptions import site

    status.check(lo, arith.logical_not(b, b.load(started)), site(lo, StopIteration, (), loc))
    return b.load(best)


def _check_axis_of_1d(lo, axis_var, loc):
    """The axis of a 1-d array's reduction must be 0 or -1: else NumPy's ValueError (an
    AxisError), at compile time for a constant, else where the kernel runs."""
    axis = lo.static_int(axis_var)
    if axis is None:
        run_time_axis(lo, axis_var, 1, loc)
    elif axis not in (0, -1):
        raise unsupported(f"axis {axis} of a 1-d array (axis is out of bounds for array of "
                          "dimension 1)", loc)  # fmt: skip


def _minmax(lo, arr, k, is_max, loc):
    b = lo.b
    best, started = b.var(k), b.var(K.bool)
    float_kind = is_float(k)
    b.store(best, arith.const(b, k, float("nan") if float_kind else 0))
    b.store(started, arith.const(b, K.bool, False))

    def body(b, idx):
        v = arith.convert(b, arr.load(b, idx, None), k)
        cur, first = b.load(best), arith.logical_not(b, b.load(started))
        cb = bfloat16.builder(lo, arr.ty.dtype, b=b)  # a bfloat16's subnormals compared on bits
        b.store(best, b.select(take(cb, v, cur, first, is_max, float_kind), v, cur))
        b.store(started, arith.const(b, K.bool, True))

    for_each(lo, arr, body)
    raise_if_empty(lo, started, "max" if is_max else "min", loc)
    return b.load(best)


def _argminmax(lo, arr, rk, is_max, loc):
    b = lo.b
    k = arr.compute
    best, best_i, count, started = b.var(k), b.var(rk), b.var(rk), b.var(K.bool)
    b.store(best, arith.const(b, k, 0))
    b.store(best_i, arith.const(b, rk, 0))
    b.store(count, arith.const(b, rk, 0))
    b.store(started, arith.const(b, K.bool, False))
    float_kind = is_float(k)

    def body(b, idx):
        v = arr.load(b, idx, None)
        cur, first, i = b.load(best), arith.logical_not(b, b.load(started)), b.load(count)
        taken = take(bfloat16.builder(lo, arr.ty.dtype, b=b), v, cur, first, is_max, float_kind)
        b.store(best, b.select(taken, v, cur))
        b.store(best_i, b.select(taken, i, b.load(best_i)))
        b.store(count, b.binary(Op.add, i, arith.const(b, rk, 1)))
        b.store(started, arith.const(b, K.bool, True))

    for_each(lo, arr, body)
    raise_if_empty(lo, started, "argmax" if is_max else "argmin", loc)
    return b.load(best_i)


def _complex_fold(lo, arr, name, sig, loc):
    """sum/prod/mean of a complex array: Numba's complex + and * (complexnum.py) in order;
    mean divides the sum by (size + 0j) with Numba's complex division."""
    from . import complexnum

    b = lo.b
    ty = sig.return_type
    k = complexnum.part_kind(ty, lo.mode, loc)
    acc = (b.var(k), b.var(k))
    b.store(acc[0], arith.const(b, k, 1.0 if name == "prod" else 0.0))
    b.store(acc[1], arith.const(b, k, 0.0))
    op = operator.mul if name == "prod" else operator.add

    def body(b, idx):
        v = complexnum.cast(lo, arr.load(b, idx, loc), arr.ty.dtype, ty, loc)
        r = complexnum.binop(lo, op, (b.load(acc[0]), b.load(acc[1])), v, sig, loc, name)
        b.store(acc[0], r[0])
        b.store(acc[1], r[1])

    for_each(lo, arr, body)
    total = (b.load(acc[0]), b.load(acc[1]))
    if name != "mean":
        return total
    size = arith.convert(b, arr.size(b, compute_kind(types.intp, lo.mode, loc)), k)
    return complexnum.binop(lo, operator.truediv, total, (size, arith.const(b, k, 0.0)),
                            sig, loc, "/")  # fmt: skip


def _fill(lo, arr, args, sig, loc):
    if len(args) != 1:
        raise unsupported("'fill' with other than one argument", loc)
    b = lo.b
    value_ty = lo.typemap[args[0].name]
    value = lo.cast(lo.load_var(args[0].name), value_ty, arr.ty.dtype, loc)
    parts = value if isinstance(value, tuple) else (value,)  # complex: (re, im)
    held = [b.var(b.kind(p)) for p in parts]
    for var, p in zip(held, parts):
        b.store(var, p)

    def body(b, idx):
        loaded = tuple(b.load(v) for v in held)
        arr.store(b, idx, loaded if isinstance(value, tuple) else loaded[0], loc)

    for_each(lo, arr, body)
    return None


def _dot(lo, x, y, sig, loc):
    b = lo.b
    nx, ny = x.extents[0], y.extents[0]
    if b.kind(nx) != b.kind(ny):  # one array indexed in 64 bits, the other in 32
        nx, ny = arith.convert(b, nx, K.i64), arith.convert(b, ny, K.i64)
    raise_if(lo, b.compare(Op.ne, nx, ny),
              "incompatible array sizes for np.dot(a, b) (vector * vector)", loc)
    k = compute_kind(sig.return_type, lo.mode, loc)
    acc = b.var(k)
    b.store(acc, arith.const(b, k, 0))

    def body(b, idx):
        p = b.binary(Op.mul, arith.convert(b, x.load(b, idx, loc), k),
                     arith.convert(b, y.load(b, idx, loc), k))  # fmt: skip
        b.store(acc, b.binary(Op.add, b.load(acc), p))

    for_each(lo, x, body)
    return float16.rounded(b, b.load(acc), sig.return_type)


# ------------------------------------------------------------------ along an axis


class AxisReduction(ArrayExpr):
    """``a.sum(axis=k)``, ``np.argmin(a, axis=k)``, ``a.max(k)``... (sum, prod, mean, min,
    max, argmin, argmax, any, all), read element by element: each element is the
    reduction of the line of `arr` through it along `axis`, computed where it is read, in
    the line's index order from zero, as numba.njit adds (its result starts at 0 and
    takes the elements in order) and as the whole-array reductions above do (min and
    max propagate NaN, and raise on an empty line as NumPy does)."""

    def __init__(self, lo, arr, axis, name, ty, loc):  # noqa: D107 -- no ArrayExpr.__init__
        if getattr(arr, "complex", False) or getattr(arr, "record", False):
            raise unsupported(f"'{name}' with an axis of {arr.ty}", loc)
        self.lo, self.arr, self.axis, self.op_name, self.loc = lo, arr, axis, name, loc
        where = "an axis known at run time" if isinstance(axis, RunTimeAxis) else f"axis {axis}"
        self.name, self.ty, self.ndim = f"<{name} along {where}>", ty, ty.ndim
        self.complex = self.record = False
        self.written = False
        self.storage = self.compute = compute_kind(ty.dtype, lo.mode, loc)
        self.index_kind = arr.index_kind

    @property
    def extents(self):
        if not isinstance(self.axis, RunTimeAxis):
            return [n for d, n in enumerate(self.arr.extents) if d != self.axis]
        # An axis known at run time: extent j is the array's j or j + 1.
        b, ext = self.lo.b, list(self.arr.extents)
        axis = b.load(self.axis.var)
        return [b.select(b.compare(Op.lt, arith.const(b, b.kind(axis), j), axis), ext[j],
                         ext[j + 1]) for j in range(len(ext) - 1)]  # fmt: skip

    def leaves(self):
        return self.arr.leaves() if isinstance(self.arr, ArrayExpr) else iter((self.arr,))

    def load(self, b, indices, loc):
        line = _Line(self.lo, self.arr, self.axis, status.spill(self.lo, list(indices)))
        name, k = self.op_name, self.compute
        if name in ("sum", "prod"):
            return _fold(self.lo, line, k, name)
        if name == "mean":
            return mean(self.lo, line, k, loc)
        if name in ("any", "all"):
            return _any_all(self.lo, line, name == "all")
        if name in ("min", "max"):
            return _minmax(self.lo, line, k, name == "max", loc)
        return _argminmax(self.lo, line, k, name == "argmax", loc)


class _Line(ArrayArg):
    """The 1-d line of `arr` along `axis` through the element whose other indices are held
    in `slots` (variables). `axis`: an int, or a RunTimeAxis."""

    def __init__(self, lo, arr, axis, slots):  # noqa: D107 -- no ArrayArg.__init__
        self.lo, self.arr, self.axis, self.slots = lo, arr, axis, slots
        self.name, self.ndim, self.ty = arr.name, 1, arr.ty.copy(ndim=1, layout="A")
        self.complex = self.record = False
        self.compute, self.storage = arr.compute, arr.storage
        self.index_kind = arr.index_kind

    @property
    def extents(self):
        ext = list(self.arr.extents)
        if not isinstance(self.axis, RunTimeAxis):
            return [ext[self.axis]]
        b = self.lo.b
        axis = b.load(self.axis.var)
        n = ext[-1]
        for d in range(len(ext) - 2, -1, -1):
            n = b.select(b.compare(Op.eq, axis, arith.const(b, b.kind(axis), d)), ext[d], n)
        return [n]

    def load(self, b, indices, loc):
        rest = [b.load(v) for v in self.slots]
        if not isinstance(self.axis, RunTimeAxis):
            rest.insert(self.axis, indices[0])
            return self.arr.load(b, rest, loc)
        # Index d of the element: the others' d before the axis, the line's at it, the
        # others' d - 1 after it.
        axis = b.load(self.axis.var)
        # One kind for the selects (the line's counter and constant indices may differ).
        t = arith.convert(b, indices[0], self.index_kind)
        rest = [arith.convert(b, v, self.index_kind) for v in rest]
        full = []
        for d in range(len(rest) + 1):
            c = arith.const(b, b.kind(axis), d)
            after = t if d == 0 else b.select(b.compare(Op.eq, axis, c), t, rest[d - 1])
            full.append(after if d == len(rest) else
                        b.select(b.compare(Op.gt, axis, c), rest[d], after))  # fmt: skip
        return self.arr.load(b, full, loc)


def axis_reduction(lo, arr, name, axis_var, sig, loc):
    """The AxisReduction of ``arr.name(axis=axis_var)`` (a constant axis, or one known at
    run time), or None where the result is a scalar (a 1-d array: the whole reduction)."""
    if not isinstance(sig.return_type, types.Array):
        return None
    axis = lo.static_int(axis_var)
    if axis is None:
        return AxisReduction(lo, arr, run_time_axis(lo, axis_var, arr.ndim, loc), name,
                             sig.return_type, loc)  # fmt: skip
    if not -arr.ndim <= axis < arr.ndim:
        raise unsupported(f"'{name}' with axis {axis} of a {arr.ndim}-d array", loc)
    return AxisReduction(lo, arr, axis % arr.ndim, name, sig.return_type, loc)


def run_time_axis(lo, axis_var, ndim, loc):
    """A RunTimeAxis for an axis of an `ndim`-d array known only at run time, made
    non-negative; NumPy's ValueError (an AxisError) where the kernel runs if it is out of
    range."""
    from .exceptions import site

    b = lo.b
    value = lo.load_var(axis_var.name)
    k = b.kind(value)
    bad = arith.logical_or(b, b.compare(Op.lt, value, arith.const(b, k, -ndim)),
                           b.compare(Op.ge, value, arith.const(b, k, ndim)))  # fmt: skip
    wrapped = b.select(b.compare(Op.lt, value, arith.const(b, k, 0)),
                       b.binary(Op.add, value, arith.const(b, k, ndim)), value)  # fmt: skip
    held = b.var(k)
    b.store(held, wrapped)
    message = f"axis is out of bounds for array of dimension {ndim}"
    status.check(lo, bad, site(lo, ValueError, (message,), loc))
    return RunTimeAxis(held)


class RunTimeAxis:
    """The axis of a reduction known only where the kernel runs: the KIR variable holding
    it, 0 to ndim - 1."""

    def __init__(self, var):  # noqa: D107
        self.var = var
