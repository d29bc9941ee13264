"""@intrinsic without a device: results in the KIR interpreter against numba.njit, and the
refusals (every LLVM construct outside the translated subset names the intrinsic, the
instruction and the kernel's line)."""

import inspect

import numba
import numpy as np
import pytest
from kir_host import run_kir
from llvmlite import ir
from numba.core import cgutils, types
from numba.extending import intrinsic

import numba_vulkan as nv
from numba_vulkan import VulkanUnsupportedError, cuda, narrowing

SIG = "void(int64[::1])"


def line_of(func, marker):
    lines, first = inspect.getsourcelines(func)
    for offset, text in enumerate(lines):
        if marker in text:
            return first + offset
    raise AssertionError(marker)


def refused(kernel, sig=SIG, mode=None):
    with pytest.raises(VulkanUnsupportedError) as info:
        nv.jit(kernel).compile(sig, mode=mode)
    message = str(info.value)
    assert str(line_of(kernel, "# MARK")) in message, message
    return message


# ---------------------------------------------------------------- results (KIR interpreter)


@intrinsic
def sat_add_u8(typingctx, x, y):
    """i8 arithmetic: add, icmp ult, select (a saturating uint8 add)."""
    sig = types.uint8(types.uint8, types.uint8)

    def codegen(context, builder, sig, args):
        s = builder.add(*args)
        wrapped = builder.icmp_unsigned("<", s, args[0])
        return builder.select(wrapped, ir.Constant(ir.IntType(8), 255), s)

    return sig, codegen


@intrinsic
def mulhi_u32(typingctx, x, y):
    """zext, mul in 64 bits, lshr, trunc: the high half of a 32x32 product."""
    sig = types.uint32(types.uint32, types.uint32)

    def codegen(context, builder, sig, args):
        i64 = ir.IntType(64)
        p = builder.mul(builder.zext(args[0], i64), builder.zext(args[1], i64))
        return builder.trunc(builder.lshr(p, ir.Constant(i64, 32)), ir.IntType(32))

    return sig, codegen


@intrinsic
def abs_minmax(typingctx, x, y):
    sig = types.UniTuple(types.int64, 3)(types.int64, types.int64)

    def codegen(context, builder, sig, args):
        m = builder.module
        i64 = ir.IntType(64)
        f = lambda n, k: m.declare_intrinsic(n, [i64], ir.FunctionType(i64, [i64] * k))  # noqa
        a = builder.call(m.declare_intrinsic("llvm.abs", [i64], ir.FunctionType(
            i64, [i64, ir.IntType(1)])), [args[0], ir.Constant(ir.IntType(1), 0)])
        return cgutils.pack_array(builder, [a, builder.call(f("llvm.smax", 2), args),
                                            builder.call(f("llvm.umin", 2), args)])

    return sig, codegen


def k_small(out, a, b, c):
    for i in range(a.size):
        out[i] = sat_add_u8(a[i], b[i])
        c[i] = mulhi_u32(np.uint32(a[i]) * np.uint32(16777619), np.uint32(b[i]) + np.uint32(3))


def k_abs(out, a, b):
    for i in range(a.size):
        x, y, z = abs_minmax(a[i], b[i])
        out[i, 0] = x
        out[i, 1] = y
        out[i, 2] = z


def test_small_and_unsigned_integers_in_the_interpreter():
    rng = np.random.default_rng(3)
    a = rng.integers(0, 256, 64).astype(np.uint8)
    b = rng.integers(0, 256, 64).astype(np.uint8)
    args = (np.zeros_like(a), a, b, np.zeros(64, np.uint32))
    got = run_kir(k_small, args)
    expected = [x.copy() for x in args]
    numba.njit(k_small)(*expected)
    np.testing.assert_array_equal(got[0], expected[0])
    np.testing.assert_array_equal(got[3], expected[3])


def k_bit_counts(out, x):
    for i in range(x.size):  # one invocation runs them all (the interpreter runs one)
        out[i, 0] = cuda.popc(x[i])
        out[i, 1] = cuda.clz(x[i])
        out[i, 2] = cuda.ffs(x[i])


@pytest.mark.parametrize("dtype", [np.int8, np.uint8, np.int16, np.uint16, np.int32, np.uint32,
                                   np.int64, np.uint64])
def test_bit_counts_in_the_interpreter(dtype):
    """cuda.popc/clz/ffs through KIR's bitcount/findumsb/findilsb (32-bit only: narrower values
    widened, 64-bit ones in halves), against Python's counts on the argument's own width."""
    info = np.iinfo(dtype)
    single = np.array([1 << j for j in range(info.bits)], np.uint64).astype(dtype)
    x = np.concatenate([np.array([0, info.max, info.min], dtype), single, ~single])
    (got,) = run_kir(k_bit_counts, (np.zeros((x.size, 3), np.int32), x))[:1]
    u = [int(v) & ((1 << info.bits) - 1) for v in x]
    want = [(bin(v).count("1"), info.bits - v.bit_length(), (v & -v).bit_length()) for v in u]
    np.testing.assert_array_equal(got, np.array(want, np.int32))


def test_llvm_abs_and_min_max_in_the_interpreter():
    a = np.array([0, -1, 5, -(2**63), 2**63 - 1, -7], np.int64)
    b = np.array([3, 2, -5, 1, -(2**63), -7], np.int64)
    got = run_kir(k_abs, (np.zeros((6, 3), np.int64), a, b))[0]
    expected = np.zeros((6, 3), np.int64)
    numba.njit(k_abs)(expected, a, b)
    np.testing.assert_array_equal(got, expected)


# ---------------------------------------------------------------- refusals


@intrinsic
def through_memory(typingctx, x):
    def codegen(context, builder, sig, args):
        slot = builder.alloca(args[0].type)
        builder.store(args[0], slot)
        return builder.load(slot)

    return x(x), codegen


@intrinsic
def with_asm(typingctx, x):
    def codegen(context, builder, sig, args):
        fnty = ir.FunctionType(args[0].type, [args[0].type])
        return builder.asm(fnty, "mov $0, $1", "=r,r", [args[0]], False)

    return x(x), codegen


@intrinsic
def calls_libm(typingctx, x):
    def codegen(context, builder, sig, args):
        fn = cgutils.get_or_insert_function(
            builder.module, ir.FunctionType(ir.DoubleType(), [ir.DoubleType()]), "sin")
        return builder.call(fn, args)

    return types.float64(types.float64), codegen


@intrinsic
def shift_too_far(typingctx, x):
    def codegen(context, builder, sig, args):
        return builder.shl(args[0], ir.Constant(args[0].type, 64))

    return types.int64(types.int64), codegen


@intrinsic
def fma64(typingctx, x):
    def codegen(context, builder, sig, args):
        return builder.fma(args[0], args[0], args[0])

    return types.float64(types.float64), codegen


@intrinsic
def mul_overflow64(typingctx, x):
    def codegen(context, builder, sig, args):
        return builder.extract_value(builder.smul_with_overflow(args[0], args[0]), 0)

    return x(x), codegen


def k_mul_overflow(out):
    out[0] = mul_overflow64(out[0])  # MARK


@intrinsic
def compiles_python(typingctx, x):
    def codegen(context, builder, sig, args):
        return context.compile_internal(builder, lambda v: v + 1, sig, args)

    return x(x), codegen


@intrinsic
def wrong_result(typingctx, x):
    def codegen(context, builder, sig, args):
        return builder.trunc(args[0], ir.IntType(32))

    return x(x), codegen


def k_memory(out):
    out[0] = through_memory(out[0])  # MARK


def k_asm(out):
    out[0] = with_asm(out[0])  # MARK


def k_libm(out):
    out[0] = calls_libm(out[0])  # MARK


def k_shift(out):
    out[0] = shift_too_far(out[0])  # MARK


def k_fma64(out):
    out[0] = fma64(out[0])  # MARK


def k_compile(out):
    out[0] = compiles_python(out[0])  # MARK


def k_wrong(out):
    out[0] = wrong_result(out[0])  # MARK


@pytest.mark.parametrize("kernel, sig, words", [
    (k_memory, SIG, ["through_memory", "'alloca'", "alloca i64"]),
    (k_asm, SIG, ["with_asm", "inline assembly", "mov $0, $1"]),
    (k_libm, "void(float64[::1])", ["calls_libm", "function 'sin'"]),
    (k_shift, SIG, ["shift_too_far", "constant shift by 64", "poison"]),
    (k_compile, SIG, ["compiles_python", "context.compile_internal"]),
    (k_wrong, SIG, ["wrong_result", "returns i32", "int64"]),
    (k_mul_overflow, SIG, ["mul_overflow64", "llvm.smul.with.overflow' on 64 bits"]),
], ids=["memory", "asm", "call", "shift", "compile_internal", "result_type",
        "mul_overflow64"])  # fmt: skip
def test_refusals_name_intrinsic_instruction_and_line(kernel, sig, words):
    message = refused(kernel, sig)
    for w in words:
        assert w in message, message


def test_float64_fma_is_emulated_where_fma_may_round_twice():
    """llvm.fma.f64 without a fused Fma (the default controls): Boldo and Melquiond's exact
    emulation (frontend/mathlib/fma.py), no GLSL Fma; tests/device/test_fma.py checks it."""
    module = nv.jit(k_fma64).compile("void(float64[::1])")
    assert module.words.size > 0


def k_popc64(out):
    out[0] = through_memory_free(out[0])  # MARK


@intrinsic
def through_memory_free(typingctx, x):
    def codegen(context, builder, sig, args):
        return builder.ctpop(args[0])

    return x(x), codegen


def test_64_bit_intrinsic_refused_when_ints_are_narrowed():
    message = refused(k_popc64, mode=narrowing.Mode(ints=True))
    assert "narrow='ints'" in message and "through_memory_free" in message, message
    assert nv.jit(k_popc64).compile(SIG).words.size > 0  # without narrowing: fine


@intrinsic(target="vulkan")
def vulkan_twice(typingctx, x):
    def codegen(context, builder, sig, args):
        return builder.add(args[0], args[0])

    return x(x), codegen


@intrinsic(target="cpu")
def cpu_only(typingctx, x):
    def codegen(context, builder, sig, args):
        return args[0]

    return x(x), codegen


def k_twice(out):
    for i in range(out.size):
        out[i] = vulkan_twice(out[i])


def k_cpu_only(out):
    out[0] = cpu_only(out[0])  # MARK


def test_registered_for_vulkan_works_and_cpu_only_is_refused():
    a = np.array([1, -3, 2**62, -(2**63)], np.int64)
    np.testing.assert_array_equal(run_kir(k_twice, (a.copy(),))[0], a * 2)
    assert "cpu_only" in refused(k_cpu_only)


@intrinsic
def assume_greater(typingctx, x):
    """No result (types.none): llvm.assume only."""

    def codegen(context, builder, sig, args):
        fnty = ir.FunctionType(ir.VoidType(), [ir.IntType(1)])
        fn = builder.module.declare_intrinsic("llvm.assume", (), fnty)
        builder.call(fn, [builder.icmp_signed(">", args[0], ir.Constant(args[0].type, -5))])
        return context.get_dummy_value()

    return types.none(x), codegen


@intrinsic
def array_first(typingctx, a):
    def codegen(context, builder, sig, args):
        return args[0]

    return types.int64(a), codegen


def k_assume(out):
    for i in range(out.size):
        assume_greater(out[i])
        out[i] += 1


def k_array_arg(out):
    out[0] = array_first(out)  # MARK


def test_intrinsic_without_result_and_array_arguments_refused():
    a = np.array([1, 2, 3], np.int64)
    np.testing.assert_array_equal(run_kir(k_assume, (a.copy(),))[0], a + 1)
    message = refused(k_array_arg)
    assert "array_first" in message and "array(int64, 1d, C)" in message, message
