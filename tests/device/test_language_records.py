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
