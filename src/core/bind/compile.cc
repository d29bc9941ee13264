#include <nanobind/nanobind.h>

namespace nb = nanobind;

namespace nvk::bind {

void InitCompile(nb::module_& m) {}

}  // namespace nvk::bind
