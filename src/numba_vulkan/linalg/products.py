"""``matmul(a, b, out=None)``: NumPy's ``np.matmul`` on device arrays.

The steps, each on views (no data moves; no host copy of device arrays):

1. Types: NumPy picks the loop (``np.matmul.resolve_dtypes``), so result dtypes are
   NumPy's; ``plans.choose`` picks the kernel and its accumulation type for the loop
   dtype and the device.
2. Shapes, as NumPy's gufunc signature ``(n?,k),(k,m?)->(n?,m?)`` has them: a 1-d
   operand is a row (a) or a column (b) whose axis is dropped from the result; leading
   axes broadcast. Every operand becomes a (batch, rows, cols) view with its own strides
   (a transposed or sliced view keeps its strides), the broadcast batch axes with
   stride 0, the batch axes merged where every operand allows it, and one launch per
   index of the axes that do not merge.
3. One launch of the tiled kernel per such batch (of the thin kernel, an invocation per
   output, for few outputs), writing C directly; or, where k is
   long for the number of workgroups (or longer than lavapipe's loop cap allows one
   invocation), the k range split into chunks whose partial products go to a scratch
   array in the accumulation type, summed in chunk order by a second kernel. An operand
   that shares memory with `out` (``a @= b``) is read from a copy made on the device, as
   NumPy buffers it.
"""

from __future__ import annotations

import dataclasses
import functools
import itertools
import math

import numpy as np
from numpy.typing import ArrayLike, DTypeLike

from ..checks import dtype_name
from ..errors import VulkanUnsupportedError
from ..runtime.array import DeviceArray
from ..runtime.creation import to_device
from ..runtime.layout import broadcast_to, view
from ..runtime.reduce import _narrow_option
from ..ufunc import operands
from . import direct, kernels, plans

#: A chunk of a split k range is at least this many k steps of the tile (so that the
#: extra traffic of the partials stays small against the products).
MIN_STEPS_PER_CHUNK = 32
#: Products of at most this many outputs (or of a row or a column of them) take the thin
#: kernel (``_thin``): the tiled one would fill a workgroup's block with one of them.
THIN_OUTPUTS = 256
#: The thin kernels' k chunks: at least THIN_CHUNK long (as the tiled kernel's: a k of at
#: most that is not split, so float16 results stay NumPy's bit for bit), longer where
#: THIN_INVOCATIONS invocations in all would take less.
THIN_CHUNK = MIN_STEPS_PER_CHUNK * 32
THIN_INVOCATIONS = 1 << 16
#: On GPUs sums that need not stay in k order (all but float16's) take THIN_GPU_SPREAD
#: times the invocations, in chunks as many times shorter: a vector times an 8192 x 8192
#: float32 matrix 0.29 -> 0.24 ms on an H100 (on lavapipe 2.6 -> 5.3 ms: not there).
THIN_GPU_SPREAD = 4
#: The shortest k that ``kernels.dots`` takes (4 steps of its workgroup).
DOTS_MIN_K = 256


def matmul(a: ArrayLike | DeviceArray, b: ArrayLike | DeviceArray,
           out: DeviceArray | np.ndarray | None = None, *, dtype: DTypeLike | None = None,
           casting: str = "same_kind", units: bool = False,
           contract: bool = False) -> DeviceArray | np.ndarray:
    """The matrix product of `a` and `b` on the device, as ``np.matmul`` computes it.

    ``np.matmul(a, b)`` and ``a @ b`` come here when either operand is a device array.

    Parameters
    ----------
    a, b : DeviceArray or array_like
        Operands of at least one dimension; NumPy arrays and lists are copied to the
        device. 1-d operands are vectors, more than two dimensions are stacks of
        matrices whose leading axes broadcast; views of any strides (``d.T``,
        ``d[::2, 1:]``) are read in place.
    out : DeviceArray or numpy.ndarray, optional
        Where to write the result: exactly the result's shape, or with leading axes the
        operands broadcast to; a dtype the result casts to under `casting`. May be one
        of the operands (``a @= b``).
    dtype : dtype, optional
        The loop's output dtype, as NumPy's ``dtype=`` (the inputs cast to the loop).
    casting : str
        NumPy's casting rule for the inputs to the loop and the result to `out`.
    units : bool
        A float16 loop on cooperative matrices (tiles of 16x16x16 float16 x float16 +
        float32: the device's matrix units where it has them, emulated elsewhere,
        docs/matrix.md): much faster on GPUs with tensor cores, and summed in the units'
        order and internal precision instead of NumPy's (float32 in k order, rounded once),
        as cuBLAS does. Two bfloat16 operands (NumPy's float32 loop) likewise on
        bfloat16 x bfloat16 + float32 tiles, the float32 result (or an `out` of another
        dtype, rounded once from it) as NumPy's; two int8 operands with
        ``dtype=np.int32`` on int8 x int8 + int32 tiles (16x16x32), NumPy's int32 result
        bit for bit (two uint8 ones with ``dtype=np.uint32`` likewise). Other loops
        ignore it.
    contract : bool
        Float32 and float64 loops with each product fused into its sum (one rounding
        instead of two, as cuBLAS and OpenBLAS compute; the k order unchanged): on GPUs
        that count a fused multiply-add as one instruction, up to twice the rate; results
        differ from the default's in the last bits (docs/linalg.md). Other loops ignore it.

    Returns
    -------
    DeviceArray (or `out`)
        Of NumPy's result dtype. bool, integers, float16, float32 and float64 loops are
        computed; integers wrap as in NumPy and are exact; float16 is summed in float32
        and rounded once (NumPy's float16 loop does the same); float32 and float64 are
        summed in their own type, in k order (docs/linalg.md gives the error bound).

    Raises
    ------
    ValueError
        For shapes NumPy refuses (a scalar operand, mismatched k, batch axes that do not
        broadcast, an `out` of another shape); the message names the shapes.
    TypeError
        For dtypes that do not cast under `casting`.
    VulkanUnsupportedError
        For complex and other dtypes no kernel computes.
    """
    if units:  # a signature seen before: straight to the tile kernel's launch
        done = direct.product(a, b, out, dtype, casting, contract, _loop_dtypes)
        if done is not None:
            return done
    values = [_operand(a, "a"), _operand(b, "b")]
    if out is not None and not isinstance(out, (DeviceArray, np.ndarray)):
        raise TypeError(f"matmul: out must be a device array or a NumPy array, not "
                        f"{type(out).__name__}")  # fmt: skip
    device = operands.device_of(values + [out])
    A, B = (v if isinstance(v, DeviceArray) else to_device(v, device) for v in values)
    loop = _loop_dtypes(A.dtype, B.dtype, dtype, casting)
    if out is not None and not np.can_cast(loop[2], out.dtype, casting):
        raise TypeError(f"Cannot cast ufunc 'matmul' output from {loop[2]!r} to "
                        f"{out.dtype!r} with casting rule {casting!r}")  # fmt: skip
    plan = plans.choose(loop[2], device, units=units, operands=(A.dtype, B.dtype),
                        contract=contract)
    a_vec, b_vec = A.ndim == 1, B.ndim == 1
    A2 = view(A, (1,) + A.shape, (0,) + A._dev_strides) if a_vec else A
    B2 = view(B, B.shape + (1,), B._dev_strides + (0,)) if b_vec else B
    (M, K), (K_b, N) = A2.shape[-2:], B2.shape[-2:]
    if K != K_b:
        raise ValueError(
            f"matmul: shapes {A.shape} and {B.shape} do not match: a has {K} columns, b has "
            f"{K_b} rows (a's last axis must equal b's {'only' if b_vec else 'second to last'})")
    batch = _broadcast_batch(A.shape, B.shape, A2.shape[:-2], B2.shape[:-2])
    core = ((M,) if not a_vec else ()) + ((N,) if not b_vec else ())
    shape = batch + core
    if out is not None:
        batch = _check_out(out, shape, batch, len(core))
        shape = out.shape
    host_out = out if isinstance(out, np.ndarray) else None
    if out is None or host_out is not None:
        result = DeviceArray(device, shape, loop[2] if out is None else out.dtype)
    else:
        result = out
    if math.prod(shape):
        if result is out:  # an operand sharing out's memory is read from a copy, as NumPy does
            A2, B2 = (x.copy() if operands.same_memory(result, x) else x for x in (A2, B2))
        C2 = _as_rows_cols(result, len(batch), a_vec, b_vec, M, N)
        _launch_all(broadcast_to(A2, batch + (M, K)), broadcast_to(B2, batch + (K, N)), C2,
                    loop, plan, device)
    if host_out is not None:
        host_out[...] = result.copy_to_host()
        return host_out
    return result


def _operand(x, name):
    value = x if isinstance(x, DeviceArray) else operands.as_operand(x)
    if len(value.shape if isinstance(value, DeviceArray) else np.shape(value)) == 0:
        raise ValueError(
            f"matmul: operand {name} is a scalar (shape ()); matmul needs arrays of at least "
            "one dimension (use * to multiply by a scalar)")
    return value


def _loop_dtypes(da, db, dtype, casting):
    """NumPy's loop dtypes (a's, b's, the result's) for operands of dtypes da and db."""
    key = (da, db, dtype, casting) if dtype is None or isinstance(dtype, (np.dtype, type)) \
        else None
    loop = _loops.get(key)
    if loop is None:
        loop = _resolve_loop(da, db, dtype, casting)
        if key is not None:
            _loops[key] = loop
    return loop


#: _loop_dtypes' answers (dtypes given as dtypes or types)
_loops: dict = {}


def _resolve_loop(da, db, dtype, casting):
    try:
        if dtype is None:
            loop = np.matmul.resolve_dtypes((da, db, None))
        else:
            loop = np.matmul.resolve_dtypes((da, db, None),
                                            signature=(None, None, np.dtype(dtype)))
    except TypeError:
        raise
    except Exception as e:  # NumPy's _UFuncNoLoopError and the like
        if da.kind == "c" or db.kind == "c":
            raise VulkanUnsupportedError(
                f"matmul of {da} and {db} is not available on device arrays (complex dtypes "
                "are not supported); copy to the host with np.asarray(d)") from None
        raise TypeError(f"matmul: no loop for {da} and {db}: {e}") from None
    for k, (given, want) in enumerate(zip((da, db), loop[:2])):
        if not np.can_cast(given, want, casting):
            raise TypeError(f"Cannot cast ufunc 'matmul' input {k} from {given!r} to {want!r} "
                            f"with casting rule {casting!r}")  # fmt: skip
    return tuple(np.dtype(d) for d in loop)


def _broadcast_batch(a_shape, b_shape, a_batch, b_batch):
    if a_batch == b_batch or not b_batch:
        return tuple(a_batch)
    if not a_batch:
        return tuple(b_batch)
    try:
        return tuple(np.broadcast_shapes(a_batch, b_batch))
    except ValueError:
        raise ValueError(
            f"matmul: the leading (stack) axes of shapes {a_shape} and {b_shape} do not "
            f"broadcast together: {a_batch} and {b_batch}") from None


def _check_out(out, shape, batch, ncore):
    """`out`'s batch axes (the operands' batch must broadcast to them), or ValueError."""
    out_batch = out.shape[: out.ndim - ncore]
    ok = out.ndim >= ncore and out.shape[out.ndim - ncore:] == shape[len(batch):]
    if ok and batch != out_batch:
        try:
            ok = tuple(np.broadcast_shapes(batch, out_batch)) == out_batch
        except ValueError:
            ok = False
    if not ok:
        raise ValueError(f"matmul: out has shape {out.shape}, but the product has shape {shape}")
    return tuple(out_batch)


def _as_rows_cols(array, nbatch, a_vec, b_vec, M, N):
    """The (batch..., M, N) view of a result whose M or N axis is absent (a 1-d operand)."""
    s = array._dev_strides
    core = list(s[nbatch:])
    rows = 0 if a_vec else core.pop(0)
    cols = 0 if b_vec else core.pop(0)
    return view(array, array.shape[:nbatch] + (M, N), s[:nbatch] + (rows, cols))


def _cast(dtype):
    """Source converting ``{}`` to `dtype` in a kernel (``T_<name>`` is the dtype's scalar
    type there: kernels.py puts every such name in the kernel's namespace)."""
    dtype = np.dtype(dtype)
    return "({} != 0)" if dtype.kind == "b" else f"T_{dtype.name}({{}})"


def _load(given, loop, acc):
    """Source converting an operand element of dtype `given` to the accumulation type:
    through the loop dtype where that rounds (float64 data in a float16 loop, dtype=)."""
    expr, now = "{}", np.dtype(given)
    if now != loop and loop != acc:
        expr, now = _cast(loop).format(expr), loop
    if now != acc:
        expr = _cast(acc).format(expr)
    return expr


def _store(acc, loop_out, out):
    """Source converting a sum to the loop's result dtype, then to `out`'s dtype."""
    expr, now = "{}", np.dtype(acc)
    if loop_out != now:
        expr, now = _cast(loop_out).format(expr), loop_out
    if out != now:
        expr = _cast(out).format(expr)
    return expr


def _launch_all(A, B, C, loop, plan, device):
    """Launch the product of (batch..., M, K) and (batch..., K, N) views into the
    (batch..., M, N) view C: one batch axis per launch, the others merged or looped."""
    nb = C.ndim - 2
    run = _RUNNERS[plan.family]
    if nb == 1:  # one batch axis: the views as they are
        run(A, B, C, loop, plan, device)
        return
    if nb == 0:  # a batch axis of one
        run(*(view(x, (1,) + x.shape, (0,) + x._dev_strides) for x in (A, B, C)), loop, plan,
            device)
        return
    merged, strides = operands.merge_axes(C.shape[:nb], [x._dev_strides[:nb] for x in (A, B, C)])
    for index in itertools.product(*(range(n) for n in merged[:-1])):
        views = []
        for x, st in zip((A, B, C), strides):
            offset = sum(i * s for i, s in zip(index, st[:-1]))
            views.append(view(x, merged[-1:] + x.shape[nb:], st[-1:] + x._dev_strides[nb:],
                              offset))
        run(*views, loop, plan, device)


def _simt(A, B, C, loop, plan, device):
    """C[b] = A[b] @ B[b] for 3-d views with the tiled kernel; k split in chunks where
    `_splits` says so, their partials summed by the finish kernel."""
    t = plan.tiling
    nb, M, K = A.shape
    N = B.shape[2]
    sa, sb = A._dev_strides, B._dev_strides
    variant = _variant(A.dtype, B.dtype, C.dtype, loop, plan,
                       M > 1 and K > 1 and abs(sa[1]) < abs(sa[2]),
                       K > 1 and N > 1 and abs(sb[1]) < abs(sb[2]), _narrow_option(device))
    if _is_thin(nb, M, N):
        _thin(A, B, C, variant, loop[2] == np.float16, device)
        return
    groups = (-(-N // t.bn), -(-M // t.bm), nb)
    splits = _splits(K, math.prod(groups), plan, device)
    if splits == 1:
        kernels.tiled(variant)[groups, (t.wx, t.wy), device](A, B, C)
        return
    tiled = kernels.tiled(dataclasses.replace(variant, out="{}"))
    _in_chunks(A, B, C, -(-K // splits), plan.acc.name, variant.any_of, variant.out,
               variant.narrow, lambda a, b, c: tiled[groups, (t.wx, t.wy), device](a, b, c),
               device)


@functools.lru_cache(maxsize=1024)
def _variant(da, db, dc, loop, plan, a_rows_fast, b_rows_fast, narrow):
    """The SIMT kernels' variant for operands of dtypes da, db into dc."""
    return kernels.Variant(
        acc=plan.acc.name, any_of=loop[2].kind == "b", a_load=_load(da, loop[0], plan.acc),
        b_load=_load(db, loop[1], plan.acc), out=_store(plan.acc, loop[2], dc),
        tiling=plan.tiling, a_rows_fast=a_rows_fast, b_rows_fast=b_rows_fast, narrow=narrow,
        contract=plan.contract)


def _is_thin(nb, M, N):
    """Whether a product of nb M x N results takes the thin kernel (THIN_OUTPUTS)."""
    return M == 1 or N == 1 or nb * M * N <= THIN_OUTPUTS


def _thin(A, B, C, variant, in_k_order, device):
    """C[b] = A[b] @ B[b] for few outputs (a row or a column of them, or THIN_OUTPUTS at
    most): with ``kernels.thin`` (an invocation per output and chunk of k) where
    neighbouring outputs lie next to each other in memory or the sums must stay in k
    order (`in_k_order`), else with ``kernels.dots`` (a workgroup per output and chunk,
    its invocations reading along k). The chunks are THIN_CHUNK long at least (longer
    where THIN_INVOCATIONS invocations in all would take less; on GPUs THIN_GPU_SPREAD
    times shorter and more), within a loop cap (lavapipe's) for every kernel, and added by
    the finish kernel: in order after ``thin``, by a workgroup's tree after ``dots``."""
    nb, M, K = A.shape
    N = B.shape[2]
    outputs = nb * M * N
    across = not _along_k(M, N, K, variant, in_k_order, device)
    lanes = 1 if across else kernels.DOTS_WIDTH  # invocations per output and chunk
    spread = 1 if in_k_order or device.info.kind == "cpu" else THIN_GPU_SPREAD
    invocations, least = THIN_INVOCATIONS * spread, THIN_CHUNK // spread
    chunk = max(least, -(-K // -(-invocations // (outputs * lanes))))
    limit = device.info.loop_iteration_limit
    if limit:
        chunk = max(min(chunk, limit // 2 * lanes), -(-K // (limit // 2)))
    chunk = min(chunk, max(K, 1))
    splits = -(-K // chunk) if K else 1
    P = C if splits == 1 and variant.out == "{}" else DeviceArray(  # C holds the sums as they are
        device, (splits * nb, M, N), variant.acc)
    if across:
        kernels.thin(variant).forall(splits * outputs, device=device)(A, B, P, chunk)
    else:
        kernels.dots(variant)[_tree_groups(splits * outputs), (lanes, 1), device](A, B, P, chunk)
    if P is not C and across:
        finish = kernels.finish(variant.acc, variant.any_of, variant.out, variant.narrow)
        finish.forall((N, M, nb), device=device)(P, C)
    elif P is not C:  # chunks by the thousand (a dot product): a workgroup adds each output's
        finish = kernels.finish_tree(variant.acc, variant.any_of, variant.out, variant.narrow)
        finish[_tree_groups(outputs), (lanes, 1), device](P, C)


def _tree_groups(count):
    """The grid of `count` workgroups of the tree kernels (kernels.DOTS_ROW a row)."""
    rows = -(-count // kernels.DOTS_ROW)
    return (kernels.DOTS_ROW if rows > 1 else count, rows)


def _along_k(M, N, K, variant, in_k_order, device):
    """Whether few outputs take ``kernels.dots`` (a workgroup per output, reading along k)
    rather than ``kernels.thin``: on GPUs (on a CPU device, lavapipe, the workgroup's
    barriers cost more than they save: twice the time), for a k of DOTS_MIN_K at least,
    where neighbouring outputs do not lie next to each other in memory (a matrix of rows
    times a vector, a dot product), and not for sums that must stay in k order."""
    if in_k_order or device.info.kind == "cpu" or K < DOTS_MIN_K:
        return False
    outputs_fast = (N >= 32 and not variant.b_rows_fast) or (
        N == 1 and M >= 32 and variant.a_rows_fast)
    return not outputs_fast


def _in_chunks(A, B, C, chunk, acc, any_of, out, narrow, product, device):
    """C[b] = A[b] @ B[b] with k cut into chunks of `chunk`: ``product(a, b, c)`` writes
    each chunk's sums (of dtype `acc`) into a scratch array, and the finish kernel adds
    them in chunk order, storing ``out`` of the sum (kernels.finish_source) into C."""
    nb, M, K = A.shape
    N = B.shape[2]
    sa, sb = A._dev_strides, B._dev_strides
    splits = -(-K // chunk)
    partial = DeviceArray(device, (splits * nb, M, N), acc)
    for s in range(splits):
        k0, k1 = s * chunk, min(K, (s + 1) * chunk)
        a = view(A, (nb, M, k1 - k0), sa, k0 * sa[2])
        b = view(B, (nb, k1 - k0, N), sb, k0 * sb[1])
        product(a, b, partial[s * nb:(s + 1) * nb])
    finish = kernels.finish(acc, any_of, out, narrow)
    finish.forall((N, M, nb), device=device)(partial, C)


def _blocked(A, B, C, loop, plan, device):
    """C[b] = A[b] @ B[b] with linalg/blocked.py's kernel where the product suits it: a
    result of the loop's dtype, enough blocks to occupy the device without splitting k,
    and a device with the kernel's invocations and shared memory; the SIMT kernel
    otherwise."""
    from . import blocked

    M, N = C.shape[1:]
    if C.dtype != plan.acc:
        _simt(A, B, C, loop, plan, device)
        return
    v = blocked.BLOCKINGS[blocked.DEFAULTS[dtype_name(C.dtype)]]
    t = plan.tiling
    groups = -(-M // t.bm) * -(-N // t.bn) * C.shape[0]
    info = device.info
    if (-(-M // v.bm) * -(-N // v.bn) < blocked.MIN_GROUPS or _is_thin(C.shape[0], M, N)
            or _splits(A.shape[2], groups, plan, device) > 1
            or v.threads > info.max_local_invocations
            or v.shared_bytes(C.dtype.itemsize) > info.max_shared_memory):
        _simt(A, B, C, loop, plan, device)
        return
    try:
        blocked.run(A, B, C, device, contract=plan.contract)
    except MemoryError:  # no room for the padded copies: the SIMT kernel needs none
        _simt(A, B, C, loop, plan, device)


def _tiles(A, B, C, loop, plan, device):
    """C[b] = A[b] @ B[b] on cooperative matrices (linalg/tiles.py)."""
    from . import tiles

    name = tiles.choose(*C.shape[1:], device)
    K = A.shape[2]
    chunk = tiles.k_per_launch(name, K, plan.operands, device)
    if chunk == K:
        tiles.run(A, B, C, device, name, plan.operands)
        return
    # A device that caps loops (lavapipe): the chunks' sums as the units keep them, each
    # stored once into C's dtype when added.
    sums = tiles.SUMS[plan.operands]
    out = "{}" if C.dtype == np.dtype(sums) else _cast(C.dtype)
    _in_chunks(A, B, C, chunk, sums, False, out, _narrow_option(device),
               lambda a, b, c: tiles.run(a, b, c, device, name, plan.operands), device)


#: The runner of each kernel family plans.choose names.
_RUNNERS = {"simt": _simt, "blocked": _blocked, "tiles": _tiles}


def _splits(K, groups, plan, device):
    """How many chunks the k range is cut into: enough that no invocation loops past the
    device's loop cap (lavapipe: at most half of it per launch), and, for fewer workgroups
    than the plan's ``min_groups``, more chunks (each at least MIN_STEPS_PER_CHUNK steps)
    to occupy the device."""
    steps = -(-K // plan.tiling.bk)
    splits = 1
    limit = device.info.loop_iteration_limit
    if limit:
        splits = -(-plan.tiling.loop_iterations(K) // (limit // 2))
    if groups < plan.min_groups:
        wanted = min(-(-plan.min_groups // groups), steps // MIN_STEPS_PER_CHUNK)
        splits = max(splits, wanted)
    return max(splits, 1)


#: np.matmul's keywords that device arrays take (with their NumPy defaults for the others).
_UFUNC_DEFAULTS = {"order": "K", "subok": True, "axes": None, "axis": None,
                   "signature": None, "where": True}  # fmt: skip


def array_ufunc(method, inputs, kwargs):
    """``np.matmul(...)`` with a device array among the operands or `out`
    (DeviceArray.__array_ufunc__, through runtime/compiler_hook.py)."""
    if method != "__call__":
        raise TypeError(f"np.matmul.{method} is not supported on device arrays")
    out = kwargs.get("out")
    if isinstance(out, tuple):
        if len(out) != 1:
            raise ValueError(f"np.matmul has one output, out= names {len(out)}")
        out = out[0]
    for x in tuple(inputs) + (out,):
        if not isinstance(x, (DeviceArray, np.ndarray, np.generic, bool, int, float, complex,
                              list, tuple, type(None))) and hasattr(x, "__array_ufunc__"):
            return NotImplemented  # another array library's object: let it decide
    bad = [k for k in kwargs if k not in ("out", "dtype", "casting") + tuple(_UFUNC_DEFAULTS)]
    bad += [k for k, v in _UFUNC_DEFAULTS.items() if k in kwargs and not (
        kwargs[k] is v or (type(kwargs[k]) is type(v) and kwargs[k] == v))]
    if bad:
        raise TypeError(f"np.matmul on device arrays does not support {', '.join(sorted(bad))}=")
    if len(inputs) != 2:
        raise TypeError(f"np.matmul takes 2 operands, not {len(inputs)}")
    return matmul(inputs[0], inputs[1], out, dtype=kwargs.get("dtype"),
                  casting=kwargs.get("casting", "same_kind"))
