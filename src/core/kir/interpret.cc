#include "kir/interpret.h"

#include "kir/abi.h"

#include <cmath>
#include <cstring>
#include <string>
#include <unordered_map>

namespace nvk::kir {
namespace {

// ---------------------------------------------------------------- scalar helpers

uint64_t Mask(ScalarKind k, uint64_t bits) {
    int w = BitWidth(k);
    if (k == ScalarKind::kBool) return bits & 1;
    return w >= 64 ? bits : bits & ((uint64_t{1} << w) - 1);
}

int64_t AsSigned(ScalarKind k, uint64_t bits) {
    int w = BitWidth(k);
    if (w >= 64) return static_cast<int64_t>(bits);
    uint64_t m = bits & ((uint64_t{1} << w) - 1);
    if (m >> (w - 1)) m |= ~((uint64_t{1} << w) - 1);
    return static_cast<int64_t>(m);
}

double AsFloat(ScalarKind k, uint64_t bits) {
    if (k == ScalarKind::kF64) {
        double d;
        std::memcpy(&d, &bits, 8);
        return d;
    }
    uint32_t b = static_cast<uint32_t>(bits);
    float f;
    std::memcpy(&f, &b, 4);
    return f;
}

uint64_t FromFloat(ScalarKind k, double v) {
    if (k == ScalarKind::kF64) {
        uint64_t b;
        std::memcpy(&b, &v, 8);
        return b;
    }
    float f = static_cast<float>(v);
    uint32_t b;
    std::memcpy(&b, &f, 4);
    return b;
}

// Memory as the device has it (kir/abi.h: bools take 4 bytes).
int ByteSize(ScalarKind k) { return static_cast<int>(MemoryBytes(k)); }

// A value of kind k as a double / int64 / uint64 for conversions.
struct Num {
    enum { kInt, kUint, kFloat } cls;
    int64_t i = 0;
    uint64_t u = 0;
    double f = 0;
};

Num Read(ScalarKind k, uint64_t bits) {
    Num n{};
    if (IsFloat(k)) {
        n.cls = Num::kFloat;
        n.f = AsFloat(k, bits);
    } else if (IsSigned(k)) {
        n.cls = Num::kInt;
        n.i = AsSigned(k, bits);
    } else {
        n.cls = Num::kUint;
        n.u = Mask(k, bits);
    }
    return n;
}

uint64_t Write(ScalarKind k, const Num& n) {
    if (k == ScalarKind::kBool) {
        switch (n.cls) {
            case Num::kFloat: return n.f != 0;
            case Num::kInt: return n.i != 0;
            case Num::kUint: return n.u != 0;
        }
    }
    if (IsFloat(k)) {
        double v = n.cls == Num::kFloat ? n.f : n.cls == Num::kInt ? double(n.i) : double(n.u);
        return FromFloat(k, v);
    }
    uint64_t bits = 0;
    switch (n.cls) {
        case Num::kInt: bits = static_cast<uint64_t>(n.i); break;
        case Num::kUint: bits = n.u; break;
        case Num::kFloat: {
            double t = std::trunc(n.f);
            if (std::isnan(t)) bits = 0;
            else if (IsSigned(k)) bits = static_cast<uint64_t>(
                t >= 0x1p63 ? INT64_MAX : t < -0x1p63 ? INT64_MIN : static_cast<int64_t>(t));
            else bits = t <= 0 ? 0 : t >= 0x1p64 ? UINT64_MAX : static_cast<uint64_t>(t);
            break;
        }
    }
    return Mask(k, bits);
}

// ---------------------------------------------------------------- the machine

class Machine {
  public:
    Machine(const Module& m, const Inputs& in) : m_(m), f_(m.function), in_(in) {
        trace_.memory = in.memory;
        regs_.assign(f_.values.size(), 0);
    }

    util::Result<Trace> Run(size_t max_steps) {
        if (f_.blocks.empty()) return util::InvalidArgument("interpret: no blocks");
        std::unordered_map<BlockId, const Block*> blocks;
        for (const Block& b : f_.blocks) blocks[b.id] = &b;
        std::unordered_map<BlockId, size_t> position;  // in the structured form's order
        for (size_t i = 0; i < f_.blocks.size(); ++i) position[f_.blocks[i].id] = i;
        size_t back_edges = 0;
        const Block* block = &f_.blocks.front();
        while (true) {
            if (trace_.path.size() < 10000) trace_.path.push_back(block->id);
            BlockId next = kNone;
            for (const Inst& inst : block->insts) {
                if (trace_.steps >= max_steps) return std::move(trace_);
                ++trace_.steps;
                if (inst.op == Op::kBr) {
                    next = inst.targets[0];
                } else if (inst.op == Op::kCondBr) {
                    next = inst.targets[regs_.at(inst.operands.at(0)) & 1 ? 0 : 1];
                } else if (inst.op == Op::kRet) {
                    trace_.finished = true;
                    return std::move(trace_);
                } else if (inst.op == Op::kUnreachable) {
                    // After a cut loop, code the structurizer made for exits the loop never
                    // took: the invocation ends there, unfinished (a driver's is undefined).
                    if (back_edges >= in_.loop_cap && in_.loop_cap != 0) return std::move(trace_);
                    return util::InvalidArgument("interpret: reached unreachable in block " +
                                                 std::to_string(block->id));
                } else {
                    NVK_RETURN_IF_ERROR(Exec(inst));
                    continue;
                }
                break;
            }
            if (next == kNone)
                return util::InvalidArgument("interpret: block " + std::to_string(block->id) +
                                             " has no terminator");
            auto it = blocks.find(next);
            // A driver's loop cap (Inputs::loop_cap): the back edge past the cap goes to the
            // loop's merge block instead.
            if (in_.loop_cap != 0 && it != blocks.end() &&
                it->second->merge.kind == Merge::Kind::kLoop &&
                position[next] <= position[block->id] && ++back_edges >= in_.loop_cap) {
                it = blocks.find(it->second->merge.merge);
            }
            if (it == blocks.end())
                return util::InvalidArgument("interpret: branch to missing block " +
                                             std::to_string(next));
            block = it->second;
        }
    }

  private:
    ScalarKind KindOf(ValueId v) const { return m_.type(f_.values.at(v).type).scalar; }
    uint64_t Get(ValueId v) const { return regs_.at(v); }

    util::Result<uint8_t*> Address(uint64_t addr, int size) {
        for (MemoryRegion& r : trace_.memory) {
            if (addr >= r.base && addr + size <= r.base + r.bytes.size())
                return r.bytes.data() + (addr - r.base);
        }
        return util::InvalidArgument("interpret: access outside memory at " +
                                     std::to_string(addr));
    }

    util::Status Exec(const Inst& inst) {
        static const Type kNoType;
        const Type& rt = inst.type == kNone ? kNoType : m_.type(inst.type);
        ScalarKind k = rt.scalar;
        uint64_t r = 0;
        auto opk = [&](int i) { return KindOf(inst.operands.at(i)); };
        auto op = [&](int i) { return Get(inst.operands.at(i)); };
        switch (inst.op) {
            case Op::kConst: r = Mask(k, inst.imm); break;
            case Op::kParam:
                if (inst.imm >= in_.params.size())
                    return util::InvalidArgument("interpret: missing param " +
                                                 std::to_string(inst.imm));
                r = Mask(k, in_.params[inst.imm]);
                break;
            case Op::kBuiltin: {
                auto it = in_.builtins.find({static_cast<Builtin>(inst.imm), inst.aux});
                r = it == in_.builtins.end() ? 0 : it->second;
                break;
            }
            // Variables start undefined: a recognisable garbage value makes a read
            // before the first store change results instead of passing by luck.
            case Op::kVar: r = inst.result; vars_[inst.result] = 0x5eadbeef5eadbeefull; break;
            case Op::kLoad: {
                const Type& pt = m_.type(f_.values.at(inst.operands[0]).type);
                if (pt.space == AddressSpace::kFunction) {
                    r = vars_[op(0)];
                } else {
                    int size = ByteSize(k);
                    NVK_ASSIGN_OR_RETURN(uint8_t* p, Address(op(0), size));
                    std::memcpy(&r, p, size);  // little-endian host
                    r = Mask(k, r);
                }
                break;
            }
            case Op::kStore: {
                const Type& pt = m_.type(f_.values.at(inst.operands[0]).type);
                ScalarKind vk = opk(1);
                if (pt.space == AddressSpace::kFunction) {
                    vars_[op(0)] = op(1);
                } else {
                    uint64_t v = op(1);
                    int size = ByteSize(vk);
                    NVK_ASSIGN_OR_RETURN(uint8_t* p, Address(op(0), size));
                    std::memcpy(p, &v, size);
                }
                return util::Status::Ok();
            }
            case Op::kElemPtr: {
                int size = ByteSize(m_.type(rt.pointee).scalar);
                int64_t idx = IsSigned(opk(1)) ? AsSigned(opk(1), op(1))
                                               : static_cast<int64_t>(op(1));
                r = op(0) + static_cast<uint64_t>(idx) * size;
                break;
            }
            case Op::kAdd: case Op::kSub: case Op::kMul: case Op::kDiv: case Op::kRem:
            case Op::kAnd: case Op::kOr: case Op::kXor: case Op::kShl: case Op::kShr:
                NVK_RETURN_IF_ERROR(Arith(inst.op, k, op(0), op(1), &r));
                break;
            case Op::kNeg:
                r = IsFloat(k) ? FromFloat(k, -AsFloat(k, op(0))) : Mask(k, 0 - op(0));
                break;
            case Op::kNot: r = Mask(k, ~op(0)); break;
            case Op::kEq: case Op::kNe: case Op::kLt: case Op::kLe: case Op::kGt: case Op::kGe:
                r = Compare(inst.op, opk(0), op(0), op(1));
                break;
            case Op::kConvert: r = Write(k, Read(opk(0), op(0))); break;
            case Op::kBitcast: r = Mask(k, op(0)); break;
            case Op::kSelect: r = (op(0) & 1) ? op(1) : op(2); break;
            case Op::kMath: NVK_RETURN_IF_ERROR(MathOp(inst, k, &r)); break;
            case Op::kAtomic: NVK_RETURN_IF_ERROR(AtomicOp(inst, k, &r)); break;
            case Op::kSubgroup: NVK_RETURN_IF_ERROR(SubgroupOp(inst, &r)); break;
            default: return util::InvalidArgument(std::string("interpret: op ") +
                                                  OpName(inst.op));
        }
        if (inst.result != kNone) regs_.at(inst.result) = r;
        return util::Status::Ok();
    }

    // Atomics on global memory, for one invocation: a read, then the operation's write.
    util::Status AtomicOp(const Inst& inst, ScalarKind k, uint64_t* r) {
        const Type& pt = m_.type(f_.values.at(inst.operands[0]).type);
        if (pt.space != AddressSpace::kGlobal || IsFloat(k))
            return util::InvalidArgument("interpret: atomics on global integers only");
        const int size = ByteSize(k);
        NVK_ASSIGN_OR_RETURN(uint8_t* p, Address(Get(inst.operands[0]), size));
        uint64_t old = 0;
        std::memcpy(&old, p, size);
        old = Mask(k, old);
        const uint64_t v = Get(inst.operands.back());
        uint64_t now = old;
        switch (static_cast<kir::AtomicOp>(inst.imm)) {
            case kir::AtomicOp::kAdd: now = Mask(k, old + v); break;
            case kir::AtomicOp::kOr: now = old | v; break;
            case kir::AtomicOp::kExch: now = v; break;
            case kir::AtomicOp::kCas: now = old == Get(inst.operands[1]) ? v : old; break;
            default: return util::InvalidArgument("interpret: atomic op not modelled");
        }
        std::memcpy(p, &now, size);
        *r = old;
        return util::Status::Ok();
    }

    // Subgroup operations, for a subgroup of the one invocation run.
    util::Status SubgroupOp(const Inst& inst, uint64_t* r) {
        switch (static_cast<kir::SubgroupOp>(inst.imm)) {
            case kir::SubgroupOp::kSize: *r = 1; break;
            case kir::SubgroupOp::kLane: case kir::SubgroupOp::kId: *r = 0; break;
            case kir::SubgroupOp::kElect: *r = 1; break;
            case kir::SubgroupOp::kBallotCount: *r = Get(inst.operands[0]) & 1; break;
            case kir::SubgroupOp::kPartition: *r = inst.aux == 0 ? 1 : 0; break;  // itself
            case kir::SubgroupOp::kSum: case kir::SubgroupOp::kBroadcastFirst:
                *r = Get(inst.operands[0]);
                break;
            default: return util::InvalidArgument("interpret: subgroup op not modelled");
        }
        return util::Status::Ok();
    }

    static util::Status Arith(Op op, ScalarKind k, uint64_t a, uint64_t b, uint64_t* r) {
        if (IsFloat(k)) {
            double x = AsFloat(k, a), y = AsFloat(k, b), z = 0;
            switch (op) {
                case Op::kAdd: z = x + y; break;
                case Op::kSub: z = x - y; break;
                case Op::kMul: z = x * y; break;
                case Op::kDiv: z = x / y; break;
                case Op::kRem: z = std::fmod(x, y); break;
                default: return util::InvalidArgument("interpret: bad float op");
            }
            if (k == ScalarKind::kF32) z = static_cast<float>(z);
            *r = FromFloat(k, z);
            return util::Status::Ok();
        }
        bool s = IsSigned(k);
        int w = BitWidth(k);
        uint64_t z = 0;
        switch (op) {
            case Op::kAdd: z = a + b; break;
            case Op::kSub: z = a - b; break;
            case Op::kMul: z = a * b; break;
            case Op::kDiv: case Op::kRem: {
                if (Mask(k, b) == 0) return util::InvalidArgument("interpret: division by zero");
                if (s) {
                    int64_t x = AsSigned(k, a), y = AsSigned(k, b);
                    if (y == -1) z = op == Op::kDiv ? 0 - static_cast<uint64_t>(x) : 0;
                    else z = static_cast<uint64_t>(op == Op::kDiv ? x / y : x % y);
                } else {
                    uint64_t x = Mask(k, a), y = Mask(k, b);
                    z = op == Op::kDiv ? x / y : x % y;
                }
                break;
            }
            case Op::kAnd: z = a & b; break;
            case Op::kOr: z = a | b; break;
            case Op::kXor: z = a ^ b; break;
            case Op::kShl: z = (Mask(k, b) % w) == 0 ? a : a << (Mask(k, b) % w); break;
            case Op::kShr: {
                uint64_t sh = Mask(k, b) % w;
                z = s ? static_cast<uint64_t>(AsSigned(k, a) >> sh) : Mask(k, a) >> sh;
                break;
            }
            default: return util::InvalidArgument("interpret: bad int op");
        }
        *r = Mask(k, z);
        return util::Status::Ok();
    }

    static uint64_t Compare(Op op, ScalarKind k, uint64_t a, uint64_t b) {
        auto cmp = [op](auto x, auto y) -> uint64_t {
            switch (op) {
                case Op::kEq: return x == y;
                case Op::kNe: return x != y;
                case Op::kLt: return x < y;
                case Op::kLe: return x <= y;
                case Op::kGt: return x > y;
                default: return x >= y;
            }
        };
        if (IsFloat(k)) return cmp(AsFloat(k, a), AsFloat(k, b));
        if (IsSigned(k)) return cmp(AsSigned(k, a), AsSigned(k, b));
        return cmp(Mask(k, a), Mask(k, b));
    }

    util::Status MathOp(const Inst& inst, ScalarKind k, uint64_t* r) {
        auto fn = static_cast<MathFn>(inst.imm);
        ScalarKind ak = KindOf(inst.operands.at(0));
        auto arg = [&](int i) { return Read(ak, Get(inst.operands.at(i))); };
        auto f = [&](int i) { return AsFloat(ak, Get(inst.operands.at(i))); };
        auto fl = [&](double v) {
            *r = FromFloat(k, k == ScalarKind::kF32 ? static_cast<float>(v) : v);
        };
        if (!IsFloat(ak)) {
            Num a = arg(0);
            switch (fn) {
                case MathFn::kAbs:
                    *r = Mask(k, a.cls == Num::kInt ? static_cast<uint64_t>(a.i < 0 ? -a.i : a.i)
                                                    : a.u);
                    return util::Status::Ok();
                case MathFn::kMin: case MathFn::kMax: {
                    Num b = arg(1);
                    bool less = a.cls == Num::kInt ? a.i < b.i : a.u < b.u;
                    bool take_a = fn == MathFn::kMin ? less : !less;
                    *r = Get(inst.operands.at(take_a ? 0 : 1));
                    return util::Status::Ok();
                }
                case MathFn::kBitCount: case MathFn::kFindUMsb: case MathFn::kFindILsb: {
                    uint32_t u = static_cast<uint32_t>(Get(inst.operands.at(0)));
                    int bit = -1;  // the highest / lowest set bit
                    for (int j = 0; j < 32; ++j)
                        if ((u >> j) & 1u && (fn == MathFn::kFindUMsb || bit < 0)) bit = j;
                    uint32_t v = fn == MathFn::kBitCount ? static_cast<uint32_t>(
                                                               __builtin_popcount(u))
                                                         : static_cast<uint32_t>(bit);
                    *r = Mask(k, v);
                    return util::Status::Ok();
                }
                default: return util::InvalidArgument("interpret: math on integers");
            }
        }
        switch (fn) {
            case MathFn::kFloor: fl(std::floor(f(0))); break;
            case MathFn::kCeil: fl(std::ceil(f(0))); break;
            case MathFn::kTrunc: fl(std::trunc(f(0))); break;
            case MathFn::kAbs: fl(std::fabs(f(0))); break;
            case MathFn::kMin: fl(std::fmin(f(0), f(1))); break;
            case MathFn::kMax: fl(std::fmax(f(0), f(1))); break;
            case MathFn::kSqrt: fl(std::sqrt(f(0))); break;
            case MathFn::kInverseSqrt: fl(1.0 / std::sqrt(f(0))); break;
            case MathFn::kFma:  // rounded once, also in float32 (a double fma would round twice)
                if (k == ScalarKind::kF32)
                    fl(std::fmaf(static_cast<float>(f(0)), static_cast<float>(f(1)),
                                 static_cast<float>(f(2))));
                else
                    fl(std::fma(f(0), f(1), f(2)));
                break;
            case MathFn::kExp: fl(std::exp(f(0))); break;
            case MathFn::kLog: fl(std::log(f(0))); break;
            case MathFn::kPow: fl(std::pow(f(0), f(1))); break;
            case MathFn::kSin: fl(std::sin(f(0))); break;
            case MathFn::kCos: fl(std::cos(f(0))); break;
            case MathFn::kTan: fl(std::tan(f(0))); break;
            case MathFn::kAtan2: fl(std::atan2(f(0), f(1))); break;
            case MathFn::kTanh: fl(std::tanh(f(0))); break;
            case MathFn::kIsNan: *r = std::isnan(f(0)); break;
            case MathFn::kIsInf: *r = std::isinf(f(0)); break;
            case MathFn::kBitCount: case MathFn::kFindUMsb: case MathFn::kFindILsb:
                return util::InvalidArgument("interpret: bit counts of floats");
        }
        return util::Status::Ok();
    }

    const Module& m_;
    const Function& f_;
    const Inputs& in_;
    Trace trace_;
    std::vector<uint64_t> regs_;
    std::unordered_map<uint64_t, uint64_t> vars_;
};

}  // namespace

util::Result<Trace> Interpret(const Module& module, const Inputs& inputs, size_t max_steps) {
    Machine machine(module, inputs);
    return machine.Run(max_steps);
}

}  // namespace nvk::kir
