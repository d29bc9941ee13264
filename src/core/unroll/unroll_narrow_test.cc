// The unroll pass followed by the narrowing pass, as compile.cc runs them, on
// KIR text: the unrolled copies of a grid-stride loop must index in 32 bits,
// with Numba's negative-index test folded away (the guard's window and step
// cap are what lets the interval analysis prove each copy's i fits int32).
#include <gtest/gtest.h>

#include <string>

#include "kir/parser.h"
#include "kir/printer.h"
#include "kir/verifier.h"
#include "narrow/narrow.h"
#include "unroll/unroll.h"

namespace nvk::unroll {
namespace {

// acc = 0; i = global_id; stride = num_groups * 256
// while i < data.size: acc += data[i]; i += stride   (i, stride: int64 as Numba types them)
constexpr const char* kGridStride = R"(param data.addr : u64 @0
param "data.shape[0]" : i32 @8
param out.addr : u64 @16
func main {
%b0 entry:
  %0 = param 0 : u64
  %1 = param 1 : i32
  %2 = param 2 : u64
  %3 = var : ptr<function, i64>
  %4 = var : ptr<function, i64>
  %5 = var : ptr<function, f32>
  %6 = builtin global_id 0 : u32
  %7 = builtin num_groups 0 : u32
  br %b1
%b1 pre:
  %8 = convert %6 : i64
  store %3, %8
  %9 = convert %7 : i64
  %10 = const 256 : i64
  %11 = mul %9, %10 : i64
  store %4, %11
  %12 = const 0.0 : f32
  store %5, %12
  %13 = convert %1 : i64
  %14 = lt %8, %13 : bool
  condbr %14, %b2, %b3
%b2 body:
  %20 = load %3 : i64
  %21 = convert %20 : i32
  %22 = const 0 : i32
  %23 = lt %21, %22 : bool
  %24 = add %21, %1 : i32
  %25 = select %23, %24, %21 : i32
  %26 = elemptr %0, %25 : ptr<global, f32>
  %27 = load %26 : f32
  %28 = load %5 : f32
  %29 = add %28, %27 : f32
  store %5, %29
  %30 = load %4 : i64
  %31 = add %20, %30 : i64
  store %3, %31
  %32 = convert %1 : i64
  %33 = lt %31, %32 : bool
  condbr %33, %b2, %b3
%b3 exit:
  %40 = load %5 : f32
  %41 = const 0 : i32
  %42 = elemptr %2, %41 : ptr<global, f32>
  store %42, %40
  ret
}
)";

// The text of the block whose label ends in `suffix`, up to the next block.
std::string BlockText(const std::string& module, const std::string& suffix) {
    size_t at = module.find(suffix + ":\n");
    if (at == std::string::npos) return "";
    size_t end = module.find("\n%b", at);
    return module.substr(at, end == std::string::npos ? std::string::npos : end - at);
}

TEST(UnrollThenNarrow, CopiesOfAGridStrideLoopIndexIn32Bits) {
    for (int factor : {4, 8}) {
        auto parsed = kir::Parse(kGridStride);
        ASSERT_TRUE(parsed.ok()) << parsed.status().message();
        kir::Module m = std::move(parsed).value();
        UnrollOptions options;
        options.factor = factor;
        auto unrolled = UnrollCountedLoops(m, options);
        ASSERT_TRUE(unrolled.ok()) << unrolled.status().message();
        ASSERT_EQ(*unrolled, 1);
        narrow::NarrowOptions narrow_options;
        narrow_options.ranges.params = narrow::ExtentParamRanges(m);
        util::Status s = narrow::NarrowIntegers(m, narrow_options);
        ASSERT_TRUE(s.ok()) << s.message();
        ASSERT_TRUE(kir::Verify(m).ok());
        std::string text = kir::Print(m);
        std::string copies = BlockText(text, "body.unrolled");
        ASSERT_FALSE(copies.empty()) << text;
        // factor loads of data, each indexed by an i32 value with no negative-index select.
        size_t loads = 0;
        for (size_t at = copies.find(": f32"); at != std::string::npos; at = copies.find(": f32", at + 1))
            loads += copies.rfind("= load %", at) > copies.rfind('\n', at) ? 1 : 0;
        EXPECT_GE(loads, static_cast<size_t>(factor)) << copies;
        EXPECT_EQ(copies.find("select"), std::string::npos) << copies;
        for (size_t at = copies.find(" add "); at != std::string::npos; at = copies.find(" add ", at + 1)) {
            std::string line = copies.substr(at, copies.find('\n', at) - at);
            EXPECT_EQ(line.find(": i64"), std::string::npos) << line << "\n" << copies;
        }
        // The guard tests i against the window's top, 2^31 - 2^28.
        EXPECT_NE(BlockText(text, "body.unroll_head").find("1879048192"), std::string::npos) << text;
    }
}

}  // namespace
}  // namespace nvk::unroll
