#include <nanobind/nanobind.h>

namespace nb = nanobind;

namespace nvk::bind {

void InitRuntime(nb::module_& m) {}

}  // namespace nvk::bind
