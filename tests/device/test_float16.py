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

Mixed types and arrays are in test_float16_types.py, ``cuda.fp16`` in
test_float16_cuda.py; what they share in float16_support.py.
"""
import math

import numpy as np
import pytest
from float16_support import ALL, SPECIALS, quiet, random_halves
from half_support import (
    assert_binary,
    assert_same,
    assert_ulps,
    operand_pairs,
    rows_kernel,
    run_binary,
    ties,
    typemap,
    ulps,
)
from half_support import bits as _bits
from numba.core import types

import numba_vulkan as nv

pytestmark = [
    pytest.mark.device,
    pytest.mark.usefixtures("device"),
]


def _ties(rng, n=1 << 14):
    """x + y and x - y exactly halfway between two float16 values (subnormal sums too)."""
    return ties(rng, n, np.float16, 11, 2.0**-13, 30000)


@pytest.fixture(scope="module")
def pairs():
    return operand_pairs(np.random.default_rng(16), 1 << 20, SPECIALS, _ties)


# ---------------------------------------------------------------- binary operations


def test_binary_operations_on_a_million_pairs_bit_for_bit(pairs):
    """Every binary operation, its in-place forms, min, max and the comparisons
    (half_support.binary) as NumPy's float16 computes them."""
    a, b = pairs
    assert a.size >= 10**6
    out, flags = run_binary(a, b)
    assert_binary(out, flags, a, b, "float16")
    # x ** 0 and 1 ** x are 1 for every NaN x here, as C99 says; NumPy's float16 power
    # (glibc's powf) gives NaN for a signalling NaN: its reference takes quiet NaNs.
    qa, qb = quiet(a), quiet(b)
    assert (_bits(qa) != _bits(a)).sum() > 1000  # signalling NaNs among the operands
    with np.errstate(all="ignore"):
        assert_same(out[6], qa**qb, "float16 **", (a, b))
    # The operands reach every kind of result: ties, subnormals, overflow, NaN.
    s = out[0]
    assert np.isinf(s).sum() > 1000 and np.isnan(s).sum() > 1000
    assert ((s != 0) & (np.abs(s) < 2.0**-14)).sum() > 1000
    assert _ties(np.random.default_rng(16))[0].size > 10000


def test_results_round_at_each_operation_not_at_the_store():
    """a * b + a: float16 after the product (NumPy's order), not float32 until the store."""
    rng = np.random.default_rng(3)
    a, b = random_halves(rng, 1 << 16), random_halves(rng, 1 << 16)

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
    lines = ["x = a[i]"] + [f"out[{k}, i] = {e}" for k, e in enumerate(_EXACT)]
    for k, name in enumerate(_MATH):
        lines.append(f"out[{len(_EXACT) + k}, i] = math.{name}(x)")
        lines.append(f"out32[{k}, i] = math.{name}(np.float32(x))")
    return rows_kernel("out, out32, a", lines, "float16 unary")


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
            assert_ulps(got, want, 1, f"math.{name} against NumPy's", (ALL,))


def test_math_on_float16_is_typed_float16_as_in_numba_cuda():
    def kernel(out, x):
        r = math.sqrt(x)
        f = math.floor(x)
        t = math.tan(x)
        s = np.sin(x)
        out[0] = r + f + t + s

    tm = typemap(kernel, (types.float32[::1], types.float16))
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


