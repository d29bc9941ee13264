#include "kir/traffic.h"

#include <algorithm>

#include "kir/dominators.h"

namespace nvk::kir {

namespace {

// Bytes of an element behind `pointer` where it points to global memory, else 0.
uint64_t GlobalElementBytes(const Module& module, ValueId pointer) {
    const Type& type = module.type(module.function.values.at(pointer).type);
    if (type.kind != Type::Kind::kPointer || type.space != AddressSpace::kGlobal) return 0;
    const Type& pointee = module.type(type.pointee);
    if (pointee.kind != Type::Kind::kScalar) return 0;
    return static_cast<uint64_t>(std::max(BitWidth(pointee.scalar), 8) / 8);
}

}  // namespace

Traffic InvocationTraffic(const Module& module) {
    Traffic t;
    for (const Block& block : module.function.blocks) {
        for (const Inst& inst : block.insts) {
            if (inst.op == Op::kLoad || inst.op == Op::kStore) {
                t.global_bytes += GlobalElementBytes(module, inst.operands.at(0));
            } else if (inst.op == Op::kAtomic) {
                ++t.atomics;
            }
        }
    }
    const Function& f = module.function;
    t.loops = static_cast<uint32_t>(NaturalLoops(f, Dominators(f)).size());
    return t;
}

}  // namespace nvk::kir
