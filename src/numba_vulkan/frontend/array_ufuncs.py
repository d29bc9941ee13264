"""NumPy ufuncs applied to whole arrays inside a kernel, with an output array.

``np.sin(x, out)``, ``np.arctan2(y, x, out)`` and the like (numba-cuda's
documentation calls ufuncs this way inside a kernel): the invocation that
makes the call runs a loop over the output's elements in C order (for_each,
loops.py), reading the inputs at the same indices and computing each
element with the scalar math library (frontend/mathlib), in the loop types
Numba's ufunc machinery picks for these dtypes (``ufunc_find_matching_loop``),
as numba.njit does.

Inputs are arrays of the output's shape, arrays of fewer dimensions
(broadcast along the leading axes, NumPy's rule for missing axes), or
scalars; an input axis of extent 1 is broadcast along the output's, as in
numba.njit. An input axis shorter than the output's (and not 1), which
numba.njit reads past its end, raises ValueError; a longer one is read in
part, as numba.njit reads it. Without an output argument, where
numba.njit allocates an array, the call is an array expression
(frontend/array_exprs.py). Complex elements take NumPy's complex loops
(mathlib/complex_ufuncs.py: the transcendental functions, comparisons, logical and
min/max ufuncs). Ufuncs the math library does not have are refused.
"""

import numpy as np
from numba.core import types
from numba.np.numpy_support import ufunc_find_matching_loop

from .. import _core
from . import array_exprs, mathlib
from .arrays import ArrayArg
from .errors import unsupported
from .loops import for_each
from .mathlib import complex_ufuncs

Op = _core.Op
K = _core.Kind


def lower_array_ufunc(lo, expr, fn, sig, name):
    """Lower a ufunc call with array operands; None where this is not one."""
    if not isinstance(fn, np.ufunc) or not any(isinstance(t, types.Array) for t in sig.args):
        return None
    loc = expr.loc
    if expr.kws:
        raise unsupported(f"keyword arguments in calls to '{name}' on arrays", loc)
    if fn.nout != 1:
        raise unsupported(f"'{name}' on arrays (it has {fn.nout} outputs)", loc)
    if len(expr.args) == fn.nin and isinstance(sig.return_type, types.Array):
        return array_exprs.ufunc_call(lo, fn, name, expr.args, sig, loc), sig.return_type
    if len(expr.args) != fn.nin + 1:
        raise unsupported(f"'{name}' on arrays with {len(expr.args)} arguments", loc)
    in_vars, out_var = expr.args[: fn.nin], expr.args[fn.nin]
    out = lo.statics.get(out_var.name)
    if not isinstance(out, ArrayArg):
        raise unsupported(f"'{name}' with an output of type {lo.typemap[out_var.name]}", loc)
    in_types = [lo.typemap[v.name] for v in in_vars]
    dtypes = [t.dtype if isinstance(t, types.Array) else types.unliteral(t) for t in in_types]
    is_complex = any(isinstance(t, types.Complex) for t in dtypes + [out.ty.dtype])
    if is_complex and not complex_ufuncs.handles(fn):
        raise unsupported(f"'{name}' on complex arrays", loc)
    if not is_complex and fn not in mathlib.TABLE:
        raise unsupported(f"'{name}' on arrays (not in the kernel math library)", loc)
    loop = ufunc_find_matching_loop(fn, tuple(dtypes) + (out.ty.dtype,))
    is_complex = is_complex and any(isinstance(t, types.Complex) for t in loop.inputs)
    if loop is None:
        raise unsupported(f"'{name}' of {', '.join(map(str, in_types))} into {out.ty}", loc)
    scalar_sig = loop.outputs[0](*loop.inputs)
    inputs = []
    for var, ty in zip(in_vars, in_types):
        if isinstance(ty, types.Array):
            arr = lo.statics.get(var.name)
            if not isinstance(arr, ArrayArg) or arr.ndim > out.ndim:
                raise unsupported(f"'{name}' of {ty} into {out.ty}", loc)
            # numba.njit reads past the end of a shorter input; a longer one it reads in part.
            number = len(inputs)
            array_exprs.check_fits(lo, out, arr, loc, lambda axis, number=number: (
                f"input {number} has {{1}} elements along axis {axis}, fewer than the "
                f"output's {{0}} (and not 1, which would be broadcast)"), shorter_only=True)
            inputs.append((arr, ty.dtype))
        else:  # a scalar: the same value for every element, kept in a variable (KIR
            # values do not cross blocks, and the loop body is other blocks)
            value = lo.load_var(var.name)
            parts = value if isinstance(value, tuple) else (value,)  # complex: (re, im)
            slots = tuple(lo.b.var(lo.b.kind(v)) for v in parts)
            for slot, v in zip(slots, parts):
                lo.b.store(slot, v)
            inputs.append((slots, types.unliteral(ty)))

    def body(b, idx):
        args = []
        for (value, ty), want in zip(inputs, loop.inputs):
            if isinstance(value, ArrayArg):
                value = value.load(b, array_exprs.broadcast_indices(b, value, idx), loc)
            else:
                value = tuple(b.load(slot) for slot in value)
                value = value if len(value) > 1 else value[0]
            args.append(lo.cast(value, ty, want, loc))
        if is_complex:  # NumPy's complex loops (mathlib/complex_ufuncs.py)
            result = complex_ufuncs.lower(lo, fn, args, scalar_sig, loc)
        else:
            result = mathlib.TABLE[fn](array_exprs.ElementCall(lo, loc, scalar_sig, name, args))
        result = lo.cast(result, loop.outputs[0], out.ty.dtype, loc)
        out.store(b, idx, result, loc)

    lo.exact_math = True  # see LoweredKernel.exact_math
    for_each(lo, out, body)
    return out, sig.return_type


__all__ = ["lower_array_ufunc"]
