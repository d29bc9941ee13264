"""Advanced indexing of device arrays (runtime/indexing.py) against NumPy's."""

import numpy as np
import pytest

import numba_vulkan as nv


def _check_get(host, key):
    d = nv.to_device(host)
    ours = d[key]
    ref = host[key]
    if np.ndim(ref) == 0:
        assert not isinstance(ours, nv.DeviceArray) and ours == ref
        return
    assert isinstance(ours, nv.DeviceArray)
    got = ours.copy_to_host()
    assert got.dtype == ref.dtype and got.shape == ref.shape
    assert got.tobytes() == ref.tobytes()


@pytest.mark.parametrize("dtype", [np.bool_, np.int8, np.uint16, np.int64, np.float32,
                                   np.complex128], ids=lambda d: np.dtype(d).name)  # fmt: skip
def test_gather_reads(device, dtype):
    host = (np.arange(60) % 7).astype(dtype).reshape(3, 4, 5)
    keys = [
        host.real > 3 if host.dtype.kind == "c" else host > 3,  # full mask
        np.array([True, False, True]),  # mask on the first axis
        (slice(None), np.array([True, False, True, True])),
        np.array([2, 0, 2, -1]),
        [1, 0],
        (np.array([0, 2]), slice(1, 3), np.array([4, 0])),  # separated index arrays
        (Ellipsis, np.array([[1, 3], [0, 0]])),
        (1, np.array([3, 1]), np.array([0, 4])),
        (np.array(1), 2, 3),  # a 0-d index array: one element
        np.array([], dtype=np.intp),
    ]
    for key in keys:
        _check_get(host, key)
    # Views with negative and gapped strides, and device-side masks and indices.
    view_host = host[::-1, 1:, ::2]
    d = nv.to_device(host)[::-1, 1:, ::2]
    for key in [np.array([0, 2]), view_host.real > 2 if host.dtype.kind == "c" else view_host > 2]:
        got = d[nv.to_device(key)].copy_to_host()
        assert got.tobytes() == view_host[key].tobytes()


def test_mask_from_comparison_and_scatter_writes(device):
    host = np.arange(-10, 10, dtype=np.float64)
    d = nv.to_device(host)
    np.testing.assert_array_equal(d[d > 0].copy_to_host(), host[host > 0])
    d[d < 0] = 0.0
    host[host < 0] = 0.0
    np.testing.assert_array_equal(d.copy_to_host(), host)
    d[[1, 3, 5]] = nv.to_device(np.array([7.0, 8.0, 9.0]))
    host[[1, 3, 5]] = [7.0, 8.0, 9.0]
    np.testing.assert_array_equal(d.copy_to_host(), host)
    # Repeated indices: the last value wins, as in NumPy.
    d[[2, 2, 4, 2]] = [1.0, 2.0, 3.0, 4.0]
    host[[2, 2, 4, 2]] = [1.0, 2.0, 3.0, 4.0]
    np.testing.assert_array_equal(d.copy_to_host(), host)
    m = np.arange(12).reshape(3, 4)
    dm = nv.to_device(m)
    dm[:, np.array([True, False, False, True])] = np.array([[-1], [-2], [-3]])
    m[:, np.array([True, False, False, True])] = np.array([[-1], [-2], [-3]])
    np.testing.assert_array_equal(dm.copy_to_host(), m)


def test_bad_advanced_keys(device):
    d = nv.to_device(np.arange(4))
    with pytest.raises(IndexError):
        d[np.array([4])]
    with pytest.raises(IndexError):
        d[np.array([True, False])]
    with pytest.raises(IndexError, match="integers or booleans"):
        d[np.array([0.5])]
    with pytest.raises(ValueError, match="broadcast"):
        d[[0, 1]] = [1, 2, 3]
