"""Packed kernel arguments: tuples, namedtuples and complex numbers, flattened into scalars.

numba.cuda kernels take tuples and namedtuples of scalars, and complex
scalars. The parameter block only has scalar and array slots, so such an
argument is flattened, depth first, into ordinary scalar parameters (one per
number; two, real then imaginary, per complex), each with the scalar argspec
a plain argument of that type would have. The argument's own argspec says how
to flatten the Python value at launch:

    ("tuple", namedtuple class or None, (argspec of each item, ...))
    ("complex", part dtype name, (real argspec, imaginary argspec))

The dispatcher's launcher (packed_args.py) flattens each launch's value along
this tree, checking its Python type on the way (a tuple of other length or
item types, or a complex of the other width, belongs to another
specialisation), and hands the scalars to the C++ launcher, which writes and
checks them exactly as plain scalar arguments.
"""

from numba.core import types

from . import arith
from .errors import unsupported
from .types import compute_kind, host_dtype, is_scalar_type, nbytes, param_kind, scalar_code


def packable(ty):
    """Whether argument type `ty` is a tuple/namedtuple/complex this module flattens."""
    ty = types.unliteral(ty)
    if isinstance(ty, types.Complex):
        return True
    if isinstance(ty, types.BaseTuple):
        return all(is_scalar_type(t) or packable(t) for t in ty.types)
    return False


def declare_packed(lowerer, name, ty, loc):
    """(value tree in compute kinds, argspec) of packed argument `name` of type `ty`."""
    ty = types.unliteral(ty)
    if isinstance(ty, types.Complex):
        from .complexnum import part_type

        part = part_type(ty)
        specs, values = zip(*(_scalar(lowerer, f"{name}.{p}", part, loc) for p in ("real", "imag")))
        return tuple(values), ("complex", str(host_dtype(part)), tuple(specs))
    if isinstance(ty, types.BaseTuple):
        cls = ty.instance_class if isinstance(ty, types.BaseNamedTuple) else None
        values, specs = [], []
        for k, item in enumerate(ty.types):
            if is_scalar_type(item):
                spec, value = _scalar(lowerer, f"{name}[{k}]", item, loc)
            else:
                value, spec = declare_packed(lowerer, f"{name}[{k}]", item, loc)
            values.append(value)
            specs.append(spec)
        return tuple(values), ("tuple", cls, tuple(specs))
    raise unsupported(f"kernel arguments of type {ty} (argument '{name}')", loc)


def _scalar(lowerer, name, ty, loc):
    """(argspec, value in its compute kind) of one scalar parameter, as a plain argument's."""
    ty = types.unliteral(ty)
    b, mode = lowerer.b, lowerer.mode
    pk = param_kind(ty, mode, loc)
    index = lowerer.module.add_param(name, pk)
    is_bool = isinstance(ty, types.Boolean)
    spec = ("scalar", str(host_dtype(ty)), "b" if is_bool else scalar_code(pk), nbytes(pk),
            lowerer.module.param_offset(index))  # fmt: skip
    return spec, arith.convert(b, b.param(index), compute_kind(ty, mode, loc))
