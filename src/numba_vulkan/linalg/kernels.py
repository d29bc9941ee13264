"""The matmul kernels: a tiled SIMT kernel generated per variant, two for products of few
outputs (``thin``: an invocation per output; ``dots``: a workgroup per output, its
invocations' sums added by a tree in shared memory), and the sums of split-K partials
(``finish`` in chunk order, ``finish_tree`` by a workgroup's tree).

The tiled kernel (``tiled``) computes one (BM x BN) tile of C per workgroup of WX x WY
invocations; each invocation holds TM x TN results in registers, at rows
``ty + WY*i`` and columns ``tx + WX*j`` of the tile (strided, so that neighbouring
invocations load neighbouring shared-memory words and store neighbouring elements of C).
For each step of BK along k the workgroup copies a BK x BM slice of A (stored
transposed, k first) and a BK x BN slice of B into shared memory, converting each
element to the accumulation type once, with zeros outside the matrices (the edges), waits
at a barrier, accumulates the step's BK products per result in k order, and waits again
before the next copy. Every result is therefore the sum over k in increasing order of
``acc(a) * acc(b)``, each product and sum rounded in the accumulation type (no fused
multiply-add): the same order as NumPy's own non-BLAS loop. Results are converted to C's
dtype once, at the end.

Operands are 3-d views (batch, rows, cols) of any strides (kernels take at most 3-d
arrays), batch broadcast with stride 0; the batch is ``group_id(2)``. The source is
generated: the TM x TN results are separate variables and their updates written out; the
k step (``Tiling.unroll``) and the copies to shared memory (``Tiling.unroll_loads``) are
loops or written out, whichever the device's tiling asks for (``Tiling.loop_iterations``
counts what an invocation runs, for lavapipe's loop cap). The generated source of a
variant can be read with ``tiled_source``. Kernels are compiled once per variant and the
dispatcher specialises each once per argument types (dtypes, layouts).

A sketch of one k step for TM = TN = 2 (WX = WY = 16), the k step as a loop::

    for k0 in range(0, K, BK):
        for e in range(t, BM * BK, 256):      # this invocation's share of A's block
            m = e // BK; k = e % BK ...
            sA[k, m] = T_float32(A[b, row0 + m, k0 + k]) if inside else ZERO
        ... (B likewise)
        barrier()
        for kq in range(0, BK, 1):
            a0 = sA[kq + 0, ty + 0]; a1 = sA[kq + 0, ty + 16]
            b0 = sB[kq + 0, tx + 0]; b1 = sB[kq + 0, tx + 16]
            c0_0 = ACC(c0_0 + ACC(a0 * b0)) ... (4 updates)
        barrier()
"""

from __future__ import annotations

import dataclasses
import re

import numpy as np

from .. import forksafe
from ..runtime.compiler_hook import jit
from ..stubs import barrier, global_id, group_id, local_id, shared


@dataclasses.dataclass(frozen=True)
class Tiling:
    """The shape of the tiled kernel's work: WX x WY invocations per workgroup, each with
    TM x TN results, BK elements of k per step."""

    wx: int = 16
    wy: int = 16
    tm: int = 4
    tn: int = 4
    bk: int = 16
    unroll: int = 0  # k values written out per iteration of the inner loop (0: all bk)
    unroll_loads: bool = True  # the copies to shared memory written out, not a loop

    @property
    def bm(self) -> int:
        return self.wy * self.tm

    @property
    def bn(self) -> int:
        return self.wx * self.tn

    @property
    def threads(self) -> int:
        return self.wx * self.wy

    def loop_iterations(self, k: int) -> int:
        """Loop iterations one invocation runs for a k range of `k` (lavapipe caps them)."""
        per_step = 1
        if self.unroll and self.unroll < self.bk:
            per_step += self.bk // self.unroll
        if not self.unroll_loads:
            per_step += (self.bm + self.bn) * self.bk // self.threads
        return -(-k // self.bk) * per_step


@dataclasses.dataclass(frozen=True)
class Variant:
    """What one generated kernel is specialised for, besides the argument types (dtypes,
    layouts), which the dispatcher specialises on."""

    acc: str  # accumulation dtype name ("float32", "int64", ...)
    any_of: bool  # bool's product: c | (a & b) instead of c + a * b
    a_load: str  # source converting an element of A to `acc` ("T_float32({})")
    b_load: str
    out: str  # source converting a sum to C's dtype ("{}", "T_float16({})", "({} != 0)")
    tiling: Tiling
    a_rows_fast: bool  # A's rows (M) are its unit-stride axis: consecutive loads go down rows
    b_rows_fast: bool  # B's rows (K) are its unit-stride axis
    narrow: object  # the jit option `narrow` (runtime/reduce.py's choice per device)
    #: float products fused into the sums (``fastmath={'contract'}``: the driver may compute
    #: ``c + a * b`` as one multiply-add rounded once, as cuBLAS does), the k order unchanged
    contract: bool = False


def _load_lines(name, dst, load, a_side, rows_fast, tile, bk, threads, written_out):
    """Source lines copying the step's block of `name` into shared memory `dst`, indexed
    [k, m] for A (`a_side`: a tile x bk block of rows m, columns k) and [k, n] for B (a
    bk x tile block): tile * bk / threads elements per invocation, written out or in a
    loop. `rows_fast`: consecutive invocations take consecutive rows of the operand (its
    unit-stride axis is the rows), else consecutive columns."""
    count = tile * bk // threads
    if a_side:
        m, k = ("e % TILE", "e // TILE") if rows_fast else ("e // BK", "e % BK")
        copy = ["m = " + m, "k = " + k, "gr = row0 + m", "gc = k0 + k",
                f"{dst}[k, m] = {load.format(f'{name}[b, gr, gc]')} if gr < M and gc < K else ZERO"]
    else:
        k, n = ("e % BK", "e // BK") if rows_fast else ("e // TILE", "e % TILE")
        copy = ["k = " + k, "n = " + n, "gr = k0 + k", "gc = col0 + n",
                f"{dst}[k, n] = {load.format(f'{name}[b, gr, gc]')} if gr < K and gc < N else ZERO"]
    copy = [line.replace("TILE", str(tile)).replace("BK", str(bk)) for line in copy]
    if not written_out:
        return [f"for e in range(t, {tile * bk}, {threads}):"] + ["    " + c for c in copy]
    lines = []
    for r in range(count):
        lines += [f"e = t + {r * threads}"] + copy
    return lines


def tiled_source(v: Variant) -> str:
    """The Python source of the tiled kernel for variant `v` (see the module docstring)."""
    t = v.tiling
    if (t.bm * t.bk) % t.threads or (t.bn * t.bk) % t.threads:
        raise ValueError(f"tiling {t}: the tiles must divide among {t.threads} invocations")
    step = "ACC({c} | ({a} & {b}))" if v.any_of else "ACC({c} + ACC({a} * {b}))"
    lines = [
        "def _nv_matmul_tiled(A, B, C):",
        "    tx = local_id(0)",
        "    ty = local_id(1)",
        f"    t = ty * {t.wx} + tx",
        f"    col0 = group_id(0) * {t.bn}",
        f"    row0 = group_id(1) * {t.bm}",
        "    b = group_id(2)",
        "    M = C.shape[1]",
        "    N = C.shape[2]",
        "    K = A.shape[2]",
        f"    sA = shared.array(({t.bk}, {t.bm}), ACC)",
        f"    sB = shared.array(({t.bk}, {t.bn}), ACC)",
    ]
    for i in range(t.tm):
        for j in range(t.tn):
            lines.append(f"    c{i}_{j} = ZERO")
    lines.append(f"    for k0 in range(0, K, {t.bk}):")
    body = []
    body += _load_lines("A", "sA", v.a_load, True, v.a_rows_fast, t.bm, t.bk, t.threads,
                        t.unroll_loads)
    body += _load_lines("B", "sB", v.b_load, False, v.b_rows_fast, t.bn, t.bk, t.threads,
                        t.unroll_loads)
    body.append("barrier()")
    unroll = t.unroll or t.bk
    inner = []
    for u in range(unroll):
        kk = str(u) if unroll == t.bk else f"kq + {u}"
        for i in range(t.tm):
            inner.append(f"a{i} = sA[{kk}, ty + {i * t.wy}]")
        for j in range(t.tn):
            inner.append(f"b{j} = sB[{kk}, tx + {j * t.wx}]")
        for i in range(t.tm):
            for j in range(t.tn):
                inner.append(f"c{i}_{j} = {step.format(c=f'c{i}_{j}', a=f'a{i}', b=f'b{j}')}")
    if unroll == t.bk:
        body += inner
    else:
        body.append(f"for kq in range(0, {t.bk}, {unroll}):")
        body += ["    " + line for line in inner]
    body.append("barrier()")
    lines += ["        " + line for line in body]
    for i in range(t.tm):
        lines.append(f"    r = row0 + ty + {i * t.wy}")
        lines.append("    if r < M:")
        for j in range(t.tn):
            lines.append(f"        c = col0 + tx + {j * t.wx}")
            lines.append("        if c < N:")
            lines.append(f"            C[b, r, c] = {v.out.format(f'c{i}_{j}')}")
    return "\n".join(lines) + "\n"


def _scalar_types(source):
    """{"T_<dtype name>": the dtype's scalar type} for the conversions `source` names
    (``T_float16(x)``; ``T_bfloat16`` is ml_dtypes' type, which kernels also convert to)."""
    return {f"T_{name}": np.dtype(name).type for name in set(re.findall(r"\bT_(\w+)\(", source))}


_kernels: dict = {}
#: ("thin" or "dots", variant) -> the kernel in _kernels it shares with other variants
_by_variant: dict = {}
_lock = forksafe.lock()


def generated(key, source, namespace, entry, filename, **options):
    """The jit kernel `entry` that Python source ``source()`` defines over `namespace`
    (``options`` for jit), made once per `key` in the process (linalg's kernels are written
    per variant: kernels.py, tiles.py)."""
    k = _kernels.get(key)
    if k is not None:
        return k
    with _lock:
        k = _kernels.get(key)
        if k is None:
            text = source()
            ns = {"np": np, **namespace, **_scalar_types(text)}
            exec(compile(text, filename, "exec"), ns)
            k = _kernels[key] = jit(**options)(ns[entry])
    return k


def tiled(v: Variant):
    """The jit kernel of variant `v`, generated and decorated once per variant."""
    acc = np.dtype(v.acc).type
    namespace = {"ACC": acc, "ZERO": acc(0), "shared": shared, "barrier": barrier,
                 "local_id": local_id, "group_id": group_id}
    options = {"fastmath": {"contract"}} if v.contract else {}
    return generated(v, lambda: tiled_source(v), namespace, "_nv_matmul_tiled",
                     f"<numba_vulkan matmul {v.acc}>", narrow=v.narrow, **options)


def thin_source(v: Variant) -> str:
    """The kernel for products of few outputs (a vector operand, a handful of elements):
    one invocation per output element and chunk of `chunk` k values, on a 1-d grid (so
    that no short axis leaves workgroups mostly idle), summing its chunk in k order with
    the tiled kernel's step into P[q * nb + b, i, j] (q the chunk), for the finish kernel
    to add in chunk order; P is C itself where there is one chunk and C holds the sums'
    type."""
    step = "ACC(s | (x & y))" if v.any_of else "ACC(s + ACC(x * y))"
    return (
        "def _nv_matmul_thin(A, B, P, chunk):\n"
        "    t = global_id(0)\n"
        "    N = P.shape[2]\n"
        "    M = P.shape[1]\n"
        "    nb = A.shape[0]\n"
        "    if t < N * M * P.shape[0]:\n"
        "        j = t % N\n"
        "        i = t // N % M\n"
        "        z = t // N // M\n"
        "        q = z // nb\n"
        "        b = z - q * nb\n"
        "        s = ZERO\n"
        "        for k in range(q * chunk, min(q * chunk + chunk, A.shape[2])):\n"
        f"            x = ACC({v.a_load.format('A[b, i, k]')})\n"
        f"            y = ACC({v.b_load.format('B[b, k, j]')})\n"
        f"            s = {step}\n"
        "        P[z, i, j] = s\n"
    )


def thin(v: Variant):
    """The jit kernel of ``thin_source(v)``, generated once per variant (its tiling and
    layouts play no part)."""
    acc = np.dtype(v.acc).type
    options = {"fastmath": {"contract"}} if v.contract else {}
    return _untiled_kernel("thin", v, lambda key: generated(
        key, lambda: thin_source(v), {"ACC": acc, "ZERO": acc(0), "global_id": global_id},
        "_nv_matmul_thin", f"<numba_vulkan matmul thin {v.acc}>", narrow=v.narrow, **options))


#: Invocations of a ``dots`` workgroup (a power of two; Vulkan guarantees 128).
DOTS_WIDTH = 64
#: ``dots``' grid is 2-d, DOTS_ROW workgroups a row, for more than the 65,535 workgroups
#: Vulkan guarantees along one axis.
DOTS_ROW = 1 << 15


def _tree_lines(header, z_bound, sums, add, store):
    """A kernel of a workgroup (DOTS_WIDTH invocations) per output: ``header`` (its
    signature), the output's indices from the workgroup's number z, ``sums`` (lines adding
    this invocation's share into s, run where z is below `z_bound`), then a tree in shared
    memory adding the invocations' sums with `add`, always in the same order, and
    ``store`` of the total (tree[0]) by invocation 0."""
    lines = [
        header,
        "    l = local_id(0)",
        f"    z = group_id(1) * {DOTS_ROW} + group_id(0)",
        "    j = z % N",
        "    i = z // N % M",
        "    w = z // N // M",
        "    s = ZERO",
        f"    if z < {z_bound}:",
        *("        " + line for line in sums),
        "    tree = shared.array(WIDTH, ACC)",
        "    tree[l] = s",
        "    barrier()",
    ]
    h = DOTS_WIDTH // 2
    while h:
        lines += [f"    if l < {h}:", f"        tree[l] = ACC(tree[l] {add} tree[l + {h}])",
                  "    barrier()"]
        h //= 2
    lines += [f"    if l == 0 and z < {z_bound}:", f"        {store}"]
    return "\n".join(lines) + "\n"


def _tree_kernel(key, source, acc, entry, filename, narrow, **options):
    """The jit kernel of a ``_tree_lines`` source, generated once per `key`."""
    acc = np.dtype(acc).type
    namespace = {"ACC": acc, "ZERO": acc(0), "WIDTH": DOTS_WIDTH, "shared": shared,
                 "barrier": barrier, "local_id": local_id, "group_id": group_id}
    return generated(key, source, namespace, entry, filename, narrow=narrow, **options)


def dots_source(v: Variant) -> str:
    """The kernel for few outputs whose k runs along an operand's memory (a matrix times a
    vector, a dot product): a workgroup of DOTS_WIDTH invocations per output element and
    chunk of `chunk` k values, invocation l summing k = l, l + DOTS_WIDTH, ... of the
    chunk (neighbouring invocations read neighbouring elements), the tree adding the
    DOTS_WIDTH sums into P[q * nb + b, i, j] as ``thin`` does (P is C where there is one
    chunk and C holds the sums' type). Not in k order: float16 loops, which are NumPy's
    bit for bit in k order, take ``thin``."""
    step = "ACC(s | (x & y))" if v.any_of else "ACC(s + ACC(x * y))"
    sums = ["q = w // nb", "b = w - q * nb",
            "for k in range(q * chunk + l, min(q * chunk + chunk, A.shape[2]), WIDTH):",
            f"    x = ACC({v.a_load.format('A[b, i, k]')})",
            f"    y = ACC({v.b_load.format('B[b, k, j]')})",
            f"    s = {step}"]
    header = ("def _nv_matmul_dots(A, B, P, chunk):\n    N = P.shape[2]\n    M = P.shape[1]\n"
              "    nb = A.shape[0]")
    return _tree_lines(header, "P.shape[0] * M * N", sums, "|" if v.any_of else "+",
                       "P[w, i, j] = tree[0]")


def dots(v: Variant):
    """The jit kernel of ``dots_source(v)``, generated once per variant (its tiling and
    layouts play no part)."""
    options = {"fastmath": {"contract"}} if v.contract else {}
    return _untiled_kernel("dots", v, lambda key: _tree_kernel(
        key, lambda: dots_source(v), v.acc, "_nv_matmul_dots",
        f"<numba_vulkan matmul dots {v.acc}>", v.narrow, **options))


def _untiled_kernel(kind: str, v: Variant, make):
    """The `kind` kernel of `v`, which does not depend on v's tiling and layouts:
    ``make(key)`` generates it once under the key without them; `v` itself finds it again
    (no dataclasses.replace on matmul's path)."""
    k = _by_variant.get((kind, v))
    if k is None:
        key = (kind, dataclasses.replace(v, tiling=None, a_rows_fast=False, b_rows_fast=False))
        k = _by_variant[kind, v] = make(key)
    return k


def finish_tree_source(acc: str, any_of: bool, out: str) -> str:
    """``finish_source``'s sums with a workgroup per output, its invocations taking every
    DOTS_WIDTH-th chunk and the tree adding their sums (not in chunk order): for many
    chunks, which one invocation per output would add one after the other."""
    add = "|" if any_of else "+"
    sums = ["for q in range(l, P.shape[0] // nb, WIDTH):",
            f"    s = ACC(s {add} P[q * nb + w, i, j])"]
    header = ("def _nv_matmul_finish_tree(P, C):\n    N = C.shape[2]\n    M = C.shape[1]\n"
              "    nb = C.shape[0]")
    return _tree_lines(header, "nb * M * N", sums, add, f"C[w, i, j] = {out.format('tree[0]')}")


def finish_tree(acc: str, any_of: bool, out: str, narrow):
    """The jit kernel of ``finish_tree_source``, generated once per arguments."""
    return _tree_kernel(("finish_tree", acc, any_of, out, narrow),
                        lambda: finish_tree_source(acc, any_of, out), acc,
                        "_nv_matmul_finish_tree", f"<numba_vulkan matmul finish {acc}>", narrow)


def finish_source(acc: str, any_of: bool, out: str) -> str:
    """The kernel summing split-k partials over the chunks, in order, into C[b, i, j]:
    P holds chunk q's partials of batch b at P[q * nb + b] (kernels take at most 3-d
    arrays)."""
    step = "s | P[q * nb + b, i, j]" if any_of else "s + P[q * nb + b, i, j]"
    return (
        "def _nv_matmul_finish(P, C):\n"
        "    j = global_id(0)\n"
        "    i = global_id(1)\n"
        "    b = global_id(2)\n"
        "    nb = C.shape[0]\n"
        "    if j < C.shape[2] and i < C.shape[1] and b < nb:\n"
        "        s = P[b, i, j]\n"
        "        for q in range(1, P.shape[0] // nb):\n"
        f"            s = ACC({step})\n"
        f"        C[b, i, j] = {out.format('s')}\n"
    )


def finish(acc: str, any_of: bool, out: str, narrow):
    """The jit kernel of ``finish_source``, generated once per arguments."""
    return generated(("finish", acc, any_of, out, narrow),
                     lambda: finish_source(acc, any_of, out),
                     {"ACC": np.dtype(acc).type, "global_id": global_id}, "_nv_matmul_finish",
                     f"<numba_vulkan matmul finish {acc}>", narrow=narrow)
