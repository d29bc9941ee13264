// numba_vulkan._core: one init function per area.
#include <nanobind/nanobind.h>

namespace nb = nanobind;

namespace nvk::bind {
void InitKir(nb::module_& m);
void InitAbi(nb::module_& m);
void InitCompile(nb::module_& m);
void InitRuntime(nb::module_& m);
}  // namespace nvk::bind

NB_MODULE(_core, m) {
    m.doc() = "The C++ core of numba_vulkan: KIR builder, compiler and Vulkan runtime.";
    nvk::bind::InitKir(m);
    nvk::bind::InitAbi(m);
    nvk::bind::InitCompile(m);
    nvk::bind::InitRuntime(m);
}
