"""Calls: kernel intrinsics, Python builtins and NumPy scalar constructors.

The callee of a call is a compile-time object (a global or an attribute of
one); the front end dispatches on its identity. Anything it does not know is
rejected with the callee's name.
"""

import builtins

from numba.core import ir, types
from numba.core.unsafe import eh

from .. import _core, stubs
from ..typing import fma as fma_typing
from . import arith, array_methods, bfloat16, float16, grid, inline, loops, mathlib
from .array_ufuncs import lower_array_ufunc
from .errors import unsupported
from .iterators import lower_enumerate, lower_zip
from .reductions import builtin_minmax, lower_array_call
from .types import compute_kind, is_float, is_scalar_type, is_signed
from .views import make_slice

Op = _core.Op
K = _core.Kind

_BUILTIN_IDS = {
    "global_id": _core.Builtin.global_id,
    "local_id": _core.Builtin.local_id,
    "group_id": _core.Builtin.group_id,
    "local_size": _core.Builtin.local_size,
    "num_groups": _core.Builtin.num_groups,
}

#: Stub object -> KIR builtin. Tests may register stand-ins with register_intrinsic.
INTRINSICS = {s: _BUILTIN_IDS[s.__name__] for s in stubs.AXIS_INTRINSICS}


def register_intrinsic(obj, name):
    """Make `obj` lower as the axis intrinsic `name` (e.g. "global_id")."""
    INTRINSICS[obj] = _BUILTIN_IDS[name]


def calling(fn):
    """'calling 'name'' for refusals; a method says its name and its receiver's type,
    never the compile-time object's repr."""
    if isinstance(fn, inline.BoundMethod):
        method = fn.name or "?"
        return f"the method '.{method}()' of {fn.receiver[1]}"
    return f"calling '{callee_name(fn)}'"


def callee_name(fn):
    name = getattr(fn, "__qualname__", None) or getattr(fn, "__name__", None) or repr(fn)
    module = getattr(fn, "__module__", None)
    if module and module != "builtins" and not module.startswith("numba_vulkan"):
        if module.startswith("numpy"):
            module = "numpy"
        return f"{module}.{name}"
    return name


def lower_call(lowerer, expr, target):
    """Lower `expr` (an ir.Expr call); returns (value, Numba type)."""
    loc = expr.loc
    fn_var = expr.func.name
    fn_ty = lowerer.typemap[fn_var]
    if fn_var not in lowerer.statics:
        raise unsupported(f"calling a value of type {fn_ty}", loc)
    fn = lowerer.statics[fn_var]
    if _is_try_marker(fn):
        raise unsupported("try/except", loc)
    sig = lowerer.calltypes.get(expr)
    if sig is None:
        raise unsupported(calling(fn), loc)
    if expr.vararg is not None:  # f(a, *t): f(a, t[0], t[1], ...), the call Numba typed
        expr = _fold_star_args(lowerer, expr, sig, fn)
    parallel = _parallel_call(fn)
    if parallel is not None:  # shared/local arrays, atomics, barriers (issue 8)
        return parallel(lowerer, fn, expr, sig, target)
    array_call = lower_array_call(lowerer, expr, fn, fn_ty, sig)
    if array_call is not None:
        return array_call
    view_call = array_methods.lower(lowerer, expr, fn, fn_ty, sig)  # a.reshape(...)
    if view_call is not None:
        return view_call
    complex_call = _complex_call(lowerer, expr, fn, sig)
    if complex_call is not None:
        return complex_call
    if _is_llvm_intrinsic(fn):  # its code generator's LLVM IR, translated (llvm_intrinsics.py)
        from .llvm_intrinsics import lower_intrinsic

        return lower_intrinsic(lowerer, expr, fn, fn_ty, sig)
    if not _handled_here(fn, fn_ty):
        device_call = _device_call(lowerer, expr, fn, fn_ty, sig)
        if device_call is not None:
            return device_call
    if isinstance(fn_ty, types.NamedTupleClass) and isinstance(sig.return_type, types.BaseTuple):
        return _namedtuple(lowerer, expr, fn, sig), sig.return_type
    if expr.kws or expr.vararg:
        raise unsupported(f"keyword or star arguments in calls to '{callee_name(fn)}'", loc)

    if fn in INTRINSICS if _hashable(fn) else False:
        return _intrinsic(lowerer, expr, sig, INTRINSICS[fn]), sig.return_type
    if fn is builtins.range:
        return loops.lower_range(lowerer, expr, sig, target), sig.return_type
    if fn is builtins.len:
        return _len(lowerer, expr, sig), sig.return_type
    if fn is builtins.tuple and len(expr.args) == 1 and isinstance(sig.args[0], types.BaseTuple):
        # tuple(t) of a tuple: the tuple (Python 3.9+ spells f(a, *t) with it)
        return lowerer.load_cast(expr.args[0], sig.return_type), sig.return_type
    if fn in (builtins.int, builtins.float, builtins.bool) or isinstance(fn_ty, types.NumberClass):
        if len(expr.args) != 1:
            raise unsupported(f"calling '{callee_name(fn)}' with {len(expr.args)} arguments", loc)
        (arg,) = expr.args
        return lowerer.cast(lowerer.load_var(arg.name), lowerer.typemap[arg.name],
                            sig.return_type, loc), sig.return_type  # fmt: skip
    if fn is builtins.abs:
        return _abs(lowerer, expr, sig), sig.return_type
    if fn in (builtins.min, builtins.max):
        return _minmax(lowerer, expr, sig, fn is builtins.max), sig.return_type
    if fn is builtins.divmod:
        return _divmod(lowerer, expr, sig), sig.return_type
    if fn is builtins.print:
        raise unsupported("calling 'print'", loc)
    if fn is builtins.enumerate or fn is builtins.zip:
        lower = lower_enumerate if fn is builtins.enumerate else lower_zip
        return lower(lowerer, expr, sig), sig.return_type
    if fn is builtins.slice:
        step = lowerer.static_int(expr.args[2]) if len(expr.args) == 3 else None
        if step is None and len(expr.args) == 3 and isinstance(sig.args[2], types.Integer):
            _check_step(lowerer, expr.args[2], loc)  # first: it ends the block
        values = [None if isinstance(t, types.NoneType) else lowerer.load_var(a.name)
                  for a, t in zip(expr.args, sig.args)]  # fmt: skip
        return make_slice(lowerer, values, sig.args, loc, step_literal=step), sig.return_type
    if fn is RuntimeError and getattr(loc, "filename", None) == "<string>":
        return None, sig.return_type  # literal_unroll's unreachable raise (lower.py)
    if isinstance(fn, type) and issubclass(fn, BaseException):
        # The exception instance of a raise: the raise statement (frontend/exceptions.py)
        # takes the class and constant arguments from the IR; nothing runs here.
        return None, sig.return_type
    if _is_operator_function(fn) and len(expr.args) == 2 and not expr.kws:
        return _operator_call(lowerer, expr, fn, sig, target)
    on_arrays = lower_array_ufunc(lowerer, expr, fn, sig, callee_name(fn))  # np.sin(x, out)
    if on_arrays is not None:
        return on_arrays
    value = mathlib.lower(lowerer, fn, expr, sig, callee_name(fn))  # math.*, np ufuncs, round, pow
    if value is not None:
        return value, sig.return_type
    raise unsupported(calling(fn), loc)


def _fold_star_args(lowerer, expr, sig, fn):
    """``f(a, *t)`` as ``f(a, t[0], t[1], ...)``: Numba types a call with a star argument
    (a tuple, of a length known at compile time) as that call, the tuple's items positional
    arguments in its signature; every lowering below reads only ``expr.args``. The items
    are given variables of their own (a copy of the typemap names them)."""
    star = expr.vararg
    ty = lowerer.typemap[star.name]
    if not isinstance(ty, types.BaseTuple):
        raise unsupported(f"star arguments (*args) of {ty} in calls to '{callee_name(fn)}'",
                          expr.loc)  # fmt: skip
    items = lowerer.load_var(star.name)
    names = [f"{star.name}.star{k}" for k in range(len(ty.types))]
    lowerer.typemap = {**lowerer.typemap, **dict(zip(names, ty.types))}
    for name, value in zip(names, items):
        lowerer.store_var(name, value)
    args = [*expr.args, *(ir.Var(star.scope, name, expr.loc) for name in names)]
    folded = ir.Expr.call(expr.func, args, expr.kws, expr.loc, varkwarg=expr.varkwarg)
    lowerer.calltypes = {**lowerer.calltypes, folded: sig}
    return folded


def _is_operator_function(fn):
    """``operator.add`` & co. called as functions (numba-cuda's test_operator does)."""
    if not _hashable(fn):
        return False
    return (fn in arith.SIMPLE_BINARY or fn in arith.BITWISE or fn in arith.SHIFTS
            or fn in arith.COMPARE
            or fn in arith.TRUEDIV + arith.FLOORDIV + arith.MOD + arith.POW)


def _operator_call(lowerer, expr, fn, sig, target):
    """``operator.add(x, y)``: lowered as the binary operation ``x + y`` that Numba typed
    the call as (the same signature, the lowerer's handler of binop expressions)."""

    as_binop = ir.Expr.binop(fn, expr.args[0], expr.args[1], expr.loc)
    lowerer.calltypes[as_binop] = sig
    return lowerer.lower_expr(as_binop, target)


def _parallel_call(fn):
    """The lowering function of an issue-8 intrinsic or np.empty-like callee, or None."""
    from . import atomics, local_arrays, matrix, subgroups, sync

    if not _hashable(fn):
        return None
    if fn in sync.CALLS:
        return sync.CALLS[fn]
    if fn in local_arrays.CALLS:
        lower = local_arrays.CALLS[fn]
        return lambda lo, f, expr, sig, target: lower(lo, expr, sig, target)
    if atomics.stub_name(fn) is not None:
        return atomics.lower_atomic
    if subgroups.stub_name(fn) is not None:
        return subgroups.lower_subgroup
    if matrix.stub_name(fn) is not None:
        return matrix.lower_matrix
    if fn is float16.FMA:  # cuda.fp16.hfma (frontend/float16.py)
        return float16.lower_fma
    if fn is fma_typing.fma:  # cuda.fma (frontend/mathlib/fma.py)
        return lower_fma
    if fn in bfloat16.INTRINSICS:  # cuda.bf16's fma and bit casts (frontend/bfloat16.py)
        return bfloat16.lower_intrinsic
    if any(fn is c for c in local_arrays.NUMPY_CONSTRUCTORS):
        return local_arrays.lower_numpy_constructor
    return None


def lower_fma(lowerer, fn, expr, sig, target):
    """cuda.fma(a, b, c): a * b + c rounded once (frontend/mathlib/fma.py)."""
    from .mathlib import denormals, fma

    args = [lowerer.load_cast(a, t) for a, t in zip(expr.args, sig.args)]
    lowerer.exact_math = True  # TwoSum needs the float ops exactly rounded, as written
    k = compute_kind(sig.return_type, lowerer.mode, expr.loc)
    if sig.return_type == types.float16:
        return float16.fma(lowerer.b, *args), sig.return_type
    b = denormals.for_lowerer(lowerer, ieee32=True)
    if lowerer.mode.floats or not lowerer.mode.float64_storage:
        raise unsupported("cuda.fma on a device without float64 (float32's is computed "
                          "exactly in float64)", expr.loc)  # fmt: skip
    if k == K.f32:
        return fma.fma32(b, *args), sig.return_type
    if k != K.f64:
        raise unsupported(f"cuda.fma of {sig.return_type} where the kernel computes it as {k}",
                          expr.loc)  # fmt: skip
    return fma.fma64(b, *args), sig.return_type


_HANDLED = (builtins.range, builtins.len, builtins.int, builtins.float, builtins.bool,
            builtins.abs, builtins.min, builtins.max, builtins.divmod, builtins.print,
            builtins.slice, builtins.enumerate, builtins.zip, builtins.tuple)  # fmt: skip


def _complex_call(lowerer, expr, fn, sig):
    """z.conjugate(), abs(z), pow(z, w), complex(re, im); None for other calls."""
    from . import complexnum

    loc = expr.loc
    if isinstance(fn, inline.BoundMethod) and isinstance(fn.receiver[1], types.Complex):
        key = getattr(lowerer.typemap[expr.func.name], "typing_key", "")
        name = key.split(".")[-1] if isinstance(key, str) else str(key)
        return complexnum.method(lowerer, fn.receiver[0], fn.receiver[1], name, expr.args, loc)
    if fn is builtins.abs and len(expr.args) == 1:
        ty = lowerer.typemap[expr.args[0].name]
        if isinstance(ty, types.Complex):
            z = lowerer.load_var(expr.args[0].name)
            r = complexnum.absolute(lowerer.b, z, compute_kind(types.float64, lowerer.mode, loc))
            return arith.convert(lowerer.b, r, compute_kind(sig.return_type, lowerer.mode, loc)), \
                sig.return_type  # fmt: skip
    if fn is builtins.pow and len(expr.args) == 2 and isinstance(sig.return_type, types.Complex):
        # pow(z, w): Numba types it as z ** w (both operands of one complex type)
        from .mathlib.cmathlib import power_

        x, y = (lowerer.load_cast(a, t) for a, t in zip(expr.args, sig.args))
        return power_(lowerer, x, y, sig.args[0], loc), sig.return_type
    if fn is builtins.complex and isinstance(sig.return_type, types.Complex):
        if expr.kws:
            raise unsupported("complex() with keyword arguments", loc)
        parts = [lowerer.load_cast(a, t) for a, t in zip(expr.args, sig.args)]
        k = complexnum.part_kind(sig.return_type, lowerer.mode, loc)
        if len(parts) == 2 and not any(isinstance(t, types.Complex) for t in sig.args):
            return tuple(arith.convert(lowerer.b, p, k) for p in parts), sig.return_type
        zero = arith.const(lowerer.b, k, 0.0)
        values = [complexnum.cast(lowerer, p, t, sig.return_type, loc)
                  for p, t in zip(parts, sig.args)]  # fmt: skip
        re = values[0] if values else (zero, zero)
        im = values[1] if len(values) > 1 else (zero, zero)
        # complex(a, b) = a + b*1j for complex a, b too (CPython's rule)
        b = lowerer.b
        return (b.binary(Op.sub, re[0], im[1]), b.binary(Op.add, re[1], im[0])), sig.return_type
    return None


def _handled_here(fn, fn_ty):
    """Whether lower_call lowers calls of `fn` itself (even where Numba types them through an
    @overload implementation, which the front end could otherwise inline)."""
    if isinstance(fn_ty, types.NumberClass) or any(fn is h for h in _HANDLED):
        return True
    return _hashable(fn) and fn in INTRINSICS


def _is_llvm_intrinsic(fn):
    from numba.core.extending import _Intrinsic

    return isinstance(fn, _Intrinsic)


def _is_library_implementation(typed):
    """Whether the callee is Numba's own implementation of a library function (NumPy
    functions and array methods, math...): written for the CPU (nditer, BLAS, allocation),
    it is not inlined; the front end lowers what it supports of those itself."""
    module = getattr(getattr(typed.func_ir.func_id, "func", None), "__module__", "") or ""
    if module == "numba.misc.literal":  # literal_unroll(tup): the identity, fine to inline
        return False
    return module == "numba" or module.startswith(("numba.", "numpy"))


def _device_call(lowerer, expr, fn, fn_ty, sig):
    """Inline a call of a device function (@nv.jit, numba.njit, @overload, @register_jitable,
    @overload_method implementations); None if `fn` is none of these."""
    typed, disp = inline.typed_callee(fn_ty, sig)
    if typed is None or _is_library_implementation(typed):
        return None
    root = lowerer.root
    origin = getattr(disp, "origin", None)
    if origin is not None:
        root.device_calls.append((origin, expr.loc))
    root.callees.append(typed)
    name = getattr(typed.func_ir.func_id, "func_name", None) or callee_name(fn)
    receiver = fn.receiver if isinstance(fn, inline.BoundMethod) else None
    return inline.lower_device_call(lowerer, expr, fn_ty, sig, typed, name, receiver)


# Numba spells a try/except as calls to these (the first one at the `try`).
_TRY_MARKERS = (eh.mark_try_block, eh.end_try_block, eh.exception_check, eh.exception_match)


def _is_try_marker(fn):
    return any(fn is m for m in _TRY_MARKERS)


def _hashable(obj):
    try:
        hash(obj)
    except TypeError:
        return False
    return True


def _intrinsic(lowerer, expr, sig, builtin):
    b = lowerer.b
    axis = lowerer.static_int(expr.args[0]) if len(expr.args) == 1 else None
    if axis not in (0, 1, 2):
        raise unsupported(
            f"'{builtin.name}' with an axis that is not a literal 0, 1 or 2", expr.loc
        )
    kind = compute_kind(sig.return_type, lowerer.mode, expr.loc)
    if builtin in (_core.Builtin.global_id, _core.Builtin.group_id, _core.Builtin.num_groups):
        return grid.lower(lowerer, builtin, axis, kind)  # right in grids split by the launcher
    return arith.convert(b, b.builtin(builtin, axis), kind)


def _len(lowerer, expr, sig):
    (arg,) = expr.args
    ty = lowerer.typemap[arg.name]
    k = compute_kind(sig.return_type, lowerer.mode, expr.loc)
    if isinstance(ty, types.Array):
        return arith.convert(lowerer.b, lowerer.statics[arg.name].extents[0], k)
    if isinstance(ty, types.BaseTuple):
        return arith.const(lowerer.b, k, len(ty.types))
    raise unsupported(f"len() of {ty}", expr.loc)


def _scalar_args(lowerer, expr, sig, name):
    """The scalar operands of a builtin call, cast to the signature's types.

    Numba types min/max of several arguments as one star-args tuple, and
    min/max of one tuple as that tuple: both give the tuple's elements here.
    """
    args, sig_args = expr.args, sig.args
    if len(args) == 1 and isinstance(lowerer.typemap[args[0].name], types.BaseTuple):
        tuple_ty = sig_args[0]
        if len(tuple_ty.types) == 1 and isinstance(tuple_ty.types[0], types.BaseTuple):
            tuple_ty = tuple_ty.types[0]  # max(t) is typed as max(*(t,))
        tup = lowerer.load_cast(args[0], tuple_ty)
        tys = tuple_ty.types
    elif len(sig_args) == 1 and isinstance(sig_args[0], types.BaseTuple) and len(args) > 1:
        tys = sig_args[0].types
        tup = [lowerer.load_cast(a, t) for a, t in zip(args, tys)]
    else:
        tys = sig_args
        tup = [lowerer.load_cast(a, t) for a, t in zip(args, tys)]
    for t in tys:
        if not is_scalar_type(t):
            raise unsupported(f"'{name}' of {t}", expr.loc)
    return list(tup)


def _abs(lowerer, expr, sig):
    b = lowerer.b
    (x,) = _scalar_args(lowerer, expr, sig, "abs")
    k = compute_kind(sig.return_type, lowerer.mode, expr.loc)
    x = arith.convert(b, x, k)
    if is_float(k):
        # The sign bit cleared, not FAbs: exact for subnormals also where the driver flushes
        # them (NVIDIA's FAbs of a float32 subnormal gives 0).
        return mathlib.bits.fabs(b, x)
    if is_signed(k):
        return b.select(b.compare(Op.lt, x, arith.const(b, k, 0)), b.unary(Op.neg, x), x)
    return x


def _minmax(lowerer, expr, sig, is_max):
    """CPython's min/max: the first extreme argument wins (NaN as Python compares it)."""
    b = lowerer.b
    name = "max" if is_max else "min"
    if len(expr.args) == 1 and isinstance(lowerer.typemap[expr.args[0].name], types.Array):
        return builtin_minmax(lowerer, lowerer.load_var(expr.args[0].name), sig, is_max, expr.loc)
    values = _scalar_args(lowerer, expr, sig, name)
    if not values:
        raise unsupported(f"'{name}' of an empty sequence", expr.loc)
    k = compute_kind(sig.return_type, lowerer.mode, expr.loc)
    values = [arith.convert(b, v, k) for v in values]
    if k == K.bool:
        values = [arith.convert(b, v, K.i32) for v in values]
    result = values[0]
    # A bfloat16's subnormals compared on the bits (the arguments may come as one tuple).
    tys = [e for t in sig.args for e in (t.types if isinstance(t, types.BaseTuple) else (t,))]
    cb = bfloat16.builder(lowerer, *tys)
    for v in values[1:]:
        better = cb.compare(Op.gt if is_max else Op.lt, v, result)
        result = b.select(better, v, result)
    return arith.convert(b, result, k)


def _divmod(lowerer, expr, sig):
    b = lowerer.b
    x, y = _scalar_args(lowerer, expr, sig, "divmod")
    q_ty = sig.return_type.types[0]
    k = compute_kind(q_ty, lowerer.mode, expr.loc)
    x, y = arith.convert(b, x, k), arith.convert(b, y, k)
    return arith.divmod_(b, x, y)


def _namedtuple(lowerer, expr, cls, sig):
    """``Point(x, y=...)``: the fields in order, each cast to the field's type."""
    loc = expr.loc
    fields = list(cls._fields)
    given = dict(zip(fields, expr.args))
    for name, var in expr.kws:
        if name not in fields or name in given:
            raise unsupported(f"calling '{callee_name(cls)}' with argument '{name}'", loc)
        given[name] = var
    values = []
    for name, field_ty in zip(fields, sig.return_type.types):
        if name not in given:
            raise unsupported(f"'{callee_name(cls)}' without field '{name}' (defaults)", loc)
        values.append(lowerer.load_cast(given[name], field_ty))
    return tuple(values)


def _check_step(lowerer, step_var, loc):
    """ValueError('slice step cannot be zero'), as numba.njit raises it, for a step
    computed at run time (a literal zero is refused at compile time)."""
    from . import status
    from .exceptions import site

    b = lowerer.b
    step = lowerer.load_var(step_var.name)
    bad = b.compare(Op.eq, step, arith.const(b, b.kind(step), 0))
    status.check(lowerer, bad, site(lowerer, ValueError, ("slice step cannot be zero",), loc))
