"""Every refusal is ours (issue 6, item 8): constructs a kernel cannot express raise
VulkanUnsupportedError naming the construct and its source line, without Numba's internal
wording or object addresses, whether the front end or Numba's typing finds them."""

import math
import re

import numba
import numpy as np
import pytest

import numba_vulkan as nv
from numba_vulkan.errors import VulkanUnsupportedError


def k_missing_nv(o):
    o[0] = nv.missing_attr


def k_missing_shared(o):
    o[0] = nv.shared.missing(3)


def k_missing_atomic(o):
    o[0] = nv.atomic.missing(o, 0, 1)


def k_list(o):
    x = [1, 2]
    o[0] = x[0]


def k_generator(o):
    o[0] = sum(i for i in range(3))


def k_array_method(o):
    o[0] = o.view(np.int32)[0]


def k_copy_method(o):
    o[0] = o.copy()[0]


def k_number_class_of_array(o):
    o[0] = np.float32(o)


def k_setattr(o):
    x = 1
    x.foo = 3


def k_log_base(o):
    o[0] = math.log(o[0], 2.0)


def k_sorted(o):
    o[0] = sorted((3, 1))[0]


def k_expr_view(o):
    o[0] = np.sqrt(o)[1:][0]


def k_str(o):
    o[0] = f"{o[0]}" == "1"


def k_dict(o):
    d = {1: 2}
    o[0] = d[1]


def k_unpack_star(o):
    a, *b = (1, 2, 3)
    o[0] = a


def k_unpack_length(o):
    a, b = (1, 2, 3)
    o[0] = a


def k_np_add_bools(o):
    o[0] = np.add(o[0] > 0, o[1] > 0)


CASES = [
    (k_missing_nv, "'numba_vulkan.missing_attr' (nv.missing_attr) does not exist"),
    (k_missing_shared, "'nv.shared.missing' does not exist"),
    (k_missing_atomic, "'nv.atomic.missing' does not exist"),
    (k_list, "building a list"),
    (k_generator, "generator expressions and yield"),
    (k_array_method, "the method '.view()' of array(float64, 1d, C)"),
    (k_copy_method, "the method '.copy()' of array(float64, 1d, C)"),
    (k_number_class_of_array, "calling 'float32' with (array(float64, 1d, C))"),
    (k_setattr, "setting the attribute '.foo'"),
    (k_log_base, "'log(float64, float64)' is not supported"),
    (k_sorted, "calling 'sorted'"),
    (k_expr_view, "views (slices, a[i] of an N-d array, .T) of array expressions"),
    (k_str, "calling 'str'"),
    (k_dict, "building a dict"),
    (k_unpack_star, "UNPACK_EX"),
    (k_unpack_length, "(3 items) into 2 names"),
    (k_np_add_bools, "of bools (write | or & instead)"),
]


@pytest.mark.parametrize("fn,words", CASES, ids=[c[0].__name__ for c in CASES])
def test_refusal_names_the_construct_and_line(fn, words):
    with pytest.raises(VulkanUnsupportedError) as info:
        nv.jit(fn).compile((numba.float64[::1],))
    text = re.sub(r"\x1b\[[0-9;]*m", "", str(info.value))
    assert words in text
    assert "is not supported in Vulkan kernels" in text or "not supported in Vulkan" in text
    assert not re.search(r"0x[0-9a-f]{6,}", text), text  # no object addresses
    for numba_words in ("During:", "No implementation of function", "Cannot resolve setattr",
                        "The use of yield"):  # fmt: skip
        assert numba_words not in text, text
    loc = info.value.loc
    assert loc is not None and loc.filename == __file__
    first = fn.__code__.co_firstlineno
    assert first <= loc.line <= first + 3, (loc.line, first)
