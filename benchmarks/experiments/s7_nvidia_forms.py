"""Which KIR forms NVIDIA's compiler keeps exact (session 7, the H200's driver 580).

Three things the H200 got wrong that lavapipe gets right, each tried in several
equivalent forms, every form checked against NumPy:

* float32 negation of subnormals: the sign-bit xor (arith.negate) came back
  flushed (np.negative(1e-45) == -0.0) while the sign-bit and of fabs stays
  exact; the compiler seems to turn the xor into its own (flushing) negation;
* the 16-bit byte swap of an @intrinsic (llvm.bswap.i16): the masks-and-shifts
  form gave out[i] = i; llvm_ops.bswap now multiplies by 0x10001;
* llvm.umul.with.overflow on 8 and 32 bits: `zext(x) * zext(y) > max` made
  vkCreateComputePipelines fail ("NVVM compilation failed"); now from halves.

Run from the repository root with the package installed (no cache, so every
form is compiled): ``NUMBA_VULKAN_CACHE=0 python3 benchmarks/experiments/s7_nvidia_forms.py``.
Prints one line per form: "ok", the number of wrong elements, or the error.
"""

import os
import sys

os.environ.setdefault("NUMBA_VULKAN_CACHE", "0")

import numpy as np  # noqa: E402
from numba.core import types  # noqa: E402
from numba.extending import intrinsic  # noqa: E402

import numba_vulkan as nv  # noqa: E402
from numba_vulkan import _core  # noqa: E402
from numba_vulkan.frontend import arith, llvm_calls, llvm_ops  # noqa: E402
from numba_vulkan.frontend.arith import const  # noqa: E402

K, Op = _core.Kind, _core.Op
SIGN, MAG = -(1 << 31), (1 << 31) - 1


def _f32_negate(form):
    def negate(b, v):
        if b.kind(v) != K.f32:
            return original_negate(b, v)
        i = b.bitcast(K.i32, v)
        c = lambda x: const(b, K.i32, x)  # noqa: E731
        if form == "xor":
            r = b.binary(Op.xor, i, c(SIGN))
        elif form == "select":  # |x| with the sign set where it was clear
            r = b.select(b.compare(Op.lt, i, c(0)), b.binary(Op.and_, i, c(MAG)),
                         b.binary(Op.or_, i, c(SIGN)))  # fmt: skip
        elif form == "and_or":  # |x| | (the sign bit of ~x)
            r = b.binary(Op.or_, b.binary(Op.and_, i, c(MAG)),
                         b.binary(Op.and_, b.unary(Op.not_, i), c(SIGN)))  # fmt: skip
        elif form == "shifts":  # the new sign from shifts of the unsigned bits
            u = b.bitcast(K.u32, i)
            s = b.binary(Op.shl, b.binary(Op.shr, b.unary(Op.not_, u), const(b, K.u32, 31)),
                         const(b, K.u32, 31))  # fmt: skip
            r = b.binary(Op.or_, b.binary(Op.and_, i, c(MAG)), b.bitcast(K.i32, s))
        elif form == "add":  # + 2^31 wraps into the sign bit
            u = b.bitcast(K.u32, i)
            r = b.bitcast(K.i32, b.binary(Op.add, u, const(b, K.u32, 1 << 31)))
        elif form == "times_minus_one":  # the device's multiply: expected to flush
            return b.binary(Op.mul, v, const(b, K.f32, -1.0))
        else:
            raise ValueError(form)
        return b.bitcast(K.f32, r)

    return negate


original_negate = arith.negate


def negation():
    m = np.random.default_rng(0).integers(1, 2**23, 4000).astype(np.int32)
    sub = m.view(np.float32)
    x = np.concatenate([sub, -sub, np.array([1.0, -2.5, 0.0, -0.0, np.inf], np.float32)])
    for form in ("xor", "select", "and_or", "shifts", "add", "times_minus_one"):
        arith.negate = _f32_negate(form)
        try:
            @nv.jit
            def k(a, out):
                i = nv.global_id(0)
                if i < a.size:
                    out[i] = np.negative(a[i])

            out = np.zeros_like(x)
            k.forall(x.size)(x, out)
            bad = int((out.view(np.int32) != (-x).view(np.int32)).sum())
            print(f"negate {form:16s} {'ok' if not bad else f'{bad} of {x.size} wrong'}")
        except Exception as e:  # noqa: BLE001 (a probe: report and go on)
            print(f"negate {form:16s} {type(e).__name__}: {e}"[:300])
        finally:
            arith.negate = original_negate


@intrinsic
def swap_bytes(typingctx, x):
    def codegen(context, builder, sig, args):
        return builder.bswap(args[0])

    return x(x), codegen


def _bswap16(form):
    def lower(t, args, width):
        b, x = t.b, args[0]
        if width != 16:
            return llvm_ops.bswap(b, x, width)
        if form == "sext":  # the 32-bit swap of the sign-extended value, shifted back
            u = b.bitcast(K.u32, x)
            for s in (8, 16):
                m = const(b, K.u32, llvm_ops._masks(K.u32, s))
                n = const(b, K.u32, s)
                u = b.binary(Op.or_, b.binary(Op.and_, b.binary(Op.shr, u, n), m),
                             b.binary(Op.shl, b.binary(Op.and_, u, m), n))  # fmt: skip
            return b.binary(Op.shr, b.bitcast(K.i32, u), const(b, K.i32, 16))
        u = llvm_ops.unsigned(b, x, width)
        if form == "masks":  # session 6's form
            r = llvm_ops._swap_groups(b, u, [8, 16])
            r = b.binary(Op.shr, r, const(b, K.u32, 16))
        elif form == "mul":  # session 7's form (llvm_ops.bswap)
            return llvm_ops.bswap(b, x, width)
        else:
            raise ValueError(form)
        return llvm_ops.from_unsigned(b, r, width)

    return lower


def byte_swap():
    a = np.array([0, 1, -1, 2, 3, 7, 255, 256, -256, 12345, -32768, 32767, 0x1234], np.int16)
    for form in ("masks", "mul", "sext"):
        saved = llvm_calls._INTEGER["bswap"]
        llvm_calls._INTEGER["bswap"] = _bswap16(form)
        try:
            @nv.jit
            def k(a, out):
                i = nv.global_id(0)
                if i < a.size:
                    out[i] = swap_bytes(a[i])

            out = np.zeros_like(a)
            k.forall(a.size)(a, out)
            bad = int((out != a.byteswap()).sum())
            print(f"bswap16 {form:15s} {'ok' if not bad else f'{bad} of {a.size} wrong: {out}'}")
        except Exception as e:  # noqa: BLE001
            print(f"bswap16 {form:15s} {type(e).__name__}: {e}"[:300])
        finally:
            llvm_calls._INTEGER["bswap"] = saved


@intrinsic
def checked_mul(typingctx, x, y):
    sig = types.Tuple((x, types.boolean))(x, x)

    def codegen(context, builder, sig, args):
        return builder.umul_with_overflow(*args)

    return sig, codegen


def _umul_wide(t, args, width):
    """Session 6's form: the product in twice the width, compared with the maximum."""
    b = t.b
    wide = K.u32 if width < 32 else K.u64
    xw, yw = (arith.convert(b, llvm_ops.unsigned(b, v, width), wide) for v in args)
    p = b.binary(Op.mul, xw, yw)
    over = b.compare(Op.gt, p, const(b, wide, (1 << width) - 1))
    return llvm_ops.from_unsigned(b, p, width), over


def unsigned_overflow():
    for dtype in (np.uint8, np.uint16, np.uint32):
        edges = np.array([0, 1, 2, 3, 255, 256, 65535, 65536, 2**31, 2**32 - 1, 12345],
                         np.uint64).astype(dtype)  # fmt: skip
        a, b = np.repeat(edges, edges.size), np.tile(edges, edges.size)
        bits = 8 * np.dtype(dtype).itemsize
        full = a.astype(object) * b.astype(object)
        want_r = np.array([int(p) % (1 << bits) for p in full], dtype)
        want_o = np.array([int(p) >= (1 << bits) for p in full])
        for form in ("halves", "wide"):
            saved = llvm_calls._INTEGER["umul.with.overflow"]
            if form == "wide":
                llvm_calls._INTEGER["umul.with.overflow"] = _umul_wide
            try:
                @nv.jit
                def k(a, b, r, o):
                    i = nv.global_id(0)
                    if i < a.size:
                        r[i], o[i] = checked_mul(a[i], b[i])

                r, o = np.zeros_like(a), np.zeros(a.size, np.bool_)
                k.forall(a.size)(a, b, r, o)
                bad = int(((r != want_r) | (o != want_o)).sum())
                print(f"umul {np.dtype(dtype).name:6s} {form:10s} "
                      f"{'ok' if not bad else f'{bad} of {a.size} wrong'}")  # fmt: skip
            except Exception as e:  # noqa: BLE001
                print(f"umul {np.dtype(dtype).name:6s} {form:10s} {type(e).__name__}: {e}"[:300])
            finally:
                llvm_calls._INTEGER["umul.with.overflow"] = saved


if __name__ == "__main__":
    print(nv.get_device(), file=sys.stderr)
    negation()
    byte_swap()
    unsigned_overflow()
