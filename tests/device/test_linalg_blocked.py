"""linalg/blocked.py's register-blocked product (float32 and float64 on GPUs) against
NumPy's own loop, bit for bit (each product and sum rounded, k in increasing order), and
matmul's choice of it; with ``contract`` within the error bound.
"""

import dataclasses

import numpy as np
import pytest
from _linalg_bounds import _check_float

import numba_vulkan as nv
from numba_vulkan.linalg import blocked, matmul, plans
from numba_vulkan.runtime.layout import broadcast_to

pytestmark = pytest.mark.usefixtures("device")


def _loop_product(a, b):
    """NumPy's own loop for a (nb, M, K) by (nb, K, N) product: sums over k in increasing
    order from zero, each product and sum rounded in the operands' dtype."""
    c = np.zeros(a.shape[:-1] + b.shape[-1:], a.dtype)
    for k in range(a.shape[-1]):
        c = c + a[..., k:k + 1] * b[..., k:k + 1, :]
    return c


#: blocked.py's kernels with small blocks (the same generated code with other constants):
#: runs of four with two runs per invocation on one side, one run or less on the other;
#: one stage and two; workgroups in bands of up to 4 rows of blocks (staging.block_origin).
SMALL_BLOCKINGS = [blocked.Blocking("t32", bm=32, bn=32, tm=4, tn=4, bk=4),
                   blocked.Blocking("t64x16", bm=64, bn=16, tm=8, tn=2, bk=4, stages=1),
                   blocked.Blocking("t32w4", bm=32, bn=32, tm=4, tn=4, bk=4, swizzle=4)]


@pytest.mark.parametrize("v", SMALL_BLOCKINGS, ids=lambda v: v.name)
@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_blocked_is_numpys_loop_bit_for_bit(v, dtype, device, monkeypatch):
    """linalg/blocked.py's kernel: NumPy's loop order bit for bit, padded sides (edges of
    the blocks and of k; a padded k adds +0.0 products), sides of whole blocks read and
    written in place, a column-major operand in place, a stack with one operand broadcast
    along it, and infinities and NaNs where the padding meets them."""
    monkeypatch.setitem(blocked.BLOCKINGS, v.name, v)
    rng = np.random.default_rng(7)
    cases = [(1, 37, 9, 50, False), (2, v.bm, 3 * v.bk, 2 * v.bn, False),
             (1, 2 * v.bm, 2 * v.bk, v.bn, True), (3, 20, 5, 11, False),
             (1, 4 * v.bm - 3, 7, 3 * v.bn, False)]  # 4 rows of blocks: a band of 4
    for nb, m, k, n, transposed in cases:
        a = rng.standard_normal((nb, m, k)).astype(dtype)
        b = rng.standard_normal((1 if nb == 3 else nb, k, n)).astype(dtype)
        a[0, 0, -1], a[0, 1, 0] = np.inf, np.nan
        da = nv.to_device(a)
        if transposed:  # a column-major b (the .T of a C-contiguous array)
            db = nv.to_device(np.ascontiguousarray(b.transpose(0, 2, 1))).transpose(0, 2, 1)
        else:
            db = broadcast_to(nv.to_device(b), (nb, k, n))  # stride 0 where b is one
        out = nv.device_array((nb, m, n), dtype)
        blocked.run(da, db, out, device, blocking=v.name)
        want = _loop_product(a, np.broadcast_to(b, (nb, k, n)))
        np.testing.assert_array_equal(out.copy_to_host(), want)


def test_blocked_refuses_what_it_cannot_take(device):
    x = nv.device_array((1, 8, 8), np.float32)
    with pytest.raises(ValueError, match="no blocking 'nope'; there are b128"):
        blocked.run(x, x, x, device, blocking="nope")
    with pytest.raises(ValueError, match="does not divide into runs"):
        blocked.Blocking("bad", bm=48, tm=6)
    v = blocked.BLOCKINGS["b128k16"]  # 67,584 bytes of float64 slabs
    if v.shared_bytes(8) > device.info.max_shared_memory:
        with pytest.raises(ValueError, match="needs 67584 bytes of shared memory"):
            blocked.run(nv.device_array((1, 8, 8)), nv.device_array((1, 8, 8)),
                        nv.device_array((1, 8, 8)), device, blocking="b128k16")


@pytest.mark.parametrize("contract", [False, True])
def test_matmul_on_the_blocked_kernel(contract, device, monkeypatch):
    """matmul's "blocked" plan (GPUs' float32 and float64 loops; lavapipe runs the SIMT
    kernel, faster there, so the plan is forced here): products of enough blocks on
    blocked.py's kernel, bit for bit the SIMT kernel's sums; others (a result of another
    dtype, too few blocks, a k that the SIMT kernel splits) on the SIMT kernel. With
    `contract` (products fused into their sums where the driver fuses) within the bound."""
    v = SMALL_BLOCKINGS[0]
    monkeypatch.setitem(blocked.BLOCKINGS, v.name, v)
    monkeypatch.setitem(blocked.DEFAULTS, "float32", v.name)
    monkeypatch.setattr(blocked, "MIN_GROUPS", 4)
    choose = plans.choose

    def forced(loop, dev, **kwargs):
        plan = choose(loop, dev, **kwargs)
        return dataclasses.replace(plan, family="blocked") if plan.family == "simt" else plan

    monkeypatch.setattr(plans, "choose", forced)
    ran = []
    real_run = blocked.run
    monkeypatch.setattr(blocked, "run", lambda *a, **k: ran.append(k) or real_run(*a, **k))
    rng = np.random.default_rng(3)
    a = rng.standard_normal((70, 40)).astype(np.float32)
    b = rng.standard_normal((40, 90)).astype(np.float32)
    got = matmul(nv.to_device(a), nv.to_device(b), contract=contract)
    assert ran == [{"contract": contract}]
    if contract:
        _check_float(got.copy_to_host(), a, b)
    else:
        np.testing.assert_array_equal(got.copy_to_host(), _loop_product(a, b))
    ran.clear()
    out = nv.device_array((70, 90), np.float64)  # the result cast: the SIMT kernel
    matmul(nv.to_device(a), nv.to_device(b), out=out)
    small = matmul(nv.to_device(a[:20]), nv.to_device(b[:, :20]))  # one block
    assert ran == []
    np.testing.assert_array_equal(out.copy_to_host(), _loop_product(a, b).astype(np.float64))
    np.testing.assert_array_equal(small.copy_to_host(), _loop_product(a[:20], b[:, :20]))

    def no_room(*args, **kwargs):  # the padded copies do not fit: the SIMT kernel needs none
        ran.append("no room")
        raise MemoryError("out of device memory")

    monkeypatch.setattr(blocked, "run", no_room)
    got = matmul(nv.to_device(a), nv.to_device(b))
    assert ran == ["no room"]
    np.testing.assert_array_equal(got.copy_to_host(), _loop_product(a, b))


@pytest.mark.parametrize("dtype", sorted(blocked.DEFAULTS))
def test_blocked_default_as_gpus_run_it(dtype, device):
    """blocked.DEFAULTS' kernel of each dtype itself (the kernel matmul runs on GPUs;
    lavapipe builds each in about 2 s), contracted and not, on two blocks with a padded k:
    NumPy's loop bit for bit without `contract`, within the bound with it. Where the
    device has less shared memory than the kernel needs (lavapipe's 32 KiB against b128's
    33 KiB of float64 slabs), its refusal, which matmul answers with the SIMT kernel."""
    v = blocked.BLOCKINGS[blocked.DEFAULTS[dtype]]
    rng = np.random.default_rng(21)
    a = rng.standard_normal((1, v.bm, 13)).astype(dtype)
    b = rng.standard_normal((1, 13, 2 * v.bn)).astype(dtype)
    if v.shared_bytes(np.dtype(dtype).itemsize) > device.info.max_shared_memory:
        with pytest.raises(ValueError, match=f"{v.name} needs .* bytes of shared memory"):
            blocked.run(nv.to_device(a), nv.to_device(b), nv.device_array((1, v.bm, 2 * v.bn),
                        dtype), device)
        return
    for contract in (False, True):
        out = nv.device_array((1, v.bm, 2 * v.bn), dtype)
        blocked.run(nv.to_device(a), nv.to_device(b), out, device, contract=contract)
        if contract:
            _check_float(out.copy_to_host(), a, b)
        else:
            np.testing.assert_array_equal(out.copy_to_host(), _loop_product(a, b))
