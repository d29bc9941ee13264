"""Typing of cooperative matrices: ``nv.matrix.*`` and the tiles they make.

A tile is a ``Fragment`` value: its use ('a', 'b' or 'acc'), shape and element type are
part of its type, so that every operation is checked while typing (shapes that do not
chain, element types that differ) and the front end knows them as constants. Whether the
device accepts the multiply's configuration is checked when the kernel is lowered for a
device (frontend/matrix.py), which knows its list.
"""

import operator

from numba.core import types
from numba.core.errors import TypingError
from numba.core.typing.templates import (
    AbstractTemplate,
    AttributeTemplate,
    Registry,
    signature,
)

from .. import stubs

registry = Registry()

USES = ("a", "b", "acc")

#: Element types a tile may have (by Numba type name); bfloat16 joins where it is known.
ELEMENT_TYPES = ("float16", "float32", "float64", "int8", "uint8", "int16", "uint16",
                 "int32", "uint32", "int64", "uint64", "bfloat16")


class Fragment(types.Type):
    """A tile of a cooperative matrix held by a subgroup."""

    def __init__(self, use, rows, cols, dtype):
        self.use, self.rows, self.cols, self.dtype = use, rows, cols, dtype
        super().__init__(name=f"nv.matrix.fragment({use!r}, {rows}, {cols}, {dtype})")

    @property
    def key(self):
        return (self.use, self.rows, self.cols, self.dtype)


def _dtype(ty):
    from .vkdecl import _array_dtype

    return _array_dtype(ty)


def _literal(ty, kind):
    if kind is int and isinstance(ty, types.IntegerLiteral):
        return ty.literal_value
    if kind is str and isinstance(ty, types.StringLiteral):
        return ty.literal_value
    return None


def _template(stub, generic):
    cls = type(f"VulkanTemplate_matrix_{stub.__name__.split('.')[-1]}", (AbstractTemplate,),
               {"key": stub, "generic": generic, "prefer_literal": True})
    registry.register_global(stub, types.Function(cls))


def _fragment(self, args, kws):
    names = ("use", "rows", "cols", "dtype")
    if len(args) + len(kws) != 4 or any(k not in names for k in kws):
        return None
    bound = dict(zip(names, args), **kws)
    use, rows, cols = _literal(bound["use"], str), _literal(bound["rows"], int), \
        _literal(bound["cols"], int)
    if use not in USES:
        raise TypingError(f"nv.matrix.fragment(): use must be the constant 'a', 'b' or 'acc', "
                          f"not {bound['use']}")
    if rows is None or cols is None or rows <= 0 or cols <= 0:
        raise TypingError("nv.matrix.fragment(): rows and cols must be positive constant ints, "
                          f"not {bound['rows']}, {bound['cols']}")
    dtype = _dtype(bound["dtype"])
    if dtype is None or str(dtype) not in ELEMENT_TYPES:
        raise TypingError(f"nv.matrix.fragment(): unsupported dtype {bound['dtype']} (tiles "
                          f"hold {', '.join(ELEMENT_TYPES)})")
    return signature(Fragment(use, rows, cols, dtype), *args)


def _need_fragment(fn, ty, what="a tile"):
    if not isinstance(ty, Fragment):
        raise TypingError(f"nv.matrix.{fn}(): expected {what} (matrix.fragment), got {ty}")
    return ty


def packing(word, element):
    """How many elements of a tile's dtype `element` one element of an array of dtype
    `word` holds where ``matrix.load`` reads the tile from packed words: 8- and 16-bit
    elements in uint32 or uint64 words (and the other way round 0: not packed)."""
    bits = 16 if str(element) == "bfloat16" else getattr(element, "bitwidth", 0)
    if word in (types.uint32, types.uint64) and bits in (8, 16):
        return word.bitwidth // bits
    return 0


def _need_matrix(fn, arr, frag, packed=False):
    if not isinstance(arr, types.Array) or arr.ndim != 2:
        raise TypingError(f"nv.matrix.{fn}(): expected a 2-d array, got {arr}")
    if arr.dtype == frag.dtype:
        return
    if packed and packing(arr.dtype, frag.dtype):
        if arr.layout == "F":  # its words would run down the columns
            raise TypingError(f"nv.matrix.load(): {frag.dtype} tiles packed in words come from "
                              f"row-major arrays, not from an F-contiguous array of {arr.dtype}")
        return
    also = (" or uint32/uint64 words it is packed in" if fn == "load"
            and packing(types.uint32, frag.dtype) else "")
    raise TypingError(f"nv.matrix.{fn}(): the array's dtype {arr.dtype} is not the tile's "
                      f"{frag.dtype}{also} (convert the tile first: matrix.convert)")


def _need_index(fn, *tys):
    for t in tys:
        if not isinstance(types.unliteral(t), types.Integer):
            raise TypingError(f"nv.matrix.{fn}(): row and col must be integers, got {t}")


def _fill(self, args, kws):
    if kws or len(args) != 2:
        return None
    frag = _need_fragment("fill", args[0])
    if not isinstance(types.unliteral(args[1]), (types.Integer, types.Float, types.Boolean)):
        raise TypingError(f"nv.matrix.fill(): the value must be a number, got {args[1]}")
    return signature(types.none, frag, types.unliteral(args[1]))


def _load(self, args, kws):
    if kws or len(args) != 4:
        return None
    frag = _need_fragment("load", args[0])
    _need_matrix("load", args[1], frag, packed=True)
    _need_index("load", args[2], args[3])
    return signature(types.none, frag, args[1], *(types.unliteral(a) for a in args[2:]))


def _store(self, args, kws):
    if kws or len(args) != 4:
        return None
    frag = _need_fragment("store", args[3])
    _need_matrix("store", args[0], frag)
    _need_index("store", args[1], args[2])
    return signature(types.none, args[0], *(types.unliteral(a) for a in args[1:3]), frag)


def _mma(self, args, kws):
    if kws or len(args) != 3:
        return None
    acc, a, b = (_need_fragment("mma", t) for t in args)
    if (acc.use, a.use, b.use) != ("acc", "a", "b"):
        raise TypingError(f"nv.matrix.mma(acc, a, b): tiles of uses 'acc', 'a', 'b' in this "
                          f"order, got {acc.use!r}, {a.use!r}, {b.use!r}")
    if a.rows != acc.rows or b.cols != acc.cols or a.cols != b.rows:
        raise TypingError(f"nv.matrix.mma(): shapes do not chain: a {a.rows}x{a.cols} @ b "
                          f"{b.rows}x{b.cols} + acc {acc.rows}x{acc.cols}")
    if a.dtype != b.dtype:
        raise TypingError(f"nv.matrix.mma(): a and b must have one dtype, got {a.dtype} and "
                          f"{b.dtype}")
    return signature(types.none, acc, a, b)


def _convert(self, args, kws):
    if kws or len(args) != 2:
        return None
    dst, src = (_need_fragment("convert", t) for t in args)
    if (dst.use, dst.rows, dst.cols) != (src.use, src.rows, src.cols):
        raise TypingError(f"nv.matrix.convert(dst, src): tiles of one use and shape, got {dst} "
                          f"and {src}")
    return signature(types.none, dst, src)


for _name, _generic in (("fragment", _fragment), ("fill", _fill), ("load", _load),
                        ("store", _store), ("mma", _mma), ("convert", _convert)):
    _template(getattr(stubs.matrix, _name), _generic)
registry.register_global(stubs.matrix, types.Module(stubs.matrix))


@registry.register_global(operator.getitem)
class FragmentGetItem(AbstractTemplate):
    """frag[i]: element i of the invocation's share of the tile (0 <= i < frag.length)."""

    def generic(self, args, kws):
        if len(args) == 2 and isinstance(args[0], Fragment):
            if isinstance(types.unliteral(args[1]), types.Integer):
                return signature(args[0].dtype, args[0], types.unliteral(args[1]))
        return None


@registry.register_global(operator.setitem)
class FragmentSetItem(AbstractTemplate):
    """frag[i] = v: element i of the invocation's share of the tile."""

    def generic(self, args, kws):
        if len(args) == 3 and isinstance(args[0], Fragment):
            frag, index, value = args
            if isinstance(types.unliteral(index), types.Integer) and isinstance(
                    types.unliteral(value), (types.Integer, types.Float, types.Boolean)):
                return signature(types.none, frag, types.unliteral(index), frag.dtype)
        return None


@registry.register_attr
class FragmentAttributes(AttributeTemplate):
    key = Fragment

    def resolve_length(self, ty):
        return types.intp
