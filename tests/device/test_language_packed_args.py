"""Tuples, namedtuples and complex numbers as kernel arguments (frontend/packed.py,
packed_args.py): flattened into scalar parameters; results equal to numba.njit's."""

import collections

import numba
import numpy as np
import pytest

import numba_vulkan as nv

pytestmark = [pytest.mark.device, pytest.mark.usefixtures("device")]

Params = collections.namedtuple("Params", "scale offset flag")


def both(body, out, *args):
    """Run `body(out, i, *args)` for every i on the device and with numba.njit."""
    dev = nv.jit(body)

    if len(args) == 1:
        @nv.jit
        def kernel(out, a):
            dev(out, nv.global_id(0), a)
    else:
        @nv.jit
        def kernel(out, a, b):
            dev(out, nv.global_id(0), a, b)

    got = np.zeros_like(out)
    kernel.forall(out.size)(got, *args)
    want = np.zeros_like(out)
    cpu = numba.njit(body)
    for i in range(out.size):
        cpu(want, i, *args)
    return got, want, kernel


def test_tuple_of_scalars_and_unpacking():
    def body(out, i, t):
        if i < out.size:
            a, b, c = t
            out[i] = a * i + b - c + t[0] + len(t)

    for t in [(2, 3.5, np.float32(0.25)), (np.int32(-7), 1.0, np.float32(8))]:
        got, want, _ = both(body, np.zeros(32), t)
        np.testing.assert_array_equal(got, want)


def test_namedtuple_fields_and_mixed_types():
    def body(out, i, p):
        if i < out.size:
            v = p.scale * i + p.offset
            out[i] = v if p.flag else -v

    for p in [Params(3, -2.5, True), Params(np.int16(-4), np.float32(1.5), False)]:
        got, want, _ = both(body, np.zeros(16), p)
        np.testing.assert_array_equal(got, want)


def test_nested_tuples_and_uint64_items():
    def body(out, i, t):
        if i < out.size:
            (a, b), c = t
            out[i] = (a + b * np.uint64(i)) ^ c

    t = ((np.uint64(2**63 + 5), np.uint64(3)), np.uint64(2**40 + 1))
    got, want, _ = both(body, np.zeros(8, np.uint64), t)
    np.testing.assert_array_equal(got, want)


def test_complex_scalars_of_both_widths():
    def body(out, i, z, w):
        if i < out.size:
            v = z * i + w * w.conjugate() - z / (w + 1)
            out[i] = v.real + 2 * v.imag + abs(z)

    for z, w in [(1.5 - 2j, np.complex128(0.25 + 3j)),
                 (np.complex64(1 + 1j), np.complex64(-2 + 0.5j))]:  # fmt: skip
        got, want, _ = both(body, np.zeros(16), z, w)
        np.testing.assert_allclose(got, want, rtol=1e-6 if isinstance(z, np.complex64) else 1e-14)


def test_tuple_holding_complex():
    def body(out, i, t):
        if i < out.size:
            out[i] = (t[0] * t[1]).imag + i

    got, want, _ = both(body, np.zeros(4), (2 + 1j, 3.0))
    np.testing.assert_array_equal(got, want)


def test_fast_path_and_other_specialisations():
    @nv.jit
    def k(out, t):
        i = nv.global_id(0)
        if i < out.size:
            out[i] = t[0] + t[1] * i

    out = nv.device_array(8, np.float64)
    k.forall(8)(out, (1.0, 2.0))
    k.forall(8)(out, (3.0, 4.0))
    assert k.slow_path_count == 1  # the second launch reused the flattened launcher
    np.testing.assert_array_equal(out.copy_to_host(), 3.0 + 4.0 * np.arange(8))
    k.forall(8)(out, (1, 2))  # int items: another specialisation
    np.testing.assert_array_equal(out.copy_to_host(), 1 + 2 * np.arange(8))
    k.forall(8)(out, (1.0, 2.0, 5.0))  # a longer tuple: another one again
    np.testing.assert_array_equal(out.copy_to_host(), 1.0 + 2.0 * np.arange(8))
    assert len(k.specialisations) == 3
    k.forall(8)(out, Params(1.0, 0.5, True))  # a namedtuple is not a plain tuple
    np.testing.assert_array_equal(out.copy_to_host(), 1.0 + 0.5 * np.arange(8))
    assert len(k.specialisations) == 4


def test_narrowed_int_in_a_tuple_is_checked():
    @nv.jit(narrow="ints")
    def k(out, t):
        out[0] = t[0]

    with pytest.raises(OverflowError, match="argument 1"):
        k.forall(1)(np.zeros(1, np.int64), (2**40,))


def test_tuple_mixing_arrays_and_scalars_is_refused_clearly():
    @nv.jit
    def k(out, t):
        out[0] = t[0][0] + t[1]

    with pytest.raises(nv.VulkanUnsupportedError, match=r"kernel arguments of type Tuple\(array.*argument .t."):
        k.forall(1)(np.zeros(1), (np.zeros(2), 1.0))


def test_tuples_of_arrays_device_and_numpy():
    @nv.jit
    def axpy(arrays, a):
        x, y, out = arrays
        i = nv.global_id(0)
        if i < out.size:
            out[i] = a * x[i] + y[i] + len(arrays) + arrays[2].size - out.size

    x = np.arange(16.0)
    y = np.ones(16)
    out = np.zeros(16)
    axpy.forall(16)((x, y, out), 2.0)  # NumPy arrays inside: copied in, and back
    np.testing.assert_array_equal(out, 2 * x + y + 3)
    dx, dy, dout = nv.to_device(x), nv.to_device(y), nv.device_array(16, np.float64)
    for a in (1.0, 3.0):
        axpy.forall(16)((dx, dy, dout), a)
    np.testing.assert_array_equal(dout.copy_to_host(), 3 * x + y + 3)
    assert axpy.slow_path_count == 1  # device arrays: the fast path, the same launcher


def test_tuple_of_arrays_through_a_device_function():
    @nv.jit(device=True)
    def pick(arrays, i):
        a, b = arrays
        return a[i] - b[i]

    @nv.jit(device=True)
    def swap(arrays):
        return arrays[1], arrays[0]

    @nv.jit
    def k(out, arrays):
        i = nv.global_id(0)
        if i < out.size:
            out[i] = pick(arrays, i) + swap(arrays)[1][i]

    a, b = np.arange(8, dtype=np.int32), np.arange(8, dtype=np.int32)[::-1].copy()
    out = np.zeros(8, np.int32)
    k.forall(8)(out, (a, b))
    np.testing.assert_array_equal(out, a - b + a)
