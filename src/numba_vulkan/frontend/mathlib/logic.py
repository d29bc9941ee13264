"""NumPy's comparison, logical and bitwise ufuncs, shifts, invert and reciprocal on scalars.

Each computes in the input types of the loop numba.njit picks for the operand
types (``ufunc_find_matching_loop``: int8 with uint8 compares as int16); the
comparisons also take NumPy's mixed int64/uint64 loops, exactly. Used for scalar
calls (``np.less(x, y)``) and for the elements of array expressions and array
ufuncs (frontend/array_exprs.py, array_ufuncs.py).
"""

import functools

import numpy as np
from numba.core import types
from numba.np.numpy_support import ufunc_find_matching_loop

from ... import _core
from .. import arith
from ..errors import unsupported
from ..types import is_float, is_signed

K = _core.Kind
Op = _core.Op


def loop_operands(c, ufunc, mixed=False):
    """The operands converted to the input types of the loop numba.njit picks for `ufunc`
    (NumPy's loop table, e.g. int8 and uint8 compare as int16). A loop with inputs of two
    types (int64 against uint64: comparisons) is refused unless `mixed`."""
    loop = ufunc_find_matching_loop(ufunc, [types.unliteral(t) for t in c.sig.args])
    if loop is None or (len(set(loop.inputs)) != 1 and not mixed):
        raise unsupported(f"'{c.name}' of {', '.join(str(t) for t in c.sig.args)}", c.loc)
    return [arith.convert(c.b, a, c.kind(t)) for a, t in zip(c.args, loop.inputs)]


# What a comparison gives when its signed operand is negative and the other unsigned:
# (result with the signed operand on the left, on the right).
_NEGATIVE_SIDE = {Op.lt: (True, False), Op.le: (True, False), Op.gt: (False, True),
                  Op.ge: (False, True), Op.eq: (False, False), Op.ne: (True, True)}  # fmt: skip


def _compare(ufunc, op):
    """np.less, np.equal, ...: the comparison in the loop's type (NaN compares as in Python;
    bools as 0 and 1); a signed integer against an unsigned one exactly, as Numba's
    mixed loops compare."""

    def lower(c):
        b = c.b
        x, y = loop_operands(c, ufunc, mixed=True)
        kx, ky = b.kind(x), b.kind(y)
        if kx == K.bool:
            x, y = arith.convert(b, x, K.i32), arith.convert(b, y, K.i32)
        if kx == ky or kx == K.bool:
            return b.compare(op, x, y)
        # One signed, one unsigned, of one width (NumPy's mixed loops): a negative signed
        # operand decides; otherwise both compare as unsigned.
        if arith.BITS[kx] != arith.BITS[ky] or is_float(kx) or is_float(ky):
            raise unsupported(f"'{c.name}' of {', '.join(str(t) for t in c.sig.args)}", c.loc)
        left_signed = is_signed(kx)
        signed, unsigned_kind = (x, ky) if left_signed else (y, kx)
        negative = b.compare(Op.lt, signed, arith.const(b, b.kind(signed), 0))
        x, y = arith.convert(b, x, unsigned_kind), arith.convert(b, y, unsigned_kind)
        when_negative = arith.const(b, K.bool, _NEGATIVE_SIDE[op][0 if left_signed else 1])
        return b.select(negative, when_negative, b.compare(op, x, y))

    return lower


def _logical(ufunc, fn):
    """np.logical_and / or / xor / not: of the operands' truth values."""
    return lambda c: fn(c.b, *(arith.truth(c.b, v) for v in loop_operands(c, ufunc)))


def _bitwise(ufunc, op, logical):
    """np.bitwise_and / or / xor: integers in the loop's type, bools as logical operations."""

    def lower(c):
        x, y = loop_operands(c, ufunc)
        return logical(c.b, x, y) if c.b.kind(x) == K.bool else c.b.binary(op, x, y)

    return lower


def _logical_xor(b, x, y):
    return b.select(x, arith.logical_not(b, y), y)


def _invert(c):
    """np.invert / np.bitwise_not: ~x of integers (in the loop's type), `not` of bools."""
    (x,) = loop_operands(c, np.invert)
    if is_float(c.b.kind(x)):
        raise unsupported(f"'{c.name}' of floats", c.loc)
    if c.b.kind(x) == K.bool:
        return arith.logical_not(c.b, x)
    return c.ret(arith.small_int_unary(c.b, Op.not_, x))


def _shift_ufunc(ufunc, op):
    """np.left_shift / right_shift: the operators' shifts in the loop's type."""

    def lower(c):
        x, n = loop_operands(c, ufunc)
        return arith.shift(c.b, op, x, n)

    return lower


def _reciprocal(c):
    """np.reciprocal: 1 / x; of integers as numba.njit computes it: 1.0 / float64(x) converted
    back, so 1 for 1, -1 for -1, 0 for every other nonzero x, and for 0 the conversion of
    an infinity, which LLVM leaves undefined and which differs between host CPUs (x86: the
    integer indefinite, truncated; AVX-512 converts unsigned ones differently): the value
    numba.njit gives on this host (host_reciprocal_of_zero). Integer selects, so no
    driver's out-of-range conversion is involved."""
    b = c.b
    (x,) = loop_operands(c, np.reciprocal)
    k = b.kind(x)
    if is_float(k):
        return b.binary(Op.div, arith.const(b, k, 1.0), x)
    if k == K.bool:
        return x  # reciprocal(True) is True; of False, numba.njit's 0
    loop = ufunc_find_matching_loop(np.reciprocal, [types.unliteral(t) for t in c.sig.args])
    at_zero = host_reciprocal_of_zero(str(loop.inputs[0]))
    r = b.select(b.compare(Op.eq, x, arith.const(b, k, 1)), arith.const(b, k, 1),
                 arith.const(b, k, 0))  # fmt: skip
    if is_signed(k):
        r = b.select(b.compare(Op.eq, x, arith.const(b, k, -1)), arith.const(b, k, -1), r)
    return b.select(b.compare(Op.eq, x, arith.const(b, k, 0)), arith.const(b, k, at_zero), r)


@functools.lru_cache(maxsize=None)
def host_reciprocal_of_zero(dtype_name):
    """np.reciprocal of integer 0 as numba.njit computes it on this host (see _reciprocal)."""
    import numba

    value = numba.njit(lambda v: np.reciprocal(v))(np.dtype(dtype_name).type(0))
    return int(value)


TABLE = {
    np.less: _compare(np.less, Op.lt),
    np.less_equal: _compare(np.less_equal, Op.le),
    np.greater: _compare(np.greater, Op.gt),
    np.greater_equal: _compare(np.greater_equal, Op.ge),
    np.equal: _compare(np.equal, Op.eq),
    np.not_equal: _compare(np.not_equal, Op.ne),
    np.logical_and: _logical(np.logical_and, arith.logical_and),
    np.logical_or: _logical(np.logical_or, arith.logical_or),
    np.logical_xor: _logical(np.logical_xor, _logical_xor),
    np.logical_not: _logical(np.logical_not, arith.logical_not),
    np.bitwise_and: _bitwise(np.bitwise_and, Op.and_, arith.logical_and),
    np.bitwise_or: _bitwise(np.bitwise_or, Op.or_, arith.logical_or),
    np.bitwise_xor: _bitwise(np.bitwise_xor, Op.xor, _logical_xor),
    np.invert: _invert,
    np.left_shift: _shift_ufunc(np.left_shift, Op.shl),
    np.right_shift: _shift_ufunc(np.right_shift, Op.shr),
    np.reciprocal: _reciprocal,
}
