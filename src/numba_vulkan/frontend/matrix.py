"""Cooperative matrices (``nv.matrix.*``): tiles a subgroup holds together.

Every call is checked against the device's configurations (matrix_shapes.py): a
multiply whose shape and types the device does not list is refused with the list.

Where the device has no cooperative matrices, a tile is emulated exactly over the
subgroup: every invocation keeps the whole tile in a private array (``full``, row-major),
so that a multiply needs no exchange. The tile's elements are shared out as the hardware
does: invocation ``lane`` owns flat elements ``lane + t * S`` (S the subgroup's size), which
``frag[t]`` reads and writes and ``store`` writes to memory, each element once. After
``frag[t] = v`` (which every invocation of the subgroup executes with the same t, as for
the hardware's tiles) each invocation takes the S elements ``l + t * S`` from their owners
``l`` with shuffles, so that every copy stays whole wherever the write is (a device
function included) and a multiply reads it as it is.

The emulation computes a multiply-accumulate as a sum in k order, each step rounded to
the accumulator's type; matrix units may round and order the sum their own way (Vulkan
leaves it to them). Integer results are exact (wrapping) everywhere, float results agree
wherever the products and sums are exact.

bfloat16 tiles on the units are of SPIR-V's bfloat16 (KIR bf16, SPV_KHR_bfloat16), which
has no arithmetic: they are loaded from and stored to the 16-bit words bfloat16 arrays
are made of (device and shared arrays alike), and an element read or written, or a fill
value, goes through its bits (OpBitcast) into and out of the software rounding of
frontend/bfloat16.py, never through a driver conversion (NVIDIA flushes float32
subnormals). Only ``convert`` is the units' own conversion, as it is for float16.
"""

from numba.core import types

from .. import _core, config, errors, matrix_shapes, stubs
from ..typing.bfloat16 import is_bfloat16
from ..typing.matrix import Fragment, packing
from . import arith, bfloat16, float16
from .errors import unsupported
from .local_arrays import LocalArray
from .types import compute_kind, exact_kind, is_signed

Op = _core.Op
K = _core.Kind
S = _core.SubgroupOp

_NAMES = {stub: name for name, stub in stubs.matrix._members.items()}

# Elements narrower than a subgroup shuffle takes (without 8/16-bit subgroup support) move as
# 32-bit words
_SHUFFLE_KIND = {K.i8: K.i32, K.u8: K.u32, K.i16: K.i32, K.u16: K.u32}


def stub_name(fn):
    try:
        return _NAMES.get(fn)
    except TypeError:  # unhashable
        return None


class Tile:
    """A fragment's storage in a kernel: a variable of a cooperative-matrix type (on the
    device's matrix units), or the whole tile per invocation (emulated)."""

    def __init__(self, lowerer, ty, loc):
        b = lowerer.b
        _check_tile(lowerer, ty, loc)
        self.ty = ty
        self.count = ty.rows * ty.cols
        self.kind = compute_kind(ty.dtype, lowerer.mode, loc)
        self.units = _on_units(lowerer)
        if self.units and not _tile_on_units(_shapes(lowerer), ty):  # made in a device function
            raise unsupported(f"{ty.dtype} tiles, which this device's matrix units do not "
                              "hold, in a device function of a kernel whose other tiles are on "
                              "them (make the tile in the kernel, which is then emulated)", loc)
        if self.units:
            self.element = K.bf16 if is_bfloat16(ty.dtype) else exact_kind(ty.dtype)
            self.type_id = b.coop_type(self.element, ty.rows, ty.cols, _USES.index(ty.use))
            self.var = b.coop_var(self.type_id)
            return
        from .local_arrays import _count_local_bytes

        _count_local_bytes(lowerer, self.count * _core.memory_bytes(self.kind),
                           types.Array(ty.dtype, 2, "C"), loc)
        self.full = b.array_var(False, self.kind, self.count)

    def ptr(self, b, flat):
        return b.index_ptr(self.full, flat)


_USES = ("a", "b", "acc")


def _tile_on_units(shapes, ty):
    """Whether the device's matrix units hold tiles of Fragment type `ty` (a configuration
    that has it is not emulated: bfloat16's is where the device cannot declare bfloat16
    tiles, matrix_shapes.from_device)."""
    return matrix_shapes.on_units(shapes, ty.use, ty.rows, ty.cols, str(ty.dtype))


def _on_units(lowerer):
    """Whether this kernel's tiles are the device's cooperative matrices: it lists
    configurations its units do, the emulation is not asked for (config.MATRIX), the units hold every
    tile the kernel makes (bfloat16 ones only where the device has shaderBFloat16-
    CooperativeMatrix), and every array a tile is loaded from or stored to is C- or
    F-contiguous (a strided view's layout is only known at run time; choosing it there in
    a branch gave wrong tiles on NVIDIA's driver 580.159, which loaded a column-major tile
    as a row-major one). One answer per kernel."""
    root = lowerer.root
    if not hasattr(root, "matrix_units"):
        shapes = getattr(root, "matrix_shapes", ())
        held = all(_tile_on_units(shapes, t) for t in root.typemap.values()
                   if isinstance(t, Fragment))
        views = any(
            any(isinstance(t, Fragment) for t in sig.args) and any(
                isinstance(t, types.Array) and t.layout not in ("C", "F") for t in sig.args)
            for sig in root.calltypes.values() if sig is not None and hasattr(sig, "args"))
        root.matrix_units = (any(not s.emulated for s in shapes) and config.MATRIX != "emulate"
                             and held and not views)
    return root.matrix_units


def lower_matrix(lowerer, fn, expr, sig, target):
    """Lower a call of nv.matrix.*; returns (value, Numba type)."""
    name = stub_name(fn)
    loc = expr.loc
    if expr.kws and name != "fragment" or expr.vararg:
        raise unsupported(f"keyword or star arguments to matrix.{name}()", loc)
    if name == "fragment":
        return Tile(lowerer, sig.return_type, loc), sig.return_type
    args = [lowerer.load_var(a.name) for a in expr.args]
    if name == "load" and packing(sig.args[1].dtype, sig.args[0].dtype):
        word = sig.args[1].dtype
        stored = getattr(args[1], "storage", None)
        if stored is not None and _core.memory_bytes(stored) * 8 != word.bitwidth:
            raise unsupported(f"matrix.load() of {sig.args[0].dtype} tiles packed in {word} "
                              f"words that this device stores as {stored}", loc)
    _lowering(lowerer, loc).__getattribute__(name)(sig, *args)
    return None, sig.return_type


def _lowering(lowerer, loc):
    return (_Units if _on_units(lowerer) else _Emulation)(lowerer, loc)


def _shapes(lowerer):
    """The configurations this kernel's device accepts (or the emulation's)."""
    return getattr(lowerer.root, "matrix_shapes", ()) or matrix_shapes.EMULATED


def _check_tile(lowerer, ty, loc):
    """Refuse a tile no configuration of the device has (a tile type it cannot hold,
    even without a multiply), listing what it accepts."""
    shapes = _shapes(lowerer)
    if not matrix_shapes.tile_accepted(shapes, ty.use, ty.rows, ty.cols, str(ty.dtype)):
        raise errors.VulkanUnsupportedError(
            f"matrix.fragment({ty.use!r}, {ty.rows}, {ty.cols}, {ty.dtype}): no configuration "
            f"this device accepts has such a tile ('a' is M x K, 'b' K x N, 'acc' M x N); it "
            f"accepts:\n{matrix_shapes.describe(shapes)}", loc=loc)


def check_shape(lowerer, acc, a, loc):
    """Refuse a multiply the device (or the emulation) does not do, listing what it does."""
    shapes = _shapes(lowerer)
    m, n, k = acc.rows, acc.cols, a.cols
    names = str(a.dtype), str(a.dtype), str(acc.dtype)
    if not matrix_shapes.accepted(shapes, m, n, k, *names):
        raise errors.VulkanUnsupportedError(
            f"matrix.mma(): {m}x{n}x{k} {names[0]} x {names[1]} + {names[2]} is not a "
            f"configuration this device accepts (M x N x K, a x b + acc); it accepts:\n"
            f"{matrix_shapes.describe(shapes)}", loc=loc)


class _Held:
    """A KIR variable holding a loop's count (_Emulation.loop)."""

    def __init__(self, var):
        self.var = var


class _Emulation:
    """The emulated operations (module docstring)."""

    def __init__(self, lowerer, loc):
        self.lo, self.b, self.loc = lowerer, lowerer.b, loc

    # ------------------------------------------------------------ helpers

    def const(self, value, kind=K.u32):
        return arith.const(self.b, kind, value)

    def hold(self, value):
        """A KIR variable holding `value`, for loop bodies (only entry-block values cross
        blocks): read it with ``b.load``."""
        var = self.b.var(self.b.kind(value))
        self.b.store(var, value)
        return var

    def loop(self, count, body):
        """for i in range(count): body(i), i an u32 KIR value; `count` a constant (a
        Python int) or a _Held u32 (KIR values are ints too: they must not pass as counts)."""
        b = self.b
        counter = b.var(K.u32)
        b.store(counter, self.const(0))
        tag = f"mx{b.current_block}"
        header, inner, done = (b.create_block(f"{tag}.{p}") for p in ("header", "body", "done"))
        b.br(header)
        b.set_block(header)
        n = b.load(count.var) if isinstance(count, _Held) else self.const(count)
        b.condbr(b.compare(Op.lt, b.load(counter), n), inner, done)
        b.set_block(inner)
        body(b.load(counter))
        i = b.load(counter)
        b.store(counter, b.binary(Op.add, i, self.const(1)))
        b.br(header)
        b.set_block(done)

    def lane_and_size(self):
        b = self.b
        return b.subgroup(S.lane, K.u32, [], 0), b.subgroup(S.size, K.u32, [], 0)

    def owned(self, t):
        """The flat index of element t of this invocation's share: lane + t * S."""
        lane, size = self.lane_and_size()
        b = self.b
        return b.binary(Op.add, lane, b.binary(Op.mul, t, size))

    def share_count(self, tile):
        """Elements per invocation: the tile's count over the subgroup's size."""
        _, size = self.lane_and_size()
        return _Held(self.hold(self.b.binary(Op.div, self.const(tile.count), size)))

    def to_kind(self, value, src_ty, tile):
        """`value` (of Numba type src_ty) as the tile's element, as a cast to its dtype."""
        return self.lo.cast(value, src_ty, tile.ty.dtype, self.loc)

    def element_indices(self, arr, origin, i, j):
        """The array indices of tile element (i, j) with the tile's top-left element at
        `origin` (two held ints), in the array's index kind."""
        b, ik = self.b, arr.index_kind
        return [b.binary(Op.add, arith.convert(b, b.load(o), ik), arith.convert(b, x, ik))
                for o, x in zip(origin, (i, j))]

    # ------------------------------------------------------------ operations

    def fill(self, sig, tile, value):
        b = self.b
        v = self.hold(self.to_kind(value, sig.args[1], tile))
        self.loop(tile.count, lambda e: b.store(tile.ptr(b, e), b.load(v)))

    def load(self, sig, tile, arr, row, col):
        b, cols = self.b, tile.ty.cols
        per = packing(sig.args[1].dtype, tile.ty.dtype)  # elements per word, 0 unpacked
        origin = (self.hold(row), self.hold(col))

        def body(i):
            base = b.binary(Op.mul, i, self.const(cols))
            for j in range(cols):
                at = self.const(j // per if per else j)
                v = arr.load(b, self.element_indices(arr, origin, i, at), self.loc)
                if per:
                    v = self.unpack(v, j % per, tile)
                b.store(tile.ptr(b, b.binary(Op.add, base, self.const(j))), v)

        self.loop(tile.ty.rows, body)

    def unpack(self, word, q, tile):
        """Element `q` (from the low bits) of the tile's 8- or 16-bit elements packed in
        `word`, as the tile holds it: the same value a load of it from an array of the
        tile's dtype gives."""
        b, dtype = self.b, str(tile.ty.dtype)
        k = b.kind(word)
        width = 16 if dtype in ("float16", "bfloat16") else 8
        bits = b.binary(Op.and_, b.binary(Op.shr, word, arith.const(b, k, q * width)),
                        arith.const(b, k, (1 << width) - 1))
        bits = b.convert(K.u32, bits)
        if dtype == "float16":
            value = float16.widen(b, bits)
        elif dtype == "bfloat16":
            value = bfloat16.widen(b, bits)
        elif dtype == "int8":  # sign-extended
            value = b.binary(Op.sub, b.convert(K.i32, b.binary(Op.xor, bits, self.const(0x80))),
                             arith.const(b, K.i32, 0x80))
        else:
            value = bits
        return arith.convert(b, value, tile.kind)

    def store(self, sig, arr, row, col, tile):
        b = self.b
        shift = tile.ty.cols.bit_length() - 1
        if tile.ty.cols != 1 << shift:  # rows and cols of the accepted shapes are powers of 2
            raise unsupported(f"matrix.store() of a tile with {tile.ty.cols} columns", self.loc)
        origin = (self.hold(row), self.hold(col))

        def body(t):
            flat = self.owned(t)
            i = b.binary(Op.shr, flat, self.const(shift))
            j = b.binary(Op.and_, flat, self.const(tile.ty.cols - 1))
            arr.store(b, self.element_indices(arr, origin, i, j), b.load(tile.ptr(b, flat)),
                      self.loc)

        self.loop(self.share_count(tile), body)

    def mma(self, sig, acc, a, bt):
        check_shape(self.lo, acc.ty, a.ty, self.loc)
        b = self.b
        m_cols, k_count = acc.ty.cols, a.ty.cols

        def body(e):  # e = i * N + j over the accumulator
            i = b.binary(Op.div, e, self.const(m_cols))
            j = b.binary(Op.rem, e, self.const(m_cols))
            a_row = b.binary(Op.mul, i, self.const(k_count))
            ptr = acc.ptr(b, e)
            s = b.load(ptr)
            for k in range(k_count):
                x = b.load(a.ptr(b, b.binary(Op.add, a_row, self.const(k))))
                y = b.load(bt.ptr(b, b.binary(Op.add, self.const(k * m_cols), j)))
                product = b.binary(Op.mul, *self._as_acc(x, y, a.ty.dtype, acc.ty.dtype))
                s = self._round(b.binary(Op.add, s, product), acc.ty.dtype)
            b.store(ptr, s)

        self.loop(acc.count, body)

    def _as_acc(self, x, y, elem, acc):
        """x and y in the kind products are formed in: the accumulator's compute kind."""
        return self.lo.cast(x, elem, acc, self.loc), self.lo.cast(y, elem, acc, self.loc)

    def _round(self, value, dtype):
        """A sum in the accumulator's compute kind rounded to its dtype (float16 held in
        float32 rounds to half precision)."""
        if dtype == types.float16:
            return self.lo.cast(value, types.float32, dtype, self.loc)
        return value

    def convert(self, sig, dst, src):
        b = self.b

        def body(e):
            v = b.load(src.ptr(b, e))
            b.store(dst.ptr(b, e), self.lo.cast(v, src.ty.dtype, dst.ty.dtype, self.loc))

        self.loop(dst.count, body)

    # ------------------------------------------------------------ elements and length

    def length(self, tile):
        return arith.convert(self.b, self.b.load(self.share_count(tile).var),
                             compute_kind(types.intp, self.lo.mode, self.loc))

    def get(self, tile, t):
        b = self.b
        return b.load(tile.ptr(b, self.owned(arith.convert(b, t, K.u32))))

    def set(self, tile, t, value):
        """Element t of this invocation's share = value; then every invocation takes the
        S elements l + t * S written at once from their owners l (module docstring)."""
        b = self.b
        t = self.hold(arith.convert(b, t, K.u32))
        b.store(tile.ptr(b, self.owned(b.load(t))), value)
        wide = _SHUFFLE_KIND.get(tile.kind, tile.kind)
        _, size = self.lane_and_size()

        def take(owner):
            flat = b.binary(Op.add, owner, b.binary(Op.mul, b.load(t), self.lane_and_size()[1]))
            ptr = tile.ptr(b, flat)
            v = b.subgroup(S.shuffle, wide, [arith.convert(b, b.load(ptr), wide), owner], 0)
            b.store(ptr, arith.convert(b, v, tile.kind))

        self.loop(_Held(self.hold(size)), take)


class _Units:
    """The operations on the device's cooperative matrices (kir.h kCoop*)."""

    def __init__(self, lowerer, loc):
        self.lo, self.b, self.loc = lowerer, lowerer.b, loc

    def element(self, value, src_ty, tile):
        """`value` (of Numba type src_ty) as one of the tile's elements, in its exact kind."""
        v = self.lo.cast(value, src_ty, tile.ty.dtype, self.loc)  # rounded to the dtype
        if tile.element == K.bf16:  # rounded in software above: only its bits move
            return self.b.bitcast(K.bf16, bfloat16.to_bits(self.b, v))
        return arith.convert(self.b, v, tile.element)

    def fill(self, sig, tile, value):
        b = self.b
        b.store(tile.var, b.coop(Op.coop_fill, tile.type_id,
                                 [self.element(value, sig.args[1], tile)]))

    def _access(self, arr, row, col, tile, body):
        """body(ptr, stride_u32, layout) where tile element (0, 0) sits at arr[row, col]:
        row-major for a C-contiguous array (and shared arrays), column-major for an
        F-contiguous one (views of other layouts make the kernel emulate: _on_units). An
        array of words the elements are packed in (``packing``) is read as it is: the load's
        pointer is to a word and its stride counts words, the driver takes the tile's
        elements from the words' bytes in order (SPV_KHR_cooperative_matrix)."""
        b = self.lo.b
        stored = K.u16 if tile.element == K.bf16 else tile.element  # bfloat16 arrays' words
        packed = packing(arr.ty.dtype, tile.ty.dtype)  # its words' storage: lower_matrix
        if not packed and getattr(arr, "storage", stored) != stored:
            raise unsupported(f"matrix tiles of {tile.ty.dtype} in an array stored as "
                              f"{arr.storage}", self.loc)
        layout = "C" if isinstance(arr, LocalArray) else arr.ty.layout
        if layout not in ("C", "F"):  # a view reaching a device function (_on_units)
            raise unsupported(f"matrix tiles of an array of layout {layout!r} in a device "
                              "function of a kernel on the matrix units (pass a C- or "
                              "F-contiguous array)", self.loc)
        major = {"C": _ROW, "F": _COLUMN}[layout]
        ptr = arr.element_ptr(b, [row, col], self.loc)
        stride = arith.convert(b, arr.strides[0 if major == _ROW else 1], K.u32)
        body(ptr, stride, major)

    def load(self, sig, tile, arr, row, col):
        b = self.b
        self._access(arr, row, col, tile, lambda ptr, stride, major: b.store(
            tile.var, b.coop(Op.coop_load, tile.type_id, [ptr, stride], major)))

    def store(self, sig, arr, row, col, tile):
        b = self.b
        arr.written = True
        self._access(arr, row, col, tile, lambda ptr, stride, major: b.coop(
            Op.coop_store, None, [ptr, b.load(tile.var), stride], major))

    def mma(self, sig, acc, a, bt):
        check_shape(self.lo, acc.ty, a.ty, self.loc)
        b = self.b
        signs = 0
        if is_signed(a.element):
            signs |= _SIGNED_A | _SIGNED_B
        if is_signed(acc.element):
            signs |= _SIGNED_C | _SIGNED_RESULT
        result = b.coop(Op.coop_muladd, acc.type_id,
                        [b.load(a.var), b.load(bt.var), b.load(acc.var)], signs)
        b.store(acc.var, result)

    def convert(self, sig, dst, src):
        b = self.b
        b.store(dst.var, b.coop_convert(dst.type_id, b.load(src.var)))

    def length(self, tile):
        b = self.b
        n = b.coop(Op.coop_length, None, [], 0, tile.type_id)
        return arith.convert(b, n, compute_kind(types.intp, self.lo.mode, self.loc))

    def get(self, tile, t):
        b = self.b
        v = b.load(b.index_ptr(tile.var, arith.convert(b, t, K.u32)))
        if tile.element == K.bf16:  # its bits, widened exactly
            return bfloat16.widen(b, b.bitcast(K.u16, v))
        return arith.convert(b, v, tile.kind)

    def set(self, tile, t, value):
        b = self.b
        b.store(b.index_ptr(tile.var, arith.convert(b, t, K.u32)), value)

    def to_kind(self, value, src_ty, tile):
        return self.element(value, src_ty, tile)


_ROW, _COLUMN = 0, 1  # kir.h MatrixLayout
_SIGNED_A, _SIGNED_B, _SIGNED_C, _SIGNED_RESULT = 1, 2, 4, 8  # kir.h kMatrixSigned*


def length(lowerer, tile, loc):
    return _lowering(lowerer, loc).length(tile)


def getitem(lowerer, tile, index, loc):
    return _lowering(lowerer, loc).get(tile, index)


def setitem(lowerer, tile, index, value, value_ty, loc):
    lowering = _lowering(lowerer, loc)
    lowering.set(tile, index, lowering.to_kind(value, value_ty, tile))
