"""float32 subnormals on devices that flush them (NVIDIA: shaderDenormPreserveFloat32 = false).

Such a device treats a float32 subnormal operand of an add, mul, comparison or
conversion as zero, and flushes a subnormal result to zero; integer ops,
bitcasts, selects, loads and stores move the bits untouched. The library is
written so that its normal-range results never pass through a subnormal
intermediate (operands are scaled by exact powers of two first), so what such
a device breaks is:

1. comparisons with a subnormal operand (x > 0 is false for x = 1e-45);
2. the exact scalings (frexp, ldexp) when the operand or the result is
   subnormal, and the other places that produce a subnormal result
   (exp underflowing gradually, x * c for tiny x);
3. negation (it may flush).

`wrap` returns the builder that the library uses for a kernel compiled for such
a device: float32 comparisons are made on the bits (exact whatever the
device does) unless one operand is a normal non-zero constant (comparing with
one gives the same answer whether or not the other operand is flushed), and
negation flips the sign bit. bits.py's frexp and ldexp take their flush-safe
forms (`unpack`, `pack`) when `flushes(b)` says so.

SIMULATE (NUMBA_VULKAN_SUBNORMALS32=simulate, for tests on a device that
keeps subnormals) additionally flushes the operands and results of the
library's own float32 arithmetic, comparisons, conversions and GLSL built-ins,
as a flushing device would: the flush-safe code then runs under the same
constraint as on NVIDIA, against the same references.
"""

from ... import _core
from .. import arith
from ..arith import const

K = _core.Kind
Op = _core.Op

PRESERVE, FLUSH, SIMULATE = 0, 1, 2

_SIGN = -(1 << 31)
_MAG = (1 << 31) - 1
_TINY_BITS = 0x00800000  # smallest normal float32
_INF_BITS = 0x7F800000
_ORDERED = {Op.lt, Op.le, Op.gt, Op.ge, Op.eq}
_IEEE_OPS = {Op.add, Op.sub, Op.mul, Op.div}  # FlushSafeBuilder's ieee32


def flushes(b):
    """True when `b` builds float32 code for a device that may flush subnormals."""
    return isinstance(b, FlushSafeBuilder)


def mode_for(denorm_preserve, setting=""):
    """The library's mode on a device keeping subnormals at the widths `denorm_preserve`, with
    config.SUBNORMALS32 = `setting` ("", "keep" or "simulate")."""
    if setting == "simulate":
        return SIMULATE
    if setting == "keep" or 32 in denorm_preserve:
        return PRESERVE
    return FLUSH


def compare_normal(b, op, x, y):
    """b.compare for operands that are never subnormal (no bit-level form needed)."""
    return b.compare_normal(op, x, y) if flushes(b) else b.compare(op, x, y)


def neg_normal(b, v):
    """-v for a value that is never subnormal: the device's own negation, which its compiler
    folds into the instruction that uses it (FlushSafeBuilder's negates on the bits)."""
    return b.raw.unary(Op.neg, v) if flushes(b) else b.unary(Op.neg, v)


def convert_normal(b, to, v):
    """b.convert between float widths for a value whose result is normal (or zero): the
    device's own conversion, without the subnormal forms of FlushSafeBuilder.convert."""
    return b.raw.convert(to, v) if flushes(b) else b.convert(to, v)


def fmod(b, x, y, float64):
    """C's fmod of two floats of one kind (arith.fmod's loop); on a flushing device a float32
    one runs in float64 where the kernel has it (`float64`): the exact loop subtracts
    subnormals, which such a device zeroes (both conversions are exact, see _widen/_narrow)."""
    if b.kind(x) == K.f32 and flushes(b) and float64:
        return b.convert(K.f32, arith.fmod(b, b.convert(K.f64, x), b.convert(K.f64, y)))
    return arith.fmod(b, x, y)


def wrap(b, mode, fused_fma=False, loose_division=False, ieee32=False, sqrt_one_step=False):
    """The builder the library uses: `b` itself, or a LibBuilder carrying `fused_fma` (the
    device's Fma rounds once: dd.py's exact products use it), `sqrt_one_step` (with it, float32
    sqrt's one correction step is correctly rounded: roots.py) and `loose_division` (tests), or
    a FlushSafeBuilder (whose float32 + - * / are IEEE's, subnormals kept, with `ieee32`)."""
    if mode != PRESERVE:
        lib = FlushSafeBuilder(b, mode == SIMULATE, fused_fma, loose_division, ieee32)
    elif fused_fma or loose_division:
        lib = LibBuilder(b, fused_fma, loose_division)
    else:
        return b
    lib.sqrt_one_step = bool(sqrt_one_step and fused_fma)
    return lib


def for_lowerer(lo, b=None, ieee32=False):
    """The library's builder for the kernel `lo` lowers (its builder unless `b` is given),
    from the device facts compile_kernel gave it (compiler.CodegenControls). `ieee32`: on a
    device that may flush, float32 + - * / computed exactly as IEEE's (through float64,
    where the kernel computes float64 as float64: FlushSafeBuilder)."""
    mode = getattr(lo, "mode", None)
    ieee32 = ieee32 and not (mode is not None and mode.floats)
    return wrap(lo.b if b is None else b, getattr(lo, "denormals", PRESERVE),
                getattr(lo, "fused_fma", False), getattr(lo, "loose_division", False), ieee32,
                getattr(lo, "sqrt_one_step", False))


class LibBuilder:
    """The KIR builder plus what the library may assume of the device (fused_fma), and
    whether to make the driver's divisions as loose as Vulkan allows (loose_division)."""

    def __init__(self, b, fused_fma=False, loose_division=False):
        self._b = b
        self.fused_fma = fused_fma
        self.loose_division = loose_division

    def __getattr__(self, name):
        return getattr(self._b, name)

    @property
    def raw(self):
        return self._b

    def driver_div(self, x, y):
        return loosen(self, self._b.driver_div(x, y))


def loosen(b, v):
    """A driver built-in's result `v` as loose as Vulkan lets it be where the library's driver
    quotients are made so (LibBuilder.loose_division; tests), else v itself."""
    return _loosen(b.raw, v) if getattr(b, "loose_division", False) else v


# loose_division: the driver's quotient moved by +-2 ulp (float64: +-2 ulp of float32, as
# Vulkan lets a float64 OpFDiv be only as precise as a float32 one): (bit step, sign bit).
_LOOSE = {K.f32: (K.i32, 2, 2), K.f64: (K.i64, 2 << 29, 31)}


def _loosen(b, q):
    """q moved away from the driver's quotient by about as much as Vulkan allows (2.5 ulp),
    up or down by one bit of q's own, so that a device whose division is exact (lavapipe)
    tests that the library corrects or tolerates the driver's error (NUMBA_VULKAN_DRIVER_DIV=
    loose). Zeros, subnormals, infinities and NaN stay (exact there on every device)."""
    ik, step, bit = _LOOSE[b.kind(q)]
    width = 32 if ik == K.i32 else 64
    i = b.bitcast(ik, q)
    mag = b.binary(Op.and_, i, const(b, ik, (1 << (width - 1)) - 1))
    tiny = 1 << (23 if width == 32 else 52)  # the smallest normal's bits
    inf = (0xFF if width == 32 else 0x7FF) * tiny
    ok = b.binary(Op.and_, b.compare(Op.ge, mag, const(b, ik, tiny + step)),
                  b.compare(Op.lt, mag, const(b, ik, inf - step)))  # fmt: skip
    up = b.compare(Op.ne, b.binary(Op.and_, i, const(b, ik, 1 << bit)), const(b, ik, 0))
    moved = b.binary(Op.add, i, b.select(up, const(b, ik, step), const(b, ik, -step)))
    return b.bitcast(b.kind(q), b.select(ok, moved, i))


class FlushSafeBuilder(LibBuilder):
    """The KIR builder with float32 comparisons and negation that do not depend on flushing
    (and, when simulating, float32 ops that flush as a flushing device would).

    ieee32: float32 + - * / as IEEE 754 defines them, subnormal operands and results kept,
    whatever the device does: the operands widened exactly to float64 (`_widen`), the
    operation made there (its result is zero, normal or infinite: float32 operands keep it
    above 2^-300), and narrowed with `_narrow`. Rounding twice, to float64's 53 bits and then to float32's
    24, gives the correctly rounded float32 for these operations since 53 >= 2 * 24 + 2
    (Figueroa), in float32's subnormal range too (fewer bits kept). bfloat16 arithmetic,
    which ml_dtypes defines in float32, needs it: bfloat16's subnormals are float32's."""

    def __init__(self, b, simulate, fused_fma=False, loose_division=False, ieee32=False):
        super().__init__(b, fused_fma, loose_division)
        self._simulate = simulate
        self._ieee32 = ieee32
        self._safe_consts = set()  # values of normal non-zero float32 constants (and infinities)

    # ---------------------------------------------------------------- constants
    def const_float(self, kind, value):
        v = self._b.const_float(kind, value)
        if kind == K.f32 and value == value and abs(value) >= 2.0**-126:
            self._safe_consts.add(v)
        return v

    # ---------------------------------------------------------------- the exact replacements
    def _bits(self, v):
        return self._b.bitcast(K.i32, v)

    def _key(self, v):
        """An int32 ordered as the float (-0 and +0 equal), for a non-NaN float32."""
        b = self._b
        i = self._bits(v)
        mag = b.binary(Op.and_, i, const(b, K.i32, _MAG))
        return b.select(b.compare(Op.lt, i, const(b, K.i32, 0)), b.unary(Op.neg, mag), mag)

    def _is_nan(self, v):
        b = self._b
        mag = b.binary(Op.and_, self._bits(v), const(b, K.i32, _MAG))
        return b.compare(Op.gt, mag, const(b, K.i32, _INF_BITS))

    def compare(self, op, x, y):
        b = self._b
        if b.kind(x) != K.f32 or x in self._safe_consts or y in self._safe_consts:
            return b.compare(op, self.flush(x), self.flush(y))
        if x == y and op in (Op.ne, Op.eq):  # bits.is_nan: x != x
            nan = self._is_nan(x)
            return nan if op == Op.ne else b.unary(Op.not_, nan)
        r = b.compare(op, self._key(x), self._key(y))
        nan = b.binary(Op.or_, self._is_nan(x), self._is_nan(y))
        if op in _ORDERED:
            return b.binary(Op.and_, r, b.unary(Op.not_, nan))
        return b.binary(Op.or_, r, nan)  # ne: true when either is NaN

    def compare_normal(self, op, x, y):
        """A comparison of operands known to be normal, zero, infinite or NaN (never
        subnormal): the device's own, as on any device."""
        return self._b.compare(op, self.flush(x), self.flush(y))

    def unary(self, op, x):
        b = self._b
        if op == Op.neg and b.kind(x) == K.f32:
            flipped = b.binary(Op.xor, self._bits(x), const(b, K.i32, _SIGN))
            return b.bitcast(K.f32, flipped)
        return b.unary(op, x)

    # ---------------------------------------------------------------- simulated flushing
    def flush(self, v):
        """v as a flushing device reads it: subnormals become zeros of the same sign (only when
        simulating; otherwise v)."""
        b = self._b
        if not self._simulate or b.kind(v) != K.f32:
            return v
        i = self._bits(v)
        mag = b.binary(Op.and_, i, const(b, K.i32, _MAG))
        sub = b.compare(Op.lt, mag, const(b, K.i32, _TINY_BITS))
        zero = b.binary(Op.and_, i, const(b, K.i32, _SIGN))
        return b.bitcast(K.f32, b.select(sub, zero, i))

    def binary(self, op, x, y):
        if self._b.kind(x) != K.f32:
            return self._b.binary(op, x, y)
        if self._ieee32 and op in _IEEE_OPS:
            wide = self._b.binary(op, self.convert(K.f64, x), self.convert(K.f64, y))
            return self.convert(K.f32, wide)
        if not self._simulate:
            return self._b.binary(op, x, y)
        return self.flush(self._b.binary(op, self.flush(x), self.flush(y)))

    def driver_div(self, x, y):
        if not self._simulate or self._b.kind(x) != K.f32:
            return super().driver_div(x, y)
        return self.flush(super().driver_div(self.flush(x), self.flush(y)))

    def math(self, fn, args):
        if not self._simulate:
            return self._b.math(fn, args)
        return self.flush(self._b.math(fn, [self.flush(a) for a in args]))

    def convert(self, to, v):
        b = self._b
        frm = b.kind(v)
        plain = b.convert(to, v) if not self._simulate else self.flush(b.convert(to, self.flush(v)))
        if frm == K.f32 and to == K.f64:
            return self._widen(v, plain)
        if frm == K.f64 and to == K.f32:
            return self._narrow(v, plain)
        return plain

    def _widen(self, v, plain):
        """float32 -> float64 exactly: a subnormal's integer mantissa times 2**-149 in float64
        (float64 keeps subnormals on the devices that flush float32's)."""
        b = self._b
        i = self._bits(v)
        mag = b.binary(Op.and_, i, const(b, K.i32, _MAG))
        sub = b.binary(
            Op.and_,
            b.compare(Op.lt, mag, const(b, K.i32, _TINY_BITS)),
            b.compare(Op.ne, mag, const(b, K.i32, 0)),
        )
        wide = b.binary(Op.mul, b.convert(K.f64, mag), const(b, K.f64, 2.0**-149))
        wide = b.select(b.compare(Op.lt, i, const(b, K.i32, 0)), b.unary(Op.neg, wide), wide)
        return b.select(sub, wide, plain)

    def _narrow(self, v, plain):
        """float64 -> float32 where the result is subnormal: |v| * 2**149 rounded to an
        integer (ties to even, in float64) is the float32's bit pattern."""
        b = self._b
        mag = b.binary(Op.and_, b.bitcast(K.i64, v), const(b, K.i64, (1 << 63) - 1))
        av = b.bitcast(K.f64, mag)
        t = b.binary(Op.mul, av, const(b, K.f64, 2.0**149))
        big = const(b, K.f64, 2.0**52)
        m = b.binary(Op.sub, b.binary(Op.add, t, big), big)  # t < 2**23: rint
        mi = b.convert(K.i32, m)
        sign = b.binary(Op.and_, b.convert(K.i32, b.binary(
            Op.shr, b.bitcast(K.i64, v), const(b, K.i64, 32))), const(b, K.i32, _SIGN))
        tiny = b.bitcast(K.f32, b.binary(Op.or_, mi, sign))
        below = b.compare(Op.lt, av, const(b, K.f64, 2.0**-126))
        return b.select(below, tiny, plain)
