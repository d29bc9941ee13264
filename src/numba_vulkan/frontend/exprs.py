"""Expressions of Numba's IR (ir.Expr), one handler per op.

Every handler takes (lowerer, expr, target variable name) and returns
(value, Numba type of that value); the lowerer then casts the value to the
target variable's type. Operators take their operand types from the call's
signature in calltypes, as Numba's own lowering does. The handlers go into
the driver's table, lower.EXPRESSIONS, when this module is imported.
"""

import operator

from numba.core import types

from .. import _core
from . import arith, array_exprs, bfloat16, calls, float16, loops, mathlib
from .arrays import ArrayArg
from .errors import unsupported
from .inline import BoundMethod
from .iterators import make_iter
from .lower import EXPRESSIONS
from .types import compute_kind, is_float, is_int, is_scalar_type
from ..typing.matrix import Fragment
from .views import index_items, index_view, transpose

Op = _core.Op
K = _core.Kind


def _op_name(fn):
    return arith.OPERATOR_NAMES.get(fn, getattr(fn, "__name__", str(fn)))


def _unify(b, x, y):
    """Bring two scalars to one kind (the signature normally does this already)."""
    kx, ky = b.kind(x), b.kind(y)
    if kx == ky:
        return x, y
    if is_float(kx) or is_float(ky):
        k = K.f64 if K.f64 in (kx, ky) else K.f32
    else:
        k = kx if arith.BITS[kx] >= arith.BITS[ky] else ky
    return arith.convert(b, x, k), arith.convert(b, y, k)


def binop(lo, expr, target):
    b, loc = lo.b, expr.loc
    fn = expr.fn
    lhs_ty, rhs_ty = lo.typemap[expr.lhs.name], lo.typemap[expr.rhs.name]
    sym = _op_name(expr.immutable_fn if expr.op == "inplace_binop" else fn)
    sig = lo.calltypes.get(expr)
    if fn in (operator.is_, operator.is_not) and sig is not None:
        return _identity(lo, expr, sig, fn is operator.is_not), types.boolean
    static = _static_compare(lo, fn, lhs_ty, rhs_ty, sig)
    if static is not None:
        return static, types.boolean
    op = expr.immutable_fn if expr.op == "inplace_binop" else fn
    tuples = isinstance(lhs_ty, types.BaseTuple) and isinstance(rhs_ty, types.BaseTuple)
    if op is operator.add and tuples and sig is not None:
        return _tuple_concat(lo, expr, lhs_ty, rhs_ty, sig), sig.return_type
    if fn is operator.contains and isinstance(lhs_ty, types.BaseTuple) and sig is not None:
        return _tuple_contains(lo, expr, lhs_ty, rhs_ty, sig), sig.return_type
    if sig is not None and any(isinstance(t, types.Complex) for t in sig.args):
        from . import complexnum

        x, y = lo.load_cast(expr.lhs, sig.args[0]), lo.load_cast(expr.rhs, sig.args[1])
        op = expr.immutable_fn if expr.op == "inplace_binop" else fn
        if op in arith.POW:  # Numba's complex_power_impl (mathlib/cmathlib.py)
            return mathlib.cmathlib.power_(lo, x, y, sig.args[0], loc), sig.return_type
        return complexnum.binop(lo, op, x, y, sig, loc, sym), sig.return_type
    if sig is not None and isinstance(sig.return_type, types.Array) and \
            (isinstance(lhs_ty, types.Array) or isinstance(rhs_ty, types.Array)):  # fmt: skip
        return array_exprs.binop(lo, expr, sig), sig.return_type
    if sig is None or not (is_scalar_type(lhs_ty) and is_scalar_type(rhs_ty)):
        raise unsupported(f"'{sym}' on {lhs_ty} and {rhs_ty}", loc)
    if not is_scalar_type(sig.return_type):
        raise unsupported(f"'{sym}' giving {sig.return_type}", loc)
    x = lo.load_cast(expr.lhs, sig.args[0])
    y = lo.load_cast(expr.rhs, sig.args[1])
    rk = compute_kind(sig.return_type, lo.mode, loc)
    # bfloat16's subnormals: an operand's own type counts too (Numba may type a bfloat16
    # compared with a float32 as two float32 values)
    b = bfloat16.builder(lo, lhs_ty, rhs_ty, *sig.args, sig.return_type)
    if expr.op == "inplace_binop":
        fn = expr.immutable_fn

    if fn in arith.COMPARE:
        x, y = _unify(b, x, y)
        op = arith.COMPARE[fn]
        if b.kind(x) == K.bool and op not in (Op.eq, Op.ne):
            x, y = arith.convert(b, x, K.i32), arith.convert(b, y, K.i32)
        r = b.compare(op, x, y)
    elif fn in arith.SIMPLE_BINARY:
        x, y = arith.convert(b, x, rk), arith.convert(b, y, rk)
        r = b.binary(arith.SIMPLE_BINARY[fn], x, y)
    elif fn in arith.TRUEDIV:
        if not is_float(rk):
            raise unsupported(f"'/' giving {sig.return_type}", loc)
        r = b.binary(Op.div, arith.convert(b, x, rk), arith.convert(b, y, rk))
    elif fn in arith.FLOORDIV or fn in arith.MOD:
        x, y = arith.convert(b, x, rk), arith.convert(b, y, rk)
        if rk == K.bool:
            raise unsupported(f"'{sym}' on booleans", loc)
        r = arith.floordiv(b, x, y) if fn in arith.FLOORDIV else arith.mod(b, x, y)
    elif fn in arith.POW:
        r = _power(lo, expr, x, y, rk, sig)
    elif fn in arith.BITWISE:
        if is_float(rk):
            raise unsupported(f"'{sym}' on floats", loc)
        x, y = arith.convert(b, x, rk), arith.convert(b, y, rk)
        r = b.binary(arith.BITWISE[fn], x, y)
    elif fn in arith.SHIFTS:
        if not is_int(rk):
            raise unsupported(f"'{sym}' on {sig.return_type}", loc)
        r = arith.shift(b, arith.SHIFTS[fn], arith.convert(b, x, rk), arith.convert(b, y, rk))
    else:
        raise unsupported(f"the operator '{sym}'", loc)
    # a float16 result, computed in float32, rounded to half precision (frontend/float16.py)
    r = float16.rounded(b, arith.convert(b, r, rk), sig.return_type)
    return bfloat16.rounded(b, r, sig.return_type), sig.return_type  # the same for bfloat16


def _static_compare(lo, fn, lhs_ty, rhs_ty, sig):
    """``a.dtype == b.dtype`` (Numba types ``==`` of two dtypes, not ``!=``) and ``==``/``!=``
    of two literal strings (``a.dtype.kind == 'f'``): compile-time values, so a constant
    bool; None for other operands."""
    if sig is None or fn not in (operator.eq, operator.ne):
        return None
    if isinstance(lhs_ty, types.DType) and isinstance(rhs_ty, types.DType):
        same = lhs_ty.dtype == rhs_ty.dtype
    elif isinstance(lhs_ty, types.StringLiteral) and isinstance(rhs_ty, types.StringLiteral):
        same = lhs_ty.literal_value == rhs_ty.literal_value
    else:
        return None
    return arith.const(lo.b, K.bool, same == (fn is operator.eq))


def _identity(lo, expr, sig, negate):
    """``x is y`` as Numba lowers it: values of different types are never identical (so
    ``x is None`` is False for a number), booleans and other immutable scalars of one type
    compare with ``==``, None is None."""
    b = lo.b
    lt, rt = sig.args
    both_bool = isinstance(types.unliteral(lt), types.Boolean) and isinstance(
        types.unliteral(rt), types.Boolean
    )
    if both_bool or (lt == rt and is_scalar_type(lt)):
        x, y = _unify(b, lo.load_cast(expr.lhs, lt), lo.load_cast(expr.rhs, rt))
        r = b.compare(Op.eq, x, y)
    elif lt == rt and isinstance(lt, types.NoneType):
        r = arith.const(b, K.bool, True)
    elif isinstance(lt, types.DType) and isinstance(rt, types.DType):  # compile-time, as njit
        r = arith.const(b, K.bool, lt == rt)
    elif lt != rt and (is_scalar_type(lt) or isinstance(lt, (types.NoneType, types.BaseTuple))):
        r = arith.const(b, K.bool, False)
    else:
        raise unsupported(f"'is' on {lt} and {rt}", expr.loc)
    return arith.logical_not(b, r) if negate else r


def _tuple_concat(lo, expr, lhs_ty, rhs_ty, sig):
    """``t + u`` of two tuples: their items, each cast to the result's item type (Python
    3.9+ spells ``f(a, *t)`` with it)."""
    items = (*lo.load_var(expr.lhs.name), *lo.load_var(expr.rhs.name))
    return tuple(lo.cast(v, f, t, expr.loc)
                 for v, f, t in zip(items, (*lhs_ty.types, *rhs_ty.types), sig.return_type.types))


def _tuple_contains(lo, expr, tuple_ty, item_ty, sig):
    """``x in (a, b, ...)`` of scalars: x == a or x == b ... (literal_unroll's switch uses it)."""
    b = lo.b
    if not is_scalar_type(item_ty) or not all(is_scalar_type(t) for t in tuple_ty.types):
        raise unsupported(f"'in' on {tuple_ty} and {item_ty}", expr.loc)
    items = lo.load_var(expr.lhs.name)
    x = lo.load_var(expr.rhs.name)
    found = arith.const(b, K.bool, False)
    for item in items:
        u, v = x, item
        if (b.kind(u) == K.bool) != (b.kind(v) == K.bool):  # Python: True == 1
            u, v = arith.convert(b, u, K.i64), arith.convert(b, v, K.i64)
        u, v = _unify(b, u, v)
        found = b.binary(Op.or_, found, b.compare(Op.eq, u, v))
    return found


def _power(lo, expr, x, y, rk, sig):
    b, loc = lo.b, expr.loc
    yk = b.kind(y)
    if is_int(yk) or yk == K.bool:
        if yk == K.bool:
            y = arith.convert(b, y, K.i32)
        base = arith.convert(b, x, rk)
        return arith.power(b, base, y, lo.static_int(expr.rhs))
    if is_float(rk):  # the math library's pow: within 1 ulp, C99 special values
        lo.exact_math = True  # see LoweredKernel.exact_math
        x, y = arith.convert(b, x, rk), arith.convert(b, y, rk)
        mb = mathlib.denormals.for_lowerer(lo, b)
        return mathlib.power.pow_(mb, x, y)
    raise unsupported(f"'**' on {sig.args[0]} and {sig.args[1]}", loc)


def unary(lo, expr, target):
    b, loc = lo.b, expr.loc
    fn = expr.fn
    ty = lo.typemap[expr.value.name]
    sig = lo.calltypes.get(expr)
    if sig is not None and isinstance(sig.return_type, types.Complex):
        from . import complexnum

        z = lo.load_cast(expr.value, sig.args[0])
        return complexnum.unary(lo, fn, z, loc, _op_name(fn)), sig.return_type
    if sig is not None and isinstance(ty, types.Array) and isinstance(sig.return_type, types.Array):
        return array_exprs.unary(lo, expr, sig), sig.return_type
    if sig is None or not is_scalar_type(ty) or not is_scalar_type(sig.return_type):
        raise unsupported(f"'{_op_name(fn)}' on {ty}", loc)
    x = lo.load_cast(expr.value, sig.args[0])
    rk = compute_kind(sig.return_type, lo.mode, loc)
    b = bfloat16.builder(lo, *sig.args, sig.return_type)  # `not x`: a bfloat16 subnormal is true
    if fn is operator.not_:
        r = arith.logical_not(b, arith.truth(b, x))
    elif fn is operator.pos:
        r = x
    elif fn is operator.neg:
        # Numba negates an integer in its own width and then widens (-int32(MIN) is
        # -2**31 as int64, -uint8(100) is 156 as uint64); a bool is widened first.
        if b.kind(x) == K.bool:
            x = arith.convert(b, x, rk)
        r = arith.negate(b, x)
    elif fn is operator.invert:
        if is_float(b.kind(x)):
            raise unsupported("'~' on floats", loc)
        r = arith.logical_not(b, x) if b.kind(x) == K.bool else arith.small_int_unary(b, Op.not_, x)
    else:
        raise unsupported(f"the operator '{_op_name(fn)}'", loc)
    return arith.convert(b, r, rk), sig.return_type


def call(lo, expr, target):
    return calls.lower_call(lo, expr, target)


def array_dtype(dtype):
    """The NumPy dtype of Numba element type `dtype` (the compile-time value of
    ``arr.dtype``: ``.type`` and ``.kind`` read it); the Numba type itself
    where NumPy has none."""
    from numba.np.numpy_support import as_dtype

    try:
        return as_dtype(dtype)
    except Exception:  # NumPy has no dtype for it
        return dtype


def getattr_(lo, expr, target):
    b, loc = lo.b, expr.loc
    ty = lo.typemap[expr.value.name]
    attr = expr.attr
    value = lo.load_var(expr.value.name)
    target_ty = lo.typemap[target]
    if isinstance(target_ty, types.BoundFunction):
        return BoundMethod(value, ty, attr), target_ty  # called next: calls.py, frontend/inline.py
    if isinstance(ty, types.Record):
        from .records import RecordRef

        if isinstance(value, RecordRef):
            return value.field(lo, attr, loc)
    if isinstance(ty, types.Complex):
        from .complexnum import attribute

        return attribute(lo, value, ty, attr, loc)
    if isinstance(ty, Fragment) and attr == "length":
        from . import matrix

        return matrix.length(lo, value, loc), target_ty
    if attr == "dtype" and isinstance(ty, types.Array) and isinstance(target_ty, types.DType):
        # A compile-time value, as np.float32 is: Numba types it DType(float32), which
        # local/shared.array and np.empty-likes take as their dtype (only the type is read).
        return array_dtype(ty.dtype), target_ty
    if isinstance(value, ArrayArg):
        ik = compute_kind(types.intp, lo.mode, loc)
        if attr == "T":
            if value.ndim == 1:
                return value, ty  # Numba: the array itself
            return transpose(lo, value, target_ty, loc), target_ty
        if attr == "shape":
            return value.shape(b, ik), types.UniTuple(types.intp, value.ndim)
        if attr == "strides":
            return value.strides_in_bytes(b, ik), types.UniTuple(types.intp, value.ndim)
        if attr == "size":
            return value.size(b, ik), types.intp
        if attr == "ndim":
            return arith.const(b, ik, value.ndim), types.intp
        if attr == "itemsize":
            return arith.const(b, ik, value.ty.dtype.bitwidth // 8), types.intp
        raise unsupported(f"the array attribute '.{attr}'", loc)
    if isinstance(ty, types.EnumMember) and attr == "value" and is_scalar_type(ty):
        return value, ty.dtype  # an enum member is held as its value
    if isinstance(ty, types.BaseNamedTuple) and attr in ty.fields:
        index = ty.fields.index(attr)
        return value[index], ty.types[index]
    if expr.value.name in lo.statics and not isinstance(ty, types.Array):
        try:
            obj = getattr(value, attr)
        except AttributeError:
            raise unsupported(f"the attribute '.{attr}' of {ty}", loc) from None
        return lo.constant(obj, target_ty, loc), target_ty
    raise unsupported(f"the attribute '.{attr}' of {ty}", loc)


def getitem(lo, expr, target):
    loc = expr.loc
    ty = lo.typemap[expr.value.name]
    if isinstance(ty, types.Array):
        arr = lo.statics[expr.value.name]
        target_ty = lo.typemap[target]
        if isinstance(target_ty, types.Array):  # a view: slices, a[i] of an N-d array
            items = index_items(lo, expr, loc)
            return index_view(lo, arr, items, target_ty, loc), target_ty
        indices = lo._indices(expr, arr, loc)
        if isinstance(ty.dtype, types.Record):
            from .records import element

            return element(lo, arr, indices, loc), ty.dtype
        return arr.load(lo.b, indices, loc), ty.dtype
    if isinstance(ty, Fragment):
        from . import matrix

        index_var = expr.index_var if expr.op == "static_getitem" else expr.index
        if index_var is not None:
            index = lo.load_var(index_var.name)
        elif isinstance(expr.index, int):
            index = arith.const(lo.b, _core.Kind.i64, expr.index)
        else:
            raise unsupported(f"indexing a matrix fragment with {expr.index!r}", loc)
        return matrix.getitem(lo, lo.statics[expr.value.name], index, loc), ty.dtype
    if isinstance(ty, types.Record):
        from .records import RecordRef, static_field_name

        ref, name = lo.statics.get(expr.value.name), static_field_name(lo, expr, ty)
        if not isinstance(ref, RecordRef) or name is None:
            raise unsupported(f"indexing {ty} with {expr.index!r}", loc)
        return ref.field(lo, name, loc)
    if isinstance(ty, types.EnumClass) and expr.op == "static_getitem" and \
            isinstance(expr.index, str):  # fmt: skip
        target_ty = lo.typemap[target]  # Color["red"]: the member, a compile-time value
        return lo.constant(ty.instance_class[expr.index], target_ty, loc), target_ty
    if isinstance(ty, types.BaseTuple):
        value = lo.load_var(expr.value.name)
        if expr.op == "static_getitem" and isinstance(expr.index, (int, slice)):
            if isinstance(expr.index, slice):
                return value[expr.index], types.BaseTuple.from_types(ty.types[expr.index])
            return value[expr.index], ty.types[expr.index]
        return _dynamic_tuple_item(lo, expr, ty, value)
    raise unsupported(f"indexing {ty}", loc)


def _dynamic_tuple_item(lo, expr, ty, value):
    b, loc = lo.b, expr.loc
    elem_types = {types.unliteral(t) for t in ty.types}
    if len(elem_types) != 1 or not is_scalar_type(next(iter(elem_types))):
        raise unsupported(f"indexing {ty} with a run-time index", loc)
    index_var = expr.index_var if expr.op == "static_getitem" else expr.index
    if index_var is None or not isinstance(lo.typemap[index_var.name], types.Integer):
        raise unsupported(f"indexing {ty} with {expr.index!r}", loc)
    idx = lo.load_var(index_var.name)
    k = b.kind(idx)
    n = len(value)
    if arith.is_signed(k):
        negative = b.compare(Op.lt, idx, arith.const(b, k, 0))
        idx = b.select(negative, b.binary(Op.add, idx, arith.const(b, k, n)), idx)
    result = value[0]
    for i in range(1, n):
        result = b.select(b.compare(Op.eq, idx, arith.const(b, k, i)), value[i], result)
    return result, next(iter(elem_types))


def typed_getitem(lo, expr, target):
    """``tup[i]`` typed as ``expr.dtype``: literal_unroll's loop over a heterogeneous tuple.

    Numba versions the loop body once per item type and guards each version
    with ``i in (indices of that type)``, so only items of ``expr.dtype`` can
    be asked for here: the value is chosen among those by the run-time index.
    """
    b, loc = lo.b, expr.loc
    ty = lo.typemap[expr.value.name]
    if not isinstance(ty, types.BaseTuple):
        raise unsupported(f"typed indexing of {ty}", loc)
    value = lo.load_var(expr.value.name)
    want = types.unliteral(expr.dtype)
    matches = [i for i, t in enumerate(ty.types) if types.unliteral(t) == want]
    if not matches:
        raise unsupported(f"indexing {ty} for an item of type {want}", loc)
    k = lo.static_int(expr.index)
    if k is not None:
        return value[k], ty.types[k]
    if not is_scalar_type(want) and any(value[i] is not value[matches[0]] for i in matches):
        # Arrays, tuples ... are compile-time objects or trees of values: no one run-time
        # choice among them (numba.cuda's literal_unroll over arrays of one type)
        raise unsupported(f"literal_unroll over several items of one non-scalar type ({want}), "
                          "which the loop's run-time index would have to choose among", loc)
    idx = lo.load_var(expr.index.name)
    ik = b.kind(idx)
    result = value[matches[0]]
    for i in matches[1:]:
        result = b.select(b.compare(Op.eq, idx, arith.const(b, ik, i)), value[i], result)
    return result, ty.types[matches[0]]


def build_tuple(lo, expr, target):
    values = tuple(lo.load_var(v.name) for v in expr.items)
    ty = types.BaseTuple.from_types([lo.typemap[v.name] for v in expr.items])
    return values, ty


def exhaust_iter(lo, expr, target):
    ty = lo.typemap[expr.value.name]
    if isinstance(ty, types.BaseTuple) and len(ty.types) == expr.count:
        return lo.load_var(expr.value.name), ty
    raise unsupported(f"unpacking {ty}", expr.loc)


def getiter(lo, expr, target):
    ty = lo.typemap[expr.value.name]
    if isinstance(ty, types.RangeType):
        return loops.lower_getiter(lo, expr, target), lo.typemap[target]
    return make_iter(lo, expr.value, expr.loc), lo.typemap[target]


def iternext(lo, expr, target):
    ty = lo.typemap[expr.value.name]
    if isinstance(ty, types.RangeIteratorType):
        return loops.lower_iternext(lo, expr), lo.typemap[target]
    it = lo.statics.get(expr.value.name)
    if it is None or not hasattr(it, "next"):
        raise unsupported(f"iterating over {ty}", expr.loc)
    return it.next(lo, expr.loc), lo.typemap[target]


def pair_first(lo, expr, target):
    ty = lo.typemap[expr.value.name]
    return lo.load_var(expr.value.name)[0], ty.first_type


def pair_second(lo, expr, target):
    ty = lo.typemap[expr.value.name]
    return lo.load_var(expr.value.name)[1], ty.second_type


def cast(lo, expr, target):
    return lo.load_var(expr.value.name), lo.typemap[expr.value.name]


EXPRESSIONS.update({
    "binop": binop,
    "inplace_binop": binop,
    "unary": unary,
    "call": call,
    "getattr": getattr_,
    "getitem": getitem,
    "static_getitem": getitem,
    "build_tuple": build_tuple,
    "typed_getitem": typed_getitem,
    "exhaust_iter": exhaust_iter,
    "getiter": getiter,
    "iternext": iternext,
    "pair_first": pair_first,
    "pair_second": pair_second,
    "cast": cast,
})  # fmt: skip
