"""Typing templates of the kernel intrinsics in ``numba_vulkan.stubs``.

Each template lives in ``registry``, which ``target.VulkanTypingContext``
installs next to Numba's own registries (builtins, math, NumPy scalars).
"""

from numba.core import types
from numba.core.errors import TypingError
from numba.core.typing.templates import AbstractTemplate, Registry, signature

from .. import stubs
from .bfloat16 import BFloat16

registry = Registry()


class AxisIntrinsic(AbstractTemplate):
    """``f(axis)`` with a literal axis 0, 1 or 2, giving an intp (int64), as numba.cuda's grid."""

    prefer_literal = True

    def generic(self, args, kws):
        if kws or len(args) != 1:
            return None
        (axis,) = args
        if isinstance(axis, types.IntegerLiteral) and axis.literal_value in (0, 1, 2):
            return signature(types.intp, axis)
        if isinstance(axis, (types.Integer, types.IntegerLiteral)):
            raise TypingError(f"{self.key.__name__}() takes a constant axis 0, 1 or 2, not {axis}")
        return None


def _register_axis_intrinsic(stub):
    template = type(f"VulkanTemplate_{stub.__name__}", (AxisIntrinsic,), {"key": stub})
    registry.register_global(stub, types.Function(template))
    return template


AXIS_TEMPLATES = {stub: _register_axis_intrinsic(stub) for stub in stubs.AXIS_INTRINSICS}


# ---------------------------------------------------------------- issue 8: parallel primitives

from numba.core.typing.templates import AttributeTemplate, ConcreteTemplate, bound_function  # noqa: E402


def _register_namespace(ns):
    """Type a stub namespace (nv.shared, nv.atomic ...) as a module whose attributes are stubs."""
    registry.register_global(ns, types.Module(ns))


for _stub in stubs.BARRIERS:
    registry.register_global(
        _stub,
        types.Function(
            type(f"VulkanTemplate_{_stub.__name__}", (ConcreteTemplate,),
                 {"key": _stub, "cases": [signature(types.none)]})
        ),
    )


def _array_dtype(dtype):
    """The Numba type a dtype argument names (np.float32, numba.float32, x.dtype, 'float32'),
    or None."""
    if isinstance(dtype, types.NumberClass):
        return dtype.instance_type
    if isinstance(dtype, types.DType):  # np.dtype('f4') as a global, or arr.dtype
        return dtype.dtype
    if isinstance(dtype, types.StringLiteral):  # 'float32', as numba.cuda and np.empty take
        from numba.np.numpy_support import from_dtype

        try:
            return from_dtype(_np.dtype(dtype.literal_value))
        except Exception:  # not a dtype name NumPy or Numba knows
            return None
    if isinstance(dtype, types.BooleanLiteral) or dtype == types.boolean:
        return None
    if isinstance(dtype, types.Function) and getattr(dtype.typing_key, "__name__", "") == "bool":
        return types.boolean
    return None


def _shape_ndim(shape):
    if isinstance(shape, (types.Integer, types.IntegerLiteral)):
        return 1
    if isinstance(shape, types.BaseTuple) and all(
        isinstance(t, (types.Integer, types.IntegerLiteral)) for t in shape.types
    ):
        return len(shape.types)
    return None


class ArrayConstructor(AbstractTemplate):
    """``shared.array(shape, dtype[, alignment])`` / ``local.array(...)``: a C-contiguous
    array; the front end checks that the shape is a constant (numba.cuda's rule) and that
    an alignment is a constant power of two (frontend/local_arrays.py)."""

    def generic(self, args, kws):
        kws = dict(kws)
        args = list(args)
        if "shape" in kws:
            args.insert(0, kws.pop("shape"))
        if "dtype" in kws:
            args.insert(1, kws.pop("dtype"))
        if "alignment" in kws:
            args.insert(2, kws.pop("alignment"))
        if kws or len(args) not in (2, 3):
            return None
        if len(args) == 3 and not isinstance(args[2], (types.Integer, types.NoneType,
                                                       types.Omitted)):  # fmt: skip
            raise TypingError(f"{self.key.__name__}(): alignment must be a constant integer "
                              f"(or None), not {args[2]}")
        shape, dtype = args[:2]
        ndim = _shape_ndim(shape)
        elem = _array_dtype(dtype)
        if ndim is None or not 1 <= ndim <= 3:
            raise TypingError(f"{self.key.__name__}(): the shape must be a constant int or a "
                              f"tuple of 1 to 3 ints, not {shape}")
        if elem is not None and not isinstance(elem, (types.Integer, types.Float, types.Boolean,
                                                      types.Complex, BFloat16)):
            # a dtype Numba knows (complex, a record; np.complex64 or x.dtype): ours to refuse
            from ..errors import VulkanUnsupportedError

            raise VulkanUnsupportedError(
                f"nv.{self.key.__name__}() of {elem} elements is not supported in Vulkan "
                "kernels (shared and local arrays hold bool, integer, float, complex and "
                "bfloat16 elements)")
        if elem is None:
            raise TypingError(f"{self.key.__name__}(): unsupported dtype {dtype}")
        return signature(types.Array(elem, ndim, "C"), *args)


_ATOMIC_DTYPES = (types.int32, types.uint32, types.int64, types.uint64, types.float32,
                  types.float64)


class AtomicTemplate(AbstractTemplate):
    """``atomic.op(ary, idx, val)``: the old value, of the array's dtype."""

    integers_only = False
    nargs = 3
    first_element = False

    def generic(self, args, kws):
        if kws or len(args) != self.nargs:
            return None
        ary, idx = args[0], args[1]
        if not isinstance(ary, types.Array):
            return None
        if self.first_element:  # compare_and_swap(ary, expected, val): element 0
            if ary.ndim != 1 or not isinstance(ary.dtype, types.Integer):
                raise TypingError(f"atomic.compare_and_swap on a {ary.ndim}-d {ary.dtype} array "
                                  "(1-d arrays of int32, uint32, int64, uint64)")
            return signature(ary.dtype, ary, ary.dtype, ary.dtype)
        if ary.dtype not in _ATOMIC_DTYPES or (
            self.integers_only and not isinstance(ary.dtype, types.Integer)
        ):
            raise TypingError(f"atomic.{self.key.__name__.split('.')[-1]} on {ary.dtype} arrays "
                              "is not supported (int32, uint32, int64, uint64" +
                              ("" if self.integers_only else ", float32, float64") + ")")
        if isinstance(idx, types.BaseTuple):
            # numba.cuda converts each index of a tuple to intp, floats included (truncated):
            # (tx, uint64(ty)) unified with its remainders is a Tuple(int64, float64)
            if len(idx.types) != ary.ndim or not all(
                    isinstance(t, (types.Integer, types.Float)) for t in idx.types):
                raise TypingError(f"atomics on a {ary.ndim}-d array take {ary.ndim} integer "
                                  f"indices, not {idx}")
        elif not isinstance(idx, types.Integer) or ary.ndim != 1:
            raise TypingError(f"atomics on a {ary.ndim}-d array need a tuple of {ary.ndim} "
                              f"indices, not {idx}")
        return signature(ary.dtype, ary, idx, *([ary.dtype] * (self.nargs - 2)))


_INT_ONLY = {"and_", "or_", "xor", "inc", "dec", "cas", "compare_and_swap"}

for _name, _stub in stubs.atomic._members.items():
    registry.register_global(
        _stub,
        types.Function(type(f"VulkanTemplate_atomic_{_name}", (AtomicTemplate,), {
            "key": _stub, "integers_only": _name in _INT_ONLY,
            "nargs": 4 if _name == "cas" else 3,
            "first_element": _name == "compare_and_swap",
        })),
    )

for _ns in (stubs.shared, stubs.local):
    registry.register_global(
        _ns.array,
        types.Function(type(f"VulkanTemplate_{_ns.__name__}_array", (ArrayConstructor,),
                            {"key": _ns.array})),
    )


class GridGroup(types.Opaque):
    """The type of ``cg.this_grid()``; the front end refuses to lower it."""


grid_group = GridGroup("GridGroup")

registry.register_global(
    stubs.cg.this_grid,
    types.Function(type("VulkanTemplate_this_grid", (ConcreteTemplate,),
                        {"key": stubs.cg.this_grid, "cases": [signature(grid_group)]})),
)


@registry.register_attr
class GridGroupAttributes(AttributeTemplate):
    key = GridGroup

    @bound_function("GridGroup.sync")
    def resolve_sync(self, ty, args, kws):
        return signature(types.none)


for _ns in (stubs.shared, stubs.local, stubs.atomic, stubs.cg):
    _register_namespace(_ns)


# np.empty/zeros/ones/full inside kernels: Numba's own overloads return a new array,
# which its pipeline refuses without NRT; these templates type them as the local array
# the front end makes (local_arrays.lower_numpy_constructor checks the shape is constant).

import numpy as _np  # noqa: E402


def _fold(args, kws, names):
    folded = list(args)
    for name in names[len(args):]:
        if name in kws:
            folded.append(kws[name])
        else:
            break
    if len(folded) + sum(1 for k in kws if k not in names[len(args):len(folded)]) != len(
            args) + len(kws) or any(k not in names for k in kws):
        return None
    return folded


def _numpy_constructor_template(fn, names):
    class NumpyConstructor(AbstractTemplate):
        key = fn

        def generic(self, args, kws):
            folded = _fold(args, dict(kws), names)
            if folded is None or not folded:
                return None
            shape = folded[0]
            ndim = _shape_ndim(shape)
            if ndim is None or not 1 <= ndim <= 3:
                return None
            dtype_index = names.index("dtype")
            if len(folded) > dtype_index and not isinstance(folded[dtype_index], types.NoneType):
                elem = _array_dtype(folded[dtype_index])
            elif fn is _np.full:
                if len(folded) < 2:
                    return None
                elem = types.unliteral(folded[1])
                if isinstance(elem, types.Integer):
                    elem = types.intp if elem.signed else types.uint64
            else:
                elem = types.float64
            if elem is None or not isinstance(elem, (types.Integer, types.Float, types.Boolean,
                                                     types.Complex)):  # fmt: skip
                return None
            return signature(types.Array(elem, ndim, "C"), *folded)

    return NumpyConstructor


# The types of np.empty/zeros/ones/full in kernels, kept as they are by the typing context
# (target.VulkanTypingContext._insert_global) when Numba's own overloads register later.
NUMPY_CONSTRUCTOR_TYPES = {
    _fn: types.Function(_numpy_constructor_template(_fn, _names))
    for _fn, _names in (
        (_np.empty, ("shape", "dtype")),
        (_np.zeros, ("shape", "dtype")),
        (_np.ones, ("shape", "dtype")),
        (_np.full, ("shape", "fill_value", "dtype")),
    )
}
for _fn, _ty in NUMPY_CONSTRUCTOR_TYPES.items():
    registry.register_global(_fn, _ty)


# ---------------------------------------------------------------- subgroups


class SubgroupTemplate(AbstractTemplate):
    """Typing of nv.subgroup.*: see stubs.subgroup for each operation."""

    op = ""

    def generic(self, args, kws):
        if kws:
            return None
        op = self.op
        args = tuple(types.unliteral(a) for a in args)
        scalar = (types.Integer, types.Float, types.Boolean)
        if op in ("size", "lane", "id", "count"):
            return signature(types.intp) if not args else None
        if op == "elect":
            return signature(types.boolean) if not args else None
        if op == "barrier":
            return signature(types.none) if not args else None
        if len(args) == 1 and isinstance(args[0], scalar):
            (v,) = args
            if op in ("any", "all"):
                return signature(types.boolean, v)
            if op in ("ballot", "partition"):
                return signature(types.UniTuple(types.uint32, 4), v)
            if op == "ballot_count":
                return signature(types.uint32, v)
            if op == "broadcast_first":
                return signature(v, v)
            base = op.split("_", 1)[-1]
            if base in ("sum", "prod", "min", "max"):
                if isinstance(v, types.Boolean):
                    raise TypingError(f"subgroup.{op} of bool (use ballot_count)")
                return signature(v, v)
            return None
        if len(args) == 2 and isinstance(args[0], scalar) and isinstance(args[1], types.Integer):
            if op in ("broadcast", "shuffle", "shuffle_xor", "shuffle_up", "shuffle_down"):
                return signature(args[0], *args)
        return None


for _name, _stub in stubs.subgroup._members.items():
    registry.register_global(
        _stub,
        types.Function(type(f"VulkanTemplate_subgroup_{_name}", (SubgroupTemplate,),
                            {"key": _stub, "op": _name})),
    )
_register_namespace(stubs.subgroup)


class BarrierReduction(AbstractTemplate):
    """syncthreads_count(p) -> int32; syncthreads_and/or(p) -> int32 (0 or 1), as numba.cuda."""

    def generic(self, args, kws):
        if kws or len(args) != 1:
            return None
        p = types.unliteral(args[0])
        if not isinstance(p, (types.Boolean, types.Integer, types.Float)):
            return None
        return signature(types.int32, p)


for _stub in stubs.BARRIER_REDUCTIONS:
    registry.register_global(
        _stub,
        types.Function(type(f"VulkanTemplate_{_stub.__name__}", (BarrierReduction,),
                            {"key": _stub})),
    )


# ---------------------------------------------------------------- math numba.cuda types

import math  # noqa: E402

# math.fmod, math.remainder, math.modf: numba.njit has no typing for them, numba.cuda
# does (float32 or float64; integers convert to float64); frontend/mathlib/math_extra.py.
_F = (types.float32, types.float64)
for _fn in (math.fmod, math.remainder):
    registry.register_global(_fn, types.Function(type(
        f"VulkanTemplate_math_{_fn.__name__}", (ConcreteTemplate,),
        {"key": _fn, "cases": [signature(t, t, t) for t in _F]})))
registry.register_global(math.modf, types.Function(type(
    "VulkanTemplate_math_modf", (ConcreteTemplate,),
    {"key": math.modf, "cases": [signature(types.UniTuple(t, 2), t) for t in _F]})))
