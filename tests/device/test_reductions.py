"""DeviceArray.sum/min/max on the device (runtime/reduce.py) against NumPy.

Integers and min/max must equal NumPy's bit for bit (value and dtype); float
sums must be within the error of NumPy's pairwise sum, measured against an
exact sum (math.fsum).
"""

import math

import numpy as np
import pytest

import numba_vulkan as nv
from numba_vulkan.runtime import reduce as nv_reduce

@pytest.fixture(autouse=True, params=["flat", "tree"])
def float_sum_form(request, monkeypatch):
    """Every test with each form of the float sum (runtime/reduce.py): one partial per
    invocation (CPU devices) and one per workgroup through shared memory (GPUs)."""
    block = None if request.param == "flat" else nv_reduce.BLOCK
    monkeypatch.setattr(nv_reduce, "_block", lambda device: block)
    return request.param


DTYPES = [np.bool_, np.int8, np.uint8, np.int16, np.uint16, np.int32, np.uint32,
          np.int64, np.uint64, np.float16, np.float32, np.float64]  # fmt: skip


def _data(dtype, n, seed=0):
    rng = np.random.default_rng(seed)
    dtype = np.dtype(dtype)
    if dtype.kind == "b":
        return rng.random(n) < 0.5
    if dtype.kind == "f":
        return (rng.standard_normal(n) * 100).astype(dtype)
    info = np.iinfo(dtype)
    return rng.integers(info.min, info.max, n, dtype=dtype, endpoint=True)


def _same(ours, ref):
    assert type(ours) is type(ref), (type(ours), type(ref))
    assert np.asarray(ours).tobytes() == np.asarray(ref).tobytes(), (ours, ref)


def _close_sum(ours, host):
    """|ours - exact| within NumPy's error: no larger than NumPy's actual error or
    than Kahan's bound 2 eps sum|x| (pairwise's is eps log2(n) sum|x|), plus the
    rounding of the result."""
    ref = host.sum()
    assert type(ours) is type(ref)
    wide = host.astype(np.float64).ravel().tolist()
    exact = math.fsum(wide)
    bound = 2 * float(np.finfo(host.dtype).eps) * math.fsum(map(abs, wide))
    ulp = float(np.spacing(np.abs(ref)))
    error = abs(float(ours) - exact)
    assert error <= max(abs(float(ref) - exact), bound) + ulp, (ours, ref, exact)


@pytest.mark.parametrize("dtype", DTYPES, ids=lambda d: np.dtype(d).name)
def test_every_dtype_matches_numpy(dtype):
    host = _data(dtype, 70_001)  # integers 70,001 -> 274 -> 2 -> 1; floats -> 9 -> 1
    d = nv.to_device(host)
    if np.dtype(dtype).kind == "f":
        _close_sum(d.sum(), host)
    else:
        _same(d.sum(), host.sum())  # wraps as NumPy does for 64-bit types
    _same(d.min(), host.min())
    _same(d.max(), host.max())


@pytest.mark.parametrize("make", [
    lambda h: h.reshape(30, 40)[::2, 1::3],          # 2-d view with gaps
    lambda h: h.reshape(10, 12, 10).transpose(2, 0, 1)[:, ::-1],  # 3-d, negative stride
    lambda h: h.reshape(2, 3, 4, 50)[:, :, 1:3, ::7],  # 4-d view with gaps
    lambda h: h.reshape(2, 3, 4, 50).transpose(3, 2, 1, 0),  # 4-d, nothing merges
    lambda h: h.reshape(6, 200)[:, 5:105],           # rows merge into a 2-d view
    lambda h: h[7:8].reshape(()),                    # 0-d
], ids=["2d-gaps", "3d-reversed", "4d-gaps", "4d-transposed", "2d-rows", "0d"])
@pytest.mark.parametrize("dtype", [np.int32, np.float32], ids=["int32", "float32"])
def test_any_layout(make, dtype):
    base = _data(dtype, 1200, seed=3)
    d = make(nv.to_device(base))
    host = make(base)
    assert d.shape == host.shape
    if np.dtype(dtype).kind == "f":
        _close_sum(d.sum(), host)
    else:
        _same(d.sum(), host.sum())
    _same(d.min(), host.min())
    _same(d.max(), host.max())


@pytest.mark.parametrize("dtype", [np.float16, np.float32, np.float64])
def test_nan_and_inf_propagate(dtype):
    for pos in (0, 5, 999, 60_000):
        host = np.ones(60_001, dtype)
        host[pos] = np.nan
        d = nv.to_device(host)
        assert np.isnan(d.min()) and np.isnan(d.max()) and np.isnan(d.sum()), pos
    host = np.ones(3000, dtype)
    host[17] = np.inf
    d = nv.to_device(host)
    _same(d.sum(), host.sum())
    _same(d.max(), host.max())
    host[2000] = -np.inf
    d = nv.to_device(host)
    assert np.isnan(d.sum()) and np.isnan(host.sum())
    _same(d.min(), host.min())


def test_float_sums_as_accurate_as_numpy():
    """Two-sums in every pass: within NumPy's error on hard inputs, and within one ulp of
    the exact sum (correctly rounded in practice; NumPy's pairwise sum is not)."""
    rng = np.random.default_rng(7)
    for dtype in (np.float32, np.float64):
        for host in (
            rng.standard_normal(1_000_003).astype(dtype),
            (rng.random(1_000_003) + 1).astype(dtype),
            np.concatenate([np.full(1000, 1e8), rng.random(200_000), np.full(1000, -1e8)]).astype(dtype),
        ):
            ours = nv.to_device(host).sum()
            _close_sum(ours, host)
            exact = math.fsum(host.astype(np.float64).tolist())
            assert abs(float(ours) - exact) <= float(np.spacing(dtype(abs(exact)))), (ours, exact)


@pytest.mark.parametrize("n", [8192, 1 << 20], ids=["one-launch", "two-launches"])
def test_float_sum_carries_every_rounding_error(n):
    """Ones beside +-2^30 in float32 (ulp 128 there): each invocation's Kahan correction and
    each of the workgroup's additions' rounding errors reach the result, which is exact."""
    host = np.ones(n, np.float32)
    host[0], host[1] = 2.0**30, -(2.0**30)
    assert nv.to_device(host).sum() == np.float32(n - 2)


def test_empty_arrays():
    d = nv.device_array((0, 3), np.float32)
    _same(d.sum(), np.zeros((0, 3), np.float32).sum())
    with pytest.raises(ValueError, match="zero-size array to reduction operation minimum"):
        d.min()
    with pytest.raises(ValueError, match="maximum"):
        d.max()


def test_chunk_bounds_loops_below_lavapipes_cap():
    """Each invocation reduces at most CHUNK elements per pass, far below 65,535
    (float sums: ceil(n / MAX_INVOCATIONS), below it for any n < 2^31)."""
    assert nv_reduce.CHUNK * 4 < 65_535
    assert -(-(2**31) // nv_reduce.MAX_INVOCATIONS) < 65_535
    host = np.arange(5_000_000, dtype=np.int64)  # 19,532 invocations, then 77, then 1
    _same(nv.to_device(host).sum(), host.sum())


def test_float_sum_with_more_invocations_than_the_cap():
    """n > FLOAT_CHUNK * MAX_INVOCATIONS: every invocation of the first pass reduces
    ceil(n / 2^18) elements (the first pass is submitted at once), then short passes."""
    n = nv_reduce.FLOAT_CHUNK * nv_reduce.MAX_INVOCATIONS + 4097
    assert n >= nv_reduce.FLUSH_ELEMENTS
    host = (np.random.default_rng(3).random(n) - 0.25).astype(np.float32)
    _close_sum(nv.to_device(host).sum(), host)
