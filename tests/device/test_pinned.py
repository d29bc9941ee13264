"""pinned_array: NumPy arrays in mapped Vulkan memory, copied with one buffer copy."""

import gc

import numpy as np
import pytest

import numba_vulkan as nv
from numba_vulkan.runtime import pinned


def test_pinned_array_is_a_numpy_array_in_device_memory():
    p = nv.pinned_array((3, 5), np.float32)
    assert type(p) is np.ndarray and p.shape == (3, 5) and p.dtype == np.float32
    assert p.flags.c_contiguous and p.flags.writeable
    assert pinned.is_pinned(p) and pinned.is_pinned(p[1:]) and pinned.is_pinned(p[2, 1:3])
    assert pinned.is_pinned(p, nv.get_device())
    assert not pinned.is_pinned(np.zeros((3, 5), np.float32))
    assert nv.runtime.mapped_array(4, np.int8).dtype == np.int8


@pytest.mark.parametrize("dtype", [np.float64, np.int32, np.uint8, np.float16, np.int64])
def test_round_trip_takes_the_direct_path(dtype, monkeypatch):
    used = []
    for name in ("copy_to_device", "copy_to_host"):
        real = getattr(pinned, name)
        monkeypatch.setattr(pinned, name, lambda a, h, wait=True, real=real, name=name: used.append(
            (name, real(a, h, wait))) or used[-1][1])  # fmt: skip
    src = nv.pinned_array(100_003, dtype)
    src[...] = np.arange(100_003) % 97
    d = nv.to_device(src)
    dst = nv.pinned_array(100_003, dtype)
    dst[...] = 0
    d.copy_to_host(out=dst)
    np.testing.assert_array_equal(dst, src)
    assert used == [("copy_to_device", True), ("copy_to_host", True)]
    # A view of pinned memory is pinned too; the offset inside the buffer is honoured.
    part = nv.device_array(1000, dtype)
    part.copy_to_device(src[5000:6000])
    np.testing.assert_array_equal(part.copy_to_host(), src[5000:6000])
    d.copy_to_host(out=dst)


def test_conversions_and_other_layouts_still_work():
    p = nv.pinned_array((4, 6), np.float64)
    p[...] = np.arange(24).reshape(4, 6)
    d = nv.to_device(p[:, ::2])  # not contiguous: the ordinary path
    np.testing.assert_array_equal(d.copy_to_host(), p[:, ::2])
    f = nv.device_array((4, 6), np.float32)
    f.copy_to_device(p)  # another dtype: converted on the host
    np.testing.assert_array_equal(f.copy_to_host(), p.astype(np.float32))
    b = nv.pinned_array(5, np.bool_)
    b[...] = [True, False, True, True, False]
    np.testing.assert_array_equal(nv.to_device(b).copy_to_host(), b)  # bool is stored as int32


def test_kernels_write_through_to_pinned_results():
    @nv.jit
    def double(x, out):
        i = nv.global_id(0)
        if i < out.size:
            out[i] = x[i] * 2

    src = nv.pinned_array(4096, np.int32)
    src[...] = np.arange(4096)
    d_in = nv.to_device(src)
    d_out = nv.device_array_like(d_in)
    double.forall(4096)(d_in, d_out)
    res = nv.pinned_array(4096, np.int32)
    d_out.copy_to_host(out=res)
    np.testing.assert_array_equal(res, np.arange(4096) * 2)


def test_memory_is_released_with_the_last_view():
    before = len(pinned._entries)
    p = nv.pinned_array(1 << 20, np.uint8)
    view = p[10:20]
    del p
    gc.collect()
    assert len(pinned._entries) == before + 1  # the view keeps it
    view[...] = 7
    del view
    gc.collect()
    assert len(pinned._entries) == before


def test_bad_arguments():
    with pytest.raises(TypeError, match="dtype"):
        nv.pinned_array(4, np.complex64)
    with pytest.raises((ValueError, TypeError)):
        nv.pinned_array(-1, np.float32)


def test_stream_copies_of_pinned_memory_are_ordered_and_complete_at_synchronize():
    @nv.jit
    def inc(x):
        i = nv.global_id(0)
        if i < x.size:
            x[i] += 1

    s = nv.stream()
    src = nv.pinned_array(50_000, np.int64)
    src[...] = np.arange(50_000)
    dst = nv.pinned_array(50_000, np.int64)
    dst[...] = -1
    d = nv.to_device(src, stream=s)  # recorded, not waited for
    inc.forall(50_000, stream=s)(d)
    d.copy_to_host(out=dst, stream=s)
    s.synchronize()
    np.testing.assert_array_equal(dst, np.arange(50_000) + 1)
