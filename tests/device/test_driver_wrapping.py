"""Programs the type fuzzer found wrong on the H200 (NVIDIA's Vulkan driver), and on lavapipe.

Each kernel runs on the device and under ``numba.njit`` (test_semantics.both) and
must agree bit for bit. On NVIDIA they failed because its compiler takes
signed arithmetic as never overflowing (negation and abs of the minimum, then
a widening), divides float32 approximately (0 for divisors above 2^126) and
narrows float -> uint64 -> uint32 into a saturating conversion
(src/core/spirv/wrapping.cc says how each is emitted now; kir/int_ranges.h hides
the ranges of signed negations, abs and widenings from NVIDIA's compiler, which
these tests also run on lavapipe through NUMBA_VULKAN_HIDE_INT_RANGES); lavapipe folded
``1.0 if c else -0.0`` into +0.0 (src/core/kir/float_zeros.h). NVIDIA's 64-bit OpSDiv of a
hidden -1 gave a wrong floor quotient (signed division is now built from OpUDiv), and its
products and ands with a 0/1 value were wrong beside a division (spirv/zero_one.h). Seeds are
those of tests/fuzz/run_typefuzz.py; benchmarks/results/history.json (run
"h200 2026-11-30 18:47 typefuzz") has the original reports.
"""

import re

import numpy as np
import pytest
from conftest import requires_feature
from test_semantics import assert_same, both

import numba_vulkan as nv
from numba_vulkan import launchers

pytestmark = [pytest.mark.device, pytest.mark.usefixtures("device", "hidden_ranges")]


@pytest.fixture(params=[None, launchers.HIDE_ON_RANGE_ASSUMING_VENDORS], ids=["device_default", "ranges_hidden"])
def hidden_ranges(request, monkeypatch):
    """Each test as the device compiles by default, and with every signed range hidden
    (kir/int_ranges.h; NVIDIA's default), so that lavapipe checks the pass's results too."""
    from numba_vulkan import config

    monkeypatch.setattr(config, "HIDE_INT_RANGES", request.param)

I8 = np.array([-128, 127, -1, 0, 1, -127, 64, -64], np.int8)
I16 = np.array([-32768, 32767, -1, 0, 1, -32767, 3, -7], np.int16)
I32 = np.array([-(2**31), 2**31 - 1, -1, 0, 1, -(2**31) + 1, -672668898, 5], np.int32)
U8 = np.array([2, 6, 7, 1, 255, 0, 3, 9], np.uint8)
U32 = np.array([9, 2652847920, 12, 4125604270, 1, 0, 2**31, 7], np.uint32)
U64 = np.array([12, 13936350393130843144, 4, 9007199254740993, 1, 2**63, 3, 8], np.uint64)


def neg_widened(a_i16, a_i8, out0, out1, out2):  # seeds 709, 1956, 2400, 156
    i = nv.global_id(0)
    if i < out0.size:
        out0[i] = -a_i16[i]
        out1[i] = -a_i8[i]
        out2[i] = float(-(-a_i16[i]))


def test_negation_of_the_minimum_wraps_then_widens():
    dev, cpu = both(neg_widened, I16, I8, np.zeros(8, np.int64), np.zeros(8, np.int64),
                    np.zeros(8, np.float64))
    assert_same(dev, cpu)
    assert cpu[2][0] == -32768 and cpu[3][0] == -128  # Numba wraps in the narrow type


def abs_widened(a_i32, a_i16, a_u8, s0, out0, out1, out2):  # seeds 93, 87, 2765
    i = nv.global_id(0)
    if i < out0.size:
        out0[i] = abs(a_i32[i]) % s0
        out1[i] = np.int64(abs(a_i16[i]) > (a_u8[i] ** 1))
        out2[i] = abs(a_i32[i]) // np.uint64(a_u8[i] | 1)


def test_abs_of_the_minimum_stays_negative():
    dev, cpu = both(abs_widened, I32, I16, U8, np.uint32(4125604270), np.zeros(8, np.int64),
                    np.zeros(8, np.int64), np.zeros(8, np.int64))
    assert_same(dev, cpu)


def remainders(a_i32, a_i16, a_i8, a_u64, out0, out1, out2):  # seeds 846, 1304, 2578
    i = nv.global_id(0)
    if i < out0.size:
        out0[i] = a_i32[i] % a_i16[i]
        out1[i] = a_u64[i] % a_i8[i]
        out2[i] = a_i32[i] % a_i8[i]


def test_signed_remainder_by_the_minimum():
    dev, cpu = both(remainders, I32, I16, I8, U64, np.zeros(8, np.int64),
                    np.zeros(8, np.int64), np.zeros(8, np.int64))
    assert_same(dev, cpu)


def shift_widened(a_i8, out0, out1):  # seed 2355
    i = nv.global_id(0)
    if i < out0.size:
        out0[i] = a_i8[i] << 31
        out1[i] = np.int64(np.int32(a_i8[i] * np.int32(16777216) * np.int32(256)))


def test_shift_and_product_of_widened_narrow_values():
    dev, cpu = both(shift_widened, I8, np.zeros(8, np.int64), np.zeros(8, np.int64))
    assert_same(dev, cpu)


def float_to_u64(a_f32, a_f64, out0, out1, out2, out3):  # seeds 1429, 1458, 2339, 2631
    i = nv.global_id(0)
    if i < out0.size:
        out0[i] = np.uint32(np.uint64(a_f32[i]))
        out1[i] = np.int32(np.uint64(a_f64[i]))
        out2[i] = np.uint64(a_f32[i]) & np.uint64(7)
        out3[i] = np.int32(np.int64(-a_f64[i]))


def test_float_to_64_bit_integers_then_truncated():
    f32 = np.array([4294967296.0, 3.4680807e10, 9.223372e18, 0.0, 1.5, 2**40 + 2**20, 7.9, 1e19],
                   np.float32)
    f64 = np.array([4294967296.0, 2.0**53 + 2, 9.2e18, 0.5, 1.5, 2.0**32 - 1, 6.0e9, 2.0**63],
                   np.float64)
    f64[7] = 2.0**62  # keeps -a_f64 inside int64
    dev, cpu = both(float_to_u64, f32, f64, np.zeros(8, np.uint32), np.zeros(8, np.int32),
                    np.zeros(8, np.uint64), np.zeros(8, np.int32))
    assert_same(dev, cpu)


def divide(a_f32, b_f32, out):  # seeds 385, 1514, 2069, 1374
    i = nv.global_id(0)
    if i < out.size:
        out[i] = a_f32[i] / b_f32[i]


def test_float32_division_by_huge_divisors():
    a = np.array([3.4e38, -3.4e38, 1.0, 3.4e38, np.inf, 2.0**-126, 6.0, -0.0], np.float32)
    b = np.array([3.4e38, -3.4e38, 1.0e38, 2.0**127, np.inf, 2.0**127, 3.0, 3.4e38], np.float32)
    dev, cpu = both(divide, a, b, np.zeros(8, np.float32))
    # Vulkan allows 2.5 ulp for division; the results here must not be 0 instead of 1.
    np.testing.assert_allclose(dev[2], cpu[2], rtol=1e-6, atol=0)
    assert dev[2][0] == 1.0 and dev[2][1] == 1.0 and np.isnan(dev[2][4])
    assert np.signbit(dev[2][7]) == np.signbit(cpu[2][7])


def negative_zero_select(a_b, out32, out64):  # seed 4662 (lavapipe)
    i = nv.global_id(0)
    if i < out64.size:
        out64[i] = a_b[i] if a_b[i] else -0.0
        out32[i] = np.float32(1.0) if a_b[i] else np.float32(-0.0)


def test_negative_zero_in_a_conditional_expression():
    flags = np.array([False, True, False, True, True, False, False, True])
    dev, cpu = both(negative_zero_select, flags, np.zeros(8, np.float32), np.zeros(8, np.float64))
    assert_same(dev, cpu)
    assert np.signbit(cpu[2][0]) and np.signbit(cpu[1][0])


def to_int64s(a_f32, a_f64, out0, out1, out2, out3):
    i = nv.global_id(0)
    if i < out0.size:
        out0[i] = np.uint64(abs(a_f32[i]))
        out1[i] = np.uint64(abs(a_f64[i]))
        out2[i] = np.int64(a_f32[i] * np.float32(0.5))
        out3[i] = np.int64(a_f64[i] * 0.5)


@pytest.mark.parametrize("seed", [0, 1])
def test_float_to_64_bit_integers_exact_over_the_range(seed):
    # The two-halves conversion (wrapping.cc) against NumPy's, over every binade up to 2^64.
    rng = np.random.default_rng(seed)
    n = 4096
    exps = rng.integers(-4, 64, n)
    f64 = np.ldexp(rng.random(n) + 0.5, exps) * rng.choice([-1.0, 1.0], n)
    f64 = np.where(np.abs(f64) < 2.0**64, f64, 2.0**63)
    f32 = f64.astype(np.float32)
    f32 = np.where(np.abs(f32.astype(np.float64)) < 2.0**64, f32, np.float32(2.0**63))
    dev, cpu = both(to_int64s, f32, f64, np.zeros(n, np.uint64), np.zeros(n, np.uint64),
                    np.zeros(n, np.int64), np.zeros(n, np.int64))
    assert_same(dev, cpu)
    np.testing.assert_array_equal(cpu[5], (f64 * 0.5).astype(np.int64))  # njit agrees with NumPy


def abs_of_narrow_minimum(a_i16, a_i8, a_u8, out0, out1, out2, out3):  # seeds 3000, 855, 3877, 4908
    i = nv.global_id(0)
    if i < out0.size:
        out0[i] = abs(a_i16[i]) ^ a_u8[i]
        out1[i] = -np.uint64(abs(a_i16[i]))
        out2[i] = (1 ^ np.int64(a_u8[i])) & abs(a_i8[i])
        out3[i] = abs(a_i16[i]) | (a_i8[i] * np.int64(2147483647))


def test_abs_of_the_narrow_minimum_then_widened():
    dev, cpu = both(abs_of_narrow_minimum, I16, I8, U8, np.zeros(8, np.int64),
                    np.zeros(8, np.uint64), np.zeros(8, np.int64), np.zeros(8, np.int64))
    assert_same(dev, cpu)
    assert cpu[3][0] == -32768 ^ 2  # abs(int16(-32768)) is -32768 in Numba


def test_hidden_ranges_reach_the_compiled_kernel():
    # The pass runs where asked: the hidden parameter is in the narrowed KIR (or not).
    from numba_vulkan import config, runtime

    kernel = nv.jit(abs_of_narrow_minimum)
    args = (I16, I8, U8, np.zeros(8, np.int64), np.zeros(8, np.uint64),
            np.zeros(8, np.int64), np.zeros(8, np.int64))
    kernel[1, 8](*args)
    text = "\n".join(kernel.inspect_kir(narrowed=True).values())
    mask = launchers.hide_int_ranges(runtime.get_device().info, config.HIDE_INT_RANGES)
    assert ("int.zero" in text) == (mask != 0), text[:400]


def floordiv_by_uint32(a_b, s0, s1, out0, out1):  # seed 4686
    i = nv.global_id(0)
    if i < a_b.size:
        out0[i] = ((-1) // s0) & a_b[i]
        out1[i] = ((-7) // s1) * 3 + (-(2**40) // s1) % 5


@requires_feature("int64")
@pytest.mark.parametrize("s0, s1", [(12, 3), (1, -3), (7, -1), (2**32 - 1, 2**33 + 1), (5, -(2**40))])
def test_int64_floordiv_of_a_negative_constant_by_uint32(s0, s1):
    """Seed 4686, minimised: the H200's 64-bit OpSDiv gave ((-1) // s0) & b = 0 where
    numba.njit gives 1 (s0 = uint32 12); divisors of both signs (lavapipe was right before
    too: this guards the H200's form, spirv/arithmetic.cc)."""
    a_b = np.array([True, False, True, True])
    dev, cpu = both(floordiv_by_uint32, a_b, np.uint32(s0), np.int64(s1),
                    np.zeros(4, np.int64), np.zeros(4, np.int64))
    assert_same(dev, cpu)


def zero_one_products(a8, a32, a64, u64, s_b, out):  # seeds 1060 (row 0), 95 (row 1)
    i = nv.global_id(0)
    if i < a8.size:
        y = a8[i] if a8[i] else s_b
        out[0, i] = y * (True & a64[i])
        out[1, i] = (a32[i] == (a8[i] if a8[i] else s_b)) & ((np.uint8(8) // u64[i]) ^ (a32[i] >= a8[i]))
        out[2, i] = (a64[i] & 1) * a32[i] + a64[i] * (a32[i] < 0)
        out[3, i] = (1 if a32[i] & 2 else 0) * a64[i] - (0 if a8[i] > 3 else 1) * a32[i]
        out[4, i] = (a64[i] & 1) & a32[i] | np.int64(a8[i] & np.int8(1)) * 5
        out[5, i] = np.uint32(u64[i] & np.uint64(1)) * np.uint32(a32[i]) + (a8[i] != 0) * a8[i]
        out[6, i] = np.int64(a64[i] / 3.0 > 0) * a64[i] + (u64[i] % np.uint64(7)) * (a8[i] == 1)
        out[7, i] = y * ((a64[i] << 63) >> 63) * -1 + (-(a64[i] & 1) * a32[i]) ^ (((a64[i] << 63) >> 63) & a32[i])


@requires_feature("int64")
@pytest.mark.parametrize("s_b", [False, True])
def test_products_and_ands_with_a_zero_one_value(s_b):
    """Seeds 1060 and 95: the H200 computed `y * (1 & b)` as y * (b != 0) and `L & R` (L a
    comparison) as 0 beside 64-bit divisions; products and ands with a 0/1 integer are now
    selects (spirv/zero_one.h). Every 0/1 and 0/-1 form it recognises (a bool, a low bit, a
    conditional 1 or 0, the low bit spread by shifts, a negation), on both sides, in several
    widths."""
    rng = np.random.default_rng(1060)
    n = 256
    a8 = rng.integers(-128, 128, n, dtype=np.int8)
    a32 = rng.integers(-(2**31), 2**31, n, dtype=np.int32)
    a64 = rng.integers(-(2**63), 2**63, n, dtype=np.int64)
    u64 = rng.integers(1, 2**64, n, dtype=np.uint64)
    a8[:8], a32[:8], a64[:8] = [0, 1, -1, 3, 0, 2, -128, 127], 0, [0, 1, 2, 3, -1, -2, 2**40, -(2**63)]
    dev, cpu = both(zero_one_products, a8, a32, a64, u64, s_b, np.zeros((8, n), np.int64))
    assert_same(dev, cpu)


# control-flow fuzz seeds 2792, 4444 (NVIDIA: h200_2026-12-01_controlflow_fuzz.txt)
def doubled_comparisons(a, out):
    i = nv.global_id(0)
    if i < a.size:
        x = a[i]
        r = 0
        if (x + x) > (-3):
            r |= 1
        if 16 > (x + x):
            r |= 2
        if x * 2 > 0:
            r |= 4
        if (x << 1) >= (-3):
            r |= 8
        if x * 2 + 1 < -(2**40):
            r |= 16
        w = 0
        while w < 3 and not ((x + x) > (-3)):
            w += 1
            r += 100
        out[i] = r


@requires_feature("int64")
def test_branches_on_doubled_values_compared_with_constants():
    """The H200 took the wrong arm of `if 2 * x > c` for int64 x, as if it compared unsigned
    (every positive x with `>`, every negative one with `<`; the probe nvidia_addself.py,
    added in aa65fde and since removed), in each spelling of the doubling. The constant is
    hidden from it now (kir/int_ranges.h, kHideCompareConstants). No input overflows 2 * x:
    numba.njit folds such comparisons as LLVM's `add nsw` allows, so there it is no oracle."""
    a = np.array([0, 1, -1, 2, -2, 7, -7, 8, -8, 999, -999, 2**31, -(2**31), 2**39, -(2**39),
                  2**62 - 1, -(2**62)], np.int64)  # fmt: skip
    dev, cpu = both(doubled_comparisons, a, np.zeros(a.size, np.int64))
    assert_same(dev, cpu)
    assert len(set(cpu[1].tolist())) > 4  # the inputs take different arms


def doubled_unsigned(a, out):
    i = nv.global_id(0)
    if i < a.size:
        out[i] = 1 if a[i] * 2 > 5 else 2


@requires_feature("int64")
def test_branches_on_doubled_uint64_values_wrap():
    """uint64 too: the H200 took `a * 2 > 5` as false where the product wraps (a = 2^64 - 12:
    2^64 - 24 > 5) until its constant was hidden (h200_2026-12-01_addself.txt, round 3)."""
    a = np.arange(-12, 13, dtype=np.int64).astype(np.uint64)  # 0..12 and 2^64 - 12..2^64 - 1
    dev, cpu = both(doubled_unsigned, a, np.zeros(a.size, np.int64))
    assert_same(dev, cpu)
    assert set(cpu[1].tolist()) == {1, 2}


def test_doubled_comparisons_hide_their_constants():
    # Only with the NVIDIA mask's bit 16: the constants compared with x + x are xored with
    # the hidden zero (its parameter and conversions are in the narrowed KIR's entry).
    from numba_vulkan import config, runtime

    kernel = nv.jit(doubled_comparisons)
    kernel[1, 8](np.arange(8, dtype=np.int64), np.zeros(8, np.int64))
    text = "\n".join(kernel.inspect_kir(narrowed=True).values())
    mask = launchers.hide_int_ranges(runtime.get_device().info, config.HIDE_INT_RANGES)
    xors = set(re.findall(r"(%\d+) = xor %\d+, %\d+ : i64", text))
    compares = re.findall(r"= (?:gt|lt|ge|le) (%\d+), (%\d+) : bool", text)
    hidden = [c for c in compares if xors & set(c)]
    # five ifs and the while's test, which the front end writes at its entry and its end
    assert len(hidden) == (7 if mask & 16 else 0), text[:3000]
