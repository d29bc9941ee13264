"""DLPack exchange (runtime/dlpack.py): round trips with NumPy and with ourselves, zero copy
where the memory allows it, copies or BufferError where it does not."""

import gc

import numpy as np
import pytest

import numba_vulkan as nv
from numba_vulkan.runtime import dlpack


class _Producer:
    """A third-party object speaking DLPack through a device array (or a NumPy array)."""

    def __init__(self, array):
        self.array = array

    def __dlpack__(self, **kwargs):
        return self.array.__dlpack__(**kwargs)

    def __dlpack_device__(self):
        return self.array.__dlpack_device__()


def test_device_type_is_vulkan(device):
    d = nv.to_device(np.arange(4, dtype=np.float32))
    assert d.__dlpack_device__() == (dlpack.kDLVulkan, device.info.index)
    with pytest.raises((BufferError, RuntimeError)):
        np.from_dlpack(d)  # NumPy takes CPU memory only: ask for it with device="cpu"


def test_numpy_from_dlpack_of_mapped_device_memory(device):
    host = np.arange(12, dtype=np.int32).reshape(3, 4)
    d = nv.to_device(host)[:, ::-2]  # a strided view with a negative stride
    h = np.from_dlpack(d, device="cpu")
    np.testing.assert_array_equal(h, host[:, ::-2])
    if d._buffer.pinned:  # lavapipe: device memory is the host's, shared without a copy
        d[0, 0] = 99
        assert h[0, 0] == 99
        np.from_dlpack(d, device="cpu", copy=False)
    else:
        with pytest.raises(BufferError):
            np.from_dlpack(d, device="cpu", copy=False)
    # What the host writes through the shared view, kernels see (after the write).
    if d._buffer.pinned:
        h[1, 1] = -5
        assert d[1, 1] == -5
    b = nv.to_device(np.array([True, False]))  # stored as int32: only as a copy
    np.testing.assert_array_equal(np.from_dlpack(b, device="cpu"), [True, False])
    with pytest.raises(BufferError):
        np.from_dlpack(b, device="cpu", copy=False)


def test_from_dlpack_round_trips(device):
    d = nv.to_device(np.arange(10, dtype=np.float64))
    assert nv.from_dlpack(d) is d
    view = d[1::3]
    back = nv.from_dlpack(_Producer(view))  # through a kDLVulkan capsule: zero copy
    assert back is view
    # Consumed: the export's entry is gone.
    assert all(entry[0]() is not view for entry in dlpack._exported.values())
    capsule = d.__dlpack__(max_version=(1, 0))
    del capsule
    gc.collect()
    # Host data: copied to the device, or shared where it lies in a Vulkan buffer.
    x = np.arange(6.0).reshape(2, 3)
    y = nv.from_dlpack(x)
    np.testing.assert_array_equal(y.copy_to_host(), x)
    with pytest.raises(BufferError, match="pinned_array"):
        nv.from_dlpack(x, copy=False)
    p = nv.pinned_array((4, 5), np.float32)
    p[:] = np.arange(20).reshape(4, 5)
    shared = nv.from_dlpack(p[:, 1:4], copy=False)
    shared *= 2  # a kernel writes the pinned memory in place
    nv.synchronize()
    expected = np.arange(20, dtype=np.float32).reshape(4, 5)
    expected[:, 1:4] *= 2
    np.testing.assert_array_equal(p, expected)
    # Mapped device memory exported to NumPy comes back as the same memory.
    if d._buffer.pinned:
        h = np.from_dlpack(d, device="cpu")
        again = nv.from_dlpack(h, copy=False)
        assert again._buffer.address == d._buffer.address


def test_foreign_devices_are_refused(device):
    class Cuda:
        def __dlpack_device__(self):
            return (dlpack.kDLCUDA, 0)

        def __dlpack__(self, **kwargs):
            raise AssertionError("not reached")

    with pytest.raises(BufferError, match="__cuda_array_interface__"):
        nv.from_dlpack(Cuda())  # a CUDA capsule without the interface nv.from_cuda reads
    with pytest.raises(TypeError):
        nv.from_dlpack(object())
