"""Typing of cuda.fma(a, b, c) (and libdevice's fma / fmaf): a * b + c rounded once.

numba-cuda types it for float32 and float64 (and float16, as cuda.fp16.hfma), converting
the operands as its concrete template does: three float16 give a float16, float16 and
float32 a float32, any integer or float64 among them a float64. frontend/mathlib/fma.py
lowers it, correctly rounded on every device.
"""

from numba.core import types
from numba.core.typing.templates import AbstractTemplate, Registry, signature

registry = Registry()


def fma(a, b, c):
    """a * b + c rounded once (cuda.fma): kernels only."""
    raise NotImplementedError("fma can only be called inside a kernel")


class Fma(AbstractTemplate):
    key = fma

    def generic(self, args, kws):
        args = [types.unliteral(a) for a in args]
        if kws or len(args) != 3:
            return None
        if not all(isinstance(a, (types.Float, types.Integer, types.Boolean)) for a in args):
            return None
        if all(a == types.float16 for a in args):
            t = types.float16
        elif all(a in (types.float16, types.float32) for a in args):
            t = types.float32
        else:
            t = types.float64
        return signature(t, t, t, t)


registry.register_global(fma, types.Function(Fma))
