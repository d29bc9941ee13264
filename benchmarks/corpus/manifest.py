"""The corpus: which public numba.cuda kernels it runs, and how (our code only).

Each entry names where a kernel's source is (a pinned PyPI package, a file in it, the test
method that holds a documentation example, the names of the kernel and of the helpers and
constants it uses); sources.py extracts those definitions word for word and changes only the
numba.cuda import. Everything else here is ours: the sizes, the inputs, the launch
configuration, the NumPy reference and the tolerance. ``expect`` says what numba_vulkan does
with the kernel: "ok", or "refused: <words of the refusal>" (the kernel stays in the corpus so
that a refusal lifted, or a new one, shows; numba.cuda still runs it on the GPU host).

``sizes``: "small" is CI's (lavapipe, 2 cores: every entry in well under a second, every loop
under the driver's 65,535 iterations per invocation); "full" is the GPU host's (a few
milliseconds or more on an H200, except kernels fixed at one block or one thread by their own
code: ``fixed`` says so and the ratio of those measures a launch, not the code generation).
"""

import importlib
import math
import types
from dataclasses import dataclass, field

import numpy as np

PACKAGES = {"numba-cuda": "0.30.4"}

# sha256 of every file the corpus reads, as published in the pinned releases: a different
# file (a re-published release, another version) is reported rather than run silently.
FILE_SHA256 = {}  # filled in below, next to the files' paths

DOC = "numba_cuda/numba/cuda/tests/doc_examples/"
CUDAPY = "numba_cuda/numba/cuda/tests/cudapy/"
BENCH = "numba_cuda/numba/cuda/tests/benchmarks/"

GRID_SYNC = "refused: grid-wide synchronisation"
# cuda.syncwarp runs as a subgroup barrier where subgroups hold a warp of 32 lanes or more;
# narrower ones (lavapipe's 8) would leave the warp's lanes unsynchronised: refused there.
NARROW_WARP = "refused: cuda.syncwarp synchronises a warp of 32 lanes"


class FromCuda:
    """An argument or global made with the backend's own cuda module (device arrays, random
    states): ``FromCuda(lambda cuda: cuda.to_device(x))``."""

    def __init__(self, make):
        self.make = make


def states(n, seed):
    def make(cuda):
        random = importlib.import_module(cuda.__name__ + ".random")
        return random.create_xoroshiro128p_states(n, seed=seed)

    return FromCuda(make)


@dataclass
class Case:
    """One run of a kernel: host inputs, launch configuration, expected outputs."""

    args: list
    launch: tuple  # kernel[launch]
    # argument index -> expected array; or expect(warp) -> that, where the result depends on
    # the warp size (numba_vulkan.cuda's warpsize is the device's subgroup size: 8 on lavapipe)
    expect: object = field(default_factory=dict)
    check: object = None  # or check(outputs: {index: array}) -> None or what is wrong
    env: dict = field(default_factory=dict)  # globals the manifest gives (sizes, stand-ins)


@dataclass
class Kernel:
    id: str
    file: str
    names: tuple  # definitions taken from the file (helpers and constants first)
    case: object  # case(size, rng) -> Case
    sizes: dict
    scope: str = None  # "Class.method" holding the definitions, None for the module
    package: str = "numba-cuda"
    jit: object = None  # jit(cuda, function) where the test compiles the function itself
    rtol: float = 1e-6
    atol: float = 0.0
    expect: str = "ok"
    fixed: bool = False
    note: str = ""
    warp: int = 0  # lanes of a warp the kernel needs (refused on narrower subgroups), or 0

    @property
    def kernel(self):
        return self.names[-1]

    def expected(self, subgroup_size):
        """What numba_vulkan should do with the kernel on a device of that subgroup size."""
        return NARROW_WARP if self.warp and subgroup_size < self.warp else self.expect


def _blocks(n, tpb=256):
    return ((n + tpb - 1) // tpb, tpb)


def _warp_ids(n):
    return np.arange(n) // 32


# ------------------------------------------------------------------ references (NumPy)


def _cnd(d):
    a1, a2, a3, a4, a5 = 0.31938153, -0.356563782, 1.781477937, -1.821255978, 1.330274429
    k = 1.0 / (1.0 + 0.2316419 * np.abs(d))
    r = 0.39894228040143267793994605993438 * np.exp(-0.5 * d * d) * (
        k * (a1 + k * (a2 + k * (a3 + k * (a4 + k * a5)))))
    return np.where(d > 0, 1.0 - r, r)


def _black_scholes(n, rng):
    s = rng.uniform(5.0, 30.0, n)
    x = rng.uniform(1.0, 100.0, n)
    t = rng.uniform(0.25, 10.0, n)
    r, v = 0.02, 0.30
    d1 = (np.log(s / x) + (r + 0.5 * v * v) * t) / (v * np.sqrt(t))
    d2 = d1 - v * np.sqrt(t)
    e = np.exp(-r * t)
    call = s * _cnd(d1) - x * e * _cnd(d2)
    put = x * e * (1.0 - _cnd(d2)) - s * (1.0 - _cnd(d1))
    return Case([np.zeros(n), -np.ones(n), s, x, t, r, v], (((n + 511) // 512, 1), (512, 1)),
                {0: call, 1: put})


def _matmul(n, rng, dtype=np.float32, acc=np.float64, tpb=16):
    a = rng.random((n, n), dtype=np.float32).astype(dtype)
    b = rng.random((n, n), dtype=np.float32).astype(dtype)
    c = (a.astype(acc) @ b.astype(acc)).astype(dtype)
    g = (n + tpb - 1) // tpb
    return Case([a, b, np.zeros((n, n), dtype)], ((g, g), (tpb, tpb)), {2: c})


def _jacobi(n, rng):
    a = rng.random((n, n))
    anew = np.zeros((n, n))
    ref = anew.copy()
    ref[1:-1, 1:-1] = 0.25 * (a[1:-1, 2:] + a[1:-1, :-2] + a[:-2, 1:-1] + a[2:, 1:-1])
    err = np.zeros((n, n))
    err[1:-1, 1:-1] = ref[1:-1, 1:-1] - a[1:-1, 1:-1]
    g = n // 16
    error = err.reshape(g, 16, g, 16).max(axis=(1, 3))  # [block row j, block column i]
    return Case([a, anew, np.zeros((g, g))], ((g, g), (16, 16)), {1: ref, 2: error},
                env={"config": types.SimpleNamespace(ENABLE_CUDASIM=False)})


def _stride2d(n):
    """(grid, block) for the grid-stride 2D kernels: 32 x 8 threads, 4 x 4 elements each."""
    return ((max(1, n // 128), max(1, n // 32)), (32, 8))


def _sync_pred(n, rng, kind):
    tpb = 256
    blocks = n // tpb
    x = np.zeros(n, np.int32) if kind == "or" else np.ones(n, np.int32)
    chosen = rng.random(blocks) < 0.5
    for b in np.flatnonzero(chosen):  # half the blocks get one odd thread
        x[b * tpb + rng.integers(tpb)] = 1 if kind == "or" else 0
    if kind == "count":
        x = (rng.random(n) < 0.3).astype(np.int32)
    per = x.reshape(blocks, tpb)
    value = {"count": per.sum(1), "and": per.all(1), "or": per.any(1)}[kind]
    return Case([x, np.zeros(n, np.int32)], (blocks, tpb),
                {1: np.repeat(value.astype(np.int32), tpb)})


def _vote(n, rng, kind):
    """Groups of 8 lanes all zero, all one or mixed (a mixed warp of 32 mixes every 8)."""
    groups = n // 8
    pattern = rng.integers(0, 3, groups)
    x = np.repeat(pattern.clip(0, 1), 8).astype(np.int32)
    mixed = np.flatnonzero(pattern == 2)
    x.reshape(groups, 8)[mixed] = rng.integers(0, 2, (len(mixed), 8))
    x.reshape(groups, 8)[mixed, 0] = 0
    x.reshape(groups, 8)[mixed, 1] = 1

    def expect(warp):
        per = x.reshape(n // warp, warp) != 0
        value = {"all": per.all(1), "any": per.any(1), "eq": per.all(1) | ~per.any(1)}[kind]
        return {1: np.repeat(value.astype(np.int32), warp)}

    return Case([x, np.zeros(n, np.int32)], _blocks(n), expect)


def _match_any(n, rng):
    """Values 0-3 per lane: each lane's mask of the lanes of its warp holding its value."""
    x = rng.integers(0, 4, n).astype(np.int32)

    def expect(warp):
        per = x.reshape(n // warp, warp)
        bits = np.int64(1) << np.arange(min(warp, 32), dtype=np.int64)
        same = per[:, :, None] == per[:, None, :bits.size]
        return {1: (same * bits).sum(2).astype(np.uint32).view(np.int32).reshape(n)}

    return Case([x, np.zeros(n, np.int32)], _blocks(n), expect)


def _shfl(n, kind, k):
    def expect(warp):
        i = np.arange(n, dtype=np.int64)
        lane = i % warp
        ref = {"idx": i - lane + k % warp,
               "up": np.where(lane >= k, i - k, i),
               "down": np.where(lane + k < warp, i + k, i),
               "xor": i ^ (k % warp)}[kind]
        return {0: ref.astype(np.int32)}

    return Case([np.zeros(n, np.int32), k], _blocks(n), expect)


def _cas(n, rng):
    fill, unfill = -99, -1
    res = np.where(rng.random(n) < 0.5, fill, unfill).astype(np.int32)
    ary = rng.integers(1, 10, n).astype(np.int32)
    expect_res = np.where(res == fill, ary, unfill).astype(np.int32)
    return Case([res, np.zeros(n, np.int32), ary, np.int32(fill)], _blocks(n),
                {0: expect_res, 1: res.copy()})


def _uniform_check(lo, hi, mean):
    def check(out):
        x = next(iter(out.values())).ravel()
        if not (np.all(x >= lo) and np.all(x <= hi)):
            return f"values outside [{lo}, {hi}]: min {x.min()}, max {x.max()}"
        if abs(x.mean() - mean) > 6 * (hi - lo) / math.sqrt(12 * x.size):
            return f"mean {x.mean()} far from {mean}"
        return None

    return check


def _normal_check(out):
    x = next(iter(out.values())).ravel()
    if abs(x.mean()) > 6 / math.sqrt(x.size) or abs(x.std() - 1) > 0.05:
        return f"mean {x.mean()}, std {x.std()} not those of N(0, 1)"
    return None


def _no_check(out):
    return None


def _heat(n, steps):
    data = np.zeros(n)
    data[n // 2] = 10000.0
    a, b = data.copy(), np.zeros(n)
    k = 0.25
    for step in range(steps):
        cur, nxt = (a, b) if step % 2 == 0 else (b, a)
        new = cur.copy()
        new[0] = cur[0] + k * (cur[1] - 2 * cur[0])
        new[-1] = cur[-1] + k * (cur[-2] - 2 * cur[-1])
        new[1:-1] = cur[1:-1] + k * (cur[:-2] - 2 * cur[1:-1] + cur[2:])
        nxt[:] = new
    return Case([data, np.zeros(n), steps, 0.25], _blocks(n), {0: a, 1: b})


def _sessionize():
    ids = np.array([1] * 6 + [2] * 3 + [3] * 10 + [4] * 9)
    sec = np.array([1, 2, 3, 5000, 5001, 5002, 1, 2, 3, 1, 2, 5000, 5001, 10000, 10001,
                    10002, 10003, 15000, 150001, 1, 5000, 50001, 15000, 20000, 25000,
                    25001, 25002, 25003], dtype="datetime64[ns]").astype("int64")
    expect = [0, 0, 0, 3, 3, 3, 6, 6, 6, 9, 9, 11, 11, 13, 13, 13, 13, 17, 18, 19, 20, 21,
              21, 23, 24, 24, 24, 24]
    return Case([ids, sec, np.zeros(len(ids))], _blocks(len(ids), 32),
                {2: np.array(expect, float)},
                env={"session_timeout": np.int64(np.timedelta64("3600", "s"))})


def _given(make, *values):
    """make(*values): a case built from inputs drawn once."""
    return make(*values)


def _sig(signature):
    return lambda cuda, f: cuda.jit(signature)(f)


def _lazy(cuda, f):
    return cuda.jit(f)


# ------------------------------------------------------------------------- the corpus

S = {"small": 1 << 14, "full": 1 << 25}  # the 1D elementwise kernels

KERNELS = [
    # ---- numba-cuda's documentation (docs/source/user/examples.rst includes these files)
    Kernel("doc_vecadd", DOC + "test_vecadd.py", ("f",), sizes=S,
           scope="TestVecAdd.test_ex_vecadd",
           case=lambda n, rng: _given(lambda a, b: Case([a, b, np.zeros(n)], _blocks(n),
                                                  {2: a + b}), rng.random(n), rng.random(n))),
    Kernel("doc_matmul", DOC + "test_matmul.py", ("matmul",), scope="test_matmul",
           sizes={"small": 40, "full": 2048}, rtol=1e-5, case=_matmul),
    Kernel("doc_fast_matmul", DOC + "test_matmul.py", ("TPB", "fast_matmul"),
           scope="test_matmul", sizes={"small": 48, "full": 4096}, rtol=1e-4, atol=1e-4,
           case=lambda n, rng: _matmul(n, rng, acc=np.float64)),
    Kernel("doc_reduction_array_sum", DOC + "test_reduction.py", ("array_sum",),
           scope="TestReduction.test_ex_reduction", sizes={"small": 1024, "full": 1024},
           fixed=True, note="one block of 1024 threads by its own code",
           case=lambda n, rng: Case([np.arange(n)], (1, n),
                                    {0: np.concatenate([[n * (n - 1) // 2], np.arange(1, n)])},
                                    env={"nelem": n})),
    Kernel("doc_montecarlo", DOC + "test_montecarlo.py", ("func", "mc_integrator_kernel"),
           scope="TestMonteCarlo.test_ex_montecarlo", sizes={"small": 1 << 14, "full": 1 << 25},
           note="xoroshiro128+ states made by each backend's create_xoroshiro128p_states",
           case=lambda n, rng: Case([np.zeros(n, np.float32), states(n, 42), 1, 2], _blocks(n),
                                    check=_uniform_check(0.5, 1.0, math.log(2)))),
    Kernel("doc_random_3d", DOC + "test_random.py", ("random_3d",),
           scope="TestRandom.test_ex_3d_grid",
           sizes={"small": (20, 24, 28, 2, 4), "full": (512, 512, 256, 16, 8)},
           case=lambda s, rng: Case(
               [np.zeros(s[:3], np.float32), states((s[3] * s[4]) ** 3, 1)],
               ((s[3],) * 3, (s[4],) * 3), check=_uniform_check(0.0, 1.0, 0.5))),
    Kernel("doc_cpu_gpu_compat", DOC + "test_cpu_gpu_compat.py", ("business_logic", "f"),
           scope="TestCpuGpuCompat.test_ex_cpu_gpu_compat", sizes=S, rtol=1e-12,
           case=lambda n, rng: _given(lambda x, y, z: Case(
               [np.zeros(n), x, y, z], _blocks(n),
               {0: 4 * z * (2 * x - (4 * y) / 2 * math.pi)}), 
               *(rng.integers(1, 5000, n) for _ in range(3)))),
    Kernel("doc_globals_constant", DOC + "test_globals.py", ("compute_totals",),
           scope="TestGlobals.test_ex_globals_constant_capture",
           sizes={"small": 1024, "full": 4096}, fixed=True, rtol=1e-12,
           note="a global NumPy array is a constant of the kernel: 32 KiB at most here",
           case=lambda n, rng: _given(lambda q, p: Case(
               [q, np.zeros(n)], _blocks(n), {1: q * p * (1 + 0.08)},
               env={"TAX_RATE": 0.08, "PRICES": p}), rng.random(n), rng.random(n) * 50)),
    Kernel("doc_globals_device_array", DOC + "test_globals.py", ("compute_totals",),
           scope="TestGlobals.test_ex_globals_device_array_capture", sizes=S,
           case=lambda n, rng: _given(lambda q, p: Case(
               [q, np.zeros(n, np.float32)], _blocks(n), {1: q * p},
               env={"PRICES": FromCuda(lambda cuda: cuda.to_device(p))}), 
               rng.random(n, np.float32), rng.random(n, np.float32))),
    Kernel("doc_cg_sequential_rows", DOC + "test_cg.py", ("sig", "sequential_rows"),
           scope="TestCooperativeGroups.test_ex_grid_sync", expect=GRID_SYNC,
           sizes={"small": 256, "full": 1024},
           case=lambda n, rng: Case([np.zeros((n, n), np.int32)], (n // 32, 32),
                                    {0: np.tile(np.arange(n), (n, 1)).T.astype(np.int32)})),
    Kernel("doc_laplace_heat", DOC + "test_laplace.py", ("solve_heat_equation",),
           scope="TestLaplace.test_ex_laplace", expect=GRID_SYNC, rtol=1e-9, atol=1e-9,
           sizes={"small": (1001, 100), "full": (1 << 17, 2000)},
           case=lambda s, rng: _heat(*s)),
    Kernel("doc_sessionize", DOC + "test_sessionize.py", ("sessionize",),
           scope="TestSessionization.test_ex_sessionize", expect=GRID_SYNC, fixed=True,
           sizes={"small": 28, "full": 28}, note="the documentation's 28 clicks",
           case=lambda n, rng: _sessionize()),
    # ---- numba-cuda's kernel tests (tests/cudapy)
    Kernel("blackscholes", CUDAPY + "test_blackscholes.py",
           ("RSQRT2PI", "A1", "A2", "A3", "A4", "A5", "cnd_cuda", "black_scholes_cuda"),
           scope="TestBlackScholes.test_blackscholes", sizes={"small": 1 << 12, "full": 1 << 24},
           rtol=1e-9, atol=1e-9, case=_black_scholes),
    Kernel("laplace_jacobi", CUDAPY + "test_laplace.py",
           ("tpb", "SM_SIZE", "get_max", "jocabi_relax_core"),
           scope="TestCudaLaplace.test_laplace_small", sizes={"small": 64, "full": 8192},
           rtol=1e-12, atol=1e-12, case=_jacobi),
    Kernel("square_matrix_mul", CUDAPY + "test_matmul.py",
           ("n", "SM_SIZE", "cu_square_matrix_mul"), scope="test_cuda_matmul",
           sizes={"small": 64, "full": 4096}, rtol=1e-4, atol=1e-4,
           note="bpg and tpb (32) given by the manifest",
           case=lambda n, rng: _given(lambda c: Case(c.args, ((n // 32, n // 32), (32, 32)),
                                               c.expect, env={"bpg": n // 32, "tpb": 32}), 
               _matmul(n, rng))),
    Kernel("montecarlo_step", CUDAPY + "test_montecarlo.py", ("step",),
           scope="TestCudaMonteCarlo.test_montecarlo", sizes=S, rtol=1e-12,
           case=lambda n, rng: _given(lambda last, noise: Case(
               [last, np.zeros(n), 0.01, 0.05, 0.2, noise], _blocks(n),
               {1: last * np.exp(0.05 * 0.01 + 0.2 * noise)}), 
               rng.random(n) + 1, rng.standard_normal(n))),
    Kernel("nondet_diagproduct", CUDAPY + "test_nondet.py", ("diagproduct",),
           scope="TestCudaNonDet.test_for_pre", sizes={"small": 64, "full": 8192},
           case=lambda n, rng: _given(lambda a, b: Case([np.zeros((n, n), np.float32), a, b],
                                                  _stride2d(n), {0: a * b}), 
               rng.random((n, n), np.float32), rng.random(n, np.float32))),
    Kernel("py2_div_precalc", CUDAPY + "test_py2_div_issue.py", ("preCalc",),
           scope="TestCudaPy2Div.test_py2_div_issue", sizes=S, rtol=0,
           case=lambda n, rng: _given(lambda ans: Case(
               [np.zeros(n, np.float32) for _ in range(3)] + [15], (n // 256, 256),
               {0: ans, 1: ans, 2: ans}), 
               (1.001 * np.arange(n).astype(np.float32).astype(np.float64)).astype(np.float32))),
    Kernel("sync_useless_syncthreads", CUDAPY + "test_sync.py", ("useless_syncthreads",),
           sizes=S, jit=_sig("void(int32[::1])"), rtol=0,
           case=lambda n, rng: Case([np.zeros(n, np.int32)], (n // 256, 256),
                                    {0: np.arange(n, dtype=np.int32)})),
    Kernel("sync_useless_syncwarp", CUDAPY + "test_sync.py", ("useless_syncwarp",),
           sizes=S, jit=_sig("void(int32[::1])"), warp=32,
           case=lambda n, rng: Case([np.zeros(n, np.int32)], (n // 256, 256),
                                    {0: np.arange(n, dtype=np.int32)})),
    Kernel("sync_useless_syncwarp_mask", CUDAPY + "test_sync.py",
           ("useless_syncwarp_with_mask",), sizes=S, jit=_sig("void(int32[::1])"),
           warp=32,
           case=lambda n, rng: Case([np.zeros(n, np.int32)], (n // 256, 256),
                                    {0: np.arange(n, dtype=np.int32)})),
    Kernel("sync_coop_syncwarp", CUDAPY + "test_sync.py", ("coop_syncwarp",),
           sizes={"small": 32, "full": 32}, jit=_sig("void(int32[::1])"), warp=32,
           fixed=True, note="one warp by its own code",
           case=lambda n, rng: Case([np.zeros(1, np.int32)], (1, 32), {0: np.array([496])})),
    Kernel("sync_simple_smem", CUDAPY + "test_sync.py", ("simple_smem",),
           sizes={"small": 100, "full": 100}, jit=_sig("void(int32[::1])"), fixed=True,
           note="one block of 100 threads by its own code",
           case=lambda n, rng: Case([np.zeros(n, np.int32)], (1, n), {0: np.arange(n)})),
    Kernel("sync_coop_smem2d", CUDAPY + "test_sync.py", ("coop_smem2d",),
           sizes={"small": 0, "full": 0}, jit=_sig("void(float32[:,::1])"), fixed=True,
           note="one 10 x 20 block by its own code",
           case=lambda n, rng: Case(
               [np.zeros((10, 20), np.float32)], (1, (10, 20)),
               {0: ((np.arange(10)[:, None] + 1) / (np.arange(20)[None, :] + 1))})),
    Kernel("sync_dyn_shared_memory", CUDAPY + "test_sync.py", ("dyn_shared_memory",),
           sizes={"small": 1024, "full": 1024}, jit=_sig("void(float32[::1])"), fixed=True,
           note="one block by its own code; dynamic shared memory",
           case=lambda n, rng: Case([np.zeros(n, np.float32)], (1, n, 0, 4 * n),
                                    {0: np.arange(n) * 2.0})),
    Kernel("sync_syncthreads_count", CUDAPY + "test_sync.py", ("use_syncthreads_count",),
           sizes=S, jit=_lazy, rtol=0, case=lambda n, rng: _sync_pred(n, rng, "count")),
    Kernel("sync_syncthreads_and", CUDAPY + "test_sync.py", ("use_syncthreads_and",),
           sizes=S, jit=_lazy, rtol=0, case=lambda n, rng: _sync_pred(n, rng, "and")),
    Kernel("sync_syncthreads_or", CUDAPY + "test_sync.py", ("use_syncthreads_or",),
           sizes=S, jit=_lazy, rtol=0, case=lambda n, rng: _sync_pred(n, rng, "or")),
    Kernel("atomic_compare_and_swap", CUDAPY + "test_atomics.py", ("atomic_compare_and_swap",),
           sizes=S, jit=_lazy, rtol=0, case=_cas),
    Kernel("atomic_cas_1dim", CUDAPY + "test_atomics.py", ("atomic_cas_1dim",),
           sizes=S, jit=_lazy, rtol=0, case=_cas),
    Kernel("warp_shfl_idx", CUDAPY + "test_warp_ops.py", ("use_shfl_sync_idx",), sizes=S,
           jit=_sig("void(int32[:], int32)"), rtol=0, case=lambda n, rng: _shfl(n, "idx", 3)),
    Kernel("warp_shfl_up", CUDAPY + "test_warp_ops.py", ("use_shfl_sync_up",), sizes=S,
           jit=_sig("void(int32[:], int32)"), rtol=0, case=lambda n, rng: _shfl(n, "up", 5)),
    Kernel("warp_shfl_down", CUDAPY + "test_warp_ops.py", ("use_shfl_sync_down",), sizes=S,
           jit=_sig("void(int32[:], int32)"), rtol=0, case=lambda n, rng: _shfl(n, "down", 7)),
    Kernel("warp_shfl_xor", CUDAPY + "test_warp_ops.py", ("use_shfl_sync_xor",), sizes=S,
           jit=_sig("void(int32[:], int32)"), rtol=0, case=lambda n, rng: _shfl(n, "xor", 5)),
    Kernel("warp_vote_all", CUDAPY + "test_warp_ops.py", ("use_vote_sync_all",), sizes=S,
           jit=_sig("void(int32[:], int32[:])"), rtol=0, case=lambda n, rng: _vote(n, rng, "all")),
    Kernel("warp_vote_any", CUDAPY + "test_warp_ops.py", ("use_vote_sync_any",), sizes=S,
           jit=_sig("void(int32[:], int32[:])"), rtol=0, case=lambda n, rng: _vote(n, rng, "any")),
    Kernel("warp_vote_eq", CUDAPY + "test_warp_ops.py", ("use_vote_sync_eq",), sizes=S,
           jit=_sig("void(int32[:], int32[:])"), rtol=0, case=lambda n, rng: _vote(n, rng, "eq")),
    Kernel("warp_useful_syncwarp", CUDAPY + "test_warp_ops.py", ("useful_syncwarp",), sizes=S,
           jit=_sig("void(int32[:])"), warp=32, rtol=0,
           case=lambda n, rng: Case([np.full(n, 42, np.int32)], _blocks(n),
                                    {0: np.full(n, 42, np.int32)})),
    Kernel("warp_match_any", CUDAPY + "test_warp_ops.py", ("use_match_any_sync",), sizes=S,
           jit=_sig("void(int32[:], int32[:])"), rtol=0, case=_match_any),
    Kernel("intrinsic_forloop_step", CUDAPY + "test_intrinsics.py", ("intrinsic_forloop_step",),
           sizes={"small": 64, "full": 8192}, jit=_sig("void(int32[:,::1])"), rtol=0,
           case=lambda n, rng: Case([np.zeros((n, n), np.int32)], _stride2d(n),
                                    {0: np.add.outer(np.arange(n), np.arange(n))})),
    Kernel("intrinsic_grid2d", CUDAPY + "test_intrinsics.py", ("simple_grid2d",),
           sizes={"small": 64, "full": 8192}, jit=_sig("void(int32[:,::1])"), rtol=0,
           case=lambda n, rng: Case([np.zeros((n, n), np.int32)], ((n // 16, n // 16), (16, 16)),
                                    {0: np.add.outer(np.arange(n), np.arange(n))})),
    Kernel("intrinsic_grid1d", CUDAPY + "test_intrinsics.py", ("simple_grid1d",), sizes=S,
           jit=_sig("void(int32[::1])"), rtol=0,
           case=lambda n, rng: Case([np.zeros(n, np.int32)], (n // 256, 256),
                                    {0: np.arange(n)})),
    Kernel("intrinsic_branching_with_ifs", CUDAPY + "test_intrinsics.py",
           ("branching_with_ifs",), sizes=S, rtol=0,
           jit=lambda cuda, f: cuda.jit("void(int64[:], int64, int64[:])")(f),
           case=lambda n, rng: _given(lambda a, c: Case(
               [a, 6, c], (n // 256, 256), {0: np.where(a > 4, c, 3)}), 
               rng.integers(0, 10, n), rng.integers(0, 100, n))),
    Kernel("random_uniform_float32", CUDAPY + "test_random.py",
           ("UNIFORM", "NORMAL", "rng_kernel_float32"), sizes={"small": 4096, "full": 1 << 21},
           note="16 numbers per thread",
           case=lambda n, rng: Case([states(n, 1), np.zeros(16 * n, np.float32), 16, 1],
                                    _blocks(n), check=_uniform_check(0.0, 1.0, 0.5))),
    Kernel("random_normal_float64", CUDAPY + "test_random.py",
           ("UNIFORM", "NORMAL", "rng_kernel_float64"), sizes={"small": 4096, "full": 1 << 21},
           rtol=1e-9, note="16 numbers per thread",
           case=lambda n, rng: Case([states(n, 1), np.zeros(16 * n), 16, 2], _blocks(n),
                                    check=_normal_check)),
    Kernel("localmem_culocal", CUDAPY + "test_localmem.py", ("culocal",),
           sizes={"small": 1000, "full": 1000}, jit=_sig("void(int32[:], int32[:])"), rtol=0,
           fixed=True, note="one thread by its own code",
           case=lambda n, rng: _given(lambda a: Case([a, np.zeros(n, np.int32)], (1, 1), {1: a}), 
               rng.integers(-1000, 1000, n).astype(np.int32))),
    Kernel("localmem_culocalcomplex", CUDAPY + "test_localmem.py", ("culocalcomplex",),
           sizes={"small": 100, "full": 100},
           jit=_sig("void(complex128[:], complex128[:])"), rtol=0, fixed=True,
           note="one thread by its own code",
           case=lambda n, rng: _given(lambda a: Case([a, np.zeros(n, np.complex128)], (1, 1),
                                               {1: a}), 
               rng.random(n) + 1j * rng.random(n))),
    Kernel("forall_increment", CUDAPY + "test_forall.py", ("foo",), sizes=S, rtol=0,
           case=lambda n, rng: Case([np.arange(n)], _blocks(n), {0: np.arange(n) + 1})),
    Kernel("forall_saxpy", CUDAPY + "test_forall.py", ("bar",), scope="TestForAll.test_forall_2",
           sizes=S, rtol=1e-6,
           case=lambda n, rng: _given(lambda x, y: Case(
               [np.float32(1.234), x, y], _blocks(n), {2: np.float32(1.234) * x + y}), 
               rng.random(n, np.float32), rng.random(n, np.float32))),
    Kernel("dispatcher_pi_sin_array", CUDAPY + "test_dispatcher.py", ("pi_sin_array",),
           scope="TestDispatcherKernelProperties.test_get_regs_per_thread_unspecialized",
           sizes=S, rtol=2e-6, atol=1e-6,
           case=lambda n, rng: _given(lambda x: Case([x, n], _blocks(n), {0: 3.14 * np.sin(
               x.astype(np.float64))}), rng.uniform(-10, 10, n).astype(np.float32))),
    # ---- numba-cuda's launch benchmarks (tests/benchmarks): the launch alone
    Kernel("bench_launch_one_arg", BENCH + "test_kernel_launch.py", ("one_arg",),
           scope="test_one_arg", sizes={"small": 128, "full": 128}, fixed=True,
           note="an empty kernel: the launch alone",
           case=lambda n, rng: Case([np.zeros(n, np.float32)], (128, 128), check=_no_check,
                                    env={"jit": FromCuda(lambda cuda: cuda.jit)})),
    Kernel("bench_launch_many_args", BENCH + "test_kernel_launch.py", ("many_args",),
           scope="test_many_args", sizes={"small": 128, "full": 128}, fixed=True,
           note="an empty kernel of 26 array arguments: the launch alone",
           case=lambda n, rng: Case([np.zeros(n, np.float32) for _ in range(26)], (128, 128),
                                    check=_no_check,
                                    env={"jit": FromCuda(lambda cuda: cuda.jit)})),
]

# Public numba.cuda kernels the corpus cannot run from the same source on both backends.
NOT_RUN = [
    (DOC + "test_ffi.py", "multiply_vectors, reduction_caller, vector_saxpy",
     "link CUDA C++ sources (.cu) through cuda.declare_device: no CUDA C++ on Vulkan"),
    (DOC + "test_cpointer.py", "add_one",
     "takes a raw device pointer (types.CPointer): Vulkan memory has none to pass"),
    (CUDAPY + "test_mandel.py", "mandel",
     "a device function compiled only with compile_ptx (no kernel, no launch)"),
    (DOC + "test_ufunc.py", "f", "a ufunc (cuda.vectorize), not a kernel: docs/ufuncs.md"),
]

FILE_SHA256.update({
    "numba-cuda==0.30.4:numba_cuda/numba/cuda/tests/benchmarks/test_kernel_launch.py":
        "9f6099232e671faf1f87638ee2061b51465f2ef05d37b329075de45b538ebb0f",
    "numba-cuda==0.30.4:numba_cuda/numba/cuda/tests/cudapy/test_atomics.py":
        "dbc3a3e4e62049030fa8625df58a4e26d465d4d2b4989f754c09bcd69aa28459",
    "numba-cuda==0.30.4:numba_cuda/numba/cuda/tests/cudapy/test_blackscholes.py":
        "d399b50550d0efe9f1bb610419f4f77a80a170f9b434704ea3d0c1664452432d",
    "numba-cuda==0.30.4:numba_cuda/numba/cuda/tests/cudapy/test_dispatcher.py":
        "82f490ef3d1978c7bf28b4cbf3fa5e671ed76f462e6f548dc685c2b7ebbacb71",
    "numba-cuda==0.30.4:numba_cuda/numba/cuda/tests/cudapy/test_forall.py":
        "ec16cb6e93b89849977b125a418302c3dd1e34cea5cc459018483d3a37b04b72",
    "numba-cuda==0.30.4:numba_cuda/numba/cuda/tests/cudapy/test_intrinsics.py":
        "2a6fca2aebd6321fe72ae2162b19a9cb61ecc2142d351c5a396b57e15d5209ae",
    "numba-cuda==0.30.4:numba_cuda/numba/cuda/tests/cudapy/test_laplace.py":
        "227d6102c1ddfe8a23d8729617539ff3445cb975c541541c35d39bf585bf7ff1",
    "numba-cuda==0.30.4:numba_cuda/numba/cuda/tests/cudapy/test_localmem.py":
        "9623aa48015eab45b4125d546dd74a96f63bb3c57e881e3602e1af47570097c2",
    "numba-cuda==0.30.4:numba_cuda/numba/cuda/tests/cudapy/test_mandel.py":
        "1e8e6dd786627fd8b99e276b0c31fc873b7716edafb4a46cfbf5be9614078c83",
    "numba-cuda==0.30.4:numba_cuda/numba/cuda/tests/cudapy/test_matmul.py":
        "99f898b9e6066b8cf6bbf50301967bb75230d93e1543460af3dcd5c0842afc2e",
    "numba-cuda==0.30.4:numba_cuda/numba/cuda/tests/cudapy/test_montecarlo.py":
        "3a35aa548fdc3fa7e8a3dbbd4f47f5b9b104af1ece76412c62a772137bfa1b9f",
    "numba-cuda==0.30.4:numba_cuda/numba/cuda/tests/cudapy/test_nondet.py":
        "32f5a68b53d1e6696f1924d232bd4451a034f1d071de6c17dfb59d321bb4a0c1",
    "numba-cuda==0.30.4:numba_cuda/numba/cuda/tests/cudapy/test_py2_div_issue.py":
        "6a5fca1d774cd1f2a37730f7f78130011fd57a9129dacfe40613ac01b1ddefff",
    "numba-cuda==0.30.4:numba_cuda/numba/cuda/tests/cudapy/test_random.py":
        "c027bc3bb561a13cc321eaea46b66a53b8f682f735a2f1ddf1eae66882a30438",
    "numba-cuda==0.30.4:numba_cuda/numba/cuda/tests/cudapy/test_sync.py":
        "4f64580ee7754e96ad132aaa7c599b314d78b4f644529caf913283ce30da9230",
    "numba-cuda==0.30.4:numba_cuda/numba/cuda/tests/cudapy/test_warp_ops.py":
        "6e260382681d397ea04648c121736153c23824046e9da810da1ceb71e299db77",
    "numba-cuda==0.30.4:numba_cuda/numba/cuda/tests/doc_examples/test_cg.py":
        "a5dbff5722c60a321fd6ff75ace2ed9d52aeb54e1e484b5ae0e212c66110db6c",
    "numba-cuda==0.30.4:numba_cuda/numba/cuda/tests/doc_examples/test_cpointer.py":
        "2bf7528ec3d2319c97c565a16ed75c28a49ae901e6eef85b4be8ad17d6713c81",
    "numba-cuda==0.30.4:numba_cuda/numba/cuda/tests/doc_examples/test_cpu_gpu_compat.py":
        "a9803a36ea72664eed3dac89cfc2ad35d2079d2705bb60a541753219c713c4ad",
    "numba-cuda==0.30.4:numba_cuda/numba/cuda/tests/doc_examples/test_ffi.py":
        "fe6bd90705cbdd3c8edbe9f4edcef74c6c536aed082338cd3f2582cedc548cc5",
    "numba-cuda==0.30.4:numba_cuda/numba/cuda/tests/doc_examples/test_globals.py":
        "ed2cc48d4090bc3b877c37b03d32b023470455cfeef287944ba200a86400b023",
    "numba-cuda==0.30.4:numba_cuda/numba/cuda/tests/doc_examples/test_laplace.py":
        "b42e1fa45ed43f7735c95aa4ce7b926b83adcd7ba5af44604baaf323384afc93",
    "numba-cuda==0.30.4:numba_cuda/numba/cuda/tests/doc_examples/test_matmul.py":
        "af79395380b14ed0e6c45634edfe9820bc2a8d08ec2e86cc25c599b3f079a857",
    "numba-cuda==0.30.4:numba_cuda/numba/cuda/tests/doc_examples/test_montecarlo.py":
        "28204a1ba362a0eb08bb4c9c5dfb90f8b93185924efcaea0051dcb2d70874cfe",
    "numba-cuda==0.30.4:numba_cuda/numba/cuda/tests/doc_examples/test_random.py":
        "8cf7e5e3564d41aa8aed30bcb26c031c9e54af3ebefe588bc819e49a5bb204ba",
    "numba-cuda==0.30.4:numba_cuda/numba/cuda/tests/doc_examples/test_reduction.py":
        "1d468fdea57110603f012b27722fb97482e32b8e6467f67925a8b72ee38d1a56",
    "numba-cuda==0.30.4:numba_cuda/numba/cuda/tests/doc_examples/test_sessionize.py":
        "bbbefe655fcfc81c493ed9afab454b4745bf0d98f19890a997709ae693bf96b8",
    "numba-cuda==0.30.4:numba_cuda/numba/cuda/tests/doc_examples/test_ufunc.py":
        "fe3c723c28acdef34049bcfd0d6ccf0e718fed8cc610cbbc08ac7a93c6d499c1",
    "numba-cuda==0.30.4:numba_cuda/numba/cuda/tests/doc_examples/test_vecadd.py":
        "461445c069faa395bcf456eb2f4f2d672dd517de58b9304e8fa79cb136494e09",
})
