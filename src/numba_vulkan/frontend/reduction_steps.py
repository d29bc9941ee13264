"""The steps reductions share (frontend/reductions.py, whole_reductions.py): Numba's mean,
its comparisons of a candidate with the best so far, and the ValueErrors of empty arrays."""

from numba.core import types

from .. import _core
from . import arith, float16, status
from .loops import for_each
from .types import compute_kind, is_float

Op = _core.Op
K = _core.Kind


def mean(lo, arr, rk, loc):
    """Numba: c = 0 in float64 (integer arrays) or the dtype; c += v; c / size (NaN if empty)."""
    b = lo.b
    ck = K.f64 if not is_float(arr.compute) else arr.compute
    acc = b.var(ck)
    b.store(acc, arith.const(b, ck, 0))

    def body(b, idx):
        v = arith.convert(b, arr.load(b, idx, None), ck)
        b.store(acc, b.binary(Op.add, b.load(acc), v))

    for_each(lo, arr, body)
    ik = compute_kind(types.intp, lo.mode, loc)
    size = arr.size(b, ik)
    # c / size as Numba types it: a float and an intp divide in float64.
    dk = K.f64
    q = b.binary(Op.div, arith.convert(b, b.load(acc), dk), arith.convert(b, size, dk))
    return float16.rounded(b, arith.convert(b, q, rk), arr.ty.dtype)


def isnan(b, v):
    return b.compare(Op.ne, v, v)


def beats(b, v, cur, is_max):
    """v > cur (is_max) or v < cur; bools compare as integers (False < True: KIR does not
    order bools)."""
    if b.kind(v) == K.bool:
        v, cur = arith.convert(b, v, K.i32), arith.convert(b, cur, K.i32)
    return b.compare(Op.gt if is_max else Op.lt, v, cur)


def take(b, v, cur, first, is_max, float_kind):
    """Whether v replaces the best so far: Numba takes the first element, then a better one;
    for floats the first NaN, which it returns at once (so a NaN best is kept)."""
    better = beats(b, v, cur, is_max)
    if float_kind:
        better = arith.logical_and(
            b, arith.logical_not(b, isnan(b, cur)), arith.logical_or(b, isnan(b, v), better)
        )
    return arith.logical_or(b, first, better)


def raise_if(lo, bad, message, loc):
    """ValueError(message), as numba.njit raises it, where the KIR bool `bad` holds (after a
    loop: only variables are live)."""
    from .exceptions import site

    status.check(lo, bad, site(lo, ValueError, (message,), loc))


def raise_if_empty(lo, started, name, loc):
    if name in ("min", "max"):
        message = f"zero-size array to reduction operation {name}imum which has no identity"
    else:
        message = f"attempt to get {name} of an empty sequence"
    raise_if(lo, arith.logical_not(lo.b, lo.b.load(started)), message, loc)
