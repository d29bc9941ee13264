"""Launching kernels on a real device (lavapipe in CI): launch forms, copies, fast path, limits."""

import numpy as np
import pytest

import numba_vulkan as nv
from numba_vulkan import config


@nv.jit
def saxpy(a, x, y, out):
    i = nv.global_id(0)
    if i < out.size:
        out[i] = a * x[i] + y[i]


@nv.jit
def fill_2d(out):
    i = nv.global_id(0)
    j = nv.global_id(1)
    if i < out.shape[0] and j < out.shape[1]:
        out[i, j] = i * 100 + j


@nv.jit
def ids(out):
    i = nv.global_id(0)
    if i < out.shape[0]:
        out[i, 0] = nv.local_id(0)
        out[i, 1] = nv.group_id(0)
        out[i, 2] = nv.local_size(0)
        out[i, 3] = nv.num_groups(0)


def _inputs(n, dtype=np.float32):
    rng = np.random.default_rng(1)
    return rng.random(n).astype(dtype), rng.random(n).astype(dtype)


def test_saxpy_numpy_arguments_are_copied_back(device):
    n = 1000
    x, y = _inputs(n)
    out = np.zeros(n, np.float32)
    saxpy.forall(n)(np.float32(2.0), x, y, out)
    np.testing.assert_array_equal(out, np.float32(2.0) * x + y)
    # Inputs the kernel does not write are not touched.
    np.testing.assert_array_equal(x, _inputs(n)[0])


def test_saxpy_device_arguments(device):
    n = 777
    x, y = _inputs(n)
    dx, dy = nv.to_device(x), nv.to_device(y)
    dout = nv.device_array(n, np.float32)
    saxpy[(n + 63) // 64, 64](np.float32(3.0), dx, dy, dout)
    np.testing.assert_array_equal(dout.copy_to_host(), np.float32(3.0) * x + y)


def test_cuda_style_launch_with_tuples_and_device(device):
    n = 256
    x, y = _inputs(n)
    out = np.zeros(n, np.float32)
    saxpy[(4, 1, 1), (64,), device](np.float32(1.5), x, y, out)
    np.testing.assert_array_equal(out, np.float32(1.5) * x + y)


def test_non_contiguous_numpy_output_written_through_a_temporary(device):
    n = 64
    x, y = _inputs(n)
    base = np.zeros((n, 2), np.float32)
    out = base[:, 1]  # a strided view
    saxpy.forall(n)(np.float32(2.0), x, y, out)
    np.testing.assert_array_equal(base[:, 1], np.float32(2.0) * x + y)
    assert not base[:, 0].any()


def test_forall_2d(device):
    out = np.zeros((19, 13), np.int64)
    fill_2d.forall(out.shape)(out)
    i, j = np.indices(out.shape)
    np.testing.assert_array_equal(out, i * 100 + j)


def test_ids_and_sizes(device):
    out = np.zeros((96, 4), np.int32)
    ids[3, 32](out)
    i = np.arange(96)
    np.testing.assert_array_equal(out[:, 0], i % 32)
    np.testing.assert_array_equal(out[:, 1], i // 32)
    np.testing.assert_array_equal(out[:, 2], 32)
    np.testing.assert_array_equal(out[:, 3], 3)


def test_fast_path_taken_on_the_second_launch(device):
    @nv.jit
    def scale(x, s):
        i = nv.global_id(0)
        if i < x.size:
            x[i] = x[i] * s

    data = nv.to_device(np.arange(128, dtype=np.float32))
    launch = scale[2, 64]
    launch(data, np.float32(2.0))
    assert scale.slow_path_count == 1
    for _ in range(5):
        launch(data, np.float32(2.0))
    scale[2, 64](data, np.float32(2.0))
    scale.forall(128)(data, np.float32(2.0))
    assert scale.slow_path_count == 1  # every later launch took the fast path
    np.testing.assert_array_equal(data.copy_to_host(), np.arange(128) * 2.0**8)
    # A small NumPy array of the same type goes through the same launcher (copied in and
    # back by it: tests/device/test_numpy_args.py); a strided one takes the slow path.
    host = np.ones(128, np.float32)
    launch(host, np.float32(4.0))
    assert scale.slow_path_count == 1
    np.testing.assert_array_equal(host, 4.0)
    strided = np.ones(256, np.float32)[::2]
    launch(strided, np.float32(4.0))
    assert scale.slow_path_count == 2
    np.testing.assert_array_equal(strided, 4.0)


def test_new_argument_types_make_a_new_specialisation(device):
    n = 100
    for dtype in (np.float32, np.float64):
        x, y = _inputs(n, dtype)
        out = np.zeros(n, dtype)
        saxpy.forall(n)(dtype(2), x, y, out)
        np.testing.assert_allclose(out, dtype(2) * x + y, rtol=1e-6)
    kinds = {args[1].dtype.name for (args, mode) in saxpy.specialisations}
    assert {"float32", "float64"} <= kinds


def test_device_array_of_another_device_is_rejected(device):
    # nv.Device(info) keeps one Device per physical device; lavapipe is one physical
    # device, so open a second logical device on it by hand: a genuinely other device.
    other_device = object.__new__(nv.Device)
    other_device._init(device.info)
    assert other_device is not device
    # Both Python Devices share one C++ device (Device.open caches it per index), so the
    # C++ launchers, which compare C++ devices, would take the array: a kernel without
    # launchers yet makes the launch go through the slow path's check.
    other = nv.to_device(np.zeros(4, np.float32), device=other_device)
    x = np.zeros(4, np.float32)

    @nv.jit
    def axpy(a, x, y, out):
        i = nv.global_id(0)
        if i < out.size:
            out[i] = a * x[i] + y[i]

    with pytest.raises(ValueError, match="argument 3 .*device array of device"):
        axpy[1, 4, device](np.float32(1), x, x, other)


def test_workgroup_too_large(device):
    limit = device.info.max_local_invocations
    out = np.zeros(4, np.float32)
    # Within the per-axis limits, but more invocations than a workgroup may have.
    x = min(device.info.max_local_size[0], limit)
    y = limit // x + 1
    assert y <= device.info.max_local_size[1]
    with pytest.raises(nv.VulkanSupportError, match="max_local_invocations"):
        saxpy[1, (x, y)](np.float32(1), out, out, out)
    too_wide = device.info.max_local_size[0] + 1
    with pytest.raises(nv.VulkanSupportError, match="max_local_size"):
        saxpy[1, (too_wide, 1, 1)](np.float32(1), out, out, out)


def test_unsupported_argument_type_at_launch(device):
    with pytest.raises(TypeError, match="argument 1 has type list"):
        saxpy.forall(3)(np.float32(1), [1.0, 2.0, 3.0], np.zeros(3), np.zeros(3))


def test_inspect_kir_and_spirv(device):
    n = 16
    x, y = _inputs(n)
    kir = saxpy.inspect_kir(np.float32(1), x, y, x)
    assert "saxpy" in kir or "elemptr" in kir
    spirv = saxpy.inspect_spirv(np.float32(1), x, y, x)
    assert "OpEntryPoint GLCompute" in spirv
    everything = saxpy.inspect_spirv()
    assert isinstance(everything, dict) and everything


def test_sync_mode(device, monkeypatch):
    monkeypatch.setattr(config, "SYNC", 1)
    n = 64
    x, y = _inputs(n)
    dx, dy, dout = nv.to_device(x), nv.to_device(y), nv.device_array(n, np.float32)
    saxpy.forall(n)(np.float32(2), dx, dy, dout)
    saxpy.forall(n)(np.float32(2), dx, dy, dout)
    np.testing.assert_array_equal(dout.copy_to_host(), np.float32(2) * x + y)


def test_inspect_pipeline(device):
    n = 16
    x, y = _inputs(n)
    args = (np.float32(1), x, y, x)
    if device.info.driver_name in ("llvmpipe", "lavapipe"):  # Mesa 22 lacks the extension
        with pytest.raises(nv.VulkanSupportError, match="VK_KHR_pipeline_executable_properties"):
            saxpy.inspect_pipeline(*args, local_size=64)
        return
    try:
        stats = saxpy.inspect_pipeline(*args, local_size=64)
    except nv.VulkanSupportError as e:
        assert "VK_KHR_pipeline_executable_properties" in str(e)
        return
    assert stats and all(isinstance(v, (int, float)) for v in stats.values())
    with pytest.raises(nv.VulkanSupportError, match="too large"):
        saxpy.inspect_pipeline(*args, local_size=device.info.max_local_size[0] + 1)


def test_inspect_pipeline_needs_a_specialisation(device):
    with pytest.raises(TypeError, match="arguments or types"):
        saxpy.inspect_pipeline(local_size=64)
