"""Cooperative matrices in kernels (nv.matrix): results against NumPy's matmul.

On a device without VK_KHR_cooperative_matrix (lavapipe) the tiles are emulated over the
subgroup (frontend/matrix.py); the data are small integers, so that every product and sum
is exact and any correct implementation, emulated or matrix units, gives NumPy's bits.
"""

import numpy as np
import pytest
from matrix_support import c_copy_launcher, units_form

import numba_vulkan as nv
from numba_vulkan import matrix as mx
from numba_vulkan.errors import VulkanUnsupportedError

SG = nv.get_device().info.subgroup_size


def _operands(seed, *shapes, dtype=np.float16, lo=-4, hi=5):
    """Integers in [lo, hi) of `dtype`, an array per shape (two 16x16 by default), drawn in
    order from default_rng(seed)."""
    rng = np.random.default_rng(seed)
    return [rng.integers(lo, hi, s).astype(dtype) for s in shapes or [(16, 16), (16, 16)]]


def _matmul(a, b, dtype=np.float32):
    """NumPy's a @ b computed in `dtype` (the accumulator's)."""
    return a.astype(dtype) @ b.astype(dtype)


def _message(kernel, *args, error=Exception):
    """The message of the `error` raised by compiling `kernel` (a function) and launching it
    over one subgroup."""
    with pytest.raises(error) as info:
        nv.jit(kernel)[1, SG](*args)
    return str(info.value)


def _tiled(tiles_per_row=None):
    """c = a @ b, one 16x16 tile per subgroup (a: 16M x K, b: K x 16N, float16); the tile's
    row and column from the tiles per row of c, or from the constant `tiles_per_row`
    (NVIDIA's compiler once lost stores with an unsigned division by a non-power-of-two
    constant in an address next to a cooperative-matrix multiply)."""

    @nv.jit
    def tiled(a, b, c):
        tile = nv.group_id(0) * (nv.local_size(0) // nv.subgroup.size()) + nv.subgroup.id()
        tiles_n = c.shape[1] // 16 if tiles_per_row is None else tiles_per_row
        row = (tile // tiles_n) * 16
        col = (tile % tiles_n) * 16
        fa = mx.fragment("a", 16, 16, np.float16)
        fb = mx.fragment("b", 16, 16, np.float16)
        acc = mx.fragment("acc", 16, 16, np.float32)
        mx.fill(acc, 0)
        for k in range(0, a.shape[1], 16):
            mx.load(fa, a, row, k)
            mx.load(fb, b, k, col)
            mx.mma(acc, fa, fb)
        mx.store(c, row, col, acc)

    return tiled


tiled = _tiled()
tiled_by_three = _tiled(3)


@pytest.mark.parametrize("subgroups_per_group", [1, 4])
def test_tiles_float16_to_float32(subgroups_per_group):
    a, b = _operands(1, (32, 48), (48, 64))
    c = np.full((32, 64), np.nan, np.float32)
    tiles = (32 // 16) * (64 // 16)
    tiled[tiles // subgroups_per_group, SG * subgroups_per_group](a, b, c)
    np.testing.assert_array_equal(c, _matmul(a, b))


def test_transposed_operand_and_views():
    """b given as a column-major view (b_t.T): the array's own strides place the tile."""
    a, b_t = _operands(2, (16, 32), (16, 32))
    c = np.zeros((16, 16), np.float32)
    tiled[1, SG](a, nv.to_device(b_t).T, c)
    np.testing.assert_array_equal(c, _matmul(a, b_t.T))


@nv.jit
def half_accumulator(a, b, c):
    fa = mx.fragment("a", 16, 16, np.float16)
    fb = mx.fragment("b", 16, 16, np.float16)
    acc = mx.fragment("acc", 16, 16, np.float16)
    mx.load(acc, c, 0, 0)
    mx.load(fa, a, 0, 0)
    mx.load(fb, b, 0, 0)
    mx.mma(acc, fa, fb)
    mx.store(c, 0, 0, acc)


def test_float16_accumulator():
    a, b, c0 = _operands(3, (16, 16), (16, 16), (16, 16))
    c = c0.copy()
    half_accumulator[1, SG](a, b, c)
    expected = (_matmul(a, b) + c0).astype(np.float16)
    np.testing.assert_array_equal(c, expected)


@nv.jit
def int8_tiles(a, b, c):
    fa = mx.fragment("a", 16, 32, np.int8)
    fb = mx.fragment("b", 32, 8, np.int8)
    acc = mx.fragment("acc", 16, 8, np.int32)
    mx.fill(acc, 7)
    mx.load(fa, a, 0, 0)
    mx.load(fb, b, 0, 0)
    mx.mma(acc, fa, fb)
    mx.store(c, 0, 0, acc)


def test_int8_to_int32_16x8x32():
    a, b = _operands(4, (16, 32), (32, 8), dtype=np.int8, lo=-128, hi=128)
    c = np.zeros((16, 8), np.int32)
    int8_tiles[1, SG](a, b, c)
    np.testing.assert_array_equal(c, _matmul(a, b, np.int32) + 7)


@nv.jit
def elementwise(a, b, c, h):
    """ReLU of 2 * (a @ b), written element by element, then converted to float16; the
    a tile is negated element by element before the multiply (made whole first)."""
    fa = mx.fragment("a", 16, 16, np.float16)
    fb = mx.fragment("b", 16, 16, np.float16)
    acc = mx.fragment("acc", 16, 16, np.float32)
    half = mx.fragment("acc", 16, 16, np.float16)
    mx.load(fa, a, 0, 0)
    for t in range(fa.length):
        fa[t] = -fa[t]
    mx.load(fb, b, 0, 0)
    mx.fill(acc, 0.0)
    mx.mma(acc, fa, fb)
    for t in range(acc.length):
        acc[t] = max(acc[t] * 2, 0)
    mx.store(c, 0, 0, acc)
    mx.convert(half, acc)
    mx.store(h, 0, 0, half)


def test_elementwise_and_convert():
    a, b = _operands(5)
    c = np.zeros((16, 16), np.float32)
    h = np.zeros((16, 16), np.float16)
    elementwise[1, SG](a, b, c, h)
    expected = np.maximum(2 * _matmul(-a, b), 0)
    np.testing.assert_array_equal(c, expected)
    np.testing.assert_array_equal(h, expected.astype(np.float16))


@nv.jit
def through_shared(a, b, c):
    """The tiles staged in shared memory by the whole subgroup, then loaded from there."""
    sa = nv.shared.array((16, 16), np.float16)
    sb = nv.shared.array((16, 16), np.float16)
    lane = nv.subgroup.lane()
    for e in range(lane, 256, nv.subgroup.size()):
        sa[e // 16, e % 16] = a[e // 16, e % 16]
        sb[e // 16, e % 16] = b[e // 16, e % 16]
    nv.barrier()
    fa = mx.fragment("a", 16, 16, np.float16)
    fb = mx.fragment("b", 16, 16, np.float16)
    acc = mx.fragment("acc", 16, 16, np.float32)
    mx.fill(acc, 1.5)
    mx.load(fa, sa, 0, 0)
    mx.load(fb, sb, 0, 0)
    mx.mma(acc, fa, fb)
    mx.store(c, 0, 0, acc)


def test_load_from_shared_memory():
    a, b = _operands(6)
    c = np.zeros((16, 16), np.float32)
    through_shared[1, SG](a, b, c)
    np.testing.assert_array_equal(c, _matmul(a, b) + 1.5)


def test_length_is_the_share_of_each_invocation():
    @nv.jit
    def length(out):
        acc = mx.fragment("acc", 16, 8, np.float32)
        out[nv.global_id(0)] = acc.length

    out = np.zeros(SG, np.int64)
    length[1, SG](out)
    np.testing.assert_array_equal(out, 16 * 8 // SG)


def test_shapes_query():
    shapes = nv.matrix.shapes()
    if not nv.get_device().info.matrix_shapes:
        assert all(s.emulated for s in shapes)
    assert any((s.m, s.n, s.k, s.a, s.c) == (16, 16, 16, "float16", "float32") for s in shapes)
    assert any(str(s).startswith("16x16x16 float16 x float16 + float32 -> float32")
               for s in shapes)


def test_a_configuration_the_device_lacks_is_refused_with_the_list():
    """Each tile exists in some configuration, their multiply in none."""

    def mixed(a, c):
        fa = mx.fragment("a", 16, 16, np.float16)
        fb = mx.fragment("b", 16, 8, np.float16)
        acc = mx.fragment("acc", 16, 8, np.uint32)
        mx.load(fa, a, 0, 0)
        mx.load(fb, a, 0, 0)
        mx.mma(acc, fa, fb)
        mx.store(c, 0, 0, acc)

    message = _message(mixed, np.zeros((16, 16), np.float16), np.zeros((16, 8), np.uint32),
                       error=VulkanUnsupportedError)  # fmt: skip
    assert "16x8x16 float16 x float16 + uint32" in message
    assert "16x16x16 float16 x float16 + float32 -> float32" in message
    assert "test_matrix.py" in message  # the line of the call


def test_a_tile_no_configuration_has_is_refused_where_it_is_made():
    def small(c):
        acc = mx.fragment("acc", 8, 8, np.float32)
        mx.fill(acc, 1.0)
        mx.store(c, 0, 0, acc)

    message = _message(small, np.zeros((8, 8), np.float32), error=VulkanUnsupportedError)
    assert "matrix.fragment('acc', 8, 8, float32): no configuration" in message
    assert "16x8x8 float16 x float16 + float32 -> float32" in message
    assert "test_matrix.py" in message


@nv.jit(device=True)
def _store_twice(tile, c):
    for t in range(tile.length):
        tile[t] = tile[t] * 2
    mx.store(c, 0, 0, tile)


def test_a_tile_passed_to_a_device_function():
    @nv.jit
    def kernel(c):
        acc = mx.fragment("acc", 16, 16, np.float32)
        mx.fill(acc, 1.5)
        _store_twice(acc, c)

    c = np.zeros((16, 16), np.float32)
    kernel[1, SG](c)
    np.testing.assert_array_equal(c, 3.0)


def test_typing_errors_name_the_problem():
    z16 = np.zeros((16, 16), np.float16)

    def chain(a):
        fa = mx.fragment("a", 16, 16, np.float16)
        fb = mx.fragment("b", 8, 16, np.float16)
        acc = mx.fragment("acc", 16, 16, np.float32)
        mx.mma(acc, fa, fb)

    assert "shapes do not chain" in _message(chain, z16)

    def order(a):
        fa = mx.fragment("a", 16, 16, np.float16)
        fb = mx.fragment("b", 16, 16, np.float16)
        acc = mx.fragment("acc", 16, 16, np.float32)
        mx.mma(fa, fb, acc)

    assert "in this order" in _message(order, z16)

    def dtype(a):
        acc = mx.fragment("acc", 16, 16, np.float32)
        mx.load(acc, a, 0, 0)

    assert "is not the tile's" in _message(dtype, z16)

    def use(a):
        mx.fragment("c", 16, 16, np.float32)

    assert "'a', 'b' or 'acc'" in _message(use, z16)


def test_a_fragment_variable_holds_one_tile():
    def two(a, flag):
        if flag:
            acc = mx.fragment("acc", 16, 16, np.float32)
        else:
            acc = mx.fragment("acc", 16, 16, np.float32)
        mx.fill(acc, 0)
        mx.store(a, 0, 0, acc)

    message = _message(two, np.zeros((16, 16), np.float32), 1)
    assert "matrix fragments" in message


def test_tile_addresses_from_a_division_by_three():
    a, b = _operands(7, (64, 32), (32, 48))
    c = np.full((64, 48), np.nan, np.float32)
    tiled_by_three[12, SG](a, b, c)
    np.testing.assert_array_equal(c, _matmul(a, b))


def test_the_matrix_units_form_validates(monkeypatch):
    """The kernels above as a device with cooperative matrices gets them (OpTypeCooperative-
    MatrixKHR, the Vulkan memory model): compiled and checked by SPIRV-Tools on any machine."""
    units_form(monkeypatch)
    z = np.zeros
    cases = [
        (tiled, (z((32, 48), np.float16), z((48, 64), np.float16), z((32, 64), np.float32))),
        (half_accumulator, (z((16, 16), np.float16),) * 3),
        (int8_tiles, (z((16, 32), np.int8), z((32, 8), np.int8), z((16, 8), np.int32))),
        (elementwise, (z((16, 16), np.float16), z((16, 16), np.float16),
                       z((16, 16), np.float32), z((16, 16), np.float16))),
        (through_shared, (z((16, 16), np.float16),) * 2 + (z((16, 16), np.float32),)),
    ]
    for kernel, args in cases:
        spirv = kernel.inspect_spirv(*args)
        assert "OpCooperativeMatrixMulAddKHR" in spirv and "OpMemoryModel PhysicalStorageBuffer64 Vulkan" in spirv
    # A strided view's layout is only known at run time: that kernel is emulated
    view = nv.to_device(z((32, 32), np.float16))[::2].T
    spirv = tiled.inspect_spirv(z((16, 32), np.float16), view, z((16, 16), np.float32))
    assert "OpCooperativeMatrix" not in spirv
    # A transposed C array is F-contiguous (typed 'F'): column-major tiles on the units
    f_array = nv.to_device(z((16, 32), np.float16)).T
    spirv = tiled.inspect_spirv(z((16, 32), np.float16), f_array, z((16, 16), np.float32))
    assert "OpCooperativeMatrixMulAddKHR" in spirv


def test_launchers_of_layout_bound_kernels_refuse_other_layouts():
    """A kernel on matrix units is specialised for its arrays' layouts; its fast launcher
    (require_layouts) must leave an array of another layout to the typed path, which
    compiles another specialisation, instead of reading it with the wrong strides."""

    launcher, x, y = c_copy_launcher()
    launcher.require_layouts(["C", "C"])
    assert launcher.launch((1, 1, 1), (4, 1, 1), (x, y))
    transposed = nv.to_device(np.arange(12, dtype=np.float32).reshape(4, 3)).T
    assert not launcher.launch((1, 1, 1), (4, 1, 1), (transposed, y))
    with pytest.raises(ValueError, match="takes no layout"):
        launcher.require_layouts(["A", None])


@nv.jit(device=True)
def _negate(tile):
    for t in range(tile.length):
        tile[t] = -tile[t]


def test_elements_written_in_a_device_function_reach_the_multiply():
    @nv.jit
    def kernel(a, b, c):
        fa = mx.fragment("a", 16, 16, np.float16)
        fb = mx.fragment("b", 16, 16, np.float16)
        acc = mx.fragment("acc", 16, 16, np.float32)
        mx.load(fa, a, 0, 0)
        _negate(fa)
        mx.load(fb, b, 0, 0)
        mx.fill(acc, 0.0)
        for k in range(2):  # the second pass multiplies the tile negated again
            mx.mma(acc, fa, fb)
            _negate(fa)
        mx.store(c, 0, 0, acc)

    a, b = _operands(8)
    c = np.full((16, 16), np.nan, np.float32)
    kernel[1, SG](a, b, c)
    np.testing.assert_array_equal(c, np.zeros((16, 16), np.float32))  # -ab + ab
    mx_once = np.full((16, 16), np.nan, np.float32)

    @nv.jit
    def once(a, b, c):
        fa = mx.fragment("a", 16, 16, np.float16)
        fb = mx.fragment("b", 16, 16, np.float16)
        acc = mx.fragment("acc", 16, 16, np.float32)
        mx.load(fa, a, 0, 0)
        _negate(fa)
        mx.load(fb, b, 0, 0)
        mx.fill(acc, 0.0)
        mx.mma(acc, fa, fb)
        mx.store(c, 0, 0, acc)

    once[1, SG](a, b, mx_once)
    np.testing.assert_array_equal(mx_once, -_matmul(a, b))


def test_tuples_of_tiles_are_refused_by_name():
    def tup(a):
        t = mx.fragment("acc", 16, 16, np.float32)
        u = (t, 1)
        mx.store(a, 0, 0, u[0])

    message = _message(tup, np.zeros((16, 16), np.float32))
    assert "tuples holding matrix fragments" in message and "test_matrix.py" in message


@nv.jit
def uint8_tiles(a, b, c, start):
    fa = mx.fragment("a", 16, 32, np.uint8)
    fb = mx.fragment("b", 32, 16, np.uint8)
    acc = mx.fragment("acc", 16, 16, np.uint32)
    mx.fill(acc, start)
    mx.load(fa, a, 0, 0)
    mx.load(fb, b, 0, 0)
    mx.mma(acc, fa, fb)
    mx.store(c, 0, 0, acc)


def test_uint8_to_uint32_wraps_as_numpy():
    """Sums past 2^32 wrap at the accumulator's width, as NumPy's uint32 matmul (and the
    matrix units) do; every bit compared."""
    a, b = _operands(9, (16, 32), (32, 16), dtype=np.uint8, lo=0, hi=256)
    start = np.uint32(2**32 - 500_000)
    c = np.zeros((16, 16), np.uint32)
    uint8_tiles[1, SG](a, b, c, start)
    with np.errstate(over="ignore"):
        want = _matmul(a, b, np.uint32) + start
    assert (want < start).any()  # some sums did wrap
    np.testing.assert_array_equal(c, want)


@nv.jit(device=True)
def _load_and_store(src, dst):
    tile = mx.fragment("acc", 16, 16, np.float32)
    mx.load(tile, src, 0, 0)
    mx.store(dst, 0, 0, tile)


def test_views_in_device_functions_of_a_units_kernel_are_refused(monkeypatch):
    """The kernel is on the units (its own arrays are contiguous) but a device function
    loads a tile of a strided view: refused by name, never read with wrong strides."""
    units_form(monkeypatch)

    @nv.jit
    def kernel(a, c):
        acc = mx.fragment("acc", 16, 16, np.float32)  # a tile of the kernel's own
        mx.fill(acc, 0.0)
        mx.store(c, 0, 0, acc)
        _load_and_store(a[:, :16], c)

    with pytest.raises(VulkanUnsupportedError, match="layout 'A' in a device function"):
        kernel.inspect_spirv(np.zeros((16, 32), np.float32), np.zeros((16, 16), np.float32))
