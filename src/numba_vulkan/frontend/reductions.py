"""Reductions and simple methods of arrays and views inside kernels, as KIR loops.

``a.sum()``, ``a.prod()``, ``a.mean()``, ``a.min()``, ``a.max()``,
``a.argmin()``, ``a.argmax()``, ``a.fill(x)`` and the NumPy functions of the
same names (``np.sum(a)``...), and ``np.dot(x, y)`` of two 1-d arrays. Numba's
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
``sum``/``argmin``/``argmax`` along an axis are array expressions
(array_exprs.AxisReduction); other axis arguments and dtype= are refused.
"""

import operator
from collections.abc import Sequence

import numpy as np
from numba.core import types

from .. import _core
from . import arith, status
from .arrays import ArrayArg
from .errors import unsupported
from .types import compute_kind, is_float

Op = _core.Op
K = _core.Kind

METHODS = ("sum", "prod", "mean", "min", "max", "argmin", "argmax", "any", "all", "fill")
FUNCTIONS = {np.sum: "sum", np.prod: "prod", np.mean: "mean", np.min: "min", np.max: "max",
             np.amin: "min", np.amax: "max", np.argmin: "argmin", np.argmax: "argmax",
             np.any: "any", np.all: "all", np.dot: "dot"}  # fmt: skip


class _Indices(Sequence):
    """A loop's indices, loaded from their counters at each use: a body may read an
    element whose computation has loops of its own (an axis reduction, array_exprs.py),
    after which values loaded before would belong to another block."""

    def __init__(self, b, counters):
        self.b, self.counters = b, counters

    def __len__(self):
        return len(self.counters)

    def __getitem__(self, i):
        if isinstance(i, slice):
            return [self.b.load(c) for c in self.counters[i]]
        return self.b.load(self.counters[i])


def for_each(lo, arr, body):
    """Emit nested loops over `arr`'s indices in C order; body(b, indices) emits the body
    (every value it needs across iterations must live in KIR variables; `indices` loads
    the counters anew at each use)."""
    b = lo.b
    ik = arr.index_kind
    counters = [b.var(ik) for _ in range(arr.ndim)]

    def level(d):
        b.store(counters[d], arith.const(b, ik, 0))
        tag = f"red{b.current_block}.{d}"
        header, inner, done = (b.create_block(f"{tag}.{p}") for p in ("header", "body", "done"))
        b.br(header)
        b.set_block(header)
        b.condbr(b.compare(Op.lt, b.load(counters[d]), arr.extents[d]), inner, done)
        b.set_block(inner)
        if d + 1 < arr.ndim:
            level(d + 1)
        else:
            body(b, _Indices(b, counters))
        i = b.load(counters[d])
        b.store(counters[d], b.binary(Op.add, i, arith.const(b, ik, 1)))
        b.br(header)
        b.set_block(done)

    level(0)


def _array_operand(lo, var, loc, what):
    value = lo.statics.get(var.name)
    if not isinstance(value, ArrayArg):
        raise unsupported(f"{what} of {lo.typemap[var.name]}", loc)
    return value


def lower_array_call(lo, expr, fn, fn_ty, sig):
    """Lower a reduction or method call on an array; None where `fn` is not one."""
    from .inline import BoundMethod

    loc = expr.loc
    if isinstance(fn, BoundMethod) and isinstance(fn.receiver[0], ArrayArg):
        key = getattr(fn_ty, "typing_key", None)
        # "array.sum" (Numba's templates) or (types.Array, "sum") (@overload_method)
        name = key.split(".")[-1] if isinstance(key, str) else None
        if isinstance(key, tuple) and len(key) == 2 and isinstance(key[1], str):
            name = key[1]
        if name not in METHODS:
            return None
        arr, args = fn.receiver[0], list(expr.args)
    else:
        try:
            name = FUNCTIONS.get(fn)
        except TypeError:
            return None
        if name is None or not expr.args:
            return None
        if not isinstance(lo.typemap[expr.args[0].name], types.Array):
            return None
        arr, args = _array_operand(lo, expr.args[0], loc, name), list(expr.args[1:])
    if getattr(arr, "complex", False):
        if name in ("sum", "prod", "mean") and not args and not expr.kws:
            return _complex_fold(lo, arr, name, sig, loc), sig.return_type
        if name == "fill" and len(args) == 1:
            return _fill(lo, arr, args, sig, loc), types.none
        raise unsupported(f"'{name}' of a complex array", loc)
    kws = dict(expr.kws)
    if name not in ("fill", "dot") and (args or "axis" in kws) and not expr.vararg and \
            set(kws) <= {"axis"}:  # fmt: skip
        from .array_exprs import axis_reduction

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
        return _mean(lo, arr, rk, loc), sig.return_type
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
    return b.load(acc)


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
        better = _beats(b, v, cur, is_max)
        b.store(best, b.select(arith.logical_or(b, arith.logical_not(b, b.load(started)),
                                                better), v, cur))  # fmt: skip
        b.store(started, arith.const(b, K.bool, True))

    for_each(lo, arr, body)
    from .exceptions import site

    status.check(lo, arith.logical_not(b, b.load(started)), site(lo, StopIteration, (), loc))
    return b.load(best)


def _mean(lo, arr, rk, loc):
    """Numba: c = 0 in float64 (integer arrays) or the dtype; c += v; c / size (NaN if empty)."""
    b = lo.b
    ck = K.f64 if not is_float(arr.compute) else arr.compute
    acc = b.var(ck)
    b.store(acc, arith.const(b, ck, 0))

    def body(b, idx):
        v = arith.convert(b, arr.load(b, idx, None), ck)
        b.store(acc, b.binary(Op.add, b.load(acc), v))

    for_each(lo, arr, body)
    ik = compute_kind(types.intp, lo.mode, loc)
    size = arr.size(b, ik)
    # c / size as Numba types it: a float and an intp divide in float64.
    dk = K.f64
    q = b.binary(Op.div, arith.convert(b, b.load(acc), dk), arith.convert(b, size, dk))
    return arith.convert(b, q, rk)


def _isnan(b, v):
    return b.compare(Op.ne, v, v)


def _beats(b, v, cur, is_max):
    """v > cur (is_max) or v < cur; bools compare as integers (False < True: KIR does not
    order bools)."""
    if b.kind(v) == K.bool:
        v, cur = arith.convert(b, v, K.i32), arith.convert(b, cur, K.i32)
    return b.compare(Op.gt if is_max else Op.lt, v, cur)


def _take(b, v, cur, first, is_max, float_kind):
    """Whether v replaces the best so far: Numba takes the first element, then a better one;
    for floats the first NaN, which it returns at once (so a NaN best is kept)."""
    better = _beats(b, v, cur, is_max)
    if float_kind:
        better = arith.logical_and(
            b, arith.logical_not(b, _isnan(b, cur)), arith.logical_or(b, _isnan(b, v), better)
        )
    return arith.logical_or(b, first, better)


def _raise_if(lo, bad, message, loc):
    """ValueError(message), as numba.njit raises it, where the KIR bool `bad` holds (after a
    loop: only variables are live)."""
    from .exceptions import site

    status.check(lo, bad, site(lo, ValueError, (message,), loc))


def _check_axis_of_1d(lo, axis_var, loc):
    """The axis of a 1-d array's reduction must be 0 or -1: else NumPy's ValueError (an
    AxisError), at compile time for a constant, else where the kernel runs."""
    from .array_exprs import run_time_axis

    axis = lo.static_int(axis_var)
    if axis is None:
        run_time_axis(lo, axis_var, 1, loc)
    elif axis not in (0, -1):
        raise unsupported(f"axis {axis} of a 1-d array (axis is out of bounds for array of "
                          "dimension 1)", loc)  # fmt: skip


def _raise_if_empty(lo, started, name, loc):
    if name in ("min", "max"):
        message = f"zero-size array to reduction operation {name}imum which has no identity"
    else:
        message = f"attempt to get {name} of an empty sequence"
    _raise_if(lo, arith.logical_not(lo.b, lo.b.load(started)), message, loc)


def _minmax(lo, arr, k, is_max, loc):
    b = lo.b
    best, started = b.var(k), b.var(K.bool)
    float_kind = is_float(k)
    b.store(best, arith.const(b, k, float("nan") if float_kind else 0))
    b.store(started, arith.const(b, K.bool, False))

    def body(b, idx):
        v = arith.convert(b, arr.load(b, idx, None), k)
        cur, first = b.load(best), arith.logical_not(b, b.load(started))
        b.store(best, b.select(_take(b, v, cur, first, is_max, float_kind), v, cur))
        b.store(started, arith.const(b, K.bool, True))

    for_each(lo, arr, body)
    _raise_if_empty(lo, started, "max" if is_max else "min", loc)
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
        take = _take(b, v, cur, first, is_max, float_kind)
        b.store(best, b.select(take, v, cur))
        b.store(best_i, b.select(take, i, b.load(best_i)))
        b.store(count, b.binary(Op.add, i, arith.const(b, rk, 1)))
        b.store(started, arith.const(b, K.bool, True))

    for_each(lo, arr, body)
    _raise_if_empty(lo, started, "argmax" if is_max else "argmin", loc)
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
    _raise_if(lo, b.compare(Op.ne, nx, ny),
              "incompatible array sizes for np.dot(a, b) (vector * vector)", loc)
    k = compute_kind(sig.return_type, lo.mode, loc)
    acc = b.var(k)
    b.store(acc, arith.const(b, k, 0))

    def body(b, idx):
        p = b.binary(Op.mul, arith.convert(b, x.load(b, idx, loc), k),
                     arith.convert(b, y.load(b, idx, loc), k))  # fmt: skip
        b.store(acc, b.binary(Op.add, b.load(acc), p))

    for_each(lo, x, body)
    return b.load(acc)
