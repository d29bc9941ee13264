// The KIR tests' way of reading a module from its text.
#pragma once

#include <gtest/gtest.h>

#include <string_view>
#include <utility>

#include "kir/parser.h"

namespace nvk::kir {

// `text` parsed; the test fails (and gets an empty module) where it does not parse.
inline Module ParseOk(std::string_view text) {
    util::Result<Module> m = Parse(text);
    EXPECT_TRUE(m.ok()) << m.status().message();
    return m.ok() ? std::move(m).value() : Module{};
}

}  // namespace nvk::kir
