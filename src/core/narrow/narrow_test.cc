#include "narrow/test_support.h"

namespace nvk::narrow::testing {
namespace {

TEST(Narrow, Scratch) {
    std::string in = R"(
param out.addr : u64 @0
param n : i32 @8
func main {
%b0 entry:
  %0 = var : ptr<function, i64>
  %1 = param 0 : u64
  %2 = param 1 : i32
  %3 = convert %2 : i64
  %4 = const 0 : i64
  store %0, %4
  br %b1
%b1 header:
  %5 = load %0 : i64
  %6 = lt %5, %3 : bool
  condbr %6, %b2, %b3
%b2 body:
  %7 = load %0 : i64
  %8 = convert %7 : i32
  %9 = elemptr %1, %8 : ptr<global, i32>
  store %9, %8
  %10 = const 1 : i64
  %11 = add %7, %10 : i64
  store %0, %11
  br %b1
%b3 exit:
  ret
}
)";
    std::cout << NarrowText(in);
}

}  // namespace
}  // namespace nvk::narrow::testing
