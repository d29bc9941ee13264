"""``nv.subgroup.*``: subgroup ids, reductions, scans, votes, ballots, broadcasts, shuffles,
and the subgroup barrier (a KIR ``barrier subgroup``: spirv/sync.cc).

Each call is one KIR ``subgroup`` instruction (spirv/subgroup.cc), except ``partition``
where the device lacks it (a loop of them, below); the kernel then needs the matching
DeviceInfo class (subgroup_basic, _vote, _arithmetic, _ballot, _shuffle, _shuffle_relative,
_partitioned), which ``Device.check_support`` checks before the first launch. Values are computed in their compute kind; 8- and
16-bit integers are refused (SPIR-V needs an extension for them in subgroup
operations). Float reductions add in the hardware's order, which depends on
the subgroup size (float16 values in float32, the result rounded once to float16);
integer ones are exact (wrapping) for every size.
"""

from .. import _core, stubs
from . import arith, float16
from .arith import const
from .errors import unsupported
from .types import compute_kind

S = _core.SubgroupOp
K = _core.Kind
M = _core.MathFn
Op = _core.Op

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
    if name == "partition":
        return partition(lowerer, v), sig.return_type
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


_BITS_OF = {K.f32: K.i32, K.f64: K.i64}


def partition(lowerer, v):
    """``subgroup.partition(v)``: the four ballot words of the active lanes whose `v` has this
    lane's bits (floats compared as their words, bools as 0 and 1). One
    OpGroupNonUniformPartitionNV where the device has it (``lowerer.subgroup_partitioned``);
    elsewhere a loop, uniform over the active lanes, of one round per distinct value: the
    lowest lane left broadcasts its value, the lanes holding the same bits ballot and leave."""
    b = lowerer.b
    k = b.kind(v)
    if k == K.bool:
        v = arith.convert(b, v, K.u32)
    elif k in _BITS_OF:
        v = b.bitcast(_BITS_OF[k], v)
    if lowerer.subgroup_partitioned:
        return tuple(b.subgroup(S.partition, K.u32, [v], w) for w in range(4))
    u32 = K.u32
    c = lambda n: const(b, u32, n)  # noqa: E731 - in each block: no value crosses blocks
    # The value and the words travel between blocks in variables.
    mine_var = b.var(b.kind(v))
    b.store(mine_var, v)
    left, found = [b.var(u32) for _ in range(4)], [b.var(u32) for _ in range(4)]
    for w in range(4):
        b.store(left[w], b.subgroup(S.ballot, u32, [const(b, K.bool, True)], w))
        b.store(found[w], c(0))
    header, body, done = arith._loop_blocks(b, "partition")
    b.br(header)
    b.set_block(header)
    words = [b.load(p) for p in left]
    some = words[0]
    for word in words[1:]:
        some = b.binary(Op.or_, some, word)
    b.condbr(b.compare(Op.ne, some, c(0)), body, done)
    b.set_block(body)
    words = [b.load(p) for p in left]
    lane = c(0)  # the lowest lane left: 32 w + its bit in the first word w that has one
    for w in reversed(range(4)):
        first = b.binary(Op.add, c(32 * w), b.math(M.find_ilsb, [words[w]]))
        lane = b.select(b.compare(Op.ne, words[w], c(0)), first, lane)
    mine = b.load(mine_var)
    same = b.compare(Op.eq, mine, b.subgroup(S.broadcast, b.kind(mine), [mine, lane], 0))
    for w in range(4):
        lanes = b.subgroup(S.ballot, u32, [same], w)
        b.store(found[w], b.select(same, lanes, b.load(found[w])))
        b.store(left[w], b.binary(Op.and_, words[w], b.binary(Op.xor, lanes, c(0xFFFFFFFF))))
    b.br(header)
    b.set_block(done)
    return tuple(b.load(p) for p in found)
