// Control flow: merge instructions and terminators.
//
// The structured form already says everything SPIR-V needs: a block with a
// kir::Merge annotation is a header. A loop header gets OpLoopMerge (merge
// block, continue target) before its terminator, whatever the terminator is;
// a selection header gets OpSelectionMerge before its conditional branch.
// The emitter does not check the structured-control-flow rules itself: the
// validator, which runs on every emitted module, does.
#include "spirv/emitter.h"

namespace nvk::spirv {

util::Status Emitter::EmitTerminator(const kir::Block& block) {
    const kir::Inst& term = block.terminator();
    auto label = [&](kir::BlockId id) -> util::Result<Id> {
        if (id >= labels_.size() || labels_[id] == 0) {
            return Error(util::Code::kInternal, term,
                         "block '" + block.name + "' names an unknown block " + std::to_string(id));
        }
        return labels_[id];
    };

    switch (block.merge.kind) {
        case kir::Merge::Kind::kNone: break;
        case kir::Merge::Kind::kLoop: {
            NVK_ASSIGN_OR_RETURN(Id merge, label(block.merge.merge));
            NVK_ASSIGN_OR_RETURN(Id cont, label(block.merge.cont));
            code().Add(spv::Op::OpLoopMerge,
                       {merge, cont, static_cast<uint32_t>(spv::LoopControlMask::MaskNone)});
            break;
        }
        case kir::Merge::Kind::kSelection: {
            // OpSelectionMerge is legal only before a conditional branch; a
            // selection annotation on an unconditional branch has no meaning.
            if (term.op != kir::Op::kCondBr) break;
            NVK_ASSIGN_OR_RETURN(Id merge, label(block.merge.merge));
            code().Add(spv::Op::OpSelectionMerge,
                       {merge, static_cast<uint32_t>(spv::SelectionControlMask::MaskNone)});
            break;
        }
    }

    switch (term.op) {
        case kir::Op::kBr: {
            NVK_ASSIGN_OR_RETURN(Id target, label(term.targets[0]));
            code().Add(spv::Op::OpBranch, {target});
            return util::Status::Ok();
        }
        case kir::Op::kCondBr: {
            NVK_ASSIGN_OR_RETURN(Id cond, Value(term.operands.at(0)));
            NVK_ASSIGN_OR_RETURN(Id if_true, label(term.targets[0]));
            NVK_ASSIGN_OR_RETURN(Id if_false, label(term.targets[1]));
            code().Add(spv::Op::OpBranchConditional, {cond, if_true, if_false});
            return util::Status::Ok();
        }
        case kir::Op::kRet: code().Add(spv::Op::OpReturn, {}); return util::Status::Ok();
        case kir::Op::kUnreachable: code().Add(spv::Op::OpUnreachable, {}); return util::Status::Ok();
        default: return Error(util::Code::kInternal, term, "the block does not end in a terminator");
    }
}

}  // namespace nvk::spirv
