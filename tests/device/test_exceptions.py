"""Exceptions raised in kernels (frontend/exceptions.py, runtime/reports.py): the first
failing invocation is reported on the host at the next synchronisation, with its class,
message, kernel, source line and global id, and the device stays usable.

PYTEST_DONT_REWRITE: the kernels' own assert statements must stay Python asserts.
"""

import inspect
import os
import subprocess
import sys

import numba
import numpy as np
import pytest

import numba_vulkan as nv
from numba_vulkan import config

pytestmark = [pytest.mark.device, pytest.mark.usefixtures("device")]


def line_of(func, marker):
    lines, first = inspect.getsourcelines(func)
    return first + next(k for k, text in enumerate(lines) if marker in text)


class ChosenError(Exception):
    pass


@nv.jit
def one_raiser(out, chosen):
    i = nv.global_id(0)
    if i < out.size:
        if i == chosen:
            raise ChosenError("the chosen one")  # MARK
        out[i] = 1


def test_one_invocation_among_a_million_is_reported(device):
    n = 1 << 20
    out = nv.to_device(np.zeros(n, np.int32))
    one_raiser.forall(n)(out, 777_777)  # device arrays: asynchronous, nothing raised yet
    with pytest.raises(ChosenError) as info:
        device.synchronize()
    e = info.value
    assert e.global_id == (777_777, 0, 0) and e.kernel == "one_raiser"
    assert e.line == line_of(one_raiser.py_func, "# MARK")
    text = str(e)
    assert text.startswith("the chosen one") and "777777" in text and f":{e.line}" in text
    host = out.copy_to_host()
    assert host[777_777] == 0  # the raising invocation stopped before its store
    assert host.sum() == n - 1
    device.synchronize()  # reported once: nothing left


@nv.jit
def parity_raiser(out):
    i = nv.global_id(0)
    if i < out.size:
        if i % 2 == 0:
            raise ValueError("even")
        raise KeyError("odd")


def test_every_invocation_raises_and_exactly_one_record_wins(device):
    out = nv.to_device(np.zeros(1 << 20, np.int32))
    for _ in range(3):
        parity_raiser.forall(out.size)(out)
        with pytest.raises((ValueError, KeyError)) as info:
            device.synchronize()
        e = info.value
        # The record is one invocation's: its class matches its id's parity.
        assert (e.global_id[0] % 2 == 0) == isinstance(e, ValueError), (e, e.global_id)
        assert 0 <= e.global_id[0] < out.size


@nv.jit
def checked_sqrt(x):
    assert x >= 0, "negative input"  # HELPER
    return x**0.5


@numba.njit
def njit_helper(x):
    if x > 100:
        raise OverflowError("too large")  # NJIT
    return x + 1


@nv.jit
def uses_helpers(a, out):
    i = nv.global_id(0)
    if i < a.size:
        out[i] = checked_sqrt(a[i]) + njit_helper(a[i])


def test_assert_and_raise_in_device_functions(device):
    a = np.array([4.0, 9.0, -1.0, 16.0])
    out = np.zeros_like(a)
    with pytest.raises(AssertionError, match="negative input") as info:
        uses_helpers.forall(a.size)(a, out)  # NumPy arguments: reported by the launch
    assert info.value.global_id == (2, 0, 0)
    assert info.value.line == line_of(checked_sqrt.py_func, "# HELPER")
    a[2] = 200.0
    with pytest.raises(OverflowError, match="too large") as info:
        uses_helpers.forall(a.size)(a, out)
    assert info.value.line == line_of(njit_helper.py_func, "# NJIT")
    a[2] = 25.0
    uses_helpers.forall(a.size)(a, out)  # the device is usable afterwards
    np.testing.assert_allclose(out, np.sqrt(a) + a + 1)


@nv.jit
def bare(out, flag):
    i = nv.global_id(0)
    if flag and i == 1:
        raise IndexError
    if i < out.size:
        out[i] = i


def test_asynchronous_launches_report_at_copy_to_host_and_stay_usable(device):
    out = nv.to_device(np.zeros(64, np.int64))
    bare.forall(64)(out, True)
    bare.forall(64)(out, True)  # two launches raise: one exception is reported
    with pytest.raises(IndexError) as info:
        out.copy_to_host()
    assert info.value.global_id == (1, 0, 0)
    assert str(info.value).startswith("(in kernel 'bare'")  # no message: the place only
    bare.forall(64)(out, False)
    np.testing.assert_array_equal(out.copy_to_host(), np.arange(64))
    device.synchronize()


def test_synchronize_without_report_keeps_the_exception(device):
    out = nv.to_device(np.zeros(8, np.int64))
    bare.forall(8)(out, True)
    device.synchronize(report=False)
    with pytest.raises(IndexError):
        nv.synchronize()


@nv.jit
def grid2d(out):
    x, y = nv.global_id(0), nv.global_id(1)
    if x == 5 and y == 3:
        raise RuntimeError("here")
    if x < out.shape[0] and y < out.shape[1]:
        out[x, y] = 1


def test_global_id_of_a_2d_grid(device):
    out = nv.to_device(np.zeros((16, 8), np.int32))
    grid2d.forall((16, 8))(out)
    with pytest.raises(RuntimeError, match="here") as info:
        device.synchronize()
    assert info.value.global_id == (5, 3, 0)


# ------------------------------------------------------------------ boundscheck


@nv.jit(boundscheck=True)
def read1(a, i, out):
    out[0] = a[i]


@nv.jit(boundscheck=True)
def read2(a, i, j, out):
    out[0] = a[i, j]


@nv.jit(boundscheck=True)
def write3(a, i, j, k):
    a[i, j, k] = 1.0


@pytest.mark.parametrize("kernel, shape, index, message", [
    (read1, (5,), (5,), "index 5 is out of bounds for axis 0 with size 5 (array 'a')"),
    (read1, (5,), (-6,), "index -6 is out of bounds for axis 0 with size 5 (array 'a')"),
    (read2, (4, 7), (3, 7), "index 7 is out of bounds for axis 1 with size 7 (array 'a')"),
    (read2, (4, 7), (-5, 0), "index -5 is out of bounds for axis 0 with size 4 (array 'a')"),
    (write3, (2, 3, 4), (1, 2, 4), "index 4 is out of bounds for axis 2 with size 4 (array 'a')"),
    (write3, (2, 3, 4), (2, 0, 0), "index 2 is out of bounds for axis 0 with size 2 (array 'a')"),
    (write3, (2, 3, 4), (0, 3, 0), "index 3 is out of bounds for axis 1 with size 3 (array 'a')"),
])  # fmt: skip
def test_boundscheck_names_array_axis_index_and_extent(kernel, shape, index, message):
    a = np.zeros(shape)
    extra = (np.zeros(1),) if kernel is not write3 else ()
    with pytest.raises(IndexError) as info:
        kernel[1, 1](a, *index, *extra)
    assert str(info.value).startswith(message)


def test_boundscheck_passes_indices_inside_and_negative_ones(device):
    a = np.arange(20.0).reshape(4, 5)
    out = np.zeros(1)
    read2[1, 1](a, -1, -5, out)
    assert out[0] == a[-1, -5]
    b = np.zeros((2, 3, 4))
    write3[1, 1](b, 1, -1, 3)
    assert b[1, -1, 3] == 1.0 and b.sum() == 1.0


def test_without_boundscheck_nothing_is_checked(device):
    @nv.jit
    def plain(a, i, out):
        out[0] = a[i]

    assert not plain.compile((numba.float64[::1], numba.int64, numba.float64[::1])).sites


def test_numba_boundscheck_environment_variable(tmp_path):
    script = tmp_path / "bc.py"
    script.write_text(
        "import numpy as np, numba_vulkan as nv\n"
        "@nv.jit\n"
        "def k(a, i):\n"
        "    a[i] = 1\n"
        "try:\n"
        "    k[1, 1](np.zeros(3), 3)\n"
        "except IndexError as e:\n"
        "    print('IndexError:', e)\n"
    )
    env = dict(os.environ, NUMBA_BOUNDSCHECK="1")
    env["PYTHONPATH"] = os.pathsep.join(sys.path)
    out = subprocess.run([sys.executable, str(script)], env=env, capture_output=True, text=True,
                         timeout=120)  # fmt: skip
    assert "IndexError: index 3 is out of bounds for axis 0 with size 3" in out.stdout, out.stderr


# ------------------------------------------------------------------ error_model


def divisions(out, x, y):
    out[0] = x // y
    out[1] = x % y
    out[2] = x / y


@pytest.mark.parametrize("x, y, message", [
    (7, 0, "integer division by zero"),
    (7.0, 0.0, "division by zero"),
    (7.0, -0.0, "division by zero"),
    (np.int32(7), np.int32(0), "integer division by zero"),
])  # fmt: skip
def test_error_model_python_raises_zero_division_as_numba_njit(x, y, message):
    out = np.zeros(3)
    with pytest.raises(ZeroDivisionError) as info:
        nv.jit(error_model="python")(divisions)[1, 1](out, x, y)
    assert str(info.value).startswith(message + " (")
    with pytest.raises(ZeroDivisionError, match=f"^{message}$"):
        numba.njit(error_model="python")(divisions)(out, x, y)


@nv.jit(error_model="python")
def modulo_only(out, x, y):
    out[0] = x % y


def test_error_model_python_modulo_messages(device):
    out = np.zeros(1)
    with pytest.raises(ZeroDivisionError, match="^integer modulo by zero"):
        modulo_only[1, 1](out, 5, 0)
    with pytest.raises(ZeroDivisionError, match="^modulo by zero"):
        modulo_only[1, 1](out, 5.0, 0.0)
    modulo_only[1, 1](out, 5, 3)
    assert out[0] == 2


def test_error_model_numpy_gives_numpy_results(device):
    out = np.zeros(3)
    nv.jit(divisions)[1, 1](out, 7, 0)
    np.testing.assert_array_equal(out, [0, 0, np.inf])
    nv.jit(error_model="python")(divisions)[1, 1](out, 7, 2)
    np.testing.assert_array_equal(out, [3, 1, 3.5])
    assert config.BOUNDSCHECK in (None, 0, 1)


@nv.jit(error_model="python")
def divmod_and_complex(out, x, y, wr, wi):
    q, r = divmod(x, y)
    out[0] = q + r
    c = (2 + 4j) / complex(wr, wi)
    out[1] = c.real


@pytest.mark.parametrize("x, y, w, message", [
    (7, 0, 1.0, "integer divmod by zero"),
    (7.0, 0.0, 1.0, "modulo by zero"),
    (7, 2, 0.0, "complex division by zero"),
])  # fmt: skip
def test_error_model_python_divmod_and_complex_division(x, y, w, message):
    out = np.zeros(2)
    with pytest.raises(ZeroDivisionError, match=f"^{message} "):
        divmod_and_complex[1, 1](out, x, y, 0.0, w)
    with pytest.raises(ZeroDivisionError, match=f"^{message}$"):
        numba.njit(error_model="python")(divmod_and_complex.py_func)(out, x, y, 0.0, w)
    divmod_and_complex[1, 1](out, 7, 2, 0.0, 2.0)
    np.testing.assert_array_equal(out, [4, 2])  # (2 + 4j) / 2j = 2 - 1j


@nv.jit(boundscheck=True)
def views_and_local_arrays(a, i, which):
    v = a[1:4]
    loc = nv.local.array(3, np.float32)
    sh = nv.shared.array(5, np.float32)
    loc[0] = 0
    sh[0] = 0
    if which == 0:
        v[i] = 1
    elif which == 1:
        loc[i] = 1
    else:
        sh[i] = 2
        a[0] = sh[0] + loc[0]


@pytest.mark.parametrize("which, message", [
    (0, "index 5 is out of bounds for axis 0 with size 3 (array 'v')"),
    (1, "index 5 is out of bounds for axis 0 with size 3 (array 'loc')"),
    (2, "index 5 is out of bounds for axis 0 with size 5 (array 'sh')"),
])  # fmt: skip
def test_boundscheck_of_views_local_and_shared_arrays(which, message):
    with pytest.raises(IndexError) as info:
        views_and_local_arrays[1, 1](np.zeros(10, np.float32), 5, which)
    assert str(info.value).startswith(message)
    a = np.zeros(10, np.float32)
    views_and_local_arrays[1, 1](a, 2, which)  # in bounds: no error


@nv.jit
def far(chosen):
    if nv.global_id(0) == chosen:
        raise ValueError("far")


def test_global_id_past_the_first_dispatch_of_a_split_grid(device):
    limit = device.info.max_groups[0] * 64  # forall's 64 invocations per group
    chosen = limit + 12_345  # in the second dispatch of the split grid
    far.forall(limit + 20_000)(np.int64(chosen))
    with pytest.raises(ValueError) as info:
        device.synchronize()
    assert info.value.global_id == (chosen, 0, 0)


@nv.jit(narrow=True, boundscheck=True)
def narrowed(out, chosen):
    i = nv.global_id(0)
    if i == chosen:
        out[0] = out[i + out.size]


def test_narrowed_kernels_report_values(device):
    out = nv.to_device(np.zeros(3))
    narrowed.forall(4)(out, 2)
    with pytest.raises(IndexError, match="^index 5 is out of bounds for axis 0 with size 3") as e:
        device.synchronize()
    assert e.value.global_id == (2, 0, 0)


@nv.jit
def writes_two(a, b, chosen):
    i = nv.global_id(0)
    if i < a.size:
        a[i] = 1
        b[i] = 2
        if i == chosen:
            raise ValueError("after both stores")


def test_numpy_arguments_are_all_copied_back_before_the_exception(device):
    a, b = np.zeros(8), np.zeros(8)
    with pytest.raises(ValueError, match="after both stores"):
        writes_two.forall(8)(a, b, 3)
    np.testing.assert_array_equal(a, np.ones(8))
    np.testing.assert_array_equal(b, np.full(8, 2.0))


def test_a_kernel_on_a_stream_reports_at_the_stream_synchronize(device, capsys):
    s = nv.stream()
    out = nv.to_device(np.zeros(64, np.int64))
    bare[1, 64, s](out, True)
    with pytest.raises(IndexError) as info:
        s.synchronize()
    assert info.value.global_id == (1, 0, 0)
    bare[1, 64, s](out, False)
    s.synchronize()  # nothing left to report
    np.testing.assert_array_equal(out.copy_to_host(), np.arange(64))
