"""Array views, iteration and reductions: modules validate; what is refused names the line."""

import inspect

import numpy as np
import pytest

import numba_vulkan as nv
from numba_vulkan import VulkanUnsupportedError

SIG2 = "void(int64[:, ::1], float64[:, :])"


def line_of(func, marker):
    lines, first = inspect.getsourcelines(func)
    for offset, text in enumerate(lines):
        if marker in text:
            return first + offset
    raise AssertionError(marker)


def k_everything(out, f):
    i = nv.global_id(0)
    if i < out.shape[0]:
        row = out[i, ::-1]
        acc = 0
        for j, v in enumerate(row[1:]):
            acc += j * v
        for x, y in zip(f[i], f.T[0]):
            acc += int(x * y)
        for r in f:
            acc += r.argmax()
        out[i, 1::2] = acc
        f[i].fill(f[:, 1:].sum() + f[i].mean() + np.dot(f[i], f[0]))
        out[i, 0] = f.T[::2, 1:].min() > 0


def test_views_iteration_and_reductions_validate():
    kernel = nv.jit(k_everything).compile(SIG2)
    assert kernel.words.size > 0
    assert "red" in kernel.kir and "iter" in kernel.kir  # the loops the front end wrote




def k_expr_slice(out, f):
    out[0, 0] = (f * 2)[1:].sum()  # MARK


def k_zero_step(out, f):
    out[0, 0] = out[0, ::0].sum()  # MARK


def k_overlap(out, f):
    out[1:, :] = out[:-1, :]  # MARK


def k_enumerate_2d(out, f):
    for j, r in enumerate(out):  # MARK
        out[0, 0] = j


def k_broadcast(out, f):
    out[:, :] = out[0]  # MARK


def k_axis_of_1d(out, f):
    out[0, 0] = out[0].sum(axis=1)  # MARK


@pytest.mark.parametrize(
    "func, words",
    [
        (k_expr_slice, "views"),
        (k_zero_step, "step of zero"),
        (k_overlap, "more than one dimension (they may overlap)"),
        (k_enumerate_2d, "enumerate/zip"),
        (k_broadcast, "broadcasting"),
        (k_axis_of_1d, "axis 1 of a 1-d array"),
    ],
)
def test_refusals_name_the_construct_and_line(func, words):
    with pytest.raises(VulkanUnsupportedError) as info:
        nv.jit(func).compile(SIG2)
    message = str(info.value)
    assert words in message, message
    assert str(line_of(func, "# MARK")) in message, message


def test_array_library_typing_is_loaded_only_when_used():
    """numba.np.linalg imports SciPy (half a second of first-compile time): kernels that do
    not call a.sum()/np.dot... must not pay it."""
    import subprocess
    import sys

    code = (
        "import sys, numba_vulkan as nv\n"
        "@nv.jit\n"
        "def k(a):\n"
        "    a[nv.global_id(0)] = 1\n"
        "k.compile('void(int64[::1])')\n"
        "assert 'numba.np.linalg' not in sys.modules\n"
        "@nv.jit\n"
        "def r(a):\n"
        "    a[0] = a[1:].sum()\n"
        "r.compile('void(int64[::1])')\n"
        "assert 'numba.np.linalg' in sys.modules\n"
    )
    subprocess.run([sys.executable, "-c", code], check=True)
