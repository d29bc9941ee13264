"""Several devices in one process: the default device listed twice
(NUMBA_VULKAN_VISIBLE_DEVICES="i,i", set through numba_vulkan.config) gives two logical
devices, so that these run on any machine with one device (lavapipe in CI). Arrays, kernels,
streams belong to their device; selection per thread and per block; copies between
devices; mixing devices is an error naming both."""

import threading

import numpy as np
import pytest

import numba_vulkan as nv
from numba_vulkan import config
from numba_vulkan.runtime import device_list

pytestmark = [pytest.mark.device, pytest.mark.usefixtures("device")]


@pytest.fixture(scope="module")
def two(device):
    """(device 0, device 1): the default device and a second logical device of the same
    physical one; the device list as it was afterwards."""
    before = config.VISIBLE_DEVICES
    index = device.info.vulkan_index if device.info.vulkan_index >= 0 else device.info.index
    config.VISIBLE_DEVICES = f"{index},{index}"
    try:
        device_list.list_devices(refresh=True)
        yield nv.gpus[0], nv.gpus[1]
    finally:
        config.VISIBLE_DEVICES = before
        device_list.list_devices(refresh=True)


@nv.jit
def _scale(x, a):
    i = nv.global_id(0)
    if i < x.size:
        x[i] = x[i] * a


def test_the_same_physical_device_twice_is_two_logical_devices(two):
    d0, d1 = two
    assert len(nv.gpus) == 2 and len(nv.list_devices()) == 2
    assert d0 is not d1 and d0.handle != d1.handle
    assert d0.info.vulkan_index == d1.info.vulkan_index
    assert (d0.info.logical, d1.info.logical) == (0, 1)
    assert (d0.info.index, d1.info.index) == (0, 1)
    assert nv.get_device(1) is d1 and "logical 1" in repr(d1)


def test_arrays_and_kernels_on_each_device(two):
    d0, d1 = two
    host = np.arange(1000, dtype=np.float32)
    x0 = nv.to_device(host, device=d0)
    with d1:
        assert nv.get_device() is d1
        x1 = nv.to_device(host)  # the block's device
        _scale.forall(x1.size)(x1, np.float32(3))
    assert nv.get_device() is d0  # the block's end gives the previous device back
    _scale.forall(x0.size)(x0, np.float32(2))
    assert x0.device is d0 and x1.device is d1
    np.testing.assert_array_equal(x0.copy_to_host(), host * 2)
    np.testing.assert_array_equal(x1.copy_to_host(), host * 3)
    np.testing.assert_array_equal(np.asarray(np.sqrt(x1)), np.sqrt(host * 3))  # ufunc on d1
    assert np.sqrt(x1).device is d1
    s = nv.stream(device=d1)
    assert s.device is d1
    x1.copy_to_device(host, stream=s)
    s.synchronize()
    np.testing.assert_array_equal(x1.copy_to_host(), host)


def test_copies_between_devices(two):
    d0, d1 = two
    host = np.random.default_rng(1).random((30, 40))
    x0 = nv.to_device(host, device=d0)
    x1 = nv.to_device(x0, device=d1)  # through host memory
    assert x1.device is d1
    np.testing.assert_array_equal(x1.copy_to_host(), host)
    y0 = nv.device_array(host.shape, host.dtype, device=d0)
    y0.copy_to_device(x1[::-1].copy())
    np.testing.assert_array_equal(y0.copy_to_host(), host[::-1])


def test_mixing_devices_is_an_error_naming_both(two):
    d0, d1 = two
    x0 = nv.to_device(np.ones(8, np.float32), device=d0)
    x1 = nv.to_device(np.ones(8, np.float32), device=d1)
    with pytest.raises(ValueError, match=r"device 0 .*device 1") as e:
        _scale[1, 8, d1](x0, np.float32(2))
    assert "copy" in str(e.value)
    with pytest.raises(ValueError, match=r"same device.*Device 0.*Device 1"):
        x0 + x1
    with pytest.raises(ValueError, match=r"concatenate of device arrays on .*Device 0.*Device 1"):
        np.concatenate([x0, x1])
    with pytest.raises(ValueError, match=r"stream belongs to .*Device 1.*Device 0"):
        x0.copy_to_device(np.zeros(8, np.float32), stream=nv.stream(device=d1))


def test_select_device_is_per_thread(two):
    d0, d1 = two
    seen = {}
    barrier = threading.Barrier(2)

    def work(which):
        nv.select_device(which)
        barrier.wait()  # both have chosen before either looks
        x = nv.to_device(np.full(16, which, np.float32))
        _scale.forall(16)(x, np.float32(10))
        seen[which] = (nv.get_device(), x.device, x.copy_to_host())

    threads = [threading.Thread(target=work, args=(i,)) for i in (0, 1)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert seen[0][0] is d0 and seen[0][1] is d0 and seen[1][0] is d1 and seen[1][1] is d1
    np.testing.assert_array_equal(seen[1][2], np.full(16, 10, np.float32))
    assert nv.get_device() is d0  # the main thread chose nothing


def test_nested_blocks_and_the_cuda_layer(two):
    from numba_vulkan import cuda

    d0, d1 = two
    with nv.gpus[1] as outer:
        assert outer is d1
        with nv.gpus[0]:
            assert nv.get_device() is d0
        assert nv.gpus.current is d1
    assert nv.get_device() is d0
    with cuda.gpus[1]:
        assert cuda.get_current_device().id == 1 and nv.get_device() is d1
    assert cuda.get_current_device().id == 0
    with pytest.raises(IndexError, match="no device 2"):
        nv.gpus[2]


def test_visible_devices_choose_and_order(device):
    infos = [device.info]
    from numba_vulkan.runtime.device_list import visible

    raw = [nv.DeviceInfo(**{**device.info.__dict__, "index": 0, "vulkan_index": -1}),
           nv.DeviceInfo(**{**device.info.__dict__, "index": 1, "vulkan_index": -1,
                            "name": "Other GPU"})]  # fmt: skip
    chosen = visible(raw, "other, 0,1")
    assert [(i.index, i.vulkan_index, i.logical, i.name) for i in chosen] == [
        (0, 1, 0, "Other GPU"), (1, 0, 0, device.info.name), (2, 1, 1, "Other GPU")]
    assert [i.vulkan_index for i in visible(raw, "")] == [0, 1]
    with pytest.raises(ValueError, match=r"NUMBA_VULKAN_VISIBLE_DEVICES='0,7': '7' names no"):
        visible(raw, "0,7")
    assert infos[0] is device.info
