"""``nv.subgroup.*``: subgroup ids, reductions, scans, votes, ballots, broadcasts, shuffles,
and the subgroup barrier (a KIR ``barrier subgroup``: spirv/sync.cc).

Each call is one KIR ``subgroup`` instruction (spirv/subgroup.cc); the kernel
then needs the matching DeviceInfo class (subgroup_basic, _vote, _arithmetic,
_ballot, _shuffle, _shuffle_relative), which ``Device.check_support`` checks
before the first launch. Values are computed in their compute kind; 8- and
16-bit integers are refused (SPIR-V needs an extension for them in subgroup
operations). Float reductions add in the hardware's order, which depends on
the subgroup size (float16 values in float32, the result rounded once to float16);
integer ones are exact (wrapping) for every size.
"""

from .. import _core, stubs
from . import arith, float16
from .errors import unsupported
from .types import compute_kind

S = _core.SubgroupOp
K = _core.Kind

_IDS = {"size": S.size, "lane": S.lane, "id": S.id, "count": S.count}
_ARITH = {"sum": S.sum, "prod": S.prod, "min": S.min, "max": S.max}
_SCANS = {"": 0, "inclusive": 1, "exclusive": 2}
_TWO = {"broadcast": S.broadcast, "shuffle": S.shuffle, "shuffle_xor": S.shuffle_xor,
        "shuffle_up": S.shuffle_up, "shuffle_down": S.shuffle_down}
_NAMES = {stub: name for name, stub in stubs.subgroup._members.items()}


def stub_name(fn):
    try:
        return _NAMES.get(fn)
    except TypeError:
        return None


def lower_subgroup(lowerer, fn, expr, sig, target):
    b, loc = lowerer.b, expr.loc
    name = stub_name(fn)
    if name in _IDS:
        value = b.subgroup(_IDS[name], K.u32, [], 0)
        return arith.convert(b, value, compute_kind(sig.return_type, lowerer.mode, loc)), \
            sig.return_type
    if name == "elect":
        return b.subgroup(S.elect, K.bool, [], 0), sig.return_type
    if name == "barrier":
        b.barrier(_core.BarrierKind.subgroup)
        return None, sig.return_type
    v = lowerer.load_cast(expr.args[0], sig.args[0])
    k = b.kind(v)
    if k in (K.i8, K.u8, K.i16, K.u16):
        raise unsupported(f"subgroup.{name} of 8- and 16-bit integers (convert to int32)", loc)
    if name in ("any", "all", "ballot", "ballot_count"):
        p = arith.truth(b, v) if k != K.bool else v
        if name == "any":
            return b.subgroup(S.any, K.bool, [p], 0), sig.return_type
        if name == "all":
            return b.subgroup(S.all, K.bool, [p], 0), sig.return_type
        if name == "ballot_count":
            return b.subgroup(S.ballot_count, K.u32, [p], 0), sig.return_type
        return tuple(b.subgroup(S.ballot, K.u32, [p], w) for w in range(4)), sig.return_type
    if name == "broadcast_first":
        return b.subgroup(S.broadcast_first, k, [v], 0), sig.return_type
    if name in _TWO:
        lane = arith.convert(b, lowerer.load_cast(expr.args[1], sig.args[1]), K.u32)
        return b.subgroup(_TWO[name], k, [v, lane], 0), sig.return_type
    scan, _, base = name.rpartition("_")
    if base in _ARITH and scan in _SCANS:
        r = b.subgroup(_ARITH[base], k, [v], _SCANS[scan])
        return float16.rounded(b, r, sig.return_type), sig.return_type  # float16: rounded once
    raise unsupported(f"subgroup.{name}", loc)
