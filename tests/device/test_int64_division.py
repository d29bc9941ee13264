"""64-bit integer division and remainder, the driver's and our own (kir/int64_division.h).

NVIDIA's compiler corrupts other values of kernels that divide 64-bit integers
(type-fuzz seeds 95 and 1060 on the H200); there kernels divide with straight-line
code of float64 estimates and integer corrections instead. Every test runs with
the device's default and with the emulation forced on (NUMBA_VULKAN_INT64_DIVISION),
so that lavapipe checks the emulation against numba.njit bit for bit.
"""

import re

import numpy as np
import pytest
from test_semantics import assert_same, both

import numba_vulkan as nv

pytestmark = [pytest.mark.device, pytest.mark.usefixtures("device", "division")]


@pytest.fixture(params=["", "emulate"], ids=["device_default", "emulated"])
def division(request, monkeypatch):
    from numba_vulkan import config

    monkeypatch.setattr(config, "INT64_DIVISION", request.param)
    return request.param


def edge_values(dtype):
    info = np.iinfo(dtype)
    v = [0, 1, 2, 3, 7, 10, 2**31 - 1, 2**31, 2**32 - 1, 2**32, 2**32 + 1, 2**52 + 1,
         2**53 - 1, 2**53, 2**53 + 1, 2**61 + 3, 2**62 - 1, 2**62, 2**62 + 1, 2**63 - 1]
    if info.min < 0:
        v += [-x for x in v[1:]] + [info.min, info.min + 1]
    else:
        v += [2**63, 2**63 + 1, 3 * 2**62, 2**64 - 2, 2**64 - 1]
    return np.array(v, dtype)


def random_values(dtype, n, rng):
    """Values of every bit length, so that each branch of the emulation is taken."""
    info = np.iinfo(dtype)
    bits = rng.integers(0, 64, n)
    v = rng.integers(0, 2**63, n, dtype=np.uint64, endpoint=False) >> bits.astype(np.uint64)
    v = (v << np.uint64(1)) | rng.integers(0, 2, n, dtype=np.uint64)
    if info.min < 0:
        return np.where(rng.integers(0, 2, n) == 1, -(v >> np.uint64(1)).astype(np.int64),
                        (v >> np.uint64(1)).astype(np.int64))
    return v


def divide(a, b, q, r):
    i = nv.global_id(0)
    if i < a.size:
        q[i] = a[i] // b[i]
        r[i] = a[i] % b[i]


@pytest.mark.parametrize("dtype", [np.int64, np.uint64])
def test_edge_values(dtype):
    e = edge_values(dtype)
    a, b = (x.ravel() for x in np.meshgrid(e, e))
    keep = b != 0
    a, b = a[keep], b[keep]
    dev, cpu = both(divide, a, b, np.zeros_like(a), np.zeros_like(a))
    assert_same(dev, cpu)


@pytest.mark.parametrize("dtype", [np.int64, np.uint64])
def test_random_values(dtype):
    rng = np.random.default_rng(64)
    a, b = random_values(dtype, 20000, rng), random_values(dtype, 20000, rng)
    b[b == 0] = 3
    dev, cpu = both(divide, a, b, np.zeros_like(a), np.zeros_like(a))
    assert_same(dev, cpu)


def test_division_by_zero_still_follows_numpy():
    # The front end's guard (0 for x // 0 and x % 0, NumPy's error model) stays outside.
    a = np.array([5, -5, 0, 2**62], np.int64)
    dev, cpu = both(divide, a, np.zeros(4, np.int64), np.zeros(4, np.int64),
                    np.zeros(4, np.int64))
    assert_same(dev, cpu)


def seed_95(a_i32, a_u64, s_i16, s_u8, out):
    i = nv.global_id(0)
    if i < out.size:
        out[i] = ((a_i32[i] == ((not a_u64[i]) & (a_i32[i] if a_i32[i] else s_i16)))
                  & ((s_u8 // a_u64[i]) ^ (s_u8 >= s_i16)))


def seed_1060(a_i8, a_i32, a_i64, s_b, out0, out1):
    i = nv.global_id(0)
    if i < out0.size:
        out0[i] = (a_i8[i] if a_i8[i] else s_b) * (True & a_i64[i])
        out1[i] = (a_i32[i] % a_i64[i]) if a_i64[i] else 0.0


def test_fuzz_seeds_that_failed_on_nvidia():
    rng = np.random.default_rng(95)
    a_i32 = rng.integers(-(2**31), 2**31, 64, dtype=np.int32)
    a_i32[2:6] = 0
    a_u64 = rng.integers(1, 2**64 - 1, 64, dtype=np.uint64, endpoint=True)
    a_u64[2] = 1
    dev, cpu = both(seed_95, a_i32, a_u64, np.int16(-32767), np.uint8(8), np.zeros(64, np.int64))
    assert_same(dev, cpu)
    assert cpu[-1][2] == 1
    a_i8 = rng.integers(-128, 128, 64, dtype=np.int8)
    a_i64 = rng.integers(-(2**63), 2**63, 64, dtype=np.int64)
    a_i64[::3] = 0
    dev, cpu = both(seed_1060, a_i8, a_i32, a_i64, False, np.zeros(64, np.int64),
                    np.zeros(64, np.float64))
    assert_same(dev, cpu)


def test_the_emulation_reaches_the_kernel(division):
    from numba_vulkan import config, launchers, runtime

    kernel = nv.jit(divide)
    a = np.arange(1, 9, dtype=np.int64)
    kernel[1, 8](a, a, a.copy(), a.copy())
    spirv = "\n".join(kernel.inspect_spirv().values())
    emulated = launchers.emulate_int64_division(runtime.get_device().info, config.INT64_DIVISION)
    assert emulated == (division == "emulate" or runtime.get_device().info.vendor_id == 0x10DE)
    driver = re.findall(r"= Op(?:UDiv|SDiv|UMod|SRem|SMod) %u?long ", spirv)
    assert (len(driver) == 0) == emulated, driver
