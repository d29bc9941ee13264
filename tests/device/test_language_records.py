"""Records (structured dtypes) in kernels, against CPU numba.njit, bit for bit."""

import numba
import numpy as np
import pytest

import numba_vulkan as nv
from numba_vulkan import VulkanUnsupportedError

pytestmark = [
    pytest.mark.device,
    pytest.mark.usefixtures("device"),
]

INNER = np.dtype([("p", np.int16), ("q", np.float32)], align=True)
ALIGNED = np.dtype(
    [("x", np.int32), ("y", np.float64), ("n", INNER), ("f", np.bool_), ("u", np.uint8),
     ("s", np.int8), ("w", np.uint16), ("z", np.int64), ("h", np.float32)],
    align=True,
)  # fmt: skip
PACKED = np.dtype([("a", np.int8), ("b", np.uint8), ("c", np.int16), ("d", np.int32),
                   ("e", np.float64)])  # fmt: skip


def _aligned(out, r, i):
    e = r[i]
    out[i] = e.x * 2 + e.y + e["n"].p + r[i].n.q + e.f + e.u + e.s + e.w + e.z + e.h
    e.x = i * 3
    r[i]["y"] = e.y * 2
    e.n.p = -i
    r[i].f = not e.f
    r[i].u = e.u + 250  # wraps as uint8
    e.s = e.s - 100
    e.w = e.w * 1000
    e.z = e.z * -(1 << 40)
    e.h = e.h / 3


def _packed(out, r, i):
    e = r[i]
    out[i] = e.a + e.b * 2 + e.c * 3 + e.d * 4 + e.e
    e.a, e.b = e.b, e.a
    e.c = e.d
    e.e = -e.e


def _fill(dtype, n=12):
    r = np.zeros(n, dtype)
    _fill_fields(r, np.random.default_rng(5))
    return r


def _fill_fields(r, rng):
    """Random values in every field of record array `r`, nested records included."""
    n = r.size
    for name in r.dtype.names:
        ft = r.dtype.fields[name][0]
        if ft.fields is not None:
            _fill_fields(r[name], rng)
        elif ft.kind == "b":
            r[name] = rng.integers(0, 2, n).astype(bool)
        elif ft.kind in "iu":
            info = np.iinfo(ft)
            r[name] = rng.integers(max(info.min, -1000), min(info.max, 1000), n)
        else:
            r[name] = rng.standard_normal(n)


def _run(body, dtype, on_device):
    r = _fill(dtype)
    n = r.size
    dev_body = nv.jit(device=True)(body)

    @nv.jit
    def kernel(out, r):
        i = nv.global_id(0)
        if i < out.size:
            dev_body(out, r, i)

    out_dev, r_dev = np.zeros(n), r.copy()
    if on_device:
        d_out, d_r = nv.to_device(out_dev), nv.to_device(r_dev)
        kernel.forall(n)(d_out, d_r)
        out_dev, r_dev = d_out.copy_to_host(), d_r.copy_to_host()
    else:
        kernel.forall(n)(out_dev, r_dev)
    out_cpu, r_cpu = np.zeros(n), r.copy()
    cpu = numba.njit(body)
    for i in range(n):
        cpu(out_cpu, r_cpu, i)
    np.testing.assert_array_equal(out_dev, out_cpu)
    for a, b in zip(_leaves(r_dev), _leaves(r_cpu)):  # not padding: njit leaves garbage there
        assert a.tobytes() == b.tobytes()


def _leaves(r):
    """Every scalar field of record array `r` (nested records expanded), as arrays."""
    for name in r.dtype.names:
        if r.dtype.fields[name][0].fields is not None:
            yield from _leaves(r[name])
        else:
            yield np.ascontiguousarray(r[name])


@pytest.mark.parametrize("on_device", [False, True])
def test_aligned_nested_records_every_width(on_device):
    _run(_aligned, ALIGNED, on_device)


@pytest.mark.parametrize("on_device", [False, True])
def test_packed_records_with_aligned_fields(on_device):
    assert PACKED.itemsize == 16 and not PACKED.isalignedstruct
    _run(_packed, PACKED, on_device)


def _views_of_records(out, r, i):
    v = r[::-1]
    out[i] = v[i].x + r[1:][0].y


def test_views_of_record_arrays():
    _run(_views_of_records, ALIGNED, False)


# NumPy's default layout: packed. Every field past `a` is misaligned, and the itemsize
# is odd (31), so the same field is misaligned differently from element to element.
MISALIGNED_INNER = np.dtype([("k", np.int8), ("v", np.float32)])
MISALIGNED = np.dtype([("a", np.int8), ("b", np.float64), ("c", np.int16), ("d", np.uint32),
                       ("e", np.int64), ("n", MISALIGNED_INNER), ("h", np.uint16),
                       ("t", np.bool_)])  # fmt: skip


def _misaligned(out, r, i):
    e = r[i]
    out[i] = e.a + e.b + e.c * 3 + e.d + e.e // 7 + e.n.k + e.n.v + e.h + e.t
    e.b = e.b * -2.5
    e.c = e.c - 30000  # wraps as int16
    e.d = e.d * 1000003  # wraps as uint32
    e.e = e.e * -(1 << 50)
    r[i].n.v = e.n.v / 3
    e.h = e.h * 77  # wraps as uint16
    e.t = not e.t


@pytest.mark.parametrize("on_device", [False, True])
def test_misaligned_fields_byte_by_byte(on_device):
    assert MISALIGNED.itemsize == 31 and MISALIGNED.fields["b"][1] == 1
    _run(_misaligned, MISALIGNED, on_device)


def test_misaligned_writes_leave_neighbours_alone():
    # Each invocation writes one element's misaligned field; its neighbours' bytes, which
    # share words with it, must come back unchanged (no read-modify-write of words).
    dtype = np.dtype([("a", np.int8), ("v", np.int32)])  # 5-byte records

    @nv.jit
    def kernel(r):
        i = nv.global_id(0)
        if i < r.size:
            r[i].v = -i
            r[i].a = i

    r = np.zeros(1000, dtype)
    kernel.forall(r.size)(r)
    np.testing.assert_array_equal(r["v"], -np.arange(1000))
    np.testing.assert_array_equal(r["a"], np.arange(1000).astype(np.int8))


def _copy_reversed(out, r, i):
    out[i] = i
    n = r.size
    if i < n // 2:  # swap through a copy of one element: whole records, every layout
        r[n - 1 - i] = r[i]


@pytest.mark.parametrize("dtype", [ALIGNED, PACKED, MISALIGNED], ids=["aligned", "packed",
                                                                      "misaligned"])
def test_whole_records_are_assigned_field_by_field(dtype):
    _run(_copy_reversed, dtype, True)


def test_other_record_assignments_are_refused():
    @nv.jit
    def kernel(r, s):
        r[0] = s[0]

    with pytest.raises(VulkanUnsupportedError, match="setitem"):  # Numba types it no further
        kernel.forall(1)(np.zeros(2, PACKED), np.zeros(2, ALIGNED))


def _first_field_a(r, out):
    i = nv.global_id(0)
    if i < out.size:
        out[i] = r[i].a


def test_records_of_one_size_but_another_layout_get_their_own_specialisation():
    """A device array of another record type of the same size must not slip through the
    launcher of the first (it read field 'a' at the first type's offset: 2.0, not 1.0)."""
    ab = np.dtype([("a", np.float32), ("b", np.float32)])
    ba = np.dtype([("b", np.float32), ("a", np.float32)])
    kernel = nv.jit(_first_field_a)
    out = nv.device_array(4, np.float32)
    for dtype in (ab, ba, ab, ba):
        r = np.zeros(4, dtype)
        r["a"], r["b"] = 1.0, 2.0
        kernel.forall(4)(nv.to_device(r), out)
        np.testing.assert_array_equal(out.copy_to_host(), np.ones(4, np.float32))
    # One launcher per record type: the record's layout digest that the front end declares
    # (from Numba's record type) equals the device array's (from the NumPy dtype), also for
    # aligned, nested records, so later launches take the fast path.
    assert sum(len(v) for v in kernel._launchers.values()) == 2
    aligned = nv.jit(_first_field_x)
    r = nv.to_device(np.zeros(4, ALIGNED))
    for _ in range(3):
        aligned.forall(4)(r, out)
    assert sum(len(v) for v in aligned._launchers.values()) == 1


def _first_field_x(r, out):
    i = nv.global_id(0)
    if i < out.size:
        out[i] = r[i].x


def _iterate_records(out, r, i):
    if i == 0:
        s = 0.0
        for e in r:  # references, as r[i] is
            s += e.x * e.n.p
        out[0] = s
        for e in r[::-2]:
            e.x = e.x + 1


@pytest.mark.parametrize("on_device", [False, True])
def test_iteration_over_record_arrays_and_views(on_device):
    _run(_iterate_records, ALIGNED, on_device)


# Complex and sub-array fields; record scalars (``a[i]`` of a record array) as arguments.
WITH_ARRAYS = np.dtype(
    [("a", np.float64), ("b", np.int32), ("c", np.complex64), ("d", np.uint8, 5),
     ("z", np.complex128), ("j", np.float32, (3, 2)), ("k", np.int16, 3)],
    align=True,
)  # fmt: skip
PACKED_ARRAYS = np.dtype([("i", np.int32), ("j", np.float32, (3, 2)), ("c", np.complex64)])


def _fill_arrays(dtype, n=4):
    rng = np.random.default_rng(7)
    r = np.zeros(n, dtype)
    for name in dtype.names:
        ft = dtype.fields[name][0]
        base = ft.base
        shape = (n,) + ft.shape
        if base.kind in "iu":
            r[name] = rng.integers(0, 100, shape)
        elif base.kind == "c":
            r[name] = rng.standard_normal(shape) + 1j * rng.standard_normal(shape)
        else:
            r[name] = rng.standard_normal(shape)
    return r


def _record_body(r, v, out):
    out[0] = r.a + r.b
    out[1] = r.c.real * 3 + r["c"].imag
    out[2] = r.d[1] + r.d[4] * 2 + r["k"][2]
    out[3] = r.z.imag - r.j[2, 1] + r.j[0, 1] * r.j[1, 0]
    out[4] = r.j.size + r.j.shape[0] * 10 + r.d.sum()
    r.a = v
    r.b = v * 3  # float64 to int32
    r.c = complex(v, -v)
    r["z"] = r.z * r.c
    r.d[2] = 250 + r.d[3]  # wraps as uint8
    r.j[1, 1] = v / 3
    r.j[2] = -v  # a row of the 2-d field
    r.k[0] = r.k[1] - r.k[2]


@pytest.mark.parametrize("dtype", [WITH_ARRAYS, PACKED_ARRAYS], ids=["aligned", "packed"])
def test_record_scalar_arguments_are_written_back(dtype):
    if dtype is PACKED_ARRAYS:  # no d, z, k fields: a smaller body
        def body(r, v, out):
            out[0] = r.i + r.j[2, 1] + r.c.imag
            r.i = v
            r.j[0, 1] = v * 2
            r.c = r.c * v
    else:
        body = _record_body
    kernel = nv.jit(body)
    host = _fill_arrays(dtype)
    expect = host.copy()
    out, out_cpu = np.zeros(5), np.zeros(5)
    kernel[1, 1](host[2], 7.25, out)  # the record is written into its array
    numba.njit(body)(expect[2], 7.25, out_cpu)
    np.testing.assert_array_equal(out, out_cpu)
    for n in dtype.names:  # not padding: njit leaves garbage there
        assert host[n].tobytes() == expect[n].tobytes(), n
    # A record of a read-only array cannot be written.
    frozen = _fill_arrays(dtype)
    frozen.flags.writeable = False
    with pytest.raises(ValueError, match="read-only"):
        kernel[1, 1](frozen[1], 1.0, out)


def test_record_scalar_launch_takes_no_record_array_in_its_place():
    """A launcher made for a record argument (a 1-element array underneath) must refuse a
    record *array* there, so that such a launch is typed (and fails) as an array."""

    @nv.jit
    def kernel(r, out):
        out[0] = r.a

    rec = _fill_arrays(WITH_ARRAYS)
    out = np.zeros(1)
    kernel[1, 1](rec[1], out)
    assert out[0] == rec[1]["a"]
    d = nv.to_device(rec[1:2])
    (launcher,) = [la for v in kernel._launchers.values() for la in v]
    assert launcher.launch((1, 1, 1), (1, 1, 1), (d, nv.to_device(out)), False, None) is False
    with pytest.raises(VulkanUnsupportedError, match="setitem"):  # a.a is an array: typed so
        kernel[1, 1](d, out)


def _whole_records(ary, i, j):
    ary[i] = ary[j]
    ary[j].c = ary[i].c * 1j
    ary[i]["j"][0, 0] = 5.5


@pytest.mark.parametrize("dtype", [WITH_ARRAYS, PACKED_ARRAYS], ids=["aligned", "packed"])
def test_whole_records_with_complex_and_sub_array_fields(dtype):
    host = _fill_arrays(dtype)
    expect = host.copy()
    nv.jit(_whole_records)[1, 1](host, 0, 3)
    numba.njit(_whole_records)(expect, 0, 3)
    for n in dtype.names:
        assert host[n].tobytes() == expect[n].tobytes(), n


def _assign_sub_arrays(dest, src, src2, index):
    dest["j"] = src
    dest["k"] = src2[index]["k"]


def test_arrays_assigned_to_sub_array_fields():
    src = np.arange(6, dtype=np.float32).reshape(3, 2) * 1.5
    src2 = _fill_arrays(WITH_ARRAYS)
    got, expect = _fill_arrays(WITH_ARRAYS), _fill_arrays(WITH_ARRAYS)
    nv.jit(_assign_sub_arrays)[1, 1](got[1], src, src2, 2)
    numba.njit(_assign_sub_arrays)(expect[1], src, src2, 2)
    assert got.tobytes() == expect.tobytes()


def _fields_by_position(r, out):
    out[0] = r[0] + r[1]  # the first and second fields, as Numba takes r[0]


def test_record_fields_by_position():
    rec = _fill_arrays(WITH_ARRAYS)
    out, out_cpu = np.zeros(1), np.zeros(1)
    nv.jit(_fields_by_position)[1, 1](rec[3], out)
    numba.njit(_fields_by_position)(rec[3], out_cpu)
    assert out[0] == out_cpu[0]


def test_refused_record_fields():
    misaligned = np.dtype([("a", np.int8), ("h", np.float32, 2)])  # h at byte 1

    @nv.jit
    def read_h(r, out):
        out[0] = r[0].h[1]

    with pytest.raises(VulkanUnsupportedError, match="not aligned"):
        read_h[1, 1](np.zeros(2, misaligned), np.zeros(1, np.float32))

    chars = np.dtype([("x", np.int32), ("s", "S4")])

    @nv.jit
    def read_x(r, out):
        out[0] = r[0].x

    with pytest.raises(VulkanUnsupportedError, match="char"):
        read_x[1, 1](np.zeros(2, chars), np.zeros(1, np.int32))
    with pytest.raises(TypeError, match="without fields"):
        read_x[1, 1](np.void(b"abcd"), np.zeros(1, np.int32))
