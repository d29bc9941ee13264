"""Fortran-ordered (F-contiguous) device arrays: creation, copies both ways, views, their
typing (layout 'F', as numba.typeof types F NumPy arrays), kernels reading and writing
them against numba.njit on the same arrays, launchers that never take an array of
another layout than their specialisation's, and matrix tiles of F arrays."""

import numba
import numpy as np
import pytest
from matrix_support import c_copy_launcher, units_form

import numba_vulkan as nv
from numba_vulkan import arguments, cuda
from numba_vulkan import matrix as mx
from numba_vulkan.errors import VulkanUnsupportedError

SG = nv.get_device().info.subgroup_size


def _f(shape, dtype=np.int32, start=1):
    return np.asfortranarray(np.arange(start, start + np.prod(shape), dtype=dtype).reshape(shape))


def _layout(value):
    return arguments.typeof_argument(value, 0).layout


# ---------------------------------------------------------------- creation and copies


@pytest.mark.parametrize("shape", [(10,), (10, 12), (10, 12, 14)])
def test_created_in_f_order_has_numpy_strides_and_flags(shape):
    for d in (nv.device_array(shape, np.float64, order="F"), cuda.device_array(shape, order="F")):
        like = np.empty(shape, order="F")
        assert d.strides == like.strides
        assert d.flags["F_CONTIGUOUS"] and d.flags["C_CONTIGUOUS"] == like.flags.c_contiguous
        for made in (nv.device_array_like(d), cuda.device_array_like(d),
                     cuda.pinned_array_like(d), cuda.mapped_array_like(d)):
            assert made.strides == like.strides


def test_strides_of_a_contiguous_order_are_taken_and_others_refused():
    assert cuda.device_array((3, 4), np.float32, strides=(4, 12)).strides == (4, 12)
    assert cuda.device_array((3, 4), np.float32, strides=(16, 4)).strides == (16, 4)
    with pytest.raises(VulkanUnsupportedError, match="strides"):
        cuda.device_array((3, 4), np.float32, strides=(8, 24))
    with pytest.raises(ValueError, match="order"):
        nv.device_array((3, 4), order="K")


@pytest.mark.parametrize("shape", [(4, 6), (3, 4, 5)])
def test_copies_keep_f_order_both_ways(shape):
    h = _f(shape)
    d = nv.to_device(h)
    assert d.strides == h.strides and _layout(d) == "F"
    back = d.copy_to_host()
    assert back.flags.f_contiguous and not back.flags.c_contiguous
    np.testing.assert_array_equal(back, h)
    for out in (np.empty(shape, np.int32, order="F"), np.empty(shape, np.int32)):
        assert d.copy_to_host(out=out) is out
        np.testing.assert_array_equal(out, h)
    # Into an F array: from a C host array, an F one and a device array
    d.copy_to_device(np.ascontiguousarray(h[..., ::-1]))
    np.testing.assert_array_equal(d.copy_to_host(), h[..., ::-1])
    d.copy_to_device(nv.to_device(h))
    np.testing.assert_array_equal(d.copy_to_host(), h)
    # On a stream
    s = nv.stream()
    e = nv.to_device(h * 2, stream=s)
    got = e.copy_to_host(stream=s)
    s.synchronize()
    np.testing.assert_array_equal(got, h * 2)
    assert got.flags.f_contiguous


def test_views_of_f_arrays():
    h = _f((6, 8))
    d = nv.to_device(h)
    np.testing.assert_array_equal(d[1:5, 2:7].copy_to_host(), h[1:5, 2:7])
    np.testing.assert_array_equal(d[:, 3].copy_to_host(), h[:, 3])
    t = d.T  # the transpose of an F array is C-contiguous
    assert t.flags["C_CONTIGUOUS"] and _layout(t) == "C"
    np.testing.assert_array_equal(t.copy_to_host(), h.T)
    c = nv.to_device(np.ascontiguousarray(h))
    assert _layout(c.T) == "F" and _layout(c[:, ::2]) == "A" and _layout(d[:, 1:3]) == "F"
    np.testing.assert_array_equal(c.T.copy_to_host(), h.T)
    np.testing.assert_array_equal(d.copy().copy_to_host(), h)


def test_typing_follows_numba_typeof():
    for host in (_f((4, 5)), np.zeros((4, 5)), np.zeros(5), _f((2, 3, 4)), np.zeros((4, 6))[:, ::2],
                 np.zeros((1, 5), order="F"), np.zeros((0, 3), order="F")):
        want = numba.typeof(host).layout
        want = "C" if want == "A" else want  # a strided NumPy argument's device copy is C
        assert _layout(host) == want, host.strides
        if host.flags.c_contiguous or host.flags.f_contiguous:
            assert _layout(nv.to_device(host)) == numba.typeof(host).layout


# ---------------------------------------------------------------- kernels


@nv.jit
def mix2(a, b, out):
    i, j = nv.global_id(0), nv.global_id(1)
    if i < out.shape[0] and j < out.shape[1]:
        out[i, j] = a[i, j] * 7 - b[j, i] + i * 100 + j


@numba.njit
def mix2_cpu(a, b, out):
    for i in range(out.shape[0]):
        for j in range(out.shape[1]):
            out[i, j] = a[i, j] * 7 - b[j, i] + i * 100 + j


@nv.jit
def mix3(a, out):
    i = nv.global_id(0)
    if i < out.shape[0]:
        for j in range(out.shape[1]):
            for k in range(out.shape[2]):
                out[i, j, k] = a[i, j, k] * 3 + a[out.shape[0] - 1 - i, j, k] - k


@numba.njit
def mix3_cpu(a, out):
    for i in range(out.shape[0]):
        for j in range(out.shape[1]):
            for k in range(out.shape[2]):
                out[i, j, k] = a[i, j, k] * 3 + a[out.shape[0] - 1 - i, j, k] - k


@nv.jit
def mix1(a, out):
    i = nv.global_id(0)
    if i < out.shape[0]:
        out[i] = a[i] * 5 + a[out.shape[0] - 1 - i]


@numba.njit
def mix1_cpu(a, out):
    for i in range(out.shape[0]):
        out[i] = a[i] * 5 + a[out.shape[0] - 1 - i]


def test_kernels_on_f_arrays_match_njit():
    a, b = _f((5, 7)), _f((7, 5), start=50)
    want = np.zeros((5, 7), np.int32, order="F")
    mix2_cpu(a, b, want)
    out = nv.device_array((5, 7), np.int32, order="F")
    mix2[(1, 1), (8, 8)](nv.to_device(a), nv.to_device(b), out)
    np.testing.assert_array_equal(out.copy_to_host(), want)
    host_out = np.zeros((5, 7), np.int32, order="F")  # NumPy F arguments, written back
    mix2[(1, 1), (8, 8)](a, b, host_out)
    np.testing.assert_array_equal(host_out, want)
    assert host_out.flags.f_contiguous

    x = _f((4, 3, 6), np.float32)
    want3 = np.zeros((4, 3, 6), np.float32, order="F")
    mix3_cpu(x, want3)
    out3 = nv.device_array_like(want3)
    mix3.forall(4)(nv.to_device(x), out3)
    np.testing.assert_array_equal(out3.copy_to_host(), want3)

    col = nv.to_device(a)[:, 2]  # a column of an F array: 1-d, contiguous
    want1 = np.zeros(5, np.int32)
    mix1_cpu(a[:, 2], want1)
    out1 = nv.device_array(5, np.int32)
    mix1.forall(5)(col, out1)
    np.testing.assert_array_equal(out1.copy_to_host(), want1)


def test_one_kernel_never_mixes_layouts():
    """A C array, then an F array of the same shape and dtype, then the C one again (the
    fast path): each gets the specialisation typed with its own layout."""
    a_c = np.arange(35, dtype=np.int32).reshape(5, 7)
    a_f = np.asfortranarray(a_c * 3)
    b = np.arange(35, dtype=np.int32).reshape(7, 5)
    results = []
    for a in (a_c, a_f, a_c, a_f):
        want = np.zeros((5, 7), np.int32)
        mix2_cpu(a, b, want)
        out = nv.device_array((5, 7), np.int32)
        mix2[(1, 1), (8, 8)](nv.to_device(a), nv.to_device(b), out)
        np.testing.assert_array_equal(out.copy_to_host(), want)
        results.append(out.copy_to_host())
    assert not np.array_equal(results[0], results[1])
    layouts = {args[0].layout for args, _ in mix2.specialisations}
    assert {"C", "F"} <= layouts
    before = mix2.slow_path_count
    mix2[(1, 1), (8, 8)](nv.to_device(a_f), nv.to_device(b), out)
    assert mix2.slow_path_count == before  # the F specialisation's launcher, fast


def test_launcher_of_a_c_specialisation_refuses_f_arrays():
    launcher, x, y = c_copy_launcher()
    assert launcher.launch((1, 1, 1), (4, 1, 1), (x, y))
    f = nv.to_device(np.asfortranarray(np.arange(12, dtype=np.float32).reshape(3, 4)))
    assert not launcher.launch((1, 1, 1), (4, 1, 1), (f, y))
    empty = nv.device_array((0, 4), np.float32)  # empty arrays are of every layout
    assert launcher.launch((1, 1, 1), (4, 1, 1), (empty, nv.device_array((0, 4), np.float32)))


# ---------------------------------------------------------------- matrix tiles


@nv.jit
def tile_product(a, b, c):
    fa = mx.fragment("a", 16, 16, np.float16)
    fb = mx.fragment("b", 16, 16, np.float16)
    acc = mx.fragment("acc", 16, 16, np.float32)
    mx.fill(acc, 0)
    for k in range(0, a.shape[1], 16):
        mx.load(fa, a, 0, k)
        mx.load(fb, b, k, 0)
        mx.mma(acc, fa, fb)
    mx.store(c, 0, 0, acc)


def test_matrix_tiles_of_f_arrays():
    rng = np.random.default_rng(3)
    a = rng.integers(-4, 5, (16, 32)).astype(np.float16)
    b = rng.integers(-4, 5, (32, 16)).astype(np.float16)
    want = a.astype(np.float32) @ b.astype(np.float32)
    for order_a, order_b, order_c in [("F", "C", "F"), ("C", "F", "C"), ("F", "F", "F")]:
        c = nv.device_array((16, 16), np.float32, order=order_c)
        tile_product[1, SG](nv.to_device(np.asarray(a, order=order_a)),
                            nv.to_device(np.asarray(b, order=order_b)), c)
        np.testing.assert_array_equal(c.copy_to_host(), want)


def test_f_arrays_keep_kernels_on_the_matrix_units(monkeypatch):
    """An F array is a column-major matrix with a unit stride: the kernel stays in the
    units' form (checked by SPIRV-Tools), where a strided view makes it emulate."""
    units_form(monkeypatch)
    a = nv.to_device(np.zeros((16, 32), np.float16, order="F"))
    b = nv.to_device(np.zeros((32, 16), np.float16)).T.T
    c = nv.device_array((16, 16), np.float32, order="F")
    assert "OpCooperativeMatrixLoadKHR" in tile_product.inspect_spirv(a, b, c)
    strided = nv.to_device(np.zeros((16, 64), np.float16))[:, ::2]
    assert "OpCooperativeMatrix" not in tile_product.inspect_spirv(strided, b, c)
