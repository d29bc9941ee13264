"""Front end: unsupported constructs raise VulkanUnsupportedError naming the construct and line."""

import math

import numba
import pytest
from kir_host import *  # lower, run_kir, check and the modes
from test_frontend_kernels import _saxpy

from numba_vulkan import errors

# ---------------------------------------------------------------- rejected constructs


def _prints_array(a):
    print(a)


def _raises_dynamic(a):
    if a[0] < 0:
        raise ValueError(a[0])


def _slices(a):
    b = a[1::0]
    b[0] = 1


def _returns(a):
    return a[0]


def _lists(a):
    x = [1, 2, 3]
    a[0] = x[1]


def _partial_index(a):
    a[None, 0][0, 1] = 2


def _gcd_call(a, x):  # float ** float, sin, gamma are in the math library (docs/math.md)
    a[0] = math.gcd(x, 6)


def _unknown_call(a):
    a[0] = np.logaddexp(a[1], a[2])


@pytest.mark.parametrize(
    "fn,argtypes,words",
    [
        (_prints_array, [numba.float32[:]], "printing array(float32"),
        (_raises_dynamic, [numba.float32[:]], "arguments are not constants"),
        (_slices, [numba.float32[:]], "a slice step of zero"),
        (_returns, [numba.float32[:]], "returning a value from a kernel"),
        (_lists, [numba.int64[:]], "building a list"),
        (_gcd_call, [numba.int64[:], numba.int64], "calling 'math.gcd'"),
        (_unknown_call, [numba.float64[:]], "calling 'numpy.logaddexp'"),
        (_partial_index, [numba.float64[:, :]], "Tuple(none"),
        (_returns, [numba.complex128[:]], "returning a value from a kernel"),
    ],
)
def test_unsupported_constructs_name_the_construct_and_line(fn, argtypes, words):
    with pytest.raises(errors.VulkanUnsupportedError) as info:
        lower(fn, argtypes)
    assert words in str(info.value)
    loc = info.value.loc
    assert loc is not None and loc.filename == __file__
    first = fn.__code__.co_firstlineno
    assert first <= loc.line <= first + 4


def test_source_locations_are_recorded():
    lk = lower(_saxpy, [numba.float32[:]] * 3 + [numba.float32])
    assert lk.module.files == [_saxpy.__code__.co_filename]
    text = lk.module.print()
    assert "elemptr" in text
