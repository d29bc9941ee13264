"""What kernels cannot express is rejected at compile time, naming the construct
and the source line; a kernel called without a launch configuration is a
TypeError that points at forall."""

import inspect

import numpy as np
import pytest

import numba_vulkan as nv

pytestmark = [pytest.mark.device, pytest.mark.usefixtures("device")]


def line_of(func, marker):
    """Absolute line number of the first source line of `func` containing `marker`."""
    lines, first = inspect.getsourcelines(func)
    for offset, text in enumerate(lines):
        if marker in text:
            return first + offset
    raise AssertionError(f"{marker!r} not in {func.__name__}")


def uses_list(out):
    i = nv.global_id(0)
    values = [1, 2, 3]  # MARK
    if i < out.size:
        out[i] = values[i % 3]


def uses_dict(out):
    i = nv.global_id(0)
    table = {1: 2}  # MARK
    if i < out.size:
        out[i] = table[1]


def uses_try(out):
    i = nv.global_id(0)
    if i < out.size:
        try:  # MARK
            out[i] = 1
        except Exception:  # noqa: BLE001
            out[i] = 2


def uses_string(out):
    i = nv.global_id(0)
    s = "ab" + "c" * i  # MARK
    if i < out.size:
        out[i] = len(s)


def uses_recursion(out):
    i = nv.global_id(0)
    if i < out.size:
        out[i] = recursive(i)


@nv.jit
def recursive(n):
    if n <= 0:  # MARK
        return 0
    return recursive(n - 1) + 1  # RECURSE


@pytest.mark.parametrize(
    "func, words",
    [
        (uses_list, ("list",)),
        (uses_dict, ("dict",)),
        (uses_try, ("try", "except")),
        (uses_string, ("str",)),
    ],
    ids=["list", "dict", "try", "string"],
)
def test_unsupported_construct_names_construct_and_line(func, words):
    kernel = nv.jit(func)
    out = np.zeros(4, np.int32)
    with pytest.raises(nv.VulkanUnsupportedError) as info:
        kernel.forall(4)(out)
    message = str(info.value)
    assert any(w in message.lower() for w in words), message
    # The construct's line, or (for a compound statement) the first line of its body.
    line = line_of(func, "# MARK")
    assert str(line) in message or (words[0] == "try" and str(line + 1) in message), message
    assert isinstance(info.value, nv.VulkanUnsupportedError)


def test_recursion_is_rejected():
    kernel = nv.jit(uses_recursion)
    with pytest.raises(nv.VulkanUnsupportedError) as info:
        kernel.forall(4)(np.zeros(4, np.int32))
    message = str(info.value)
    assert "recurs" in message.lower()
    assert "'recursive'" in message, message
    assert str(line_of(uses_recursion, "out[i] = recursive(i)")) in message, message


def plain_helper(n):
    return n + 1


def uses_plain_function(out):
    i = nv.global_id(0)
    if i < out.size:
        out[i] = plain_helper(i)  # MARK


def test_calling_unknown_function_names_it_and_line():
    with pytest.raises(nv.VulkanUnsupportedError) as info:
        nv.jit(uses_plain_function).forall(4)(np.zeros(4, np.int32))
    message = str(info.value)
    assert "plain_helper" in message, message
    assert str(line_of(uses_plain_function, "# MARK")) in message, message


def test_try_message_names_try_except():
    with pytest.raises(nv.VulkanUnsupportedError) as info:
        nv.jit(uses_try).forall(4)(np.zeros(4, np.int32))
    message = str(info.value)
    assert "try/except" in message, message
    assert "mark_try_block" not in message, message


def test_unsupported_error_is_a_numba_error():
    from numba.core.errors import NumbaError

    assert issubclass(nv.VulkanUnsupportedError, NumbaError)


@nv.jit
def fill(out):
    i = nv.global_id(0)
    if i < out.size:
        out[i] = i


def test_call_without_launch_configuration_points_at_forall():
    with pytest.raises(TypeError, match="forall"):
        fill(np.zeros(4, np.int32))


def test_unknown_jit_option_is_a_type_error():
    with pytest.raises(TypeError):
        nv.jit(no_such_option=True)(fill.py_func if hasattr(fill, "py_func") else uses_list)


def test_error_does_not_poison_later_compiles():
    with pytest.raises(nv.VulkanUnsupportedError):
        nv.jit(uses_dict).forall(4)(np.zeros(4, np.int32))
    out = np.zeros(8, np.int32)
    fill.forall(8)(out)
    np.testing.assert_array_equal(out, np.arange(8))
