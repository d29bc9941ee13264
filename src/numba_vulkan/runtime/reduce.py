"""DeviceArray.sum/min/max on the device, with kernels written in the kernel language.

A reduction runs in passes until one value is left. Integer sums and min/max:
in each pass invocation ``i`` of ``P = ceil(n / CHUNK)`` reduces the elements
``i, i + P, i + 2P, ...`` (at most CHUNK, 256; neighbouring invocations read
neighbouring elements) into ``partials[i]``; the next pass reduces the partials
the same way. Float sums launch ``P = min(ceil(n / FLOAT_CHUNK),
MAX_INVOCATIONS)`` invocations rounded up to workgroups of BLOCK (256): 32
elements each up to 2^23 elements, then ``ceil(n / 2^18)`` (1024 for 2^28) in
a grid-stride ``while`` loop, which the compiler unrolls (core/unroll: the
copies' loads run with no test between them); each workgroup adds its
invocations' sums in shared memory into one partial. 2^28 elements take two
launches (1024 partials, then one), any n up to 2^23 one; 2^31 elements give
8192 iterations, below lavapipe's 65,535-iteration cap. The first pass of a
large array is submitted at once, so the device runs it while Python prepares
the next. The kernels are generated from one template per (operation,
accumulator, rank), compiled by our own compiler and cached by the dispatcher
per dtype and device.

Accuracy and NumPy's semantics:

- Integer sums accumulate in int64 (signed and bool inputs) or uint64
  (unsigned), wrapping as NumPy does; addition modulo 2^64 is associative,
  so the result is NumPy's bit for bit. The result dtype is NumPy's.
- Float sums use Kahan's compensated summation within each invocation; a
  workgroup adds its invocations' sums pairwise, carrying every addition's
  rounding error (two-sum) and the Kahan corrections to one final rounding.
  All of it in the input's precision (float16 in float32, rounded once at the
  end, as NumPy's pairwise sum of float16 does). The error is about 2 ulp of
  the sum of magnitudes per pass, below the ``O(log n)`` bound of NumPy's
  pairwise sum. A plain sum runs alongside: where it is not finite (an infinity
  or NaN in the data, or overflow) it is the result, as in NumPy. (The H200
  figures of this form and of earlier ones: docs/status.md.)
- min/max propagate NaN as NumPy does (any NaN gives NaN); integers are exact.
  Bool min/max are computed as "all" / "any" through the sum.
- Empty arrays: sum gives 0; min/max raise ValueError as NumPy does.

The kernels never compute in narrowed types: on a device with int64 and float64
they use the default mode (Numba's types; the compiler narrows only what it
proves exact, such as index arithmetic), elsewhere ``narrow=False``, so that a
device without int64 or float64 refuses them with VulkanSupportError rather
than sum in 32 bits.
"""

import numpy as np

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
LOOP_SLACK = 16  # the float sum's loop iterations beyond its grid-stride loop (the tree's 8)
FLUSH_ELEMENTS = 1 << 22  # arrays from here submit their first pass at once

_TEMPLATE = """
def {name}(x, out, n, stride):
    i = global_id(0)
    if i < stride:
{body}
"""

# The float sum, one partial per workgroup of BLOCK invocations. Each invocation
# keeps a Kahan sum over i, i + stride, ... (stride: all invocations of the
# launch) in a grid-stride `while` loop, which the compiler's unroll pass
# (core/unroll) turns into copies of the body with no test between their loads.
# The workgroup then adds its BLOCK sums pairwise in shared memory, each
# addition's rounding error (Knuth's two-sum) carried with the Kahan
# corrections, and rounds once: s + e.
_SUM_FLOAT = """
def {name}(x, out, n, stride):
    sums = shared.array(BLOCK, ACC)
    errors = shared.array(BLOCK, ACC)
    t = local_id(0)
    s = ACC(0)
    c = ACC(0)
    p = ACC(0)
    j = global_id(0)
    while j < n:
        v = ACC({load})
        p += v
        y = v - c
        u = s + y
        c = (u - s) - y
        s = u
        j += stride
    if p - p != ACC(0):  # an infinity or NaN in the data, or overflow: NumPy's result
        s = p
        c = ACC(0)
    sums[t] = s
    errors[t] = -c
    barrier()
    for level in range(LOG2_BLOCK):
        half = BLOCK >> (level + 1)
        if t < half:
            a = sums[t]
            b = sums[t + half]
            u = a + b
            bv = u - a
            errors[t] += errors[t + half] + ((a - (u - bv)) + (b - bv))
            sums[t] = u
        barrier()
    if t == 0:
        u = sums[0]
        if u - u == ACC(0):
            u += errors[0]
        out[group_id(0)] = u
"""

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


def _kernel(op, acc, ndim, narrow, block=BLOCK):
    """The jit kernel for (op, accumulator dtype name, rank, narrow option; the float sum's
    workgroup size `block`), generated once."""
    float_sum = op == "sum" and acc.startswith("float")
    key = (op, acc, ndim, narrow, block if float_sum else None)
    kernel = _kernels.get(key)
    if kernel is not None:
        return kernel
    from ..stubs import barrier, global_id, group_id, local_id, shared
    from .compiler_hook import jit

    load = _LOADS[ndim].format(k="j")
    name = f"_nv_{op}_{acc}_{ndim}d"
    if float_sum:
        source = _SUM_FLOAT.format(name=name, load=load)
    else:
        if op == "sum":
            body = _SUM_INT.format(load=load)
        else:
            cmp = "<" if op == "min" else ">"
            body = _MINMAX.format(load=load, load0=_LOADS[ndim].format(k="i"), cmp=cmp)
        source = _TEMPLATE.format(name=name, body=body)
    namespace = {"global_id": global_id, "local_id": local_id, "group_id": group_id,
                 "shared": shared, "barrier": barrier, "ACC": _ACC_NAMES[acc], "CHUNK": CHUNK,
                 "CHUNK_1": CHUNK - 1, "BLOCK": block, "LOG2_BLOCK": block.bit_length() - 1}
    exec(compile(source, f"<numba_vulkan reduction {name}>", "exec"), namespace)
    kernel = jit(narrow=narrow)(namespace[name])
    # The most loop iterations an invocation runs (n < 2^31): no loop-cap warning on lavapipe.
    kernel.loop_bound = -(-(2**31) // MAX_INVOCATIONS) + LOOP_SLACK if float_sum else CHUNK
    _kernels[key] = kernel
    return kernel


def _block(device):
    """The float sum's workgroup size on `device`: BLOCK, or the largest power of two
    the device allows (Vulkan guarantees 128)."""
    info = device.info
    limit = min(BLOCK, info.max_local_invocations, info.max_local_size[0])
    return 1 << (limit.bit_length() - 1)


def _narrow_option(device):
    """None (Numba's types, with the compiler's proven-exact 32-bit index arithmetic,
    twice as fast on lavapipe) where that mode narrows nothing on `device`; else
    False, so that a device without int64/float64 refuses the kernels rather than
    accumulate in 32 bits (and NUMBA_VULKAN_NARROW=1 does not narrow them)."""
    from ..narrowing import Mode

    mode = Mode.for_device(device.info, None)
    return None if not (mode.ints or mode.floats) else False


def _accumulator(op, dtype):
    """Dtype name of the partials for reducing `dtype` with `op`."""
    if op == "sum":
        if dtype.kind == "f":
            return "float64" if dtype.itemsize == 8 else "float32"
        return "uint64" if dtype.kind == "u" else "int64"
    if dtype == np.float16:
        return "float32"
    return dtype.name


def _result_dtype(op, dtype):
    """The dtype NumPy gives the reduction of `dtype` (sum widens small integers)."""
    if op == "sum":
        return np.zeros(1, dtype).sum().dtype
    return dtype


def _as_kernel_operand(array):
    """`array` as a view of rank 1 to 3 that kernels accept (copying only if it must)."""
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
    result = _result_dtype(op, dtype)
    if array.size == 0:
        if op == "sum":
            return result.type(0)
        name = "minimum" if op == "min" else "maximum"
        raise ValueError(f"zero-size array to reduction operation {name} which has no identity")
    if dtype.kind == "b" and op != "sum":
        count = reduce(array, "sum")
        return np.bool_(count == array.size if op == "min" else count > 0)
    from .array import DeviceArray

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
            # One partial per workgroup: 2^28 elements take two passes (1024 partials).
            invocations = min(-(-n // FLOAT_CHUNK), MAX_INVOCATIONS)
            groups = -(-invocations // block)
            stride = groups * block
            count = groups
            launch = _kernel(op, acc, values.ndim, narrow, block)[groups, block, device]
        else:
            stride = count = -(-n // CHUNK)
            launch = _kernel(op, acc, values.ndim, narrow).forall(stride, device=device)
        partials = DeviceArray(device, (count,), np.dtype(acc))
        if n < 2**31:  # int32 counts: the compiler proves the index math fits 32 bits
            launch(values, partials, np.int32(n), np.int32(stride))
        else:
            launch(values, partials, n, stride)
        if count == 1:
            break
        if first and n >= FLUSH_ELEMENTS:
            # Launches wait in the open batch until a synchronisation; submit the
            # long first pass now, so that the device runs it while Python
            # prepares the short ones.
            device._core.flush()
        first = False
        values, n = partials, count
    value = partials.copy_to_host()[0]
    return result.type(value)
