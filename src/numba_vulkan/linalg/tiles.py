"""The matrix product on cooperative matrices (``matmul(..., units=True)``; docs/linalg.md).

float16 operands, float32 sums: the configuration 16x16x16 float16 x float16 + float32
that NVIDIA, AMD and Intel drivers list (and the emulation accepts). Operands are copied
into zero-padded C-contiguous float16 buffers (``pad``): M and N rounded up to the
variant's block, k to its step, and for the staged variants one more slab of zeros along
k (the slab the last step reads ahead, so that the copies need no test), so that every
tile lies inside its matrix; the product goes to a padded float32 buffer, and ``unpad``
converts the wanted part to the result's dtype and strides (``padded_shapes``, ``run``).

The product kernel is generated per variant (``VARIANTS``, ``source`` gives its text;
``run(..., variant=name)`` picks one, ``DEFAULT`` is matmul's):

* A workgroup computes a BM x BN block of C with SG_M x SG_N subgroups; each subgroup
  owns a (BM / SG_M) x (BN / SG_N) region, TM x TN float32 accumulator tiles held over
  the whole k range. At each 16-wide k step it loads its TM tiles of A, then the TN
  tiles of B one after the other, each followed by its TM multiplies.
* ``staging="global"``: the tiles are loaded straight from device memory (the driver's
  loads, cached). ``g64`` is this module's first kernel (64 x 64 blocks of four
  subgroups of 2 x 2 tiles); ``g128`` the same with eight subgroups of 4 x 2 tiles.
  They start with a barrier that GPUs do not need: without one, lavapipe counts the
  emulated multiplies of kernels with more than 2 x 2 accumulators (their tiles are
  large private arrays) against its loop cap as if they were one loop, and such a
  kernel stops with VulkanLoopLimitError even at k = 16; with it, they run whole.
* ``staging="shared"``: the workgroup copies a BM x BK slab of A and a BK x BN slab of B
  into shared memory, and the subgroups load their tiles from there. Each invocation
  copies fixed elements: consecutive invocations take consecutive elements of a row
  (coalesced reads, stores into consecutive shared words), at offsets that are
  constants in the source. Shared rows are padded by PAD = 8 halves (16 bytes), so
  that the eight rows of 16 bytes a tile load reads at once fall in different banks
  while every row stays 16-byte aligned. The copy goes through registers: each step
  first reads the next slab from device memory into variables, then multiplies the
  slab in shared memory, then writes the variables to shared memory, so that the
  reads are in flight during the multiplies. ``stages=1`` (``s128``: 128 x 128 blocks,
  BK 32, eight subgroups of 4 x 2 tiles): one slab, two barriers per step (every read
  of the slab done; the next one written); ``stages=2`` (``s128x256``: 128 x 256 blocks,
  BK 16, eight subgroups of 4 x 4 tiles): two slabs, the step multiplying one while it
  writes the other, one barrier per step.
  Each element moves as one float16 (16-bit loads and stores): kernels have no wider
  view of a float16 array (``a.view`` refuses float16 and other itemsizes, and views of
  shared arrays), and ``mx.load`` takes only an array of the tile's dtype, so the slab
  cannot be staged as uint32 words.
* Indices are uint32 values, so no access carries a test for a negative index (Python's
  wrap-around: a compare and a select per index), and shared addresses fold into a base
  and a constant. Within a step everything is written out (no loops); the k loop's
  bounds come from the arguments.
* The staged copies are written for a fixed number of invocations (``THREADS``, 256, or
  SG_M x SG_N subgroups where those are wider: AMD's 64). Where the device's subgroups
  are narrower (lavapipe: 8), the workgroup has 256 invocations anyway and only the
  first SG_M x SG_N subgroups multiply (a branch on ``subgroup.id()``, uniform in each
  subgroup), so the copies tested there are the ones GPUs run.

Every variant's shared memory fits 32 KiB (lavapipe's limit; NVIDIA's is 48 KiB), and on
lavapipe every variant is emulated exactly (tests/device/test_linalg.py runs each).
"""

from __future__ import annotations

import dataclasses

import numpy as np

from .. import forksafe
from ..runtime.compiler_hook import jit
from ..stubs import barrier, global_id, group_id, local_id, shared, subgroup
from ..stubs import matrix as mx

#: Invocations per workgroup of the staged variants (at least; more where SG_M x SG_N
#: subgroups are wider): the copies of each slab are shared out among them.
THREADS = 256
#: The side of the tiles (16x16x16 multiplies).
T = 16


@dataclasses.dataclass(frozen=True)
class Variant:
    """One product kernel: the block of C a workgroup computes, how its subgroups share it,
    and where the tiles come from (module docstring)."""

    name: str
    bm: int  # rows of C per workgroup
    bn: int  # columns of C per workgroup
    sg_m: int  # subgroups along M
    sg_n: int  # subgroups along N
    staging: str = "shared"  # "global": tiles from device memory; "shared": slabs staged
    bk: int = 16  # k per slab in shared memory (a multiple of 16); 16 for "global"
    stages: int = 1  # slabs in shared memory: 1 (two barriers per step) or 2 (one)
    pad: int = 8  # halves added to each shared row

    def __post_init__(self):
        if self.staging not in ("global", "shared"):
            raise ValueError(f"variant {self.name}: staging must be 'global' or 'shared'")
        if self.bm % (T * self.sg_m) or self.bn % (T * self.sg_n) or self.bk % T:
            raise ValueError(f"variant {self.name}: blocks must be whole tiles per subgroup")
        if self.stages not in (1, 2):
            raise ValueError(f"variant {self.name}: stages must be 1 or 2")

    @property
    def tm(self) -> int:
        return self.bm // (T * self.sg_m)

    @property
    def tn(self) -> int:
        return self.bn // (T * self.sg_n)

    @property
    def subgroups(self) -> int:
        return self.sg_m * self.sg_n

    @property
    def k_step(self) -> int:
        """What k is rounded up to (before the zero slab): one loop iteration's k."""
        return T if self.staging == "global" else self.bk

    @property
    def k_extra(self) -> int:
        """Columns of A (rows of B) of zeros past the rounded k: the slab the last step
        reads ahead."""
        return 0 if self.staging == "global" else self.bk

    def threads(self, subgroup_size: int) -> int:
        """Invocations per workgroup on a device with subgroups of `subgroup_size`."""
        own = self.subgroups * subgroup_size
        return own if self.staging == "global" else max(THREADS, own)

    def shared_bytes(self) -> int:
        if self.staging == "global":
            return 0
        halves = self.stages * (self.bm * (self.bk + self.pad) + self.bk * (self.bn + self.pad))
        return 2 * halves


#: The variants, by name. ``run`` takes one by name; DEFAULT is matmul's.
VARIANTS = {v.name: v for v in (
    # The first kernel: 64 x 64 blocks, four subgroups of 2 x 2 tiles from device memory.
    Variant("g64", 64, 64, 2, 2, staging="global"),
    # 128 x 128 blocks, eight subgroups of 4 x 2 tiles (64 x 32) from device memory.
    Variant("g128", 128, 128, 2, 4, staging="global"),
    # 128 x 128 blocks, eight subgroups of 4 x 2 tiles, 32-wide slabs, one slab staged
    # (18.5 KiB of shared memory).
    Variant("s128", 128, 128, 2, 4, staging="shared", bk=32, stages=1),
    # 128 x 256 blocks, eight subgroups of 4 x 4 tiles (64 x 64), 16-wide slabs, two slabs
    # staged (28.5 KiB: within lavapipe's 32 KiB).
    Variant("s128x256", 128, 256, 2, 4, staging="shared", bk=16, stages=2),
)}
DEFAULT = "s128"


def _copy_plan(rows, cols, threads):
    """The elements of a rows x cols slab one invocation copies: (row, col) offsets from
    its own first element (row ``tid // cols``, column ``tid % cols``), element
    ``tid + r * threads`` of the slab in row-major order for each r."""
    if (rows * cols) % threads or (threads % cols and cols % threads):
        raise ValueError(f"a {rows} x {cols} slab does not divide among {threads} invocations")
    return [((r * threads) // cols, (r * threads) % cols) for r in range(rows * cols // threads)]


def _log2(n):
    if n <= 0 or n & (n - 1):
        raise ValueError(f"{n} is not a power of 2")
    return n.bit_length() - 1


def _sum(*terms):
    """Source of the sum of `terms` (source text or ints): constants folded, zeros dropped,
    every constant written as ``U(c)`` so that the sum stays unsigned."""
    const = sum(t for t in terms if isinstance(t, int))
    names = [t for t in terms if not isinstance(t, int)]
    if const or not names:
        names.append(f"U({const})")
    return " + ".join(names)


def source(v: Variant, threads: int, subgroup_size: int) -> str:
    """The Python source of the product kernel of variant `v` for workgroups of `threads`
    invocations in subgroups of `subgroup_size` (module docstring): ``c = a @ b`` for
    C-contiguous a ((Mp x Kp + k_extra) float16), b ((Kp + k_extra) x Np float16) and c
    (Mp x Np float32), Mp and Np multiples of the block, Kp of ``k_step``.

    Indices are uint32 (``U``) values: an unsigned index needs no test for a negative one
    (Python's wrap-around), so each address is a sum the driver can fold."""
    tm, tn = v.tm, v.tn
    guard = threads // subgroup_size > v.subgroups  # more subgroups than regions
    lines = ["def _nv_tiles_product(a, b, c):"]
    add = lines.append
    add(f"    row0 = U(group_id(1)) * U({v.bm})")
    add(f"    col0 = U(group_id(0)) * U({v.bn})")
    add("    sg = U(subgroup.id())")
    add(f"    wr = (sg >> U({_log2(v.sg_n)})) * U({tm * T})")
    add(f"    wc = (sg & U({v.sg_n - 1})) * U({tn * T})")
    for i in range(tm):
        add(f"    fa{i} = mx.fragment('a', {T}, {T}, np.float16)")
    add(f"    fb = mx.fragment('b', {T}, {T}, np.float16)")
    for i in range(tm):
        for j in range(tn):
            add(f"    c{i}_{j} = mx.fragment('acc', {T}, {T}, np.float32)")
            add(f"    mx.fill(c{i}_{j}, 0.0)")

    def multiply(src_a, a_row, a_col, src_b, b_row, b_col, indent):
        """The TM x TN multiplies of one 16-wide k step; tile origins as lists of terms."""
        out = [f"mx.load(fa{i}, {src_a}, {_sum(*a_row, i * T)}, {_sum(*a_col)})"
               for i in range(tm)]
        for j in range(tn):
            out.append(f"mx.load(fb, {src_b}, {_sum(*b_row)}, {_sum(*b_col, j * T)})")
            out += [f"mx.mma(c{i}_{j}, fa{i}, fb)" for i in range(tm)]
        return [" " * indent + x for x in out]

    if v.staging == "global":
        # A barrier GPUs do not need, for lavapipe's loop cap (module docstring).
        add("    barrier()")
        add(f"    for k in range(0, a.shape[1], {T}):")
        add("        ku = U(k)")
        lines += multiply("a", ["row0", "wr"], ["ku"], "b", ["ku"], ["col0", "wc"], 8)
    else:
        bk = v.bk
        ra, rb = _copy_plan(v.bm, bk, threads), _copy_plan(bk, v.bn, threads)
        add(f"    sA = shared.array(({v.stages * v.bm}, {bk + v.pad}), np.float16)")
        add(f"    sB = shared.array(({v.stages * bk}, {v.bn + v.pad}), np.float16)")
        add("    tid = U(local_id(0))")
        add(f"    ar = tid >> U({_log2(bk)})")
        add(f"    ac = tid & U({bk - 1})")
        add(f"    br = tid >> U({_log2(v.bn)})")
        add(f"    bc = tid & U({v.bn - 1})")
        add("    ga = row0 + ar")
        add("    gb = col0 + bc")
        add(f"    K = a.shape[1] - {v.k_extra}")

        def fetch(k0, indent):
            """The slab at column (row) k0 of a (b) into registers."""
            out = [f"xa{r} = a[{_sum('ga', dr)}, {_sum(*k0, 'ac', dc)}]"
                   for r, (dr, dc) in enumerate(ra)]
            out += [f"xb{r} = b[{_sum(*k0, 'br', dr)}, {_sum('gb', dc)}]"
                    for r, (dr, dc) in enumerate(rb)]
            return [" " * indent + x for x in out]

        def put(slab_a, slab_b, indent):
            """The registers into the shared slab whose first rows are slab_a, slab_b."""
            out = [f"sA[{_sum(*slab_a, 'ar', dr)}, {_sum('ac', dc)}] = xa{r}"
                   for r, (dr, dc) in enumerate(ra)]
            out += [f"sB[{_sum(*slab_b, 'br', dr)}, {_sum('bc', dc)}] = xb{r}"
                    for r, (dr, dc) in enumerate(rb)]
            return [" " * indent + x for x in out]

        def compute(slab_a, slab_b, indent):
            """The multiplies of the shared slab whose first rows are slab_a, slab_b."""
            out = []
            if guard:
                out.append(" " * indent + f"if sg < U({v.subgroups}):")
                indent += 4
            for kk in range(0, bk, T):
                out += multiply("sA", [*slab_a, "wr"], [kk], "sB", [*slab_b, kk], ["wc"],
                                indent)
            return out

        lines += fetch([], 4)
        lines += put([], [], 4)
        add("    barrier()")
        if v.stages == 1:
            # Step: read the next slab (past the last: the zero slab) into registers,
            # multiply the one in shared memory, wait, write the next one, wait.
            add(f"    for k0 in range({bk}, K + {bk}, {bk}):")
            add("        ku = U(k0)")
            lines += fetch(["ku"], 8)
            lines += compute([], [], 8)
            add("        barrier()")
            lines += put([], [], 8)
            add("        barrier()")
        else:
            # Step: read the next slab into registers, multiply slab `cur` in shared
            # memory, write the next one into the other slab, wait.
            add("    cur = U(0)")
            add(f"    for k0 in range({bk}, K + {bk}, {bk}):")
            add("        ku = U(k0)")
            add(f"        ca = cur * U({v.bm})")
            add(f"        cb = cur * U({bk})")
            add(f"        na = U({v.bm}) - ca")
            add(f"        nb = U({bk}) - cb")
            lines += fetch(["ku"], 8)
            lines += compute(["ca"], ["cb"], 8)
            lines += put(["na"], ["nb"], 8)
            add("        cur = U(1) - cur")
            add("        barrier()")
    store = [f"mx.store(c, {_sum('row0', 'wr', i * T)}, {_sum('col0', 'wc', j * T)}, c{i}_{j})"
             for i in range(tm) for j in range(tn)]
    if v.staging == "shared" and guard:
        add(f"    if sg < U({v.subgroups}):")
        lines += ["        " + x for x in store]
    else:
        lines += ["    " + x for x in store]
    return "\n".join(lines) + "\n"


_kernels: dict = {}
_lock = forksafe.lock()


def kernel(v: Variant, threads: int, subgroup_size: int):
    """The jit kernel of ``source(v, threads, subgroup_size)``, made once per arguments."""
    key = (v, threads, subgroup_size)
    k = _kernels.get(key)
    if k is not None:
        return k
    with _lock:
        k = _kernels.get(key)
        if k is None:
            text = source(v, threads, subgroup_size)
            ns = {"np": np, "U": np.uint32, "mx": mx, "shared": shared, "barrier": barrier,
                  "local_id": local_id, "group_id": group_id, "subgroup": subgroup}
            exec(compile(text, f"<numba_vulkan tiles {v.name}>", "exec"), ns)
            k = jit(ns["_nv_tiles_product"])
            _kernels[key] = k
    return k


@jit
def pad(src, dst):
    """dst[i, j] = src[i, j] inside src, 0 outside (dst's shape, one invocation each)."""
    j, i = global_id(0), global_id(1)
    if i < dst.shape[0] and j < dst.shape[1]:
        if i < src.shape[0] and j < src.shape[1]:
            dst[i, j] = src[i, j]
        else:
            dst[i, j] = 0


@jit
def unpad(src, dst):
    """dst[i, j] = src[i, j] over dst's shape, converted to dst's dtype."""
    j, i = global_id(0), global_id(1)
    if i < dst.shape[0] and j < dst.shape[1]:
        dst[i, j] = src[i, j]


def _round_up(n, m):
    return -(-n // m) * m


def padded_shapes(v: Variant, M, N, K):
    """The shapes of the padded a, b and c buffers of an M x K by K x N product."""
    Mp, Np = _round_up(M, v.bm), _round_up(N, v.bn)
    Kp = _round_up(K, v.k_step) + v.k_extra
    return (Mp, Kp), (Kp, Np), (Mp, Np)


def launch(v: Variant, a, b, c, device):
    """The product kernel of `v` on padded buffers (``padded_shapes``): c = a @ b."""
    sg = device.info.subgroup_size
    threads = v.threads(sg)
    Mp, Np = c.shape
    kernel(v, threads, sg)[(Np // v.bn, Mp // v.bm), (threads, 1), device](a, b, c)


def run(A, B, C, device, variant: str | None = None):
    """C[b] = A[b] @ B[b] for (nb, M, K), (nb, K, N) and (nb, M, N) views, on tiles, with
    the kernel VARIANTS[variant] (DEFAULT where None)."""
    from ..runtime.array import DeviceArray

    name = DEFAULT if variant is None else variant
    if name not in VARIANTS:
        raise ValueError(f"no product variant {name!r}; there are {', '.join(VARIANTS)}")
    v = VARIANTS[name]
    nb, M, K = A.shape
    N = B.shape[2]
    sa, sb, sc = padded_shapes(v, M, N, K)
    a = DeviceArray(device, sa, np.float16)
    b = DeviceArray(device, sb, np.float16)
    c = DeviceArray(device, sc, np.float32)
    for i in range(nb):
        pad.forall((sa[1], sa[0]), device=device)(A[i], a)
        pad.forall((sb[1], sb[0]), device=device)(B[i], b)
        launch(v, a, b, c, device)
        unpad.forall((N, M), device=device)(c, C[i])
