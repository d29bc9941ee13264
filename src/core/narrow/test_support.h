// Test support for the narrowing pass: parse KIR text, narrow it, verify it,
// and run modules before and after the pass under the interpreter.
#pragma once

#include <gtest/gtest.h>

#include <random>
#include <string>

#include "kir/interpret.h"
#include "kir/parser.h"
#include "kir/printer.h"
#include "kir/verifier.h"
#include "narrow/narrow.h"

namespace nvk::narrow::testing {

inline kir::Module ParseOk(const std::string& text) {
    util::Result<kir::Module> m = kir::Parse(text);
    EXPECT_TRUE(m.ok()) << m.status().message();
    if (!m.ok()) return {};
    util::Status v = kir::Verify(m.value());
    EXPECT_TRUE(v.ok()) << v.message();
    return std::move(m).value();
}

// The module narrowed (and verified), or an empty module after a failure.
// As compile.cc runs it: array extents (params named NAME.shape[k]) are >= 0.
inline kir::Module Narrowed(const kir::Module& in, NarrowOptions options = {}) {
    kir::Module m = in;
    options.ranges.params = ExtentParamRanges(m);
    util::Status s = NarrowIntegers(m, options);
    EXPECT_TRUE(s.ok()) << s.message();
    util::Status v = kir::Verify(m);
    EXPECT_TRUE(v.ok()) << v.message();
    return m;
}

inline std::string NarrowText(const std::string& text, const NarrowOptions& options = {}) {
    return kir::Print(Narrowed(ParseOk(text), options));
}

}  // namespace nvk::narrow::testing
