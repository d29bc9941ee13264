"""Dask arrays of device arrays (numba_vulkan.dask): the NumPy functions Dask calls on chunks,
map_blocks / blockwise / map_overlap with kernels, our ufuncs, reductions and the "vulkan"
backend, against NumPy; then the same on a LocalVulkanCluster of two worker processes (one
per logical device). dask and distributed are test requirements: without them this module
fails rather than skips."""

import json

import dask
import dask.array as da
import numpy as np
import pytest
from conftest import run_python
from distributed import Client, wait
from distributed.protocol import deserialize, serialize

import numba_vulkan as nv
import numba_vulkan.dask as nvd
from numba_vulkan import config
from numba_vulkan.dask import cluster
from numba_vulkan.dask.cluster import LocalVulkanCluster, worker_device

pytestmark = [pytest.mark.device, pytest.mark.usefixtures("device")]

RNG = np.random.default_rng(7)
HOST = RNG.random((120, 90)).astype(np.float32)


@nv.jit
def _laplace(a, out):
    """out = the 5-point Laplacian of `a` inside, `a` on the border (one row per invocation:
    the loops stay short)."""
    i = nv.global_id(0)
    n, m = a.shape
    if i < n:
        for j in range(m):
            if 0 < i < n - 1 and 0 < j < m - 1:
                out[i, j] = a[i - 1, j] + a[i + 1, j] + a[i, j - 1] + a[i, j + 1] - 4 * a[i, j]
            else:
                out[i, j] = a[i, j]


def laplace_block(block):
    out = np.empty_like(block)  # a device array for a device block (runtime/array_functions.py)
    _laplace.forall(block.shape[0])(block, out)
    return out


def laplace_numpy(a):
    out = a.copy()
    out[1:-1, 1:-1] = a[:-2, 1:-1] + a[2:, 1:-1] + a[1:-1, :-2] + a[1:-1, 2:] - 4 * a[1:-1, 1:-1]
    return out


@nv.vectorize(["float32(float32, float32)"])
def _axpb(x, b):
    return 2 * x + b


@nv.guvectorize(["void(float32[:], float32[:])"], "(n)->()")
def _row_sum(row, out):
    s = np.float32(0)
    for k in range(row.shape[0]):
        s += row[k]
    out[0] = s


def device_dask(host=HOST, chunks=(40, 30)):
    return nvd.from_device_array(nv.to_device(host), chunks=chunks)


def values(x):
    """A computed result on the host, from a device array, a NumPy array or a scalar."""
    return np.asarray(x)


@pytest.fixture
def no_host_copies(monkeypatch):
    """Fail on any copy of a device array to the host while a graph is built."""
    def refuse(self, *args, **kwargs):
        raise AssertionError("a device array was copied to the host while building the graph")

    monkeypatch.setattr(nv.DeviceArray, "copy_to_host", refuse)


# ---- chunk functions on device arrays -------------------------------------------------


@pytest.mark.parametrize("name", ["sum", "prod", "mean", "min", "max"])
@pytest.mark.parametrize("axis", [None, 0, 1, (0, 1), -1])
@pytest.mark.parametrize("keepdims", [False, True])
def test_reductions_over_axes_match_numpy(name, axis, keepdims):
    host = HOST[:12, :9] + 0.5  # small enough for prod to stay finite
    got = getattr(np, name)(nv.to_device(host), axis=axis, keepdims=keepdims)
    want = getattr(np, name)(host, axis=axis, keepdims=keepdims)
    assert values(got).shape == np.shape(want) and values(got).dtype == np.asarray(want).dtype
    np.testing.assert_allclose(values(got), want, rtol=2e-6)


@pytest.mark.parametrize("name", ["sum", "max", "min", "prod"])
def test_reduction_over_length_one_axes_is_a_new_array(name):
    """Reducing axes of length 1 computes nothing, yet the result is a new array, as NumPy's:
    writing the input afterwards leaves it alone (it was a view of the input)."""
    host = np.array([[1.5], [2.5], [-3.0]], np.float32)
    d = nv.to_device(host)
    got = getattr(np, name)(d, axis=1, keepdims=True)
    d[0, 0] = 7.0
    np.testing.assert_array_equal(values(got), getattr(np, name)(host, axis=1, keepdims=True))


def test_reduction_dtypes_nan_and_long_rows():
    ints = RNG.integers(-9, 9, (5, 70000)).astype(np.int32)  # rows past lavapipe's loop cap
    d = nv.to_device(ints)
    got = np.sum(d, axis=1)
    assert isinstance(got, nv.DeviceArray) and got.dtype == np.int64
    np.testing.assert_array_equal(values(got), ints.sum(axis=1))
    np.testing.assert_array_equal(values(np.max(d, axis=1, keepdims=True)),
                                  ints.max(axis=1, keepdims=True))  # fmt: skip
    flags = ints > 0
    np.testing.assert_array_equal(values(np.max(nv.to_device(flags), axis=0)), flags.max(axis=0))
    np.testing.assert_array_equal(values(np.sum(nv.to_device(flags), axis=0)), flags.sum(axis=0))
    with_nan = HOST.copy()
    with_nan[3, 4] = np.nan
    np.testing.assert_array_equal(values(np.min(nv.to_device(with_nan), axis=1)),
                                  with_nan.min(axis=1))  # fmt: skip
    np.testing.assert_allclose(values(np.mean(d, axis=0, dtype=np.float32)),
                               ints.mean(axis=0, dtype=np.float32), rtol=1e-6)  # fmt: skip
    with pytest.raises(ValueError, match="zero-size"):
        np.max(nv.device_array((0, 3), np.float32), axis=0)


def test_joining_and_creation_on_the_device():
    d = nv.to_device(HOST)
    parts = [d[:10], d[10:30:2], d[::-1][:5]]
    want = np.concatenate([HOST[:10], HOST[10:30:2], HOST[::-1][:5]])
    got = np.concatenate(parts)
    assert isinstance(got, nv.DeviceArray)
    np.testing.assert_array_equal(values(got), want)
    np.testing.assert_array_equal(values(np.concatenate([d, d[:, :7]], axis=1)),
                                  np.concatenate([HOST, HOST[:, :7]], axis=1))  # fmt: skip
    np.testing.assert_array_equal(values(np.stack([d, d * 2], axis=-1)),
                                  np.stack([HOST, HOST * 2], axis=-1))  # fmt: skip
    for f, fill in ((np.zeros_like, 0), (np.ones_like, 1)):
        made = f(d, dtype=np.int32, shape=(3, 4))
        assert isinstance(made, nv.DeviceArray) and made.device is d.device
        np.testing.assert_array_equal(values(made), np.full((3, 4), fill, np.int32))
    np.testing.assert_array_equal(values(np.full_like(d, 2.5)), np.full_like(HOST, 2.5))
    assert isinstance(np.empty_like(d), nv.DeviceArray)
    np.testing.assert_array_equal(values(np.arange(7, like=d)), np.arange(7))
    np.testing.assert_array_equal(values(np.ones((2, 3), np.int16, like=d)), np.ones((2, 3)))
    np.testing.assert_array_equal(values(np.broadcast_to(d[0], (4, 90)) + 0),
                                  np.broadcast_to(HOST[0], (4, 90)))  # fmt: skip
    assert d.astype(np.float32, copy=False) is d
    np.testing.assert_array_equal(values(d.astype(np.int16)), HOST.astype(np.int16))


def test_device_arrays_pickle_and_serialize_through_host_bytes():
    import pickle

    d = nv.to_device(HOST[::2])
    back = pickle.loads(pickle.dumps(d))
    assert isinstance(back, nv.DeviceArray)
    np.testing.assert_array_equal(values(back), HOST[::2])
    header, frames = serialize(d, serializers=("dask",))
    assert header["serializer"] == "dask"
    again = deserialize(header, frames)
    assert isinstance(again, nv.DeviceArray)
    np.testing.assert_array_equal(values(again), HOST[::2])


SCALE = 2


def test_a_kernel_pickles_with_the_globals_it_compiled_with():
    """Dask pickles (cloudpickle) every function it tokenises with the kernels it calls: a
    kernel pickles its function with the values its globals have; once compiled, the first
    pickle is kept (later Dask graphs no longer pickle the function), and with it those
    values, as the compiled kernel keeps the values of its compile."""
    import pickle

    import cloudpickle

    global SCALE

    def make():  # a local function: cloudpickle takes it by value, with SCALE's value
        @nv.jit
        def scale(a):
            i = nv.global_id(0)
            if i < a.size:
                a[i] *= SCALE

        return scale

    def run(kernel):
        d = nv.to_device(np.arange(5, dtype=np.int64))
        kernel.forall(5)(d)
        return d.copy_to_host()

    kernel = make()
    SCALE = 3
    try:
        fresh = pickle.loads(cloudpickle.dumps(kernel))
        assert type(fresh) is type(kernel) and fresh is not kernel
        np.testing.assert_array_equal(run(fresh), np.arange(5) * 3)  # SCALE when pickled
        np.testing.assert_array_equal(run(kernel), np.arange(5) * 3)  # compiles: SCALE 3
        compiled = cloudpickle.dumps(kernel)
        SCALE = 4
        again = pickle.loads(cloudpickle.dumps(kernel))
        assert again.options == kernel.options
        np.testing.assert_array_equal(run(again), np.arange(5) * 3)  # as the compiled kernel
        np.testing.assert_array_equal(run(kernel), np.arange(5) * 3)
        np.testing.assert_array_equal(run(pickle.loads(compiled)), np.arange(5) * 3)
        np.testing.assert_array_equal(run(pickle.loads(cloudpickle.dumps(make()))),
                                      np.arange(5) * 4)  # a new kernel: SCALE now
    finally:
        SCALE = 2


def test_a_function_that_refers_to_its_own_kernel_pickles():
    """A recursive device function names its own kernel: its pickle, made inside the
    kernel's, takes the kernel from there rather than pickling it again without end."""
    import pickle

    import cloudpickle

    def make():
        @nv.jit
        def fact(n):
            if n <= 1:
                return 1
            return n * fact(n - 1)

        return fact

    fact = make()
    copy = pickle.loads(cloudpickle.dumps(fact))
    assert type(copy) is type(fact) and copy.options == fact.options
    inner = copy.py_func.__closure__[0].cell_contents
    assert type(inner) is type(fact) and inner.py_func is copy.py_func


def test_a_cuda_kernel_pickles_with_its_signature_and_debug():
    """A numba.cuda kernel of a signature converts its scalars to the signature's types, and
    one of debug=True waits at each launch: a pickled copy does the same."""
    import pickle

    import cloudpickle

    from numba_vulkan import cuda

    def make():
        @cuda.jit("void(float64[:], float32)", debug=True, opt=False)
        def times3(a, x):
            i = cuda.grid(1)
            if i < a.size:
                a[i] = x * 3

        return times3

    kernel = make()
    copy = pickle.loads(cloudpickle.dumps(kernel))
    assert type(copy) is type(kernel) and copy.sync_launches
    want = np.float64(np.float32(0.1)) * 3  # x converted to float32, not 0.1 * 3
    assert want != 0.1 * 3
    for k in (kernel, copy):
        d = nv.device_array(4, np.float64)
        k[1, 4](d, 0.1)
        np.testing.assert_array_equal(d.copy_to_host(), np.full(4, want))


# ---- Dask on one device (the threaded scheduler) ---------------------------------------


def test_chunks_are_device_arrays_and_graphs_never_copy_to_the_host(no_host_copies):
    x = device_dask()
    assert isinstance(x._meta, nv.DeviceArray) and x._meta.size == 0
    built = [x * 2 + 1, (x * 2).sum(axis=0), x.mean(axis=1, keepdims=True), x.max(axis=0),
             x.map_blocks(laplace_block, dtype=x.dtype), _axpb(x, 1.0),
             x.map_overlap(laplace_block, depth=1, boundary="none"),
             da.concatenate([x, x], axis=1)]  # fmt: skip
    for y in built:
        assert isinstance(y._meta, nv.DeviceArray), y
    assert x.max().shape == ()  # a full reduction: NumPy's scalar result, so NumPy's meta


def test_map_blocks_blockwise_and_elementwise_match_numpy():
    x = device_dask()
    y = x.map_blocks(laplace_block, dtype=x.dtype)
    got = y.compute(scheduler="threads")
    assert isinstance(got, nv.DeviceArray)
    # Per block: the Laplacian of each 40 x 30 block on its own.
    want = np.block([[laplace_numpy(HOST[i:i + 40, j:j + 30]) for j in range(0, 90, 30)]
                     for i in range(0, 120, 40)])  # fmt: skip
    np.testing.assert_allclose(values(got), want, rtol=1e-6, atol=1e-6)
    z = da.blockwise(lambda a, b: a * b + 1, "ij", x, "ij", x.T.T, "ij", dtype=x.dtype)
    np.testing.assert_allclose(values(z.compute(scheduler="threads")), HOST * HOST + 1,
                               rtol=1e-6)  # fmt: skip
    chain = np.sqrt(x * x + 1) - x / 2
    np.testing.assert_allclose(values(chain.compute(scheduler="threads")),
                               np.sqrt(HOST * HOST + 1) - HOST / 2, rtol=1e-6)  # fmt: skip


def test_map_overlap_stencil_matches_numpy():
    x = device_dask()
    y = x.map_overlap(laplace_block, depth=1, boundary="none", dtype=x.dtype)
    np.testing.assert_allclose(values(y.compute(scheduler="threads")), laplace_numpy(HOST),
                               rtol=1e-5, atol=1e-5)  # fmt: skip
    periodic = x.map_overlap(laplace_block, depth=1, boundary="periodic", dtype=x.dtype)
    padded = np.pad(HOST, 1, mode="wrap")
    np.testing.assert_allclose(values(periodic.compute(scheduler="threads")),
                               laplace_numpy(padded)[1:-1, 1:-1], rtol=1e-5, atol=1e-5)  # fmt: skip


def test_our_ufuncs_on_dask_arrays():
    x = device_dask()
    y = _axpb(x, np.float32(3))
    assert isinstance(y, da.Array) and y.dtype == np.float32
    np.testing.assert_allclose(values(y.compute(scheduler="threads")), 2 * HOST + 3, rtol=1e-6)
    rows = _row_sum(x.rechunk((40, -1)))  # the core dimension in one chunk
    assert isinstance(rows, da.Array) and rows.shape == (120,)
    np.testing.assert_allclose(values(rows.compute(scheduler="threads")), HOST.sum(axis=1),
                               rtol=1e-5)  # fmt: skip


@pytest.mark.parametrize("name", ["sum", "mean", "max", "min"])
def test_dask_reductions_match_numpy(name):
    x = device_dask()
    for axis in (None, 0, 1):
        got = getattr(x, name)(axis=axis).compute(scheduler="threads")
        np.testing.assert_allclose(values(got), getattr(HOST, name)(axis=axis), rtol=1e-5)
    got = getattr(x, name)(axis=0, keepdims=True).compute(scheduler="threads")
    assert isinstance(got, nv.DeviceArray) and got.shape == (1, 90)


def test_the_vulkan_backend():
    with dask.config.set({"array.backend": "vulkan"}):
        ones = da.ones((50, 40), chunks=20, dtype=np.float32)
        ramp = da.arange(0, 100, 3, chunks=10)
        full = da.full((30,), 7, chunks=8)
        noise = da.random.random((64,), chunks=16)
    for y in (ones, ramp, full, noise):
        assert isinstance(y._meta, nv.DeviceArray), y
    got = (ones * 2).sum(axis=0).compute(scheduler="threads")
    assert isinstance(got, nv.DeviceArray)
    np.testing.assert_array_equal(values(got), np.full(40, 100, np.float32))
    np.testing.assert_array_equal(values(ramp.compute(scheduler="threads")), np.arange(0, 100, 3))
    np.testing.assert_array_equal(values(full.compute(scheduler="threads")), np.full(30, 7))
    drawn = values(noise.compute(scheduler="threads"))
    assert drawn.shape == (64,) and 0 <= drawn.min() and drawn.max() < 1
    host = da.from_array(HOST, chunks=30)
    moved = host.to_backend("vulkan")
    assert isinstance(moved._meta, nv.DeviceArray)
    assert isinstance(moved.blocks[0, 0].compute(scheduler="threads"), nv.DeviceArray)
    back = (moved + 1).to_backend("numpy")
    assert isinstance(back._meta, np.ndarray)
    np.testing.assert_array_equal(back.compute(scheduler="threads"), HOST + 1)


# ---- a cluster of two worker processes ---------------------------------------------------


@pytest.fixture(scope="module")
def client(device):
    index = device.info.vulkan_index if device.info.vulkan_index >= 0 else device.info.index
    with LocalVulkanCluster(devices=f"{index},{index}", pool_mb=96) as cluster, \
            Client(cluster) as c:
        yield c


def test_cluster_has_one_worker_per_device(client):
    seen = client.run(worker_device)
    assert len(seen) == 2
    assert {w["visible"] for w in seen.values()} == {client.cluster.devices[0]}
    assert len({w["pid"] for w in seen.values()}) == 2
    assert {w["pool_limit"] for w in seen.values()} == {96 << 20}  # pool_mb=


@pytest.mark.parametrize("pool_mb", [-1, 1.5, "1024", True, 2**31])
def test_cluster_refuses_a_bad_pool_size(pool_mb):
    with pytest.raises(ValueError, match="pool_mb must be a number of MiB"):
        LocalVulkanCluster(devices="0", pool_mb=pool_mb)


def test_pipeline_on_the_cluster_matches_numpy(client):
    x = device_dask()
    stencil = x.map_overlap(laplace_block, depth=1, boundary="none", dtype=x.dtype)
    pipeline = _axpb(stencil, np.float32(1))
    total = pipeline.sum(axis=0)
    got = client.compute(total).result()
    assert isinstance(got, nv.DeviceArray)
    np.testing.assert_allclose(values(got), (2 * laplace_numpy(HOST) + 1).sum(axis=0), rtol=1e-4)
    with dask.config.set({"array.backend": "vulkan"}):
        ones = da.ones((64, 64), chunks=16, dtype=np.float32)  # 16 blocks made on the workers
    doubled = client.persist(_axpb(ones, np.float32(0)))
    wait(doubled)
    held = client.who_has(doubled)
    assert len({w for ws in held.values() for w in ws}) == 2  # both workers hold blocks
    assert float(values(client.compute(doubled.mean()).result())) == 2.0


def test_workers_find_the_first_kernel_in_the_disk_cache(device, monkeypatch, tmp_path):
    """The cluster compiles the workers' first kernel once, here, into the disk cache; a
    fresh process on the device (as a worker is) loads it instead of compiling it."""
    monkeypatch.setattr(config, "CACHE", 1)
    monkeypatch.setattr(config, "CACHE_DIR", str(tmp_path))
    index = device.info.vulkan_index if device.info.vulkan_index >= 0 else device.info.index
    misses = sum(cluster._first_kernel.stats.cache_misses.values())
    cluster._compile_first_kernel([str(index), str(index)])  # one device, named twice
    assert sum(cluster._first_kernel.stats.cache_misses.values()) == misses + 1
    assert len(list((tmp_path / "kernels").glob("*.nvk"))) == 1
    code = (
        "import json\n"
        "from numba_vulkan.dask import cluster\n"
        "cluster.warm_up()\n"
        "s = cluster._first_kernel.stats\n"
        "print(json.dumps([sum(s.cache_hits.values()), sum(s.cache_misses.values())]))\n"
    )
    done = run_python(code, NUMBA_VULKAN_CACHE="1", NUMBA_VULKAN_CACHE_DIR=str(tmp_path),
                      NUMBA_VULKAN_VISIBLE_DEVICES=f"{index},{index}")  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout.splitlines()[-1]) == [1, 0]  # one hit, no compilation


def test_the_forkserver_preload_never_touches_vulkan():
    """What the forkserver imports (and so every worker inherits) lists no device and opens
    none: a forked worker could not use it (VulkanForkError)."""
    code = (
        "import numba_vulkan.dask.forkserver\n"
        "from numba_vulkan.runtime import device_list\n"
        "print(device_list._infos is None and not device_list.opened)\n"
    )
    done = run_python(code)
    assert done.returncode == 0, done.stderr
    assert done.stdout.split()[-1] == "True"


def test_from_device_array_takes_views_where_from_array_copies(device):
    """nvd.from_device_array: chunks that are views of the array (no new device memory; a
    write to the array shows in the result), the same chunks and values as da.from_array,
    which copies the array first; a host array is refused with the function to use."""
    d = nv.to_device(HOST)
    live = device.pool_stats()["live_bytes"]
    x = nvd.from_device_array(d, chunks=(40, 30))
    assert device.pool_stats()["live_bytes"] - live < d.nbytes  # the empty meta's bucket
    copied = da.from_array(d, chunks=(40, 30), asarray=False, name=False)
    assert device.pool_stats()["live_bytes"] >= live + d.nbytes
    assert x.chunks == copied.chunks and x.name != nvd.from_device_array(d, 50).name
    np.testing.assert_array_equal(values((x * 2).compute()), values((copied * 2).compute()))
    d[0, 0] = -1.0
    assert values(x[0, 0].compute()) == -1.0 and values(copied[0, 0].compute()) == HOST[0, 0]
    assert nvd.from_device_array(d, name="mine").name == "mine"
    with pytest.raises(TypeError, match="da.from_array takes host arrays"):
        nvd.from_device_array(HOST)


def test_device_meta():
    meta = nvd.device_meta(np.int16, 3)
    assert isinstance(meta, nv.DeviceArray) and meta.shape == (0, 0, 0) and meta.dtype == np.int16


def test_the_dask_page_runs_as_written(monkeypatch, tmp_path):
    """docs/dask.md's Python blocks, in order, in one namespace run as a script's."""
    import re
    from pathlib import Path

    page = Path(__file__).resolve().parents[2] / "docs" / "dask.md"
    if not page.exists():
        pytest.skip("not a source checkout")
    monkeypatch.chdir(tmp_path)
    ns = {"__name__": "__main__"}
    blocks = re.findall(r"```python\n(.*?)```", page.read_text(), re.DOTALL)
    assert len(blocks) >= 4
    for i, block in enumerate(blocks):
        exec(compile(block, f"dask.md block {i + 1}", "exec"), ns)  # noqa: S102
    want = np.maximum(np.asarray(ns["smoothed"].compute(scheduler="threads")) - 0.5, 0) * 2
    np.testing.assert_allclose(np.asarray(ns["result"]), want.mean(axis=0), rtol=1e-5)
