"""Tiles loaded from the uint32 or uint64 words their 8- and 16-bit elements are packed in
(``matrix.load(tile, words, row, col)``, frontend/matrix.py): every float16 bit pattern,
every finite bfloat16, every int8 and uint8 value, against the arrays they were packed
from; the matrix units' form checked by SPIRV-Tools; the refusals.

On lavapipe the tiles are emulated: the load takes each element out of its word in
software (frontend/float16.py's ``widen`` for float16), which is what these tests check bit
for bit. On the units the driver reads the words' bytes (bench_matrix.py's packed
variants check the products on the GPU)."""

import numpy as np
import pytest
from matrix_support import units_form

import numba_vulkan as nv
from numba_vulkan import bfloat16_host
from numba_vulkan import matrix as mx

pytestmark = [pytest.mark.device, pytest.mark.usefixtures("device")]

SG = nv.get_device().info.subgroup_size
WORDS = [np.uint32, np.uint64]


@nv.jit
def half_tiles(words, out):
    """Tile g of the rows of `out` (16 x 16 float16 each) loaded from `words` into a float16
    accumulator tile and stored as it is: one workgroup per tile."""
    row = nv.group_id(0) * 16
    t = mx.fragment("acc", 16, 16, np.float16)
    mx.load(t, words, row, 0)
    mx.store(out, row, 0, t)


@pytest.mark.parametrize("word", WORDS)
def test_every_float16_bit_pattern(word):
    """All 65,536 float16 words: zeros of both signs, subnormals, normals, infinities
    and NaNs come out as they went in (a NaN as a NaN)."""
    halves = np.arange(1 << 16, dtype=np.uint16).view(np.float16).reshape(-1, 16)
    out = np.zeros_like(halves)
    half_tiles[halves.shape[0] // 16, SG](halves.view(word), out)
    nan = np.isnan(halves)
    assert np.array_equal(np.isnan(out), nan)
    np.testing.assert_array_equal(out.view(np.uint16)[~nan], halves.view(np.uint16)[~nan])


def _through_identity(dtype, acc, k):
    @nv.jit
    def identity_product(words, eye, out):
        """out = a @ I for tile g of a (16 x k, packed in `words`): its elements exactly."""
        row = nv.group_id(0) * 16
        fa = mx.fragment("a", 16, k, dtype)
        fb = mx.fragment("b", k, 16, dtype)
        c = mx.fragment("acc", 16, 16, acc)
        mx.fill(c, 0)
        mx.load(fa, words, row, 0)
        mx.load(fb, eye, 0, 0)
        mx.mma(c, fa, fb)
        mx.store(out, row, 0, c)

    return identity_product


@pytest.mark.parametrize("word", WORDS)
def test_every_finite_bfloat16(word):
    """The 65,024 finite bfloat16 values, 16 x 16 tiles of them through the product with I
    (x * 1 plus zeros is x exactly in the float32 sums)."""
    bf16 = np.dtype(bfloat16_host.scalar_type())
    bits = np.arange(1 << 16, dtype=np.uint16)
    finite = bits[(bits & 0x7F80) != 0x7F80]
    a = np.zeros((-(-finite.size // 256) * 16, 16), np.uint16)
    a.ravel()[:finite.size] = finite
    a = a.view(bf16)
    eye = np.eye(16).astype(bf16)
    out = np.zeros(a.shape, np.float32)
    kernel = _through_identity(bfloat16_host.scalar_type(), np.float32, 16)
    kernel[a.shape[0] // 16, SG](a.view(word), eye, out)
    np.testing.assert_array_equal(out, a.astype(np.float32))  # -0.0 sums to +0.0


@pytest.mark.parametrize("word", WORDS)
@pytest.mark.parametrize("dtype, acc", [(np.int8, np.int32), (np.uint8, np.uint32)])
def test_every_8_bit_value(word, dtype, acc):
    """The 256 values of int8 (sign-extended) and uint8, 16 x 32 tiles through I."""
    a = np.arange(512).astype(np.uint8).view(dtype).reshape(16, 32)
    out = np.zeros((16, 16), acc)
    eye = np.eye(32, 16).astype(dtype)
    _through_identity(dtype, acc, 32)[1, SG](a.view(word), eye, out)
    np.testing.assert_array_equal(out, a[:, :16].astype(acc))


@nv.jit
def packed_from_shared(a, b, c):
    """A's tile copied a uint32 word at a time through shared memory (rows of 8 words and a
    pad of 4: 16-byte aligned), B's tile from uint64 words in device memory."""
    sa = nv.shared.array((16, 12), np.uint32)
    i = nv.local_id(0)
    if i < 16:
        for j in range(8):
            sa[i, j] = a[i, j]
    nv.barrier()
    fa = mx.fragment("a", 16, 16, np.float16)
    fb = mx.fragment("b", 16, 16, np.float16)
    f = mx.fragment("acc", 16, 16, np.float32)
    mx.fill(f, 0)
    mx.load(fa, sa, 0, 0)
    mx.load(fb, b, 0, 0)
    mx.mma(f, fa, fb)
    mx.store(c, 0, 0, f)


def _small_ints(seed, shape):
    return np.random.default_rng(seed).integers(-4, 5, shape).astype(np.float16)


def test_packed_tiles_through_shared_memory():
    a, b = _small_ints(1, (16, 16)), _small_ints(2, (16, 16))
    c = np.zeros((16, 16), np.float32)
    packed_from_shared[1, max(SG, 16)](a.view(np.uint32), b.view(np.uint64), c)
    np.testing.assert_array_equal(c, a.astype(np.float32) @ b.astype(np.float32))


def test_the_matrix_units_form_validates(monkeypatch):
    """On matrix units a packed load is OpCooperativeMatrixLoadKHR through a pointer to the
    word, its stride in words (SPIRV-Tools checks the module)."""
    units_form(monkeypatch)
    z = np.zeros
    spirv = packed_from_shared.inspect_spirv(z((16, 8), np.uint32), z((16, 4), np.uint64),
                                             z((16, 16), np.float32))
    loads = [line for line in spirv.splitlines() if "OpCooperativeMatrixLoadKHR" in line]
    assert len(loads) == 2 and "Aligned 8" in loads[1]


def test_refusals_name_the_problem():
    def load_from(words, dtype=np.float16):
        @nv.jit
        def kernel(w):
            t = mx.fragment("a", 16, 16, dtype)
            mx.load(t, w, 0, 0)

        with pytest.raises(Exception) as info:
            kernel[1, SG](words)
        return str(info.value)

    words = nv.to_device(np.zeros((16, 16), np.uint32))
    assert "row-major arrays, not from an F-contiguous array of uint32" in load_from(words.T)
    assert "or uint32/uint64 words it is packed in" in load_from(np.zeros((16, 8), np.int32))
    assert "the array's dtype uint64 is not the tile's float32" in load_from(
        np.zeros((16, 8), np.uint64), np.float32)
