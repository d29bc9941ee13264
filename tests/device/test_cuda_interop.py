"""Sharing device memory through file descriptors (runtime/cuda_interop.py, vk/external.cc).

On lavapipe (no CUDA) the export path is checked by importing an exported
descriptor back into Vulkan as a second buffer over the same memory; the CUDA
side refuses with VulkanSupportError. benchmarks/bench_interop.py checks CuPy and
PyTorch on an NVIDIA GPU.
"""

import gc
import os
import subprocess
import sys

import numpy as np
import pytest

import numba_vulkan as nv
from numba_vulkan.errors import VulkanSupportError
from numba_vulkan.runtime import cuda_interop


@nv.jit
def _add_index(a):
    i = nv.global_id(0)
    if i < a.size:
        a[i] += i


def _exports(device):
    return cuda_interop.exports(device)[0]


def test_exportable_array_is_an_ordinary_device_array(device):
    if not _exports(device):
        pytest.skip("the driver cannot export memory")
    host = np.arange(1000, dtype=np.float32)
    d = nv.device_array(host.shape, np.float32, exportable=True)
    d.copy_to_device(host)
    _add_index[4, 256](d)
    np.testing.assert_array_equal(d.copy_to_host(), host + np.arange(1000))
    # not pooled, and dedicated: two exportable arrays never share a buffer
    e = nv.device_array(4, np.int64, exportable=True)
    assert e._buffer.address != d._buffer.address


def test_export_and_reimport_alias_the_same_memory(device):
    if not _exports(device):
        pytest.skip("the driver cannot export memory")
    host = np.arange(512, dtype=np.int32)
    d = nv.device_array(host.shape, np.int32, exportable=True)
    d.copy_to_device(host)
    alias = cuda_interop.reimport(d)
    assert alias._buffer.address != d._buffer.address  # another VkBuffer...
    _add_index[2, 256](alias)  # ...over the same memory: a launch on one, seen by the other
    nv.synchronize()
    np.testing.assert_array_equal(d.copy_to_host(), 2 * host)
    d[3] = -7
    assert alias[3] == -7
    del d
    gc.collect()  # the import holds the memory by itself
    expect = 2 * host
    expect[3] = -7
    np.testing.assert_array_equal(alias.copy_to_host(), expect)


def test_reimport_of_a_view_keeps_its_offset_and_strides(device):
    if not _exports(device):
        pytest.skip("the driver cannot export memory")
    d = nv.device_array((6, 8), np.float64 if device.info.float64 else np.float32,
                        exportable=True)  # fmt: skip
    host = np.arange(48).reshape(6, 8).astype(d.dtype)
    d.copy_to_device(host)
    view = d[1:, ::-3]
    np.testing.assert_array_equal(cuda_interop.reimport(view).copy_to_host(), host[1:, ::-3])


def test_ordinary_arrays_are_not_exportable(device):
    d = nv.to_device(np.arange(8, dtype=np.float32))
    with pytest.raises(ValueError, match="not allocated exportable"):
        cuda_interop.reimport(d)
    with pytest.raises(BufferError, match="exportable=True"):
        cuda_interop.cuda_view(d, copy=False)


def test_cuda_side_refuses_clearly_without_a_cuda_twin(device):
    """lavapipe has no CUDA twin (and this machine may have no libcuda.so.1): a clear
    VulkanSupportError, never a crash or a wrong answer."""
    if not _exports(device):
        pytest.skip("the driver cannot export memory")
    if device.info.vendor_id == 0x10DE:
        pytest.skip("an NVIDIA device may well have a CUDA twin")
    d = nv.device_array(16, np.float32, exportable=True)
    with pytest.raises(VulkanSupportError, match="libcuda.so.1|no CUDA device has the UUID"):
        cuda_interop.cuda_view(d)  # what nv.to_cupy and nv.to_torch start with
    with pytest.raises(VulkanSupportError, match="libcuda.so.1|no CUDA device has the UUID"):
        cuda_interop.cuda_view(nv.to_device(np.ones(4, np.float32)))  # before any copy


class _FakeCuda:
    __cuda_array_interface__ = {"shape": (4,), "typestr": "<f4", "data": (1 << 40, False),
                                "version": 3}  # fmt: skip


def test_from_cuda_refusals(device):
    with pytest.raises(TypeError, match="__cuda_array_interface__"):
        nv.from_cuda(np.arange(3))
    if device.info.vendor_id != 0x10DE:
        with pytest.raises(VulkanSupportError):
            nv.from_cuda(_FakeCuda())
        with pytest.raises(VulkanSupportError):  # a kDLCUDA producer goes to from_cuda
            nv.from_dlpack(_FakeCudaCapsule())


class _FakeCudaCapsule(_FakeCuda):
    def __dlpack_device__(self):
        return (2, 0)  # kDLCUDA

    def __dlpack__(self, **kwargs):
        raise AssertionError("not reached: the CUDA array interface is read instead")


def test_a_device_that_cannot_export_says_so(device):
    """NVK_VULKAN_NO_EXPORT=1 opens the device without VK_KHR_external_memory_fd."""
    code = (
        "import numpy as np, numba_vulkan as nv\n"
        "from numba_vulkan.errors import VulkanSupportError\n"
        "try:\n"
        "    nv.device_array(4, np.float32, exportable=True)\n"
        "except VulkanSupportError as e:\n"
        "    print('refused:', e)\n"
    )
    env = dict(os.environ, NVK_VULKAN_NO_EXPORT="1")
    r = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True,
                       timeout=120)  # fmt: skip
    assert r.returncode == 0, r.stderr
    assert "refused:" in r.stdout and "VK_KHR_external_memory_fd" in r.stdout, r.stdout


def test_the_example_runs(device):
    import numba_vulkan

    root = os.path.dirname(os.path.dirname(os.path.abspath(numba_vulkan.__file__)))
    example = os.path.join(os.path.dirname(__file__), "..", "..", "examples", "cuda_interop.py")
    env = dict(os.environ, PYTHONPATH=root)
    r = subprocess.run([sys.executable, example], env=env, capture_output=True, text=True,
                       timeout=300)  # fmt: skip
    assert r.returncode == 0, r.stdout + r.stderr
    assert "shares the array" in r.stdout or "not available" in r.stdout or "neither" in r.stdout
