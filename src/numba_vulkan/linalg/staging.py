"""What linalg's staged product kernels share (tiles.py on cooperative matrices,
blocked.py on registers): operands padded to whole blocks and read in place where they
already are (``padded_batches``, ``pad``, ``unpad``, ``in_place``), the Python source of
the k loop over shared slabs read ahead into registers (``staged_loop``, with
``copy_plan`` sharing each slab out among the invocations), and the order of the
workgroups over the blocks of C (``block_origin``, ``grid``, ``band``). Indices in the
generated source are uint32 (``U``) values: ``sum_of`` writes their sums.
"""

from __future__ import annotations

import numpy as np

from ..checks import dtype_name
from ..runtime.compiler_hook import jit
from ..stubs import global_id


def log2(n):
    if n <= 0 or n & (n - 1):
        raise ValueError(f"{n} is not a power of 2")
    return n.bit_length() - 1


def copy_plan(rows, cols, threads, major="C"):
    """The elements of a rows x cols slab one invocation copies, as (row, col) offsets from
    its own first element, for an operand of layout `major`. "C": consecutive invocations
    along a row (invocation tid's first element at row ``tid // cols``, column
    ``tid % cols``; element ``tid + r * threads`` of the slab in row-major order for each
    r); "F": along a column (row ``tid % rows``, column ``tid // rows``, the slab in
    column-major order)."""
    if major == "F":
        return [(dr, dc) for dc, dr in copy_plan(cols, rows, threads)]
    if (rows * cols) % threads or (threads % cols and cols % threads):
        raise ValueError(f"a {rows} x {cols} slab does not divide among {threads} invocations")
    return [((r * threads) // cols, (r * threads) % cols) for r in range(rows * cols // threads)]


def first_element(r, c, rows, cols, major):
    """Source lines setting `r`, `c` to the row and column of invocation ``tid``'s first
    element of a rows x cols slab copied in `major` order ("C": along rows; "F": along
    columns), as _copy_plan shares the slab out."""
    if major == "C":
        return [f"    {r} = tid >> U({log2(cols)})", f"    {c} = tid & U({cols - 1})"]
    return [f"    {r} = tid & U({rows - 1})", f"    {c} = tid >> U({log2(rows)})"]


def _in_words(term, per):
    """Source of element index `term` as an index of words of `per` elements."""
    return term if per == 1 else f"({term} >> U({log2(per)}))"


def sum_of(*terms):
    """Source of the sum of `terms` (source text or ints): constants folded, zeros dropped,
    every constant written as ``U(c)`` so that the sum stays unsigned."""
    const = sum(t for t in terms if isinstance(t, int))
    names = [t for t in terms if not isinstance(t, int)]
    if const or not names:
        names.append(f"U({const})")
    return " + ".join(names)


def band(rows: int, swizzle: int) -> int:
    """How many rows of blocks consecutive workgroups take, for `rows` rows of blocks and a
    kernel's ``swizzle``: the largest power of two up to `swizzle` that divides `rows`."""
    b = 1
    while 2 * b <= swizzle and rows % (2 * b) == 0:
        b *= 2
    return b


def block_origin(bm, bn, rows_per_band):
    """Source lines setting ``row0`` and ``col0``, the first row and column of the
    workgroup's BM x BN block of C. With one row per band, workgroup (x, y) takes block
    (row y, column x): consecutive workgroups go along a row of blocks, all sharing one
    slab of A and each reading its own of B. With `rows_per_band` = R > 1 (``grid``),
    consecutive workgroups go down R rows, then to the next column: those that run at
    once read R slabs of A and fewer of B, which a cache can keep. Shifts and masks only
    (no division: a division in an address beside cooperative-matrix multiplies once
    lost stores on NVIDIA)."""
    if rows_per_band == 1:
        return [f"    row0 = U(group_id(1)) * U({bm})", f"    col0 = U(group_id(0)) * U({bn})"]
    r = rows_per_band
    return ["    gx = U(group_id(0))",
            f"    row0 = (U(group_id(1)) * U({r}) + (gx & U({r - 1}))) * U({bm})",
            f"    col0 = (gx >> U({log2(r)})) * U({bn})"]


def grid(Mp, Np, bm, bn, rows_per_band):
    """The workgroups of a launch over an Mp x Np result in BM x BN blocks, bands of
    `rows_per_band` rows of blocks (``block_origin``)."""
    return (Np // bn * rows_per_band, Mp // bm // rows_per_band)


def staged_loop(bm, bn, bk, stages, threads, a_major, b_major, elem, row_pad, compute,
                a_by_k=False, packed=None):
    """Source lines (inside the kernel's body) of the k loop over shared slabs: the
    declarations of the slabs ``sA`` and ``sB`` (`stages` of each, rows padded by `row_pad`
    elements of type source `elem`) and of each invocation's copy offsets, then the steps
    (module docstring: the first slab copied, each step reading the next slab into
    registers while ``compute(slab_a, slab_b, indent)``'s lines multiply the one in shared
    memory, the last multiplied after the loop). A's slab is BM x BK (rows m), or, with
    `a_by_k`, stored transposed as BK x BM (rows k); B's is BK x BN. ``slab_a`` and
    ``slab_b`` are the terms of the first row of the slab to multiply. Operands: ``a``
    (Mp x Kp) and ``b`` (Kp x Np) of layouts `a_major` and `b_major`, row0 and col0 the
    workgroup's first row and column of the result.

    `packed` = (word, per_a, per_b): an operand whose ``per_`` is above 1 is a view of
    row-major words of source type `word` that hold ``per_`` elements each (tiles.py's
    ``Variant.word``): its slab is copied a word at a time into shared words, the columns
    of both counted in words (A's k, B's n); the loop's k still counts elements."""
    word, per_a, per_b = packed or (elem, 1, 1)
    if (per_a > 1 and (a_major != "C" or a_by_k)) or (per_b > 1 and b_major != "C"):
        raise ValueError("only row-major operands copy packed words into row-major slabs")
    ra = copy_plan(bm, bk // per_a, threads, a_major)
    rb = copy_plan(bk, bn // per_b, threads, b_major)
    a_rows = bk if a_by_k else bm  # rows of one slab of A in shared memory
    a_cols = ((bm if a_by_k else bk) + row_pad) // per_a
    lines = [f"    sA = shared.array(({stages * a_rows}, {a_cols}), "
             f"{word if per_a > 1 else elem})",
             f"    sB = shared.array(({stages * bk}, {(bn + row_pad) // per_b}), "
             f"{word if per_b > 1 else elem})",
             "    tid = U(local_id(0))"]
    add = lines.append
    # Each invocation's first element of the A and B slabs (_copy_plan).
    lines += first_element("ar", "ac", bm, bk // per_a, a_major)
    lines += first_element("br", "bc", bk, bn // per_b, b_major)
    add("    ga = row0 + ar")
    add(f"    gb = {_in_words('col0', per_b)} + bc")

    def fetch(k0, indent):
        """The slab at column (row) k0 of a (b) into registers."""
        ka = [_in_words(k0[0], per_a)] if k0 else []
        out = [f"xa{r} = a[{sum_of('ga', dr)}, {sum_of(*ka, 'ac', dc)}]"
               for r, (dr, dc) in enumerate(ra)]
        out += [f"xb{r} = b[{sum_of(*k0, 'br', dr)}, {sum_of('gb', dc)}]"
                for r, (dr, dc) in enumerate(rb)]
        return [" " * indent + x for x in out]

    def put(slab_a, slab_b, indent):
        """The registers into the shared slab whose first rows are slab_a, slab_b."""
        if a_by_k:
            out = [f"sA[{sum_of(*slab_a, 'ac', dc)}, {sum_of('ar', dr)}] = xa{r}"
                   for r, (dr, dc) in enumerate(ra)]
        else:
            out = [f"sA[{sum_of(*slab_a, 'ar', dr)}, {sum_of('ac', dc)}] = xa{r}"
                   for r, (dr, dc) in enumerate(ra)]
        out += [f"sB[{sum_of(*slab_b, 'br', dr)}, {sum_of('bc', dc)}] = xb{r}"
                for r, (dr, dc) in enumerate(rb)]
        return [" " * indent + x for x in out]

    # The first slab into shared memory; each step of the loop reads the next one
    # ahead; the last one is multiplied after the loop (nothing left to read).
    lines += fetch([], 4)
    lines += put([], [], 4)
    add("    barrier()")
    if stages == 2:
        add("    cur = U(0)")  # the slab multiplied next
    add(f"    for k0 in range({bk}, b.shape[0], {bk}):")  # Kp: b's rows are never packed
    add("        ku = U(k0)")
    if stages == 1:
        # Step: read the next slab into registers, multiply the one in shared
        # memory, wait, write the next one, wait.
        lines += fetch(["ku"], 8)
        lines += compute([], [], 8)
        add("        barrier()")
        lines += put([], [], 8)
        add("        barrier()")
        lines += compute([], [], 4)
    else:
        # Step: read the next slab into registers, multiply slab `cur` in shared
        # memory, write the next one into the other slab, wait.
        add(f"        ca = cur * U({a_rows})")
        add(f"        cb = cur * U({bk})")
        add(f"        na = U({a_rows}) - ca")
        add(f"        nb = U({bk}) - cb")
        lines += fetch(["ku"], 8)
        lines += compute(["ca"], ["cb"], 8)
        lines += put(["na"], ["nb"], 8)
        add("        cur = U(1) - cur")
        add("        barrier()")
        add(f"    ca = cur * U({a_rows})")
        add(f"    cb = cur * U({bk})")
        lines += compute(["ca"], ["cb"], 4)
    return lines


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


def round_up(n, m):
    return -(-n // m) * m


#: The byte alignment of an array's start that the kernel reads or writes in place
#: (Vulkan's for cooperative-matrix loads and stores).
ALIGN = 16


def layout(x):
    """"C" or "F" for a C- or F-contiguous array (as kernels type it), else None."""
    return "C" if x.is_contiguous else "F" if x._f_only() else None


def in_place(x, shape, dtypes, layouts="CF"):
    """Whether the kernel can take the 2-d array `x` as it is: one of `dtypes`, exactly of
    `shape`, of one of `layouts` and starting on ALIGN bytes."""
    return (dtype_name(x.dtype) in dtypes and tuple(x.shape) == tuple(shape)
            and (layout(x) or "-") in layouts and x._offset % ALIGN == 0)


def check_shared_memory(v, device, itemsize: int = 2):
    """ValueError where `device` has less shared memory than variant `v` needs for operands
    of `itemsize` bytes."""
    have, need = device.info.max_shared_memory, v.shared_bytes(itemsize)
    if have and need > have:
        raise ValueError(f"product variant {v.name} needs {need} bytes of shared "
                         f"memory; {device.info.name} has {have}")


def padded_batches(A, B, C, device, shapes, dtype, c_dtype, product):
    """C[b] = A[b] @ B[b] for (nb, M, K), (nb, K, N) and (nb, M, N) views by ``product(a, b,
    c)``, a kernel that takes operands of dtype `dtype` and a C-contiguous result of dtype
    `c_dtype`, of exactly `shapes` (a's, b's, c's: ``padded_shapes``): each operand read
    in place where it is so (``in_place``), else padded into a buffer (made once per
    operand; once in all for a batch broadcast with stride 0); each result written in
    place where it can be, else into a padded buffer that ``unpad`` copies into C[b]."""
    from ..runtime.array import DeviceArray

    nb, M, _ = A.shape
    N = B.shape[2]
    sa, sb, sc = shapes
    padded = {}
    taken = (dtype_name(np.dtype(dtype)),)

    def operand(which, X, i, shape):
        x = X[i]
        if in_place(x, shape, taken):
            return x
        buf = padded.get(which)
        if buf is None:
            buf = padded[which] = DeviceArray(device, shape, dtype)
        elif X._dev_strides[0] == 0:  # broadcast along the batch: padded already
            return buf
        pad.forall((shape[1], shape[0]), device=device)(x, buf)
        return buf

    stored = (dtype_name(np.dtype(c_dtype)),)
    c = None
    for i in range(nb):
        a, b, ci = operand("a", A, i, sa), operand("b", B, i, sb), C[i]
        if in_place(ci, sc, stored, "C"):
            product(a, b, ci)
            continue
        if c is None:
            c = DeviceArray(device, sc, c_dtype)
        product(a, b, c)
        unpad.forall((N, M), device=device)(c, ci)
