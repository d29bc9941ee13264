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

The math functions and mixed types are in test_bfloat16_math.py, ``cuda.bf16`` and the
refusals in test_bfloat16_cuda.py; what they share in bfloat16_support.py.
"""
import re
from pathlib import Path

import ml_dtypes
import numpy as np
import pytest
from bfloat16_support import (
    ALL,
    BF,
    SPECIALS,
    assert_sign_bits,
    copy,
    int64_operands,
    random_bf16,
    signalling,
)
from conftest import requires_feature
from half_support import (
    assert_binary,
    assert_bits,
    assert_same,
    float32_normal,
    flushes_float32,
    operand_pairs,
    run_binary,
    ties,
    ulps,
)
from half_support import bits as _bits

import numba_vulkan as nv
from numba_vulkan.errors import VulkanUnsupportedError
from numba_vulkan.typing.bfloat16 import bfloat16 as bf16_type

pytestmark = [pytest.mark.device, pytest.mark.usefixtures("device"),
              requires_feature("storage16")]  # fmt: skip


def _ties(rng):
    """x + y and x - y exactly halfway between two bfloat16 values."""
    return ties(rng, 1 << 14, BF, 8, 2.0**-120, 2.0**120)


@pytest.fixture(scope="module")
def pairs():
    return operand_pairs(np.random.default_rng(2016), 1 << 20, SPECIALS, _ties)


# ---------------------------------------------------------------- arithmetic


def test_arithmetic_on_a_million_pairs_bit_for_bit(pairs):
    """Every binary operation, in-place forms, min, max, unary -, abs and the comparisons
    (half_support.binary) as ml_dtypes computes them; -x and abs(y) as sign-bit operations,
    NaNs too."""
    a, b = pairs
    assert a.size > 1_000_000
    out, flags = run_binary(a, b)
    # floor division and remainder: ml_dtypes' float32 computations, rounded once
    assert_binary(out, flags, a, b, "bfloat16")
    assert_sign_bits(out, a, b)
    with np.errstate(all="ignore"):
        # ** is the library's float32 pow (within 1 float32 ulp), which takes signalling NaNs
        # as quiet ones (pow(sNaN, 0) is 1, C99's value for NaN; glibc's powf gives NaN)
        d = ulps(out[6], a**b)[~(signalling(a) | signalling(b))]
        assert d.max() <= 1 and (d == 0).mean() > 0.999, f"**: {d.max()} ulp"
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
    i64 = int64_operands(rng, n)
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
            assert_bits(out, src.astype(BF), f"{what} -> bfloat16", (src,))
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


def test_storage_round_trips_every_pattern():
    words = np.tile(ALL, 16)  # 1,048,576 words, each pattern 16 times (NaN payloads too)
    out = np.zeros_like(words)
    copy.forall(words.size)(out, words)
    assert_bits(out, words, "copied in a kernel")
    d = nv.to_device(words)
    assert d.dtype == np.dtype(BF) and d.dtype.itemsize == 2
    e = nv.device_array(words.size, dtype=BF)
    copy.forall(words.size)(e, d)
    assert_bits(e.copy_to_host(), words, "copied between device arrays")
    # views: every other element of a device array, reversed; and a 2-d transpose
    v = nv.device_array(words.size // 2, dtype=nv.bfloat16)
    copy.forall(v.size)(v, d[::-2])
    assert_bits(v.copy_to_host(), words[::-2], "copied from a reversed view")
    grid = ALL.reshape(256, 256)
    t = nv.to_device(grid).T
    assert_bits(t.copy_to_host(), grid.T, "a transposed device array")


@nv.jit
def _through_local_and_shared(out, a):
    """Each element through a local and a shared bfloat16 array (16-bit words, as device
    arrays hold them): 64 invocations per workgroup."""
    i = nv.global_id(0)
    lid = nv.local_id(0)
    staged = nv.shared.array(64, nv.bfloat16)
    own = nv.local.array(2, nv.bfloat16)
    own[1] = a[i]
    staged[63 - lid] = own[1]
    nv.barrier()
    out[i] = staged[63 - lid]


def test_local_and_shared_arrays_round_trip_every_pattern():
    out = np.zeros_like(ALL)
    _through_local_and_shared[ALL.size // 64, 64](out, ALL)
    assert_bits(out, ALL, "through a local and a shared array")


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
    assert_bits(back, (f.astype(np.float64) / 3).astype(BF), "astype(bfloat16) of float64")


def test_numpy_ufuncs_on_bfloat16_device_arrays():
    rng = np.random.default_rng(3)
    a, b = random_bf16(rng, 1 << 14), random_bf16(rng, 1 << 14)
    da, db = nv.to_device(a), nv.to_device(b)
    with np.errstate(all="ignore"):
        for got, want, what in [(da + db, a + b, "+"), (da * 2, a * 2, "* 2"),
                                (da / db, a / b, "/"), (-da, -a, "unary -"),
                                (np.sqrt(da), np.sqrt(a), "sqrt"),
                                (np.maximum(da, db), np.maximum(a, b), "maximum"),
                                (da > db, a > b, ">"),
                                (da + nv.to_device(b.astype(np.float32)),
                                 a + b.astype(np.float32), "+ float32")]:  # fmt: skip
            # A float32 result is plain float32 arithmetic, which a device may flush
            # (docs/math.md): there its subnormal operands and results are left out.
            where = True
            if what == "+ float32" and flushes_float32():
                where = float32_normal(a, b, want)
            assert_same(got.copy_to_host(), want, f"np {what} on device arrays", (a, b), where)
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


