"""Global arrays read through hidden parameters (frontend/hidden.py): NumPy arrays too
large to inline become constant buffers, frozen at compile time and uploaded once per
device; a global DeviceArray is used in place. Results equal to numba.njit's."""

import numba
import numpy as np
import pytest

import numba_vulkan as nv
from numba_vulkan.frontend import constants

pytestmark = [pytest.mark.device, pytest.mark.usefixtures("device")]

LUT = (np.arange(1000, dtype=np.float64) * 0.37) % 11.0 - 3.0
TABLE2 = np.arange(40 * 30, dtype=np.int32).reshape(40, 30) * 7 - 1000
TABLE2_F = np.asfortranarray(np.arange(300, dtype=np.int16).reshape(20, 15))
POINT = np.dtype([("x", np.float32), ("y", np.int64)], align=True)
RECORDS = np.array([(i * 0.5, i * 3 - 7) for i in range(8)], dtype=POINT)
ZS = np.array([1 + 2j, -0.5 + 0.25j, 3 - 1j], dtype=np.complex128)


def body(out, a, i):
    if i < out.size:
        j = a[i]
        v = LUT[j] + LUT[-1 - j] + len(LUT) + LUT.shape[0]
        v += TABLE2[j % 40, j % 30] + TABLE2[-1, -(j % 30) - 1] + TABLE2.shape[1]
        v += TABLE2_F[j % 20, j % 15] * 2
        v += RECORDS[j % 8].x + RECORDS[j % 8].y
        z = ZS[j % 3] * ZS[(j + 1) % 3]
        v += z.real - z.imag
        out[i] = v


def run_both(body_fn, a, out_dtype=np.float64):
    body_nv = nv.jit(body_fn)

    @nv.jit
    def kernel(out, a):
        body_nv(out, a, nv.global_id(0))

    got = np.zeros(a.size, out_dtype)
    kernel.forall(a.size)(got, a)
    want = np.zeros(a.size, out_dtype)
    cpu = numba.njit(body_fn)
    for i in range(a.size):
        cpu(want, a, i)
    return got, want, kernel


def test_large_records_complex_and_fortran_globals_match_numba():
    assert LUT.size > constants.MAX_ELEMENTS and TABLE2.size > constants.MAX_ELEMENTS
    got, want, kernel = run_both(body, np.arange(0, 900, 7, dtype=np.int64))
    np.testing.assert_array_equal(got, want)
    (compiled,) = kernel.specialisations.values()
    kinds = [source[0] for _, source in compiled.hidden]
    assert kinds == ["constant"] * 5  # LUT, TABLE2, TABLE2_F, RECORDS, ZS: one each


def test_small_arrays_stay_inlined():
    small = np.arange(constants.MAX_ELEMENTS, dtype=np.int32)

    @nv.jit
    def k(out):
        i = nv.global_id(0)
        if i < out.size:
            out[i] = small[i] * 2

    out = np.zeros(small.size, np.int32)
    k.forall(out.size)(out)
    np.testing.assert_array_equal(out, small * 2)
    (compiled,) = k.specialisations.values()
    assert compiled.hidden == []


def test_changing_a_large_global_after_compilation_does_not_change_the_kernel():
    table = np.arange(500, dtype=np.int64)

    @nv.jit
    def k(out):
        i = nv.global_id(0)
        if i < out.size:
            out[i] = table[i] + table[499 - i]

    out = np.zeros(500, np.int64)
    k.forall(500)(out)
    table[:] = -1  # Numba's rule: the kernel keeps the values it was compiled with
    out2 = np.zeros(500, np.int64)
    k.forall(500)(out2)
    np.testing.assert_array_equal(out2, np.full(500, 499))
    np.testing.assert_array_equal(out, out2)


def test_constant_buffer_uploaded_once_per_device():
    table = np.linspace(0, 1, 300, dtype=np.float32)

    @nv.jit
    def k(out):
        i = nv.global_id(0)
        if i < out.size:
            out[i] = table[i]

    out = nv.device_array(300, np.float32)
    for _ in range(3):
        k.forall(300)(out)
    np.testing.assert_array_equal(out.copy_to_host(), table)
    (compiled,) = k.specialisations.values()
    assert len(compiled.hidden_on_device) == 1
    (arrays,) = compiled.hidden_on_device.values()
    assert len(arrays) == 1 and arrays[0].size == 300
    assert k.slow_path_count == 1  # later launches take the fast path with the buffer


def test_storing_into_a_large_global_is_refused():
    table = np.zeros(1000)

    @nv.jit
    def k(out):
        table[0] = 1.0
        out[0] = table[0]

    with pytest.raises(nv.VulkanUnsupportedError, match="setitem|read-only|readonly"):
        k.forall(1)(np.zeros(1))


D = None


def test_global_device_array_is_used_in_place():
    global D
    D = nv.to_device(np.arange(16, dtype=np.float32))

    @nv.jit
    def k(out):
        i = nv.global_id(0)
        if i < out.size:
            out[i] = D[i] * 2

    out = nv.device_array(16, np.float32)
    k.forall(16)(out)
    np.testing.assert_array_equal(out.copy_to_host(), np.arange(16) * 2)
    # No copy: a later write to the device array is seen by the next launch.
    D.copy_to_device(np.full(16, 5, np.float32))
    k.forall(16)(out)
    np.testing.assert_array_equal(out.copy_to_host(), np.full(16, 10))
    # The binding is frozen: rebinding the name does not change the kernel.
    old = D
    D = nv.to_device(np.zeros(16, np.float32))
    k.forall(16)(out)
    np.testing.assert_array_equal(out.copy_to_host(), np.full(16, 10))
    D = old


def test_a_global_device_array_sees_earlier_kernels_writes():
    acc = nv.to_device(np.zeros(64, np.int64))

    @nv.jit
    def add(a, x):
        i = nv.global_id(0)
        if i < a.size:
            a[i] += x[i]

    @nv.jit
    def read(out):
        i = nv.global_id(0)
        if i < out.size:
            out[i] = acc[i] * 3

    x = nv.to_device(np.arange(64, dtype=np.int64))
    out = nv.device_array(64, np.int64)
    read.forall(64)(out)
    for _ in range(3):  # device arrays only: asynchronous launches, ordered by barriers
        add.forall(64)(acc, x)
        read.forall(64)(out)
    np.testing.assert_array_equal(out.copy_to_host(), np.arange(64) * 9)
    (compiled,) = read.specialisations.values()
    # read only: its address's hidden declaration is not written (no barriers for it)
    assert [(n, s[0]) for n, s in compiled.hidden] == [("global0", "device")]
    (addr,) = [a for a in compiled.args if a.name == "global0.addr"]
    assert addr.kind == "hidden" and not addr.written


def test_storing_into_a_global_device_array_is_refused():
    acc = nv.to_device(np.zeros(4, np.int64))

    @nv.jit
    def k(x):
        acc[0] = x[0]

    with pytest.raises(nv.VulkanUnsupportedError, match="readonly array"):
        k.forall(1)(np.zeros(1, np.int64))


def test_narrowed_kernels_refuse_global_ints_past_32_bits():
    wide = np.arange(300, dtype=np.int64) * 2**33  # a constant buffer
    small_wide = np.array([2**40, 1], dtype=np.int64)  # inlined

    for table in (wide, small_wide):
        @nv.jit(narrow="ints")
        def k(out):
            i = nv.global_id(0)
            if i < out.size:
                out[i] = table[i]

        with pytest.raises(nv.VulkanUnsupportedError, match="does not fit the 32-bit integers"):
            k.forall(2)(np.zeros(2, np.int64))
    fits = np.arange(300, dtype=np.int64) - 150

    @nv.jit(narrow="ints")
    def k2(out):
        i = nv.global_id(0)
        if i < out.size:
            out[i] = fits[i] * 3

    out = np.zeros(300, np.int64)
    k2.forall(300)(out)
    np.testing.assert_array_equal(out, fits * 3)


TABLES = [np.arange(300, dtype=np.float64) * (k + 1) for k in range(8)]
T0, T1, T2, T3, T4, T5, T6, T7 = TABLES


def test_many_constant_buffers_move_the_parameters_into_a_buffer():
    @nv.jit
    def k(out, a):
        i = nv.global_id(0)
        if i < out.size:
            out[i] = T0[i] + T1[i] + T2[i] + T3[i] + T4[i] + T5[i] + T6[i] + T7[i] + a[i]

    a = nv.to_device(np.ones(300))
    out = nv.device_array(300, np.float64)
    for _ in range(2):
        k.forall(300)(out, a)
    np.testing.assert_array_equal(out.copy_to_host(), np.arange(300) * 36 + 1)
    (compiled,) = k.specialisations.values()
    assert len(compiled.hidden) == 8
    # 176 parameter bytes: past lavapipe's 128 bytes of push constants, within NVIDIA's 256.
    limit = nv.get_device().info.max_push_constants
    assert compiled.params_in_buffer == (compiled.param_size > limit)
