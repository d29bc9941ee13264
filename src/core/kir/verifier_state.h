// Internal to the verifier: the state its two halves share. verifier.cc checks
// the module, blocks, values and types; verifier_structured.cc checks control
// flow (reducibility and the structured-form rules).
#pragma once

#include <string>
#include <vector>

#include "kir/dominators.h"
#include "kir/kir.h"
#include "util/status.h"

namespace nvk::kir::verifier_internal {

// Where a problem is, to mark it in the printed KIR.
struct Site {
    enum class Kind { kFunction, kParam, kBlock, kInst } kind = Kind::kFunction;
    uint32_t index = 0;        // kParam: param index; kBlock/kInst: block position
    uint32_t inst = 0;         // kInst: instruction index in the block
};

inline Site AtFunction() { return {}; }
inline Site AtParam(uint32_t i) { return {Site::Kind::kParam, i, 0}; }
inline Site AtBlock(uint32_t pos) { return {Site::Kind::kBlock, pos, 0}; }
inline Site AtInst(uint32_t pos, uint32_t inst) { return {Site::Kind::kInst, pos, inst}; }

// The kInternal status for `message` at `site`, with the KIR shown and marked.
util::Status Fail(const Module& module, Site site, const std::string& message);

std::string BlockRefText(BlockId b);

// Control-flow checks; blocks, terminators and targets are already known good.
util::Status VerifyControlFlow(const Module& module);

}  // namespace nvk::kir::verifier_internal
