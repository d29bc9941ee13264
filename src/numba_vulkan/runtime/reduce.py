"""DeviceArray.sum/min/max on the device, with kernels written in the kernel language.

A reduction runs in passes until one value is left. Integer sums and min/max:
in each pass invocation ``i`` of ``P = ceil(n / CHUNK)`` reduces the elements
``i, i + P, i + 2P, ...`` (at most CHUNK, 256; neighbouring invocations read
neighbouring elements) into ``partials[i]``; the next pass reduces the partials
the same way. Float sums launch ``P = min(ceil(n / FLOAT_CHUNK),
MAX_INVOCATIONS)`` invocations: 32 elements each up to 2^23 elements, then
``ceil(n / 2^18)`` (1024 for 2^28) in a grid-stride ``while`` loop, which the
compiler unrolls (core/unroll: the copies' loads run with no test between
them). On a GPU, workgroups of BLOCK (256) add their invocations' sums in
shared memory into one partial each: 2^28 elements take two launches (1024
partials, then one), up to 2^13 one. On a CPU device (lavapipe: barriers cost
more than they save there) each invocation writes a partial. 2^31 elements
give 8192 iterations, below lavapipe's 65,535-iteration cap. The first pass
of a large array is submitted at once, so the device runs it while Python
prepares the next; the last pass writes its value into pinned host memory,
which the host reads without a device copy. The kernels are generated from one template per
(operation, accumulator, rank, form), compiled by our own compiler and cached
by the dispatcher per dtype and device.

Accuracy and NumPy's semantics:

- Integer sums accumulate in int64 (signed and bool inputs) or uint64
  (unsigned), wrapping as NumPy does; addition modulo 2^64 is associative,
  so the result is NumPy's bit for bit. The result dtype is NumPy's.
- Float sums keep, besides each running sum, the sum of every addition's
  rounding error (two-sum, as in Ogita, Rump and Oishi's Sum2), through the
  workgroup's pairwise additions and from pass to pass (a pass writes its
  partial sums and their errors; the next adds both), and round once at the
  end. They compute in the input's precision (float16 in float32, as NumPy's
  pairwise sum of float16 does). The error is at most about one
  rounding of the result plus ``n eps^2 sum|x|``: correctly rounded on all of
  the tests' random data (NumPy's pairwise sum was off by up to 2,635 ulp of
  the result on 10^6 float32 normals; docs/runtime.md). The running sum alone
  is the plain sum: where it is not finite (an infinity or NaN in the data, or
  overflow) it is the result, as in NumPy.
- min/max propagate NaN as NumPy does (any NaN gives NaN); integers are exact.
  Bool min/max are computed as "all" / "any" through the sum.
- Empty arrays: sum gives 0; min/max raise ValueError as NumPy does.

The kernels never compute in narrowed types: on a device with int64 and float64
they use the default mode (Numba's types; the compiler narrows only what it
proves exact, such as index arithmetic), elsewhere ``narrow=False``, so that a
device without int64 or float64 refuses them with VulkanSupportError rather
than sum in 32 bits.
"""

import functools
import textwrap

import numpy as np

from .. import _core, bfloat16_host, config
from ..narrowing import Mode
from ..stubs import barrier, global_id, group_id, local_id, shared
from .compiler_hook import jit

CHUNK = 256  # elements one invocation reduces per pass (integer sums, min, max)
# Float sums launch at most this many invocations per pass, each reducing
# ceil(n / MAX_INVOCATIONS) elements when that is more than FLOAT_CHUNK: a GPU
# then keeps every invocation resident and each one streams a long loop.
MAX_INVOCATIONS = 1 << 18  # as many as an H200 keeps resident at 256 per workgroup
# Float sums reduce at least this many elements per invocation: few enough that
# the later passes (partials of partials) are short dependent chains on a GPU,
# where 256 per invocation made each one wait on 32 rounds of memory latency.
FLOAT_CHUNK = 32
BLOCK = 256  # invocations per workgroup of the float sum (one partial each)
FLAT_LOCAL_SIZE = 64  # the flat float sum's workgroup size (a CPU device)
LOOP_SLACK = 16  # the float sum's loop iterations beyond its grid-stride loop (the tree's 8)
FLUSH_ELEMENTS = 1 << 22  # arrays from here submit their first pass at once

_TEMPLATE = """
def {name}(x, out, n, stride):
    i = global_id(0)
    if i < stride:
{body}
"""

# The float sum. Each invocation adds j = its global id, + stride, ...
# (stride: all invocations of the launch) into s, and every addition's rounding
# error (Knuth's two-sum: s + v = t + error exactly) into e, in a grid-stride
# `while` loop that the compiler's unroll pass (core/unroll) turns into copies
# of the body with no test between their loads; s alone is the plain sum, and
# where it is not finite it is the result. On a GPU the workgroup then adds its
# BLOCK pairs (s, e) pairwise in shared memory, with two-sums again, into one
# partial per workgroup (_SUM_TREE). On a CPU device (lavapipe, where barriers
# made the sum 3x slower) each invocation writes its own partial (_SUM_FLAT).
# A pass that leaves more than one partial (split > 0) writes the sums to
# out[:split] and their errors to out[split:], and the next pass adds them all,
# so that no error is dropped between passes; the last pass rounds s + e once.
_SUM_FLOAT = """
def {name}(x, out, n, stride, split):
    s = ACC(0)
    e = ACC(0)
    j = global_id(0)
    end = n if j < stride else 0  # the flat form's last workgroup has idle invocations
    while j < end:
        v = ACC({load})
        t = s + v
        bv = t - s
        e += (s - (t - bv)) + (v - bv)
        s = t
        j += stride
    if s - s != ACC(0):  # an infinity or NaN in the data, or overflow: NumPy's result
        e = ACC(0)
{ending}"""

# A partial's sum s and error e: both (split > 0), or the rounded result (the last pass).
_WRITE = """\
if split > 0:
    out[g] = s
    out[split + g] = e
else:
    out[g] = s + e
"""

_SUM_FLAT = """\
    g = global_id(0)
    if g < stride:
{write}"""

_SUM_TREE = """\
    sums = shared.array(BLOCK, ACC)
    errors = shared.array(BLOCK, ACC)
    k = local_id(0)
    sums[k] = s
    errors[k] = e
    barrier()
    for level in range(LOG2_BLOCK):
        half = BLOCK >> (level + 1)
        if k < half:
            a = sums[k]
            b = sums[k + half]
            u = a + b
            bv = u - a
            errors[k] += errors[k + half] + ((a - (u - bv)) + (b - bv))
            sums[k] = u
        barrier()
    if k == 0:
        s = sums[0]
        e = errors[0] if s - s == ACC(0) else ACC(0)  # two-sums of infinities: NaN errors
        g = group_id(0)
{write}"""

_SUM_INT = """\
        s = ACC(0)
        j = i
        for _ in range(CHUNK):
            if j >= n:
                break
            s += ACC({load})
            j += stride
        out[i] = s
"""

_MINMAX = """\
        m = ACC({load0})
        j = i + stride
        for _ in range(CHUNK_1):
            if j >= n:
                break
            v = ACC({load})
            if v {cmp} m or v != v:
                m = v
            j += stride
        out[i] = m
"""

# How a rank-d kernel reads flat element k of x (C order over any strides).
_LOADS = {
    1: "x[{k}]",
    2: "x[{k} // x.shape[1], {k} % x.shape[1]]",
    3: "x[{k} // (x.shape[1] * x.shape[2]), ({k} // x.shape[2]) % x.shape[1], {k} % x.shape[2]]",
}

_ACC_NAMES = {
    "float32": np.float32,
    "float64": np.float64,
    "int64": np.int64,
    "uint64": np.uint64,
    "int8": np.int8,
    "int16": np.int16,
    "int32": np.int32,
    "uint8": np.uint8,
    "uint16": np.uint16,
    "uint32": np.uint32,
}

_kernels = {}


def _kernel(op, acc, ndim, narrow, block=None):
    """The jit kernel for (op, accumulator dtype name, rank, narrow option; for the float
    sum, `block`: the workgroup size of the shared-memory form, None for the flat form),
    generated once."""
    float_sum = op == "sum" and acc.startswith("float")
    key = (op, acc, ndim, narrow, block if float_sum else None)
    kernel = _kernels.get(key)
    if kernel is not None:
        return kernel
    load = _LOADS[ndim].format(k="j")
    name = f"_nv_{op}_{acc}_{ndim}d"
    if float_sum:
        ending = (_SUM_FLAT if block is None else _SUM_TREE).format(
            write=textwrap.indent(_WRITE, " " * 8))
        source = _SUM_FLOAT.format(name=name, load=load, ending=ending)
    else:
        if op == "sum":
            body = _SUM_INT.format(load=load)
        else:
            cmp = "<" if op == "min" else ">"
            body = _MINMAX.format(load=load, load0=_LOADS[ndim].format(k="i"), cmp=cmp)
        source = _TEMPLATE.format(name=name, body=body)
    namespace = {"global_id": global_id, "local_id": local_id, "group_id": group_id,
                 "shared": shared, "barrier": barrier, "ACC": _ACC_NAMES[acc], "CHUNK": CHUNK,
                 "CHUNK_1": CHUNK - 1, "BLOCK": block, "LOG2_BLOCK": (block or 1).bit_length() - 1}
    exec(compile(source, f"<numba_vulkan reduction {name}>", "exec"), namespace)
    kernel = jit(narrow=narrow)(namespace[name])
    _kernels[key] = kernel
    return kernel


@functools.lru_cache(maxsize=256)
def _launch(op, acc, ndim, narrow, block, groups, local, device):
    """The kernel's launch configuration: `groups` workgroups of `local`, or with `local`
    None, forall(groups). Kept, so that repeated reductions skip building and checking it."""
    kernel = _kernel(op, acc, ndim, narrow, block)
    if local is None:
        return kernel.forall(groups, device=device)
    return kernel[groups, local, device]


def _block(device):
    """The float sum's workgroup size on `device` for the shared-memory form: BLOCK, or the
    largest power of two the device allows (Vulkan guarantees 128); None on a CPU device
    (the flat form)."""
    info = device.info
    if info.kind == "cpu":
        return None
    limit = min(BLOCK, info.max_local_invocations, info.max_local_size[0])
    return 1 << (limit.bit_length() - 1)


def _narrow_option(device):
    """None (Numba's types, with the compiler's proven-exact 32-bit index arithmetic,
    twice as fast on lavapipe) where that mode narrows nothing on `device`; else
    False, so that a device without int64/float64 refuses the kernels rather than
    accumulate in 32 bits (and NUMBA_VULKAN_NARROW=1 does not narrow them)."""
    key = (device, config.NARROW)
    option = _narrow_options.get(key, ())
    if option == ():
        mode = Mode.for_device(device.info, None)
        option = _narrow_options[key] = None if not (mode.ints or mode.floats) else False
    return option


#: _narrow_option's answers by device and NUMBA_VULKAN_NARROW (all it depends on)
_narrow_options: dict = {}


def _accumulator(op, dtype):
    """Dtype name of the partials for reducing `dtype` with `op`."""
    if op == "sum":
        if dtype.kind == "f":
            return "float64" if dtype.itemsize == 8 else "float32"
        return "uint64" if dtype.kind == "u" else "int64"
    if dtype == np.float16 or bfloat16_host.is_dtype(dtype):  # min/max: exact in float32
        return "float32"
    return dtype.name


def _result_dtype(op, dtype):
    """The dtype NumPy gives the reduction of `dtype` (sum widens small integers)."""
    if op == "sum":
        return np.zeros(1, dtype).sum().dtype
    return dtype


def _as_kernel_operand(array):
    """`array` as a view of rank 1 to 3 that kernels accept (copying only if it must)."""
    if array.ndim == 1:
        return array
    if array.ndim == 0 or array.is_contiguous:
        return array.reshape(-1)
    if array.ndim <= 3:
        return array
    # Merge neighbouring axes that are contiguous with each other.
    shape, strides = list(array.shape), list(array.strides)
    merged_shape, merged_strides = [shape[0]], [strides[0]]
    for n, s in zip(shape[1:], strides[1:]):
        if merged_strides[-1] == s * n:
            merged_shape[-1] *= n
            merged_strides[-1] = s
        else:
            merged_shape.append(n)
            merged_strides.append(s)
    if len(merged_shape) <= 3:
        try:
            return array.reshape(tuple(merged_shape))
        except ValueError:
            pass
    return array.copy().reshape(-1)


def reduce(array, op):
    """`op` ("sum", "min" or "max") of all elements of a DeviceArray, as a NumPy scalar."""
    dtype = array.dtype
    if op == "sum" and bfloat16_host.is_dtype(dtype):
        raise NotImplementedError(
            "the sum (and mean) of a bfloat16 device array: NumPy with ml_dtypes rounds every "
            "step to bfloat16, in order, which the device's reduction does not; sum in float32 "
            "(d.astype(np.float32).sum()) or copy to the host (np.asarray(d).sum())")
    result = _result_dtype(op, dtype)
    if array.size == 0:
        if op == "sum":
            return result.type(0)
        name = "minimum" if op == "min" else "maximum"
        raise ValueError(f"zero-size array to reduction operation {name} which has no identity")
    if dtype.kind == "b" and op != "sum":
        count = reduce(array, "sum")
        return np.bool_(count == array.size if op == "min" else count > 0)
    device = array.device
    acc = _accumulator(op, dtype)
    narrow = _narrow_option(device)
    values = _as_kernel_operand(array)
    n = array.size
    float_sum = op == "sum" and acc.startswith("float")
    block = _block(device) if float_sum else None
    first = True
    while True:
        if float_sum:
            # 2^28 elements take two passes on a GPU (1024 partials, one per workgroup).
            invocations = min(-(-n // FLOAT_CHUNK), MAX_INVOCATIONS)
            local = block or FLAT_LOCAL_SIZE
            groups = -(-invocations // local)
            stride = groups * local if block else invocations
            parts = groups if block else invocations
            split = parts if parts > 1 else 0  # sums and their errors, or the result
            count = 2 * split or 1
            launch = _launch(op, acc, values.ndim, narrow, block, groups, local, device)
        else:
            stride = count = -(-n // CHUNK)
            launch = _launch(op, acc, values.ndim, narrow, None, stride, None, device)
        partials = _result_array(array, acc) if count == 1 else type(array)(device, (count,), acc)
        # int32 counts below 2^31: the compiler proves the index math fits 32 bits.
        as_int = np.int32 if n < 2**31 else np.int64
        extra = (as_int(split),) if float_sum else ()
        launch(values, partials, as_int(n), as_int(stride), *extra)
        if count == 1:
            break
        if first and n >= FLUSH_ELEMENTS:
            # Launches wait in the open batch until a synchronisation; submit the
            # long first pass now, so that the device runs it while Python
            # prepares the short ones.
            device._core.flush()
        first = False
        values, n = partials, count
    try:
        return result.type(partials.copy_to_host()[0])
    finally:  # also when the read raises what a kernel raised: the buffer is free again
        _free_results.setdefault(device, []).append(partials._buffer)


# The last pass writes its value into host-visible memory (a pinned buffer of 8 bytes), which
# the host reads without a device copy: on the H200 a staged read of one element took 58 us.
# Kept per device for the next reduction (list.pop and append are atomic: threads may share).
_free_results = {}


def _result_array(like, acc):
    """A 1-element array of `acc` on `like`'s device, of `like`'s class, in pinned memory."""
    device = like.device
    try:
        buffer = _free_results.get(device, []).pop()
    except IndexError:
        buffer = _core.vk_allocate_pinned(device._core, 8)
    return type(like)(device, (1,), acc, _stored=(buffer, 0, (np.dtype(acc).itemsize,)))
