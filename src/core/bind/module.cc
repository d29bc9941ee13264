// numba_vulkan._core: one init function per area.
#include <nanobind/nanobind.h>

#include <ios>

namespace nb = nanobind;

namespace nvk::bind {
void InitKir(nb::module_& m);
void InitCompile(nb::module_& m);
void InitRuntime(nb::module_& m);
}  // namespace nvk::bind

// The standard streams and the classic locale are set up by an ios_base::Init
// object. Since GCC 13, <iostream> no longer creates one in every translation
// unit, so where libstdc++ is linked statically nothing might; SPIRV-Tools then
// crashes formatting numbers into a stringstream. One here is enough.
static std::ios_base::Init ios_init;

NB_MODULE(_core, m) {
    m.doc() = "The C++ core of numba_vulkan: KIR builder, compiler and Vulkan runtime.";
    nvk::bind::InitKir(m);
    nvk::bind::InitCompile(m);
    nvk::bind::InitRuntime(m);
}
