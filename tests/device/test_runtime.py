"""The Vulkan runtime on a real device (lavapipe in CI)."""

import importlib.util
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from _spirv_kernels import required as _kernels

from numba_vulkan import runtime as rt
from numba_vulkan.errors import VulkanSupportError

# Where numba_vulkan is imported from (src/ in a dev tree, site-packages when installed),
# so that subprocesses import the same build.
SRC = str(Path(importlib.util.find_spec("numba_vulkan").origin).resolve().parents[1])

ALL_DTYPES = [
    np.bool_,
    np.int8,
    np.uint8,
    np.int16,
    np.uint16,
    np.int32,
    np.uint32,
    np.int64,
    np.uint64,
    np.float16,
    np.float32,
    np.float64,
]


def _values(shape, dtype, seed=0):
    rng = np.random.default_rng(seed)
    dtype = np.dtype(dtype)
    if dtype.kind == "b":
        return rng.integers(0, 2, shape).astype(bool)
    if dtype.kind in "iu":
        info = np.iinfo(dtype)
        return rng.integers(max(info.min, -1000), min(info.max, 1000), shape).astype(dtype)
    return rng.standard_normal(shape).astype(dtype)


# ---- devices ---------------------------------------------------------------------------


def test_list_devices_and_info_fields(device):
    infos = rt.list_devices()
    assert infos and all(isinstance(i, rt.DeviceInfo) for i in infos)
    assert [i.index for i in infos] == list(range(len(infos)))
    assert rt.list_devices(refresh=True)[0].name == infos[0].name
    info = device.info
    assert info.kind in {"discrete", "integrated", "virtual", "cpu", "other"}
    assert isinstance(info.handle, int) and info.handle != 0
    assert len(info.max_local_size) == 3 and len(info.max_groups) == 3
    assert info.max_local_invocations >= 128
    assert info.max_shared_memory >= 16384
    assert info.subgroup_size >= 1
    assert info.api_version >= (1, 2, 0)
    if "llvmpipe" in info.name:  # lavapipe's known facts
        assert info.kind == "cpu"
        assert info.float64 and info.int64 and info.int16 and info.int8
        assert info.storage8 and info.storage16 and info.float16
        assert info.subgroup_size == 8
        assert info.subgroup_basic and info.subgroup_ballot and info.subgroup_arithmetic
        assert 32 in info.nan_preserve
        assert info.timestamp_bits > 0


def test_get_device_forms(device):
    info = device.info
    assert rt.get_device() is device
    assert rt.get_device(info.index) is device
    assert rt.get_device(str(info.index)) is device
    assert rt.get_device(info) is device
    assert rt.get_device(device) is device
    assert rt.get_device(info.name[:4].upper()) is device
    assert device.mode.ints is False  # Numba semantics by default: int64 stays int64
    assert device.mode.floats is (not info.float64)
    assert device.handle and device.queue


def test_get_device_errors_list_the_devices(device):
    with pytest.raises(ValueError, match="available devices: 0:"):
        rt.get_device(99)
    with pytest.raises(ValueError, match="no Vulkan device's name contains"):
        rt.get_device("no-such-gpu-xyz")
    with pytest.raises(TypeError, match="available devices"):
        rt.get_device(1.5)
    with pytest.raises(TypeError):
        rt.get_device(True)


def test_select_device(device):
    assert rt.select_device(0) is rt.get_device(0)
    assert rt.get_device() is rt.get_device(0)


def test_check_support(device):
    class K:
        capabilities = ("int8", "subgroup_basic")
        shared_bytes = 0

    device.check_support(K())

    class Big:
        capabilities = ()
        shared_bytes = device.info.max_shared_memory + 1

    with pytest.raises(VulkanSupportError, match="shared memory"):
        device.check_support(Big())


def test_check_support_names_missing_capability(device, monkeypatch):
    import dataclasses

    lacking = dataclasses.replace(device.info, float64=False)
    monkeypatch.setattr(device, "info", lacking)

    class K:
        capabilities = ("float64",)

    with pytest.raises(VulkanSupportError, match="float64") as err:
        device.check_support(K())
    assert device.info.name in str(err.value)


# ---- arrays ----------------------------------------------------------------------------


@pytest.mark.parametrize("dtype", ALL_DTYPES, ids=lambda d: np.dtype(d).name)
@pytest.mark.parametrize("shape", [(0,), (7,), (3, 5), (2, 3, 4)])
def test_round_trip_every_dtype(device, dtype, shape):
    host = _values(shape, dtype)
    d = rt.to_device(host)
    assert d.shape == shape and d.dtype == np.dtype(dtype) and d.ndim == len(shape)
    assert d.size == host.size and d.nbytes == host.nbytes
    assert d.strides == np.empty(shape, dtype).strides
    assert d.is_contiguous
    back = d.copy_to_host()
    assert back.dtype == host.dtype
    np.testing.assert_array_equal(back, host)


def test_bool_is_stored_as_int32(device):
    d = rt.to_device(np.array([True, False, True]))
    assert d._itemsize == 4 and d.dtype == np.bool_ and d.strides == (1,)
    raw = np.empty(3, np.int32)
    d._buffer.read(d._offset, raw)
    np.testing.assert_array_equal(raw, [1, 0, 1])
    assert d[0] is np.True_ or d[0] == True
    d[1] = True
    np.testing.assert_array_equal(d.copy_to_host(), [True, True, True])


@pytest.mark.parametrize(
    "key",
    [
        np.s_[1:],
        np.s_[::2],
        np.s_[::-1],
        np.s_[1, :],
        np.s_[:, 2],
        np.s_[..., 1],
        np.s_[None, 1:3],
        np.s_[-1, ::-2],
        np.s_[1:3, 1:4],
    ],
)
def test_views_read_and_write(device, key):
    host = np.arange(24, dtype=np.float64).reshape(4, 6)
    d = rt.to_device(host)
    view = d[key]
    assert view.shape == host[key].shape
    np.testing.assert_array_equal(view.copy_to_host(), host[key])
    new = -np.arange(host[key].size, dtype=np.float64).reshape(host[key].shape) - 1
    view.copy_to_device(new)
    host[key] = new
    np.testing.assert_array_equal(d.copy_to_host(), host)


def test_element_access_and_broadcast_assignment(device):
    host = np.arange(12, dtype=np.int32).reshape(3, 4)
    d = rt.to_device(host)
    assert d[2, 3] == 11 and d[-1, -4] == 8
    d[0, 0] = 42
    d[1] = 7
    d[:, 3] = [100, 200, 300]
    host[0, 0] = 42
    host[1] = 7
    host[:, 3] = [100, 200, 300]
    np.testing.assert_array_equal(d.copy_to_host(), host)
    with pytest.raises(IndexError):
        d[3, 0]
    with pytest.raises(IndexError):
        d[np.array([0, 3])]  # index arrays work (test_indexing.py); out of range they raise


def test_transpose_reshape_ravel_copy(device):
    host = np.arange(24, dtype=np.float32).reshape(2, 3, 4)
    d = rt.to_device(host)
    np.testing.assert_array_equal(d.T.copy_to_host(), host.T)
    np.testing.assert_array_equal(d.transpose(1, 0, 2).copy_to_host(), host.transpose(1, 0, 2))
    np.testing.assert_array_equal(d.reshape(6, 4).copy_to_host(), host.reshape(6, 4))
    np.testing.assert_array_equal(d.reshape(-1).copy_to_host(), host.ravel())
    assert not d.T.is_contiguous
    with pytest.raises(ValueError, match="without copying"):
        d.T.reshape(24)
    np.testing.assert_array_equal(d.T.ravel().copy_to_host(), host.T.ravel())
    c = d.T.copy()
    assert c.is_contiguous
    np.testing.assert_array_equal(c.copy_to_host(), host.T)
    c2 = d.copy()
    c2[0, 0, 0] = -5
    assert d[0, 0, 0] == 0  # a real copy
    assert d.sum() == host.sum() and d.min() == 0 and d.max() == 23


def test_copy_to_host_out_and_errors(device):
    host = _values((4, 5), np.float32)
    d = rt.to_device(host)
    out = np.empty((4, 5), np.float32)
    assert d.copy_to_host(out=out) is out
    np.testing.assert_array_equal(out, host)
    with pytest.raises(ValueError):
        d.copy_to_host(out=np.empty((5, 4), np.float32))
    with pytest.raises(ValueError):
        d.copy_to_host(out=np.empty((4, 5), np.float64))
    with pytest.raises(ValueError, match="shape"):
        d.copy_to_device(np.zeros((5, 4)))
    d.copy_to_device(np.ones((4, 5)))  # converted to the element type
    np.testing.assert_array_equal(d.copy_to_host(), np.ones((4, 5), np.float32))


def test_empty_views_have_numpys_strides(device):
    host = np.arange(120, dtype=np.float32).reshape(4, 5, 6)
    d = rt.to_device(host)
    for key in (np.s_[10:20], np.s_[1:1], np.s_[:, 3:3], np.s_[2:2, ::2]):
        assert d[key].shape == host[key].shape and d[key].strides == host[key].strides, key
        assert d[key].is_contiguous == host[key].flags.c_contiguous, key
    fresh = rt.device_array((0, 5, 6), np.float32)
    assert fresh.strides == np.empty((0, 5, 6), np.float32).strides and fresh.is_contiguous
    assert fresh.copy_to_host().shape == (0, 5, 6)


def test_dtype_views_are_numpys(device):
    """DeviceArray.view(dtype): NumPy's shape, strides and bits for views of the same
    itemsize and of another (the last axis scaled), of C, transposed and sliced bases, sharing
    the memory (a write through the view is seen by the base); NumPy's ValueErrors, and ours
    for a first element off the new alignment and for dtypes stored in another form."""
    host = np.arange(48, dtype=np.float16).reshape(3, 16)
    d = rt.to_device(host)
    for key, dtype in ((np.s_[:], np.uint64), (np.s_[:], np.uint32), (np.s_[1:, 4:], np.uint64),
                       (np.s_[::2], np.int8), (np.s_[:], np.int16)):
        got, want = d[key].view(dtype), host[key].view(dtype)
        assert (got.shape, got.strides, got.dtype) == (want.shape, want.strides, want.dtype)
        np.testing.assert_array_equal(got.copy_to_host(), want)
    t = d.T.view(np.uint16)  # the same itemsize: any strides
    assert t.shape == (16, 3) and np.array_equal(t.copy_to_host(), host.T.view(np.uint16))
    words = d.view(np.uint32)
    words[0, 0] = np.uint32(0x3C003C00)  # two float16 ones
    assert d.copy_to_host()[0, :2].tolist() == [1.0, 1.0]
    for bad, match in ((lambda: d[:, 1:].view(np.uint64), "divisor"),
                       (lambda: d.T.view(np.uint32), "contiguous"),
                       (lambda: d.ravel()[1:9].view(np.uint64), "byte 2 of its buffer"),
                       (lambda: d.view(np.bool_), "bool is stored as int32")):
        with pytest.raises((ValueError, TypeError), match=match):
            bad()


def test_slices_and_reshapes_are_numpys_views(device):
    """Integers and slices of step 1 over the leading axes, and reshapes of C-contiguous
    arrays, are computed without NumPy's view of a dummy array (runtime/array_views.py):
    the same shape, strides and elements as NumPy's views, on C, transposed and strided
    bases; an integer out of bounds raises NumPy's IndexError."""
    import itertools

    host = np.arange(120, dtype=np.float32).reshape(4, 5, 6)
    d = rt.to_device(host)
    bases = ((host, d), (host.T, d.T), (host[1:, ::2], d[1:, ::2]))
    slices = (slice(None), slice(1, 3), slice(-3, None), slice(None, -1), slice(5, 1),
              slice(-100, 2), slice(np.int64(1), np.int32(3), 1), slice(0, 4, 2), 0, -1,
              np.int64(2))
    for (h, v), n in itertools.product(bases, (1, 2, 3)):
        for key in itertools.product(slices, repeat=n):
            got, want = v[key], h[key]
            if not isinstance(got, rt.DeviceArray):  # an element
                assert got == want and type(got) is type(want), key
                continue
            assert got.shape == want.shape and got.strides == want.strides, key
            np.testing.assert_array_equal(got.copy_to_host(), want)
    for key in (4, -5, (slice(None), 5), (0, slice(1, 2), -7)):
        with pytest.raises(IndexError) as ours:
            d[key]
        with pytest.raises(IndexError) as numpys:
            host[key]
        assert str(ours.value) == str(numpys.value), key
    for shape in ((120,), (2, -1, 6), (1, 120, 1), (-1,), (5, 4, 3, 2)):
        got, want = d.reshape(shape), host.reshape(shape)
        assert got.shape == want.shape and got.strides == want.strides, shape
        np.testing.assert_array_equal(got.copy_to_host(), want)


def test_large_copies_on_several_threads(device):
    """Copies of many MiB are split between host threads (vk/copy.cc): an odd length, whole
    and at an odd offset, arrives intact both ways."""
    host = np.random.default_rng(5).integers(0, 255, 27_000_013, dtype=np.uint8)
    d = rt.to_device(host)
    np.testing.assert_array_equal(d.copy_to_host(), host)
    d[3:] = host[:-3]
    np.testing.assert_array_equal(d[3:].copy_to_host(), host[:-3])
    np.testing.assert_array_equal(d[:3].copy_to_host(), host[:3])


def test_device_array_and_like(device):
    a = rt.device_array((3, 4), np.int16)
    assert a.shape == (3, 4) and a.dtype == np.int16 and a.device is device
    b = rt.device_array_like(a)
    assert b.shape == a.shape and b.dtype == a.dtype
    c = rt.device_array_like(np.zeros((2, 2), np.uint8))
    assert c.shape == (2, 2) and c.dtype == np.uint8
    assert rt.device_array(5).dtype == np.float64


# ---- the pool --------------------------------------------------------------------------


def test_pool_reuses_released_buffers_and_trims(device):
    device.trim(0)
    before = device.pool_stats()
    a = rt.device_array(1000, np.float32)
    addr = a._buffer.address
    del a
    mid = device.pool_stats()
    assert mid["pooled_buffers"] == before["pooled_buffers"] + 1
    b = rt.device_array(1000, np.float32)  # same size: served from the pool
    after = device.pool_stats()
    assert after["hits"] == before["hits"] + 1
    assert b._buffer.address == addr
    del b
    assert device.pool_stats()["pooled_bytes"] > 0
    device.trim(0)
    assert device.pool_stats()["pooled_bytes"] == 0
    assert device.pool_stats()["pooled_buffers"] == 0


def test_pool_limit(device):
    old = device.pool_limit
    try:
        device.pool_limit = 0
        a = rt.device_array(1000, np.float32)
        assert device.pool_stats()["peak_bytes"] >= device.pool_stats()["live_bytes"] >= 4000
        del a  # never used by a launch: destroyed at once, neither pooled nor retired
        stats = device.pool_stats()
        assert stats["pooled_bytes"] == 0 and stats["retired_bytes"] == 0
    finally:
        device.pool_limit = old


def test_views_keep_the_buffer_alive(device):
    d = rt.to_device(np.arange(10, dtype=np.int32))
    view = d[2:5]
    del d
    np.testing.assert_array_equal(view.copy_to_host(), [2, 3, 4])


# ---- launches --------------------------------------------------------------------------


@pytest.mark.parametrize("in_buffer", [False, True], ids=["push", "params_in_buffer"])
def test_launcher(device, tmp_path, in_buffer):
    from numba_vulkan import _core

    K = _kernels()
    words, push_size = K.scale_index(tmp_path, in_buffer)
    kernel = device.load_kernel(words, push_size)
    launcher = _core.Launcher(device._core, kernel, K.arg_decls(), K.PARAM_SIZE, in_buffer)
    launcher.keep_last_block = True
    n = 1000
    out = rt.to_device(np.zeros(n, np.uint32))
    assert launcher.launch(((n + 63) // 64, 1, 1), (64, 1, 1), (out, np.uint32(2))) is True
    np.testing.assert_array_equal(out.copy_to_host(), np.arange(n, dtype=np.uint32) * 2)

    # The parameter block holds the address, extent, stride (elements) and scalar.
    view = out[::-3]
    assert launcher.launch((6, 1, 1), (64, 1, 1), (view, np.uint32(5))) is True
    block = np.frombuffer(launcher.last_block(), dtype=np.uint8)
    assert block[:8].view(np.uint64)[0] == out._buffer.address + view._offset
    assert block[8:16].view(np.int32).tolist() == [len(view), -3]
    assert block[16:20].view(np.uint32)[0] == 5
    expected = np.arange(n, dtype=np.uint32) * 2
    expected[::-3] = np.arange(len(view), dtype=np.uint32) * 5
    np.testing.assert_array_equal(out.copy_to_host(), expected)

    # Many launches back to back: batches of MAX_BATCH, at most MAX_IN_FLIGHT in flight.
    outs = [rt.device_array(n, np.uint32) for _ in range(5)]
    for rep in range(200):
        assert launcher.launch((16, 1, 1), (64, 1, 1), (outs[rep % 5], np.uint32(rep)))
    for j, o in enumerate(outs):
        rep = 195 + j
        np.testing.assert_array_equal(o.copy_to_host(), np.arange(n, dtype=np.uint32) * rep)
    rt.synchronize()


def test_launcher_writes_hidden_parameters(device, tmp_path):
    """A hidden parameter (kir/abi.h) gets the value given when the launcher is made: here
    scale_index's factor `k`, declared hidden instead of as an argument."""
    from numba_vulkan import _core

    K = _kernels()
    words, push_size = K.scale_index(tmp_path, False)
    kernel = device.load_kernel(words, push_size)
    m = _core.KirModule("scale_index")
    m.add_array_arg("out", "u", 4, _core.Kind.u32, _core.Kind.u32, 1, _core.Kind.i32)
    m.add_hidden_param("k", _core.Kind.u32)
    decls = m.args
    assert [(d.kind, d.offset) for d in decls] == [("array", 0), ("hidden", 16)]
    launcher = _core.Launcher(device._core, kernel, decls, K.PARAM_SIZE, False, hidden={"k": 7})
    out = rt.device_array(100, np.uint32)
    assert launcher.launch((2, 1, 1), (64, 1, 1), (out,)) is True  # one argument: k is hidden
    np.testing.assert_array_equal(out.copy_to_host(), np.arange(100, dtype=np.uint32) * 7)
    with pytest.raises(ValueError, match="hidden parameter 'k'"):
        _core.Launcher(device._core, kernel, decls, K.PARAM_SIZE, False)
    with pytest.raises(ValueError, match="32-bit slot"):
        _core.Launcher(device._core, kernel, decls, K.PARAM_SIZE, False, hidden={"k": 2**32})
    with pytest.raises(ValueError, match="u64 slot"):  # a buffer's address needs 8 bytes
        _core.Launcher(device._core, kernel, decls, K.PARAM_SIZE, False,
                       hidden={"k": out._buffer})  # fmt: skip
    with pytest.raises(ValueError, match="u64 slot"):  # so does a device array's
        _core.Launcher(device._core, kernel, decls, K.PARAM_SIZE, False, hidden={"k": out})
    with pytest.raises(ValueError, match="does not have"):
        _core.Launcher(device._core, kernel, decls, K.PARAM_SIZE, False,
                       hidden={"k": 1, "other": 2})  # fmt: skip


def test_launcher_rejects_mismatched_arguments(device, tmp_path):
    from numba_vulkan import _core

    K = _kernels()
    words, push_size = K.scale_index(tmp_path, False)
    kernel = device.load_kernel(words, push_size)
    launcher = _core.Launcher(device._core, kernel, K.arg_decls(), K.PARAM_SIZE, False)
    good = rt.device_array(10, np.uint32)
    g, l = (1, 1, 1), (64, 1, 1)
    one = np.uint32(1)
    assert launcher.launch(g, l, (good, one))
    assert launcher.launch(g, l, (good, 1)) is False  # a Python int is an int64, as numba types it
    assert launcher.launch(g, l, (good, np.int32(1))) is False  # another integer type
    assert launcher.launch(g, l, (np.zeros(10, np.uint32), one)) is False  # host array
    assert launcher.launch(g, l, (rt.device_array(10, np.int32), one)) is False  # dtype
    assert launcher.launch(g, l, (rt.device_array((2, 5), np.uint32), one)) is False  # ndim
    assert launcher.launch(g, l, (good, 1.5)) is False  # float for an int scalar
    assert launcher.launch(g, l, (good, True)) is False  # bool for an int scalar
    assert launcher.launch(g, l, (good,)) is False  # arity
    with pytest.raises(VulkanSupportError, match="local size"):
        launcher.launch(g, (device.info.max_local_invocations + 1, 1, 1), (good, one))
    with pytest.raises(ValueError):
        _core.Launcher(device._core, kernel, K.arg_decls(), 16, False)  # k lies past byte 16


def test_device_launch_and_run(device, tmp_path):
    K = _kernels()
    words, push_size = K.scale_index(tmp_path, False)

    class Compiled:  # what a CompiledKernel offers the runtime
        pass

    ck = Compiled()
    ck.words, ck.push_size, ck.local_size, ck.capabilities = words, push_size, (32, 1, 1), []

    def block(arrays):
        a = arrays[0]
        return (
            np.array([a._buffer.address + a._offset], np.uint64).tobytes()
            + np.array([a.size, 1, 3, 0], np.int32).tobytes()
        )

    out = rt.device_array(100, np.uint32)
    device.launch(ck, (4, 1, 1), [out], block)
    np.testing.assert_array_equal(out.copy_to_host(), np.arange(100, dtype=np.uint32) * 3)

    host = np.zeros(50, np.uint32)
    device.run(ck, (2, 1, 1), [host], block)
    np.testing.assert_array_equal(host, np.arange(50, dtype=np.uint32) * 3)

    # A host array in launch is uploaded and read there (the reference's small host
    # arrays); launch copies nothing back, so the host array is unchanged.
    small = np.zeros(40, np.uint32)
    device.launch(ck, (2, 1, 1), [small], block)
    device.synchronize()
    assert not small.any()
    with pytest.raises(ValueError, match="must be a DeviceArray, a NumPy array or None"):
        device.launch(ck, (1, 1, 1), [[1, 2, 3]], b"")


# ---- the rest of the module ------------------------------------------------------------


def test_stream_simple_semantics(device):
    s = rt.stream()
    assert s.device is device
    d = rt.to_device(np.arange(5), stream=s)
    with s.auto_synchronize():
        out = d.copy_to_host(stream=s)
    np.testing.assert_array_equal(out, np.arange(5))
    assert s.query()


def test_print_buffer_constants_and_pinned_arrays(device):
    rt.print_records(np.zeros(4, np.uint32))  # an empty buffer prints nothing
    assert rt.PRINT_BUFFER_WORDS > 0
    p = rt.pinned_array((3, 4), np.float32)
    assert p.shape == (3, 4) and p.flags.c_contiguous


def test_events_time_the_device(device, tmp_path):
    from numba_vulkan import _core

    if device.info.timestamp_bits == 0:
        with pytest.raises(VulkanSupportError):
            rt.event()
        return
    K = _kernels()
    words, push_size = K.scale_index(tmp_path, False)
    launcher = _core.Launcher(
        device._core, device.load_kernel(words, push_size), K.arg_decls(), K.PARAM_SIZE, False
    )
    out = rt.device_array(1 << 16, np.uint32)
    start, mid, end = rt.event(), rt.event(), rt.event()
    start.record()
    mid.record()
    for i in range(50):
        launcher.launch((1 << 10, 1, 1), (64, 1, 1), (out, np.uint32(i)))
    assert end.record() is end
    end.synchronize()
    assert end.query()
    t_all = start.elapsed_time(end)
    t_none = start.elapsed_time(mid)
    assert t_all > 0 and 0 <= t_none <= t_all
    assert rt.event_elapsed_time(start, end) == t_all
    with pytest.raises(ValueError):
        rt.event().elapsed_time(end)


def test_out_of_memory_is_memory_error(device):
    with pytest.raises(
        MemoryError, match="VK_ERROR_OUT_OF_DEVICE_MEMORY|VK_ERROR_OUT_OF_HOST_MEMORY"
    ):
        rt.device_array(1 << 48, np.uint8)


def test_main_lists_devices():
    env = dict(os.environ, PYTHONPATH=SRC)
    r = subprocess.run(
        [sys.executable, "-m", "numba_vulkan"], env=env, capture_output=True, text=True, check=False
    )
    assert r.returncode == 0, r.stderr
    name = rt.list_devices()[0].name
    assert name in r.stdout and "subgroup size" in r.stdout and "float64" in r.stdout


def test_health_line_runs_a_kernel(device):
    from numba_vulkan.__main__ import health_line

    line = health_line()
    assert line.startswith("health: ok | numba_vulkan ")
    assert device.info.name in line and "matched NumPy" in line
    assert "\n" not in line
