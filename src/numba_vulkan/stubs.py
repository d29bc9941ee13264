"""Kernel intrinsics: the functions a kernel calls to learn where it runs.

These objects exist so that kernel source can name them (``nv.global_id(0)``);
the compiler recognises them in Numba's IR and the front end lowers them to
SPIR-V built-ins. Their typing lives in ``numba_vulkan.typing.vkdecl``. Called
from ordinary Python code they raise ``NotImplementedError``.
"""

__all__ = [
    "atomic",
    "barrier",
    "cg",
    "global_id",
    "group_id",
    "local",
    "local_id",
    "local_size",
    "num_groups",
    "shared",
    "subgroup",
    "syncthreads",
    "syncthreads_and",
    "syncthreads_count",
    "syncthreads_or",
    "threadfence",
    "threadfence_block",
]


class Stub:
    """A function that only has a meaning inside a kernel."""

    _description = ""

    def __init__(self, name, description):
        self.__name__ = name
        self.__qualname__ = name
        self.__doc__ = description
        self._description = description

    def __call__(self, *args, **kwargs):
        raise NotImplementedError(
            f"numba_vulkan.{self.__name__}() can only be called inside a kernel compiled "
            "with @numba_vulkan.jit"
        )

    def __repr__(self):
        return f"<numba_vulkan intrinsic {self.__name__}>"

    def __reduce__(self):
        # Pickled by name, so that kernels referring to a stub survive serialisation.
        return (_stub_by_name, (self.__name__,))


def _stub_by_name(name):
    obj = globals()
    for part in name.split("."):
        obj = obj[part] if isinstance(obj, dict) else getattr(obj, part)
    return obj


class Namespace:
    """A group of stubs (``nv.shared``, ``nv.atomic`` ...), typed as a module by Numba."""

    def __init__(self, name, doc, **members):
        self.__name__ = name
        self.__doc__ = doc
        for key, stub in members.items():
            stub.__name__ = f"{name}.{key}"
            stub.__qualname__ = stub.__name__
            setattr(self, key, stub)
        self._members = members

    def __repr__(self):
        return f"<numba_vulkan intrinsics {self.__name__}>"

    def __reduce__(self):
        return (_stub_by_name, (self.__name__,))


_AXIS = """

Parameters
----------
axis : int
    A literal 0, 1 or 2 (x, y or z).

Returns
-------
int
"""

global_id = Stub(
    "global_id",
    "Index of the calling invocation in the whole grid along `axis` (cuda.grid)." + _AXIS,
)
local_id = Stub(
    "local_id", "Index of the calling invocation inside its workgroup (threadIdx)." + _AXIS
)
group_id = Stub("group_id", "Index of the calling invocation's workgroup (blockIdx)." + _AXIS)
local_size = Stub("local_size", "Extent of a workgroup in invocations (blockDim)." + _AXIS)
num_groups = Stub("num_groups", "Extent of the grid in workgroups (gridDim)." + _AXIS)

#: The intrinsics that take one literal axis and give an index.
AXIS_INTRINSICS = (global_id, local_id, group_id, local_size, num_groups)

# ---------------------------------------------------------------- barriers (issue 8)

barrier = Stub(
    "barrier",
    "Wait until every invocation of the workgroup reaches this barrier; shared and global "
    "memory written before it are then visible to the workgroup (cuda.syncthreads). Every "
    "invocation of the workgroup must reach the same barrier: not inside a branch that "
    "depends on local_id/global_id.",
)
syncthreads = barrier
threadfence_block = Stub(
    "threadfence_block",
    "Memory fence at workgroup scope: writes before it are seen before writes after it "
    "by the workgroup (cuda.threadfence_block).",
)
threadfence = Stub(
    "threadfence",
    "Memory fence at device scope (cuda.threadfence).",
)

# ---------------------------------------------------------------- arrays

shared = Namespace(
    "shared",
    "Workgroup-shared memory.",
    array=Stub(
        "array",
        "shared.array(shape, dtype): an array shared by the workgroup. `shape` is a constant "
        "int or tuple of 1-3 ints; 0 gives the dynamic shared array, sized by the launch "
        "(kernel[groups, local_size, stream, shared_bytes]). Too large: VulkanSupportError.",
    ),
)
local = Namespace(
    "local",
    "Per-invocation memory.",
    array=Stub(
        "array",
        "local.array(shape, dtype): an array private to the invocation, of constant shape "
        "(np.empty/zeros/ones/full with a constant shape do the same).",
    ),
)

# ---------------------------------------------------------------- atomics

_ATOMIC = """

Parameters
----------
ary : array
    A global (argument) or shared array of int32, uint32, int64, uint64, float32 or float64.
idx : int or tuple of int
    The element (one index per dimension).
val : scalar
    Converted to the array's dtype.

Returns
-------
The element's value before the operation.
"""

atomic = Namespace(
    "atomic",
    "Atomic read-modify-write operations on one array element; each returns the old value.",
    add=Stub("add", "ary[idx] += val, atomically." + _ATOMIC),
    sub=Stub("sub", "ary[idx] -= val, atomically." + _ATOMIC),
    min=Stub("min", "ary[idx] = min(ary[idx], val), atomically (Python's min: NaN values "
             "in val are ignored, a NaN in ary[idx] stays)." + _ATOMIC),
    max=Stub("max", "ary[idx] = max(ary[idx], val), atomically (Python's max)." + _ATOMIC),
    and_=Stub("and_", "ary[idx] &= val, atomically (integers)." + _ATOMIC),
    or_=Stub("or_", "ary[idx] |= val, atomically (integers)." + _ATOMIC),
    xor=Stub("xor", "ary[idx] ^= val, atomically (integers)." + _ATOMIC),
    exch=Stub("exch", "ary[idx] = val, atomically." + _ATOMIC),
    inc=Stub("inc", "ary[idx] = 0 if ary[idx] >= val else ary[idx] + 1, atomically "
             "(CUDA's atomicInc; integers)." + _ATOMIC),
    dec=Stub("dec", "ary[idx] = val if ary[idx] == 0 or ary[idx] > val else ary[idx] - 1, "
             "atomically (CUDA's atomicDec; integers)." + _ATOMIC),
    cas=Stub("cas", "cas(ary, idx, expected, val): ary[idx] = val if ary[idx] == expected, "
             "atomically; returns the old value (integers)."),
    nanmin=Stub("nanmin", "ary[idx] = min(ary[idx], val), atomically, NaN as a missing "
                "value (numba.cuda's: a NaN val leaves ary[idx], a NaN ary[idx] becomes "
                "val)." + _ATOMIC),
    nanmax=Stub("nanmax", "ary[idx] = max(ary[idx], val), atomically, NaN as a missing "
                "value (as nanmin)." + _ATOMIC),
    compare_and_swap=Stub("compare_and_swap", "compare_and_swap(ary, expected, val): "
                          "cas(ary, 0, expected, val) on a 1-d array (numba.cuda's name); "
                          "returns the old value (integers)."),
)

# ---------------------------------------------------------------- cooperative groups

cg = Namespace(
    "cg",
    "Cooperative groups: only to say that grid-wide synchronisation does not exist in Vulkan.",
    this_grid=Stub(
        "this_grid",
        "The grid group (cuda.cg.this_grid). Grid-wide synchronisation does not exist in "
        "Vulkan: a kernel that calls it is refused; split it into launches on one stream.",
    ),
)

syncthreads_count = Stub(
    "syncthreads_count",
    "syncthreads_count(p): a barrier that returns how many invocations of the workgroup "
    "passed a true p (cuda.syncthreads_count).",
)
syncthreads_and = Stub(
    "syncthreads_and", "syncthreads_and(p): a barrier; whether p is true in every invocation."
)
syncthreads_or = Stub(
    "syncthreads_or", "syncthreads_or(p): a barrier; whether p is true in some invocation."
)
BARRIER_REDUCTIONS = (syncthreads_count, syncthreads_and, syncthreads_or)

#: Stubs that take no argument and give nothing.
BARRIERS = (barrier, threadfence_block, threadfence)

# ---------------------------------------------------------------- subgroups

_SUBGROUP_DOCS = {
    "size": "Invocations per subgroup (lavapipe 8, NVIDIA 32, AMD 32 or 64).",
    "lane": "Index of the calling invocation in its subgroup.",
    "id": "Index of the calling invocation's subgroup in the workgroup.",
    "count": "Subgroups per workgroup.",
    "sum": "Sum of v over the active invocations of the subgroup.",
    "prod": "Product of v over the active invocations.",
    "min": "Minimum of v over the active invocations.",
    "max": "Maximum of v over the active invocations.",
    "any": "Whether p is true in some active invocation.",
    "all": "Whether p is true in every active invocation.",
    "elect": "True in exactly one active invocation (the lowest lane).",
    "ballot": "The lanes where p is true, as a tuple of 4 uint32 bit masks.",
    "ballot_count": "How many active invocations have p true.",
    "partition": "The active lanes whose v has the same bits as this lane's, as a tuple of 4 "
                 "uint32 bit masks (cuda.match_any_sync): one instruction where the device "
                 "has subgroup_partitioned, a round of broadcast and ballot per distinct "
                 "value elsewhere.",
    "broadcast": "broadcast(v, lane): v of `lane` (the same lane in every invocation).",
    "broadcast_first": "v of the lowest active lane.",
    "shuffle": "shuffle(v, lane): v of `lane` (cuda.shfl_sync).",
    "shuffle_xor": "shuffle_xor(v, mask): v of lane ^ mask (cuda.shfl_xor_sync).",
    "shuffle_up": "shuffle_up(v, delta): v of lane - delta (cuda.shfl_up_sync).",
    "shuffle_down": "shuffle_down(v, delta): v of lane + delta (cuda.shfl_down_sync).",
    "barrier": "Wait until every active invocation of the subgroup reaches this barrier; "
               "shared and global memory written before it are then visible to them "
               "(cuda.syncwarp). Allowed inside branches: the active invocations wait.",
}
for _op in ("sum", "prod", "min", "max"):
    _SUBGROUP_DOCS[f"inclusive_{_op}"] = (
        f"Inclusive scan ({_op}) over the active invocations in lane order.")
    _SUBGROUP_DOCS[f"exclusive_{_op}"] = (
        f"Exclusive scan ({_op}): lane 0 gets the operation's identity.")

subgroup = Namespace(
    "subgroup",
    "Subgroup (warp/wave) operations; the device must report the matching subgroup_* class.",
    **{name: Stub(name, doc) for name, doc in _SUBGROUP_DOCS.items()},
)

# ---------------------------------------------------------------- cooperative matrices

matrix = Namespace(
    "matrix",
    "Cooperative matrices: tiles of a matrix held by a subgroup together, multiplied on the "
    "device's matrix units (tensor cores) where it has them and emulated exactly where it "
    "has not (docs/matrix.md). Every invocation of the subgroup must make the same calls "
    "with the same arguments.",
    fragment=Stub(
        "fragment",
        "fragment(use, rows, cols, dtype): a new tile. `use` is 'a' (rows = M, cols = K), "
        "'b' (K x N) or 'acc' (M x N, the accumulator); rows, cols and dtype are "
        "compile-time constants the device must accept (nv.matrix.shapes()). Its elements "
        "are undefined until fill or load.",
    ),
    fill=Stub("fill", "fill(frag, value): every element of the tile set to value."),
    load=Stub(
        "load",
        "load(frag, array, row, col): the tile read from the 2-d array (an argument or a "
        "shared array) with its top-left element at array[row, col]; one of the array's "
        "strides must be 1 (a row-major or column-major matrix). The tile must lie inside "
        "the array (nothing is checked, as for array indexing).",
    ),
    store=Stub(
        "store",
        "store(array, row, col, frag): the tile written into the 2-d array with its "
        "top-left element at array[row, col] (strides as for load).",
    ),
    mma=Stub("mma", "mma(acc, a, b): acc = a @ b + acc, in place (a: M x K, b: K x N, "
             "acc: M x N)."),
    convert=Stub("convert", "convert(dst, src): dst's elements = src's, converted to dst's "
                 "dtype (tiles of one use and shape)."),
)
