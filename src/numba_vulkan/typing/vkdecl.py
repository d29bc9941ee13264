"""Typing templates of the kernel intrinsics in ``numba_vulkan.stubs``.

Each template lives in ``registry``, which ``target.VulkanTypingContext``
installs next to Numba's own registries (builtins, math, NumPy scalars).
"""

from numba.core import types
from numba.core.errors import TypingError
from numba.core.typing.templates import AbstractTemplate, Registry, signature

from .. import stubs

registry = Registry()


class AxisIntrinsic(AbstractTemplate):
    """``f(axis)`` with a literal axis 0, 1 or 2, giving an intp (int64), as numba.cuda's grid."""

    prefer_literal = True

    def generic(self, args, kws):
        if kws or len(args) != 1:
            return None
        (axis,) = args
        if isinstance(axis, types.IntegerLiteral) and axis.literal_value in (0, 1, 2):
            return signature(types.intp, axis)
        if isinstance(axis, (types.Integer, types.IntegerLiteral)):
            raise TypingError(f"{self.key.__name__}() takes a constant axis 0, 1 or 2, not {axis}")
        return None


def _register_axis_intrinsic(stub):
    template = type(f"VulkanTemplate_{stub.__name__}", (AxisIntrinsic,), {"key": stub})
    registry.register_global(stub, types.Function(template))
    return template


AXIS_TEMPLATES = {stub: _register_axis_intrinsic(stub) for stub in stubs.AXIS_INTRINSICS}
