"""numba.cuda's bit intrinsics: ``popc``, ``clz``, ``ffs``, ``brev``.

Each works on the argument's own width (8 to 64 bits; signed values as two's
complement), as CUDA's ``__popc/__clz/__ffs/__brev`` and their 64-bit forms:

* ``popc(x)``: the number of set bits;
* ``clz(x)``: the number of leading zero bits (the width for 0);
* ``ffs(x)``: the 1-based position of the lowest set bit (0 for 0);
* ``brev(x)``: the bits in reverse order (unsigned 32- and 64-bit, as numba.cuda);
* ``x.bit_count()`` (Python's int method, which numba.cuda compiles as ``popc``);
* ``as_bits(x)``, ``from_bits(i)``: a float's word as the signed integer of its
  width and back (libdevice's ``float_as_int``, ``double_as_longlong`` and their inverses,
  ``match_any_sync``'s comparison of floats).

Each is an @intrinsic calling LLVM's ctpop / ctlz / cttz / bitreverse on the
argument's own width, which the front end translates to KIR (llvm_ops.py):
OpBitCount and GLSL.std.450's FindUMsb / FindILsb on 32 bits (Vulkan has them
on 32-bit integers only: narrower values are zero-extended, 64-bit ones counted
in halves), and brev as swaps of bit groups. The results are int32 (CUDA's
int), brev's the argument's type.
"""

from llvmlite import ir
from numba.core import types
from numba.core.errors import TypingError
from numba.extending import intrinsic, overload, overload_method

_I1_FALSE = ir.Constant(ir.IntType(1), 0)  # ctlz/cttz of 0 is the width, not poison


def _kernel_only(name):
    raise NotImplementedError(f"numba_vulkan.cuda.{name} can only be used inside a kernel")


def popc(x):
    _kernel_only("popc")


def clz(x):
    _kernel_only("clz")


def ffs(x):
    _kernel_only("ffs")


def brev(x):
    _kernel_only("brev")


def _width(name, x):
    if not isinstance(x, types.Integer):
        raise TypingError(f"cuda.{name} takes an integer, not {x}")


def _int32_of(count):
    """An @intrinsic of one integer giving `count(builder, x)` (an LLVM integer of x's width)
    as an int32."""

    @intrinsic
    def counted(typingctx, x):
        if not isinstance(x, types.Integer):
            return None

        def codegen(context, builder, sig, args):
            r = count(builder, args[0])
            i32 = ir.IntType(32)
            if r.type.width == 32:
                return r
            return builder.zext(r, i32) if r.type.width < 32 else builder.trunc(r, i32)

        return types.int32(x), codegen

    return counted


def _ffs_count(builder, x):
    zero = ir.Constant(x.type, 0)
    after = builder.add(builder.cttz(x, _I1_FALSE), ir.Constant(x.type, 1))
    return builder.select(builder.icmp_unsigned("==", x, zero), zero, after)


_popc = _int32_of(lambda builder, x: builder.ctpop(x))
_clz = _int32_of(lambda builder, x: builder.ctlz(x, _I1_FALSE))
_ffs = _int32_of(_ffs_count)


@intrinsic
def _bitreverse(typingctx, x):
    return x(x), lambda context, builder, sig, args: builder.bitreverse(args[0])


def _counting_overload(stub, name, counted):
    """cuda.popc / clz / ffs: an int32 count of an integer of a width _width accepts."""

    @overload(stub, target="vulkan")
    def impl(x):
        _width(name, x)
        return lambda x: counted(x)

    return impl


for _stub, _name, _counted in ((popc, "popc", _popc), (clz, "clz", _clz), (ffs, "ffs", _ffs)):
    _counting_overload(_stub, _name, _counted)


@overload(brev, target="vulkan")
def _brev(x):
    if not isinstance(x, types.Integer) or x.signed or x.bitwidth not in (32, 64):
        raise TypingError(f"cuda.brev takes a uint32 or uint64, not {x}")
    return lambda x: _bitreverse(x)


@overload_method(types.Integer, "bit_count", target="vulkan")
def _bit_count(x):
    """``x.bit_count()``: the set bits of x's own width, an int32 as numba.cuda's (popc)."""
    return lambda x: _popc(x)


def _same_width(x, to):
    """The LLVM bit cast of `x` to the Numba type `to` of its width, as an @intrinsic body."""
    def codegen(context, builder, sig, args):
        return builder.bitcast(args[0], context.get_value_type(to))

    return to(x), codegen


_INT_OF = {32: types.int32, 64: types.int64}


@intrinsic
def as_bits(typingctx, x):
    """The word of float32 / float64 `x` as an int32 / int64 (kernels only)."""
    if isinstance(x, types.Float) and x.bitwidth in _INT_OF:
        return _same_width(x, _INT_OF[x.bitwidth])
    return None


_FLOAT_OF = {32: types.float32, 64: types.float64}


@intrinsic
def from_bits(typingctx, i):
    """The float32 / float64 whose word is 32- / 64-bit integer `i` (kernels only)."""
    if isinstance(i, types.Integer) and i.bitwidth in _FLOAT_OF:
        return _same_width(i, _FLOAT_OF[i.bitwidth])
    return None
