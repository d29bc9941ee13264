// Integer range analysis over KIR in CFG (or structured) form.
//
// Every integer or bool value gets an interval holding every value it can take
// in any run that reaches it; every tracked local variable (a function-space
// var of integer or bool type, used only by load and store) gets an interval
// per program point. The analysis is a forward fixpoint over the CFG:
//
//   - sources: constants; parameters (their kind's full range, or a range the
//     caller guarantees, e.g. array extents are >= 0); builtins (u32, or below
//     the device limits given in the options); loads from memory (the kind's
//     range); conversions keep ranges that fit the new kind;
//   - loop headers are widened to thresholds (the bounds of i32, u32, i64,
//     u64 and 0) after a few visits, so the fixpoint is reached quickly and
//     lands on the bounds that matter for narrowing;
//   - on each edge of a condbr the condition is traced back through loads of
//     bool variables stored earlier in the same block, `not`/`and`/`or`,
//     comparisons, widening conversions and loads of variables, and the block
//     is evaluated again under those facts: `for k in range(n)` (the front
//     end's iternext stores `k < n` in a bool variable) and `while i < n`
//     bound k and i inside the loop by n.
//
// Blocks the analysis proves unreachable keep empty ranges (nothing there ever
// runs, so any claim about their values is vacuous).
#pragma once

#include <cstdint>
#include <vector>

#include "kir/kir.h"
#include "narrow/interval.h"

namespace nvk::narrow {

struct RangeOptions {
    // Device limits per axis (x, y, z); the defaults claim nothing beyond u32.
    uint32_t max_local_size[3] = {UINT32_MAX, UINT32_MAX, UINT32_MAX};
    uint32_t max_groups[3] = {UINT32_MAX, UINT32_MAX, UINT32_MAX};
    // Ranges the caller guarantees for some parameters (by index); each must
    // lie within the parameter's kind. Others get their kind's full range.
    struct ParamRange {
        uint32_t index = 0;
        Int lo = 0, hi = 0;
    };
    std::vector<ParamRange> params;
};

struct Ranges {
    bool complete = false;         // false: the fixpoint was not reached; use nothing
    std::vector<Interval> values;  // by ValueId; empty for non-integers and unreached code
    std::vector<bool> reached;     // by position in function.blocks
};

Ranges AnalyzeRanges(const kir::Module& module, const RangeOptions& options);

// The range of builtin `b` on `axis` under the options.
Interval BuiltinRange(kir::Builtin b, uint32_t axis, const RangeOptions& options);

}  // namespace nvk::narrow
