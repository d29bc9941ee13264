"""lavapipe's loop cap: measured at device creation and cached per driver; on a capped
driver every loop of a kernel is counted (kir/loop_guard.h), and a launch whose loops
the driver cut short raises VulkanLoopLimitError where its work is synchronised, never
a silently wrong answer: the loops users write and those the compiler makes
(``x.sum()``, ``np.dot``, ``x.mean()``, array expressions)."""

import json

import numba
import numpy as np
import pytest

import numba_vulkan as nv
from numba_vulkan import config
from numba_vulkan.runtime import disk

from conftest import run_python


@pytest.fixture(autouse=True)
def _loops_as_written(monkeypatch):
    """The model below counts the iterations of the loops as written: compiled without
    unrolling (NUMBA_VULKAN_UNROLL=1), which runs a range loop's iterations 8 at a time
    (test_unrolled_loops_are_right_or_cut)."""
    monkeypatch.setattr(config, "UNROLL", 1)


@nv.jit
def _single(n, out):
    s = 0
    for _ in range(n):
        s += 1
    out[0] = s


@nv.jit
def _stores(n, out):
    s = 0
    for j in range(n):
        s += 1
        out[1] = j
    out[0] = s


@nv.jit
def _two_loops(n, out):
    s1 = 0
    for _ in range(n):
        s1 += 1
    s2 = 0
    for _ in range(n):
        s2 += 1
    out[0] = s1
    out[1] = s2


@nv.jit
def _nested(n, out):
    s = 0
    for _ in range(n // 1000):
        for _ in range(1000):
            s += 1
    out[0] = s


@nv.jit
def _first_lane(n, out):
    if nv.global_id(0) < 1:  # one invocation loops, its neighbours in the subgroup do not
        s = 0
        for j in range(n):
            s += 1
            out[1] = j
        out[0] = s


@nv.jit
def _while_break(n, out):
    j = 0
    while True:
        j += 1
        if j >= n:
            break
    out[0] = j


@nv.jit
def _early_return(n, out):
    for j in range(n):
        if j == n - 1:
            out[0] = j
            return
    out[0] = -1


# The loop iterations an invocation runs; the oracle is numba.njit of the same function
# (of _stores for _first_lane, whose one looping invocation does what _stores does).
SCALAR_SHAPES = {
    _single: lambda n: n,
    _stores: lambda n: n,
    _two_loops: lambda n: 2 * n,
    _nested: lambda n: n // 1000 * 1001,
    _first_lane: lambda n: n,
    _while_break: lambda n: n,
    _early_return: lambda n: n,
}
ORACLE = {k: numba.njit(k.py_func) for k in SCALAR_SHAPES if k is not _first_lane}
ORACLE[_first_lane] = ORACLE[_stores]


@nv.jit
def _sum(x, out):
    out[0] = x.sum()


@nv.jit
def _dot(x, out):
    out[0] = np.dot(x, x)


@nv.jit
def _mean(x, out):
    out[0] = x.mean()


@nv.jit
def _expression(x, out):
    out[0] = (x * 2.0).sum()


ARRAY_SHAPES = (_sum, _dot, _mean, _expression)

SIZES = [1000, 32_767, 32_768, 65_534, 65_535, 65_536, 70_000, 200_000]


def _check(device, launch, n, expected, got):
    """Right, or VulkanLoopLimitError; on a capped driver an error past its cap, and none for
    loops far below it. `n`: the loop iterations of an invocation."""
    limit = device.info.loop_iteration_limit
    try:
        launch()
    except nv.VulkanLoopLimitError as e:
        assert limit is not None, f"{e} on a driver without a loop cap"
        assert n > limit // 2, f"n = {n}: {e}"
        assert "did not finish their loops" in str(e)
        return "cut"
    assert limit is None or n <= limit, f"n = {n}: no VulkanLoopLimitError past the cap ({got()})"
    assert got() == expected, f"n = {n}: a wrong answer without an error"
    return "right"


@pytest.mark.parametrize("kernel", list(SCALAR_SHAPES), ids=lambda k: k.__name__)
def test_loops_written_in_the_kernel(device, kernel):
    outcomes = []
    for n in SIZES:
        out, expected = np.zeros(2, np.int64), np.zeros(2, np.int64)
        ORACLE[kernel](np.int64(n), expected)
        outcomes.append(_check(device, lambda: kernel.forall(1)(np.int64(n), out), SCALAR_SHAPES[kernel](n),
                               expected.tolist(), lambda: out.tolist()))  # fmt: skip
    assert outcomes[0] == "right"


@pytest.mark.parametrize("kernel", ARRAY_SHAPES, ids=lambda k: k.__name__)
def test_loops_the_compiler_makes(device, kernel):
    oracle = numba.njit(kernel.py_func)
    rng = np.random.default_rng(3)
    outcomes = []
    for n in SIZES:
        # Whole numbers: sums exact in any order (numba.njit's np.dot is BLAS's)
        x, out, expected = rng.integers(0, 1000, n).astype(np.float64), np.zeros(1), np.zeros(1)
        oracle(x, expected)
        outcomes.append(_check(device, lambda: kernel.forall(1)(x, out), n, expected.tolist(),
                               lambda: out.tolist()))  # fmt: skip
    assert outcomes[0] == "right"
    if device.info.loop_iteration_limit is not None:
        assert outcomes[-1] == "cut"  # 200,000 elements: the case


@pytest.mark.parametrize("kernel", [_single, _stores, _sum], ids=lambda k: k.__name__)
def test_unrolled_loops_are_right_or_cut(device, kernel, monkeypatch):
    """Unrolled 8 times (the default), a range loop or a reduction runs an eighth of its
    iterations as loop iterations: right far past the cap, and still counted: cut past 8
    times the cap."""
    monkeypatch.setattr(config, "UNROLL", 8)
    unrolled = nv.jit(kernel.py_func)  # a new dispatcher: compiled with unrolling
    limit = device.info.loop_iteration_limit
    outcomes = []
    for n in (1000, 200_000, 600_000):
        if kernel is _sum:
            x, out = np.ones(n), np.zeros(1)
            launch, expected, got = lambda: unrolled.forall(1)(x, out), [float(n)], out.tolist
        else:
            out, want = np.zeros(2, np.int64), np.zeros(2, np.int64)
            ORACLE[kernel](np.int64(n), want)
            launch, expected, got = (lambda: unrolled.forall(1)(np.int64(n), out), want.tolist(),
                                     out.tolist)  # fmt: skip
        try:
            launch()
            assert got() == expected, f"n = {n}: a wrong answer without an error"
            outcomes.append("right")
        except nv.VulkanLoopLimitError:
            assert limit is not None
            outcomes.append("cut")
    assert outcomes[:2] == ["right", "right"]  # 200,000 iterations as 25,000
    if limit is not None:
        assert outcomes[2] == "cut"  # 75,000 unrolled iterations: past the cap


def test_error_reaches_synchronize_with_device_arrays(device):
    if device.info.loop_iteration_limit is None:
        pytest.skip("the device runs loops to the end")
    out = nv.device_array(2, np.int64)
    _single.forall(1)(np.int64(200_000), out)  # asynchronous: nothing raised yet
    with pytest.raises(nv.VulkanLoopLimitError, match="_single"):
        nv.synchronize()
    nv.synchronize()  # reported once
    _single.forall(1)(np.int64(10), out)
    assert out.copy_to_host()[0] == 10


def test_library_reductions_stay_below_the_cap(device):
    x = np.ones(200_000)
    d = nv.to_device(x)
    assert d.sum() == 200_000 and np.sum(d) == 200_000


def test_no_guard_without_a_cap_or_loops(device):
    out = np.zeros(1, np.int64)
    _single.forall(1)(np.int64(10), out)  # compiled here, whichever tests ran before
    spec = next(iter(_single.specialisations.values()))
    assert spec.guarded_loops == (0 if device.info.loop_iteration_limit is None else 1)

    @nv.jit
    def straight(out):
        out[0] = 1

    straight.forall(1)(np.zeros(1))
    assert next(iter(straight.specialisations.values())).guarded_loops == 0


@nv.jit
def _rounds(out, seeds):
    i = nv.global_id(0)
    if i < seeds.size:
        x = seeds[i]
        for _ in range(64):
            x ^= x >> np.uint32(3)
            for k in range(3, 9, 2):
                x += np.uint32(k)
        out[i] = x


@numba.njit
def _rounds_cpu(x):
    for _ in range(64):
        x ^= x >> np.uint32(3)
        for k in range(3, 9, 2):
            x += np.uint32(k)
    return x


@nv.jit
def _nested(out, n):
    s = 0
    for i in range(10):
        for j in range(10):
            s += 1
    for k in range(n):  # a trip count known only at the launch
        s += 1
    out[0] = s


@nv.jit
def _static_nested(out):
    s = 0
    for i in range(300):
        for j in range(300):  # 90,000 iterations in all: past the cap
            s += 1
    out[0] = s


def _guarded(kernel):
    return next(iter(kernel.specialisations.values())).guarded_loops


def test_loops_bounded_at_compile_time_need_no_guard(device):
    """A kernel whose range loops all have compile-time arguments, adding up to at most half
    the cap (64 + 64 * 3 iterations here), is not guarded, and computes numba.njit's result;
    one with more iterations in all, or a loop whose count is known only at the launch, is
    guarded, and past the cap raises."""
    seeds = np.arange(1000, dtype=np.uint32) * np.uint32(2654435761)
    out = np.zeros_like(seeds)
    _rounds.forall(seeds.size)(out, seeds)
    want = np.array([_rounds_cpu(x) for x in seeds], np.uint32)
    assert (out == want).all()
    assert _guarded(_rounds) == 0
    capped = device.info.loop_iteration_limit is not None
    o = np.zeros(1, np.int64)
    _nested.forall(1)(o, np.int64(5))
    assert o[0] == 105 and _guarded(_nested) == (3 if capped else 0)
    if capped:
        with pytest.raises(nv.VulkanLoopLimitError, match="_nested"):
            _static_nested.forall(1)(o)
        assert _guarded(_static_nested) == 2
    else:
        _static_nested.forall(1)(o)
        assert o[0] == 90_000


def test_lavapipe_of_mesa_22_has_the_cap(device):
    info = device.info
    if "llvmpipe" not in info.name or "Mesa 22." not in info.driver_info:
        pytest.skip("not Mesa 22's lavapipe")
    assert info.loop_iteration_limit == 65535
    assert nv.list_devices()[info.index].loop_iteration_limit == 65535


def test_probe_result_is_cached_per_driver(device, tmp_path):
    env = {"NUMBA_VULKAN_CACHE_DIR": str(tmp_path)}

    def run(code):
        r = run_python(code, **env)
        assert r.returncode == 0, r.stdout + r.stderr
        return r.stdout

    code = "import numba_vulkan as nv; print('LIMIT', nv.get_device().info.loop_iteration_limit)"
    out = run(code)
    expected = device.info.loop_iteration_limit
    assert f"LIMIT {expected}" in out
    data = json.loads((tmp_path / "driver_probes.json").read_text())
    key = disk.driver_key(device.info)
    assert data[key]["loop_iteration_limit"] == expected
    # A later process trusts the cache instead of probing again: change it, and it says so.
    data[key]["loop_iteration_limit"] = 12345
    (tmp_path / "driver_probes.json").write_text(json.dumps(data))
    code = (
        "import numba_vulkan as nv; print('LISTED', nv.list_devices()[0].loop_iteration_limit);"
        "print('LIMIT', nv.get_device(0).info.loop_iteration_limit)"
    )
    out = run(code)
    assert "LISTED 12345" in out and "LIMIT 12345" in out
