"""numba.cuda's cuda.bf16 names, and what bfloat16 kernels refuse.

The oracle and its rules are test_bfloat16.py's (ml_dtypes; NaN matches NaN).
"""
from fractions import Fraction

import numpy as np
import pytest
from bfloat16_support import ALL, BF, SPECIALS, copy, exact_fma, int64_operands, random_bf16
from conftest import requires_feature
from half_support import (
    assert_bits,
    assert_same,
    assert_ulps,
    float32_normal,
    flushes_float32,
    isnan,
)
from half_support import bits as _bits

import numba_vulkan as nv
from numba_vulkan import cuda
from numba_vulkan.errors import VulkanUnsupportedError
from numba_vulkan.typing.bfloat16 import bfloat16 as bf16_type

pytestmark = [pytest.mark.device, pytest.mark.usefixtures("device"),
              requires_feature("storage16")]  # fmt: skip


# ---------------------------------------------------------------- numba.cuda's cuda.bf16


@cuda.jit
def _bf16_kernel(out, flags, ints, a, b, c):
    i = cuda.grid(1)
    if i < a.size:
        x, y, z = a[i], b[i], c[i]
        out[0, i] = cuda.bf16.hadd(x, y)
        out[1, i] = cuda.bf16.hmul_rn(x, y)
        out[2, i] = cuda.bf16.hdiv(x, y)
        out[3, i] = cuda.bf16.hfma(x, y, z)
        out[4, i] = cuda.bf16.hmax(x, y)
        out[5, i] = cuda.bf16.hmin_nan(x, y)
        out[6, i] = cuda.bf16.hadd_sat(x, y)
        f = cuda.bf16.bfloat16_to_float32(x) * np.float32(1.001)
        out[7, i] = cuda.bf16.float2bfloat16_rz(f)
        out[8, i] = cuda.bf16.ushort_as_bfloat16(cuda.bf16.bfloat16_as_ushort(x))
        out[9, i] = cuda.bf16.hsqrt(x)
        flags[0, i] = cuda.bf16.hne(x, y)
        flags[1, i] = cuda.bf16.hltu(x, y)
        flags[2, i] = cuda.bf16.hisnan(x)
        ints[0, i] = cuda.bf16.bfloat162int_rn(x)
        ints[1, i] = cuda.bf16.bfloat16_to_int16_ru(x)
        ints[2, i] = cuda.bf16.hisinf(x)


def test_cuda_bf16_names():
    rng = np.random.default_rng(80)
    n = 1 << 12
    a, b, c = random_bf16(rng, n), random_bf16(rng, n), random_bf16(rng, n)
    # fma traps: a * b exactly halfway between two bfloat16 values, c far below it
    ta = (1 + rng.integers(0, 128, 1 << 16) / 128).astype(BF)
    tb = (1 + rng.integers(0, 128, 1 << 16) / 128).astype(BF)
    p = ta.astype(np.float64) * tb
    tie = (p - p.astype(BF).astype(np.float64)) != 0
    tie &= np.abs(p - p.astype(BF).astype(np.float64)) == np.ldexp(1.0, -8 + (p >= 2))
    ta, tb = ta[tie][:256], tb[tie][:256]
    m = ta.size
    tc = (np.ldexp(1.0, -rng.integers(20, 40, m)) * rng.choice([1, -1], m)).astype(BF)
    a, b, c = np.concatenate([a, SPECIALS, ta]), np.concatenate([b, SPECIALS[::-1], tb]), \
        np.concatenate([c, SPECIALS, tc])  # fmt: skip
    out = np.zeros((10, a.size), BF)
    flags = np.zeros((3, a.size), np.bool_)
    ints = np.zeros((3, a.size), np.int64)
    _bf16_kernel[(a.size + 63) // 64, 64](out, flags, ints, a, b, c)
    x, y = a.astype(np.float32), b.astype(np.float32)
    with np.errstate(all="ignore"):
        assert_same(out[0], a + b, "hadd", (a, b))
        assert_same(out[1], a * b, "hmul_rn", (a, b))
        assert_same(out[2], a / b, "hdiv", (a, b))
        assert_same(out[3], exact_fma(a, b, c), "hfma", (a, b, c))
        assert (_bits((ta * tb + tc)) != _bits(out[3][-m:])).sum() > m // 4  # traps bite
        zeros = (x == 0) & (y == 0)
        hmax = np.where(zeros, np.where(np.signbit(x) & np.signbit(y), a, np.abs(a)),
                        np.fmax(a, b))  # fmt: skip
        assert_same(out[4], hmax, "hmax", (a, b))
        nan = isnan(a) | isnan(b)
        assert (_bits(out[5])[nan] == 0x7FFF).all(), "hmin_nan: the canonical NaN"
        s = (a + b).astype(np.float32)
        assert_same(out[6], np.where(s > 1, 1, np.where(s > 0, s, 0)).astype(BF), "hadd_sat")
        r = x * np.float32(1.001)
        rz = r.astype(BF)
        rz = np.where(np.abs(rz.astype(np.float64)) > np.abs(r),
                      (_bits(rz) - 1).astype(np.uint16).view(BF), rz)  # fmt: skip
        # f is a plain float32 product, which a device may flush (docs/math.md)
        where = float32_normal(a, r) if flushes_float32() else True
        assert_same(out[7], rz, "float2bfloat16_rz", (a,), where)
        assert_bits(out[8], a, "bit casts", (a,))
        assert_same(out[9], np.sqrt(a), "hsqrt", (a,))
        assert (flags[0] == ((x < y) | (x > y))).all() and (flags[1] == ~(x >= y)).all()
        assert (flags[2] == np.isnan(x)).all()
        x64 = x.astype(np.float64)
        rn = np.where(np.isnan(x), 0, np.clip(np.rint(x64), -(2.0**31), 2.0**31 - 1))
        assert (ints[0] == rn.astype(np.int64)).all(), "bfloat162int_rn saturates, NaN -> 0"
        ru = np.where(np.isnan(x), 0, np.clip(np.ceil(x64), -(2.0**15), 2.0**15 - 1))
        assert (ints[1] == ru.astype(np.int64)).all()
        assert (ints[2] == np.where(np.isinf(x), np.sign(x), 0)).all()
    assert cuda.is_bfloat16_supported() and cuda.types.bfloat16 is bf16_type
    assert cuda.bf16.bfloat16 is BF and cuda.bf16.float32_to_bfloat16 is cuda.bf16.float2bfloat16
    with pytest.raises(VulkanUnsupportedError, match="typing registry"):
        cuda.bf16.typing_registry()
    with pytest.raises(NotImplementedError, match="inside a kernel"):
        cuda.bf16.hadd(BF(1), BF(2))


def test_cuda_bf16_math_and_directed_float_conversions():
    @cuda.jit
    def k(out, a, f):
        i = cuda.grid(1)
        if i < a.size:
            x = a[i]
            out[0, i] = cuda.bf16.hrsqrt(x)
            out[1, i] = cuda.bf16.hrcp(x)
            out[2, i] = cuda.bf16.hexp10(x)
            out[3, i] = cuda.bf16.htanh_approx(x)
            out[4, i] = cuda.bf16.float32_to_bfloat16_rd(f[i])
            out[5, i] = cuda.bf16.float32_to_bfloat16_ru(f[i])

    f = np.random.default_rng(6).integers(0, 1 << 32, ALL.size, dtype=np.uint64)
    f = f.astype(np.uint32).view(np.float32)
    out = np.zeros((6, ALL.size), BF)
    k[ALL.size // 64, 64](out, ALL, f)
    with np.errstate(all="ignore"):
        x = ALL.astype(np.float64)
        for row, want, bound in ((0, 1 / np.sqrt(x), 1), (1, 1 / x, 0), (2, 10.0**x, 1),
                                 (3, np.tanh(x), 1)):  # fmt: skip
            assert_ulps(out[row], want.astype(BF), bound, f"row {row}", (ALL,))
        # the nearest, moved one step toward -inf (rd) or +inf (ru) where it went past f
        near = f.astype(BF)
        w = _bits(near).astype(np.int32)
        negative = w >= 0x8000
        down = np.where(near.astype(np.float32) > f, np.where(negative, w + 1, w - 1), w)
        up = np.where(near.astype(np.float32) < f, np.where(negative, w - 1, w + 1), w)
        for row, want in ((4, down), (5, up)):
            assert_same(out[row], want.astype(np.uint16).view(BF), "directed", (f,))


def test_cuda_bf16_directed_integer_conversions():
    @cuda.jit
    def k(out, v):
        i = cuda.grid(1)
        if i < v.size:
            out[0, i] = cuda.bf16.ll2bfloat16_rz(v[i])
            out[1, i] = cuda.bf16.ll2bfloat16_rd(v[i])
            out[2, i] = cuda.bf16.ll2bfloat16_ru(v[i])
            out[3, i] = cuda.bf16.int64_to_bfloat16_rn(v[i])

    v = int64_operands(np.random.default_rng(5), 1 << 12)
    out = np.zeros((4, v.size), BF)
    k[(v.size + 63) // 64, 64](out, v)
    for row, mode in zip(out[:3], ("rz", "rd", "ru")):
        for value, got in zip(v.tolist(), row.tolist()):
            got = Fraction(float(got))
            nearest = Fraction(float(np.array([value]).astype(BF)[0]))
            step = Fraction(2) ** max(abs(value).bit_length() - 8, 0)
            ok = {
                "rz": abs(got) <= abs(value) < abs(got) + step,
                "rd": got <= value < got + step,
                "ru": got - step < value <= got,
            }[mode]
            assert ok and abs(got - nearest) <= step, (mode, value, got)
    assert_bits(out[3], v.astype(BF), "int64_to_bfloat16_rn", (v,))


# ---------------------------------------------------------------- refused


def _refused(kernel, *args, match):
    with pytest.raises(VulkanUnsupportedError, match=match):
        kernel.forall(1)(*args)


def test_what_is_refused_says_so():
    x = np.ones(4, BF)

    @nv.jit
    def atomic(a):
        nv.atomic.add(a, 0, a[1])

    @nv.jit
    def total(a, out):
        out[0] = a.sum()

    @nv.jit
    def dot(a, out):
        out[0] = np.dot(a, a)

    @nv.jit
    def dynamic(a):
        t = nv.shared.array(0, nv.bfloat16)
        a[0] = t[0]

    @nv.jit
    def whole(a, out):
        out[:] = a + a

    @nv.jit
    def subgroup_sum(a):
        a[0] = nv.subgroup.sum(a[1])

    @nv.jit
    def empty(a):
        t = np.empty(2, nv.bfloat16)
        t[0] = 1
        a[0] = t[0]

    _refused(atomic, x, match=r"atomic.add\(array\(bfloat16, 1d, C\)")
    _refused(subgroup_sum, x, match=r"subgroup.sum\(bfloat16\)")
    _refused(empty, x, match=r"empty\(.*bfloat16")
    _refused(total, x, np.zeros(1, BF), match=r"'sum' of a bfloat16 array")
    _refused(dot, x, np.zeros(1, np.float32), match=r"'dot' of a bfloat16 array")
    _refused(dynamic, x, match=r"dynamic shared array \(shared.array\(0, dtype\)\) of bfloat16")
    _refused(whole, x, np.zeros(4, BF), match=r"an array expression on bfloat16 arrays")
    with pytest.raises(TypeError, match=r"dtype \[\('x', bfloat16\).*cannot be passed"):
        copy.forall(2)(np.zeros(2, [("x", BF), ("y", np.float32)]),
                        np.zeros(2, [("x", BF), ("y", np.float32)]))  # fmt: skip


def test_min_max_argmax_of_a_bfloat16_array_in_a_kernel():
    @nv.jit
    def k(a, out, idx):
        out[0] = a.min()
        out[1] = np.max(a)
        idx[0] = a.argmax()

    a = (np.random.default_rng(9).standard_normal(1000) * 100).astype(BF)
    out, idx = np.zeros(2, BF), np.zeros(1, np.int64)
    k.forall(1)(a, out, idx)
    assert_same(out, np.array([a.min(), a.max()], BF), "min, max")
    assert idx[0] == a.argmax()

