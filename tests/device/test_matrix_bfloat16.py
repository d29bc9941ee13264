"""bfloat16 tiles (nv.matrix): on the matrix units where the device declares them
(VK_KHR_shader_bfloat16's shaderBFloat16CooperativeMatrix), emulated elsewhere.

Here (lavapipe) they are emulated: the kernels run against NumPy with ml_dtypes, bit for
bit. The same kernels compiled as for a device whose units hold bfloat16 tiles
(matrix_support.units_form) must be SPIR-V's bfloat16 cooperative matrices, which
SPIRV-Tools validates on any machine; on a GPU with them the same tests run on the units.
"""

import re

import numpy as np
import pytest
from matrix_support import units_form

import numba_vulkan as nv
from numba_vulkan import matrix as mx
from numba_vulkan import matrix_shapes
from numba_vulkan.errors import VulkanUnsupportedError
from numba_vulkan.runtime import matrix_probe

BF = nv.bfloat16
SG = nv.get_device().info.subgroup_size
SCALE = np.float32(1.01)


def _ints(rng, shape, dtype=BF):
    """Integers in [-4, 4] of `dtype`: every product and partial sum exact in float32."""
    return rng.integers(-4, 5, shape).astype(dtype)


@nv.jit
def tiles(a, b, c, d):
    """A from a device array, B staged through shared memory (a bfloat16 shared array of
    16-bit words), a float32 accumulator filled, multiplied, doubled element by element;
    A's share scaled element by element (each product rounded to bfloat16 in software)."""
    sb = nv.shared.array((16, 16), BF)
    for e in range(nv.subgroup.lane(), 256, nv.subgroup.size()):
        sb[e // 16, e % 16] = b[e // 16, e % 16]
    nv.barrier()
    fa = mx.fragment("a", 16, 16, BF)
    fb = mx.fragment("b", 16, 16, BF)
    acc = mx.fragment("acc", 16, 16, np.float32)
    mx.fill(acc, 0.5)
    mx.load(fa, a, 0, 0)
    mx.load(fb, sb, 0, 0)
    mx.mma(acc, fa, fb)
    for t in range(acc.length):
        acc[t] = acc[t] * 2
    for t in range(fa.length):
        fa[t] = fa[t] * SCALE
    mx.store(c, 0, 0, acc)
    mx.store(d, 0, 0, fa)


@nv.jit
def fill_and_convert(h, filled, to_bf, to_h):
    """A bfloat16 tile filled with a value bfloat16 rounds; a float16 tile converted to
    bfloat16 and back."""
    fb = mx.fragment("b", 16, 16, BF)
    fh = mx.fragment("b", 16, 16, np.float16)
    mx.fill(fb, 3.14159)
    mx.store(filled, 0, 0, fb)
    mx.load(fh, h, 0, 0)
    mx.convert(fb, fh)
    mx.store(to_bf, 0, 0, fb)
    mx.convert(fh, fb)
    mx.store(to_h, 0, 0, fh)


def _tiles_args(rng):
    z = np.zeros
    return (_ints(rng, (16, 16)), _ints(rng, (16, 16)), z((16, 16), np.float32),
            z((16, 16), BF))  # fmt: skip


def test_tiles_against_numpy():
    """Loads from device and shared memory, fill, multiply into float32, element reads and
    writes, stores: NumPy's bits (the element writes rounded as ml_dtypes rounds)."""
    a, b, c, d = _tiles_args(np.random.default_rng(1))
    tiles[1, SG](a, b, c, d)
    f32 = np.float32
    np.testing.assert_array_equal(c, 2 * (a.astype(f32) @ b.astype(f32) + f32(0.5)))
    assert d.dtype == BF
    np.testing.assert_array_equal(d.view(np.uint16), (a.astype(f32) * SCALE).astype(BF)
                                  .view(np.uint16))  # fmt: skip


def test_fill_and_convert_against_numpy():
    """Values both types hold exactly (the units' conversion is the device's: its
    rounding of other values is the device's, docs/matrix.md)."""
    h = _ints(np.random.default_rng(2), (16, 16), np.float16) * np.float16(0.25)
    filled, to_bf = np.zeros((16, 16), BF), np.zeros((16, 16), BF)
    to_h = np.zeros((16, 16), np.float16)
    fill_and_convert[1, SG](h, filled, to_bf, to_h)
    np.testing.assert_array_equal(filled.view(np.uint16), np.full((16, 16), BF(3.14159))
                                  .view(np.uint16))  # fmt: skip
    np.testing.assert_array_equal(to_bf.view(np.uint16), h.astype(BF).view(np.uint16))
    np.testing.assert_array_equal(to_h, h)


def _bfloat16_tile_types(spirv):
    """The cooperative-matrix types of SPIR-V's bfloat16 (OpTypeFloat 16 BFloat16KHR)."""
    floats = re.findall(r"(%\w+) = OpTypeFloat 16 BFloat16KHR", spirv)
    return [t for f in floats for t in re.findall(rf"(%\w+) = OpTypeCooperativeMatrixKHR {f} ",
                                                  spirv)]  # fmt: skip


def test_the_matrix_units_form_validates(monkeypatch):
    """As a device whose units hold bfloat16 tiles compiles them: bfloat16 cooperative
    matrices (the capabilities and extension of SPV_KHR_bfloat16), elements and fill
    values moved as their bits (OpBitcast), validated by SPIRV-Tools."""
    units_form(monkeypatch)
    rng = np.random.default_rng(3)
    z = np.zeros
    cases = [(tiles, _tiles_args(rng)),
             (fill_and_convert, (z((16, 16), np.float16), z((16, 16), BF), z((16, 16), BF),
                                 z((16, 16), np.float16)))]  # fmt: skip
    for kernel, args in cases:
        spirv = kernel.inspect_spirv(*args)
        assert len(_bfloat16_tile_types(spirv)) >= 1, kernel
        for needed in ("OpCapability BFloat16TypeKHR", "OpCapability BFloat16CooperativeMatrixKHR",
                       'OpExtension "SPV_KHR_bfloat16"', "OpBitcast %bfloat16"):
            assert needed in spirv, (kernel, needed)
    # The matrix units' self-test of the configuration: its B tile column-major
    shape = matrix_shapes.MatrixShape(16, 16, 16, "bfloat16", "bfloat16", "float32", "float32")
    probe_args = (z((32, 16), BF), np.asfortranarray(z((16, 16), BF)), z((16, 16), np.float32),
                  z((16, 16), np.float32), z((16, 16), np.float32).T)  # fmt: skip
    assert _bfloat16_tile_types(matrix_probe._kernel(shape).inspect_spirv(*probe_args))
    spirv = tiles.inspect_spirv(*_tiles_args(rng))
    assert "OpCooperativeMatrixMulAddKHR" in spirv
    assert re.search(r"OpBitcast %ushort", spirv)  # an element read: its bits
    assert "OpFConvert %bfloat16" not in spirv  # never the driver's rounding


def test_without_the_feature_bfloat16_tiles_are_emulated(monkeypatch):
    """A device that lists the bfloat16 configuration without shaderBFloat16Cooperative-
    Matrix: its bfloat16 kernels are emulated, its float16 ones stay on the units."""
    units_form(monkeypatch, bfloat16=False)
    rng = np.random.default_rng(4)
    assert "OpCooperativeMatrix" not in tiles.inspect_spirv(*_tiles_args(rng))

    @nv.jit
    def half(a, c):
        fa = mx.fragment("a", 16, 16, np.float16)
        fb = mx.fragment("b", 16, 16, np.float16)
        acc = mx.fragment("acc", 16, 16, np.float32)
        mx.fill(acc, 0.0)
        mx.load(fa, a, 0, 0)
        mx.load(fb, a, 0, 0)
        mx.mma(acc, fa, fb)
        mx.store(c, 0, 0, acc)
        _bfloat16_tile(c)

    with pytest.raises(VulkanUnsupportedError, match="bfloat16 tiles, which this device's "
                       "matrix units do not hold, in a device function"):
        half.inspect_spirv(np.zeros((16, 16), np.float16), np.zeros((16, 16), np.float32))


@nv.jit(device=True)
def _bfloat16_tile(c):
    fa = mx.fragment("a", 16, 16, BF)
    mx.fill(fa, 1.0)


def test_configurations_from_the_device():
    """A bfloat16 configuration the driver lists is marked emulated unless the device has
    the feature; what is on the units is what kernels use them for."""
    raw = [(16, 16, 16, 0, 0, 1, 1, 3), (16, 16, 16, 1000141000, 1000141000, 1, 1, 3)]
    off = matrix_shapes.from_device(raw)
    on = matrix_shapes.from_device(raw, bfloat16=True)
    assert [s.emulated for s in off] == [False, True] and not any(s.emulated for s in on)
    assert str(off[1]) == "16x16x16 bfloat16 x bfloat16 + float32 -> float32, emulated"
    assert matrix_shapes.on_units(on, "a", 16, 16, "bfloat16")
    assert not matrix_shapes.on_units(off, "a", 16, 16, "bfloat16")
    assert matrix_shapes.tile_accepted(off, "a", 16, 16, "bfloat16")  # accepted, emulated
