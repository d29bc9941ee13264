"""matmul(units=True) and linalg/tiles.py's kernels on cooperative matrices (the device's
matrix units, emulated exactly on lavapipe), against NumPy: float16 tiles exact on small
integers (every product and partial sum exact, so any order of summing gives NumPy's
result), bfloat16 and int8 tiles, every product variant, operands and results in place
or padded (linalg/staging.py), workgroups in bands.
"""

import dataclasses
import os

import numpy as np
import pytest

import numba_vulkan as nv
from numba_vulkan.linalg import direct, plans, staging, tiles

pytestmark = pytest.mark.usefixtures("device")


def _ints(rng, shape, top=4, dtype=np.float16):
    """Integers in [-top, top] as float16 (or `dtype`): every product and partial sum of the
    tests is exact, so any order of summing gives NumPy's result."""
    return rng.integers(-top, top + 1, shape).astype(dtype)


def _small(v):
    """Variant `v` with blocks of one tile per subgroup: the same generated code (stages,
    slab width, copies, loop and its last step, stores) with other constants, and a
    pipeline that lavapipe builds in 1 to 3 s instead of 5 to 13 (an emulated tile is a
    private array of 256 elements: lavapipe's compile time grows with their number)."""
    if v.word:  # a slab of copied words must have one per invocation at least
        return dataclasses.replace(v, name=f"{v.name}-small", bm=64, bn=64)
    return dataclasses.replace(v, name=f"{v.name}-small", bm=v.sg_m * 16, bn=v.sg_n * 16)


@pytest.fixture
def small_default(monkeypatch):
    """matmul(units=True) on the default variant's _small twin: for the float32 result
    (out= of a dtype other than float16), a second pipeline of the default that would
    cost lavapipe 7 s to build; bench_matrix.py checks that kernel on the GPU."""
    v = _small(tiles.VARIANTS[tiles.DEFAULT])
    monkeypatch.setitem(tiles.VARIANTS, v.name, v)
    monkeypatch.setattr(tiles, "DEFAULT", v.name)
    return v


@pytest.mark.parametrize("shape", [(16, 16, 16), (70, 40, 45), (128, 96, 64), (1, 17, 3),
                                   (128, 64, 256), (5, 0, 7)])
def test_units_float16_against_numpy(shape):
    """matmul(units=True): float16 on 16x16x16 tiles (the matrix units, or their emulation
    here), exact on small integers, with the default variant as it is: sides cut by the
    blocks (operands and result through padded buffers), a = 128 x 96 read in place beside
    a padded b, every side a multiple of the block (nothing padded), and k = 0."""
    m, k, n = shape
    rng = np.random.default_rng(sum(shape))
    a, b = _ints(rng, (m, k)), _ints(rng, (k, n))
    got = nv.linalg.matmul(nv.to_device(a), nv.to_device(b), units=True)
    assert got.dtype == np.float16
    np.testing.assert_array_equal(got.copy_to_host(), np.matmul(a, b))


class _Counted:
    """staging.pad or staging.unpad, its launches counted in `calls`."""

    def __init__(self, name, calls):
        self.name, self.calls, self.real = name, calls, getattr(staging, name)

    def forall(self, *args, **kwargs):
        self.calls.append(self.name)
        return self.real.forall(*args, **kwargs)


def _count_copies(monkeypatch):
    calls = []
    for name in ("pad", "unpad"):
        monkeypatch.setattr(staging, name, _Counted(name, calls))
    return calls


def test_units_aligned_operands_are_not_copied(monkeypatch):
    """Operands and float16 result of the block's sides (C-contiguous, a stack of them,
    one broadcast along it) go straight to the default kernel, which converts its sums to
    float16: no padding copy, no conversion copy."""
    calls = _count_copies(monkeypatch)
    v = tiles.VARIANTS[tiles.DEFAULT]
    rng = np.random.default_rng(5)
    a, b = _ints(rng, (3, v.bm, 2 * v.k_step)), _ints(rng, (2 * v.k_step, v.bn))
    got = nv.linalg.matmul(nv.to_device(a), nv.to_device(b), units=True)
    np.testing.assert_array_equal(got.copy_to_host(), np.matmul(a, b))
    assert calls == []


def test_units_repeated_products_go_straight_to_the_launch(monkeypatch):
    """A product of a signature seen before (shapes, strides, dtypes, the call's options)
    that the kernel takes as it is launches without planning again (linalg/direct.py):
    each call still computes its own operands into its own result (a new one, or out=),
    and an out= that is an operand is still read from a copy."""
    monkeypatch.setattr(direct, "_launches", {})
    planned = []
    real_choose = plans.choose
    monkeypatch.setattr(plans, "choose", lambda *a, **k: planned.append(1) or real_choose(*a, **k))
    v = tiles.VARIANTS[tiles.DEFAULT]
    n = v.bm  # square: an operand can be the result too
    rng = np.random.default_rng(3)
    a, b, c = (_ints(rng, (n, n)) for _ in range(3))
    da, db, dc = (nv.to_device(x) for x in (a, b, c))
    first = nv.linalg.matmul(da, db, units=True)
    assert len(planned) == 1  # planned once, the launch kept
    second = nv.linalg.matmul(db, dc, units=True)
    assert len(planned) == 1 and second is not first
    out = nv.device_array((n, n), np.float16)
    assert nv.linalg.matmul(dc, da, out=out, units=True) is out
    np.testing.assert_array_equal(first.copy_to_host(), np.matmul(a, b))
    np.testing.assert_array_equal(second.copy_to_host(), np.matmul(b, c))
    np.testing.assert_array_equal(out.copy_to_host(), np.matmul(c, a))
    nv.linalg.matmul(dc, da, out=out, units=True)
    assert len(planned) == 2  # out= is another signature, planned once
    nv.linalg.matmul(da, db, out=da, units=True)  # a @= b: the whole way, a read from a copy
    assert len(planned) == 3
    np.testing.assert_array_equal(da.copy_to_host(), np.matmul(a, b))
    assert list(direct._launches.values()).count(None) == 0 and len(direct._launches) == 2


def test_units_batched_views_and_out(small_default, monkeypatch):
    """Stacks, a transposed operand and out= of other dtypes (the float32 sums converted
    once, to out's dtype), through padded buffers and in place: a float32 out stored by
    the kernel, float64 and bfloat16 through a float32 buffer and the converting copy;
    an operand broadcast along the stack padded once."""
    v = small_default
    rng = np.random.default_rng(11)
    a, b = _ints(rng, (3, 20, 30)), _ints(rng, (10, 30))
    out = nv.device_array((3, 20, 10), np.float32)
    nv.linalg.matmul(nv.to_device(a), nv.to_device(b).T, out=out, units=True)
    np.testing.assert_array_equal(out.copy_to_host(), np.matmul(a, b.T).astype(np.float32))
    a, b = _ints(rng, (2, v.bm, v.k_step)), _ints(rng, (2, v.k_step, 2 * v.bn))
    calls = _count_copies(monkeypatch)
    for dtype in (np.float32, np.float64, nv.bfloat16):
        out = nv.device_array((2, v.bm, 2 * v.bn), dtype)
        nv.linalg.matmul(nv.to_device(a), nv.to_device(b), out=out, units=True)
        np.testing.assert_array_equal(out.copy_to_host(), np.matmul(a, b).astype(dtype))
    assert calls == ["unpad"] * 4
    b1 = _ints(rng, (v.k_step, v.bn - 1))  # padded once for the stack of two
    out = nv.device_array((2, v.bm, v.bn - 1), np.float32)
    nv.linalg.matmul(nv.to_device(a), nv.to_device(b1), out=out, units=True)
    np.testing.assert_array_equal(out.copy_to_host(), np.matmul(a, b1).astype(np.float32))
    assert calls[4:] == ["pad", "unpad", "unpad"]


#: Variants tested as they are (their pipelines build in seconds on lavapipe, or other
#: tests build them); the others as their ``_small`` twins, unless NVK_TEST_FULL_VARIANTS
#: is 1. bench_matrix.py checks every variant as it is on the GPU.
FULL_VARIANTS = {tiles.DEFAULT, "g64", "g128"}


@pytest.mark.parametrize("name", sorted(tiles.VARIANTS))
def test_units_every_variant_against_numpy(name, device, monkeypatch):
    """Each product kernel of linalg/tiles.py (the matrix units' or their emulation here),
    float16 result: blocks cut by the edges, one slab of k and several (odd and even
    counts: the two slabs of two-stage variants in both orders at the end), stacks of two
    products, a transposed operand, operands padded or read in place, the result stored
    through a buffer or in place; exact on small integers. A variant not in FULL_VARIANTS
    runs as its _small twin, as does one that needs more shared memory than the device
    has (lavapipe: 32 KiB), the full one then reported skipped with the reason."""
    v = tiles.VARIANTS[name]
    too_big = v.shared_bytes() > device.info.max_shared_memory
    if too_big or (name not in FULL_VARIANTS and
                   os.environ.get("NVK_TEST_FULL_VARIANTS") != "1"):
        v = _small(v)
        monkeypatch.setitem(tiles.VARIANTS, v.name, v)
    rng = np.random.default_rng(len(name))
    ks = v.k_step
    cases = [(2, 70, 50, 90, True), (1, 33, 7, 130, True),  # padded, b transposed
             (2, 2 * v.bm, 3 * ks, v.bn, False), (1, v.bm, 2 * ks, 2 * v.bn, False)]
    for nb, m, k, n, transposed in cases:
        a = _ints(rng, (nb, m, k), 2)  # sums within float16's integers (k <= 192)
        if transposed:
            bt = _ints(rng, (nb, n, k), 2)
            b, db = bt.transpose(0, 2, 1), nv.to_device(bt).transpose(0, 2, 1)
        else:
            b = _ints(rng, (nb, k, n), 2)
            db = nv.to_device(b)
        out = nv.device_array((nb, m, n), np.float16)
        tiles.run(nv.to_device(a), db, out, device, variant=v.name)
        np.testing.assert_array_equal(out.copy_to_host(), np.matmul(a, b))
    if too_big:
        pytest.skip(f"{name} needs {tiles.VARIANTS[name].shared_bytes()} bytes of shared "
                    f"memory, {device.info.name} has {device.info.max_shared_memory}: "
                    f"tested as {v.name}")


def test_units_column_major_operands_in_place(device, monkeypatch):
    """Operands that are the .T of C-contiguous arrays, of the block's sides, are read in
    place by the staged variants (their copies run along the columns), a and b
    column-major, into a float16 result; exact. On the default's _small twin (the same
    copies). The g variants' source is the same for every layout (column-major tile
    loads: test_matrix.py)."""
    v = _small(tiles.VARIANTS[tiles.DEFAULT])
    monkeypatch.setitem(tiles.VARIANTS, v.name, v)
    calls = _count_copies(monkeypatch)
    rng = np.random.default_rng(3)
    m, k, n = 2 * v.bm, 3 * v.k_step, v.bn
    at, bt = _ints(rng, (k, m)), _ints(rng, (n, k))
    da, db = nv.to_device(at).T, nv.to_device(bt).T
    assert da.is_f_contiguous() and not da.is_contiguous
    out = nv.device_array((1, m, n), np.float16)
    tiles.run(da[None], db[None], out, device, variant=v.name)
    np.testing.assert_array_equal(out.copy_to_host()[0], np.matmul(at.T, bt.T))
    assert calls == []


def test_units_variant_names():
    assert tiles.DEFAULT in tiles.VARIANTS
    x = nv.device_array((1, 16, 16), np.float16)
    with pytest.raises(ValueError, match="no product variant 'nope'; there are g64"):
        tiles.run(x, x, nv.device_array((1, 16, 16), np.float32), nv.get_device(),
                  variant="nope")
    big = dataclasses.replace(tiles.VARIANTS["s128k64"], name="big", bk=256)
    with pytest.raises(ValueError, match="big needs .* bytes of shared memory; .* has"):
        staging.check_shared_memory(big, nv.get_device())


def test_units_bfloat16_against_numpy(small_default, monkeypatch):
    """Two bfloat16 operands on bfloat16 x bfloat16 + float32 tiles: NumPy's float32 result
    (the float32 product of the same inputs, exact on small integers) and an out= of
    bfloat16 that float32 result rounded once (sums past 256 round: bfloat16 keeps 8
    bits); sides cut by the blocks, a stack with a transposed operand broadcast along it,
    and aligned operands read in place with a float32 result stored in place."""
    bf16 = np.dtype(nv.bfloat16)
    f32 = np.float32
    assert plans.choose(f32, nv.get_device(), True, (bf16, bf16)).operands == "bfloat16"
    assert plans.choose(f32, nv.get_device(), True, (bf16, np.float16)).family == "simt"
    v = small_default
    rng = np.random.default_rng(13)
    a, b = _ints(rng, (70, 50), dtype=bf16), _ints(rng, (50, 90), dtype=bf16)
    got = nv.linalg.matmul(nv.to_device(a), nv.to_device(b), units=True)
    assert got.dtype == np.float32 == np.matmul(a, b).dtype
    np.testing.assert_array_equal(got.copy_to_host(), a.astype(f32) @ b.astype(f32))
    a, b = _ints(rng, (3, 20, 40), dtype=bf16), _ints(rng, (10, 40), dtype=bf16)
    out = nv.device_array((3, 20, 10), bf16)
    nv.linalg.matmul(nv.to_device(a), nv.to_device(b).T, out=out, units=True)
    want = np.matmul(a.astype(f32), b.astype(f32).T).astype(bf16)
    np.testing.assert_array_equal(out.copy_to_host().view(np.uint16), want.view(np.uint16))
    calls = _count_copies(monkeypatch)
    a, b = _ints(rng, (2, v.bm, v.k_step), dtype=bf16), _ints(rng, (v.k_step, v.bn), dtype=bf16)
    got = nv.linalg.matmul(nv.to_device(a), nv.to_device(b), units=True)
    np.testing.assert_array_equal(got.copy_to_host(), np.matmul(a.astype(f32), b.astype(f32)))
    assert calls == []


def test_units_int8_against_numpy(small_default, monkeypatch):
    """Two int8 operands with ``dtype=np.int32`` on int8 x int8 + int32 tiles (16x16x32)
    (and two uint8 ones with ``dtype=np.uint32`` on uint8 tiles):
    NumPy's int32 loop bit for bit over the whole int8 range, sides cut by the blocks, a
    stack with a transposed operand broadcast along it, an out= of int64 and of int16
    (wrapping as NumPy's cast), aligned operands read in place and the result stored in
    place; without dtype= the int8 loop stays on its SIMT kernel; a variant whose slab is
    narrower than the tiles' k is refused by name."""
    i8, i32 = np.dtype(np.int8), np.dtype(np.int32)
    assert plans.choose(i32, nv.get_device(), True, (i8, i8)).operands == "int8"
    assert plans.choose(i8, nv.get_device(), True, (i8, i8)).family == "simt"
    assert plans.choose(i32, nv.get_device(), True, (i8, np.dtype(np.uint8))).family == "simt"
    v = small_default
    rng = np.random.default_rng(17)
    a, b = rng.integers(-128, 128, (70, 100), i8), rng.integers(-128, 128, (100, 50), i8)
    got = nv.linalg.matmul(nv.to_device(a), nv.to_device(b), dtype=np.int32, units=True)
    assert got.dtype == i32
    np.testing.assert_array_equal(got.copy_to_host(), np.matmul(a, b, dtype=np.int32))
    a, b = rng.integers(-128, 128, (3, 20, 40), i8), rng.integers(-128, 128, (10, 40), i8)
    for dtype in (np.int64, np.int16):
        out = nv.device_array((3, 20, 10), dtype)
        nv.linalg.matmul(nv.to_device(a), nv.to_device(b).T, out=out, dtype=np.int32,
                         units=True, casting="unsafe")
        want = np.matmul(a, b.T, dtype=np.int32).astype(dtype)
        np.testing.assert_array_equal(out.copy_to_host(), want)
    calls = _count_copies(monkeypatch)
    k = v.k_step_of("int8")
    a, b = rng.integers(-128, 128, (2, v.bm, k), i8), rng.integers(-128, 128, (k, v.bn), i8)
    got = nv.linalg.matmul(nv.to_device(a), nv.to_device(b), dtype=np.int32, units=True)
    np.testing.assert_array_equal(got.copy_to_host(), np.matmul(a, b, dtype=np.int32))
    assert calls == []
    u8 = np.dtype(np.uint8)
    assert plans.choose(np.dtype(np.uint32), nv.get_device(), True, (u8, u8)).operands == "uint8"
    a, b = rng.integers(0, 256, (40, 70), u8), rng.integers(0, 256, (70, 30), u8)
    got = nv.linalg.matmul(nv.to_device(a), nv.to_device(b), dtype=np.uint32, units=True)
    assert got.dtype == np.uint32
    np.testing.assert_array_equal(got.copy_to_host(), np.matmul(a, b, dtype=np.uint32))
    x = nv.device_array((1, 16, 32), np.int8)
    with pytest.raises(ValueError, match="s128x256 steps k by 16; tiles of int8 multiply 32"):
        tiles.run(x, x.transpose(0, 2, 1), nv.device_array((1, 16, 16), np.int32),
                  nv.get_device(), variant="s128x256", operands="int8")


def test_units_long_k_in_chunks_under_the_loop_cap(device):
    """A k longer than a device that ends loops (lavapipe) lets one launch take: the
    product in chunks of ``tiles.k_per_launch`` (each chunk's float32 or int32 sums in a
    scratch array, added in order and stored once), as NumPy computes it: float16 (its
    float16 result and an out= of float32), bfloat16 into an out= of bfloat16, int8 with
    dtype=np.int32 over the whole int8 range. And the count behind the chunks is not low:
    twice a chunk in one launch of the kernel still finishes."""
    name = tiles.choose(40, 24, device)
    K = 1000
    chunk = tiles.k_per_launch(name, K, "float16", device)
    if device.info.loop_iteration_limit:
        assert chunk < K / 2, "the test must split k"
        a, b = (nv.device_array(s, np.float16) for s in ((1, 128, 2 * chunk), (1, 2 * chunk, 128)))
        tiles.run(a, b, nv.device_array((1, 128, 128), np.float16), device, name)
        nv.synchronize()  # raises VulkanLoopLimitError where the loops were cut
    rng = np.random.default_rng(41)
    f32 = np.float32
    a, b = _ints(rng, (40, K), 1), _ints(rng, (K, 24), 1)
    da, db = nv.to_device(a), nv.to_device(b)
    np.testing.assert_array_equal(nv.linalg.matmul(da, db, units=True).copy_to_host(),
                                  np.matmul(a, b))
    out = nv.device_array((40, 24), f32)
    nv.linalg.matmul(da, db, out=out, units=True)
    np.testing.assert_array_equal(out.copy_to_host(), a.astype(f32) @ b.astype(f32))
    bf16 = np.dtype(nv.bfloat16)
    a, b = _ints(rng, (40, K), 2, bf16), _ints(rng, (K, 24), 2, bf16)
    out = nv.device_array((40, 24), bf16)
    nv.linalg.matmul(nv.to_device(a), nv.to_device(b), out=out, units=True)
    want = (a.astype(f32) @ b.astype(f32)).astype(bf16)
    np.testing.assert_array_equal(out.copy_to_host().view(np.uint16), want.view(np.uint16))
    a, b = rng.integers(-128, 128, (40, K), np.int8), rng.integers(-128, 128, (K, 24), np.int8)
    got = nv.linalg.matmul(nv.to_device(a), nv.to_device(b), dtype=np.int32, units=True)
    np.testing.assert_array_equal(got.copy_to_host(), np.matmul(a, b, dtype=np.int32))


@pytest.mark.parametrize("name", ["g64", tiles.LARGE, "s128k64"])
def test_units_int8_on_other_variants(name, device, monkeypatch):
    """The int8 kernels of variants other than the default (tiles from device memory with
    k steps of 32, a large block's and a 64-wide slab's, as _small twins where they are
    staged): NumPy's int32 loop over the int8 range, k of one step and of three, a
    transposed operand read in place."""
    v = tiles.VARIANTS[name]
    if v.staging == "shared":
        v = _small(v)
        monkeypatch.setitem(tiles.VARIANTS, v.name, v)
    rng = np.random.default_rng(len(name))
    k = v.k_step_of("int8")
    for m, kk, n in ((v.bm, k, v.bn), (v.bm + 5, 3 * k - 7, 2 * v.bn)):
        a = rng.integers(-128, 128, (1, m, kk), np.int8)
        bt = rng.integers(-128, 128, (1, n, kk), np.int8)
        out = nv.device_array((1, m, n), np.int32)
        tiles.run(nv.to_device(a), nv.to_device(bt).transpose(0, 2, 1), out, device,
                  variant=v.name, operands="int8")
        np.testing.assert_array_equal(out.copy_to_host(),
                                      np.matmul(a, bt.transpose(0, 2, 1), dtype=np.int32))


def test_units_leave_other_loops_to_their_kernel():
    a = np.arange(12, dtype=np.int32).reshape(3, 4)
    got = nv.linalg.matmul(nv.to_device(a), nv.to_device(a.T.copy()), units=True)
    np.testing.assert_array_equal(got.copy_to_host(), a @ a.T)


def test_matmul_chooses_the_large_blocks_for_large_products_on_matrix_units():
    """tiles.choose: 128 x 256 blocks where they make at least LARGE_GROUPS workgroups on
    a device with matrix units (and the shared memory for their slabs), else s128; an
    emulating device (lavapipe) always gets s128."""
    from types import SimpleNamespace

    from numba_vulkan import matrix_shapes

    def device(emulated, shared=48 * 1024):
        shapes = tuple(s._replace(emulated=emulated) for s in matrix_shapes.EMULATED)
        return SimpleNamespace(info=SimpleNamespace(matrix_shapes=shapes, max_shared_memory=shared))

    large, small = tiles.VARIANTS[tiles.LARGE], tiles.DEFAULT
    side = 128 * 16  # 8 x 16 = 128 blocks of 256 x 128: too few
    assert tiles.choose(side, side, device(False)) == small
    assert tiles.choose(2 * side, 2 * side, device(False)) == tiles.LARGE  # 512 blocks
    assert tiles.choose(2 * side, 2 * side, device(True)) == small
    assert tiles.choose(2 * side, 2 * side, device(False, large.shared_bytes() - 1)) == small


def test_units_workgroups_in_bands(device, monkeypatch):
    """A matrix-unit kernel whose workgroups take bands of rows of blocks (``swizzle``,
    staging.block_origin): bands of 4, of 2 (6 rows of blocks) and of 1 (3 rows), exact;
    the launch grid covers every block once."""
    v = dataclasses.replace(_small(tiles.VARIANTS[tiles.DEFAULT]), name="banded", swizzle=4)
    monkeypatch.setitem(tiles.VARIANTS, v.name, v)
    assert [staging.band(rows, 4) for rows in (4, 6, 3, 8)] == [4, 2, 1, 4]
    assert staging.grid(4 * v.bm, 3 * v.bn, v.bm, v.bn, 4) == (12, 1)
    rng = np.random.default_rng(9)
    for rows in (4, 6, 3):
        m, k, n = rows * v.bm - 5, 2 * v.k_step, 3 * v.bn
        a, b = _ints(rng, (1, m, k), 2), _ints(rng, (1, k, n), 2)
        out = nv.device_array((1, m, n), np.float16)
        tiles.run(nv.to_device(a), nv.to_device(b), out, device, variant=v.name)
        np.testing.assert_array_equal(out.copy_to_host(), np.matmul(a, b))
    with pytest.raises(ValueError, match="3 is not a power of 2"):
        dataclasses.replace(v, swizzle=3)


@pytest.mark.parametrize("word", [4, 8])
@pytest.mark.parametrize("operands", ["float16", "int8"])
def test_units_slabs_copied_in_words(word, operands, device, monkeypatch):
    """A variant whose row-major operands are copied a uint32 or uint64 word at a time into
    shared words (``Variant.word``; the tiles load from the words, matrix.load's packed
    form): exact against NumPy, with B row-major (packed) and transposed (its copy element
    by element beside A's words). 64 x 64 blocks: the default's _small twin has fewer words
    in a slab than the workgroup has invocations."""
    v = dataclasses.replace(tiles.VARIANTS[tiles.DEFAULT], name=f"w{word}", bm=64, bn=64,
                            word=word)
    monkeypatch.setitem(tiles.VARIANTS, v.name, v)
    dtype, out_dtype = (np.float16, np.float16) if operands == "float16" else (np.int8, np.int32)
    rng = np.random.default_rng(word)
    m, k, n = 2 * v.bm, 3 * v.k_step_of(operands), v.bn
    for transposed in (False, True):
        a = _ints(rng, (1, m, k), 2, dtype)
        bt = _ints(rng, (1, n, k), 2, dtype)
        b = bt.transpose(0, 2, 1) if transposed else np.ascontiguousarray(bt.transpose(0, 2, 1))
        db = nv.to_device(bt).transpose(0, 2, 1) if transposed else nv.to_device(b)
        out = nv.device_array((1, m, n), out_dtype)
        tiles.run(nv.to_device(a), db, out, device, variant=v.name, operands=operands)
        np.testing.assert_array_equal(out.copy_to_host(), np.matmul(a, b, dtype=out_dtype))
    with pytest.raises(ValueError, match="words of 4 or 8 bytes, for staged slabs"):
        dataclasses.replace(tiles.VARIANTS["g64"], word=8)
