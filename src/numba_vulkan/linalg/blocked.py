"""The register-blocked SIMT product of float32 and float64 matrices on GPUs
(docs/linalg.md).

kernels.py's tiled kernel takes operands of any strides and tests every copy against the
matrices' edges; this one takes what staging.py's kernels take, operands padded to whole
blocks (``staging.padded_batches``: read in place where they already are, C- or
F-contiguous, else copied with zeros around them), and so copies without tests, with
uint32 indices, reading the next slab into registers while the current one is
multiplied (``staging.staged_loop``). The sums are the same: each result is
``c + a[i, k] * b[k, j]`` over k in increasing order from zero, each product and sum
rounded (NumPy's loop; padded k adds ``+0.0`` products, which change no sum), or, with
``contract``, each product fused into its sum (one rounding, ``fastmath={'contract'}``:
what cuBLAS computes, in the same k order).

A workgroup computes a BM x BN block of C with (BM / TM) x (BN / TN) invocations, each
holding TM x TN sums in registers. Invocation (ty, tx) owns rows ``ty * 4 + i`` and
``ty * 4 + i + 4 * WY`` (i < 4) of the block and the like columns: runs of four
neighbouring elements, so that its loads of a k row of the slabs are four consecutive
words (which a driver may make one 16-byte load) and neighbouring invocations read
neighbouring runs (on an H200, 2026-12-06, rows 16 apart instead ran 10 % slower). A's
slab is stored transposed in shared memory (k rows), so that both operands' runs lie
along a row.
"""

from __future__ import annotations

import dataclasses

import numpy as np

from ..checks import dtype_name
from ..stubs import barrier, group_id, local_id, shared
from . import staging
from .kernels import generated
from .staging import log2, round_up, sum_of

#: The neighbouring rows (columns) of an invocation's runs.
RUN = 4


@dataclasses.dataclass(frozen=True)
class Blocking:
    """One blocked kernel's shape: BM x BN results per workgroup, TM x TN per invocation,
    BK of k per shared slab, ``stages`` slabs (one: two barriers per step; two: one),
    shared rows padded by ``pad`` elements."""

    name: str
    bm: int = 128
    bn: int = 128
    tm: int = 8
    tn: int = 8
    bk: int = 8
    stages: int = 2
    pad: int = 4
    swizzle: int = 1  # rows of blocks that consecutive workgroups take (staging.band)

    def __post_init__(self):
        log2(self.swizzle)
        for side, t in ((self.bm, self.tm), (self.bn, self.tn)):
            if side % t or (t > RUN and t % RUN):
                raise ValueError(f"blocking {self.name}: {side} does not divide into runs "
                                 f"of {min(t, RUN)} per invocation")
        log2(self.wx)
        log2(self.wy)

    @property
    def wx(self) -> int:
        return self.bn // self.tn

    @property
    def wy(self) -> int:
        return self.bm // self.tm

    @property
    def threads(self) -> int:
        return self.wx * self.wy

    def shared_bytes(self, itemsize: int) -> int:
        return itemsize * self.stages * self.bk * (self.bm + self.bn + 2 * self.pad)

    def offsets(self, t: int, w: int) -> list[int]:
        """An invocation's offsets from its first row (column) for TM (TN) = `t` and WY
        (WX) = `w`: runs of RUN neighbours, the runs ``RUN * w`` apart."""
        run = min(t, RUN)
        return [i % run + (i // run) * run * w for i in range(t)]


#: The blockings, by name; DEFAULTS are matmul's.
BLOCKINGS = {b.name: b for b in (
    Blocking("b128"),  # 16 x 16 invocations of 8 x 8; 16,896 B of float32
    Blocking("b128s1", stages=1),
    Blocking("b128k16", bk=16),  # 33,792 B of float32
    Blocking("b128x64", bn=64, tn=4),  # 16 x 16 invocations of 8 x 4
    Blocking("b64", bm=64, bn=64, tm=4, tn=4, bk=16),  # 16 x 16 invocations of 4 x 4
    Blocking("b128x256", bn=256, tn=16),  # 16 x 16 invocations of 8 x 16; 25,088 B
    Blocking("b256x128", bm=256, tm=16),  # 16 x 16 invocations of 16 x 8; 25,088 B
    Blocking("b128t16", tn=16),  # 16 x 8 invocations of 8 x 16
)}
#: matmul's blocking per dtype. float32: 256 x 128 blocks (8192^3 contracted, TFLOP/s
#: against b128's, 2026-12-06: H100 20:25 UTC 41.7 and 41.7 against 41.0 and 41.0, cuBLAS
#: 51.6; H200 20:16 UTC 40.7 against 40.4, cuBLAS 50.7; docs/linalg.md). float64: 128 x 128 (16 x 8
#: float64 sums would take all of an invocation's registers).
DEFAULTS = {"float32": "b256x128", "float64": "b128"}
#: matmul runs the kernel for products of at least this many of its blocks (fewer leave
#: multiprocessors idle: the SIMT kernel's smaller tiles, or its split k, occupy them).
#: H100, float32, whole calls (2026-12-06 15:10, docs/linalg.md): 1024^3 (64 blocks) 5.4
#: TFLOP/s against the SIMT kernel's 5.7; 2048^3 (256 blocks) 17.0 against 12.4.
MIN_GROUPS = 128


def source(v: Blocking, acc: str, a_major: str = "C", b_major: str = "C",
           rows_per_band: int = 1) -> str:
    """The Python source of the kernel of `v`: ``c = a @ b`` for a (Mp x Kp) and b (Kp x
    Np) of dtype `acc` and layouts `a_major`, `b_major` ("C" or "F"), c C-contiguous of
    `acc`, Mp and Np multiples of the block, Kp of BK; launched over
    ``staging.grid(..., rows_per_band)``."""
    lines = ["def _nv_blocked_product(a, b, c):"]
    add = lines.append
    lines += staging.block_origin(v.bm, v.bn, rows_per_band)
    add("    t = U(local_id(0))")
    add(f"    ty = (t >> U({log2(v.wx)})) * U({min(v.tm, RUN)})")
    add(f"    tx = (t & U({v.wx - 1})) * U({min(v.tn, RUN)})")
    rows, cols = v.offsets(v.tm, v.wy), v.offsets(v.tn, v.wx)
    for i in range(v.tm):
        for j in range(v.tn):
            add(f"    c{i}_{j} = ZERO")

    def compute(slab_a, slab_b, indent):
        """The slab's BK steps: each loads the invocation's TM values of A and TN of B
        from one k row and updates its TM x TN sums."""
        out = []
        for kk in range(v.bk):
            out += [f"a{i} = sA[{sum_of(*slab_a, kk)}, {sum_of('ty', r)}]"
                    for i, r in enumerate(rows)]
            out += [f"b{j} = sB[{sum_of(*slab_b, kk)}, {sum_of('tx', c)}]"
                    for j, c in enumerate(cols)]
            out += [f"c{i}_{j} = c{i}_{j} + a{i} * b{j}"
                    for i in range(v.tm) for j in range(v.tn)]
        return [" " * indent + x for x in out]

    lines += staging.staged_loop(v.bm, v.bn, v.bk, v.stages, v.threads, a_major, b_major,
                               "ACC", v.pad, compute, a_by_k=True)
    for i, r in enumerate(rows):
        add(f"    r = {sum_of('row0', 'ty', r)}")
        for j, c in enumerate(cols):
            add(f"    c[r, {sum_of('col0', 'tx', c)}] = c{i}_{j}")
    return "\n".join(lines) + "\n"


def kernel(v: Blocking, acc: str, a_major: str = "C", b_major: str = "C",
           contract: bool = False, rows_per_band: int = 1):
    """The jit kernel of ``source(v, acc, a_major, b_major, rows_per_band)``, made once per
    arguments; `contract`: compiled with ``fastmath={'contract'}``."""
    key = ("blocked", v, acc, a_major, b_major, contract, rows_per_band)
    namespace = {"U": np.uint32, "ACC": np.dtype(acc).type, "ZERO": np.dtype(acc).type(0),
                 "shared": shared, "barrier": barrier, "local_id": local_id,
                 "group_id": group_id}
    options = {"fastmath": {"contract"}} if contract else {}
    return generated(key, lambda: source(v, acc, a_major, b_major, rows_per_band), namespace,
                     "_nv_blocked_product", f"<numba_vulkan blocked {v.name}>", **options)


def padded_shapes(v: Blocking, M, N, K):
    """The shapes the kernel of `v` takes for an M x K by K x N product: a's, b's, c's."""
    Mp, Np, Kp = round_up(M, v.bm), round_up(N, v.bn), round_up(max(K, 1), v.bk)
    return (Mp, Kp), (Kp, Np), (Mp, Np)


def launch(v: Blocking, a, b, c, device, contract=False):
    """The kernel of `v`: c = a @ b for a and b of c's dtype, C- or F-contiguous, and
    C-contiguous c, of the shapes ``padded_shapes`` gives."""
    Mp, Np = c.shape
    r = staging.band(Mp // v.bm, v.swizzle)
    k = kernel(v, dtype_name(c.dtype), staging.layout(a), staging.layout(b), contract, r)
    k[staging.grid(Mp, Np, v.bm, v.bn, r), (v.threads, 1), device](a, b, c)


def run(A, B, C, device, blocking: str | None = None, contract: bool = False):
    """C[b] = A[b] @ B[b] for (nb, M, K), (nb, K, N) and (nb, M, N) views of C's dtype
    (float32 or float64) with the kernel BLOCKINGS[blocking] (DEFAULTS' for C's dtype
    where None); operands and result padded where they are not in place
    (``staging.padded_batches``)."""
    if blocking is None:
        blocking = DEFAULTS[dtype_name(C.dtype)]
    if blocking not in BLOCKINGS:
        raise ValueError(f"no blocking {blocking!r}; there are {', '.join(BLOCKINGS)}")
    v = BLOCKINGS[blocking]
    dtype = C.dtype
    staging.check_shared_memory(v, device, dtype.itemsize)
    shapes = padded_shapes(v, C.shape[1], C.shape[2], A.shape[2])
    staging.padded_batches(A, B, C, device, shapes, dtype, dtype,
                         lambda a, b, c: launch(v, a, b, c, device, contract))

