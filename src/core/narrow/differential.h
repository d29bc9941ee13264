// Differential testing of the narrowing pass: run a module before and after it
// under the interpreter on many random inputs (boundary values included) and
// require the same memory. Runs that fail or do not finish before the pass
// (an out-of-bounds access, a division by zero, a very long loop) are skipped;
// the caller checks that enough runs were compared.
#pragma once

#include <gtest/gtest.h>

#include <cstdint>
#include <iterator>
#include <random>
#include <string>

#include "narrow/test_support.h"

namespace nvk::narrow::testing {

constexpr uint64_t kOutBase = 0x1000;
constexpr size_t kOutBytes = 64 * 8;

inline uint64_t RandomBits(std::mt19937_64& rng, bool extent) {
    static const int64_t kEdges[] = {0,
                                     1,
                                     -1,
                                     2,
                                     63,
                                     64,
                                     (1 << 15) - 1,
                                     -(1 << 15),
                                     (1 << 16) - 1,
                                     (int64_t{1} << 31) - 2,
                                     (int64_t{1} << 31) - 1,
                                     int64_t{1} << 31,
                                     -(int64_t{1} << 31),
                                     -(int64_t{1} << 31) + 1,
                                     (int64_t{1} << 32) - 1,
                                     int64_t{1} << 32,
                                     INT64_MAX,
                                     INT64_MIN,
                                     INT64_MIN + 1};
    uint64_t v;
    switch (rng() % 3) {
        case 0: v = static_cast<uint64_t>(kEdges[rng() % std::size(kEdges)]); break;
        case 1: v = static_cast<uint64_t>(static_cast<int64_t>(rng() % 80) - 5); break;
        default: v = rng() >> (rng() % 64); break;
    }
    // Extents are never negative and below 2^31 in the 32-bit index specialisation.
    if (extent) v &= 0x7fffffff;
    return v;
}

inline kir::Inputs RandomInputs(const kir::Module& m, std::mt19937_64& rng,
                                const RangeOptions& limits) {
    kir::Inputs in;
    for (uint32_t i = 0; i < m.params.size(); ++i) {
        const std::string& name = m.params[i].name;
        if (i == 0) {
            in.params.push_back(kOutBase);
            continue;
        }
        in.params.push_back(RandomBits(rng, name.find(".shape[") != std::string::npos));
    }
    for (uint32_t axis = 0; axis < 3; ++axis) {
        for (kir::Builtin b : {kir::Builtin::kGlobalId, kir::Builtin::kLocalId,
                               kir::Builtin::kGroupId, kir::Builtin::kLocalSize,
                               kir::Builtin::kNumGroups}) {
            Interval r = BuiltinRange(b, axis, limits);
            uint64_t v = RandomBits(rng, false) & 0xffffffffu;
            if (!r.Contains(v)) v = static_cast<uint64_t>(r.lo + Int(v) % (r.hi - r.lo + 1));
            in.builtins[{b, axis}] = static_cast<uint32_t>(v);
        }
    }
    kir::MemoryRegion out;
    out.base = kOutBase;
    for (size_t i = 0; i < kOutBytes; ++i) out.bytes.push_back(static_cast<uint8_t>(rng()));
    in.memory.push_back(out);
    return in;
}

// Returns how many runs were compared (finished before the pass).
inline int CompareRuns(const kir::Module& before, const kir::Module& after, int runs,
                       uint64_t seed, const RangeOptions& limits = {}) {
    std::mt19937_64 rng(seed);
    int compared = 0;
    for (int r = 0; r < runs; ++r) {
        kir::Inputs in = RandomInputs(before, rng, limits);
        auto want = kir::Interpret(before, in, 20000);
        if (!want.ok() || !want->finished) continue;
        auto got = kir::Interpret(after, in, 200000);
        EXPECT_TRUE(got.ok()) << got.status().message();
        if (!got.ok()) return compared;
        EXPECT_TRUE(got->finished);
        ++compared;
        if (want->memory[0].bytes != got->memory[0].bytes) {
            std::string params;
            for (uint64_t p : in.params) params += " " + std::to_string(static_cast<int64_t>(p));
            ADD_FAILURE() << "different memory for params" << params << "\nbefore:\n"
                          << kir::Print(before) << "\nafter:\n"
                          << kir::Print(after);
            return compared;
        }
    }
    return compared;
}

}  // namespace nvk::narrow::testing
