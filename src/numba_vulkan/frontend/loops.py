"""Loops: `for ... in range(...)` (range objects, their iterators and iternext), and
the loops the front end writes itself over an array's indices (for_each).

Numba's IR spells a range loop as range(...) -> getiter -> (in the loop
header) iternext -> pair_first / pair_second. Each of these Numba variables
is a small tree of KIR variables: a range is (start, stop, step), an iterator
is (cursor, stop, step), and iternext's pair is (value, valid). iternext
tests the cursor against stop (cur < stop for a positive step, cur > stop for
a negative one, and never valid for a zero step), yields the cursor and
advances it by step, to stop where the step would wrap it past its type's end (Python's
range never overflows; numba.njit's, which counts its iterations from a wrapped
``stop - start``, agrees while that difference fits). When the step is a literal, only
its sign's test is built, and a step of 1 or -1 needs no wrap test.
When start, stop and step are all compile-time ints, the kernel's own loop over the
range records its trip count (Lowerer.loop_trips, by its header's label): a kernel
whose loops all have such counts, few enough in all, needs no loop guard
(frontend.static_loops, kir/loop_guard.h).

for_each visits every element of an array, view or array expression in C
order: reductions, in-place operators, ufuncs with an output and assignments
to views are written with it.
"""

from collections.abc import Sequence

from numba.core import ir

from .. import _core
from . import arith
from .types import compute_kind

Op = _core.Op


def lower_range(lowerer, expr, sig, target):
    """range(stop), range(start, stop) or range(start, stop, step) -> (start, stop, step)."""
    b = lowerer.b
    k = compute_kind(sig.return_type.dtype, lowerer.mode, expr.loc)
    args = [arith.convert(b, lowerer.load_cast(a, t), k) for a, t in zip(expr.args, sig.args)]
    literal = 1
    if len(args) == 1:
        start, stop, step = arith.const(b, k, 0), args[0], arith.const(b, k, 1)
    elif len(args) == 2:
        (start, stop), step = args, arith.const(b, k, 1)
    else:
        start, stop, step = args
        literal = lowerer.static_int(expr.args[2])
    lowerer.literal_step[target] = literal
    if lowerer.root is lowerer:  # the kernel's own loops (not an inlined callee's)
        values = [lowerer.static_int(a) for a in expr.args]
        zero_step = len(values) == 3 and values[2] == 0  # range() raises: never static
        trips = None if None in values or zero_step else len(range(*values))
        lowerer.range_trips[target] = trips
    return (start, stop, step)


def lower_getiter(lowerer, expr, target):
    start, stop, step = lowerer.load_var(expr.value.name)
    lowerer.literal_step[target] = lowerer.literal_step.get(expr.value.name)
    if lowerer.root is lowerer:
        lowerer.range_trips[target] = lowerer.range_trips.get(expr.value.name)
    return (start, stop, step)


def _made_from(lowerer, var):
    """The name of the range iterator `var` was made from by getiter (Numba's SSA form
    names the loop's iterator ``$phiN``, defined by the getiter), or `var`'s own."""
    try:
        defn = lowerer.func_ir.get_definition(var)
    except KeyError:  # several definitions
        return var.name
    return defn.value.name if isinstance(defn, ir.Expr) and defn.op == "getiter" else var.name


def lower_iternext(lowerer, expr):
    b = lowerer.b
    name = expr.value.name
    cursor_ptr = lowerer.var_slots(name)[0]
    cur, stop, step = lowerer.load_var(name)
    k = b.kind(cur)
    made_from = _made_from(lowerer, expr.value)
    literal = lowerer.literal_step.get(name, lowerer.literal_step.get(made_from))
    sign = None if literal is None else (literal > 0) - (literal < 0)
    zero = arith.const(b, k, 0) if sign is None else None
    if sign == 1:
        valid = b.compare(Op.lt, cur, stop)
    elif sign == -1:
        valid = b.compare(Op.gt, cur, stop)
    elif sign == 0:
        valid = arith.const(b, _core.Kind.bool, False)
    else:
        up = arith.logical_and(b, b.compare(Op.gt, step, zero), b.compare(Op.lt, cur, stop))
        down = arith.logical_and(b, b.compare(Op.lt, step, zero), b.compare(Op.gt, cur, stop))
        valid = arith.logical_or(b, up, down)
    following = b.binary(Op.add, cur, step)
    if literal not in (1, -1, 0):
        # A cursor within a step of its type's end wraps past it (range(0, 2**63 - 1,
        # 2**62): 0, 2**62, then -2**63 < stop): the cursor stops at `stop` instead, where
        # the next test fails. (A step of 1 or -1 cannot pass stop, a value of the type.)
        # Only a valid cursor stops so: an invalid one ends the loop anyway, and keeping
        # its wrapped sum lets cursor - step give it back (the unrolled loop's latch,
        # unroll.h, tests that).
        if sign == 1:
            wrapped = b.compare(Op.lt, following, cur)
        elif sign == -1:
            wrapped = b.compare(Op.gt, following, cur)
        else:
            # following < cur for a step > 0, following > cur (not <: it differs) for < 0
            wrapped = b.compare(Op.ne, b.compare(Op.lt, following, cur),
                                b.compare(Op.lt, step, zero))
        following = b.select(arith.logical_and(b, valid, wrapped), stop, following)
    b.store(cursor_ptr, following)
    if lowerer.root is lowerer:  # iternext is in the loop's header
        lowerer.loop_trips[lowerer.label] = lowerer.range_trips.get(made_from)
    return (cur, valid)


class _Indices(Sequence):
    """A loop's indices, loaded from their counters at each use: a body may read an
    element whose computation has loops of its own (an axis reduction, reductions.py),
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
    if arr.ndim == 0:  # a 0-d array: its one element, at the empty index
        body(b, [])
        return
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
