"""bfloat16 on a device that flushes float32 subnormals (NVIDIA), simulated on lavapipe.

bfloat16's subnormals (below 2^-126) are float32 subnormals, and a bfloat16 is held in a
float32 register: on such a device a plain float32 add, compare or conversion would read
them as zeros and flush subnormal results. With config.SUBNORMALS32 = "simulate" the
compiler takes the forms a flushing device gets and the library's own float32 operations
flush as that device's do (mathlib/denormals.py); the results must still be ml_dtypes'
bits, as in test_bfloat16.py, on operands rich in subnormals and in results that
underflow.
"""

import numpy as np
import pytest
from bfloat16_support import ALL, BF, assert_sign_bits, exact_fma
from conftest import requires_feature
from half_support import (
    assert_binary,
    assert_same,
    assert_ulps,
    every_pair,
    rows_kernel,
    run_binary,
)
from math_support import set_subnormals32

import numba_vulkan as nv
from numba_vulkan import cuda

pytestmark = [pytest.mark.device, pytest.mark.usefixtures("device"),
              requires_feature("storage16")]  # fmt: skip


@pytest.fixture(autouse=True)
def flushing(monkeypatch):
    set_subnormals32(monkeypatch, "simulate")


def _values():
    """Every subnormal and the normals just above them, both signs; magnitudes around 1, whose
    products and quotients with those stay subnormal or become so; zeros, infinities, NaN."""
    w = np.arange(0x0000, 0x0100, dtype=np.uint16)  # subnormals, then the smallest normals
    rng = np.random.default_rng(7)
    mid = rng.integers(0x3000, 0x4F00, 240).astype(np.uint16)  # 2^-31 .. 2^31
    special = np.array([0x7F80, 0x7FC0, 0x7F7F, 0x3F80, 0x4000, 0x3F00, 0x0B00, 0x7400],
                       np.uint16)  # fmt: skip
    w = np.concatenate([w, mid, special])
    return np.concatenate([w, w | 0x8000]).view(BF)


@pytest.fixture(scope="module")
def pairs():
    return every_pair(_values())


def test_arithmetic_with_subnormals_bit_for_bit(pairs):
    """half_support.binary's operations as in test_bfloat16.py, the power within 1 ulp."""
    a, b = pairs
    out, flags = run_binary(a, b)
    assert_binary(out, flags, a, b, "bfloat16")
    assert_sign_bits(out, a, b)
    with np.errstate(all="ignore"):
        assert_ulps(out[6], a**b, 1, "**", (a, b))
    # the operands make subnormal results of every kind
    with np.errstate(all="ignore"):
        for w in [a + b, a - b, a * b, a / b]:
            f = w.astype(np.float32)
            assert ((np.abs(f) < 2.0**-126) & (f != 0)).sum() > 1000


def test_conversions_of_subnormals():
    @nv.jit
    def from_bf16(o64, o16, ob, oi, a):
        i = nv.global_id(0)
        if i < a.size:
            o64[i] = float(a[i])
            o16[i] = np.float16(a[i])
            ob[i] = bool(a[i])
            oi[i] = int(a[i] * BF(2.0**100)) if abs(a[i]) < BF(2.0**-70) else 0

    n = ALL.size
    o64, o16 = np.zeros(n), np.zeros(n, np.float16)
    ob, oi = np.zeros(n, np.bool_), np.zeros(n, np.int64)
    from_bf16.forall(n)(o64, o16, ob, oi, ALL)
    x = ALL.astype(np.float32)
    with np.errstate(all="ignore"):
        assert_same(o64, ALL.astype(np.float64), "float(bfloat16)")
        assert_same(o16, ALL.astype(np.float16), "float16(bfloat16)")
        assert (ob == (x != 0)).all(), "bool(bfloat16)"
        small = np.abs(x) < 2.0**-70
        want = np.trunc((ALL[small] * BF(2.0**100)).astype(np.float64)).astype(np.int64)
        assert (oi[small] == want).all(), "a subnormal scaled up, as an int"


def _kernel(names, arity):
    """out[k, i] = np.<names[k]>(a[i][, b[i]]) for each name."""
    operands = "a[i], b[i]" if arity == 2 else "a[i]"
    lines = [f"out[{k}, i] = np.{name}({operands})" for k, name in enumerate(names)]
    return rows_kernel("out, a, b", lines, f"bfloat16 of subnormals, {arity} operands")


#: the arithmetic ufuncs (the bfloat16 operators) and a few of the float32 library's functions
_UNARY_SAMPLE = ("square", "reciprocal", "sqrt", "exp", "log", "sin", "floor", "rint")
_BINARY_SAMPLE = ("floor_divide", "remainder", "fmod", "power", "hypot", "arctan2",
                  "maximum", "copysign")  # fmt: skip
_EXACT = ("square", "reciprocal", "sqrt", "floor", "rint", "floor_divide", "remainder", "fmod",
          "maximum", "copysign")  # fmt: skip


def test_math_of_subnormals_within_one_ulp():
    v = _values()
    out = np.zeros((len(_UNARY_SAMPLE), v.size), BF)
    _kernel(_UNARY_SAMPLE, 1).forall(v.size)(out, v, v)
    with np.errstate(all="ignore"):
        for k, name in enumerate(_UNARY_SAMPLE):
            most = 0 if name in _EXACT else 1
            assert_ulps(out[k], getattr(np, name)(v), most, f"np.{name}", (v,))


def test_binary_math_of_subnormals(pairs):
    rng = np.random.default_rng(5)
    pick = rng.choice(pairs[0].size, 1 << 16, replace=False)
    a, b = pairs[0][pick], pairs[1][pick]
    out = np.zeros((len(_BINARY_SAMPLE), a.size), BF)
    _kernel(_BINARY_SAMPLE, 2).forall(a.size)(out, a, b)
    with np.errstate(all="ignore"):
        for k, name in enumerate(_BINARY_SAMPLE):
            most = 0 if name in _EXACT else 1
            assert_ulps(out[k], getattr(np, name)(a, b), most, f"np.{name}", (a, b))


def test_cuda_bf16_fma_and_reciprocal_of_subnormals():
    @nv.jit
    def k(out, a, b, c):
        i = nv.global_id(0)
        if i < a.size:
            out[0, i] = cuda.bf16.hfma(a[i], b[i], c[i])
            out[1, i] = cuda.bf16.hrcp(a[i])

    v = _values()
    rng = np.random.default_rng(3)
    a, b = rng.choice(v, 1 << 16), rng.choice(v, 1 << 16)
    c = rng.choice(v, 1 << 16)
    out = np.zeros((2, a.size), BF)
    k.forall(a.size)(out, a, b, c)
    with np.errstate(all="ignore"):
        assert_same(out[0], exact_fma(a, b, c), "hfma", (a, b, c))
        assert_same(out[1], np.reciprocal(a), "hrcp", (a,))


def _float32_comparisons(kernel):
    """The SPIR-V float comparisons (OpFOrd*/OpFUnord*) of `kernel`'s specialisations."""
    return [line for text in kernel.inspect_asm().values() for line in text.splitlines()
            if "OpFOrd" in line or "OpFUnord" in line]


def test_bfloat16_comparisons_are_made_on_the_bits():
    """What `simulate` cannot show: the kernel's own comparisons are the device's, which on
    NVIDIA read a subnormal operand as 0 (min(+2^-133, -2^-130) gave +2^-133 on an H100).
    Every comparison of a bfloat16, with a bfloat16 or a float32 (min, max, the
    operators, argmin/argmax, the directed conversions), must be made on the bits: the
    kernels hold no float comparison at all."""

    @nv.jit
    def compares(out, flags, a, b, f):
        i = nv.global_id(0)
        if i < a.size:
            out[i] = min(a[i], b[i])
            out[i + a.size] = max(a[i], b[i])
            flags[i] = (a[i] < b[i]) + 2 * (a[i] >= f[i]) + 4 * (a[i] == b[i])
            out[i + 2 * a.size] = cuda.bf16.float2bfloat16_rz(f[i])
            out[i + 3 * a.size] = cuda.bf16.float2bfloat16_rd(f[i])
            out[i + 4 * a.size] = cuda.bf16.float2bfloat16_ru(f[i])
        if i == 0:
            flags[a.size] = a.argmin() + 1000 * a.argmax()
            out[5 * a.size] = a.min()

    a = np.array([0x0017, 0x8064, 0x0001, 0x0000], np.uint16).view(BF)  # subnormals, +0
    b = np.array([0x8064, 0x0017, 0x0000, 0x8000], np.uint16).view(BF)
    f = np.array([0x00012345, 0x80000001, 0x00000001, 0x00800000], np.uint32).view(np.float32)
    out = np.zeros(5 * a.size + 1, BF)
    flags = np.zeros(a.size + 1, np.int64)
    compares.forall(a.size)(out, flags, a, b, f)
    assert _float32_comparisons(compares) == []
    bits = out.view(np.uint16)
    assert list(bits[:4]) == [0x8064, 0x8064, 0x0000, 0x0000]  # min: the first of equals
    assert list(bits[4:8]) == [0x0017, 0x0017, 0x0001, 0x0000]  # max: likewise
    assert list(flags[:4]) == [2, 1, 2, 4]  # a < b, a >= f (a float32), a == b
    assert list(bits[8:12]) == [0x0001, 0x8000, 0x0000, 0x0080]  # toward zero
    assert list(bits[12:16]) == [0x0001, 0x8001, 0x0000, 0x0080]  # down
    assert list(bits[16:20]) == [0x0002, 0x8000, 0x0001, 0x0080]  # up
    assert flags[a.size] == 1 + 1000 * 0  # argmin: the negative one; argmax: 0x0017
    assert bits[5 * a.size] == 0x8064
