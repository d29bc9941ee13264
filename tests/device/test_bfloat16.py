"""bfloat16 (ml_dtypes.bfloat16) in kernels and device arrays, bit for bit against ml_dtypes.

ml_dtypes is the oracle: its bfloat16 operations compute in float32 and round once to
the nearest bfloat16 (ties to even), its conversions round once from the source type.
A NaN result must be a NaN: the sign and payload of a NaN an operation creates are the
device's float32 ones (x86's default NaN is negative, most GPUs' positive), while a NaN
that is only converted or moved keeps ml_dtypes' bits. Every other result must have
ml_dtypes' bits.

- + - * / (and // % **, min, max, comparisons, unary -, abs) on 1,048,576 random
  bit-pattern pairs plus every pair of special values (zeros, subnormals, the largest
  finite, infinities, NaNs) and 16,384 additions and subtractions that are exact ties;
- conversions from float32 (1,048,576 random patterns plus ties and specials), float64
  (1,048,576: random, and the cases where a rounding through float32 would round
  twice) and int64 (1,048,576: random magnitudes of every length, ties), int32, uint64,
  int16, int8 and bool;
- storage round trips of every 16-bit pattern (16 copies each: 1,048,576 words), NumPy
  arguments, device arrays, views and scalar reads and writes;
- the math functions on all 65,536 bfloat16 values: at most 1 bfloat16 ulp from
  ml_dtypes (its float32 libm, rounded), sqrt bit for bit;
- the types of mixed operations (NumPy's promotion with ml_dtypes), NumPy's ufuncs on
  bfloat16 device arrays, numba.cuda's ``cuda.bf16`` names (hfma against the exact
  a * b + c, rounded), and what is refused.
"""

import math
import operator
import re
from fractions import Fraction
from pathlib import Path

import ml_dtypes
import numpy as np
import pytest
from conftest import requires_feature
from numba.core import types
from numba.np import numpy_support

import numba_vulkan as nv
from numba_vulkan import cuda
from numba_vulkan.errors import VulkanUnsupportedError
from numba_vulkan.typing import pipeline
from numba_vulkan.typing.bfloat16 import bfloat16 as bf16_type

BF = ml_dtypes.bfloat16

pytestmark = [pytest.mark.device, pytest.mark.usefixtures("device"),
              requires_feature("storage16")]  # fmt: skip

ALL = np.arange(1 << 16, dtype=np.uint32).astype(np.uint16).view(BF)


def _bits(x):
    return np.ascontiguousarray(x).view(np.uint16)


def _isnan(x):
    return np.isnan(np.asarray(x).astype(np.float32))


def assert_same(got, want, what, operands=()):
    """Equal bits, or both NaN (results of bfloat16, bool or other dtypes); the failure shows
    bfloat16 operands and results as their bits."""
    got, want = np.asarray(got), np.asarray(want)
    assert got.dtype == want.dtype, f"{what}: dtype {got.dtype}, NumPy's is {want.dtype}"
    if got.dtype == BF:
        ok = (_bits(got) == _bits(want)) | (_isnan(got) & _isnan(want))
    elif got.dtype.kind == "f":
        ok = (got.view(np.uint8).reshape(got.size, -1) ==
              want.view(np.uint8).reshape(want.size, -1)).all(axis=1) | (
                  np.isnan(got) & np.isnan(want))  # fmt: skip
    else:
        ok = got == want
    bad = np.nonzero(~ok.ravel())[0]
    if bad.size:

        def show(o, j):
            o = np.asarray(o).ravel()
            return hex(int(_bits(o[j : j + 1])[0])) if o.dtype == BF else o[j]

        shown = [tuple(show(o, j) for o in (*operands, got, want)) for j in bad[:5]]
        pytest.fail(f"{what}: {bad.size} of {ok.size} differ (operands, got, want): {shown}")


def _signalling(x):
    w = _bits(x)
    return (w & 0x7F80 == 0x7F80) & (w & 0x007F != 0) & (w & 0x0040 == 0)


def ulps(x, y):
    """Distance in bfloat16 steps (NaN against NaN: 0; NaN against a number: 2^16)."""

    def order(v):
        i = _bits(v).astype(np.int32)
        return np.where(i & 0x8000, 0x8000 - i, i)

    d = np.abs(order(x) - order(y))
    d[_isnan(x) & _isnan(y)] = 0
    d[_isnan(x) != _isnan(y)] = 1 << 16
    return d


def _random(rng, n):
    return rng.integers(0, 1 << 16, n, dtype=np.uint16).view(BF)


#: zeros, the smallest and largest subnormals, the smallest normal, ones, ties' neighbours,
#: the largest finite, infinity, quiet and signalling NaNs: both signs.
_SPECIAL_BITS = [0x0000, 0x0001, 0x0002, 0x007F, 0x0080, 0x0081, 0x3C00, 0x3F80, 0x3F81,
                 0x3FC0, 0x4000, 0x4040, 0x4B00, 0x4B80, 0x7F00, 0x7F7E, 0x7F7F, 0x7F80,
                 0x7FC0, 0x7F81]  # fmt: skip
SPECIALS = np.array(_SPECIAL_BITS + [b | 0x8000 for b in _SPECIAL_BITS], np.uint16).view(BF)


def _ties(rng, n):
    """Pairs whose sum or difference lies exactly halfway between two bfloat16 values: y is
    half a unit of x's last place (or three halves), of either sign."""
    x = _random(rng, n)
    x32 = x.astype(np.float32)
    x = x[np.isfinite(x32) & (np.abs(x32) >= 2.0**-120) & (np.abs(x32) < 2.0**120)]
    e = np.floor(np.log2(np.abs(x.astype(np.float64))))
    half_ulp = np.ldexp(1.0, (e - 8).astype(int))
    y = (half_ulp * rng.choice([1.0, -1.0, 3.0, -3.0], x.size)).astype(BF)
    exact = x.astype(np.float64) + y.astype(np.float64)
    tie = exact != exact.astype(BF).astype(np.float64)
    return x[tie], y[tie]


@pytest.fixture(scope="module")
def pairs():
    rng = np.random.default_rng(2016)
    a, b = _random(rng, 1 << 20), _random(rng, 1 << 20)
    sa, sb = (g.ravel() for g in np.meshgrid(SPECIALS, SPECIALS))
    ta, tb = _ties(rng, 1 << 14)
    return np.concatenate([a, sa, ta, tb]), np.concatenate([b, sb, tb, ta])


# ---------------------------------------------------------------- arithmetic


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
        out[9, i] = -x
        out[10, i] = abs(y)
        r = x
        r += y
        r *= y
        out[11, i] = r
        flags[0, i] = x == y
        flags[1, i] = x != y
        flags[2, i] = x < y
        flags[3, i] = x <= y
        flags[4, i] = x > y
        flags[5, i] = x >= y


def test_arithmetic_on_a_million_pairs_bit_for_bit(pairs):
    a, b = pairs
    assert a.size > 1_000_000
    out = np.zeros((12, a.size), BF)
    flags = np.zeros((6, a.size), np.bool_)
    _binary.forall(a.size)(out, flags, a, b)
    with np.errstate(all="ignore"):
        want = [a + b, a - b, a * b, a / b]
        for k, (w, op) in enumerate(zip(want, "+-*/")):
            assert_same(out[k], w, f"bfloat16 {op} bfloat16", (a, b))
        # floor division, remainder and power: ml_dtypes' float32 computations, rounded once
        assert_same(out[4], a // b, "bfloat16 // bfloat16", (a, b))
        assert_same(out[5], a % b, "bfloat16 % bfloat16", (a, b))
        # ** is the library's float32 pow (within 1 float32 ulp), which takes signalling NaNs
        # as quiet ones (pow(sNaN, 0) is 1, C99's value for NaN; glibc's powf gives NaN)
        d = ulps(out[6], a**b)[~(_signalling(a) | _signalling(b))]
        assert d.max() <= 1 and (d == 0).mean() > 0.999, f"**: {d.max()} ulp"
        x, y = a.astype(np.float32), b.astype(np.float32)
        # Python's min/max: the first operand unless the second is strictly beyond it
        assert_same(out[7], np.where(y < x, b, a), "min", (a, b))
        assert_same(out[8], np.where(y > x, b, a), "max", (a, b))
        assert (_bits(out[9]) == _bits(a) ^ 0x8000).all(), "unary minus flips the sign bit"
        assert (_bits(out[10]) == _bits(b) & 0x7FFF).all(), "abs clears the sign bit"
        assert_same(out[11], (a + b) * b, "in-place += and *=", (a, b))
        for k, op in enumerate((operator.eq, operator.ne, operator.lt, operator.le,
                                operator.gt, operator.ge)):  # fmt: skip
            assert_same(flags[k], op(x, y), f"comparison {op.__name__}", (a, b))
    # the pairs include exact ties (rounded to even) and subnormal results
    with np.errstate(all="ignore"):
        exact = a[: 1 << 20].astype(np.float64) * b[: 1 << 20].astype(np.float64)
    assert ((np.abs(exact) < 2.0**-126) & (exact != 0)).sum() > 1000


@nv.jit
def _chain(out, a, b):
    i = nv.global_id(0)
    if i < a.size:
        out[i] = a[i] * b[i] + a[i]  # two bfloat16 operations: two roundings


def test_each_operation_rounds_not_the_store():
    a = np.array([1.9453125, 1.03125, 1.0234375], BF)
    b = np.array([1.03125, 1.3828125, 1.0234375], BF)
    out = np.zeros(3, BF)
    _chain.forall(3)(out, a, b)
    assert_same(out, a * b + a, "a * b + a", (a, b))
    fused = (a.astype(np.float64) * b + a).astype(BF)
    assert (_bits(fused) != _bits(out)).all()  # the operands tell the two apart


# ---------------------------------------------------------------- conversions


@nv.jit
def _convert(o32, o64, oi64, oi32, ou64, oi16, oi8, obool, f32, f64, i64, i32, u64, i16, i8, b):
    i = nv.global_id(0)
    if i < f32.size:
        o32[i] = f32[i]  # stores convert to the array's dtype
        o64[i] = nv.bfloat16(f64[i])  # nv.bfloat16 is ml_dtypes.bfloat16
        oi64[i] = ml_dtypes.bfloat16(i64[i])
        oi32[i] = i32[i]
        ou64[i] = u64[i]
        oi16[i] = i16[i]
        oi8[i] = i8[i]
        obool[i] = b[i]


def _double_rounding_cases(rng, n):
    """float64 values whose rounding through float32 would round twice: the bits below
    bfloat16's last place are exactly half (with more bits below float32's last place set
    or not), or one float32 unit from half."""
    sign = rng.integers(0, 2, n).astype(np.uint64) << np.uint64(63)
    exp = rng.integers(1023 - 133, 1023 + 128, n).astype(np.uint64) << np.uint64(52)
    top = rng.integers(0, 1 << 7, n).astype(np.uint64) << np.uint64(45)
    half = np.uint64(1 << 44)
    low = rng.choice(np.array([0, 1, (1 << 29) - 1, 1 << 28, (1 << 44) - 1, (1 << 44) - (1 << 29),
                               (1 << 44) - (1 << 28)], np.uint64), n)  # fmt: skip
    below = rng.integers(0, 2, n).astype(bool)  # just below half instead
    frac = np.where(below, top | (half - np.uint64(1) - (low & (half - np.uint64(1)))),
                    top | half | low)  # fmt: skip
    return (sign | exp | frac).view(np.float64)


def _float64_operands(rng, n):
    k = n // 4
    e = rng.integers(-150, 130, n - 2 * k)
    values = rng.standard_normal(n - 2 * k) * np.exp2(e.astype(np.float64))
    raw = rng.integers(0, 1 << 63, k, dtype=np.uint64) * np.uint64(2)  # every exponent
    specials = np.array([0.0, -0.0, np.inf, -np.inf, np.nan, -np.nan, 2.0**128, 2.0**128 -
                         2.0**119, 2.0**128 - 2.0**120, 5e-324, 2.0**-133, 2.0**-134,
                         1.5 * 2.0**-134, 3.4e38, 1e300], np.float64)  # fmt: skip
    nans = (np.array([0x7FF0000000000001, 0xFFF4000000000000, 0x7FF8000000000123],
                     np.uint64)).view(np.float64)  # fmt: skip
    return np.concatenate(
        [specials, nans, values, raw.view(np.float64), _double_rounding_cases(rng, k)]
    )[:n]


def _int64_operands(rng, n):
    """Magnitudes of every bit length, both signs; ties (an odd 9-bit number shifted) and
    their neighbours; the extremes."""
    lengths = rng.integers(0, 64, n)
    mags = rng.integers(0, 1 << 63, n, dtype=np.uint64) >> (63 - lengths).astype(np.uint64)
    signs = rng.integers(0, 2, n).astype(bool)
    values = np.where(signs, -mags.astype(np.int64), mags.astype(np.int64))
    k = n // 8
    odd = (2 * rng.integers(128, 256, k) + 1).astype(np.int64)
    shifted = odd << rng.integers(0, 54, k).astype(np.int64)
    ties = np.concatenate([shifted, shifted + 1, shifted - 1, -shifted])
    extremes = np.array([0, 1, -1, 255, 256, 257, 2**63 - 1, -(2**63), -(2**63) + 1, 2**24 + 1,
                         2**60 + 2**52 + 1], np.int64)  # fmt: skip
    return np.concatenate([extremes, ties, values])[:n]


def test_conversions_round_once_as_ml_dtypes():
    rng = np.random.default_rng(64)
    n = 1 << 20
    f32 = rng.integers(0, 1 << 32, n, dtype=np.uint64).astype(np.uint32)
    ties = (rng.integers(0, 1 << 16, 4096, dtype=np.uint32) << 16) | rng.choice(
        np.array([0x8000, 0x7FFF, 0x8001, 0x0001, 0xFFFF], np.uint32), 4096
    )
    f32[:4096] = ties
    f32[4096:4104] = [0x7F7F8000, 0x7F7F7FFF, 0x7F800001, 0xFFC12345, 0x00008000, 0x00018000,
                      0x807FFFFF, 0x7FFFFFFF]  # fmt: skip
    f32 = f32.view(np.float32)
    f64 = _float64_operands(rng, n)
    i64 = _int64_operands(rng, n)
    i32 = (rng.integers(-(2**31), 2**31, n) >> rng.integers(0, 31, n)).astype(np.int32)
    u64 = rng.integers(0, 1 << 63, n, dtype=np.uint64) * np.uint64(2) + np.uint64(1)
    i16 = rng.integers(-(2**15), 2**15, n).astype(np.int16)
    i8 = rng.integers(-128, 128, n).astype(np.int8)
    b = rng.integers(0, 2, n).astype(np.bool_)
    outs = [np.zeros(n, BF) for _ in range(8)]
    _convert.forall(n)(*outs, f32, f64, i64, i32, u64, i16, i8, b)
    with np.errstate(all="ignore"):
        for out, src, what in zip(outs, (f32, f64, i64, i32, u64, i16, i8, b),
                                  ("float32", "float64", "int64", "int32", "uint64", "int16",
                                   "int8", "bool")):  # fmt: skip
            # NaNs too bit for bit: the quiet NaN of the source's sign
            want = src.astype(BF)
            bad = _bits(out) != _bits(want)
            assert not bad.any(), (
                f"{what} -> bfloat16: {bad.sum()} of {n} differ, e.g. "
                f"{src[bad][:3]} gave {out[bad][:3]}, not {want[bad][:3]}"
            )
    # the float64 operands hold cases where float32 in between would round twice
    with np.errstate(all="ignore"):
        twice = f64.astype(np.float32).astype(BF)
    assert (_bits(twice) != _bits(outs[1])).sum() > 10_000


def test_conversions_from_bfloat16():
    @nv.jit
    def from_bf16(o32, o64, oi, ob, a):
        i = nv.global_id(0)
        if i < a.size:
            o32[i] = a[i]
            o64[i] = float(a[i])
            oi[i] = int(a[i]) if a[i] == a[i] and abs(a[i]) < 2.0**62 else 0
            ob[i] = bool(a[i])

    o32, o64 = np.zeros(ALL.size, np.float32), np.zeros(ALL.size)
    oi, ob = np.zeros(ALL.size, np.int64), np.zeros(ALL.size, np.bool_)
    from_bf16.forall(ALL.size)(o32, o64, oi, ob, ALL)
    x = ALL.astype(np.float32)
    assert (o32.view(np.uint32) == x.view(np.uint32)).all(), "widening is exact, NaNs too"
    with np.errstate(all="ignore"):
        assert_same(o64, ALL.astype(np.float64), "float(bfloat16)")
    small = ~np.isnan(x) & (np.abs(x) < 2.0**62)
    assert (oi[small] == np.trunc(x[small]).astype(np.int64)).all()
    assert (ob == (x != 0)).all()


# ---------------------------------------------------------------- storage and device arrays


@nv.jit
def _copy(out, a):
    i = nv.global_id(0)
    if i < a.size:
        out[i] = a[i]


def test_storage_round_trips_every_pattern():
    words = np.tile(ALL, 16)  # 1,048,576 words, each pattern 16 times (NaN payloads too)
    out = np.zeros_like(words)
    _copy.forall(words.size)(out, words)
    assert (_bits(out) == _bits(words)).all()
    d = nv.to_device(words)
    assert d.dtype == np.dtype(BF) and d.dtype.itemsize == 2
    e = nv.device_array(words.size, dtype=BF)
    _copy.forall(words.size)(e, d)
    assert (_bits(e.copy_to_host()) == _bits(words)).all()
    # views: every other element of a device array, reversed; and a 2-d transpose
    v = nv.device_array(words.size // 2, dtype=nv.bfloat16)
    _copy.forall(v.size)(v, d[::-2])
    assert (_bits(v.copy_to_host()) == _bits(words[::-2])).all()
    grid = ALL.reshape(256, 256)
    t = nv.to_device(grid).T
    assert (_bits(t.copy_to_host()) == _bits(grid.T)).all()


def test_device_array_items_and_assignment():
    d = nv.to_device(np.arange(8).astype(BF))
    assert type(d[3]) is BF and d[3] == BF(3)
    d[3] = 0.1  # converted as NumPy converts it: rounded once from float64
    d[4:6] = np.float32(1 / 3)
    host = d.copy_to_host()
    assert _bits(host[3]) == _bits(BF(0.1))
    assert _bits(host[4]) == _bits(np.float32(1 / 3).astype(BF))
    assert host[6] == 6 and repr(d).startswith("<DeviceArray shape=(8,) dtype=bfloat16")
    assert d.min() == 0 and d.max() == 7 and type(d.max()) is BF
    with pytest.raises(NotImplementedError, match="bfloat16 device array"):
        d.sum()
    f = d.astype(np.float32).copy_to_host()
    assert (f == host.astype(np.float32)).all()
    back = nv.to_device(f.astype(np.float64) / 3).astype(BF).copy_to_host()
    assert (_bits(back) == _bits((f.astype(np.float64) / 3).astype(BF))).all()


def test_numpy_ufuncs_on_bfloat16_device_arrays():
    rng = np.random.default_rng(3)
    a, b = _random(rng, 1 << 14), _random(rng, 1 << 14)
    da, db = nv.to_device(a), nv.to_device(b)
    with np.errstate(all="ignore"):
        for got, want, what in [(da + db, a + b, "+"), (da * 2, a * 2, "* 2"),
                                (da / db, a / b, "/"), (-da, -a, "unary -"),
                                (np.sqrt(da), np.sqrt(a), "sqrt"),
                                (np.maximum(da, db), np.maximum(a, b), "maximum"),
                                (da > db, a > b, ">"),
                                (da + nv.to_device(b.astype(np.float32)),
                                 a + b.astype(np.float32), "+ float32")]:  # fmt: skip
            assert_same(got.copy_to_host(), want, f"np {what} on device arrays", (a, b))
    with pytest.raises(VulkanUnsupportedError, match="logaddexp"):
        np.logaddexp(da, db)

    @nv.vectorize([bf16_type(bf16_type, bf16_type)])
    def axpx(x, y):
        return x * y + x

    with np.errstate(all="ignore"):
        assert_same(axpx(da, db).copy_to_host(), a * b + a, "vectorize", (a, b))
        assert_same(axpx(a, b), a * b + a, "vectorize of NumPy arrays", (a, b))


def test_the_guides_example_runs():
    page = Path(__file__).resolve().parents[2] / "docs" / "arrays-in-kernels.md"
    if not page.exists():
        pytest.skip("not a source checkout")
    section = page.read_text().split("## bfloat16", 1)[1]
    block = re.search(r"```python\n(.*?)```", section, re.S).group(1)
    exec(compile(block, "arrays-in-kernels.md, bfloat16", "exec"), {"__name__": "__docs__"})


def test_scalar_arguments_and_tuples():
    @nv.jit
    def k(out, s, t):
        out[0] = s
        out[1] = s * t[0] + t[1]  # (s * t0) rounded, then + t1 rounded

    out = np.zeros(2, BF)
    s, t = BF(1.5), (BF(2.0078125), BF(0.1))
    for _ in range(2):  # a second launch, through the launcher
        k.forall(1)(out, s, t)
    assert_same(out, np.array([s, s * t[0] + t[1]], BF), "scalar arguments")


# ---------------------------------------------------------------- math functions

_MATH = ("erf", "erfc", "gamma", "lgamma")  # no ml_dtypes loops: Python's float64 ones
_UNARY = ("sqrt", "cbrt", "exp", "exp2", "expm1", "log", "log2", "log10", "log1p", "sin",
          "cos", "tan", "arcsin", "arccos", "arctan", "sinh", "cosh", "tanh", "arcsinh",
          "arccosh", "arctanh", "floor", "ceil", "trunc", "rint", "square", "reciprocal",
          "sign", "rad2deg")  # fmt: skip


def _unary_kernel():
    lines = ["def k(out, a):", "    i = nv.global_id(0)", "    if i < a.size:", "        x = a[i]"]
    lines += [f"        out[{k}, i] = np.{name}(x)" for k, name in enumerate(_UNARY)]
    lines += [f"        out[{len(_UNARY) + k}, i] = math.{name}(x)"
              for k, name in enumerate(_MATH)]  # fmt: skip
    namespace = {"nv": nv, "np": np, "math": math}
    exec("\n".join(lines), namespace)
    return nv.jit(namespace["k"])


def test_math_on_every_bfloat16_within_one_ulp():
    out = np.zeros((len(_UNARY) + len(_MATH), ALL.size), BF)
    _unary_kernel().forall(ALL.size)(out, ALL)
    x32 = ALL.astype(np.float32)
    worst = {}
    with np.errstate(all="ignore"):
        for k, name in enumerate(_UNARY):
            want = getattr(np, name)(ALL)  # ml_dtypes: the host's float32 function, rounded
            assert want.dtype == BF
            d = ulps(out[k], want)
            worst[name] = (int(d.max()), float((d == 0).mean()))
        for k, name in enumerate(_MATH, start=len(_UNARY)):
            want = np.array([_math(name, v) for v in x32.tolist()]).astype(BF)
            finite = np.isfinite(want.astype(np.float32))  # poles, overflow: C's values
            worst[name] = (int(ulps(out[k][finite], want[finite]).max()), None)
    assert all(d <= 1 for d, _ in worst.values()), sorted(worst.items())
    for name in ("sqrt", "floor", "ceil", "trunc", "rint", "square", "reciprocal", "sign"):
        assert worst[name][0] == 0, f"{name} is correctly rounded: {worst[name]}"
    assert min(share for d, share in worst.values() if share is not None) > 0.99, worst


def _math(name, v):
    try:
        return getattr(math, name)(v)
    except (ValueError, OverflowError):  # a pole, or past float64's range
        return math.nan


_BINARY = ("arctan2", "hypot", "power", "copysign", "fmod", "remainder", "floor_divide",
           "maximum", "minimum", "fmax", "fmin")  # fmt: skip


def test_binary_math_within_one_ulp():
    lines = ["def k(out, a, b):", "    i = nv.global_id(0)", "    if i < a.size:"]
    lines += [f"        out[{k}, i] = np.{name}(a[i], b[i])" for k, name in enumerate(_BINARY)]
    lines += [f"        out[{len(_BINARY)}, i] = math.atan2(a[i], b[i])"]
    namespace = {"nv": nv, "np": np, "math": math}
    exec("\n".join(lines), namespace)
    rng = np.random.default_rng(11)
    a, b = _random(rng, 1 << 16), _random(rng, 1 << 16)
    out = np.zeros((len(_BINARY) + 1, a.size), BF)
    nv.jit(namespace["k"]).forall(a.size)(out, a, b)
    quiet = ~(_signalling(a) | _signalling(b))  # glibc's powf: NaN for pow(sNaN, 0)
    with np.errstate(all="ignore"):
        for k, name in enumerate(_BINARY):
            d = ulps(out[k], getattr(np, name)(a, b))[quiet]
            exact = name not in ("arctan2", "hypot", "power")
            assert d.max() <= (0 if exact else 1), f"np.{name}: {d.max()} ulp"
        assert ulps(out[-1], np.arctan2(a, b)).max() <= 1


def _typemap(fn, argtypes):
    return pipeline.type_kernel(fn, tuple(argtypes), pipeline.Options()).typemap


def test_types_follow_numpy_with_ml_dtypes_and_numba():
    def kernel(out, x, y):
        p = x * y
        q = y / x
        c = x < y
        m = min(x, y)
        out[0] = p + q + c + m

    f32, f64 = types.float32, types.float64
    for other, want in [(bf16_type, bf16_type), (types.int8, bf16_type),
                        (types.uint8, bf16_type), (types.boolean, bf16_type),
                        (types.int16, f32), (types.uint16, f32), (types.float16, f32),
                        (f32, f32), (types.int32, f64), (types.int64, f64),
                        (types.uint64, f64), (f64, f64)]:  # fmt: skip
        # NumPy with ml_dtypes: np.promote_types(bfloat16, other)
        as_dtype = numpy_support.as_dtype
        assert np.promote_types(BF, BF if other == bf16_type else as_dtype(other)) == (
            BF if want == bf16_type else as_dtype(want)
        ), other
        tm = _typemap(kernel, (types.float64[::1], bf16_type, other))
        assert (tm["p"], tm["q"], tm["c"], tm["m"]) == (want, want, types.boolean, want), other

    def scalars(out, x, f):
        a = x * 2  # a Python int is an int64 in Numba: float64 (float32 * 2 is one too)
        b = x + 0.5  # a float64
        c = x**2  # float ** int keeps the float's type in Numba
        d = int(x)
        e = float(x)
        g = -x + abs(x)
        h = math.sqrt(x)  # math.f of a bfloat16: a bfloat16 (of a float32: a float32)
        i = np.exp(x)  # ml_dtypes' loop: bfloat16
        j = np.degrees(x)  # ml_dtypes has no bfloat16 loop: NumPy's float32 one
        k = math.floor(x)  # an int, as of a float32
        m = math.atan2(x, f)  # mixed: Numba's float32 function
        n = np.isnan(x)
        out[0] = a + b + c + d + e + g + h + i + j + k + m + n

    tm = _typemap(scalars, (types.float64[::1], bf16_type, f32))
    assert [tm[v] for v in "abcdeghijkmn"] == [f64, f64, bf16_type, types.int64, f64,
                                               bf16_type, bf16_type, bf16_type, f32,
                                               types.int64, f32, types.boolean]  # fmt: skip


def test_mixed_values_as_numpy():
    @nv.jit
    def k(o_f32, o_f64, o_bf, a, f32, f64, i8, i16, i64, f16):
        x = a[0]
        o_f32[0] = x + f32[0]
        o_f32[1] = x * i16[0]
        o_f32[2] = x - f16[0]
        o_f64[0] = x + f64[0]
        o_f64[1] = x * i64[0]
        o_bf[0] = x + i8[0]
        o_bf[1] = x * True
        o_bf[2] = x + nv.bfloat16(0.1)
        o_bf[3] = x**3

    a = np.array([1.00390625 * 3], BF)
    f32, f64 = np.array([0.1], np.float32), np.array([0.1])
    i8, i16, i64 = np.array([100], np.int8), np.array([1001], np.int16), np.array([2**40 + 1])
    f16 = np.array([0.1], np.float16)
    o_f32, o_f64, o_bf = np.zeros(3, np.float32), np.zeros(2), np.zeros(4, BF)
    k.forall(1)(o_f32, o_f64, o_bf, a, f32, f64, i8, i16, i64, f16)
    for got, want in [(o_f32[0], a + f32), (o_f32[1], a * i16), (o_f32[2], a - f16),
                      (o_f64[0], a + f64), (o_f64[1], a * i64), (o_bf[0], a + i8),
                      (o_bf[1], a * np.array([True])), (o_bf[2], a + BF(0.1)),
                      (o_bf[3], a**3)]:  # fmt: skip
        assert got.dtype == want.dtype and got == want[0], (got, want)


# ---------------------------------------------------------------- numba.cuda's cuda.bf16


def _exact_fma(a, b, c):
    """a * b + c rounded once to bfloat16, ties to even, from the exact rational value."""
    x, y, z = (v.astype(np.float64) for v in (a, b, c))
    with np.errstate(all="ignore"):
        plain = x * y + z  # x * y is exact: right for zeros, infinities and NaNs
    out = plain.astype(BF)
    limit = Fraction(2) ** 128 - Fraction(2) ** 119  # bfloat16's threshold of infinity
    for k in np.flatnonzero(np.isfinite(plain) & (plain != 0)):
        exact = Fraction(x[k]) * Fraction(y[k]) + Fraction(z[k])
        if abs(exact) >= limit:
            out[k] = BF(math.copysign(math.inf, exact))
            continue
        near = int(_bits(out[k : k + 1])[0])  # at most one step from the answer
        best = None
        for w in (near - 1, near, near + 1):
            v = float(np.array([w % (1 << 16)], np.uint16).view(BF)[0])
            if not math.isfinite(v) or (v != 0 and (v > 0) != (exact > 0)):
                continue
            key = (abs(Fraction(v) - exact), w & 1)  # the nearest; of two, the even one
            if best is None or key < best[0]:
                best = (key, v)
        out[k] = BF(math.copysign(best[1], exact))
    return out


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
    a, b, c = _random(rng, n), _random(rng, n), _random(rng, n)
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
        assert_same(out[3], _exact_fma(a, b, c), "hfma", (a, b, c))
        assert (_bits((ta * tb + tc)) != _bits(out[3][-m:])).sum() > m // 4  # traps bite
        zeros = (x == 0) & (y == 0)
        hmax = np.where(zeros, np.where(np.signbit(x) & np.signbit(y), a, np.abs(a)),
                        np.fmax(a, b))  # fmt: skip
        assert_same(out[4], hmax, "hmax", (a, b))
        nan = _isnan(a) | _isnan(b)
        assert (_bits(out[5])[nan] == 0x7FFF).all(), "hmin_nan: the canonical NaN"
        s = (a + b).astype(np.float32)
        assert_same(out[6], np.where(s > 1, 1, np.where(s > 0, s, 0)).astype(BF), "hadd_sat")
        r = x * np.float32(1.001)
        rz = r.astype(BF)
        rz = np.where(np.abs(rz.astype(np.float64)) > np.abs(r),
                      (_bits(rz) - 1).astype(np.uint16).view(BF), rz)  # fmt: skip
        assert_same(out[7], rz, "float2bfloat16_rz", (a,))
        assert (_bits(out[8]) == _bits(a)).all(), "bit casts"
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
            d = ulps(out[row], want.astype(BF))
            assert d.max() <= bound, (row, d.max())
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

    v = _int64_operands(np.random.default_rng(5), 1 << 12)
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
    assert (_bits(out[3]) == _bits(v.astype(BF))).all()


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
    def local(a):
        t = nv.local.array(4, nv.bfloat16)
        t[0] = a[0]
        a[1] = t[0]

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
    _refused(local, x, match=r"nv.local.array\(\) of bfloat16 elements")
    _refused(whole, x, np.zeros(4, BF), match=r"an array expression on bfloat16 arrays")
    with pytest.raises(TypeError, match=r"dtype \[\('x', bfloat16\).*cannot be passed"):
        _copy.forall(2)(np.zeros(2, [("x", BF), ("y", np.float32)]),
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
