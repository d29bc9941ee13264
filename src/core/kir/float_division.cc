// DivideFloat32InFloat64 (float_division.h).
#include "kir/float_division.h"

#include <vector>

namespace nvk::kir {

size_t DivideFloat32InFloat64(Module& m) {
    Function& f = m.function;
    const TypeId f32 = m.GetScalar(ScalarKind::kF32);
    const TypeId f64 = m.GetScalar(ScalarKind::kF64);
    size_t rewritten = 0;
    for (Block& b : f.blocks) {
        std::vector<Inst> out;
        out.reserve(b.insts.size());
        for (Inst inst : b.insts) {
            if (inst.op != Op::kDiv || inst.type != f32 || IsDriverDivision(inst)) {
                out.push_back(std::move(inst));
                continue;
            }
            auto add = [&](Op op, std::vector<ValueId> operands) {
                Inst n;
                n.op = op;
                n.type = f64;
                n.result = f.NewValue(f64, b.id);
                n.operands = std::move(operands);
                n.loc = inst.loc;
                out.push_back(n);
                return n.result;
            };
            ValueId a = add(Op::kConvert, {inst.operands.at(0)});
            ValueId d = add(Op::kConvert, {inst.operands.at(1)});
            ValueId q = add(Op::kDiv, {a, d});
            inst.op = Op::kConvert;  // the quotient rounded once to f32, under the old id
            inst.operands = {q};
            out.push_back(std::move(inst));
            ++rewritten;
        }
        b.insts = std::move(out);
    }
    return rewritten;
}

}  // namespace nvk::kir
