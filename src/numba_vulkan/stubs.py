"""Kernel intrinsics: the functions a kernel calls to learn where it runs.

These objects exist so that kernel source can name them (``nv.global_id(0)``);
the compiler recognises them in Numba's IR and the front end lowers them to
SPIR-V built-ins. Their typing lives in ``numba_vulkan.typing.vkdecl``. Called
from ordinary Python code they raise ``NotImplementedError``.
"""

__all__ = ["global_id", "group_id", "local_id", "local_size", "num_groups"]


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
    return globals()[name]


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
