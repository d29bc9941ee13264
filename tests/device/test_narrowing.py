"""Integer narrowing (docs/narrowing.md) never changes a result.

The pass computes 64-bit integer ops in 32 bits only where a range analysis
proves the results identical. Each kernel here sits on an edge of that proof
(values near 2^31 and 2^32, u32 values against negative ones, products that
overflow 32 bits, loops bounded by int64 scalars, negative indices, values
observed only through truncation) and must agree bit for bit with numba.njit.
"""

import numpy as np
import pytest
from test_semantics import assert_same, both

import numba_vulkan as nv

pytestmark = [pytest.mark.device, pytest.mark.usefixtures("device")]

EDGES = np.array([0, 1, -1, 2**31 - 1, -(2**31), 2**31, 2**32 - 1, 2**32, 2**40 + 3, -(2**35)],
                 dtype=np.int64)  # fmt: skip


def int32_sum_kernel(out, a, b):
    i = nv.global_id(0)
    if i < out.size:
        out[i] = a + b + i  # int32 + int32 is int64 in Numba: 2^31 - 1 + 1 must not wrap


def test_int32_scalars_sum_past_2_31():
    out = np.zeros(8, np.int64)
    assert_same(*both(int32_sum_kernel, out, np.int32(2**31 - 1), np.int32(1)))
    assert_same(*both(int32_sum_kernel, out, np.int32(-(2**31)), np.int32(-1)))


def udiv_kernel(u, out):
    i = nv.global_id(0)
    if i < u.size:
        out[i] = u[i] // 3 + u[i] % 7 + (u[i] >> np.uint32(31))


def test_uint32_values_above_2_31_divide_unsigned():
    u = np.array([0, 1, 2**31 - 1, 2**31, 2**31 + 5, 2**32 - 1, 12345, 3 * 2**30], np.uint32)
    assert_same(*both(udiv_kernel, u, np.zeros(u.size, np.int64)))


def masked_product_kernel(x, y, out):
    i = nv.global_id(0)
    if i < x.size:
        out[i] = (x[i] & 0xFFFFF) * (y[i] & 0xFFFFF) + ((x[i] & 0xFFFF) + (y[i] & 0xFFFF))


def test_product_of_20_bit_values_keeps_64_bits():
    x = np.concatenate([EDGES, np.array([0xFFFFF, 0x7FFFF, 2**62], np.int64)])
    y = x[::-1].copy()
    assert_same(*both(masked_product_kernel, x, y, np.zeros(x.size, np.int64)))


def loop_int64_bound_kernel(out, n, big):
    i = nv.global_id(0)
    if i < out.size:
        acc = 0
        for k in range(n):
            acc += k * big + i
        out[i] = acc


def test_loop_bounded_by_int64_scalar():
    out = np.zeros(6, np.int64)
    assert_same(*both(loop_int64_bound_kernel, out, 40, 2**31))
    assert_same(*both(loop_int64_bound_kernel, out, np.int32(40), np.int32(2**31 - 1)))


def count_to_kernel(out, start, limit):
    i = nv.global_id(0)
    if i < out.size:
        k = start
        while k < limit:  # Mandelbrot's loop: k counts in 32 bits where limit travels so
            k += 1
        out[i] = k * 3 + i


@pytest.mark.parametrize("start, limit", [
    (0, 40), (2**31 - 5, 2**31 - 1), (-(2**31), -(2**31) + 3),  # int32 slots
    (2**31 - 3, 2**31 + 2), (-(2**31) - 2, -(2**31) + 1), (2**40, 2**40 + 3), (5, -(2**33)),
])
def test_int64_scalars_beyond_int32_take_the_64_bit_specialisation(start, limit):
    """Python ints (int64) travel in 32-bit slots in the 32-bit-index specialisation; a value
    beyond int32 takes the 64-bit one: every result as numba.njit's."""
    assert_same(*both(count_to_kernel, np.zeros(5, np.int64), start, limit))


def test_int64_scalar_slots_are_32_bit_where_values_fit():
    kernel = nv.jit(count_to_kernel)
    out = np.zeros(4, np.int64)
    kernel[1, 4](out, 0, 9)
    kir = kernel.inspect_kir(out, 0, 9, narrowed=True)
    assert "param start : i32" in kir and "param limit : i32" in kir
    assert "var : ptr<function, i32>" in kir and "ptr<function, i64>" not in kir  # k: 32 bits
    kernel[1, 4](out, 2**31 - 2, 2**31)
    wide = [key for key in kernel._specialisations if key[2].index64]
    assert len(wide) == 1 and len(kernel._specialisations) == 2
    np.testing.assert_array_equal(out, 2**31 * 3 + np.arange(4))
    kernel[1, 4](out, 1, 9)  # back to small values: 32-bit slots again, no new specialisation
    np.testing.assert_array_equal(out, 27 + np.arange(4))
    assert len(kernel._specialisations) == 2


def id_vs_negative_kernel(out, t):
    i = nv.global_id(0)
    if i < out.size:
        out[i] = (i > t) + 2 * (i - t < 3) + 4 * (i == t + 5)


@pytest.mark.parametrize("t", [-5, np.int32(-5), np.int64(-(2**40)), np.uint32(3), 2**33])
def test_unsigned_ids_against_negative_values(t):
    assert_same(*both(id_vs_negative_kernel, np.zeros(9, np.int64), t))


def truncated_hash_kernel(x, out):
    i = nv.global_id(0)
    if i < x.size:
        h = x[i]
        for k in range(40):
            h = h * 31 + k
        out[i] = h  # an int64 stored into an int32 array: only the low bits are observed


def test_hash_observed_through_truncation():
    x = EDGES.copy()
    assert_same(*both(truncated_hash_kernel, x, np.zeros(x.size, np.int32)))


def shift_kernel(x, s, out):
    i = nv.global_id(0)
    if i < x.size:
        c = s[i]
        out[i] = ((x[i] & 0xFFFF) << (c & 15)) + (x[i] >> (c & 31)) + ((x[i] & 7) << (c & 63))


def test_shifts_by_masked_counts():
    x = EDGES.copy()
    s = np.array([0, 1, 15, 16, 31, 32, 47, 63, 13, 5], np.int64)
    assert_same(*both(shift_kernel, x, s, np.zeros(x.size, np.int64)))


def negative_index_kernel(a, out):
    i = nv.global_id(0)
    if i < out.size:
        out[i] = a[i - out.size] + a[-1 - i]  # negative indices wrap, as in NumPy


def test_negative_indices_still_wrap():
    a = np.arange(10, dtype=np.int64) * 7
    assert_same(*both(negative_index_kernel, a, np.zeros(10, np.int64)))


def xorshift32_kernel(seeds, out):
    i = nv.global_id(0)
    if i < out.size:
        h = seeds[i]
        for _ in range(16):
            h = np.uint32(h ^ (h << np.uint32(13)))
            h = np.uint32(h ^ (h >> np.uint32(17)))
            h = np.uint32(h ^ (h << np.uint32(5)))
        out[i] = h


def test_uint32_xorshift_is_32_bit_and_exact():
    seeds = (np.arange(64, dtype=np.uint64) * 2654435761 + 7).astype(np.uint32)
    out = np.zeros_like(seeds)
    assert_same(*both(xorshift32_kernel, seeds, out))
    narrowed = nv.jit(xorshift32_kernel).inspect_kir(seeds, out, narrowed=True)
    body = [line for line in narrowed.splitlines() if "param" not in line]  # addresses are u64
    assert not [line for line in body if ": u64" in line or ": i64" in line]


def test_matmul_inner_loop_is_32_bit_and_exact():
    """The naive matmul's index math narrows completely (docs/narrowing.md) and stays exact."""

    @nv.jit
    def matmul(a, b, c):
        i = nv.global_id(0)
        j = nv.global_id(1)
        if i < c.shape[0] and j < c.shape[1]:
            acc = np.float32(0)
            for k in range(a.shape[1]):
                acc += a[i, k] * b[k, j]
            c[i, j] = acc

    rng = np.random.default_rng(5)
    a = rng.integers(-8, 8, (13, 17)).astype(np.float32)
    b = rng.integers(-8, 8, (17, 11)).astype(np.float32)
    c = np.zeros((13, 11), np.float32)
    matmul.forall(c.shape)(a, b, c)
    np.testing.assert_array_equal(c, a @ b)  # small integers: every sum is exact
    narrowed = matmul.inspect_kir(a, b, c, narrowed=True)
    assert " : i64" not in narrowed and "ptr<function, i64>" not in narrowed


def test_grid_stride_loop_keeps_no_wrap_test():
    """A grid-stride range loop over a 32-bit extent: the cursor cannot come near int64's end,
    so the range loop's wrap test (`i + step < i`, frontend/loops.py) is decided false and its
    select goes; the loop still visits every element once."""

    @nv.jit
    def scale(a, out):
        step = nv.num_groups(0) * nv.local_size(0)
        for i in range(nv.global_id(0), a.size, step):
            out[i] = a[i] * 3 + i

    a = np.arange(1000, dtype=np.int64)
    out = np.zeros_like(a)
    scale[4, 32](a, out)  # 128 invocations, about 8 elements each
    np.testing.assert_array_equal(out, a * 3 + np.arange(1000))
    narrowed = scale.inspect_kir(a, out, narrowed=True)
    assert not [line for line in narrowed.splitlines() if "select" in line and ": i64" in line]
    assert "select" in scale.inspect_kir(a, out)  # the front end's form has it
