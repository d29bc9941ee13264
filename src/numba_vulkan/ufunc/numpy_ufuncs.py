"""NumPy's ufuncs on device arrays: ``np.add(d, 1)``, ``np.sin(d)``, ``d + e`` on the device.

``DeviceArray.__array_ufunc__`` (runtime/operators.py) lands in ``array_ufunc``:

1. Types: NumPy itself picks the loop (``ufunc.resolve_dtypes``), with Python
   scalars passed as ``int``/``float``/``complex`` so that they stay weak as in
   NumPy 2 (``int8 array + 1`` is int8, ``float32 array * 2.0`` float32). The
   result dtypes are therefore NumPy's by construction.
2. Code: a scalar core function is generated per (ufunc, loop types) from the
   table below, in the loop's input types (float16 computed in float32, as
   NumPy's half loops do), and applied by the element-wise kernels
   (elementwise.py); kernels are cached. The table spells out NumPy's
   semantics where Numba's differ: wrap-around to the loop type, shifts by a
   count outside ``[0, bits)``, ``INT_MIN // -1``, comparisons of int64 with
   uint64, ``power`` by squaring in the loop type. Float functions call
   NumPy's scalar functions, which the kernel math library implements
   (docs/math.md: exact, or within the ulp stated there).
3. What the table does not name is tried as ``np.<name>(x, ...)`` in the
   kernel; a ufunc the kernel language cannot compile raises
   VulkanUnsupportedError naming the ufunc and the types.

Integer ``power`` with a negative exponent raises ValueError as NumPy does
(checked on the host, with a device reduction for array exponents).
"""

import math
import re

import numpy as np

from .. import bfloat16_host, forksafe
from ..errors import VulkanUnsupportedError
from ..runtime.array import DeviceArray
from ..runtime.compiler_hook import jit
from . import operands
from .vectorizer import apply

# ---------------------------------------------------------------- expressions per kind

_ARITH = {"add": "x + y", "subtract": "x - y", "multiply": "x * y"}
_CMP = {"less": "<", "less_equal": "<=", "greater": ">", "greater_equal": ">=",
        "equal": "==", "not_equal": "!="}  # fmt: skip
_LOGICAL = {
    "logical_and": "(x != 0) & (y != 0)",
    "logical_or": "(x != 0) | (y != 0)",
    "logical_xor": "(x != 0) != (y != 0)",
    "logical_not": "x == 0",
}
_BITS = {"bitwise_and": "x & y", "bitwise_or": "x | y", "bitwise_xor": "x ^ y"}

_INT = {
    **_ARITH,
    **_BITS,
    "floor_divide": "x // y",
    "remainder": "x % y",
    "fmod": "_fmod(x, y)",
    "divmod": "(x // y, x % y)",
    "power": "_ipow(x, y)",
    "negative": "Z - x",
    "positive": "x",
    "absolute": "x if x >= Z else Z - x",
    "invert": "~x",
    "sign": "ONE if x > Z else (MONE if x < Z else Z)",
    "square": "x * x",
    "maximum": "x if x >= y else y",
    "minimum": "x if x <= y else y",
    "fmax": "x if x >= y else y",
    "fmin": "x if x <= y else y",
    "left_shift": "(x << y) if (y >= Z and y < BITS) else Z",
    "right_shift": "(x >> y) if (y >= Z and y < BITS) else (MONE if x < Z else Z)",
    "isnan": "False",
    "isinf": "False",
    "isfinite": "True",
    "floor": "x",
    "ceil": "x",
    "trunc": "x",
    "conjugate": "x",
}

_BOOL = {
    "add": "x | y",
    "multiply": "x & y",
    "maximum": "x | y",
    "minimum": "x & y",
    "fmax": "x | y",
    "fmin": "x & y",
    "bitwise_and": "x & y",
    "bitwise_or": "x | y",
    "bitwise_xor": "x != y",
    "invert": "not x",
    "absolute": "x",
    "positive": "x",
    "isnan": "False",
    "isinf": "False",
    "isfinite": "True",
    "conjugate": "x",
}

_FLOAT = {
    **_ARITH,
    "divide": "x / y",
    "negative": "-x",
    "positive": "x",
    "absolute": "np.fabs(x)",
    "square": "x * x",
    "reciprocal": "ONE / x",
    "conjugate": "x",
    "divmod": "(np.floor_divide(x, y), np.remainder(x, y))",
    "float_power": "np.power(x, y)",
    "sign": "ONE if x > Z else (MONE if x < Z else (x if x != x else Z))",  # sign(-0) is +0
}

# float16 loops are computed in float32; these are the functions where that is not NumPy's
# half-precision result (None: refused).
_HALF = {
    "nextafter": "_nextafter16(x, y)",
    "spacing": None,
}

_COMPLEX = {
    **_ARITH,
    "divide": "x / y",
    "negative": "-x",
    "positive": "x",
    "absolute": "abs(x)",
    "conjugate": "x.conjugate()",
    "square": "x * x",
}

# ---------------------------------------------------------------- helpers the table calls


def _fmod(x, y):
    """C's truncated remainder (NumPy's integer fmod; 0 for y == 0)."""
    r = x % y
    if r != 0 and (r < 0) != (x < 0):
        r -= y
    return r


def _nextafter16(x, y):
    """np.nextafter of float16 values held in float32: the neighbour in half precision
    (11 significant bits, subnormals down to 2^-24), which float32's nextafter is not."""
    if x != x or y != y:
        return x + y
    if x == y:
        return y
    if x == 0:
        return np.copysign(np.float32(2.0**-24), y)
    if x - x != 0:  # an infinity, stepping toward y: the largest finite half
        return np.copysign(np.float32(65504.0), x)
    m, e = math.frexp(abs(x))
    ulp = math.ldexp(1.0, max(e - 11, -24))
    toward_zero = (y > x) != (x > 0)
    if toward_zero and m == 0.5 and e - 11 > -24:
        ulp = ulp / 2  # below a power of two the spacing halves
    return x + ulp if y > x else x - ulp


_helpers = None


def _helper_functions():
    global _helpers
    if _helpers is None:
        _helpers = {"_fmod": jit(device=True)(_fmod),
                    "_nextafter16": jit(device=True)(_nextafter16)}
    return _helpers


_IPOW_SOURCE = """
def _ipow(x, y):
    r = T(1)
    b = T(x)
    e = y
    for _ in range(BITS):
        if e <= 0:
            break
        if e & 1:
            r = T(r * b)
        b = T(b * b)
        e = e >> 1
    return r
"""


def _int_pow(dtype):
    """Integer power by squaring, wrapping in `dtype` after every step (as NumPy)."""
    ns = {"T": np.dtype(dtype).type, "BITS": 8 * np.dtype(dtype).itemsize}
    exec(compile(_IPOW_SOURCE, "<numba_vulkan ipow>", "exec"), ns)
    return jit(device=True)(ns["_ipow"])


# ---------------------------------------------------------------- core functions

_cores = {}
_lock = forksafe.lock()


def _compute_dtype(dtype):
    """The type a loop type is computed in: float16 in float32 (as NumPy's half loops)."""
    return np.dtype(np.float32) if dtype == np.float16 else np.dtype(dtype)


def _expression(name, in_dtypes, loop_dtypes):
    if loop_dtypes[0] == np.float16 and name in _HALF:
        return _HALF[name]
    kinds = {d.kind for d in in_dtypes}
    first = in_dtypes[0]
    if name in _CMP:
        if len(in_dtypes) == 2 and {in_dtypes[0].kind, in_dtypes[1].kind} == {"i", "u"}:
            return _mixed_compare(name, in_dtypes)
        return f"x {_CMP[name]} y"
    if name in _LOGICAL:
        return _LOGICAL[name]
    if kinds == {"b"}:
        return _BOOL.get(name)
    if first.kind in "iu" and kinds <= {"i", "u"}:
        expr = _INT.get(name)
        if name == "floor_divide" and first.kind == "i" and first.itemsize == 8:
            expr = "x // y if y != MONE else Z - x"  # INT64_MIN // -1 wraps, as in NumPy
        if name == "divmod" and first.kind == "i" and first.itemsize == 8:
            expr = "(x // y if y != MONE else Z - x, x % y)"
        if name in ("right_shift",) and first.kind == "u":
            expr = "(x >> y) if y < BITS else Z"
        if name in ("left_shift",) and first.kind == "u":
            expr = "(x << y) if y < BITS else Z"
        if name in ("absolute",) and first.kind == "u":
            expr = "x"
        if name == "sign" and first.kind == "u":
            expr = "ONE if x > Z else Z"
        return expr
    if first.kind == "f":
        return _FLOAT.get(name, f"np.{name}({', '.join('xy'[: len(in_dtypes)])})")
    if bfloat16_host.is_dtype(first):  # typing/bfloat16_math.py: float32, rounded once
        return f"np.{name}({', '.join('xy'[: len(in_dtypes)])})"
    if first.kind == "c":
        return _COMPLEX.get(name)
    return None


def _mixed_compare(name, in_dtypes):
    """int64 against uint64 compared exactly (Numba would compare them as float64)."""
    op = _CMP[name]
    if in_dtypes[0].kind == "i":  # x signed, y unsigned: a negative x is below every y
        below = {"<": True, "<=": True, ">": False, ">=": False, "==": False, "!=": True}[op]
        return f"{below} if x < 0 else (np.uint64(x) {op} y)"
    above = {"<": False, "<=": False, ">": True, ">=": True, "==": False, "!=": True}[op]
    return f"{above} if y < 0 else (x {op} np.uint64(y))"


def core_for(ufunc, in_dtypes, loop_dtypes=None):
    """The jit device function computing `ufunc` on scalars of the compute types
    (`loop_dtypes`: NumPy's loop types, where float16 differs from the compute type)."""
    loop_dtypes = tuple(loop_dtypes or in_dtypes)
    key = (ufunc.__name__, tuple(in_dtypes), loop_dtypes)
    core = _cores.get(key)
    if core is not None:
        return core
    with _lock:
        core = _cores.get(key)
        if core is not None:
            return core
        name = ufunc.__name__
        expr = _expression(name, in_dtypes, loop_dtypes)
        if expr is None:
            raise VulkanUnsupportedError(
                f"np.{name} is not available on device arrays for "
                f"{', '.join(map(str, in_dtypes))} (copy to the host: np.asarray(d))"
            )
        first = np.dtype(in_dtypes[0])
        ns = {"np": np, **_helper_functions()}
        if first.kind in "iuf":
            t = first.type
            ns.update(Z=t(0), ONE=t(1), BITS=t(8 * first.itemsize) if first.kind != "f" else 0)
            if first.kind in "if":
                ns["MONE"] = t(-1)
        if name == "power" and first.kind in "iu":
            ns["_ipow"] = _int_pow(first)
        params = ", ".join("xy"[: len(in_dtypes)])
        source = f"def _nv_{name}({params}):\n    return {expr}\n"
        exec(compile(source, f"<numba_vulkan np.{name}>", "exec"), ns)
        core = jit(device=True)(ns[f"_nv_{name}"])
        _cores[key] = core
    return core


# ---------------------------------------------------------------- __array_ufunc__

_UNSUPPORTED_KWARGS = ("where", "axes", "axis", "keepdims", "signature", "extobj")


def array_ufunc(ufunc, method, inputs, kwargs):
    """DeviceArray.__array_ufunc__: the ufunc computed on the device (see the module docs)."""
    if getattr(np, ufunc.__name__, None) is not ufunc:
        raise TypeError(
            f"{ufunc.__name__!r} is not one of NumPy's ufuncs: only those run on device arrays "
            "(for your own function use numba_vulkan.vectorize, or np.asarray(d) on the host)"
        )
    if method != "__call__":
        return _other_method(ufunc, method, inputs, kwargs)
    for x in inputs + tuple(_as_tuple(kwargs.get("out"))):
        if not isinstance(x, (DeviceArray, np.ndarray, np.generic, bool, int, float, complex,
                              list, tuple, type(None))) and hasattr(x, "__array_ufunc__"):
            return NotImplemented  # another array library's object: let it decide
    bad = [k for k in kwargs if k in _UNSUPPORTED_KWARGS and kwargs[k] is not None]
    bad += [k for k in kwargs if k not in _UNSUPPORTED_KWARGS + ("out", "dtype", "casting",
                                                                 "order", "subok")]
    if "where" in kwargs and kwargs["where"] is True:
        bad.remove("where")
    if bad:
        raise TypeError(f"np.{ufunc.__name__} on device arrays does not support "
                        f"{', '.join(sorted(bad))}=")  # fmt: skip
    if ufunc.signature is not None:
        raise TypeError(f"np.{ufunc.__name__} (a generalized ufunc) is not supported on device "
                        "arrays; use numba_vulkan.guvectorize")  # fmt: skip
    casting = kwargs.get("casting", "same_kind")
    out = _as_tuple(kwargs.get("out"))
    values = [operands.as_operand(x) for x in inputs]
    loop = _resolve(ufunc, values, kwargs.get("dtype"))
    in_loop, out_loop = loop[: ufunc.nin], loop[ufunc.nin :]
    for o, dt in zip(out or (), out_loop):
        if o is not None and not np.can_cast(dt, o.dtype, casting):
            raise TypeError(f"Cannot cast ufunc '{ufunc.__name__}' output from {dt!r} to "
                            f"{o.dtype!r} with casting rule {casting!r}")  # fmt: skip
    out_arg = None
    if out:
        out_arg = tuple(out) if ufunc.nout > 1 else out[0]
    big = _out_of_range_comparison(ufunc, values, in_loop)
    if big is not None:
        return _constant_comparison(ufunc, values, in_loop, big, out_arg)
    if ufunc.__name__ == "power" and in_loop[1].kind == "i":
        _check_int_power(values[1])
    compute = [_compute_dtype(d) for d in in_loop]
    core = core_for(ufunc, compute, in_loop)
    key = ("np", ufunc.__name__, tuple(compute), tuple(in_loop))
    try:
        result = apply(core, key, values, compute, list(out_loop), out_arg, None,
                       casting=casting)
    except VulkanUnsupportedError as e:
        reason = re.sub(r"\x1b\[[0-9;]*m", "", str(e)).strip().splitlines()[0]
        raise VulkanUnsupportedError(
            f"np.{ufunc.__name__} is not available on device arrays of "
            f"{', '.join(map(str, in_loop))}: {reason}"
        ) from None
    return result


def _as_tuple(out):
    if out is None:
        return ()
    return out if isinstance(out, tuple) else (out,)


def _resolve(ufunc, values, dtype):
    """NumPy's loop dtypes for these operands (weak Python scalars as NumPy 2 has them)."""
    spec = []
    for v in values:
        if isinstance(v, bool):
            spec.append(np.dtype(np.bool_))
        elif operands.is_python_scalar(v):
            spec.append(type(v))
        else:
            spec.append(np.dtype(v.dtype))
    outs = (None,) * ufunc.nout
    signature = None
    if dtype is not None:  # NumPy's dtype= fixes the outputs' DType in the loop signature
        signature = (None,) * ufunc.nin + (np.dtype(dtype),) * ufunc.nout
    try:
        if signature is None:
            return ufunc.resolve_dtypes(tuple(spec) + outs)
        return ufunc.resolve_dtypes(tuple(spec) + outs, signature=signature)
    except TypeError:
        raise
    except Exception as e:  # NumPy's _UFuncNoLoopError and the like
        raise TypeError(str(e)) from None


def _out_of_range_comparison(ufunc, values, in_loop):
    """For a comparison with a Python int outside the loop type's range, which NumPy 2
    answers exactly (``int8 array < 1000`` is all True), the int itself; else None."""
    if ufunc.__name__ not in _CMP:
        return None
    for v, dt in zip(values, in_loop):
        if isinstance(v, int) and not isinstance(v, bool) and dt.kind in "iu":
            info = np.iinfo(dt)
            if not info.min <= v <= info.max:
                return v
    return None


_constant_cores = {}


def _constant_comparison(ufunc, values, in_loop, big, out_arg):
    """The comparison of the other operand with an out-of-range int `big`: the same answer
    for every element (NumPy's, computed here for one), filled in by a kernel."""
    k = next(i for i, v in enumerate(values) if v is not big)
    probe = [np.zeros((), in_loop[k]) if i == k else big for i in range(2)]
    answer = bool(ufunc(*probe))
    core = _constant_cores.get(answer)
    if core is None:
        ns = {}
        exec(f"def _nv_constant(x):\n    return {answer}\n", ns)
        core = _constant_cores[answer] = jit(device=True)(ns["_nv_constant"])
    other = values[k]
    dtype = np.dtype(other.dtype) if hasattr(other, "dtype") else in_loop[k]
    return apply(core, ("np-constant", answer), [other], [dtype], [np.dtype(np.bool_)],
                 out_arg, None)  # fmt: skip


def _check_int_power(exponent):
    """NumPy refuses integer powers with negative integer exponents."""
    message = "Integers to negative integer powers are not allowed."
    if isinstance(exponent, DeviceArray):
        if exponent.size and exponent.min() < 0:
            raise ValueError(message)
    elif np.any(np.asarray(exponent) < 0):
        raise ValueError(message)


def _other_method(ufunc, method, inputs, kwargs):
    """``reduce`` of add/minimum/maximum over all axes uses the device reductions; the
    rest of NumPy's ufunc methods is refused clearly."""
    reductions = {"add": "sum", "minimum": "min", "maximum": "max"}
    axis = kwargs.get("axis", 0)
    if (method == "reduce" and ufunc.__name__ in reductions and len(inputs) == 1
            and isinstance(inputs[0], DeviceArray) and kwargs.get("out") is None
            and (axis is None or inputs[0].ndim == 1 and axis in (0, -1))
            and set(kwargs) <= {"axis"}):  # fmt: skip
        return getattr(inputs[0], reductions[ufunc.__name__])()
    raise TypeError(
        f"np.{ufunc.__name__}.{method} is not supported on device arrays (supported: calls "
        "of element-wise ufuncs, and np.add/minimum/maximum.reduce over all axes); copy to the "
        "host first with np.asarray(d)"
    )
