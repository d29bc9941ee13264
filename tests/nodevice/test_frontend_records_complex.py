"""Records and complex numbers compile to modules that validate; refusals name the line."""

import numba
import numpy as np
import pytest

import numba_vulkan as nv
from numba_vulkan import VulkanUnsupportedError

INNER = np.dtype([("p", np.int16), ("q", np.float32)], align=True)
REC = numba.from_dtype(np.dtype([("x", np.int32), ("y", np.float64), ("n", INNER),
                                 ("f", np.bool_)], align=True))  # fmt: skip


def k_records(out, r):
    i = nv.global_id(0)
    if i < out.size:
        e = r[i]
        out[i] = e.x + e.y + e["n"].p + r[i].n.q + e.f
        e.n.p = i
        r[i]["f"] = not e.f


def k_complex(out, a):
    i = nv.global_id(0)
    if i < out.size:
        z = a[i]
        out[i] = (z * z.conjugate() - 1j) / (z + 2) + abs(z) + complex(z.imag, 1.0)


def k_complex_arg(out, z):
    out[0] = z


def k_complex_pow(out, a):
    out[0] = a[0] ** 2 + a[1] ** a[0]


@pytest.mark.parametrize(
    "func, sig",
    [
        (k_records, (numba.float64[::1], REC[::1])),
        (k_complex, (numba.complex128[::1], numba.complex128[::1])),
        (k_complex, (numba.complex64[::1], numba.complex64[::1])),
        (k_complex_arg, (numba.complex128[::1], numba.complex128)),  # flattened: packed.py
        (k_complex_arg, (numba.complex64[::1], numba.complex64)),
        (k_complex_pow, (numba.complex128[::1],) * 2),  # complex ** (mathlib/cmathlib.py)
        (k_complex_pow, (numba.complex64[::1],) * 2),
    ],
)
def test_modules_validate(func, sig):
    kernel = nv.jit(func).compile(sig)
    assert kernel.words.size > 0


def k_complex_sum(out, a):
    out[0] = a.min()  # MARK


@pytest.mark.parametrize(
    "func, sig, words",
    [
        (k_complex_sum, (numba.complex128[::1],) * 2, "complex array"),
    ],
)
def test_complex_refusals(func, sig, words):
    with pytest.raises(VulkanUnsupportedError, match=words):
        nv.jit(func).compile(sig)
