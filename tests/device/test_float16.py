"""float16 arithmetic in kernels, bit for bit against NumPy.

numba.njit has no float16 arithmetic, so NumPy is the oracle: each float16 operation
computed in float32 and rounded once to float16, ties to even (NumPy's npy_half
loops). Types follow numba-cuda (float16 op float16 -> float16; mixed operands keep
Numba's rules). NaN matches NaN; every other result must have the same bits.

- every unary operation and numba-cuda's float16 math functions on all 65,536 float16
  bit patterns (the math functions: rounded once from the float32 library's result,
  equal to NumPy's float32 function rounded once wherever the two float32 results
  agree, and never more than 1 float16 ulp from it);
- every binary operation (and its in-place form, min, max, comparisons) on 1,048,576
  random bit-pattern pairs plus all pairs of special values and rounding ties;
- conversions from float32, float64 (cases where rounding through float32 would round
  twice included), integers and bool against NumPy's astype;
- the types of mixed operations, and that these templates win over Numba's generic ones;
- a numba.cuda kernel with ``cuda.fp16``, hfma against the exact a * b + c.
"""

import math
import operator

import numpy as np
import pytest
from numba.core import types
from numba.core.errors import TypingError
from numba.core.typing import Context

import numba_vulkan as nv
from numba_vulkan import cuda
from numba_vulkan.errors import VulkanUnsupportedError
from numba_vulkan.typing import pipeline

pytestmark = [
    pytest.mark.device,
    pytest.mark.usefixtures("device"),
]

ALL = np.arange(1 << 16, dtype=np.uint32).astype(np.uint16).view(np.float16)


def _bits(x):
    return np.ascontiguousarray(x).view(np.uint16)


def assert_same(got, want, what, operands=()):
    """Equal bits, or both NaN."""
    got, want = np.asarray(got), np.asarray(want)
    if got.dtype == np.float16:
        ok = (_bits(got) == _bits(want)) | (np.isnan(got) & np.isnan(want))
    else:
        ok = (got == want) | (np.isnan(got) & np.isnan(want))
    bad = np.nonzero(~ok)[0]
    if bad.size:
        shown = [tuple(o[j] for o in operands) + (got[j], want[j]) for j in bad[:5]]
        pytest.fail(f"{what}: {bad.size} of {ok.size} differ (operands, got, want): {shown}")


def ulps(x, y):
    """Distance in float16 steps (NaN against NaN: 0)."""

    def order(v):
        i = _bits(v).astype(np.int32)
        return np.where(i & 0x8000, 0x8000 - i, i)

    d = np.abs(order(x) - order(y))
    d[np.isnan(x) & np.isnan(y)] = 0
    d[np.isnan(x) != np.isnan(y)] = 1 << 16
    return d


def _quiet(x):
    """x with its NaNs made quiet (the first mantissa bit set), as float16."""
    return np.where(np.isnan(x), (_bits(x) | 0x0200).view(np.float16), x)


def _random_halves(rng, n):
    return rng.integers(0, 1 << 16, n, dtype=np.uint16).view(np.float16)


def _specials():
    tiny, sub_max, normal_min = 2.0**-24, 2.0**-14 - 2.0**-24, 2.0**-14
    pos = [0.0, tiny, 2 * tiny, 3 * tiny, sub_max, normal_min, normal_min + tiny, 0.1, 0.5,
           1.0, 1 + 2.0**-10, 1.5, 2.0, 3.0, 7.0, 2048.0, 2049.0, 32768.0, 65504.0,
           float("inf")]  # fmt: skip
    values = np.array(pos + [-v for v in pos] + [float("nan")], np.float16)
    a, b = np.meshgrid(values, values)
    return a.ravel(), b.ravel()


def _ties(rng, n):
    """x + y and x - y exactly halfway between two float16 values: y half a unit of x's
    last place (or three halves), both signs; subnormal sums included."""
    x = _random_halves(rng, n)
    x = x[np.isfinite(x) & (np.abs(x) < 30000) & (np.abs(x) >= 2.0**-13)]
    e = np.floor(np.log2(np.abs(x).astype(np.float64)))
    half_ulp = np.ldexp(1.0, (e - 11).astype(int)).astype(np.float16)
    y = (half_ulp * rng.choice(np.array([1, -1, 3, -3], np.float16), x.size)).astype(np.float16)
    exact = x.astype(np.float64) + y.astype(np.float64)
    tie = exact != exact.astype(np.float16).astype(np.float64)  # not where a binade is crossed
    return x[tie], y[tie]


@pytest.fixture(scope="module")
def pairs():
    rng = np.random.default_rng(16)
    a, b = _random_halves(rng, 1 << 20), _random_halves(rng, 1 << 20)
    sa, sb = _specials()
    ta, tb = _ties(rng, 1 << 14)
    return np.concatenate([a, sa, ta, tb]), np.concatenate([b, sb, tb, ta])


# ---------------------------------------------------------------- binary operations

_OPS = ("+", "-", "*", "/", "//", "%", "**")


@nv.jit
def _binary(out, flags, a, b):
    i = nv.global_id(0)
    if i < a.size:
        x, y = a[i], b[i]
        out[0, i] = x + y
        out[1, i] = x - y
        out[2, i] = x * y
        out[3, i] = x / y
        out[4, i] = x // y
        out[5, i] = x % y
        out[6, i] = x**y
        out[7, i] = min(x, y)
        out[8, i] = max(x, y)
        r = x
        r += y
        r *= y
        r -= x
        r /= y
        out[9, i] = r
        flags[0, i] = x == y
        flags[1, i] = x != y
        flags[2, i] = x < y
        flags[3, i] = x <= y
        flags[4, i] = x > y
        flags[5, i] = x >= y


def test_binary_operations_on_a_million_pairs_bit_for_bit(pairs):
    a, b = pairs
    assert a.size >= 10**6
    out = np.zeros((10, a.size), np.float16)
    flags = np.zeros((6, a.size), np.bool_)
    _binary.forall(a.size)(out, flags, a, b)
    # x ** 0 and 1 ** x are 1 for every NaN x here, as C99 says; NumPy's float16 power
    # (glibc's powf) gives NaN for a signalling NaN: its reference takes quiet NaNs.
    qa, qb = _quiet(a), _quiet(b)
    assert (_bits(qa) != _bits(a)).sum() > 1000  # signalling NaNs among the operands
    with np.errstate(all="ignore"):
        want = [a + b, a - b, a * b, a / b, a // b, a % b, qa**qb,
                np.where(b < a, b, a), np.where(b > a, b, a),  # CPython's min / max
                (((a + b) * b) - a) / b]  # fmt: skip
        for k, name in enumerate(list(_OPS) + ["min", "max", "+= *= -= /="]):
            assert_same(out[k], want[k], f"float16 {name}", (a, b))
        for k, (name, ref) in enumerate([("==", a == b), ("!=", a != b), ("<", a < b),
                                         ("<=", a <= b), (">", a > b), (">=", a >= b)]):
            assert_same(flags[k], ref, f"float16 {name}", (a, b))
    # The operands reach every kind of result: ties, subnormals, overflow, NaN.
    s = out[0]
    assert np.isinf(s).sum() > 1000 and np.isnan(s).sum() > 1000
    assert ((s != 0) & (np.abs(s) < 2.0**-14)).sum() > 1000
    assert _ties(np.random.default_rng(16), 1 << 14)[0].size > 10000


def test_results_round_at_each_operation_not_at_the_store():
    """a * b + a: float16 after the product (NumPy's order), not float32 until the store."""
    rng = np.random.default_rng(3)
    a, b = _random_halves(rng, 1 << 16), _random_halves(rng, 1 << 16)

    @nv.jit
    def fused_looking(c, a, b):
        i = nv.global_id(0)
        if i < c.size:
            c[i] = a[i] * b[i] + a[i]

    c = np.zeros(a.size, np.float16)
    fused_looking.forall(a.size)(c, a, b)
    with np.errstate(all="ignore"):
        want = (a * b) + a
        in_float32 = (a.astype(np.float32) * b + a).astype(np.float16)
    assert_same(c, want, "a * b + a", (a, b))
    assert (ulps(in_float32, want) > 0).sum() > 1000  # the test tells the two apart


# ---------------------------------------------------------------- unary operations, math

_EXACT = ("-x", "+x", "abs(x)", "math.fabs(x)", "math.sqrt(x)", "math.ceil(x)",
          "math.floor(x)", "math.trunc(x)")  # fmt: skip
_EXACT_REF = (np.negative, np.positive, np.abs, np.fabs, np.sqrt, np.ceil, np.floor, np.trunc)
_MATH = ("sin", "cos", "exp", "exp2", "log", "log2", "log10", "tanh")


def _unary_kernel():
    lines = [f"        out[{k}, i] = {e}" for k, e in enumerate(_EXACT)]
    for k, name in enumerate(_MATH):
        lines.append(f"        out[{len(_EXACT) + k}, i] = math.{name}(x)")
        lines.append(f"        out32[{k}, i] = math.{name}(np.float32(x))")
    src = ("def unary(out, out32, a):\n    i = nv.global_id(0)\n    if i < a.size:\n"
           "        x = a[i]\n" + "\n".join(lines) + "\n")  # fmt: skip
    ns = {"nv": nv, "np": np, "math": math}
    exec(compile(src, "<float16 unary>", "exec"), ns)
    return nv.jit(ns["unary"])


def test_unary_operations_and_math_on_every_float16():
    out = np.zeros((len(_EXACT) + len(_MATH), ALL.size), np.float16)
    out32 = np.zeros((len(_MATH), ALL.size), np.float32)
    _unary_kernel().forall(ALL.size)(out, out32, ALL)
    x32 = ALL.astype(np.float32)
    with np.errstate(all="ignore"):
        for k, (expr, ref) in enumerate(zip(_EXACT, _EXACT_REF)):
            assert_same(out[k], ref(ALL), expr, (ALL,))
        for k, name in enumerate(_MATH):
            got, ours32 = out[len(_EXACT) + k], out32[k]
            numpy32 = getattr(np, name)(x32)
            # the float32 library's result, rounded once
            assert_same(got, ours32.astype(np.float16), f"math.{name} rounded once", (ALL,))
            want = numpy32.astype(np.float16)
            agree = (ours32 == numpy32) | (np.isnan(ours32) & np.isnan(numpy32))
            assert_same(got[agree], want[agree], f"math.{name} where float32 agrees",
                        (ALL[agree],))  # fmt: skip
            assert ulps(got, want).max() <= 1, f"math.{name}: more than 1 ulp from NumPy's"


def test_math_on_float16_is_typed_float16_as_in_numba_cuda():
    def kernel(out, x):
        r = math.sqrt(x)
        f = math.floor(x)
        t = math.tan(x)
        s = np.sin(x)
        out[0] = r + f + t + s

    typed = pipeline.type_kernel(kernel, (types.float32[::1], types.float16), pipeline.Options())
    tm = typed.typemap
    assert (tm["r"], tm["f"], tm["t"], tm["s"]) == (types.float16, types.float16,
                                                    types.float32, types.float32)


# ---------------------------------------------------------------- conversions


@nv.jit
def _convert(out, out2, a):
    i = nv.global_id(0)
    if i < out.size:
        out[i] = a[i]  # the store converts
        out2[i] = np.float16(a[i]) * np.float16(1)  # the constructor, then a float16 product


def _converted(src):
    out, out2 = np.zeros(src.size, np.float16), np.zeros(src.size, np.float16)
    _convert.forall(src.size)(out, out2, src)
    with np.errstate(all="ignore"):
        want = src.astype(np.float16)
    assert_same(out, want, f"{src.dtype} -> float16 (store)", (src,))
    assert_same(out2, want, f"np.float16({src.dtype})", (src,))


def test_float32_to_float16_as_numpy():
    rng = np.random.default_rng(32)
    n = 1 << 19
    bits = rng.integers(0, 1 << 32, n, dtype=np.uint64).astype(np.uint32)
    e = rng.integers(100, 146, n).astype(np.uint32)  # around half's range: subnormals, overflow
    m = rng.integers(0, 1 << 23, n).astype(np.uint32)
    m[::3] = (m[::3] & ~np.uint32(0x1FFF)) | 0x1000  # ties of normal halves
    near = (e << 23) | m | (rng.integers(0, 2, n).astype(np.uint32) << 31)
    _converted(np.concatenate([bits, near]).view(np.float32))


def test_float64_to_float16_rounds_once():
    rng = np.random.default_rng(64)
    n = 1 << 19
    bits = rng.integers(0, 1 << 63, n, dtype=np.int64).view(np.uint64)
    e = rng.integers(1023 - 28, 1023 + 17, n).astype(np.uint64)
    m = rng.integers(0, 1 << 52, n, dtype=np.uint64)
    low = np.uint64((1 << 42) - 1)
    m[::3] = (m[::3] & ~low) | np.uint64(1 << 41)  # ties
    m[1::3] = (m[1::3] & ~low) | np.uint64((1 << 41) + 1)  # just above: float32 makes a tie
    sign = rng.integers(0, 2, n).astype(np.uint64) << np.uint64(63)
    values = np.concatenate([bits, (e << np.uint64(52)) | m | sign]).view(np.float64)
    with np.errstate(all="ignore"):
        twice = values.astype(np.float32).astype(np.float16)
        assert (_bits(twice) != _bits(values.astype(np.float16))).sum() > 10000
    _converted(values)


@pytest.mark.parametrize("dtype", [np.int64, np.int32, np.uint64, np.int16, np.uint16, np.int8,
                                   np.uint8, np.bool_])  # fmt: skip
def test_integers_to_float16_as_numpy(dtype):
    rng = np.random.default_rng(8)
    values = np.concatenate([
        np.arange(-70000, 70000),  # ties from 2049 up, 65504, infinity from 65520
        rng.integers(-(1 << 62), 1 << 62, 1 << 14),
        [np.iinfo(np.int64).min, np.iinfo(np.int64).max, -65520, -65519, 65519, 65520],
    ]).astype(np.int64)  # fmt: skip
    _converted(values.astype(dtype))


def test_float16_constants():
    @nv.jit
    def constants(out):
        out[0] = np.float16(0.1)
        out[1] = np.float16(65519.0)
        out[2] = np.float16(65520.0)
        out[3] = np.float16(1e-8)
        out[4] = np.float16(3e-8)
        out[5] = np.float16(2049)
        out[6] = np.float16(0.1) * np.float16(3)

    out = np.zeros(7, np.float16)
    constants.forall(1)(out)
    with np.errstate(over="ignore"):
        want = [np.float16(0.1), np.float16(65519.0), np.float16(65520.0), np.float16(1e-8),
                np.float16(3e-8), np.float16(2049), np.float16(0.1) * np.float16(3)]
    assert_same(out, np.array(want, np.float16), "float16 constants")


# ---------------------------------------------------------------- types of mixed operations

_MIXED = [
    (types.float16, types.float16),
    (types.float16, types.float32),
    (types.float16, types.float64),
    (types.float16, types.int64),
    (types.float16, types.int32),
    (types.float16, types.int16),
    (types.float16, types.int8),
    (types.float16, types.uint8),
    (types.float16, types.boolean),
]
# numba-cuda's result of x * y: float16 where y converts to float16 exactly, by promotion or
# safely (Numba's rules: bool, int8); otherwise Numba's own rule.
_MIXED_RESULT = [types.float16, types.float32, types.float64, types.float64, types.float64,
                 types.float32, types.float16, types.float32, types.float16]


def _typemap(fn, argtypes):
    return pipeline.type_kernel(fn, tuple(argtypes), pipeline.Options()).typemap


def test_mixed_operands_keep_numba_rules():
    def kernel(out, x, y):
        p = x * y
        q = y / x
        c = x < y
        m = min(x, y)
        out[0] = p + q + c + m

    for (tx, ty), want in zip(_MIXED, _MIXED_RESULT):
        tm = _typemap(kernel, (types.float64[::1], tx, ty))
        assert (tm["p"], tm["q"], tm["c"], tm["m"]) == (want, want, types.boolean, want), (tx, ty)

    def literals(out, x):
        a = x * 2  # a Python int is an int64: float64, as in numba-cuda
        b = x * 0.5  # a float64
        c = x**2  # float ** int keeps the float's type in Numba: float32 for float16
        d = int(x)
        e = float(x)
        f = -x
        g = abs(x)
        out[0] = a + b + c + d + e + f + g

    tm = _typemap(literals, (types.float64[::1], types.float16))
    assert [tm[v] for v in "abcdefg"] == [types.float64, types.float64, types.float32,
                                          types.int64, types.float64, types.float16,
                                          types.float16]  # fmt: skip


def test_float16_templates_win_over_numba_generic_ones():
    generic = Context()
    generic.refresh()
    sig = generic.resolve_function_type(operator.mul, (types.float16, types.float16), {})
    assert sig.return_type == types.float32  # Numba's own: float16 computed as float32

    def kernel(out, x):
        p = x * x
        out[0] = p

    assert _typemap(kernel, (types.float16[::1], types.float16))["p"] == types.float16


def test_mixed_values_as_numpy():
    @nv.jit
    def mixed(o32, o64, o16, h, f, i, s):
        k = nv.global_id(0)
        if k < h.size:
            x = h[k]
            o32[0, k] = x * f[k]
            o32[1, k] = x - f[k]
            o64[0, k] = x * i[k]
            o64[1, k] = x / i[k]
            o16[0, k] = x * s[k]
            o16[1, k] = s[k] - x

    rng = np.random.default_rng(9)
    n = 1 << 16
    h = _random_halves(rng, n)
    f = rng.standard_normal(n).astype(np.float32) * 100
    i = rng.integers(-(1 << 40), 1 << 40, n)
    s = rng.integers(-128, 128, n).astype(np.int8)
    o32, o64, o16 = np.zeros((2, n), np.float32), np.zeros((2, n)), np.zeros((2, n), np.float16)
    mixed.forall(n)(o32, o64, o16, h, f, i, s)
    with np.errstate(all="ignore"):
        for got, want, what in [(o32[0], h * f, "float16 * float32"),
                                (o32[1], h - f, "float16 - float32"),
                                (o64[0], h * i, "float16 * int64"),
                                (o64[1], h / i, "float16 / int64"),
                                (o16[0], h * s, "float16 * int8"),
                                (o16[1], s - h, "int8 - float16")]:  # fmt: skip
            assert got.dtype == want.dtype, what
            assert_same(got, want, what, (h,))


def test_sum_of_a_float16_array_rounds_once():
    @nv.jit
    def total(out, a):
        out[0] = a.sum()
        out[1] = a[0] + a[1] + a[2]

    a = np.array([1.0, 2.0**-11, 2.0**-11] + [2.0**-12] * 5, np.float16)
    out = np.zeros(2, np.float16)
    total.forall(1)(out, a)
    assert out[0] == np.float16(a.astype(np.float32).sum())  # 1 + 2^-10 + 5 * 2^-12
    assert out[1] == (a[0] + a[1]) + a[2] == np.float16(1.0)  # each + rounds (ties to even)


def test_local_and_shared_float16_arrays_hold_rounded_values():
    @nv.jit
    def arrays(out, a, b):
        i = nv.global_id(0)
        loc = nv.local.array(2, np.float16)
        sh = nv.shared.array(64, np.float16)
        if i < a.size:
            loc[0] = np.float32(a[i]) * np.float32(b[i])  # float32 stored: rounded once
            loc[1] = a[i] / b[i]
            sh[nv.local_id(0)] = loc[0] + loc[1]
            out[0, i] = loc[0]
            out[1, i] = sh[nv.local_id(0)]

    rng = np.random.default_rng(5)
    a, b = _random_halves(rng, 1 << 14), _random_halves(rng, 1 << 14)
    out = np.zeros((2, a.size), np.float16)
    arrays.forall(a.size)(out, a, b)
    with np.errstate(all="ignore"):
        product = (a.astype(np.float32) * b).astype(np.float16)
        assert_same(out[0], product, "float32 product stored in a local float16 array", (a, b))
        assert_same(out[1], product + a / b, "float16 sum stored in a shared array", (a, b))


# ---------------------------------------------------------------- numba.cuda's cuda.fp16


@cuda.jit
def _fp16_kernel(out, flags, a, b, c):
    i = cuda.grid(1)
    if i < a.size:
        x, y, z = a[i], b[i], c[i]
        out[0, i] = cuda.fp16.hadd(x, y)
        out[1, i] = cuda.fp16.hsub(x, y)
        out[2, i] = cuda.fp16.hmul(x, y)
        out[3, i] = cuda.fp16.hdiv(x, y)
        out[4, i] = cuda.fp16.hneg(x)
        out[5, i] = cuda.fp16.habs(x)
        out[6, i] = cuda.fp16.hfma(x, y, z)
        out[7, i] = cuda.fp16.hsqrt(x)
        out[8, i] = cuda.fp16.hrcp(x)
        out[9, i] = cuda.fp16.hceil(x)
        out[10, i] = cuda.fp16.hfloor(x)
        out[11, i] = cuda.fp16.htrunc(x)
        out[12, i] = cuda.fp16.hrint(x)
        out[13, i] = cuda.fp16.hmax(x, y)
        out[14, i] = cuda.fp16.hmin(x, y)
        out[15, i] = cuda.fp16.hexp(x)
        out[16, i] = cuda.fp16.hexp2(x)
        out[17, i] = cuda.fp16.hexp10(x)
        out[18, i] = cuda.fp16.hlog(x)
        out[19, i] = cuda.fp16.hlog2(x)
        out[20, i] = cuda.fp16.hlog10(x)
        out[21, i] = cuda.fp16.hsin(x)
        out[22, i] = cuda.fp16.hcos(x)
        out[23, i] = cuda.fp16.htanh(x)
        out[24, i] = cuda.fp16.hrsqrt(x)
        flags[0, i] = cuda.fp16.heq(x, y)
        flags[1, i] = cuda.fp16.hne(x, y)
        flags[2, i] = cuda.fp16.hge(x, y)
        flags[3, i] = cuda.fp16.hgt(x, y)
        flags[4, i] = cuda.fp16.hle(x, y)
        flags[5, i] = cuda.fp16.hlt(x, y)


def _exact_fma(a, b, c):
    """RN16(a * b + c) from the exact sum (integers in units of 2^-48; rounding it to
    float64 first is harmless: 53 >= 2 * 11 + 2)."""
    out = []
    for x, y, z in zip(a.tolist(), b.tolist(), c.tolist()):
        if not (math.isfinite(x) and math.isfinite(y) and math.isfinite(z)):
            with np.errstate(all="ignore"):
                out.append(np.float16(np.float64(x) * y + z))
            continue
        exact = round(x * 2**24) * round(y * 2**24) + round(z * 2**24) * 2**24
        with np.errstate(over="ignore"):
            out.append(np.float16(float(exact) * 2.0**-48))
    return np.array(out, np.float16)


def _fma_traps():
    """Triples where rounding a * b + c through float32 (1 + 2^-10 + 2^-11 - 2^-31 becomes a
    tie) or rounding a * b first gives another float16 than the fused result."""
    one = 1 + 2.0**-10
    rows = [(one, 2.0**-11 * (1 - 2.0**-10), one), (-one, 2.0**-11 * (1 - 2.0**-10), -one)]
    rng = np.random.default_rng(11)
    x, y = rng.uniform(1, 2, 4000).astype(np.float16), rng.uniform(1, 2, 4000).astype(np.float16)
    rows += list(zip(x, y, -(x * y)))  # the product's rounding error alone
    a, b, c = (np.array(col, np.float16) for col in zip(*rows))
    return a, b, c


def test_cuda_fp16_functions():
    rng = np.random.default_rng(7)
    n = 1 << 16
    a, b, c = _random_halves(rng, n), _random_halves(rng, n), _random_halves(rng, n)
    ta, tb, tc = _fma_traps()
    sa, sb = _specials()
    a, b = np.concatenate([a, ta, sa]), np.concatenate([b, tb, sb])
    c = np.concatenate([c, tc, _random_halves(rng, sa.size)])
    out = np.zeros((25, a.size), np.float16)
    flags = np.zeros((6, a.size), np.bool_)
    _fp16_kernel[(a.size + 63) // 64, 64](out, flags, a, b, c)
    fused = _exact_fma(a, b, c)
    with np.errstate(all="ignore"):
        exact = [(a + b, "hadd"), (a - b, "hsub"), (a * b, "hmul"), (a / b, "hdiv"),
                 (-a, "hneg"), (np.abs(a), "habs"), (fused, "hfma"), (np.sqrt(a), "hsqrt"),
                 (np.float16(1) / a, "hrcp"), (np.ceil(a), "hceil"), (np.floor(a), "hfloor"),
                 (np.trunc(a), "htrunc"), (np.rint(a), "hrint")]  # fmt: skip
        for k, (want, name) in enumerate(exact):
            assert_same(out[k], want, f"cuda.fp16.{name}", (a, b, c))
        # CUDA's __hmax/__hmin: the number where one is NaN, +0.0 above -0.0
        zeros = (a == 0) & (b == 0)
        both_negative, one_negative = np.signbit(a) & np.signbit(b), np.signbit(a) | np.signbit(b)
        hmax = np.where(zeros, np.where(both_negative, a, np.abs(a)), np.fmax(a, b))
        hmin = np.where(zeros, np.where(one_negative, -np.abs(a), a), np.fmin(a, b))
        assert_same(out[13], hmax, "cuda.fp16.hmax", (a, b))
        assert_same(out[14], hmin, "cuda.fp16.hmin", (a, b))
        x32, x64 = a.astype(np.float32), a.astype(np.float64)
        approx = [(np.exp(x32), "hexp"), (np.exp2(x32), "hexp2"), (10.0**x64, "hexp10"),
                  (np.log(x32), "hlog"), (np.log2(x32), "hlog2"), (np.log10(x32), "hlog10"),
                  (np.sin(x32), "hsin"), (np.cos(x32), "hcos"), (np.tanh(x32), "htanh"),
                  (1 / np.sqrt(x64), "hrsqrt")]  # fmt: skip
        for k, (want, name) in enumerate(approx, start=15):
            d = ulps(out[k], want.astype(np.float16))
            assert d.max() <= 1, f"cuda.fp16.{name}: {d.max()} ulp from the reference"
        for k, (want, name) in enumerate([(a == b, "heq"), ((a < b) | (a > b), "hne"),
                                          (a >= b, "hge"), (a > b, "hgt"), (a <= b, "hle"),
                                          (a < b, "hlt")]):  # fmt: skip
            assert_same(flags[k], want, f"cuda.fp16.{name}", (a, b))
        # the traps tell a fused result from the others
        unfused = (ta * tb) + tc
        via32 = (ta.astype(np.float32) * tb + tc).astype(np.float16)
        want = fused[n: n + ta.size]
        assert (_bits(unfused) != _bits(want)).sum() > 1000
        assert _bits(via32)[0] != _bits(want)[0] and _bits(via32)[1] != _bits(want)[1]


def test_cuda_fp16_refusals():
    assert hasattr(cuda.fp16, "hfma") and not hasattr(cuda.fp16, "__hadd_sat")
    with pytest.raises(VulkanUnsupportedError, match="__float2half_rz"):
        cuda.fp16.__float2half_rz  # noqa: B018
    with pytest.raises(NotImplementedError, match="inside a kernel"):
        cuda.fp16.hadd(np.float16(1), np.float16(2))

    @cuda.jit
    def bad(out, a):
        out[0] = cuda.fp16.hadd(a, a)

    with pytest.raises((TypingError, VulkanUnsupportedError), match="float16"):
        bad[1, 1](np.zeros(1, np.float16), np.zeros(2, np.float16))


def test_cuda_fp16_first_loaded_inside_a_kernel(tmp_path):
    """cuda.fp16 is imported on first use, which can be in the middle of typing a kernel:
    its templates must be there for that kernel (a fresh process, after another kernel)."""
    import subprocess
    import sys

    script = tmp_path / "first_use.py"
    script.write_text(
        "import numpy as np\n"
        "from numba_vulkan import cuda\n"
        "@cuda.jit\n"
        "def first(o):\n"
        "    o[0] = 1\n"
        "first[1, 1](np.zeros(1, np.float32))\n"
        "@cuda.jit\n"
        "def k(o, a):\n"
        "    o[0] = cuda.fp16.hadd(a[0], a[0])\n"
        "o = np.zeros(1, np.float16)\n"
        "k[1, 1](o, np.ones(1, np.float16))\n"
        "print(o[0])\n")
    import numba_vulkan

    env = dict(__import__("os").environ)
    env["PYTHONPATH"] = str(__import__("pathlib").Path(numba_vulkan.__file__).parents[1])
    out = subprocess.run([sys.executable, str(script)], capture_output=True, text=True,
                         env=env, timeout=120, check=False)
    assert out.returncode == 0 and out.stdout.strip() == "2.0", out.stdout + out.stderr
