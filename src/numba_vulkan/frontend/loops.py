"""`for ... in range(...)`: range objects, their iterators and iternext.

Numba's IR spells a range loop as range(...) -> getiter -> (in the loop
header) iternext -> pair_first / pair_second. Each of these Numba variables
is a small tree of KIR variables: a range is (start, stop, step), an iterator
is (cursor, stop, step), and iternext's pair is (value, valid). iternext
tests the cursor against stop (cur < stop for a positive step, cur > stop for
a negative one, and never valid for a zero step), yields the cursor and
advances it by step. When the step is a literal, only its sign's test is built.
"""

from .. import _core
from . import arith
from .types import compute_kind

Op = _core.Op


def lower_range(lowerer, expr, sig, target):
    """range(stop), range(start, stop) or range(start, stop, step) -> (start, stop, step)."""
    b = lowerer.b
    k = compute_kind(sig.return_type.dtype, lowerer.mode, expr.loc)
    args = [arith.convert(b, lowerer.load_cast(a, t), k) for a, t in zip(expr.args, sig.args)]
    step_sign = 1
    if len(args) == 1:
        start, stop, step = arith.const(b, k, 0), args[0], arith.const(b, k, 1)
    elif len(args) == 2:
        (start, stop), step = args, arith.const(b, k, 1)
    else:
        start, stop, step = args
        value = lowerer.static_int(expr.args[2])
        step_sign = None if value is None else (value > 0) - (value < 0)
    lowerer.step_sign[target] = step_sign
    return (start, stop, step)


def lower_getiter(lowerer, expr, target):
    start, stop, step = lowerer.load_var(expr.value.name)
    lowerer.step_sign[target] = lowerer.step_sign.get(expr.value.name)
    return (start, stop, step)


def lower_iternext(lowerer, expr):
    b = lowerer.b
    name = expr.value.name
    cursor_ptr = lowerer.var_slots(name)[0]
    cur, stop, step = lowerer.load_var(name)
    k = b.kind(cur)
    sign = lowerer.step_sign.get(name)
    if sign == 1:
        valid = b.compare(Op.lt, cur, stop)
    elif sign == -1:
        valid = b.compare(Op.gt, cur, stop)
    elif sign == 0:
        valid = arith.const(b, _core.Kind.bool, False)
    else:
        zero = arith.const(b, k, 0)
        up = arith.logical_and(b, b.compare(Op.gt, step, zero), b.compare(Op.lt, cur, stop))
        down = arith.logical_and(b, b.compare(Op.lt, step, zero), b.compare(Op.gt, cur, stop))
        valid = arith.logical_or(b, up, down)
    b.store(cursor_ptr, b.binary(Op.add, cur, step))
    return (cur, valid)
