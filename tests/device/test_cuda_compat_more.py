"""numba.cuda names added for numba-cuda's own tests and documentation examples:
``cuda.reduce``, ``cuda.libdevice``, keyword forms of the host API, and a barrier under
a uniform id-dependent branch (numba-cuda's reduction example). Each result is checked
against NumPy or a CPU loop."""

import math

import numba
import numpy as np
import pytest

from numba_vulkan import cuda
from numba_vulkan.cuda import libdevice
from numba_vulkan.errors import VulkanUnsupportedError

pytestmark = [pytest.mark.device, pytest.mark.usefixtures("device")]


@cuda.reduce
def sum_reduce(a, b):
    return a + b


def test_reduce_sum_numpy_and_device_arrays():
    x = np.random.default_rng(3).integers(-1000, 1000, 70001).astype(np.int64)
    assert sum_reduce(x) == x.sum()  # integers: exact whatever the order
    assert sum_reduce(x, size=1000) == x[:1000].sum()
    assert sum_reduce(x[:5], init=7) == x[:5].sum() + 7
    assert sum_reduce(np.zeros(0, np.int64), init=4) == 4  # empty: init, as numba.cuda
    f = np.random.default_rng(4).random(100000)
    got = sum_reduce(cuda.to_device(f))
    assert got.dtype == np.float64
    assert abs(got - math.fsum(f)) <= 1e-9 * abs(math.fsum(f))
    res = cuda.device_array(1, np.float64)
    assert sum_reduce(cuda.to_device(f), res=res) is None
    assert res.copy_to_host()[0] == got


def test_reduce_max_with_reduce_class_and_lambda():
    x = np.random.default_rng(5).integers(-10**6, 10**6, 30000).astype(np.int32)
    assert cuda.Reduce(lambda a, b: max(a, b))(x) == x.max()
    with pytest.raises(TypeError, match="1-d"):
        sum_reduce(np.zeros((2, 2)))


@cuda.jit
def _libdevice_kernel(s, c, f, e, p, r, x):
    i = cuda.grid(1)
    if i < x.size:
        s[i], c[i] = libdevice.sincos(x[i])
        f[i], e[i] = libdevice.frexp(x[i])
        p[i] = libdevice.powf(np.float32(x[i]), np.float32(0.5))
        r[i] = libdevice.sad(i, 50, 3)


def test_libdevice_names():
    x = np.linspace(0.5, 20.0, 100)
    s, c, f = np.zeros_like(x), np.zeros_like(x), np.zeros_like(x)
    e, r = np.zeros(100, np.int32), np.zeros(100, np.int64)
    p = np.zeros(100, np.float32)
    _libdevice_kernel[4, 32](s, c, f, e, p, r, x)
    np.testing.assert_allclose(s, np.sin(x), rtol=0, atol=4e-16 * 20)
    np.testing.assert_allclose(c, np.cos(x), rtol=0, atol=4e-16 * 20)
    want_f, want_e = np.frexp(x)
    np.testing.assert_array_equal(f, want_f)
    np.testing.assert_array_equal(e, want_e)
    np.testing.assert_allclose(p, np.sqrt(x.astype(np.float32)), rtol=2e-7)
    np.testing.assert_array_equal(r, np.abs(np.arange(100) - 50) + 3)
    with pytest.raises(VulkanUnsupportedError, match="libdevice.no_such"):
        libdevice.no_such  # noqa: B018


def test_host_api_keywords():
    a = np.arange(10.0)
    s = cuda.stream()
    d = cuda.to_device(a, stream=s)
    s.synchronize()
    np.testing.assert_array_equal(d.copy_to_host(), a)
    e = cuda.device_array(10, np.float64, stream=0)
    cuda.to_device(a * 2, to=e)
    np.testing.assert_array_equal(e.copy_to_host(), a * 2)
    assert cuda.device_array_like(a, stream=0).shape == (10,)
    assert cuda.HAS_NUMBA
    assert cuda.device_array((2, 3), np.float32, order="F").strides == (4, 8)
    with pytest.raises(VulkanUnsupportedError, match="strides"):
        cuda.device_array((2, 3), np.float32, strides=(16, 4))


@cuda.jit
def _doc_reduction(data):
    # numba-cuda's documentation reduction example: the barriers sit under
    # `if tid < size:`, uniform at its launch (every thread of the one block passes).
    tid = cuda.threadIdx.x
    size = len(data)
    if tid < size:
        i = cuda.grid(1)
        shr = cuda.shared.array(64, np.int32)
        shr[tid] = data[i]
        cuda.syncthreads()
        s = 1
        while s < cuda.blockDim.x:
            if tid % (2 * s) == 0:
                shr[tid] += shr[tid + s]
            s *= 2
            cuda.syncthreads()
        if tid == 0:
            data[tid] = shr[0]


def test_barrier_under_a_uniform_thread_dependent_branch_is_accepted():
    a = np.random.default_rng(6).integers(0, 1000, 64).astype(np.int32)
    want = a.sum()
    d = cuda.to_device(a)
    _doc_reduction[1, 64](d)
    assert d.copy_to_host()[0] == want


def test_barrier_under_a_provably_divergent_branch_is_refused():
    @cuda.jit
    def k(out):
        if cuda.threadIdx.x == 0:
            cuda.syncthreads()
        out[cuda.threadIdx.x] = 1

    with pytest.raises(VulkanUnsupportedError, match=r"local_id\(0\) == 0"):
        k[1, 32](np.zeros(32, np.int32))


def test_cache_hinted_loads_and_stores_are_plain_ones():
    @cuda.jit
    def k(r, x):
        i = cuda.grid(1)
        if i < x.size:
            cuda.stcg(r, i, cuda.ldcg(x, i) + cuda.ldca(x, i) + cuda.ldcs(x, i)
                      + cuda.ldlu(x, i) + cuda.ldcv(x, i))

    x = np.arange(50, dtype=np.int32) * 3
    r = np.zeros_like(x)
    k[2, 32](r, x)
    np.testing.assert_array_equal(r, x * 5)


def test_types_and_device_names():
    from numba_vulkan.cuda import double, types

    assert double is types.float64 and types.Type is not None and cuda.f4 is types.float32
    assert cuda.get_current_device().compute_capability == (0, 0)
    assert cuda.get_current_device().name == cuda.gpus[0].name or len(cuda.gpus) > 1


def test_device_as_a_context_manager():
    before = cuda.get_current_device()
    with cuda.gpus[0] as dev:
        assert cuda.get_current_device() == dev
        np.testing.assert_array_equal(cuda.to_device(np.arange(3)).copy_to_host(), np.arange(3))
    assert cuda.get_current_device() == before


# numba-cuda's own kernel tests of these files pass in full (scripts/run_cudapy.py).
CUDAPY_SAMPLE = ("test_frexp_ldexp", "test_iterators")


@pytest.mark.skipif(not __import__("os").environ.get("NUMBA_CUDA_SRC"),
                    reason="NUMBA_CUDA_SRC (a numba-cuda checkout) is not set")  # fmt: skip
def test_numba_cuda_kernel_tests_sample():
    """A small sample of scripts/run_cudapy.py (the whole run is long: docs/cuda-compat.md)."""
    import os
    import subprocess
    import sys

    repo = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    script = os.path.join(repo, "scripts", "run_cudapy.py")
    r = subprocess.run([sys.executable, script, os.environ["NUMBA_CUDA_SRC"], *CUDAPY_SAMPLE],
                       capture_output=True, text=True, timeout=600)  # fmt: skip
    assert r.returncode == 0, r.stderr[-2000:]
    last = r.stdout.strip().splitlines()[-1]
    assert last.endswith("0 failed, 0 skipped") and not last.startswith("0 passed"), r.stdout


def test_signature_fixes_scalar_types():
    """numba.cuda converts scalar arguments to the signature's types: 0xFFFFFFFF passed
    as an int32 is -1 in the kernel; 0.1 as a float32 is float32(0.1)."""

    def store(out, c):
        out[0] = c

    as_i4 = cuda.jit("void(int64[:], int32)")(store)
    out = np.zeros(1, np.int64)
    as_i4[1, 1](out, 0xFFFFFFFF)
    assert out[0] == -1
    as_i4.forall(1)(out, 7)
    assert out[0] == 7
    as_f4 = cuda.jit("void(float64[:], float32)")(store)
    f = np.zeros(1)
    as_f4[1, 1](f, 0.1)
    assert f[0] == float(np.float32(0.1))
    untyped = cuda.jit(store)
    untyped[1, 1](out, 0xFFFFFFFF)  # no signature: a Python int is an int64
    assert out[0] == 0xFFFFFFFF


def test_signature_types_the_kernel_at_the_decorator():
    """numba.cuda compiles a kernel with a signature where it is declared: a kernel that
    cannot be typed for it fails there (with the error its launch would raise, Numba's
    TypingError kept as ``numba_error``)."""
    from numba import float32, int64

    def float_shape(a):
        s = cuda.shared.array(shape=float32(1.5), dtype=float32)
        a[0] = s[0]

    with pytest.raises(VulkanUnsupportedError, match="shared.array") as info:
        cuda.jit((float32[:],))(float_shape)
    assert isinstance(info.value, numba.core.errors.TypingError)  # what numba.cuda raises
    assert isinstance(info.value.numba_error, numba.core.errors.TypingError)
    cuda.jit(float_shape)  # without a signature nothing is typed before a launch

    def store(a, b):
        a[0] = b

    k = cuda.jit((int64[:], int64))(store)
    out = np.zeros(1, np.int64)
    k[1, 1](out, 5)
    assert out[0] == 5


def test_selp_as_numba_cuda():
    """cuda.selp(test, a, b): a where test holds, else b (numba-cuda's test_selp kernel),
    against the same selection on the CPU; operands of two types are refused by name."""
    from numba import int64

    def branching_with_selps(a, b, c):
        i = cuda.grid(1)
        inner = cuda.selp(b % 2 == 0, c[i], 13)
        a[i] = cuda.selp(a[i] > 4, inner, 3)

    kernel = cuda.jit((int64[:], int64, int64[:]))(branching_with_selps)
    c = np.full(32, 17, np.int64)
    for b in (6, 7):
        a = np.arange(32, dtype=np.int64)
        kernel[1, 32](a, b, c)
        expected = np.where(np.arange(32) > 4, c if b % 2 == 0 else 13, 3)
        np.testing.assert_array_equal(a, expected)

    def mixed(out, x):
        out[0] = cuda.selp(x > 0, x, np.float32(1))

    with pytest.raises(VulkanUnsupportedError, match="selp"):
        cuda.jit(mixed)[1, 1](np.zeros(1), 2.0)


def _bits_reference(v, width):
    u = int(v) & ((1 << width) - 1)
    popc = bin(u).count("1")
    clz = width - u.bit_length()
    ffs = (u & -u).bit_length()
    return popc, clz, ffs


@pytest.mark.parametrize("dtype", [np.int8, np.uint8, np.int16, np.uint16, np.int32, np.uint32,
                                   np.int64, np.uint64])
def test_bit_intrinsics(dtype):
    """Bit for bit CUDA's answers on the argument's own width (OpBitCount, FindUMsb, FindILsb
    on 32 bits: narrower values widened, 64-bit ones in halves): every single bit, its
    complement and the masks below it, the extremes and random values."""
    @cuda.jit
    def k(out, x):
        i = cuda.grid(1)
        if i < x.size:
            out[i, 0] = cuda.popc(x[i])
            out[i, 1] = cuda.clz(x[i])
            out[i, 2] = cuda.ffs(x[i])

    info = np.iinfo(dtype)
    rng = np.random.default_rng(7)
    single = np.array([1 << j for j in range(info.bits)], np.uint64).astype(dtype)
    x = np.concatenate([np.array([0, 1, info.max, info.min], dtype), single, ~single,
                        single - dtype(1), rng.integers(info.min, info.max, 200, dtype=dtype,
                                                        endpoint=True)])  # fmt: skip
    out = np.zeros((x.size, 3), np.int32)
    k[(x.size + 63) // 64, 64](out, x)
    want = [_bits_reference(v, info.bits) for v in x]
    np.testing.assert_array_equal(out, np.array(want, np.int32))


def test_brev():
    @cuda.jit
    def k(o32, o64, a, b):
        o32[0] = cuda.brev(a[0])
        o64[0] = cuda.brev(b[0])

    o32, o64 = np.zeros(1, np.uint32), np.zeros(1, np.uint64)
    k[1, 1](o32, o64, np.array([0x000030F0], np.uint32), np.array([0x000030F0000030F1], np.uint64))
    assert o32[0] == 0x0F0C0000
    assert o64[0] == 0x8F0C00000F0C0000

    @cuda.jit
    def many(o32, o64, a, b):
        i = cuda.grid(1)
        if i < a.size:
            o32[i] = cuda.brev(a[i])
            o64[i] = cuda.brev(b[i])

    rng = np.random.default_rng(8)
    a = rng.integers(0, 2**32, 300, dtype=np.uint32)
    b = rng.integers(0, 2**64, 300, dtype=np.uint64, endpoint=False)
    o32, o64 = np.zeros_like(a), np.zeros_like(b)
    many[5, 64](o32, o64, a, b)
    assert [int(v) for v in o32] == [int(f"{int(v):032b}"[::-1], 2) for v in a]
    assert [int(v) for v in o64] == [int(f"{int(v):064b}"[::-1], 2) for v in b]


def test_inline_hints_of_numba_cuda_are_accepted():
    @cuda.jit(device=True, inline=True)
    def plus_one(x):
        return x + 1

    @cuda.jit(inline=lambda *args: False)  # a cost model: a hint only
    def k(a):
        a[0] = plus_one(a[0])

    a = np.full(1, 41.0)
    k[1, 1](a)
    assert a[0] == 42.0


@pytest.mark.parametrize("shape", [(10,), (10, 12), (3, 4, 5)])
def test_device_array_flags_as_numpy(shape):
    """numba.cuda's DeviceNDArray.flags / is_c_contiguous / is_f_contiguous, as NumPy's."""
    host = np.zeros(shape)
    d = cuda.device_array(shape)
    views = [(host, d), (host.T, d.T), (host[::2], d[::2])]
    if len(shape) > 1:
        views.append((host[:, 1:], d[:, 1:]))
    for h, v in views:
        for key in ("C_CONTIGUOUS", "F_CONTIGUOUS"):
            assert v.flags[key] == h.flags[key], (h.strides, key)
        assert v.is_c_contiguous() == h.flags.c_contiguous
        assert v.is_f_contiguous() == h.flags.f_contiguous
        like = cuda.device_array_like(v)  # F order for an F-contiguous view, as numba.cuda's
        order = "F" if h.flags.f_contiguous and not h.flags.c_contiguous else "C"
        assert like.strides == np.zeros_like(h, order=order).strides


def test_cbrt_intrinsic():
    """numba.cuda's cuda.cbrt: np.cbrt's value in the argument's float type."""
    @cuda.jit
    def k(out32, out64, x):
        i = cuda.grid(1)
        if i < x.size:
            out32[i] = cuda.cbrt(np.float32(x[i]))
            out64[i] = cuda.cbrt(x[i])

    x = np.array([2.0, -27.0, 0.001, 1e300, 0.0])
    out32, out64 = np.zeros(5, np.float32), np.zeros(5)
    k[1, 8](out32, out64, x)
    np.testing.assert_array_max_ulp(out32, np.cbrt(x.astype(np.float32)), maxulp=1)
    np.testing.assert_array_max_ulp(out64, np.cbrt(x), maxulp=1)


@pytest.mark.parametrize("dtype", [np.int8, np.uint8, np.int16, np.uint32, np.int64, np.uint64])
def test_int_bit_count_method_is_popc(dtype):
    """``x.bit_count()`` in a kernel (numba.cuda compiles Python's int method as popc): the
    set bits of the value's own width, two's complement for negative values, every bit as
    Python counts them."""
    @cuda.jit
    def k(out, x):
        i = cuda.grid(1)
        if i < x.size:
            out[i] = x[i].bit_count()

    info = np.iinfo(dtype)
    rng = np.random.default_rng(9)
    x = np.concatenate([np.array([0, 1, info.max, info.min], dtype),
                        rng.integers(info.min, info.max, 100, dtype=dtype, endpoint=True)])
    out = np.zeros(x.size, np.int32)
    k[2, 64](out, x)
    want = [(int(v) & ((1 << info.bits) - 1)).bit_count() for v in x]
    np.testing.assert_array_equal(out, np.array(want, np.int32))


def _round_to_reference(x, ndigits):
    """numba.cuda's round(x, ndigits) (CPython's fallback round_to), in Python floats."""
    if math.isinf(x) or math.isnan(x):
        return x
    if ndigits >= 0:
        pow1, pow2 = (10.0 ** (ndigits - 22), 1e22) if ndigits > 22 else (10.0**ndigits, 1.0)
        y = (x * pow1) * pow2
        if math.isinf(y):
            return x
    else:
        pow1 = 10.0**-ndigits
        y = x / pow1
    z = float(round(y))
    return (z / pow2) / pow1 if ndigits >= 0 else z * pow1


def test_round_with_ndigits_known_at_run_time():
    """round(x, n), n an argument: numba.cuda's (and numba.njit's) algorithm in float64.
    Where 10^|n| is exact (|n| <= 22) every bit equals the algorithm's in Python floats; past
    that, within 2 ulps (10^(n-22) from the library's pow); infinities, NaN and an
    overflowing x * 10^n give x back. float32 bit for bit with numba.njit."""
    @cuda.jit
    def k(out, out32, x, nd):
        i = cuda.grid(1)
        if i < x.size:
            out[i] = round(x[i], nd[i])
            out32[i] = round(np.float32(x[i]), nd[i])

    rng = np.random.default_rng(10)
    vals = np.concatenate([rng.random(20) * 10.0 ** rng.integers(-3, 6, 20),
                           [0.5425, 0.3425, 2.5, -2.5, 0.125, -1234.5678, 1e300,
                            np.finfo(np.float64).max, np.inf, -np.inf, np.nan]])
    digits = np.array([-5, -3, -1, 0, 1, 2, 3, 5, 13, 23, 300], np.int32)
    x, nd = (a.ravel() for a in np.meshgrid(vals, digits))
    out, out32 = np.zeros_like(x), np.zeros(x.size, np.float32)
    k[(x.size + 63) // 64, 64](out, out32, x, nd)
    exact = np.abs(nd) <= 22
    ref = np.array([_round_to_reference(float(a), int(d)) for a, d in zip(x, nd)])
    np.testing.assert_array_equal(out[exact], ref[exact])
    # not always CPython's round(), which rounds the exact decimal value: 0.3425 is a
    # little above 0.3425, so CPython gives 0.343; 0.3425 * 1000 is 342.5, so numba.cuda 0.342
    assert out[(x == 0.3425) & (nd == 3)][0] == 0.342 and round(0.3425, 3) == 0.343
    np.testing.assert_array_equal(out[(x == 0.5425) & (nd == 3)], round(0.5425, 3))
    np.testing.assert_array_max_ulp(out[~exact], ref[~exact], maxulp=2)
    # float32: numba.njit's, which rounds x * 10^n to float32 before rounding it to an
    # integer (its rint has x's type); numba.cuda rounds the float64 product itself
    njit_round = numba.njit(lambda v, d: round(v, d))
    ref32 = np.array([njit_round(np.float32(a), np.int32(d)) for a, d in zip(x, nd)],
                     np.float32)  # fmt: skip
    np.testing.assert_array_equal(out32.view(np.uint32), ref32.view(np.uint32))


def test_default_stream_variants_and_inspect_asm_of_a_signature():
    """numba.cuda's legacy/per-thread default streams are streams here; inspect_asm takes
    numba-cuda's one-signature forms (a tuple of types, a Signature, a string, signature=)."""
    from numba import float64, int64, void

    for s in (cuda.legacy_default_stream(), cuda.per_thread_default_stream()):
        d = cuda.to_device(np.arange(4.0), stream=s)
        s.synchronize()
        np.testing.assert_array_equal(d.copy_to_host(), np.arange(4.0))

    def store(a, b):
        a[0] = b

    k = cuda.jit((int64[:], int64))(store)
    text = k.inspect_asm((int64[:], int64))
    assert "OpEntryPoint" in text
    assert k.inspect_asm(signature=(int64[:], int64)) == text
    assert k.inspect_asm("void(int64[:], int64)") == text
    assert "OpFMul" not in text and "OpTypeFloat 64" in k.inspect_asm(void(float64[:], float64))
