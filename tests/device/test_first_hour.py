"""Mistakes a newcomer makes in the first hour, each answered as a polished library would:
NumPy's whole-array functions on device arrays, numba.cuda's spellings, a device where a
workgroup size was meant, signatures given to jit, an undefined name in a kernel."""

import numpy as np
import pytest

import numba_vulkan as nv

pytestmark = [pytest.mark.device, pytest.mark.usefixtures("device")]


@pytest.mark.parametrize("name", ["sum", "min", "max", "amax", "amin", "any", "all", "mean"])
@pytest.mark.parametrize("dtype", [np.float64, np.int32, np.bool_])
def test_numpy_reductions_of_device_arrays_as_numpy(name, dtype):
    host = (np.arange(24) % 7).astype(dtype).reshape(4, 6)
    d = nv.to_device(host)
    f = getattr(np, name)
    want, got = f(host), f(d)
    assert type(got) is type(want) and got == want, (got, want)
    assert f(d, axis=(0, 1)) == want  # every axis named: the whole array too


def test_a_reduction_over_one_axis_gives_a_device_array_and_any_says_what_to_do_instead():
    host = np.arange(12.0).reshape(3, 4)
    d = nv.to_device(host)
    got = np.sum(d, axis=1)
    assert isinstance(got, nv.DeviceArray) and np.array_equal(got.copy_to_host(), host.sum(1))
    assert d.max(keepdims=True).shape == (1, 1)
    with pytest.raises(NotImplementedError, match=r"any\(axis=1\).*np.asarray\(d\)"):
        np.any(d, axis=1)


def test_numpy_functions_without_a_device_form_copy_and_say_so_when_large():
    import warnings

    from numba_vulkan.runtime.array_reductions import HOST_COPY_WARN_BYTES

    host = np.random.default_rng(5).random(HOST_COPY_WARN_BYTES // 8 + 1)
    big, small = nv.to_device(host), nv.to_device(host[:100])
    with pytest.warns(nv.VulkanPerformanceWarning, match="np.sort has no device form"):
        assert np.array_equal(np.sort(big), np.sort(host))
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert np.array_equal(np.cumsum(small), np.cumsum(host[:100]))  # small: quietly
        assert np.sum(big) == pytest.approx(host.sum())  # on the device
    with pytest.raises(NotImplementedError, match="out=<device array>"):
        np.cumsum(small, out=nv.device_array(100))


def test_an_undefined_name_is_a_name_error_pointing_at_our_spelling():
    @nv.jit
    def k(x):
        i = threadIdx.x  # noqa: F821 - the mistake under test
        x[i] = 1

    with pytest.raises(nv.VulkanUnsupportedError,
                       match=r"NameError: name 'threadIdx' is not defined.*nv.local_id"):  # fmt: skip
        k.forall(4)(np.zeros(4))


def test_forall_with_a_workgroup_size_where_the_device_goes():
    @nv.jit
    def k(x):
        x[nv.global_id(0)] = 1

    with pytest.raises(ValueError, match=r"local_size=64"):
        k.forall(100, 64)


def test_jit_takes_numba_cuda_signatures():
    def fill(x, a):
        i = nv.global_id(0)
        if i < x.size:
            x[i] = a

    kernel = nv.jit("void(float32[::1], float32)")(fill)
    assert len(kernel.inspect_spirv()) == 1  # compiled when decorated
    x = np.zeros(4, np.float32)
    kernel.forall(4)(x, np.float32(2))
    assert (x == 2).all()
    with pytest.raises(nv.VulkanUnsupportedError):  # errors show at the decorator
        nv.jit(["void(float32[::1])"])(lambda x: x.undefined_attribute)


@pytest.mark.parametrize(("name", "ours"), [("threadIdx", "nv.local_id"), ("grid", "nv.global_id"),
                                            ("blockDim", "nv.local_size")])  # fmt: skip
def test_numba_cuda_spellings_on_the_module_point_to_ours(name, ours):
    with pytest.raises(AttributeError, match=rf"{name}.*{ours}.*from numba_vulkan import cuda"):
        getattr(nv, name)
    assert not hasattr(nv, "no_such_name")


def test_inspect_asm_and_llvm():
    @nv.jit
    def k(x):
        x[nv.global_id(0)] = 1

    x = np.zeros(4)
    assert "OpEntryPoint" in k.inspect_asm(x)
    with pytest.raises(NotImplementedError, match="no LLVM IR"):
        k.inspect_llvm(x)
