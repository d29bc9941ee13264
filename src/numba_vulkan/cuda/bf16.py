"""``numba.cuda.bf16`` (numba-cuda's bfloat16 intrinsics) on numba_vulkan's bfloat16.

``from numba_vulkan.cuda.bf16 import hadd, bfloat16`` in place of ``from numba.cuda.bf16
import ...``. ``bfloat16`` is ``ml_dtypes.bfloat16``: the constructor in kernels and the
dtype of arrays on the host. Each function is a Python function with an ``@overload``
for the Vulkan target, written with numba_vulkan's bfloat16 (docs/arrays-in-kernels.md):
arithmetic computed in float32 and rounded once to nearest even, as CUDA's ``_rn``
forms; ``hfma`` rounded once (typing/bfloat16.fma); CUDA's rules for NaN in ``hmax``,
``hmin``, the ``_sat`` forms and the conversions to integers (saturating, NaN to 0);
``canonical NaN`` is CUDA's 0x7FFF. The names numba-cuda exports that are not mapped
(its typing and target registries) raise VulkanUnsupportedError naming themselves.

Differences from numba-cuda: ``math.floor``, ``ceil``, ``trunc`` of a bfloat16 give an
int (Python's rule, as for float32), numba-cuda's give a bfloat16 (``hfloor`` & co. give
one here too); ``htanh_approx`` and ``hrsqrt`` are not approximations; the NaN a
``_sat``-free operation produces is the device's float32 NaN rounded (its sign may
differ from CUDA's canonical one).
"""

import math

import numpy as np
from numba.core import types
from numba.core.errors import TypingError
from numba.extending import overload

from .. import bfloat16_host
from ..dispatcher import jit
from ..typing.bfloat16 import as_bits, from_bits, is_bfloat16
from ..typing.bfloat16 import fma as _fma
from .kernel_api import refused

bfloat16 = bfloat16_host.scalar_type()
_NAN = 0x7FFF  # CUDA's canonical bfloat16 NaN
__all__ = ["bfloat16", "typing_registry", "target_registry"]
_device = jit(device=True)  # the helpers below: device functions the overloads call


def _kernel_only(name):
    raise NotImplementedError(f"numba_vulkan.cuda.bf16.{name} can only be used inside a kernel")


def _stub(name, nargs):
    """A kernel-side function `name` of `nargs` arguments (its @overload gives its body)."""
    params = ", ".join("abc"[:nargs])
    namespace = {"_kernel_only": _kernel_only}
    exec(f"def {name}({params}):\n    _kernel_only({name!r})\n", namespace)
    return namespace[name]


def _define(name, nargs, impl, accepts=is_bfloat16, what="bfloat16"):
    """``name(*args)`` with body `impl` for arguments that all pass `accepts`."""
    stub = _stub(name, nargs)

    def typer(*args):
        if not all(accepts(types.unliteral(a)) for a in args):
            raise TypingError(f"cuda.bf16.{name} takes {nargs} {what} argument(s), not "
                              f"{', '.join(map(str, args))}")  # fmt: skip
        return impl

    overload(stub, target="vulkan")(_with_params(typer, nargs))
    _alias(name, stub)
    return stub


def _alias(name, fn):
    """Make `fn` the module's public name `name` (numba-cuda's names and their aliases)."""
    globals()[name] = fn
    __all__.append(name)


def _with_params(typer, nargs):
    """`typer` with named parameters (Numba's @overload matches them with the stub's)."""
    if nargs == 1:
        return lambda a: typer(a)
    if nargs == 2:
        return lambda a, b: typer(a, b)
    return lambda a, b, c: typer(a, b, c)


def _is_int(ty):
    return isinstance(ty, (types.Integer, types.Boolean))


def _is_number(ty):
    return isinstance(ty, (types.Integer, types.Float, types.Boolean)) or is_bfloat16(ty)


# ---------------------------------------------------------------- arithmetic


@_device
def _sat(r):
    """CUDA's saturation to [0, 1]; NaN to +0."""
    if r > bfloat16(1.0):
        return bfloat16(1.0)
    if r > bfloat16(0.0):
        return r
    return bfloat16(0.0)


@_device
def _relu(r):
    """CUDA's relu: negative results to +0, NaN to the canonical NaN."""
    if r != r:
        return from_bits(_NAN)
    if r < bfloat16(0.0):
        return bfloat16(0.0)
    return r


_define("habs", 1, lambda a: abs(a))
_define("hneg", 1, lambda a: -a)
for _suffix in ("", "_rn"):
    _define("hadd" + _suffix, 2, lambda a, b: a + b)
    _define("hsub" + _suffix, 2, lambda a, b: a - b)
    _define("hmul" + _suffix, 2, lambda a, b: a * b)
_define("hdiv", 2, lambda a, b: a / b)
_define("hadd_sat", 2, lambda a, b: _sat(a + b))
_define("hsub_sat", 2, lambda a, b: _sat(a - b))
_define("hmul_sat", 2, lambda a, b: _sat(a * b))
_define("hfma", 3, lambda a, b, c: _fma(a, b, c))
_define("hfma_sat", 3, lambda a, b, c: _sat(_fma(a, b, c)))
_define("hfma_relu", 3, lambda a, b, c: _relu(_fma(a, b, c)))

# ---------------------------------------------------------------- comparisons

_define("heq", 2, lambda a, b: a == b)
_define("hne", 2, lambda a, b: a < b or a > b)  # ordered: False with a NaN
_define("hge", 2, lambda a, b: a >= b)
_define("hgt", 2, lambda a, b: a > b)
_define("hle", 2, lambda a, b: a <= b)
_define("hlt", 2, lambda a, b: a < b)
_define("hequ", 2, lambda a, b: not (a < b or a > b))  # unordered: True with a NaN
_define("hneu", 2, lambda a, b: a != b)
_define("hgeu", 2, lambda a, b: not (a < b))
_define("hgtu", 2, lambda a, b: not (a <= b))
_define("hleu", 2, lambda a, b: not (a > b))
_define("hltu", 2, lambda a, b: not (a >= b))
_define("hisnan", 1, lambda a: a != a)
_define("hisinf", 1, lambda a: np.int32(1) if a == math.inf else (
    np.int32(-1) if a == -math.inf else np.int32(0)))  # fmt: skip


@_device
def _max(a, b, want_greater):
    """CUDA's __hmax (want_greater) and __hmin: a NaN loses to a number, two NaNs give the
    canonical NaN, +0 is greater than -0."""
    if a != a:
        return b if b == b else from_bits(_NAN)
    if b != b:
        return a
    if a == b:  # equal: two zeros of either sign, or one number
        a_positive = as_bits(a) < 0x8000
        return a if a_positive == want_greater else b
    return a if (a > b) == want_greater else b


@_device
def _max_nan(a, b, want_greater):
    """__hmax_nan / __hmin_nan: a NaN operand gives the canonical NaN."""
    if a != a or b != b:
        return from_bits(_NAN)
    return _max(a, b, want_greater)


_define("hmax", 2, lambda a, b: _max(a, b, True))
_define("hmin", 2, lambda a, b: _max(a, b, False))
_define("hmax_nan", 2, lambda a, b: _max_nan(a, b, True))
_define("hmin_nan", 2, lambda a, b: _max_nan(a, b, False))

# ---------------------------------------------------------------- math

_define("htrunc", 1, lambda a: np.trunc(a))
_define("hceil", 1, lambda a: np.ceil(a))
_define("hfloor", 1, lambda a: np.floor(a))
_define("hrint", 1, lambda a: np.rint(a))
_define("hsqrt", 1, lambda a: np.sqrt(a))
_define("hrsqrt", 1, lambda a: bfloat16(np.float32(1.0) / np.sqrt(np.float32(a))))
_define("hrcp", 1, lambda a: np.reciprocal(a))
_define("hlog", 1, lambda a: np.log(a))
_define("hlog2", 1, lambda a: np.log2(a))
_define("hlog10", 1, lambda a: np.log10(a))
_define("hcos", 1, lambda a: np.cos(a))
_define("hsin", 1, lambda a: np.sin(a))
_define("hexp", 1, lambda a: np.exp(a))
_define("hexp2", 1, lambda a: np.exp2(a))
_define("hexp10", 1, lambda a: bfloat16(np.power(np.float32(10.0), np.float32(a))))
_define("htanh", 1, lambda a: np.tanh(a))
_define("htanh_approx", 1, lambda a: np.tanh(a))

# ---------------------------------------------------------------- conversions

_define("bfloat162float", 1, lambda a: np.float32(a))
for _name in ("float2bfloat16", "float2bfloat16_rn"):
    _define(_name, 1, lambda a: bfloat16(np.float32(a)), _is_number, "number")
_define("double2bfloat16", 1, lambda a: bfloat16(np.float64(a)), _is_number, "number")


@_device
def _float_directed(x, toward):
    """float32 `x` rounded to bfloat16 toward zero (0), -inf (-1) or +inf (1): the nearest,
    then one step back where it went past `x` in the wrong direction."""
    r = bfloat16(x)
    # Comparisons with a bfloat16 operand: on the bits where the device may flush float32
    # subnormals (frontend/bfloat16.py), so a subnormal x is compared as it is.
    if toward == 0:  # r has x's sign
        past = r > x if as_bits(r) < 0x8000 else r < x
        step = -1  # the magnitude's word down
    elif toward < 0:
        past = r > x
        step = -1 if as_bits(r) < 0x8000 else 1
    else:
        past = r < x
        step = 1 if as_bits(r) < 0x8000 else -1
    if past:
        return from_bits(np.int64(as_bits(r)) + step)
    return r


_TOWARD = {"rz": 0, "rd": -1, "ru": 1}
for _mode, _toward in _TOWARD.items():
    _define(f"float2bfloat16_{_mode}", 1,
            (lambda t: lambda a: _float_directed(np.float32(a), t))(_toward),
            _is_number, "number")  # fmt: skip


@_device
def _int_directed(negative, m, toward):
    """The integer of magnitude `m` (uint64) and sign `negative` rounded to bfloat16
    toward zero (0), -inf (-1) or +inf (1): its top 8 significant bits (exact), plus one
    unit of the last kept bit where the magnitude must grow."""
    s = 0
    while (m >> np.uint64(s + 8)) != np.uint64(0):
        s += 1
    unit = np.uint64(1) << np.uint64(s)
    kept = m & ~(unit - np.uint64(1))
    r = bfloat16(kept)
    if kept != m and ((toward > 0 and not negative) or (toward < 0 and negative)):
        r = r + bfloat16(unit)  # exact: a power of two or 8 significant bits
    return -r if negative else r


@_device
def _signed_directed(v, toward):
    x = np.int64(v)
    negative = x < 0
    return _int_directed(negative, np.uint64(-x if negative else x), toward)


@_device
def _unsigned_directed(v, toward):
    return _int_directed(False, np.uint64(v), toward)


# CUDA's integer families: (its name, the NumPy-style name, the C type, signed)
_INTS = (("short", "int16", np.int16, True), ("ushort", "uint16", np.uint16, False),
         ("int", "int32", np.int32, True), ("uint", "uint32", np.uint32, False),
         ("ll", "int64", np.int64, True), ("ull", "uint64", np.uint64, False))  # fmt: skip


def _from_int(ctype, signed, mode):
    if mode == "rn":
        return lambda a: bfloat16(ctype(a))
    toward = _TOWARD[mode]
    if signed:
        return lambda a: _signed_directed(ctype(a), toward)
    return lambda a: _unsigned_directed(ctype(a), toward)


_ROUND = {"rn": np.rint, "rz": np.trunc, "rd": np.floor, "ru": np.ceil}


def _to_int(ctype, mode):
    """bfloat16 -> integer type `ctype` rounded by `mode`: saturating, NaN to 0 (CUDA)."""
    info = np.iinfo(ctype)
    lo, hi, above = float(info.min), info.max, float(info.max) + 1.0  # exact in float32
    low, high, zero = ctype(info.min), ctype(hi), ctype(0)
    rnd = _ROUND[mode]

    def impl(a):
        f = rnd(np.float32(a))
        if f != f:
            return zero
        if f >= above:
            return high
        if f < lo:
            return low
        return ctype(f)

    return impl


for _cuda, _np_name, _ctype, _signed in _INTS:
    for _mode in ("rn", "rz", "rd", "ru"):
        _define(f"{_cuda}2bfloat16_{_mode}", 1, _from_int(_ctype, _signed, _mode), _is_int,
                "integer")  # fmt: skip
        _define(f"bfloat162{_cuda}_{_mode}", 1, _to_int(_ctype, _mode))
        _alias(f"{_np_name}_to_bfloat16_{_mode}", globals()[f"{_cuda}2bfloat16_{_mode}"])
        _alias(f"bfloat16_to_{_np_name}_{_mode}", globals()[f"bfloat162{_cuda}_{_mode}"])
_define("bfloat162char_rz", 1, _to_int(np.int8, "rz"))
_define("bfloat162uchar_rz", 1, _to_int(np.uint8, "rz"))

# Bit reinterpretation.
# Another number given for the bfloat16 is converted to it first (numba-cuda's typing does).
_define("bfloat16_as_ushort", 1, lambda a: as_bits(bfloat16(a)), _is_number, "number")
_define("bfloat16_as_short", 1, lambda a: np.int16(as_bits(bfloat16(a))), _is_number, "number")
_define("ushort_as_bfloat16", 1, lambda a: from_bits(a), _is_int, "integer")
_define("short_as_bfloat16", 1, lambda a: from_bits(a), _is_int, "integer")

# numba-cuda's NumPy-style aliases.
for _new, _old in (("float32_to_bfloat16", "float2bfloat16"),
                   ("float64_to_bfloat16", "double2bfloat16"),
                   ("bfloat16_to_float32", "bfloat162float"),
                   ("bfloat16_to_int8_rz", "bfloat162char_rz"),
                   ("bfloat16_to_uint8_rz", "bfloat162uchar_rz"),
                   ("bfloat16_as_int16", "bfloat16_as_short"),
                   ("bfloat16_as_uint16", "bfloat16_as_ushort"),
                   ("int16_as_bfloat16", "short_as_bfloat16"),
                   ("uint16_as_bfloat16", "ushort_as_bfloat16"),
                   *((f"float32_to_bfloat16_{m}", f"float2bfloat16_{m}")
                     for m in ("rn", "rz", "rd", "ru"))):  # fmt: skip
    _alias(_new, globals()[_old])

# numba-cuda's Numba registries of its CUDA C bindings: nothing to map them to.
typing_registry = refused("bf16.typing_registry", "numba-cuda's typing registry of its CUDA C "
                          "bindings has no Vulkan counterpart")  # fmt: skip
target_registry = refused("bf16.target_registry", "numba-cuda's lowering registry of its CUDA "
                          "C bindings has no Vulkan counterpart")  # fmt: skip
