"""The dispatcher without a device: decorator forms, options, launch configurations, typing."""

import numpy as np
import pytest
from numba.core import types
from numba.core.errors import TypingError

import numba_vulkan as nv
from numba_vulkan import _core, arguments, dispatcher, stubs
from numba_vulkan.typing import pipeline


def saxpy(a, x, y, out):
    i = nv.global_id(0)
    if i < out.size:
        out[i] = a * x[i] + y[i]


# ---------------------------------------------------------------- decorator


def test_jit_without_parentheses():
    kernel = nv.jit(saxpy)
    assert isinstance(kernel, dispatcher.Dispatcher)
    assert kernel.py_func is saxpy
    assert kernel.__name__ == "saxpy"
    assert kernel.options["fastmath"] is False


def test_jit_with_parentheses_and_options():
    kernel = nv.jit(fastmath=True, narrow="ints", error_model="python")(saxpy)
    assert isinstance(kernel, dispatcher.Dispatcher)
    assert kernel.options["fastmath"] is True
    assert kernel.options["narrow"] == "ints"
    assert kernel.options["error_model"] == "python"
    assert nv.jit()(saxpy).options == nv.jit(saxpy).options


def test_jit_as_decorator_both_forms():
    @nv.jit
    def a(x):
        pass

    @nv.jit(debug=True)
    def b(x):
        pass

    assert isinstance(a, dispatcher.Dispatcher) and isinstance(b, dispatcher.Dispatcher)
    assert b.options["debug"] is True


def test_unknown_option_raises_type_error():
    with pytest.raises(TypeError, match="unknown option.*'fast_math'"):
        nv.jit(fast_math=True)
    with pytest.raises(TypeError, match="'lineinfo'"):
        nv.jit(saxpy, lineinfo=True)


def test_bad_option_values():
    with pytest.raises(ValueError, match="error_model"):
        nv.jit(error_model="c")
    with pytest.raises(ValueError, match="narrow"):
        nv.jit(narrow="doubles")


def test_calling_a_kernel_without_configuration_points_at_forall():
    kernel = nv.jit(saxpy)
    with pytest.raises(TypeError) as info:
        kernel(1.0, np.zeros(3), np.zeros(3), np.zeros(3))
    message = str(info.value)
    assert "saxpy.forall(n)" in message
    assert "saxpy[groups, local_size]" in message


# ---------------------------------------------------------------- launch configurations


def test_launch_configuration_normalised_to_three_tuples():
    kernel = nv.jit(saxpy)
    launch = kernel[4, 64]
    assert launch.groups == (4, 1, 1) and launch.local_size == (64, 1, 1)
    launch = kernel[(4, 2), (8, 8)]
    assert launch.groups == (4, 2, 1) and launch.local_size == (8, 8, 1)
    launch = kernel[(1, 2, 3), (4, 5, 6)]
    assert launch.groups == (1, 2, 3) and launch.local_size == (4, 5, 6)
    launch = kernel[np.int64(3), np.int32(32)]
    assert launch.groups == (3, 1, 1) and launch.local_size == (32, 1, 1)
    assert type(launch.groups[0]) is int


def test_launch_configuration_is_reused():
    kernel = nv.jit(saxpy)
    assert kernel[4, 64] is kernel[4, 64]
    assert kernel[4, 64] is not kernel[4, 32]


@pytest.mark.parametrize(
    "bad, error",
    [
        ((4,), TypeError),
        ((4, 64, None, None), TypeError),
        (((1, 2, 3, 4), 64), TypeError),
        ((4.0, 64), TypeError),
        ((4, (8, "8")), TypeError),
        ((4, 0), ValueError),
        ((-1, 64), ValueError),
    ],
)
def test_bad_launch_configurations(bad, error):
    kernel = nv.jit(saxpy)
    with pytest.raises(error):
        kernel[bad]


def test_forall_default_local_sizes_and_group_counts():
    kernel = nv.jit(saxpy)
    launch = kernel.forall(100)
    assert launch.local_size == (64, 1, 1) and launch.groups == (2, 1, 1)
    launch = kernel.forall(128)
    assert launch.groups == (2, 1, 1)
    launch = kernel.forall((17, 9))
    assert launch.local_size == (8, 8, 1) and launch.groups == (3, 2, 1)
    launch = kernel.forall((5, 4, 9))
    assert launch.local_size == (4, 4, 4) and launch.groups == (2, 1, 3)
    launch = kernel.forall(10, local_size=4)
    assert launch.local_size == (4, 1, 1) and launch.groups == (3, 1, 1)


def test_forall_bad_extent():
    kernel = nv.jit(saxpy)
    with pytest.raises(TypeError, match="extent"):
        kernel.forall((1, 2, 3, 4))
    with pytest.raises(ValueError):
        kernel.forall(-5)


# ---------------------------------------------------------------- argument typing


def test_typeof_arguments():
    typeof = arguments.typeof_argument
    assert typeof(np.zeros(4, np.float32), 0) == types.Array(types.float32, 1, "C")
    # NumPy arrays are typed as their contiguous device copy: F order kept, strided ones C.
    assert typeof(np.zeros((3, 4), np.int32).T, 0) == types.Array(types.int32, 2, "F")
    assert typeof(np.zeros((3, 4), np.int32)[:, ::2], 0) == types.Array(types.int32, 2, "C")
    assert typeof(np.zeros(3, np.bool_), 0) == types.Array(types.boolean, 1, "C")
    assert typeof(3, 0) == types.int64
    assert typeof(2.5, 0) == types.float64
    assert typeof(True, 0) == types.boolean
    assert typeof(np.float32(1), 0) == types.float32
    assert typeof(np.uint32(1), 0) == types.uint32


@pytest.mark.parametrize("value, name", [([1, 2], "list"), ({"a": 1}, "dict"), ("s", "str")])
def test_unsupported_argument_names_position_and_type(value, name):
    with pytest.raises(TypeError, match=f"argument 2 has type {name}"):
        arguments.typeof_argument(value, 2)


@pytest.mark.parametrize("array", [np.array(["a"]), np.array([object()]), np.array("a")])
def test_unsupported_numpy_arrays(array):
    with pytest.raises(TypeError, match="argument 1: NumPy arrays of dtype"):
        arguments.typeof_argument(array, 1)


def test_parse_signature_string():
    kernel = nv.jit(saxpy)
    parsed = arguments.parse_argtypes("void(float32, float32[::1], float32[::1], float32[::1])")
    assert parsed == (types.float32,) + (types.Array(types.float32, 1, "C"),) * 3
    assert arguments.parse_argtypes(types.int32) == (types.int32,)
    with pytest.raises(TypeError):
        kernel.compile((types.float32, "x"))


# ---------------------------------------------------------------- stubs and typing


def test_stubs_outside_a_kernel_raise():
    for stub in (nv.global_id, nv.local_id, nv.group_id, nv.local_size, nv.num_groups):
        with pytest.raises(NotImplementedError, match="inside a kernel"):
            stub(0)
    assert nv.global_id is stubs.global_id


def test_intrinsics_typed_as_intp():
    def kernel(out):
        out[0] = nv.global_id(0) + nv.local_id(1) + nv.group_id(2)
        out[1] = nv.local_size(0) * nv.num_groups(1)

    typed = pipeline.type_kernel(kernel, (types.Array(types.int64, 1, "C"),), pipeline.Options())
    calls = {
        str(sig.return_type) for sig in typed.calltypes.values() if hasattr(sig, "return_type")
    }
    assert "int64" in calls
    assert typed.return_type == types.none


def test_intrinsic_axis_must_be_literal_0_to_2():
    def bad_axis(out):
        out[0] = nv.global_id(3)

    with pytest.raises(TypingError, match=r"global_id\(\) takes a constant axis 0, 1 or 2"):
        pipeline.type_kernel(bad_axis, (types.Array(types.int64, 1, "C"),), pipeline.Options())

    def runtime_axis(out, k):
        out[0] = nv.local_id(k)

    with pytest.raises(TypingError):
        pipeline.type_kernel(
            runtime_axis, (types.Array(types.int64, 1, "C"), types.int64), pipeline.Options()
        )


def test_typing_uses_math_and_numpy_scalars():
    import math

    def kernel(out, x):
        i = nv.global_id(0)
        out[i] = math.sqrt(x) + np.float32(abs(x)) + min(x, 2.0)

    typed = pipeline.type_kernel(
        kernel, (types.Array(types.float32, 1, "C"), types.float32), pipeline.Options()
    )
    assert typed.return_type == types.none


def test_typing_errors_surface_as_numba_typing_error():
    def kernel(out):
        out[0] = "text" + 1

    with pytest.raises(TypingError):
        pipeline.type_kernel(kernel, (types.Array(types.int64, 1, "C"),), pipeline.Options())


def test_typed_ir_has_no_phis():
    def kernel(out, n):
        acc = 0
        for k in range(n):
            if k % 2:
                acc += k
        out[0] = acc

    typed = pipeline.type_kernel(
        kernel, (types.Array(types.int64, 1, "C"), types.int64), pipeline.Options()
    )
    ops = {
        getattr(stmt.value, "op", None)
        for block in typed.func_ir.blocks.values()
        for stmt in block.body
        if hasattr(stmt, "value")
    }
    assert "phi" not in ops


def test_vulkan_target_registered():
    from numba.core.target_extension import GPU, target_registry

    from numba_vulkan.typing import target

    assert target_registry["vulkan"] is target.Vulkan
    assert issubclass(target.Vulkan, GPU)


def test_public_names():
    for name in (
        "jit",
        "global_id",
        "local_id",
        "group_id",
        "local_size",
        "num_groups",
        "VulkanUnsupportedError",
        "SpirvCodegenError",
        "VulkanSupportError",
        "VulkanPrecisionWarning",
        "runtime",
        "__version__",
        "to_device",
        "device_array",
        "device_array_like",
        "synchronize",
        "get_device",
        "select_device",
        "list_devices",
        "DeviceArray",
        "Device",
        "stream",
        "event",
        "pinned_array",
    ):
        assert hasattr(nv, name), name
    assert set(nv.__all__) <= set(dir(nv))


@pytest.mark.parametrize("options", [{"boundscheck": True}, {"error_model": "python"}])
def test_options_that_raise_in_kernels_compile_with_the_status_argument(options):
    # boundscheck and error_model='python' check inside the kernel: the compiled
    # kernel has raise sites and the hidden status argument after its own four.
    def divide(a, x, y, out):  # saxpy with a division
        i = nv.global_id(0)
        if i < out.size:
            out[i] = x[i] / a + y[i]

    kernel = nv.jit(**options)(divide)
    compiled = kernel.compile("(float32, float32[:], float32[:], float32[:])")
    assert compiled.sites and len(compiled.arguments) == 4
    assert compiled.hidden[-1] == ("status", ("status", None))
    assert [a.name for a in compiled.args if a.kind == "hidden"][-1] == "status.addr"
    _core.validate(compiled.words)
    plain = nv.jit(divide).compile("(float32, float32[:], float32[:], float32[:])")
    assert not plain.sites and not plain.hidden  # no checks, no hidden argument


def test_arrays_past_32_bit_indexing_are_detected():
    from numpy.lib.stride_tricks import as_strided

    base = np.zeros(1, np.int8)
    assert not arguments.needs_64bit_indices(np.zeros((1000, 1000), np.float32))
    # Views that claim 2^31 elements (no memory behind them is ever touched).
    assert arguments.needs_64bit_indices(as_strided(base, shape=(2**31,), strides=(1,)))
    assert not arguments.needs_64bit_indices(as_strided(base, shape=(2**31 - 1,), strides=(1,)))
    # A strided 2-d view whose last element is past 2^31 - 1.
    assert arguments.needs_64bit_indices(as_strided(base, shape=(3, 2), strides=(2**30, 1)))
    assert not arguments.needs_64bit_indices(as_strided(base, shape=(2, 2), strides=(2**30, 1)))
