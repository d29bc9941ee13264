// CheckPatterns: a small FileCheck for tests that look at SPIR-V text.
//
// `checks` holds one directive per line (other lines are ignored):
//   CHECK: pattern       the next line (at or after the current position) matching `pattern`
//   CHECK-NEXT: pattern  the line right after the previous match must match
//   CHECK-NOT: pattern   no line between the previous match and the next match may match
//   CHECK-DAG is not supported.
// A pattern is literal text (a run of blanks matches any run of blanks) with
// three escapes: `{{regex}}` matches `regex`; `[[name:regex]]` matches `regex`
// and captures it as `name`; `[[name]]` matches exactly what `name` captured
// before (earlier on the same line or on an earlier line). So
// `%[[x:\w+]] = OpLoad` then `OpStore %p %[[x]]` checks a data flow without
// naming ids. A pattern that ends in a word character does not match a
// longer word (`%[[x]]` does not match `%x_1`).
#pragma once

#include <string>

namespace nvk::spirv {

// "" when every directive holds; otherwise a message that names the failing
// directive, the captures so far and the text.
std::string CheckPatterns(const std::string& text, const std::string& checks);

}  // namespace nvk::spirv
