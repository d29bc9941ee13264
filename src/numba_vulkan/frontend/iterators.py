"""Iteration over arrays, views, tuples, ``enumerate`` and ``zip``: ``for v in a``.

Range loops keep their own lowering (loops.py: the iterator is a tree of
KIR variables). Every other iterator is a compile-time object whose state
(a cursor) lives in KIR variables; ``iternext`` asks it for the next
(value, valid) pair. Iterating a 1-d array yields its elements: the load is
made only where the cursor is in bounds (a guarded block), since Numba's IR
takes the pair's value before it branches on validity and an unguarded load
past the end would read outside the buffer. Iterating an N-d array yields
views of its rows (views.py), and a record array references to its elements
(records.py), neither of which costs a memory access.

``enumerate(x[, start])`` and ``zip(x, y, ...)`` take arrays, views, ranges
and these iterators; their items must be scalars (a tuple of a number and
a view cannot live in KIR variables) -- an N-d array inside them is refused.
"""

from numba.core import types

from .. import _core
from . import arith
from .arrays import ArrayArg
from .errors import unsupported
from .lower import layout
from .types import compute_kind
from .views import View, copy_view, index_view, root_of

Op = _core.Op
K = _core.Kind


class ArrayIter:
    """Iterator over the first dimension of an array argument or view."""

    def __init__(self, lo, arr, ty, loc):
        b = lo.b
        if isinstance(arr, View):  # its own copy: the variable may be reassigned in the loop
            arr = copy_view(lo, arr, arr.ty, loc)
        self.arr = arr
        self.ty = ty
        self.ik = arr.index_kind
        self.cursor = b.var(self.ik)
        b.store(self.cursor, arith.const(b, self.ik, 0))
        if ty.ndim > 1:
            root_of(arr, loc)  # refuses views of shared/local/global arrays now

    def next(self, lo, loc):
        b = lo.b
        cur = b.load(self.cursor)
        valid = b.compare(Op.lt, cur, self.arr.extents[0])
        if self.ty.ndim > 1:
            b.store(self.cursor, b.binary(Op.add, cur, arith.const(b, self.ik, 1)))
            row_ty = self.ty.copy(ndim=self.ty.ndim - 1, layout="A")
            return index_view(lo, self.arr, [("int", cur)], row_ty, loc), valid
        if getattr(self.arr, "record", False):  # a reference to the element, as a[i] is
            from .records import element

            b.store(self.cursor, b.binary(Op.add, cur, arith.const(b, self.ik, 1)))
            return element(lo, self.arr, [cur], loc), valid
        # KIR values do not cross blocks: the guarded load goes through variables.
        parts = 2 if getattr(self.arr, "complex", False) else 1  # complex: (re, im)
        valid_var = b.var(K.bool)
        result = [b.var(self.arr.compute) for _ in range(parts)]
        b.store(valid_var, valid)
        for var in result:
            b.store(var, arith.const(b, self.arr.compute, 0))
        load, done = (b.create_block(f"iter{b.current_block}.{p}") for p in ("load", "done"))
        b.condbr(valid, load, done)
        b.set_block(load)
        value = self.arr.load(b, [b.load(self.cursor)], loc)
        for var, v in zip(result, value if parts == 2 else (value,)):
            b.store(var, v)
        b.br(done)
        b.set_block(done)
        b.store(self.cursor, b.binary(Op.add, b.load(self.cursor), arith.const(b, self.ik, 1)))
        loaded = tuple(b.load(v) for v in result)
        return (loaded if parts == 2 else loaded[0]), b.load(valid_var)


def _spill(b, tree):
    if isinstance(tree, tuple):
        return tuple(_spill(b, t) for t in tree)
    var = b.var(b.kind(tree))
    b.store(var, tree)
    return var


def _reload(b, tree):
    if isinstance(tree, tuple):
        return tuple(_reload(b, t) for t in tree)
    return b.load(tree)


class RangeIter:
    """A range inside enumerate/zip: (cursor, stop, step) in KIR variables."""

    def __init__(self, lo, value):
        b = lo.b
        self.vars = [b.var(b.kind(v)) for v in value]
        for var, v in zip(self.vars, value):
            b.store(var, v)

    def next(self, lo, loc):
        b = lo.b
        cur, stop, step = (b.load(v) for v in self.vars)
        zero = arith.const(b, b.kind(cur), 0)
        up = arith.logical_and(b, b.compare(Op.gt, step, zero), b.compare(Op.lt, cur, stop))
        down = arith.logical_and(b, b.compare(Op.lt, step, zero), b.compare(Op.gt, cur, stop))
        b.store(self.vars[0], b.binary(Op.add, cur, step))
        return cur, arith.logical_or(b, up, down)


class TupleIter:
    """Iterator over a tuple of values of one type (literals of one type count as one:
    Numba types no loop over other tuples without literal_unroll): the items held in KIR
    variables, the one at the cursor chosen by selects."""

    def __init__(self, lo, value, ty, loc):
        b = lo.b
        item_ty = types.unliteral(ty.types[0])
        self.items = [_spill(b, lo.cast(v, t, item_ty, loc)) for v, t in zip(value, ty.types)]
        self.ik = compute_kind(types.intp, lo.mode, loc)
        self.cursor = b.var(self.ik)
        b.store(self.cursor, arith.const(b, self.ik, 0))

    def next(self, lo, loc):
        b = lo.b
        cur = b.load(self.cursor)
        valid = b.compare(Op.lt, cur, arith.const(b, self.ik, len(self.items)))
        value = _reload(b, self.items[0])
        for i, item in enumerate(self.items[1:], 1):
            value = _select(b, b.compare(Op.eq, cur, arith.const(b, self.ik, i)),
                            _reload(b, item), value)  # fmt: skip
        b.store(self.cursor, b.binary(Op.add, cur, arith.const(b, self.ik, 1)))
        return value, valid


def _items_of_one_type(ty):
    return len(ty.types) > 0 and len({types.unliteral(t) for t in ty.types}) == 1


def _select(b, cond, x, y):
    if isinstance(x, tuple):
        return tuple(_select(b, cond, u, v) for u, v in zip(x, y))
    return b.select(cond, x, y)


class EnumerateIter:
    def __init__(self, lo, inner, start, kind):
        b = lo.b
        self.inner = inner
        self.count = b.var(kind)
        b.store(self.count, arith.convert(b, start, kind))

    def next(self, lo, loc):
        b = lo.b
        value, valid = self.inner.next(lo, loc)
        n = b.load(self.count)
        b.store(self.count, b.binary(Op.add, n, arith.const(b, b.kind(n), 1)))
        return (n, value), valid


class ZipIter:
    def __init__(self, inners):
        self.inners = inners

    def next(self, lo, loc):
        b = lo.b
        values, valid = [], _spill(b, arith.const(b, K.bool, True))
        for inner in self.inners:  # each may end in a new block: spill what crosses
            v, ok = inner.next(lo, loc)
            values.append(_spill(b, v))
            b.store(valid, arith.logical_and(b, b.load(valid), ok))
        return _reload(b, tuple(values)), b.load(valid)


def make_iter(lo, var, loc, nested=False):
    """The iterator object for Numba variable `var` (an array, view, range or iterator)."""
    ty = lo.typemap[var.name]
    value = lo.load_var(var.name)
    if isinstance(ty, types.Array) and isinstance(value, ArrayArg):
        if nested and ty.ndim > 1:
            raise unsupported("enumerate/zip over arrays of more than one dimension", loc)
        return ArrayIter(lo, value, ty, loc)
    if isinstance(ty, types.RangeType) and nested:
        return RangeIter(lo, value)
    if isinstance(ty, types.BaseTuple) and _items_of_one_type(ty) and \
            layout(ty, lo.mode, loc) is not None:  # fmt: skip
        return TupleIter(lo, value, ty, loc)
    if isinstance(ty, types.BaseTuple):  # arrays are compile-time objects: no run-time choice
        raise unsupported(f"iterating over {ty} (literal_unroll(t) runs the loop's body once "
                          "per item)", loc)  # fmt: skip
    if isinstance(value, (ArrayIter, RangeIter, TupleIter, EnumerateIter, ZipIter)):
        return value
    raise unsupported(f"iterating over {ty}", loc)


def lower_enumerate(lo, expr, sig):
    loc = expr.loc
    if expr.kws or not 1 <= len(expr.args) <= 2:
        raise unsupported("enumerate() with keyword arguments", loc)
    inner = make_iter(lo, expr.args[0], loc, nested=True)
    kind = compute_kind(types.intp, lo.mode, loc)
    if len(expr.args) == 2:
        start = lo.load_var(expr.args[1].name)
    else:
        start = arith.const(lo.b, kind, 0)
    return EnumerateIter(lo, inner, start, kind)


def lower_zip(lo, expr, sig):
    if expr.kws:
        raise unsupported("zip() with keyword arguments", expr.loc)
    return ZipIter([make_iter(lo, a, expr.loc, nested=True) for a in expr.args])
