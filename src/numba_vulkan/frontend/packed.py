"""Packed kernel arguments: tuples, namedtuples and complex numbers, flattened into scalars.

numba.cuda kernels take tuples and namedtuples of scalars, and complex
scalars. The parameter block only has scalar and array slots, so such an
argument is flattened, depth first, into ordinary scalar arguments (one per
number; two, real then imaginary, per complex), each declared exactly as a
plain argument of that type (``KirModule.add_scalar_arg``, kir/abi.h) and named
``name[k]`` or ``name.real`` / ``name.imag``. The dispatcher's launcher
(packed_args.py) flattens each launch's value the same way, from the
argument's Numba type, checking its Python type on the way (a tuple of other
length or item types, or a complex of the other width, belongs to another
specialisation), and hands the scalars to the C++ launcher, which writes and
checks them exactly as plain scalar arguments.
"""

from numba.core import types

from . import arith
from .errors import unsupported
from .types import compute_kind, exact_kind, is_scalar_type


def packable(ty):
    """Whether argument type `ty` is a tuple/namedtuple/complex this module flattens."""
    ty = types.unliteral(ty)
    if isinstance(ty, types.Complex):
        return True
    if isinstance(ty, types.BaseTuple):
        return all(is_scalar_type(t) or packable(t) for t in ty.types)
    return False


def declare_packed(lowerer, name, ty, loc):
    """The value tree (compute kinds) of packed argument `name` of type `ty`, its scalars
    declared as arguments in flattening order."""
    ty = types.unliteral(ty)
    if isinstance(ty, types.Complex):
        from .complexnum import part_type

        part = part_type(ty)
        return tuple(_scalar(lowerer, f"{name}.{p}", part, loc) for p in ("real", "imag"))
    if isinstance(ty, types.BaseTuple):
        values = []
        for k, item in enumerate(ty.types):
            if is_scalar_type(item):
                values.append(_scalar(lowerer, f"{name}[{k}]", item, loc))
            else:
                values.append(declare_packed(lowerer, f"{name}[{k}]", item, loc))
        return tuple(values)
    raise unsupported(f"kernel arguments of type {ty} (argument '{name}')", loc)


def _scalar(lowerer, name, ty, loc):
    """The value, in its compute kind, of one scalar argument, declared as a plain one's."""
    ty = types.unliteral(ty)
    b, compute = lowerer.b, compute_kind(ty, lowerer.mode, loc)
    index = lowerer.module.add_scalar_arg(name, exact_kind(ty), compute)
    return arith.convert(b, b.param(index), compute)
