"""The matrix product on cooperative matrices (``matmul(..., units=True)``; docs/linalg.md).

float16 operands, float32 sums: the configuration 16x16x16 float16 x float16 + float32
that NVIDIA, AMD and Intel drivers list (and the emulation accepts); or the same with
bfloat16 operands (``operands="bfloat16"``: 16x16x16 bfloat16 x bfloat16 + float32, which
NVIDIA's Hopper driver lists), the kernels the same but for the tiles' and the shared
slabs' element type; or int8 (uint8) operands, int32 (uint32) sums (``operands="int8"``,
16x16x32 tiles: each multiply takes 32 of k, so a slab must be a multiple of 32 wide;
``SUMS`` names each operand type's sums, which the kernel stores as they are). Below,
"float16" stands for the operands' type.

Operands and result (``run``). The kernel reads and writes whole tiles only, so it takes
A of Mp x Kp, B of Kp x Np and C of Mp x Np, Mp and Np multiples of the variant's block
and Kp of its k step (``padded_shapes``):

* An operand that is float16, exactly of those sides, C-contiguous or F-contiguous (a
  column-major matrix: the ``.T`` of a C-contiguous one) and starts on 16 bytes (the
  alignment Vulkan asks of cooperative-matrix loads and stores) is read in place.
  Any other is copied (``pad``) into a C-contiguous float16 buffer of those sides with
  zeros around it. A stack of operands with batch stride 0 (broadcast) is padded once.
* The kernel converts its float32 sums to float16 where the result is float16
  (``mx.convert`` into a float16 tile before ``mx.store``) and stores them straight into
  the result where that is float16 or float32, C-contiguous, of those sides and starts on
  16 bytes; otherwise into a padded C-contiguous buffer (float16 for a float16 result,
  else float32) that ``unpad`` copies into the result, converting to its dtype. With
  bfloat16 operands the kernel stores float32 only (NumPy's result of two bfloat16
  operands is float32): any other result, a bfloat16 one included, is ``unpad``'s
  conversion of the float32 sums, rounded once in software (exact).

So an aligned float16 product (the sides multiples of the block, k of the step) is one
kernel launch per matrix and nothing else.

The product kernel is generated per variant (``VARIANTS``, ``source`` gives its text;
``run(..., variant=name)`` picks one, ``choose`` picks matmul's: ``LARGE`` for large products
on matrix units, else ``DEFAULT``), and per the layouts of A
and B and the dtype of C (``kernel``):

* A workgroup computes a BM x BN block of C with SG_M x SG_N subgroups; each subgroup
  owns a (BM / SG_M) x (BN / SG_N) region, TM x TN float32 accumulator tiles held over
  the whole k range. At each 16-wide k step it loads its TM tiles of A, then the TN
  tiles of B one after the other, each followed by its TM multiplies.
* ``staging="global"``: the tiles are loaded straight from device memory (the driver's
  loads, cached; a column-major operand with column-major tile loads). ``g64`` is this
  module's first kernel (64 x 64 blocks of four subgroups of 2 x 2 tiles); ``g128`` the
  same with eight subgroups of 4 x 2 tiles. They start with a barrier that GPUs do not
  need: without one, lavapipe counts the emulated multiplies of kernels with more than
  2 x 2 accumulators (their tiles are large private arrays) against its loop cap as if
  they were one loop, and such a kernel stops with VulkanLoopLimitError even at k = 16;
  with it, they run whole.
* ``staging="shared"``: the workgroup copies a BM x BK slab of A and a BK x BN slab of B
  into shared memory (row-major there, whatever the operand's layout), and the subgroups
  load their tiles from there. Each invocation copies fixed elements: consecutive
  invocations take consecutive elements of the operand in memory (along a row of a
  row-major operand, along a column of a column-major one: coalesced reads), at offsets
  that are constants in the source. Shared rows are padded by PAD = 8 halves (16 bytes),
  so that the eight rows of 16 bytes a tile load reads at once fall in different banks
  while every row stays 16-byte aligned. The copy goes through registers: each step
  first reads the next slab from device memory into variables, then multiplies the
  slab in shared memory, then writes the variables to shared memory, so that the
  reads are in flight during the multiplies. The last slab is multiplied after the loop
  without reading ahead (the loop is peeled), so k needs no slab of zeros past its end.
  ``stages=1``: one slab, two barriers per step (every read of the slab done; the next
  one written); ``stages=2``: two slabs, the step multiplying one while it writes the
  other, one barrier per step.
  Each element moves as one float16 (16-bit loads and stores), or, with ``word`` = W bytes,
  a row-major operand moves W bytes at a time: ``launch`` passes it as a view of uint32 or
  uint64 words (``DeviceArray.view``), the copies read and write whole words (shared
  slabs of words, their rows padded by the same 16 bytes), and the tiles load from the
  shared words as they are (``mx.load``'s packed form, docs/matrix.md). A column-major
  operand is still copied element by element (its words would run down the columns). A
  bfloat16 element moves as its 16-bit word (shared bfloat16 arrays hold the words,
  frontend/local_arrays.py); in between it is the float32 a kernel holds a bfloat16 in,
  widened and cut back exactly.
* Workgroup (x, y) computes block (row y, column x) of C: consecutive workgroups go along
  a row of blocks. With ``swizzle`` = S > 1 they go down bands of ``band(rows, S)`` rows
  of blocks instead, then to the next column (``block_origin``, ``grid``), so that the
  workgroups running at once share fewer slabs of B. Off (1) in every variant until a GPU
  run shows a gain (``bench_matrix.py --swizzle 8``).
* Indices are uint32 values, so no access carries a test for a negative index (Python's
  wrap-around: a compare and a select per index), and shared addresses fold into a base
  and a constant. Within a step everything is written out (no loops); the k loop's
  bounds come from the arguments.
* The staged copies are written for a fixed number of invocations (``THREADS``, 256, or
  SG_M x SG_N subgroups where those are wider: AMD's 64). Where the device's subgroups
  are narrower (lavapipe: 8), the workgroup has 256 invocations anyway and only the
  first SG_M x SG_N subgroups multiply (a branch on ``subgroup.id()``, uniform in each
  subgroup), so the copies tested there are the ones GPUs run.

Shared memory (``Variant.shared_bytes``): ``s128``, ``s128x256`` and ``s256x128`` fit 32
KiB (lavapipe's limit); ``s128d`` and ``s128k64`` need 37,888 and 35,840 bytes, within
NVIDIA's 48 KiB; ``run`` and ``launch`` refuse a variant the device has too little shared
memory for (ValueError, ``check_shared_memory``). On lavapipe every kernel is emulated
exactly; tests/device/test_linalg_units.py runs ``s128``, ``g64`` and ``g128`` as they are and
the other variants with blocks of one tile per subgroup (the same code with other
constants: lavapipe's build time grows with the number of emulated tiles);
benchmarks/bench_matrix.py checks every variant as it is on the GPU.
"""

from __future__ import annotations

import dataclasses

import numpy as np

from .. import bfloat16_host
from ..checks import dtype_name
from ..stubs import barrier, group_id, local_id, shared, subgroup
from ..stubs import matrix as mx
from .kernels import generated
from .staging import (
    band,
    block_origin,
    check_shared_memory,
    grid,
    in_place,
    layout,
    log2,
    padded_batches,
    round_up,
    staged_loop,
    sum_of,
)

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
    swizzle: int = 1  # rows of blocks that consecutive workgroups take (``band``)
    word: int = 0  # bytes of the words row-major operands are copied in (0: elements)

    def __post_init__(self):
        log2(self.swizzle)
        if self.staging not in ("global", "shared"):
            raise ValueError(f"variant {self.name}: staging must be 'global' or 'shared'")
        if self.bm % (T * self.sg_m) or self.bn % (T * self.sg_n) or self.bk % T:
            raise ValueError(f"variant {self.name}: blocks must be whole tiles per subgroup")
        if self.stages not in (1, 2):
            raise ValueError(f"variant {self.name}: stages must be 1 or 2")
        if self.word not in (0, 4, 8) or self.word and self.staging != "shared":
            raise ValueError(f"variant {self.name}: words of 4 or 8 bytes, for staged slabs")

    def per_word(self, itemsize: int, major: str) -> int:
        """Elements of `itemsize` bytes per copied word for an operand of layout `major`
        (1: copied element by element)."""
        return self.word // itemsize if self.word and major == "C" else 1

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
        """What k is rounded up to: one loop iteration's k (16-bit operands)."""
        return self.k_step_of("float16")

    def k_step_of(self, operands: str) -> int:
        """One loop iteration's k for tiles of `operands`, or ValueError where the slab is
        narrower than their multiply's k (int8: 32)."""
        tk = _tile_k(operands)
        if self.staging == "global":
            return tk
        if self.bk % tk:
            raise ValueError(f"product variant {self.name} steps k by {self.bk}; tiles of "
                             f"{operands} multiply {tk} of k at a time")
        return self.bk

    def threads(self, subgroup_size: int) -> int:
        """Invocations per workgroup on a device with subgroups of `subgroup_size`."""
        own = self.subgroups * subgroup_size
        return own if self.staging == "global" else max(THREADS, own)

    def row_pad(self, itemsize: int) -> int:
        """Elements added to each shared row for operands of `itemsize` bytes: ``pad``
        halves' bytes (16 bytes by default), whatever the element."""
        return self.pad * 2 // itemsize

    def shared_bytes(self, itemsize: int = 2) -> int:
        """Bytes of the shared slabs for operands of `itemsize` bytes."""
        if self.staging == "global":
            return 0
        pad = self.row_pad(itemsize)
        elements = self.stages * (self.bm * (self.bk + pad) + self.bk * (self.bn + pad))
        return itemsize * elements


#: The variants, by name. ``run`` takes one by name; DEFAULT is matmul's. Columns: name,
#: BM x BN (the block of C), SG_M x SG_N (subgroups; each holds TM x TN tiles), then
#: where the tiles come from: device memory, or BK-wide slabs staged in shared memory
#: (``stages`` of them; ``shared_bytes()`` = 2 x stages x (BM (BK + 8) + BK (BN + 8))).
VARIANTS = {v.name: v for v in (
    Variant("g64", 64, 64, 2, 2, staging="global"),  # the first kernel; 2 x 2 tiles
    Variant("g128", 128, 128, 2, 4, staging="global"),  # 4 x 2 tiles
    Variant("s128", 128, 128, 2, 4, bk=32, stages=1),  # 4 x 2 tiles; 18,944 B
    Variant("s128x256", 128, 256, 2, 4, bk=16, stages=2),  # 4 x 4 tiles; 29,184 B
    # Near s128, to measure on GPUs: two 32-wide slabs (one barrier per step, not two);
    Variant("s128d", 128, 128, 2, 4, bk=32, stages=2),  # 4 x 2 tiles; 37,888 B
    # one 64-wide slab (two barriers per 64 of k, not per 32);
    Variant("s128k64", 128, 128, 2, 4, bk=64, stages=1),  # 4 x 2 tiles; 35,840 B
    # 256 x 128 blocks of eight subgroups of 4 x 4 tiles (twice s128's accumulators).
    Variant("s256x128", 256, 128, 4, 2, bk=32, stages=1),  # 4 x 4 tiles; 29,184 B
    # s256x128 with row-major operands copied in words of 4 and 8 bytes.
    Variant("s256x128p4", 256, 128, 4, 2, bk=32, stages=1, word=4),
    Variant("s256x128p8", 256, 128, 4, 2, bk=32, stages=1, word=8),
)}
DEFAULT = "s128"
#: matmul's kernel for large products on matrix units: 256 x 128 blocks (H100, two passes,
#: history.json runs "h100 2026-12-06 07:57 matrix variants ...": 8192^3 201-202
#: TFLOP/s whole call against s128x256's 155 and s128's 129; 4096^3 151-154 against 126-127
#: and 106-108; docs/linalg.md), their row-major slabs copied in uint32 words (8192^3 in one
#: run, history.json run "h100 2026-12-06 18:47": 234.7 TFLOP/s against 188.1 copying halves),
#: where they make at least LARGE_GROUPS workgroups (about two per multiprocessor of a large
#: GPU; fewer leave some idle, where s128's blocks, half the size, occupy them).
LARGE = "s256x128p4"
LARGE_GROUPS = 256


def choose(M: int, N: int, device) -> str:
    """matmul's product kernel for an M x N result on `device`: LARGE for large products
    on matrix units (not emulated: there the larger tiles only cost build time), where
    the device's shared memory holds its slabs; DEFAULT otherwise."""
    v = VARIANTS[LARGE]
    on_units = any(not s.emulated for s in getattr(device.info, "matrix_shapes", ()))
    groups = -(-M // v.bm) * -(-N // v.bn)
    if on_units and groups >= LARGE_GROUPS and v.shared_bytes() <= device.info.max_shared_memory:
        return LARGE
    return DEFAULT


def k_per_launch(name: str, K: int, operands: str, device) -> int:
    """The most of k one launch of variant `name`'s kernel takes on `device`: K, or on a
    device that ends loops after a number of iterations (lavapipe), a multiple of the
    variant's k step small enough that an invocation stays within half of that number.

    The count assumes the emulated tiles (frontend/matrix.py; devices with a loop cap have
    no matrix units): per tile multiply of 16 x 16 x tk, a loop over the 256 accumulator
    elements (k unrolled) and one over the rows of each tile loaded; per k step, the
    loop's own iteration; once, the fill of the accumulators and their conversion and
    store (a loop over this invocation's share). The slab copies are unrolled. On
    lavapipe (subgroups of 8) it is the exact count: 128 x 128 products with ``s128``
    stop at k = 448, as this gives."""
    limit = device.info.loop_iteration_limit
    if not limit:
        return K
    v = VARIANTS[name]
    tk = _tile_k(operands)
    tiles = v.tm * v.tn
    multiply = tiles * T * T + v.tm * T + v.tn * tk
    step = 1 + v.k_step_of(operands) // tk * multiply
    once = 2 * tiles * T * T + tiles * -(-T * T // device.info.subgroup_size)
    steps = max(1, (limit // 2 - once) // step)
    return min(K, steps * v.k_step_of(operands))


#: The tiles' element types, and how the kernel source names them.
OPERANDS = {"float16": "np.float16", "bfloat16": "bfloat16", "int8": "np.int8",
            "uint8": "np.uint8"}
#: The sums' type for each (the tiles' accumulators).
SUMS = {"float16": "float32", "bfloat16": "float32", "int8": "int32", "uint8": "uint32"}


def _stored(dtype, operands):
    """The dtype the kernel stores for a result of `dtype`: float16 from float16 tiles where
    the result is float16 (the kernel converts its sums), else the sums' type (bfloat16
    products are float32)."""
    return np.dtype(np.float16 if dtype == np.float16 and operands == "float16"
                    else SUMS[operands])


def _tile_dtype(operands):
    """The NumPy dtype of tiles of `operands` (a name in OPERANDS), or ValueError."""
    if operands not in OPERANDS:
        raise ValueError(f"products on tiles of {', '.join(OPERANDS)}, not {operands}")
    return np.dtype(bfloat16_host.scalar_type() if operands == "bfloat16" else operands)


def _tile_k(operands):
    """The k of one tile multiply: 16x16x16 for 16-bit operands, 16x16x32 for 8-bit ones
    (the configurations drivers list)."""
    return 2 * T if _tile_dtype(operands).itemsize == 1 else T


def source(v: Variant, threads: int, subgroup_size: int, a_major: str = "C",
           b_major: str = "C", out: str = "float32", operands: str = "float16",
           rows_per_band: int = 1) -> str:
    """The Python source of the product kernel of variant `v` for workgroups of `threads`
    invocations in subgroups of `subgroup_size` (module docstring): ``c = a @ b`` for a
    (Mp x Kp of dtype `operands`, float16, bfloat16, int8 or uint8) of layout `a_major` ("C":
    row-major, "F": column-major), b (Kp x Np, the same dtype) of layout `b_major` and
    C-contiguous c (Mp x Np, of dtype `out`: the sums' type, float32 or int32 (SUMS), or
    "float16" for float32 sums converted in the kernel), Mp and Np multiples of the block,
    Kp of ``k_step_of(operands)``, launched over ``grid(..., rows_per_band)``. The
    layouts change only the staged copies (tile loads from device memory follow the
    array's layout by themselves).

    Indices are uint32 (``U``) values: an unsigned index needs no test for a negative one
    (Python's wrap-around), so each address is a sum the driver can fold."""
    if a_major not in ("C", "F") or b_major not in ("C", "F"):
        raise ValueError(f"operand layouts must be 'C' or 'F', not {a_major!r}, {b_major!r}")
    itemsize = _tile_dtype(operands).itemsize
    sums = SUMS[operands]
    if out != sums and (out, operands) != ("float16", "float16"):
        raise ValueError(f"the product kernel of {operands} tiles stores {sums}"
                         f"{' or float16' if operands == 'float16' else ''}, not {out}")
    elem = OPERANDS[operands]
    tk = _tile_k(operands)
    v.k_step_of(operands)  # refuses a slab narrower than the tiles' k
    pad = v.row_pad(itemsize)
    tm, tn = v.tm, v.tn
    guard = threads // subgroup_size > v.subgroups  # more subgroups than regions
    lines = ["def _nv_tiles_product(a, b, c):"]
    add = lines.append
    lines += block_origin(v.bm, v.bn, rows_per_band)
    add("    sg = U(subgroup.id())")
    add(f"    wr = (sg >> U({log2(v.sg_n)})) * U({tm * T})")
    add(f"    wc = (sg & U({v.sg_n - 1})) * U({tn * T})")
    for i in range(tm):
        add(f"    fa{i} = mx.fragment('a', {T}, {tk}, {elem})")
    add(f"    fb = mx.fragment('b', {tk}, {T}, {elem})")
    for i in range(tm):
        for j in range(tn):
            add(f"    c{i}_{j} = mx.fragment('acc', {T}, {T}, np.{sums})")
            add(f"    mx.fill(c{i}_{j}, 0)")

    def multiply(src_a, a_row, a_col, src_b, b_row, b_col, indent, b_step=T):
        """The TM x TN multiplies of one 16-wide k step; tile origins as lists of terms
        (B's tiles `b_step` columns apart: T, or T / words' elements where B is packed)."""
        out = [f"mx.load(fa{i}, {src_a}, {sum_of(*a_row, i * T)}, {sum_of(*a_col)})"
               for i in range(tm)]
        for j in range(tn):
            out.append(f"mx.load(fb, {src_b}, {sum_of(*b_row)}, {sum_of(*b_col, j * b_step)})")
            out += [f"mx.mma(c{i}_{j}, fa{i}, fb)" for i in range(tm)]
        return [" " * indent + x for x in out]

    if v.staging == "global":
        # A barrier GPUs do not need, for lavapipe's loop cap (module docstring).
        add("    barrier()")
        add(f"    for k in range(0, a.shape[1], {tk}):")
        add("        ku = U(k)")
        lines += multiply("a", ["row0", "wr"], ["ku"], "b", ["ku"], ["col0", "wc"], 8)
    else:
        per_a, per_b = v.per_word(itemsize, a_major), v.per_word(itemsize, b_major)
        if per_b > 1:
            add(f"    wcb = wc >> U({log2(per_b)})")  # the subgroup's first word of B's rows

        def compute(slab_a, slab_b, indent):
            """The multiplies of the shared slab whose first rows are slab_a, slab_b."""
            out = []
            if guard:
                out.append(" " * indent + f"if sg < U({v.subgroups}):")
                indent += 4
            for kk in range(0, v.bk, tk):
                out += multiply("sA", [*slab_a, "wr"], [kk // per_a], "sB", [*slab_b, kk],
                                ["wcb" if per_b > 1 else "wc"], indent, T // per_b)
            return out

        lines += staged_loop(v.bm, v.bn, v.bk, v.stages, threads, a_major, b_major, elem,
                             pad, compute, packed=(f"np.uint{8 * v.word}", per_a, per_b))
    store = []
    if out == "float16":
        store.append(f"h = mx.fragment('acc', {T}, {T}, np.float16)")
    for i in range(tm):
        for j in range(tn):
            at = f"{sum_of('row0', 'wr', i * T)}, {sum_of('col0', 'wc', j * T)}"
            if out == "float16":
                store += [f"mx.convert(h, c{i}_{j})", f"mx.store(c, {at}, h)"]
            else:
                store.append(f"mx.store(c, {at}, c{i}_{j})")
    if v.staging == "shared" and guard:
        add(f"    if sg < U({v.subgroups}):")
        lines += ["        " + x for x in store]
    else:
        lines += ["    " + x for x in store]
    return "\n".join(lines) + "\n"


def kernel(v: Variant, threads: int, subgroup_size: int, a_major: str = "C",
           b_major: str = "C", out: str = "float32", operands: str = "float16",
           rows_per_band: int = 1):
    """The jit kernel of ``source(v, threads, subgroup_size, a_major, b_major, out,
    operands, rows_per_band)``, made once per arguments (the tiles-from-device-memory
    variants have one source for both layouts: the kernel is specialised on its
    arguments' layouts as any kernel is)."""
    if v.staging == "global":
        a_major = b_major = "C"
    key = ("tiles", v, threads, subgroup_size, a_major, b_major, out, operands, rows_per_band)
    namespace = {"U": np.uint32, "mx": mx, "shared": shared, "barrier": barrier,
                 "local_id": local_id, "group_id": group_id, "subgroup": subgroup,
                 "bfloat16": bfloat16_host.scalar_type()}
    return generated(key, lambda: source(v, threads, subgroup_size, a_major, b_major, out,
                                         operands, rows_per_band),
                     namespace, "_nv_tiles_product", f"<numba_vulkan tiles {v.name}>")


def padded_shapes(v: Variant, M, N, K, operands: str = "float16"):
    """The shapes the kernel of `v` takes for an M x K by K x N product of `operands`: a's,
    b's, c's (k of at least one step: the loop multiplies its last slab after reading it)."""
    Mp, Np = round_up(M, v.bm), round_up(N, v.bn)
    Kp = round_up(max(K, 1), v.k_step_of(operands))
    return (Mp, Kp), (Kp, Np), (Mp, Np)


def launcher(v: Variant, a, b, c, device):
    """``launch`` of v's product kernel made for arrays like a, b and c (shapes, strides,
    dtypes): a function of a, b and c that launches it."""
    check_shared_memory(v, device, a.dtype.itemsize)
    sg = device.info.subgroup_size
    threads = v.threads(sg)
    Mp, Np = c.shape
    r = band(Mp // v.bm, v.swizzle)
    a_major, b_major = layout(a), layout(b)
    k = kernel(v, threads, sg, a_major, b_major, dtype_name(c.dtype), dtype_name(a.dtype), r)
    config = k[grid(Mp, Np, v.bm, v.bn, r), (threads, 1), device]
    # 8- and 16-bit operands go as the words their slabs are copied in
    wa, wb = (f"uint{8 * v.word}" if v.per_word(x.dtype.itemsize, major) > 1 else None
              for x, major in ((a, a_major), (b, b_major)))

    def start(a, b, c):
        config(a if wa is None else a.view(wa), b if wb is None else b.view(wb), c)

    return start


def launch(v: Variant, a, b, c, device):
    """The product kernel of `v`: c = a @ b for float16 (bfloat16, int8, uint8) a and b of one
    dtype, C- or F-contiguous, and C-contiguous c of their sums' type (or float16), of the
    shapes ``padded_shapes`` gives."""
    launcher(v, a, b, c, device)(a, b, c)


def direct(A, B, C, device, operands: str = "float16"):
    """``launcher``'s answer for the product of 2-d A and B into C that ``run`` makes in one
    launch on the arrays as they are (no operand padded, no chunks of k, C written in
    place), else None."""
    M, N = C.shape
    K = A.shape[1]
    name = choose(M, N, device)
    if k_per_launch(name, K, operands, device) != K:
        return None
    v = VARIANTS[name]
    sa, sb, sc = padded_shapes(v, M, N, K, operands)
    taken = (dtype_name(_tile_dtype(operands)),)
    if not (in_place(A, sa, taken) and in_place(B, sb, taken)
            and in_place(C, sc, (dtype_name(_stored(C.dtype, operands)),), "C")):
        return None
    return launcher(v, A, B, C, device)


def run(A, B, C, device, variant: str | None = None, operands: str = "float16"):
    """C[b] = A[b] @ B[b] for (nb, M, K), (nb, K, N) and (nb, M, N) views, on tiles of
    `operands` (float16, bfloat16, int8 or uint8), with the kernel VARIANTS[variant]
    (``choose``'s where None): operands read in place where the kernel can take them, else
    padded (converted to `operands`); the result stored in place where it can, else
    through a padded buffer (module docstring)."""
    M, N = C.shape[1:]
    name = choose(M, N, device) if variant is None else variant
    if name not in VARIANTS:
        raise ValueError(f"no product variant {name!r}; there are {', '.join(VARIANTS)}")
    tile_dtype = _tile_dtype(operands)
    v = VARIANTS[name]
    check_shared_memory(v, device, tile_dtype.itemsize)
    c_dtype = _stored(C.dtype, operands)
    padded_batches(A, B, C, device, padded_shapes(v, M, N, A.shape[2], operands), tile_dtype,
                   c_dtype, lambda a, b, c: launch(v, a, b, c, device))
