"""Device functions without a device: compile-only tests (every module is validated by
_core.compile) and the refusals of issue 6 items 1, 2 and 8."""

import inspect

import numba
import numpy as np
import pytest
from numba.core import types
from numba.extending import intrinsic, overload, register_jitable

import numba_vulkan as nv
from numba_vulkan import VulkanUnsupportedError

SIG = "void(int64[::1])"


def line_of(func, marker):
    lines, first = inspect.getsourcelines(func)
    for offset, text in enumerate(lines):
        if marker in text:
            return first + offset
    raise AssertionError(marker)


@nv.jit(device=True)
def helper(x, y=1):
    if x > 0:
        return x + y, True
    return -x, False


@nv.jit
def uses_helper(out):
    i = nv.global_id(0)
    if i < out.size:
        v, flag = helper(out[i], y=2)
        out[i] = v if flag else helper(v)[0]


def test_call_is_inlined_and_module_validates():
    kernel = uses_helper.compile(SIG)
    kir = kernel.kir
    assert "helper." in kir  # the callee's blocks, named after it
    assert kernel.words.size > 0


# -- recursion


@nv.jit
def rec(n):
    if n <= 0:
        return 0
    return rec(n - 1) + 1


@nv.jit
def ping(n):
    return pong(n - 1) if n > 0 else 0


@nv.jit
def pong(n):
    return ping(n - 1) + 1


@numba.njit
def njit_rec(n):
    return 0 if n <= 0 else njit_rec(n - 1)


def k_rec(out):
    out[0] = rec(3)  # MARK


def k_mutual(out):
    out[0] = ping(3)  # MARK


def k_njit_rec(out):
    out[0] = njit_rec(3)  # MARK


@pytest.mark.parametrize(
    "func, cycle",
    [
        (k_rec, "rec -> rec"),
        (k_mutual, "ping -> pong -> ping"),
        (k_njit_rec, "njit_rec -> njit_rec"),
    ],
    ids=["direct", "mutual", "njit"],
)
def test_recursion_is_refused_naming_the_cycle(func, cycle):
    with pytest.raises(VulkanUnsupportedError) as info:
        nv.jit(func).compile(SIG)
    message = str(info.value)
    assert "recursion" in message and cycle in message, message
    assert str(line_of(func, "# MARK")) in message, message


# -- options of callees


def test_debug_is_refused_on_kernels_and_callees():
    with pytest.raises(VulkanUnsupportedError, match="debug=True"):
        nv.jit(debug=True)(k_rec).compile(SIG)

    dbg = nv.jit(debug=True)(lambda x: x + 1)

    def k(out):
        out[0] = dbg(out[0])  # MARK

    with pytest.raises(VulkanUnsupportedError, match="debug=True") as info:
        nv.jit(k).compile(SIG)
    assert str(line_of(k, "# MARK")) in str(info.value)


def test_fastmath_mismatch_is_refused_not_ignored():
    fast = nv.jit(fastmath=True)(lambda x: x * 2.0)

    def k(out):
        out[0] = fast(out[0])

    with pytest.raises(VulkanUnsupportedError, match="fastmath"):
        nv.jit(k).compile("void(float32[::1])")
    nv.jit(fastmath=True)(k).compile("void(float32[::1])")  # same options: fine


def test_inline_option_is_accepted_both_ways():
    for inline in ("never", "always"):
        h = nv.jit(device=True, inline=inline)(lambda x: x + 3)

        def k(out):
            out[0] = h(out[0])

        assert nv.jit(k).compile(SIG).words.size > 0


def test_njit_helper_is_not_compiled_for_the_cpu():
    @numba.njit
    def plus2(x):
        return x + 2

    def k(out):
        out[0] = plus2(out[0])

    nv.jit(k).compile(SIG)
    assert plus2.signatures == []  # typed for Vulkan only, never compiled by Numba's CPU target


# -- @intrinsic (translated from LLVM IR: tests/nodevice/test_frontend_llvm_intrinsics.py)


@intrinsic
def llvm_thing(typingctx, x):
    def codegen(context, builder, sig, args):
        return args[0]

    return x(x), codegen


def test_intrinsic_compiles_and_validates():
    def k(out):
        out[0] = llvm_thing(out[0])

    assert nv.jit(k).compile(SIG).words.size > 0


# -- item 8: every refusal is ours


def k_nv_foo(out):
    out[0] = nv.foo(1)  # MARK


def k_nv_shared(out):
    s = nv.shared_array_that_does_not_exist(4, np.int64)  # MARK
    out[0] = s[0]


def k_bad_add(out):
    out[0] = "text" + 1  # MARK


def k_bad_attr(out):
    out[0] = out.no_such_attribute  # MARK


def k_bad_call(out):
    out[0] = helper(out[0], 1, 2, 3)  # MARK


def k_import(out):
    import math  # MARK

    out[0] = math.floor(out[0])


def k_store_global(out):
    global SIG
    SIG = 3  # MARK


def k_np_sum(out):
    out[0] = np.cumsum(out)[0]  # MARK


def cpu_only(x):
    return x


@overload(cpu_only, target="cpu")
def _ov_cpu_only(x):
    return lambda x: x + 7


def k_cpu_only(out):
    out[0] = cpu_only(out[0])  # MARK


@pytest.mark.parametrize(
    "func, words",
    [
        (k_import, "import"),
        (k_store_global, "global"),
        (k_np_sum, "cumsum"),
        (k_cpu_only, "another target"),
        (k_nv_foo, "numba_vulkan.foo"),
        (k_nv_shared, "shared_array_that_does_not_exist"),
        (k_bad_add, "add"),
        (k_bad_attr, "no_such_attribute"),
        (k_bad_call, "helper"),
    ],
    ids=["import", "global-store", "np.sum", "cpu-overload", "nv.foo", "nv.missing",
         "str+int", "attribute", "arity"],  # fmt: skip
)
def test_refusals_are_vulkan_errors_with_construct_and_line(func, words):
    with pytest.raises(VulkanUnsupportedError) as info:
        nv.jit(func).compile(SIG)
    message = str(info.value)
    assert words in message, message
    assert str(line_of(func, "# MARK")) in message, message
    assert "During:" not in message and "candidate implementations" not in message, message


def test_typed_argument_types_reach_the_callee():
    @nv.jit
    def widen(x):
        return x * 3

    def k(out, a):
        i = nv.global_id(0)
        out[i] = widen(a[i])

    kernel = nv.jit(k).compile((types.Array(types.int64, 1, "C"), types.Array(types.int32, 1, "C")))
    assert kernel.words.size > 0


@nv.jit
def bad_callee(x):
    return "text" + x  # BAD


def k_bad_callee(out):
    out[0] = bad_callee(out[0])  # MARK


def test_typing_error_inside_a_callee_points_at_the_callee_and_the_call():
    with pytest.raises(VulkanUnsupportedError) as info:
        nv.jit(k_bad_callee).compile(SIG)
    message = str(info.value)
    assert str(line_of(bad_callee.py_func, "# BAD")) in message, message
    assert f":{line_of(k_bad_callee, '# MARK')}" in message, message
    assert "During:" not in message


@register_jitable
def rj_rec(n):
    return 0 if n <= 0 else rj_rec(n - 1)


def test_recursion_through_register_jitable_is_refused():
    def k(out):
        out[0] = rj_rec(3)

    with pytest.raises(VulkanUnsupportedError, match="recursion.*rj_rec -> rj_rec"):
        nv.jit(k).compile(SIG)


@nv.jit(device=True)
def rec_when_false(n):
    if False:
        return rec_when_false(n)
    return n + 1


def test_recursion_in_a_pruned_branch_is_no_error():
    """Numba prunes the dead branch before typing, so the recursive call is never typed; the
    search for cycles runs only after a failed typing (pipeline.type_kernel_for_user)."""

    def k(out):
        out[0] = rec_when_false(out[1])

    assert nv.jit(k).compile(SIG).words.size > 0


def vulkan_only(x):
    return x


@overload(vulkan_only, target="vulkan")
def _ov_vulkan_only(x):
    return lambda x: x * 5


def test_overload_for_the_vulkan_target_is_used():
    def k(out):
        out[0] = vulkan_only(out[0])

    assert "const 5 : i64" in nv.jit(k).compile(SIG).kir
