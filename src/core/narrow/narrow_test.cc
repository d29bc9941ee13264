#include "narrow/cases.h"
#include "narrow/test_support.h"

namespace nvk::narrow::testing {
namespace {

TEST(Narrow, Scratch) {
    for (const Case& c : AllCases()) {
        kir::Module m = ParseOk(c.text);
        kir::Module n = Narrowed(m);
        std::cout << "==== " << c.name << " " << CountWideIntOps(m) << " -> " << CountWideIntOps(n) << "\n" << kir::Print(n);
    }
}

}  // namespace
}  // namespace nvk::narrow::testing
