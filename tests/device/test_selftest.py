"""The driver self-test (runtime/selftest.py): its verdicts on the device, its cache per driver
and CPU, the software forms it switches on, and each software form forced and compared with
numba.njit bit for bit."""

import json
import os

import numba
import numpy as np
import pytest
from conftest import run_python

import numba_vulkan as nv
from numba_vulkan import launchers
from numba_vulkan.runtime import disk, selftest

pytestmark = pytest.mark.device


def _subprocess(code, cache_dir, **env):
    r = run_python(code, NUMBA_VULKAN_CACHE_DIR=str(cache_dir), **env)
    assert r.returncode == 0, r.stdout + r.stderr
    return r.stdout


def test_every_primitive_has_a_verdict(device):
    verdicts = dict(device.info.selftest)
    assert tuple(verdicts) == selftest.PRIMITIVES
    for p, v in verdicts.items():
        assert v in ("exact", "fused", "holds") or v.startswith(
            ("wrong: ", "not run: ", "not fused", "fails: ")), p
    # The forms in use are those the wrong primitives call for (and those forced).
    assert set(device.info.soft_forms) == set(selftest.soft_forms(verdicts))


def test_lavapipe_folds_float_zeros_and_gets_the_hidden_zeros(device):
    if "llvmpipe" not in device.info.name:
        pytest.skip("not lavapipe")
    verdicts = dict(device.info.selftest)
    assert verdicts["float_zeros_f32"].startswith("wrong: x + 0.0")
    assert "float_zeros" in device.info.soft_forms
    assert launchers.codegen_controls(device).hide_float_zeros


def test_a_verdict_reflects_what_the_kernel_computes(device):
    """Rounding: where the self-test calls the driver's float64 trunc exact, a kernel compiled
    for the raw driver agrees with NumPy; where wrong, it does not (the verdict is no guess)."""
    if not device.info.float64:
        pytest.skip("no float64")

    @nv.jit
    def trunc(x, out):
        i = nv.global_id(0)
        if i < x.size:
            out[i] = np.trunc(x[i])

    x = np.array([-0.0, -0.5, -0.4, -5e-324, 2.0**51 + 0.5, 1e10 + 0.25, 3.7, -3.7])
    out = np.zeros_like(x)
    token = selftest.RAW.set(True)
    try:
        trunc.forall(x.size)(x, out)
    finally:
        selftest.RAW.reset(token)
    same = np.array_equal(out.view(np.uint64), np.trunc(x).view(np.uint64))
    assert same == (dict(device.info.selftest)["rounding_f64"] == "exact")


def test_cached_per_driver_and_cpu_configuration(device, tmp_path):
    code = ("import numba_vulkan as nv; i = nv.get_device().info; "
            "print('FORMS', ','.join(i.soft_forms)); print('N', len(i.selftest))")  # fmt: skip
    out = _subprocess(code, tmp_path)
    assert f"N {len(selftest.PRIMITIVES)}" in out
    data = json.loads((tmp_path / "driver_probes.json").read_text())
    key = disk.driver_key(device.info)
    assert data[key]["selftest"]["version"] == selftest.VERSION
    assert set(data[key]["selftest"]["verdicts"]) == set(selftest.PRIMITIVES)
    if device.info.kind == "cpu":  # lavapipe's code depends on Mesa's variables: a new entry
        other = "256" if os.environ.get("LP_NATIVE_VECTOR_WIDTH") == "128" else "128"
        _subprocess(code, tmp_path, LP_NATIVE_VECTOR_WIDTH=other)
        keys = json.loads((tmp_path / "driver_probes.json").read_text())
        assert len([k for k in keys if "selftest" in keys[k]]) == 2


def test_a_cached_verdict_is_used_and_a_malformed_one_rerun(device, tmp_path):
    """The cache decides without running the test; an entry of another version is not
    trusted."""
    code = "import numba_vulkan as nv; print('FORMS', ','.join(nv.get_device().info.soft_forms))"
    _subprocess(code, tmp_path)
    path = tmp_path / "driver_probes.json"
    data = json.loads(path.read_text())
    key = disk.driver_key(device.info)
    verdicts = data[key]["selftest"]["verdicts"]
    verdicts["rounding_f32"] = "wrong: planted by the test"
    path.write_text(json.dumps(data))
    assert "rounding_f32" in _subprocess(code, tmp_path)
    data[key]["selftest"]["version"] = -1
    path.write_text(json.dumps(data))
    out = _subprocess(code, tmp_path)
    assert "rounding_f32" not in out or device.info.soft_forms.count("rounding_f32")


def test_switches(device, tmp_path):
    code = ("import numba_vulkan as nv; i = nv.get_device().info; "
            "print('FORMS', ','.join(i.soft_forms)); print('N', len(i.selftest))")  # fmt: skip
    out = _subprocess(code, tmp_path, NUMBA_VULKAN_SOFT_FORMS="all")
    assert f"FORMS {','.join(selftest.SOFT_FORMS)}" in out
    out = _subprocess(code, tmp_path / "off", NUMBA_VULKAN_SELFTEST="0")
    assert "N 0" in out
    assert not (tmp_path / "off" / "driver_probes.json").exists() or "selftest" not in \
        (tmp_path / "off" / "driver_probes.json").read_text()  # fmt: skip


def test_main_lists_the_verdicts(device, tmp_path):
    r = run_python("import runpy; runpy.run_module('numba_vulkan', run_name='__main__')",
                   NUMBA_VULKAN_CACHE_DIR=str(tmp_path))  # fmt: skip
    assert "driver self-test" in r.stdout
    assert "rounding_f64" in r.stdout and "software forms" in r.stdout


def test_unknown_forced_form_is_named():
    with pytest.warns(RuntimeWarning, match="NUMBA_VULKAN_SOFT_FORMS.*'rounding'"):
        assert selftest.forced_forms("rounding, float_zeros") == ("float_zeros",)


# ---------------------------------------------------------------- each form forced


def _rounding(x, out):
    for i in range(x.size):
        out[i, 0] = np.floor(x[i])
        out[i, 1] = np.ceil(x[i])
        out[i, 2] = np.trunc(x[i])
        out[i, 3] = x[i] - np.trunc(x[i])


def _rounding_operands(dtype):
    f = np.finfo(dtype)
    p = 2.0**f.nmant
    x = [0.0, -0.0, 0.5, -0.5, 0.4, -0.4, 1.5, -2.5, 3.7, -3.7, p, -p, p / 2 + 0.5, -(p / 2 + 0.5),
         2.0**31 + 0.5, -(2.0**31 + 0.5), 1e10 + 0.25, np.inf, -np.inf, np.nan,
         float(f.smallest_subnormal), -float(f.smallest_subnormal), float(f.max), -float(f.max)]
    rng = np.random.default_rng(5)
    bits = rng.integers(0, 2 ** (8 * np.dtype(dtype).itemsize) - 1, 200,
                        dtype=np.uint64 if dtype == np.float64 else np.uint32)  # fmt: skip
    return np.concatenate([np.array(x, dtype), bits.view(dtype)])


def _flushed(x, device):
    """Subnormals of a width the device does not promise to keep (DeviceInfo.denorm_preserve):
    left out, as the self-test leaves them out."""
    width = 8 * x.dtype.itemsize
    if width in device.info.denorm_preserve:
        return np.zeros(x.shape, bool)
    return (x != 0) & (np.abs(x) < np.finfo(x.dtype).tiny)


def _forced(form):
    """A dispatcher call context with the software form `form` forced on."""
    import contextlib

    from numba_vulkan import config

    @contextlib.contextmanager
    def forced():
        old = config.SOFT_FORMS
        config.SOFT_FORMS = form
        dev = nv.get_device()
        saved = dev.info
        import dataclasses

        dev.info = dataclasses.replace(saved, soft_forms=tuple(
            sorted(set(saved.soft_forms) | {form}, key=list(selftest.SOFT_FORMS).index)))
        try:
            yield
        finally:
            config.SOFT_FORMS = old
            dev.info = saved

    return forced()


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_soft_rounding_as_numba_njit(device, dtype):
    if dtype == np.float64 and not device.info.float64:
        pytest.skip("no float64")
    form = "rounding_f32" if dtype == np.float32 else "rounding_f64"
    x = _rounding_operands(dtype)
    x = x[~_flushed(x, device)]
    want = np.zeros((x.size, 4), dtype)
    numba.njit(_rounding)(x, want)
    got = np.zeros_like(want)
    kernel = nv.jit(_rounding)
    with _forced(form):
        assert launchers.codegen_controls(device).soft_rounding & (1 if dtype == np.float32 else 2)
        kernel.forall(1)(x, got)
    nan = np.isnan(want) & np.isnan(got)
    bad = (got.view(f"u{got.itemsize}") != want.view(f"u{want.itemsize}")) & ~nan
    assert not bad.any(), (x[bad.any(axis=1)][:4], got[bad][:4], want[bad][:4])


def test_soft_division_f32_as_numba_njit(device):
    if not device.info.float64:
        pytest.skip("no float64: the form needs it")

    def divide(a, b, out):
        for i in range(a.size):
            out[i] = a[i] / b[i]

    rng = np.random.default_rng(11)
    a = rng.integers(0, 2**32 - 1, 400, dtype=np.uint32).view(np.float32)
    b = rng.integers(0, 2**32 - 1, 400, dtype=np.uint32).view(np.float32)
    a[:4] = [1.0, -0.0, np.inf, 3.0]
    b[:4] = [3.0, 2.0, np.inf, -7.0]
    b[b == 0] = 1.0  # numba.njit raises ZeroDivisionError
    with np.errstate(all="ignore"):
        keep = ~(_flushed(a, device) | _flushed(b, device) | _flushed(a / b, device))
    a, b = a[keep], b[keep]
    want = np.zeros_like(a)
    with np.errstate(all="ignore"):
        numba.njit(divide)(a, b, want)
    got = np.zeros_like(a)
    with _forced("division_f32"):
        assert launchers.codegen_controls(device).divide_f32_in_f64
        nv.jit(divide).forall(1)(a, b, got)
    nan = np.isnan(want) & np.isnan(got)
    assert ((got.view(np.uint32) == want.view(np.uint32)) | nan).all()


def test_soft_float_zeros_as_numba_njit(device):
    def zeros(x, out):
        for i in range(x.size):
            out[i, 0] = x[i] + 0.0
            out[i, 1] = 0.0 - x[i]
            out[i, 2] = x[i] * 0.0
            out[i, 3] = 0.0 / x[i] if x[i] != 0.0 else 0.0 * x[i]

    x = np.array([-0.0, 0.0, 1.5, -2.0, np.inf, -np.inf, np.nan, 5e-324], np.float64)
    if not device.info.float64:
        x = x.astype(np.float32)
    want = np.zeros((x.size, 4), x.dtype)
    with np.errstate(all="ignore"):
        numba.njit(zeros)(x, want)
    got = np.zeros_like(want)
    with _forced("float_zeros"):
        assert launchers.codegen_controls(device).hide_float_zeros
        nv.jit(zeros).forall(1)(x, got)
    nan = np.isnan(want) & np.isnan(got)
    same = got.view(f"u{got.itemsize}") == want.view(f"u{want.itemsize}")
    assert (same | nan).all()


# ---------------------------------------------------------------- copies to pageable memory


def test_stream_copy_to_pageable_memory_is_done_on_return(device):
    """numba.cuda's promise: a copy into ordinary host memory has finished when the call
    returns, stream or not (programs read the array right after)."""
    n = 1 << 22
    d = nv.to_device(np.full(n, 4.0, np.float32))
    s = nv.stream()
    h = np.zeros(n, np.float32)
    d.copy_to_host(h, stream=s)
    assert h[0] == 4.0 and h[-1] == 4.0
    host = np.full(n, 2.0, np.float32)
    d.copy_to_device(host, stream=s)
    host[:] = 7.0  # the pageable source was read on return: the copy keeps 2.0
    s.synchronize()
    assert d.copy_to_host()[-1] == 2.0


def test_numba_cuda_layer_stream_copy_to_pageable_memory(device):
    from numba_vulkan import cuda

    n = 1 << 22
    s = cuda.stream()
    d = cuda.to_device(np.full(n, 3.0, np.float64), stream=s)
    h = np.zeros(n)
    d.copy_to_host(h, stream=s)
    assert h[0] == 3.0 and h[-1] == 3.0


def test_a_probe_file_others_can_write_is_not_trusted(device, tmp_path):
    """Verdicts steer the compiler: a driver_probes.json in a folder other users can write
    is neither read nor written (the test runs again in the process)."""
    code = "import numba_vulkan as nv; print('FORMS', ','.join(nv.get_device().info.soft_forms))"
    _subprocess(code, tmp_path)
    path = tmp_path / "driver_probes.json"
    data = json.loads(path.read_text())
    key = disk.driver_key(device.info)
    data[key]["selftest"]["verdicts"]["rounding_f32"] = "wrong: planted by another user"
    path.write_text(json.dumps(data))
    os.chmod(tmp_path, 0o777)
    try:
        r = run_python(code, NUMBA_VULKAN_CACHE_DIR=str(tmp_path))
    finally:
        os.chmod(tmp_path, 0o700)
    assert r.returncode == 0, r.stderr
    assert "rounding_f32" not in r.stdout.split("FORMS", 1)[1] or "rounding_f32" in \
        device.info.soft_forms  # fmt: skip
    assert "writable by others" in r.stderr
